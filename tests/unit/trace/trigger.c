// SPDX-License-Identifier: MIT
/*
 * events/SYS/EVENT/trigger: the kernel's texts, errnos and semantics for
 * traceon/traceoff, enable_event/disable_event, stacktrace, with counts,
 * filters and removal, on static events, eprobes and ftrace/print.
 * Expected texts were taken from a 6.x kernel's tracefs.
 */
#include <fcntl.h>
#include <regex.h>
#include <sched.h>
#include <stdlib.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"

#define OPEN_TRIGGER	"events/uks_test/open/trigger"
#define HELP		"# Available triggers:\n" \
			"# traceon traceoff snapshot stacktrace enable_event disable_event\n"

/* error_log with "[SSSSS.UUUUUU]" masked to "[TS]". */
static const char *error_log(struct uks_trace *tr)
{
	static char buf[8192];
	const char *in = rd(tr, "error_log");
	size_t o = 0;

	while (*in && o + 8 < sizeof(buf)) {
		if (*in == '[') {
			const char *end = strchr(in, ']');

			if (end) {
				memcpy(buf + o, "[TS]", 4);
				o += 4;
				in = end + 1;
				continue;
			}
		}
		buf[o++] = *in++;
	}
	buf[o] = '\0';
	return buf;
}

static int count_of(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

FIXTURE(trig) {
	struct uks_trace *tr;
};

FIXTURE_SETUP(trig)
{
	cpu_set_t set;

	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	CPU_ZERO(&set);
	CPU_SET(uks_cpu_current() < 0 ? 0 : uks_cpu_current(), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE_TEARDOWN(trig)
{
	uks_trace_destroy(self->tr);
}

TEST_F(trig, help_when_none_and_listing_forms)
{
	struct uks_trace *tr = self->tr;

	ASSERT_STREQ(HELP, rd(tr, OPEN_TRIGGER));
	ASSERT_STREQ(HELP, rd(tr, "events/ftrace/print/trigger"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceon:5 if fd == 0\n"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "stacktrace:0"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "enable_event:uks_test:tick:3"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "  disable_event:uks_other:ping  "));
	/* Newest first, as the kernel lists them. */
	ASSERT_STREQ("disable_event:uks_other:ping:unlimited\n"
		     "enable_event:uks_test:tick:count=3\n"
		     "stacktrace:count=0\n"
		     "traceon:count=5 if fd == 0\n", rd(tr, OPEN_TRIGGER));
	/* Removal ignores the count and the filter. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceoff:0 if whatever"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!stacktrace"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!enable_event:uks_test:tick"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!disable_event:uks_other:ping"));
	ASSERT_STREQ(HELP, rd(tr, OPEN_TRIGGER));
	/* Removing what is not there succeeds. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceon"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceon:0x10"));
	ASSERT_STREQ("traceon:count=16\n", rd(tr, OPEN_TRIGGER));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceon"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceoff  if  fd == 1"));
	ASSERT_STREQ("traceoff:unlimited if  fd == 1\n", rd(tr, OPEN_TRIGGER));
}

TEST_F(trig, errnos_are_the_kernels)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "nosuch"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, ""));		/* nothing written */
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "\n"));	/* "echo > trigger" */
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceoff+0"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceoff:badparam"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "stacktrace:foo"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceon:5x"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceon:-1"));
	ASSERT_EQ(-ERANGE, wr(tr, OPEN_TRIGGER, "traceon:99999999999999999999"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceon if"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceon ifx fd == 1"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceon:1 when fd == 1"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "enable_event"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "enable_event:uks_test"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "enable_event:nogroup:noevent"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "!enable_event:nogroup:noevent"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "disable_event+1"));
	ASSERT_STREQ(HELP, rd(tr, OPEN_TRIGGER));
	/* One trigger of a type: traceon and traceoff are one type. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceon"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "traceon"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "traceoff:3"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "traceon:"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "stacktrace"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "stacktrace"));
	/* ... and enable_event/disable_event one type per target. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "enable_event:uks_test:tick"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "enable_event:uks_test:tick"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "disable_event:uks_test:tick"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "disable_event:uks_other:ping"));
	/* "!traceoff" removes the traceon: the type is what matters. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceoff"));
	ASSERT_EQ(NULL, strstr(rd(tr, OPEN_TRIGGER), "traceon"));
	/* A page or more in one write. */
	{
		char big[4097];

		memset(big, ' ', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		memcpy(big, "traceon", 7);
		ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, big));
	}
}

TEST_F(trig, bad_filter_goes_to_error_log_like_the_kernel)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceoff if a"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceoff if fd=0"));
	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "traceoff if fd == flagsx"));
	ASSERT_STREQ("[TS] event filter parse error: error: Field not found\n"
		     "  Command: a\n"
		     "             ^\n"
		     "[TS] event filter parse error: error: Invalid operator\n"
		     "  Command: fd=0\n"
		     "              ^\n"
		     "[TS] event filter parse error: error: Invalid value (did you forget quotes)?\n"
		     "  Command: fd == flagsx\n"
		     "                  ^\n", error_log(tr));
	ASSERT_STREQ(HELP, rd(tr, OPEN_TRIGGER));
}

TEST_F(trig, traceoff_fires_on_a_disabled_event_before_its_record)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceoff"));
	/* The trigger holds the event in soft mode: probe on, no records. */
	ASSERT_STREQ("0*\n", rd(tr, "events/uks_test/open/enable"));
	uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	ASSERT_STREQ("", rd(tr, "trace_pipe"));
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	/* Enabled, an unconditional traceoff fires before the record is made. */
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_test/open/enable"));
	uks_trace_uks_test_open(2, "b", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	ASSERT_STREQ("", rd(tr, "trace_pipe"));
	/* With a filter the record is made first, then the trigger sees it. */
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceoff"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/open/enable"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceoff if fd == 3"));
	uks_trace_uks_test_open(4, "c", 0);
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	uks_trace_uks_test_open(3, "d", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	rd(tr, "trace_pipe");
	ASSERT_NE(NULL, strstr(out, "open: fd=4 filename=c"));
	ASSERT_NE(NULL, strstr(out, "open: fd=3 filename=d"));
	/* Removing the last trigger leaves the user's enable as it was. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceoff"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/open/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "0"));
	ASSERT_STREQ("0\n", rd(tr, "events/uks_test/open/enable"));
}

TEST_F(trig, conditional_triggers_run_with_tracing_off_and_soft_disabled)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "tracing_on", "0"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceon if fd == 7"));
	uks_trace_uks_test_open(6, "x", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	uks_trace_uks_test_open(7, "x", 0);
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	/* The soft-disabled event's record went nowhere. */
	ASSERT_STREQ("", rd(tr, "trace_pipe"));
	/* Same with the event enabled and the buffer off. */
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	ASSERT_EQ(0, wr(tr, "tracing_on", "0"));
	uks_trace_uks_test_open(7, "y", 0);
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	ASSERT_STREQ("", rd(tr, "trace_pipe"));
}

TEST_F(trig, counts_are_spent_only_when_they_change_something)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "traceoff:2"));
	ASSERT_EQ(0, wr(tr, "tracing_on", "0"));
	uks_trace_uks_test_open(1, "a", 0);	/* already off: not counted */
	ASSERT_STREQ("traceoff:count=2\n", rd(tr, OPEN_TRIGGER));
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	ASSERT_STREQ("traceoff:count=1\n", rd(tr, OPEN_TRIGGER));
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("traceoff:count=0\n", rd(tr, OPEN_TRIGGER));
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	uks_trace_uks_test_open(1, "a", 0);	/* spent */
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	/* stacktrace counts every hit. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!traceoff"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "stacktrace:2"));
	for (int i = 0; i < 4; i++)
		uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("stacktrace:count=0\n", rd(tr, OPEN_TRIGGER));
	ASSERT_EQ(2, count_of(rd(tr, "trace"), "<stack trace>"));
}

TEST_F(trig, enable_event_and_disable_event_soft_toggle_their_target)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "enable_event:uks_other:ping:1"));
	ASSERT_STREQ("0*\n", rd(tr, "events/uks_other/ping/enable"));
	uks_trace_uks_other_ping(1);		/* soft-disabled: not recorded */
	uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_other/ping/enable"));
	ASSERT_STREQ("enable_event:uks_other:ping:count=0\n", rd(tr, OPEN_TRIGGER));
	uks_trace_uks_other_ping(2);
	rd(tr, "trace_pipe");
	ASSERT_EQ(NULL, strstr(out, "v=1"));
	ASSERT_NE(NULL, strstr(out, "ping: v=2"));
	/* The last soft user leaves it as shown: on. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!enable_event:uks_other:ping"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_other/ping/enable"));
	/* disable_event on an enabled event. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "disable_event:uks_other:ping if fd == 9"));
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_other/ping/enable"));
	uks_trace_uks_test_open(8, "a", 0);
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_other/ping/enable"));
	uks_trace_uks_test_open(9, "a", 0);
	ASSERT_STREQ("0*\n", rd(tr, "events/uks_other/ping/enable"));
	uks_trace_uks_other_ping(3);
	ASSERT_EQ(NULL, strstr(rd(tr, "trace_pipe"), "v=3"));
	/* Writing 1 clears the soft disable, 0 sets it while in soft mode. */
	ASSERT_EQ(0, wr(tr, "events/uks_other/ping/enable", "1"));
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_other/ping/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_other/ping/enable", "0"));
	ASSERT_STREQ("0*\n", rd(tr, "events/uks_other/ping/enable"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!disable_event:uks_other:ping"));
	ASSERT_STREQ("0\n", rd(tr, "events/uks_other/ping/enable"));
}

TEST_F(trig, stacktrace_writes_a_kernel_stack_event_after_the_record)
{
	struct uks_trace *tr = self->tr;
	regex_t re;

	ASSERT_STREQ("name: kernel_stack\n"
		     "ID: 4\n"
		     "format:\n"
		     "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		     "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		     "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		     "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n"
		     "\n"
		     "\tfield:int size;\toffset:8;\tsize:4;\tsigned:1;\n"
		     "\tfield:unsigned long caller[8];\toffset:16;\tsize:64;\tsigned:0;\n"
		     "\n"
		     "print fmt: \"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\" \"\\t=> %ps\\n\\t=> %ps\\n"
		     "\\t=> %ps\\n\" \"\\t=> %ps\\n\\t=> %ps\\n\", (void *)REC->caller[0], "
		     "(void *)REC->caller[1], (void *)REC->caller[2], (void *)REC->caller[3], "
		     "(void *)REC->caller[4], (void *)REC->caller[5], (void *)REC->caller[6], "
		     "(void *)REC->caller[7]\n", rd(tr, "events/ftrace/kernel_stack/format"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "stacktrace"));
	uks_trace_uks_test_open(5, "s", 0);
	regcomp(&re, "open: fd=5 filename=s flags=0x0\n"
		     " +[^ ]+-[0-9]+ +\\[[0-9]{3}\\] \\.\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: <stack trace>\n"
		     "( => [^\n]+\n)+$", REG_EXTENDED);
	ASSERT_EQ(0, regexec(&re, rd(tr, "trace"), 0, NULL, 0));
	regfree(&re);
	/* The test's own exported caller is named (the binary is linked -rdynamic or not). */
	ASSERT_GE(count_of(out, "\n => "), 1);
}

TEST_F(trig, trace_marker_triggers_fire_with_the_record)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "traceoff if common_pid == 0"));
	ASSERT_STREQ("traceoff:unlimited if common_pid == 0\n",
		     rd(tr, "events/ftrace/print/trigger"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "go\n"));
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "!traceoff"));
	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "traceoff if common_pid > 0"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "stop\n"));
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	/* The marker's own record was made before the trigger turned it off. */
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "tracing_mark_write: stop\n"));
	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "!traceoff"));
	ASSERT_STREQ(HELP, rd(tr, "events/ftrace/print/trigger"));
	/* ftrace/print is never enabled: its enable file does not change. */
	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "stacktrace"));
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "with stack\n"));
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "tracing_mark_write: with stack\n"));
	ASSERT_NE(NULL, strstr(out, ": <stack trace>\n => "));
}

TEST_F(trig, eprobe_events_fire_triggers)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:myopen uks_test/open fd=$fd"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/myopen/trigger", "traceoff if fd == 2"));
	ASSERT_STREQ("0*\n", rd(tr, "events/eprobes/myopen/enable"));
	uks_trace_uks_test_open(1, "a", 0);
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	uks_trace_uks_test_open(2, "a", 0);
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	ASSERT_STREQ("", rd(tr, "trace_pipe"));
	/* A dynamic event with a trigger is busy, as in the kernel. */
	ASSERT_EQ(-EBUSY, wr(tr, "dynamic_events", "-:myopen"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/myopen/trigger", "!traceoff"));
	ASSERT_STREQ("0\n", rd(tr, "events/eprobes/myopen/enable"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "-:myopen"));
}

TEST_F(trig, an_instance_with_triggers_goes_cleanly)
{
	struct uks_trace *other;

	ASSERT_EQ(0, uks_trace_create("trig", &other));
	ASSERT_EQ(0, wr(other, OPEN_TRIGGER, "enable_event:uks_other:ping"));
	ASSERT_EQ(0, wr(other, "events/uks_other/ping/trigger", "disable_event:uks_test:open"));
	ASSERT_EQ(0, wr(other, "events/uks_other/ping/trigger", "stacktrace if v > 0"));
	uks_trace_uks_test_open(1, "a", 0);
	uks_trace_uks_other_ping(2);
	ASSERT_STREQ("0*\n", rd(other, "events/uks_test/open/enable"));
	/* Triggers are per instance. */
	ASSERT_STREQ(HELP, rd(self->tr, OPEN_TRIGGER));
	uks_trace_destroy(other);
}

TEST_F(trig, snapshot_swaps_the_buffers_from_the_hit)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(-EINVAL, wr(tr, OPEN_TRIGGER, "snapshot+1"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	uks_trace_uks_test_open(1, "before", 0);
	/* Setting the trigger allocates the spare. */
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "snapshot:1"));
	ASSERT_EQ(-EEXIST, wr(tr, OPEN_TRIGGER, "snapshot"));
	ASSERT_NE(NULL, strstr(rd(tr, "snapshot"), "Snapshot is allocated"));
	/* Unfiltered: the swap comes before the hit's own record. */
	uks_trace_uks_test_open(2, "trigger", 0);
	ASSERT_STREQ("snapshot:count=0\n", rd(tr, OPEN_TRIGGER));
	rd(tr, "snapshot");
	ASSERT_NE(NULL, strstr(out, "open: fd=1 filename=before"));
	ASSERT_EQ(NULL, strstr(out, "filename=trigger"));
	rd(tr, "trace");
	ASSERT_NE(NULL, strstr(out, "open: fd=2 filename=trigger"));
	ASSERT_EQ(NULL, strstr(out, "filename=before"));
	uks_trace_uks_test_open(3, "spent", 0);
	ASSERT_EQ(NULL, strstr(rd(tr, "snapshot"), "filename=spent"));
	ASSERT_EQ(0, wr(tr, OPEN_TRIGGER, "!snapshot"));
	ASSERT_STREQ(HELP, rd(tr, OPEN_TRIGGER));
}

/* trigger-trace-marker-snapshot.tc: each marker swaps, odd lines stay live. */
TEST_F(trig, trace_marker_snapshot_alternates)
{
	struct uks_trace *tr = self->tr;
	char line[32];

	ASSERT_EQ(0, wr(tr, "events/ftrace/print/trigger", "snapshot"));
	for (int i = 1; i <= 10; i++) {
		snprintf(line, sizeof(line), "hello >%d<", i);
		ASSERT_EQ(0, wr(tr, "trace_marker", line));
	}
	rd(tr, "trace");
	for (int i = 1; i <= 10; i++) {
		snprintf(line, sizeof(line), ">%d<\n", i);
		ASSERT_EQ(i % 2 == 1, strstr(out, line) != NULL);
	}
	rd(tr, "snapshot");
	for (int i = 1; i <= 10; i++) {
		snprintf(line, sizeof(line), ">%d<\n", i);
		ASSERT_EQ(i % 2 == 0, strstr(out, line) != NULL);
	}
}

TEST_F(trig, readme_has_the_kernels_trigger_lines)
{
	ASSERT_NE(NULL, strstr(rd(self->tr, "README"),
			       "      trigger\t\t- If set, a command to perform when event is hit\n"
			       "\t    Format: <trigger>[:count][if <filter>]\n"
			       "\t   trigger: traceon, traceoff\n"
			       "\t            enable_event:<system>:<event>\n"
			       "\t            disable_event:<system>:<event>\n"
			       "\t\t    stacktrace\n"
			       "\t\t    snapshot\n"));
	ASSERT_NE(NULL, strstr(out, "\t   Filters can be ignored when removing a trigger.\n"));
}

/* Whatever is written, the file answers 0 or an errno and stays listable. */
TEST_F(trig, garbage_input)
{
	struct uks_trace *tr = self->tr;
	static const char *const words[] = {
		"traceon", "traceoff", "stacktrace", "enable_event", "disable_event", "!", ":",
		" ", "if", "fd", "==", "1", "uks_test", "open", "uks_other:ping", "\t", "0x",
		"&&", "\"", "(", "~", "99999999999999999999999", "\n", "snapshot", "hist",
	};
	char buf[256];

	srand(34);
	for (int i = 0; i < 3000; i++) {
		size_t o = 0;
		int n = rand() % 8, ret;

		for (int j = 0; j < n && o < 200; j++) {
			if (rand() % 5 == 0)
				buf[o++] = (char)(rand() % 255 + 1);
			else
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%s",
						      words[rand() % (sizeof(words) / sizeof(words[0]))]);
		}
		buf[o] = '\0';
		ret = wr(tr, OPEN_TRIGGER, buf);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL || ret == -EEXIST || ret == -ERANGE ||
			    ret == -ENOSPC || ret == -E2BIG);
		if (i % 50 == 0)
			uks_trace_uks_test_open(1, "a", 0);
	}
	rd(tr, OPEN_TRIGGER);
	ASSERT_TRUE(out[0] != '<');
}

TEST_HARNESS_MAIN
