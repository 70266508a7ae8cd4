// SPDX-License-Identifier: MIT
/*
 * events/SYS/filter and the enable files of systems, as Linux writes and
 * shows them (texts taken from a real tracefs): a system filter reaches
 * every event of the system, an event it does not compile for loses its
 * filter and shows the kernel's subsystem error, and the system's file
 * always reads back the "### global filter ###" text.
 */
#include <errno.h>
#include <string.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"

#define GLOBAL_FILTER \
	"### global filter ###\n" \
	"# Use this to set filters for multiple events.\n" \
	"# Only events with the given fields will be affected.\n" \
	"# If no events are modified, an error message will be displayed here\n"

#define SUBSYS_ERR "Couldn't find or set field in one of a subsystem's events"

/* tick copies a 16-byte comm array */
static const char comm_x[16] = "x";

FIXTURE(sysf) {
	struct uks_trace *tr;
	char buf[8192];
};

FIXTURE_SETUP(sysf)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	/* Register the test events' tracepoints. */
	uks_trace_uks_test_open(0, "", 0);
	uks_trace_uks_test_tick(0, comm_x);
	uks_trace_uks_other_ping(0);
}

FIXTURE_TEARDOWN(sysf)
{
	uks_trace_destroy(self->tr);
}

TEST_F(sysf, reads_the_global_filter_text)
{
	ASSERT_STREQ(GLOBAL_FILTER, rd(self->tr, "events/uks_test/filter"));
	ASSERT_EQ(0, wr(self->tr, "events/uks_test/filter", "common_pid == 3\n"));
	/* A system filter that took keeps no text of its own. */
	ASSERT_STREQ(GLOBAL_FILTER, rd(self->tr, "events/uks_test/filter"));
}

TEST_F(sysf, common_field_reaches_every_event)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", "  common_pid == 3  \n"));
	/* Leading white space stays, trailing goes, as the kernel keeps it. */
	ASSERT_STREQ("  common_pid == 3\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_STREQ("  common_pid == 3\n", rd(tr, "events/uks_test/tick/filter"));
	/* Other systems are untouched. */
	ASSERT_STREQ("none\n", rd(tr, "events/uks_other/ping/filter"));
	ASSERT_STREQ("", rd(tr, "error_log"));
}

TEST_F(sysf, event_without_the_field_loses_its_filter)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "events/uks_test/tick/filter", "n == 5"));
	/* Only open has fd: the write still succeeds. */
	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", "fd == 1"));
	ASSERT_STREQ("fd == 1\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_STREQ("fd == 1\n^\nparse_error: " SUBSYS_ERR "\n\n",
		     rd(tr, "events/uks_test/tick/filter"));
	/* tick now filters nothing. */
	ASSERT_EQ(0, wr(tr, "events/uks_test/tick/enable", "1"));
	ASSERT_EQ(0, wrt(tr, "trace", ""));
	uks_trace_uks_test_tick(7, comm_x);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "n=7 comm=x"));
	/* One error_log entry per event that refused it, caret at 0. */
	rd(tr, "error_log");
	ASSERT_NE(NULL, strstr(out, "] event filter parse error: error: " SUBSYS_ERR "\n"
				    "  Command: fd == 1\n"
				    "           ^\n"));
	ASSERT_EQ(NULL, strstr(strstr(out, "Command") + 1, "Command"));
}

TEST_F(sysf, syntax_error_is_per_event_and_the_write_succeeds)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", "((("));
	ASSERT_STREQ("(((\n^\nparse_error: " SUBSYS_ERR "\n\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_STREQ("(((\n^\nparse_error: " SUBSYS_ERR "\n\n", rd(tr, "events/uks_test/tick/filter"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", "1"));
	ASSERT_STREQ("1\n^\nparse_error: " SUBSYS_ERR "\n\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_STREQ(GLOBAL_FILTER, rd(tr, "events/uks_test/filter"));
}

TEST_F(sysf, zero_clears_every_event)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", "common_pid != 0"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/filter", " 0 \n"));
	ASSERT_STREQ("none\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_STREQ("none\n", rd(tr, "events/uks_test/tick/filter"));
}

TEST_F(sysf, garbage_writes)
{
	struct uks_trace *tr = self->tr;
	static const char *const junk[] = { "", "\n", "\xff\xfe", "== ==", "fd ~ \"", "&&" };

	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		ASSERT_EQ(0, wr(tr, "events/uks_test/filter", junk[i]));
	memset(self->buf, 'a', 5000);
	self->buf[5000] = '\0';
	ASSERT_EQ(-EINVAL, wr(tr, "events/uks_test/filter", self->buf));	/* past a page */
	ASSERT_STREQ(GLOBAL_FILTER, rd(tr, "events/uks_test/filter"));
}

TEST_F(sysf, ftrace_system_has_no_files_of_its_own)
{
	unsigned int mode;

	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/filter", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/enable", &mode));
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(self->tr, "events/uks_test/filter", &mode));
	ASSERT_EQ(0644u, mode);
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/filter", &mode));
	/* Nor have its events. */
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/print/enable", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/print/filter", &mode));
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(self->tr, "events/ftrace/print/format", &mode));
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(self->tr, "events/ftrace/print/trigger", &mode));
	/* The others have only their format, as on a 6.x kernel. */
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(self->tr, "events/ftrace/raw_data/format", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/raw_data/id", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(self->tr, "events/ftrace/kernel_stack/trigger", &mode));
}

TEST_F(sysf, enable_files_say_0_1_or_X)
{
	struct uks_trace *tr = self->tr;

	ASSERT_STREQ("0\n", rd(tr, "events/uks_test/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	ASSERT_STREQ("X\n", rd(tr, "events/uks_test/enable"));
	ASSERT_STREQ("X\n", rd(tr, "events/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/enable", "1"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/enable"));
	ASSERT_STREQ("0\n", rd(tr, "events/uks_other/enable"));
	ASSERT_EQ(0, wr(tr, "events/enable", "1"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_other/enable"));
	ASSERT_EQ(-EINVAL, wr(tr, "events/uks_test/enable", "2"));
	ASSERT_EQ(-EINVAL, wr(tr, "events/enable", "x"));
	ASSERT_EQ(0, wr(tr, "events/enable", "0"));
	ASSERT_STREQ("0\n", rd(tr, "events/enable"));
}

TEST_HARNESS_MAIN
