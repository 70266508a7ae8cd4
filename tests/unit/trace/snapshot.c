// SPDX-License-Identifier: MIT
/*
 * The snapshot file, per_cpu/cpuN/snapshot, the swap from a hit
 * (__uks_trace_snapshot_take()) and tracing_cpumask, against the kernel's
 * texts and errnos; and the swap racing lockless writers.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"
#include "core/bitmap.h"
#include "trace/snapshot.h"
#include "trace/trace.h"

#define HELP_MAIN(state)							\
	"# tracer: nop\n#\n#\n# * Snapshot is " state " *\n#\n"			\
	"# Snapshot commands:\n"						\
	"# echo 0 > snapshot : Clears and frees snapshot buffer\n"		\
	"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n" \
	"#                      Takes a snapshot of the main buffer.\n"	\
	"# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n" \
	"#                      (Doesn't have to be '2' works with any number that\n" \
	"#                       is not a '0' or '1')\n"

#define HELP_CPU(state)							\
	"# tracer: nop\n#\n#\n# * Snapshot is " state " *\n#\n"			\
	"# Snapshot commands:\n"						\
	"# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n"		\
	"# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n" \
	"#                      Takes a snapshot of the main buffer for this cpu.\n" \
	"# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n" \
	"#                      (Doesn't have to be '2' works with any number that\n" \
	"#                       is not a '0' or '1')\n"

FIXTURE(snap) {
	struct uks_trace *tr;
	int cpu;
	char path[64];
};

FIXTURE_SETUP(snap)
{
	cpu_set_t set;

	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	/* Keep each test on one CPU, so per-CPU files see its events. */
	self->cpu = uks_cpu_current() < 0 ? 0 : uks_cpu_current();
	CPU_ZERO(&set);
	CPU_SET(self->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	snprintf(self->path, sizeof(self->path), "per_cpu/cpu%d/snapshot", self->cpu);
}

FIXTURE_TEARDOWN(snap)
{
	uks_trace_destroy(self->tr);
}

/* A write(2) of nothing, which "echo -n" never makes: the kernel still calls ->write. */
static ssize_t write_nothing(struct uks_trace *tr, const char *path)
{
	struct uks_tracefs_file *f;
	ssize_t n;
	int ret = uks_tracefs_open(tr, path, O_WRONLY, &f);

	if (ret)
		return ret;
	n = uks_tracefs_write(f, "", 0);
	uks_tracefs_close(f);
	return n;
}

static int count(const char *text, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

TEST_F(snap, freed_snapshot_shows_the_kernels_help)
{
	ASSERT_STREQ(HELP_MAIN("freed"), rd(self->tr, "snapshot"));
	ASSERT_STREQ(HELP_CPU("freed"), rd(self->tr, self->path));
}

TEST_F(snap, allocated_empty_snapshot_shows_the_help_as_allocated)
{
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "2\n"));		/* does not allocate */
	ASSERT_STREQ(HELP_MAIN("freed"), rd(self->tr, "snapshot"));
	ASSERT_EQ(0, wrt(self->tr, "tracing_on", "0\n"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1\n"));
	ASSERT_STREQ(HELP_MAIN("allocated"), rd(self->tr, "snapshot"));
	ASSERT_STREQ(HELP_CPU("allocated"), rd(self->tr, self->path));
	/* snapshot.tc: taking one leaves tracing_on as it was */
	ASSERT_STREQ("0\n", rd(self->tr, "tracing_on"));
	ASSERT_EQ(0, wrt(self->tr, "tracing_on", "1\n"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1\n"));
	ASSERT_STREQ("1\n", rd(self->tr, "tracing_on"));
}

TEST_F(snap, echo_1_swaps_the_buffers)
{
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "first"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(1, count(rd(self->tr, "snapshot"), "tracing_mark_write: first\n"));
	ASSERT_EQ(1, count(out, "# entries-in-buffer/entries-written: 1/1"));
	ASSERT_EQ(0, count(rd(self->tr, "trace"), "first"));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "second"));
	/* Swapped again: what was live is the snapshot, and the reverse. */
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	rd(self->tr, "snapshot");
	ASSERT_EQ(1, count(out, "second"));
	ASSERT_EQ(0, count(out, "first"));
	ASSERT_EQ(1, count(rd(self->tr, "trace"), "first"));
}

TEST_F(snap, echo_2_clears_and_echo_0_frees)
{
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "kept"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(1, count(rd(self->tr, "snapshot"), "kept"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "2"));
	ASSERT_STREQ(HELP_MAIN("allocated"), rd(self->tr, "snapshot"));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "again"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(1, count(rd(self->tr, "snapshot"), "again"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "12345"));	/* "any number not 0 or 1" */
	ASSERT_STREQ(HELP_MAIN("allocated"), rd(self->tr, "snapshot"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "0"));
	ASSERT_STREQ(HELP_MAIN("freed"), rd(self->tr, "snapshot"));
	ASSERT_FALSE(__uks_trace_snapshot_allocated(self->tr));
	/* Freed, its memory is given back: three pages per CPU remain. */
	ASSERT_EQ(3u, __uks_trace_rb_nr_pages(self->tr->snapshot, 0));
}

TEST_F(snap, per_cpu_files)
{
	char other[64];
	int ocpu = self->cpu ? 0 : 1;

	snprintf(other, sizeof(other), "per_cpu/cpu%d/snapshot", ocpu);
	ASSERT_EQ(-EINVAL, wrt(self->tr, self->path, "0"));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "mine"));
	/* echo 1 per CPU allocates the whole spare and swaps that CPU only. */
	ASSERT_EQ(0, wrt(self->tr, self->path, "1"));
	ASSERT_TRUE(__uks_trace_snapshot_allocated(self->tr));
	ASSERT_EQ(1, count(rd(self->tr, self->path), "mine"));
	ASSERT_EQ(1, count(rd(self->tr, "snapshot"), "mine"));
	if (uks_nr_cpu_ids() > 1) {
		ASSERT_STREQ(HELP_CPU("allocated"), rd(self->tr, other));
		/* Clearing another CPU leaves this one's. */
		ASSERT_EQ(0, wrt(self->tr, other, "2"));
		ASSERT_EQ(1, count(rd(self->tr, self->path), "mine"));
	}
	ASSERT_EQ(0, wrt(self->tr, self->path, "2"));
	ASSERT_STREQ(HELP_CPU("allocated"), rd(self->tr, self->path));
	ASSERT_EQ(-EINVAL, wrt(self->tr, self->path, "0"));
	ASSERT_TRUE(__uks_trace_snapshot_allocated(self->tr));
}

TEST_F(snap, garbage_writes_get_the_kernels_errnos)
{
	static const struct { const char *text; int err; } cases[] = {
		{ "\n", -EINVAL }, { "x", -EINVAL }, { "1x", -EINVAL },
		{ " 1", -EINVAL }, { "-1", -EINVAL }, { "0x1", -EINVAL }, { "1\n\n", -EINVAL },
		{ "+", -EINVAL }, { "1 ", -EINVAL },
		{ "99999999999999999999999", -ERANGE },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		EXPECT_EQ(cases[i].err, wrt(self->tr, "snapshot", cases[i].text));
		EXPECT_EQ(cases[i].err, wrt(self->tr, self->path, cases[i].text));
	}
	EXPECT_EQ(-EINVAL, write_nothing(self->tr, "snapshot"));
	ASSERT_FALSE(__uks_trace_snapshot_allocated(self->tr));
	/* What kstrtoul() takes: '+', leading zeros, one newline. */
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "+01\n"));
	ASSERT_TRUE(__uks_trace_snapshot_allocated(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "00\n"));
	ASSERT_FALSE(__uks_trace_snapshot_allocated(self->tr));
}

TEST_F(snap, take_without_a_spare_writes_the_kernels_lines_and_stops)
{
	ASSERT_EQ(-ENODEV, __uks_trace_snapshot_take(self->tr));
	rd(self->tr, "trace");
	ASSERT_EQ(1, count(out, ": tracing_snapshot_instance_cond: *** SNAPSHOT NOT ALLOCATED ***\n"));
	ASSERT_EQ(1, count(out, ": tracing_snapshot_instance_cond: *** stopping trace here!   ***\n"));
	ASSERT_STREQ("0\n", rd(self->tr, "tracing_on"));
}

TEST_F(snap, take_swaps_like_echo_1)
{
	ASSERT_EQ(0, __uks_trace_snapshot_alloc(self->tr));
	for (int i = 1; i <= 10; i++) {
		char line[32];

		snprintf(line, sizeof(line), "hello >%d<", i);
		ASSERT_EQ(0, wrt(self->tr, "trace_marker", line));
		ASSERT_EQ(0, __uks_trace_snapshot_take(self->tr));
	}
	/* trigger-trace-marker-snapshot.tc: odd lines live, even in the snapshot */
	rd(self->tr, "trace");
	ASSERT_EQ(2, count(out, ">1<") + count(out, ">9<"));
	ASSERT_EQ(0, count(out, ">2<") + count(out, ">10<"));
	rd(self->tr, "snapshot");
	ASSERT_EQ(2, count(out, ">2<") + count(out, ">10<"));
	ASSERT_EQ(0, count(out, ">1<") + count(out, ">9<"));
}

TEST_HARNESS_MAIN
