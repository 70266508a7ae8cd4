// SPDX-License-Identifier: MIT
/*
 * The tracefs files of a trace instance, byte for byte against the Linux
 * 5.15 formats: trace, trace_pipe, format, id, enable, set_event, filter,
 * error_log, options, trace_clock, buffer_size_kb, per_cpu stats, README.
 */
#include <fcntl.h>
#include <pthread.h>
#include <regex.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sched.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/slab.h>
#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"

/*
 * Replace every " SSSSS.UUUUUU:" timestamp with " TS:", and error_log's
 * "[SSSSS.UUUUUU]" with "[TS]", for comparisons.
 */
static const char *mask_ts(const char *in)
{
	static char buf[1 << 16];
	regex_t re;
	regmatch_t m;
	size_t o = 0;

	regcomp(&re, "( +[0-9]+\\.[0-9]{6}:|\\[ *[0-9]+\\.[0-9]{6}\\])", REG_EXTENDED);
	while (*in && o + 8 < sizeof(buf)) {
		if (regexec(&re, in, 1, &m, 0)) {
			o += snprintf(buf + o, sizeof(buf) - o, "%s", in);
			break;
		}
		o += snprintf(buf + o, sizeof(buf) - o, "%.*s%s", (int)m.rm_so, in,
			      in[m.rm_so] == '[' ? "[TS]" : " TS:");
		in += m.rm_eo;
	}
	buf[o < sizeof(buf) ? o : sizeof(buf) - 1] = '\0';
	regfree(&re);
	return buf;
}

static const char *line_prefix(void)
{
	static char p[64];
	char comm[16] = { 0 };

	prctl(PR_GET_NAME, comm);
	snprintf(p, sizeof(p), "%16s-%-7d [%03d] .....", comm, (int)syscall(SYS_gettid),
		 uks_cpu_current());
	return p;
}

static long online(void)
{
	return sysconf(_SC_NPROCESSORS_ONLN);
}

#define HEADER_IRQ \
	"#                                _-----=> irqs-off\n" \
	"#                               / _----=> need-resched\n" \
	"#                              | / _---=> hardirq/softirq\n" \
	"#                              || / _--=> preempt-depth\n" \
	"#                              ||| / _-=> migrate-disable\n" \
	"#                              |||| /     delay\n" \
	"#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION\n" \
	"#              | |         |   |||||     |         |\n"

FIXTURE(tfs) {
	struct uks_trace *tr;
};

FIXTURE_SETUP(tfs)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	/* The tests run on whatever CPU; keep each one on one CPU. */
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(uks_cpu_current() < 0 ? 0 : uks_cpu_current(), &set);
	sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE_TEARDOWN(tfs)
{
	uks_trace_destroy(self->tr);
}

TEST_F(tfs, empty_trace_header)
{
	char expect[2048];

	snprintf(expect, sizeof(expect),
		 "# tracer: nop\n#\n# entries-in-buffer/entries-written: 0/0   #P:%ld\n#\n" HEADER_IRQ,
		 online());
	ASSERT_STREQ(expect, rd(self->tr, "trace"));
}

TEST_F(tfs, event_lines_and_counts)
{
	char expect[4096];
	const char *p;

	ASSERT_EQ(0, wr(self->tr, "set_event", "uks_test:open"));
	uks_trace_uks_test_open(3, "/etc/passwd", 0x80000);
	uks_trace_uks_test_open(4, NULL, 0);
	p = line_prefix();
	snprintf(expect, sizeof(expect),
		 "# tracer: nop\n#\n# entries-in-buffer/entries-written: 2/2   #P:%ld\n#\n" HEADER_IRQ
		 "%s TS: open: fd=3 filename=/etc/passwd flags=0x80000\n"
		 "%s TS: open: fd=4 filename=(null) flags=0x0\n", online(), p, p);
	ASSERT_STREQ(expect, mask_ts(rd(self->tr, "trace")));
	/* trace does not consume; trace_pipe does, and has no header. */
	snprintf(expect, sizeof(expect),
		 "%s TS: open: fd=3 filename=/etc/passwd flags=0x80000\n"
		 "%s TS: open: fd=4 filename=(null) flags=0x0\n", p, p);
	ASSERT_STREQ(expect, mask_ts(rd(self->tr, "trace_pipe")));
	ASSERT_STREQ("", rd(self->tr, "trace_pipe"));
	ASSERT_NE(NULL, strstr(rd(self->tr, "trace"), "entries-in-buffer/entries-written: 0/0"));
}

TEST_F(tfs, timestamp_is_seconds_dot_micro)
{
	regex_t re;

	ASSERT_EQ(0, wr(self->tr, "set_event", "uks_other:ping"));
	uks_trace_uks_other_ping(-5);
	regcomp(&re, "^ +[^ ]+-[0-9]+ +\\[[0-9]{3}\\] \\.\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: ping: v=-5\n$",
		REG_EXTENDED);
	ASSERT_EQ(0, regexec(&re, rd(self->tr, "trace_pipe"), 0, NULL, 0));
	regfree(&re);
}

TEST_F(tfs, format_and_id)
{
	char expect[2048], id[16];

	snprintf(id, sizeof(id), "%.15s", rd(self->tr, "events/uks_test/open/id"));
	snprintf(expect, sizeof(expect),
		 "name: open\nID: %d\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:int fd;\toffset:8;\tsize:4;\tsigned:1;\n"
		 "\tfield:__data_loc char[] filename;\toffset:12;\tsize:4;\tsigned:1;\n"
		 "\tfield:const char * name_ptr;\toffset:16;\tsize:8;\tsigned:0;\n"
		 "\tfield:unsigned long flags;\toffset:24;\tsize:8;\tsigned:0;\n\n"
		 "print fmt: \"fd=%%d filename=%%s flags=0x%%lx\", REC->fd, __get_str(filename), REC->flags\n",
		 atoi(id));
	ASSERT_STREQ(expect, rd(self->tr, "events/uks_test/open/format"));
	ASSERT_GT(atoi(id), 16);
	/* char arrays print as "char comm[16]" */
	ASSERT_NE(NULL, strstr(rd(self->tr, "events/uks_test/tick/format"),
			       "\tfield:char comm[16];\toffset:12;\tsize:16;\tsigned:1;\n"));
	ASSERT_NE(NULL, strstr(rd(self->tr, "events/ftrace/print/format"),
			       "name: print\nID: 5\n"));
}

TEST_F(tfs, enable_files)
{
	struct uks_trace *tr = self->tr;

	ASSERT_STREQ("0\n", rd(tr, "events/uks_test/open/enable"));
	ASSERT_STREQ("0\n", rd(tr, "events/uks_test/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1\n"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/open/enable"));
	ASSERT_STREQ("X\n", rd(tr, "events/uks_test/enable"));
	ASSERT_STREQ("X\n", rd(tr, "events/enable"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/enable", "1"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/tick/enable"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/enable"));
	ASSERT_EQ(0, wr(tr, "events/enable", "1"));
	ASSERT_STREQ("1\n", rd(tr, "events/enable"));
	ASSERT_EQ(0, wr(tr, "events/enable", "0"));
	ASSERT_STREQ("0\n", rd(tr, "events/enable"));
	ASSERT_EQ(-EINVAL, wr(tr, "events/uks_test/open/enable", "2"));
	ASSERT_EQ(-EINVAL, wr(tr, "events/uks_test/open/enable", "yes"));
	ASSERT_EQ(-EINVAL, wr(tr, "events/enable", "-1"));
	ASSERT_EQ(-ENOENT, wr(tr, "events/uks_test/nope/enable", "1"));
	ASSERT_EQ(-ENOENT, wr(tr, "events/nosys/enable", "1"));
}

TEST_F(tfs, set_event_syntax)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "set_event", "uks_test:open"));
	ASSERT_STREQ("uks_test:open\n", rd(tr, "set_event"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_test:*"));
	ASSERT_STREQ("uks_test:open\nuks_test:tick\n", rd(tr, "set_event"));
	ASSERT_EQ(0, wr(tr, "set_event", "!uks_test:open"));
	ASSERT_STREQ("uks_test:tick\n", rd(tr, "set_event"));
	ASSERT_EQ(0, wr(tr, "set_event", "*:ping"));
	ASSERT_STREQ("uks_test:tick\nuks_other:ping\n", rd(tr, "set_event"));
	ASSERT_EQ(0, wrt(tr, "set_event", ""));		/* "> set_event" clears */
	ASSERT_STREQ("", rd(tr, "set_event"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other"));	/* a bare word: system or event */
	ASSERT_STREQ("uks_other:ping\n", rd(tr, "set_event"));
	ASSERT_EQ(0, wr(tr, "set_event", "tick open"));	/* several tokens per write */
	ASSERT_STREQ("uks_test:open\nuks_test:tick\nuks_other:ping\n", rd(tr, "set_event"));
	ASSERT_EQ(-EINVAL, wr(tr, "set_event", "nosuch:event"));
	ASSERT_EQ(-EINVAL, wr(tr, "set_event", "print"));	/* ftrace events are not enabled */
	ASSERT_NE(NULL, strstr(rd(tr, "available_events"), "uks_test:open\n"));
	ASSERT_EQ(NULL, strstr(rd(tr, "available_events"), "print"));
}

TEST_F(tfs, tracing_on_and_marker)
{
	struct uks_trace *tr = self->tr;
	char expect[256];

	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "hello world"));
	ASSERT_EQ(0, wr(tr, "tracing_on", "0"));
	ASSERT_STREQ("0\n", rd(tr, "tracing_on"));
	ASSERT_EQ(-EBADF, wr(tr, "trace_marker", "lost"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	uks_trace_uks_other_ping(1);		/* not recorded */
	ASSERT_EQ(0, wr(tr, "tracing_on", "1"));
	snprintf(expect, sizeof(expect), "%s TS: tracing_mark_write: hello world\n", line_prefix());
	ASSERT_STREQ(expect, mask_ts(rd(tr, "trace_pipe")));
	ASSERT_EQ(0, wr(tr, "trace_options", "nomarkers"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_marker", "x"));
	ASSERT_EQ(-EACCES, uks_tracefs_read_all(tr, "trace_marker", out, sizeof(out)));
	ASSERT_EQ(-EINVAL, wr(tr, "tracing_on", "on"));
}

TEST_F(tfs, clear_with_truncate)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	for (int i = 0; i < 10; i++)
		uks_trace_uks_other_ping(i);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "entries-in-buffer/entries-written: 10/10"));
	ASSERT_EQ(0, wrt(tr, "trace", ""));
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "entries-in-buffer/entries-written: 0/0"));
}

static void *fire_ping(void *arg)
{
	uks_trace_uks_other_ping(99);
	return NULL;
}

TEST_F(tfs, set_event_pid)
{
	struct uks_trace *tr = self->tr;
	char mine[32];
	pthread_t t;

	snprintf(mine, sizeof(mine), "%d\n", (int)syscall(SYS_gettid));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	ASSERT_EQ(0, wrt(tr, "set_event_pid", mine));
	ASSERT_STREQ(mine, rd(tr, "set_event_pid"));
	pthread_create(&t, NULL, fire_ping, NULL);	/* another tid: filtered out */
	pthread_join(t, NULL);
	uks_trace_uks_other_ping(7);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "ping: v=7\n"));
	ASSERT_EQ(NULL, strstr(out, "v=99"));
	ASSERT_EQ(-EINVAL, wr(tr, "set_event_pid", "12x"));
	ASSERT_EQ(0, wrt(tr, "set_event_pid", ""));
	ASSERT_STREQ("", rd(tr, "set_event_pid"));
}

TEST_F(tfs, filters)
{
	struct uks_trace *tr = self->tr;
	const char *t;

	ASSERT_STREQ("none\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/filter", "fd == 3 && filename ~ \"/etc/*\"\n"));
	ASSERT_STREQ("fd == 3 && filename ~ \"/etc/*\"\n", rd(tr, "events/uks_test/open/filter"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	uks_trace_uks_test_open(3, "/etc/passwd", 1);
	uks_trace_uks_test_open(4, "/etc/passwd", 2);
	uks_trace_uks_test_open(3, "/tmp/passwd", 3);
	t = rd(tr, "trace_pipe");
	ASSERT_NE(NULL, strstr(t, "flags=0x1\n"));
	ASSERT_EQ(NULL, strstr(t, "flags=0x2"));
	ASSERT_EQ(NULL, strstr(t, "flags=0x3"));
	/* common_pid and CPU are filterable too */
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/filter", "common_pid != 0 && cpu >= 0"));
	uks_trace_uks_test_open(9, "x", 4);
	ASSERT_NE(NULL, strstr(rd(tr, "trace_pipe"), "fd=9"));
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/filter", "0"));
	ASSERT_STREQ("none\n", rd(tr, "events/uks_test/open/filter"));
}

static int log_errors;

static void count_errors(enum uks_log_level level, const char *msg, void *arg)
{
	(void)msg;
	(void)arg;
	if (level == UKS_LOG_ERR)
		__atomic_add_fetch(&log_errors, 1, __ATOMIC_RELAXED);
}

/* The filter's text changes hands as a filter replaces another: no bad free. */
TEST_F(tfs, replacing_a_filter_frees_its_text_cleanly)
{
	struct uks_trace *tr = self->tr;

	log_errors = 0;
	uks_set_log_fn(count_errors, NULL);
	EXPECT_EQ(0, wr(tr, "events/uks_test/open/filter", "fd == 3"));
	EXPECT_EQ(-EINVAL, wr(tr, "events/uks_test/open/filter", "nosuch == 1"));
	EXPECT_EQ(0, wr(tr, "events/uks_test/open/filter", "fd == 4"));
	EXPECT_STREQ("fd == 4\n", rd(tr, "events/uks_test/open/filter"));
	EXPECT_EQ(0, wr(tr, "events/uks_test/open/filter", "0"));
	uks_set_log_fn(uks_log_stderr, NULL);
	EXPECT_EQ(0, log_errors);
}

TEST_F(tfs, bad_filter_reports_like_the_kernel)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(-EINVAL, wr(tr, "events/uks_test/open/filter", "nosuch == 1"));
	/* The filter file shows the text, a caret and the error... */
	ASSERT_NE(NULL, strstr(rd(tr, "events/uks_test/open/filter"), "nosuch == 1\n"));
	ASSERT_NE(NULL, strstr(out, "\nparse_error: Field not found\n"));
	/* ...and error_log has the entry with the caret under the error. */
	ASSERT_NE(NULL, strstr(mask_ts(rd(tr, "error_log")),
			       "[TS] event filter parse error: error: Field not found\n"
			       "  Command: nosuch == 1\n"));
}

TEST_F(tfs, error_log_keeps_eight_and_clears)
{
	struct uks_trace *tr = self->tr;
	char cmd[64];
	const char *log;
	int n = 0;

	for (int i = 0; i < 10; i++) {
		snprintf(cmd, sizeof(cmd), "e:p%d nosys/nothing", i);
		ASSERT_EQ(-ENODEV, wr(tr, "dynamic_events", cmd));
	}
	log = rd(tr, "error_log");
	for (const char *p = log; (p = strstr(p, "Command: ")); p++)
		n++;
	ASSERT_EQ(8, n);
	ASSERT_EQ(NULL, strstr(log, "e:p1 "));	/* the oldest went */
	ASSERT_NE(NULL, strstr(log, "e:p9 "));
	ASSERT_EQ(0, wrt(tr, "error_log", ""));
	ASSERT_STREQ("", rd(tr, "error_log"));
}

TEST_F(tfs, error_log_exact_entry)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(-ENODEV, wr(tr, "dynamic_events", "e:foo/bar a.b"));
	ASSERT_STREQ("[TS] event_probe: error: Attached event does not exist\n"
		     "  Command: e:foo/bar a.b\n"
		     "                     ^\n", mask_ts(rd(tr, "error_log")));
}

TEST_F(tfs, options_change_the_output)
{
	struct uks_trace *tr = self->tr;
	char tgid[64];
	const char *t;

	ASSERT_NE(NULL, strstr(rd(tr, "trace_options"), "noverbose\n"));
	ASSERT_EQ(0, wr(tr, "trace_options", "record-tgid"));
	ASSERT_STREQ("1\n", rd(tr, "options/record-tgid"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	uks_trace_uks_other_ping(1);
	t = rd(tr, "trace");
	ASSERT_NE(NULL, strstr(t, "#           TASK-PID       TGID    CPU#  |||||  TIMESTAMP  FUNCTION\n"));
	snprintf(tgid, sizeof(tgid), " (%7d) [", (int)getpid());
	ASSERT_NE(NULL, strstr(t, tgid));
	ASSERT_EQ(0, wr(tr, "options/record-tgid", "0"));
	ASSERT_EQ(0, wr(tr, "trace_options", "noirq-info"));
	t = rd(tr, "trace");
	ASSERT_NE(NULL, strstr(t, "#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
				  "#              | |         |         |         |\n"));
	ASSERT_NE(NULL, strstr(mask_ts(t), "] TS: ping: v=1\n"));
	ASSERT_EQ(0, wr(tr, "trace_options", "nocontext-info"));
	ASSERT_STREQ("ping: v=1\n", rd(tr, "trace_pipe"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "nosuchoption"));
	ASSERT_EQ(-EINVAL, wr(tr, "options/markers", "2"));
	ASSERT_NE(NULL, strstr(rd(tr, "trace_options"), "nocontext-info\n"));
}

/*
 * latency-format: print_trace_header(), print_lat_help_header() and the
 * latency line with times relative to the last reset.  The counter clock
 * makes the times exact: the reset reads 0 and the two events 1 and 2.
 */
TEST_F(tfs, latency_format)
{
	struct uks_trace *tr = self->tr;
	char expect[4096], comm[16] = { 0 }, head[96];
	struct utsname uts;
	cpu_set_t one;
	int cpu = uks_cpu_current(), pid = (int)syscall(SYS_gettid);

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	cpu = uks_cpu_current();
	ASSERT_EQ(0, uname(&uts));
	prctl(PR_GET_NAME, comm);
	ASSERT_EQ(0, wr(tr, "trace_options", "latency-format"));
	ASSERT_STREQ("1\n", rd(tr, "options/latency-format"));
	ASSERT_EQ(0, wrt(tr, "trace_clock", "counter"));
	/* An empty buffer shows no latency header at all. */
	ASSERT_STREQ("# tracer: nop\n#\n", rd(tr, "trace"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	uks_trace_uks_other_ping(1);
	uks_trace_uks_other_ping(2);
	snprintf(head, sizeof(head), "%8.8s-%-7d %3d.....", comm, pid, cpu);
	snprintf(expect, sizeof(expect),
		 "# tracer: nop\n"
		 "#\n"
		 "# nop latency trace v1.1.5 on %s\n"
		 "# --------------------------------------------------------------------\n"
		 "# latency: 0 us, #2/2, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:%ld)\n"
		 "#    -----------------\n"
		 "#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n"
		 "#    -----------------\n"
		 "#\n"
		 "#                    _------=> CPU#            \n"
		 "#                   / _-----=> irqs-off        \n"
		 "#                  | / _----=> need-resched    \n"
		 "#                  || / _---=> hardirq/softirq \n"
		 "#                  ||| / _--=> preempt-depth   \n"
		 "#                  |||| / _-=> migrate-disable \n"
		 "#                  ||||| /     delay           \n"
		 "#  cmd     pid     |||||| time  |   caller     \n"
		 "#     \\   /        ||||||  \\    |    /       \n"
		 "%s    1: ping: v=1\n"
		 "%s    2: ping: v=2\n", uts.release, online(), head, head);
	ASSERT_STREQ(expect, rd(tr, "trace"));

	/* verbose: no help header, the raw context and both times. */
	ASSERT_EQ(0, wr(tr, "trace_options", "verbose"));
	snprintf(expect, sizeof(expect),
		 "%16s %7d %3d 0 00000000 00000000 [0000000000000001] 1 (+1): ping: v=1\n"
		 "%16s %7d %3d 0 00000000 00000001 [0000000000000002] 2 (+0): ping: v=2\n",
		 comm, pid, cpu, comm, pid, cpu);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), expect));
	ASSERT_EQ(NULL, strstr(out, "_------=> CPU#"));
	ASSERT_EQ(0, wr(tr, "trace_options", "noverbose"));

	/* trace_pipe: the same lines, consumed. */
	snprintf(expect, sizeof(expect), "%s    1: ping: v=1\n%s    2: ping: v=2\n", head, head);
	ASSERT_STREQ(expect, rd(tr, "trace_pipe"));

	/* A nanosecond clock prints microseconds and the delay mark. */
	ASSERT_EQ(0, wrt(tr, "trace_clock", "mono"));
	uks_trace_uks_other_ping(3);
	usleep(20000);
	uks_trace_uks_other_ping(4);
	rd(tr, "trace");
	/* 20 ms to the next event: '*' (> 10 ms), or '@' (> 100 ms) on a loaded box */
	ASSERT_TRUE(strstr(out, "us*: ping: v=3\n") || strstr(out, "us@: ping: v=3\n"));
	ASSERT_NE(NULL, strstr(out, "us : ping: v=4\n"));	/* the last: no gap */
	ASSERT_EQ(0, wr(tr, "trace_options", "nocontext-info"));
	ASSERT_STREQ("# tracer: nop\n#\nping: v=3\nping: v=4\n", rd(tr, "trace"));
}

TEST_F(tfs, trace_clock)
{
	struct uks_trace *tr = self->tr;
	regex_t re;

	ASSERT_STREQ("[local] global counter uptime perf mono mono_raw boot x86-tsc\n",
		     rd(tr, "trace_clock"));
	ASSERT_EQ(0, wr(tr, "trace_clock", "counter"));
	ASSERT_STREQ("local global [counter] uptime perf mono mono_raw boot x86-tsc\n",
		     rd(tr, "trace_clock"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	uks_trace_uks_other_ping(1);
	/* Counters are not nanoseconds: printed as " %12llu: ". */
	regcomp(&re, "\\] \\.\\.\\.\\.\\. +[0-9]+: ping", REG_EXTENDED);
	ASSERT_EQ(0, regexec(&re, rd(tr, "trace_pipe"), 0, NULL, 0));
	regfree(&re);
	ASSERT_EQ(-EINVAL, wr(tr, "trace_clock", "sundial"));
}

TEST_F(tfs, buffer_size_and_stats)
{
	struct uks_trace *tr = self->tr;
	char expect[32];

	ASSERT_STREQ("1408\n", rd(tr, "buffer_size_kb"));
	ASSERT_EQ(0, wr(tr, "buffer_size_kb", "64"));
	ASSERT_STREQ("64\n", rd(tr, "buffer_size_kb"));
	snprintf(expect, sizeof(expect), "%u\n", 64 * uks_nr_cpu_ids());
	ASSERT_STREQ(expect, rd(tr, "buffer_total_size_kb"));
	ASSERT_EQ(-EINVAL, wr(tr, "buffer_size_kb", "0"));
	ASSERT_EQ(-EINVAL, wr(tr, "buffer_size_kb", "lots"));
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	for (int i = 0; i < 5000; i++)	/* 64 KiB overflows: overrun */
		uks_trace_uks_other_ping(i);
	{
		char path[64];
		regex_t re;

		snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", uks_cpu_current());
		regcomp(&re, "^entries: [0-9]+\noverrun: [1-9][0-9]*\ncommit overrun: 0\nbytes: [0-9]+\n"
			"oldest event ts: +[0-9]+\\.[0-9]{6}\nnow ts: +[0-9]+\\.[0-9]{6}\n"
			"dropped events: 0\nread events: 0\n$", REG_EXTENDED);
		ASSERT_EQ(0, regexec(&re, rd(tr, path), 0, NULL, 0));
		regfree(&re);
	}
}

static struct uks_trace *sig_tr;
static void on_usr1(int sig)
{
	uks_trace_uks_other_ping(42);
}

TEST_F(tfs, events_from_a_signal_handler)
{
	struct uks_trace *tr = self->tr;

	sig_tr = tr;
	signal(SIGUSR1, on_usr1);
	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping uks_test:open"));
	uks_trace_uks_test_open(1, "before", 0);
	raise(SIGUSR1);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "ping: v=42\n"));
}

TEST_F(tfs, readme_advertises_eprobes)
{
	const char *r = rd(self->tr, "README");

	/* The 6.x line, which ftracetest greps for (auto names, "if FILTER") */
	ASSERT_NE(NULL, strstr(r, "e[:[<group>/][<event>]] <attached-group>.<attached-event> "
				  "[<args>] [if <filter>]\n"));
	ASSERT_NE(NULL, strstr(r, "efield: For event probes ('e' types), the field is on of the fields"));
	ASSERT_EQ(NULL, strstr(r, "kprobe_events"));
	ASSERT_EQ(NULL, strstr(r, "symbol"));
}

TEST_F(tfs, directories_and_modes)
{
	struct uks_trace *tr = self->tr;
	unsigned int mode = 0;

	ASSERT_EQ(UKS_TRACEFS_DIR, uks_tracefs_stat(tr, "", &mode));
	ASSERT_EQ(UKS_TRACEFS_DIR, uks_tracefs_stat(tr, "events/uks_test/open", &mode));
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(tr, "/events/uks_test/open/format", &mode));
	ASSERT_EQ(0444, mode);
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(tr, "trace_marker", &mode));
	ASSERT_EQ(0220, mode);
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(tr, "nothing", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(tr, "trace/x", &mode));
	ASSERT_EQ(-EISDIR, uks_tracefs_read_all(tr, "events", out, sizeof(out)));
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(tr, "per_cpu/cpu0/stats", &mode));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(tr, "per_cpu/cpu9999/stats", &mode));
}

static int collect(const char *name, enum uks_tracefs_type type, void *arg)
{
	char *buf = arg;

	strcat(buf, name);
	strcat(buf, type == UKS_TRACEFS_DIR ? "/ " : " ");
	return 0;
}

TEST_F(tfs, listing)
{
	char buf[8192] = "";

	ASSERT_EQ(0, uks_tracefs_list(self->tr, "events/uks_test", collect, buf));
	ASSERT_STREQ("enable filter open/ tick/ ", buf);
	buf[0] = '\0';
	ASSERT_EQ(0, uks_tracefs_list(self->tr, "events/uks_test/open", collect, buf));
	ASSERT_STREQ("enable filter format id trigger ", buf);
	buf[0] = '\0';
	ASSERT_EQ(0, uks_tracefs_list(self->tr, "", collect, buf));
	ASSERT_NE(NULL, strstr(buf, "trace_options trace_pipe tracing_cpumask tracing_on"));
	ASSERT_EQ(-ENOTDIR, uks_tracefs_list(self->tr, "trace", collect, buf));
}

/* trace_pipe blocks until an event arrives, then returns it. */
static void *late_writer(void *arg)
{
	usleep(100 * 1000);
	uks_trace_uks_other_ping(1234);
	return NULL;
}

TEST_F(tfs, trace_pipe_blocks_and_wakes)
{
	struct uks_trace *tr = self->tr;
	struct uks_tracefs_file *f;
	char buf[512];
	pthread_t t;
	ssize_t n;
	uint64_t t0;

	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	ASSERT_EQ(0, uks_tracefs_open(tr, "trace_pipe", O_RDONLY | O_NONBLOCK, &f));
	ASSERT_EQ(-EAGAIN, uks_tracefs_read(f, buf, sizeof(buf)));
	ASSERT_EQ(0, uks_tracefs_poll(f));
	uks_tracefs_close(f);
	ASSERT_EQ(0, uks_tracefs_open(tr, "trace_pipe", O_RDONLY, &f));
	t0 = uks_clock_mono_ns();
	pthread_create(&t, NULL, late_writer, NULL);
	n = uks_tracefs_read(f, buf, sizeof(buf) - 1);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	ASSERT_NE(NULL, strstr(buf, "ping: v=1234\n"));
	ASSERT_GE(uks_clock_mono_ns() - t0, 50 * 1000 * 1000ull);
	pthread_join(t, NULL);
	uks_tracefs_close(f);
}

static void *interrupter(void *arg)
{
	usleep(50 * 1000);
	uks_tracefs_interrupt(arg);
	return NULL;
}

TEST_F(tfs, trace_pipe_read_is_interruptible)
{
	struct uks_tracefs_file *f;
	char buf[64];
	pthread_t t;

	ASSERT_EQ(0, uks_tracefs_open(self->tr, "trace_pipe", O_RDONLY, &f));
	pthread_create(&t, NULL, interrupter, f);
	ASSERT_EQ(-EINTR, uks_tracefs_read(f, buf, sizeof(buf)));
	pthread_join(t, NULL);
	uks_tracefs_close(f);
}

TEST_F(tfs, kmem_events_fire)
{
	struct uks_trace *tr = self->tr;
	char expect[128];
	void *p;

	ASSERT_EQ(0, wr(tr, "set_event", "kmem:kmalloc kmem:kfree"));
	p = uks_kmalloc(100);
	uks_kfree(p);
	snprintf(expect, sizeof(expect), "kmalloc: call_site=");
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), expect));
	snprintf(expect, sizeof(expect), "ptr=%016lx bytes_req=100 bytes_alloc=128 gfp_flags=0x0\n",
		 (unsigned long)p);
	ASSERT_NE(NULL, strstr(out, expect));
	snprintf(expect, sizeof(expect), "kfree: call_site=");
	ASSERT_NE(NULL, strstr(out, expect));
}

/* An enabled event takes the entry fast paths' objects to the full path. */
TEST_F(tfs, kmem_cache_events_fire)
{
	struct uks_trace *tr = self->tr;
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_events", 72, 0, 0, NULL);
	char expect[160];
	void *warm, *p;

	ASSERT_NONNULL(s);
	warm = uks_kmem_cache_alloc(s);	/* a CPU slab: the fast paths are live */
	ASSERT_EQ(0, wr(tr, "set_event", "kmem:kmem_cache_alloc kmem:kmem_cache_free"));
	p = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	ASSERT_EQ(0, wr(tr, "set_event", "!kmem:kmem_cache_alloc"));
	ASSERT_EQ(0, wr(tr, "set_event", "!kmem:kmem_cache_free"));
	uks_kmem_cache_free(s, warm);	/* not traced */
	snprintf(expect, sizeof(expect), "ptr=%016lx bytes_req=72 bytes_alloc=72 gfp_flags=0x0\n",
		 (unsigned long)p);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), expect));
	snprintf(expect, sizeof(expect), "ptr=%016lx name=t_events\n", (unsigned long)p);
	EXPECT_NE(NULL, strstr(out, expect));
	snprintf(expect, sizeof(expect), "ptr=%016lx name=t_events\n", (unsigned long)warm);
	EXPECT_EQ(NULL, strstr(out, expect));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_HARNESS_MAIN
