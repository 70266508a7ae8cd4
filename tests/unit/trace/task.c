// SPDX-License-Identifier: MIT
/*
 * Events defined at run time and written on behalf of another process:
 * the way the system-call source reports a tracee.  A tracepoint built
 * from a field table is registered, shows up in events/ with its format,
 * fires through uks_tracepoint_emit(), and with uks_trace_set_task() its
 * records carry the other process's pid and comm; an eprobe on it reads
 * a string out of that process's memory, not ours.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/trace.h>
#include <uks/tracepoint.h>

#include "harness.h"
#include "trace/origin.h"
#include "unit/tracefs_io.h"

/* The same address in the child after fork(), with different contents. */
static char message[32] = "parent's text";

struct demo_rec {
	struct uks_trace_entry ent;
	long nr;
	const char *msg;
};

static const struct uks_event_field demo_fields[] = {
	{ "long", "nr", 8, 8, true, UKS_FILTER_OTHER },
	{ "const char *", "msg", 16, 8, false, UKS_FILTER_PTR_STRING },
};

static int demo_print(char *buf, size_t len, const void *rec)
{
	const struct demo_rec *r = rec;

	return snprintf(buf, len, "nr=%ld msg=0x%lx", r->nr, (unsigned long)r->msg);
}

static struct uks_tracepoint demo_tp = {
	.system = "uks_runtime",
	.name = "demo",
	.fields = demo_fields,
	.nr_fields = 2,
	.fixed_size = sizeof(struct demo_rec),
	.print_fmt = "UKS_TP_PRINTK(\"nr=%ld msg=0x%lx\", REC->nr, (unsigned long)REC->msg)",
	.print = demo_print,
};

static void emit(long nr, const char *msg)
{
	struct demo_rec r = { .nr = nr, .msg = msg };

	uks_tracepoint_emit(&demo_tp, (char *)&r + sizeof(r.ent), sizeof(r) - sizeof(r.ent));
}

FIXTURE(task) {
	struct uks_trace *tr;
};

FIXTURE_SETUP(task)
{
	static int registered;

	if (!registered++)
		ASSERT_EQ(0, uks_tracepoint_register(&demo_tp));
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
}

FIXTURE_TEARDOWN(task)
{
	wr(self->tr, "events/enable", "0");
	uks_tracefs_write_str(self->tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
	uks_trace_destroy(self->tr);
}

TEST_F(task, runtime_event_has_format_and_prints)
{
	struct uks_trace *tr = self->tr;

	ASSERT_NE(NULL, strstr(rd(tr, "available_events"), "uks_runtime:demo\n"));
	rd(tr, "events/uks_runtime/demo/format");
	ASSERT_NE(NULL, strstr(out, "\tfield:long nr;\toffset:8;\tsize:8;\tsigned:1;\n"
				    "\tfield:const char * msg;\toffset:16;\tsize:8;\tsigned:0;\n"));
	ASSERT_NE(NULL, strstr(out, "print fmt: \"nr=%ld msg=0x%lx\", REC->nr, "
				    "(unsigned long)REC->msg\n"));
	emit(1, message);		/* disabled: nothing happens */
	ASSERT_EQ(0, wr(tr, "events/uks_runtime/demo/enable", "1"));
	ASSERT_EQ(0, wr(tr, "events/uks_runtime/demo/filter", "nr > 1"));
	emit(1, message);
	emit(2, message);
	rd(tr, "trace_pipe");
	ASSERT_EQ(NULL, strstr(out, "nr=1 "));
	ASSERT_NE(NULL, strstr(out, ": demo: nr=2 msg=0x"));
}

TEST_F(task, events_written_for_another_process)
{
	struct uks_trace *tr = self->tr;
	struct uks_trace_task child = { .comm = "the-child" };
	char ready, expect[96];
	int pipefd[2];
	pid_t pid;

	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		strcpy(message, "the child's text");
		if (write(pipefd[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(pipefd[0], &ready, 1));
	child.pid = child.tgid = pid;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:peek uks_runtime/demo s=+0($msg):string n=$nr"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/peek/enable", "1"));
	ASSERT_EQ(0, wr(tr, "events/uks_runtime/demo/enable", "1"));
	ASSERT_EQ(0, wr(tr, "set_event_pid", "1"));	/* only pid 1 ... */
	uks_trace_set_task(&child);
	emit(7, message);				/* ... so this is not recorded */
	uks_trace_set_task(NULL);
	snprintf(expect, sizeof(expect), "%d", (int)pid);
	ASSERT_EQ(0, uks_tracefs_write_str(tr, "set_event_pid", expect, UKS_TRACEFS_TRUNC));
	uks_trace_set_task(&child);
	emit(8, message);
	uks_trace_set_task(NULL);
	emit(9, message);				/* ourselves: filtered by pid */
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);

	rd(tr, "trace");
	ASSERT_EQ(NULL, strstr(out, "nr=7"));
	ASSERT_EQ(NULL, strstr(out, "nr=9"));
	snprintf(expect, sizeof(expect), "the-child-%-7d [", (int)pid);
	ASSERT_NE(NULL, strstr(out, expect));
	ASSERT_NE(NULL, strstr(out, ": demo: nr=8 msg=0x"));
	/* The dereference read the child's memory, where the text differs. */
	ASSERT_NE(NULL, strstr(out, "peek: (uks_runtime.demo) s=\"the child's text\" n=0x8\n"));
	snprintf(expect, sizeof(expect), "%d the-child\n", (int)pid);
	ASSERT_NE(NULL, strstr(rd(tr, "saved_cmdlines"), expect));
	/* The child is gone now: the same fetch faults. */
	ASSERT_EQ(0, uks_tracefs_write_str(tr, "trace", "", UKS_TRACEFS_TRUNC));
	uks_trace_set_task(&child);
	emit(10, message);
	uks_trace_set_task(NULL);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "s=(fault) n=0xa\n"));
}

/*
 * A record written for an event that happened elsewhere (a context switch
 * perf reported): it goes to the CPU it happened on, stamped with its time
 * in the buffer's clock.
 */
TEST_F(task, events_written_for_another_cpu_and_time)
{
	struct uks_trace *tr = self->tr;
	struct timespec now;
	cpu_set_t set;
	uint64_t then;
	double ts;
	char *p;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "one CPU");
	CPU_ZERO(&set);
	CPU_SET(0, &set);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(set), &set));
	ASSERT_EQ(0, wr(tr, "trace_clock", "mono"));
	ASSERT_EQ(0, wr(tr, "events/uks_runtime/demo/enable", "1"));
	clock_gettime(CLOCK_MONOTONIC, &now);
	then = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - 5000000000u;
	__uks_trace_set_origin(1, then);
	emit(9, message);
	__uks_trace_clear_origin();
	emit(10, message);
	rd(tr, "per_cpu/cpu1/trace");
	p = strstr(out, "[001] ");
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, strstr(p, ": demo: nr=9 "));
	ASSERT_EQ(NULL, strstr(out, "nr=10 "));
	ts = strtod(p + 6 + 6, NULL);	/* after "[001] ....." and a blank */
	/* then, give or take the two clock readings (not the 5 s of "now") */
	ASSERT_LT(llabs((long long)(then / 1000) - (long long)(ts * 1e6 + 0.5)), 1000);
	rd(tr, "per_cpu/cpu0/trace");
	ASSERT_NE(NULL, strstr(out, ": demo: nr=10 "));
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

TEST_HARNESS_MAIN
