// SPDX-License-Identifier: MIT
/*
 * set_event_pid, set_event_notrace_pid and options/event-fork as Linux
 * answers them (checked on a real tracefs): pids in base 0, all or
 * nothing, -EPERM for a pid the list cannot hold; an event is skipped when
 * its thread is off set_event_pid or on set_event_notrace_pid; with
 * event-fork a child joins its parent's lists and an exiting thread leaves
 * them.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"
#include "trace/event_pids.h"

FIXTURE(pids) {
	struct uks_trace *tr;
	char me[32];
};

FIXTURE_SETUP(pids)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	snprintf(self->me, sizeof(self->me), "%d", (int)syscall(SYS_gettid));
	ASSERT_EQ(0, wr(self->tr, "set_event", "uks_other:ping"));
}

FIXTURE_TEARDOWN(pids)
{
	uks_trace_destroy(self->tr);
}

static void *fire_ping(void *arg)
{
	uks_trace_uks_other_ping(99);
	return arg;
}

/* Fire v=7 here and v=99 on another thread; which ones were recorded. */
static const char *fire_both(struct uks_trace *tr)
{
	pthread_t t;

	wrt(tr, "trace", "");
	pthread_create(&t, NULL, fire_ping, NULL);
	pthread_join(t, NULL);
	uks_trace_uks_other_ping(7);
	rd(tr, "trace");
	return strstr(out, "v=7") ? (strstr(out, "v=99") ? "both" : "mine")
				  : (strstr(out, "v=99") ? "other" : "none");
}

TEST_F(pids, notrace_skips_the_listed_thread)
{
	ASSERT_STREQ("both", fire_both(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "set_event_notrace_pid", self->me));
	ASSERT_STREQ("other", fire_both(self->tr));
	/* On both lists: notrace wins, as trace_ignore_this_task(). */
	ASSERT_EQ(0, wrt(self->tr, "set_event_pid", self->me));
	ASSERT_STREQ("none", fire_both(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "set_event_notrace_pid", ""));
	ASSERT_STREQ("mine", fire_both(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "set_event_pid", "\n"));
	ASSERT_STREQ("both", fire_both(self->tr));
}

TEST_F(pids, parsing_as_the_kernel)
{
	static const char *const files[] = { "set_event_pid", "set_event_notrace_pid" };

	for (int i = 0; i < 2; i++) {
		const char *f = files[i];

		ASSERT_EQ(0, wrt(self->tr, f, "0x10 010 5 6 5\n"));
		ASSERT_STREQ("5\n6\n8\n16\n", rd(self->tr, f));
		/* An empty append keeps the list; a bad pid changes nothing. */
		ASSERT_EQ(0, wr(self->tr, f, "\n"));
		ASSERT_EQ(-EINVAL, wr(self->tr, f, "7 -1"));
		ASSERT_EQ(-EINVAL, wr(self->tr, f, "7 abc"));
		ASSERT_EQ(-EINVAL, wr(self->tr, f, "12x"));
		ASSERT_EQ(-EPERM, wr(self->tr, f, "1073741824"));
		ASSERT_STREQ("5\n6\n8\n16\n", rd(self->tr, f));
		ASSERT_EQ(0, wr(self->tr, f, "99999999 7"));
		ASSERT_STREQ("5\n6\n7\n8\n16\n99999999\n", rd(self->tr, f));
		ASSERT_EQ(-EINVAL, wr(self->tr, f, "\xff\xfe garbage"));
		ASSERT_EQ(0, wrt(self->tr, f, ""));
		ASSERT_STREQ("", rd(self->tr, f));
	}
}

TEST_F(pids, event_fork_follows_children)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wrt(tr, "set_event_pid", "100"));
	ASSERT_EQ(0, wrt(tr, "set_event_notrace_pid", "200"));
	/* Off: forks change nothing. */
	__uks_trace_task_fork(100, 101);
	ASSERT_STREQ("100\n", rd(tr, "set_event_pid"));
	ASSERT_EQ(0, wrt(tr, "options/event-fork", "1"));
	__uks_trace_task_fork(100, 102);
	__uks_trace_task_fork(200, 201);
	__uks_trace_task_fork(300, 301);	/* on no list */
	ASSERT_STREQ("100\n102\n", rd(tr, "set_event_pid"));
	ASSERT_STREQ("200\n201\n", rd(tr, "set_event_notrace_pid"));
	__uks_trace_task_fork(102, 103);	/* grandchildren too */
	__uks_trace_task_exit(102);
	__uks_trace_task_exit(201);
	ASSERT_STREQ("100\n103\n", rd(tr, "set_event_pid"));
	ASSERT_STREQ("200\n", rd(tr, "set_event_notrace_pid"));
	/* Emptied by exits, the list still filters: nothing is recorded. */
	__uks_trace_task_exit(100);
	__uks_trace_task_exit(103);
	ASSERT_STREQ("", rd(tr, "set_event_pid"));
	ASSERT_STREQ("none", fire_both(tr));
	ASSERT_EQ(0, wrt(tr, "options/event-fork", "0"));
	__uks_trace_task_exit(200);
	ASSERT_STREQ("200\n", rd(tr, "set_event_notrace_pid"));
}

TEST_HARNESS_MAIN
