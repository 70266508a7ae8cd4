// SPDX-License-Identifier: MIT
/*
 * Sizes a user writes into tracefs files, as the kernel checks them:
 * buffer_size_kb (top level and per_cpu/cpuN) asks for memory the process
 * cannot have -> -ENOMEM before a page is taken, the old size, pages and
 * events stay; saved_cmdlines_size keeps 1..PID_MAX_DEFAULT (-EINVAL) and
 * its old table on -ENOMEM.  "Before a page is taken" is checked on the
 * peak RSS (VmHWM), with a soft RLIMIT_AS a little above the process's
 * size so a request that got past the check fails there instead of
 * taking the machine's memory.
 */
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <string.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/trace.h>

#include "harness.h"
#include "unit/mem_limit.h"
#include "unit/tracefs_io.h"

/* The peak RSS may grow this much for reading and writing the files. */
#define SLACK	(16 * MIB)

FIXTURE(lim) {
	struct uks_trace *tr;
	int cpu;
};

FIXTURE_SETUP(lim)
{
	cpu_set_t set;

	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	/* Every event of a test on one CPU, so per-CPU sizes are predictable. */
	self->cpu = uks_cpu_current() < 0 ? 0 : uks_cpu_current();
	CPU_ZERO(&set);
	CPU_SET(self->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

FIXTURE_TEARDOWN(lim)
{
	uks_trace_destroy(self->tr);
}

static bool has_marker(struct uks_trace *tr, const char *text)
{
	return strstr(rd(tr, "trace"), text) != NULL;
}

TEST_F(lim, huge_buffer_size_fails_and_keeps_the_old_buffer)
{
	struct uks_trace *tr = self->tr;
	char total[32];
	uint64_t hwm;

	ASSERT_EQ(0, wrt(tr, "buffer_size_kb", "64"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "still here"));
	snprintf(total, sizeof(total), "%.31s", rd(tr, "buffer_total_size_kb"));
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 256 * MIB));
	hwm = self_kb("VmHWM");
	/* 95 GiB per CPU: the tester's `echo 100000000 > buffer_size_kb` */
	ASSERT_EQ(-ENOMEM, wrt(tr, "buffer_size_kb", "100000000"));
	ASSERT_LT(self_kb("VmHWM"), hwm + SLACK);
	ASSERT_STREQ("64\n", rd(tr, "buffer_size_kb"));
	ASSERT_STREQ(total, rd(tr, "buffer_total_size_kb"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: still here"));
	/* still recording */
	ASSERT_STREQ("1\n", rd(tr, "tracing_on"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "and this"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: and this"));
	/* past SIZE_MAX in bytes, and past what the ring can index: -ENOMEM too */
	ASSERT_EQ(-ENOMEM, wrt(tr, "buffer_size_kb", "18446744073709551615"));
	ASSERT_EQ(-ENOMEM, wrt(tr, "buffer_size_kb", "17179869184"));
	ASSERT_EQ(-EINVAL, wrt(tr, "buffer_size_kb", "0"));
	ASSERT_EQ(-EINVAL, wrt(tr, "buffer_size_kb", "-1"));
	ASSERT_STREQ("64\n", rd(tr, "buffer_size_kb"));
}

/* Under MemAvailable, over the rlimit: refused before it is allocated. */
TEST_F(lim, buffer_size_past_rlimit_as)
{
	struct uks_trace *tr = self->tr;
	unsigned int nr = uks_nr_cpu_ids();
	char kb[32];
	uint64_t hwm;

	if (proc_kb("/proc/meminfo", "MemAvailable") < 1024 * MIB)
		SKIP(return, "less than 1 GiB available");
	ASSERT_EQ(0, wr(tr, "trace_marker", "kept"));
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 128 * MIB));
	hwm = self_kb("VmHWM");
	snprintf(kb, sizeof(kb), "%llu", (unsigned long long)(512 * 1024 / nr));
	ASSERT_EQ(-ENOMEM, wrt(tr, "buffer_size_kb", kb));
	ASSERT_LT(self_kb("VmHWM"), hwm + SLACK);
	ASSERT_STREQ("1408\n", rd(tr, "buffer_size_kb"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: kept"));
}

TEST_F(lim, reasonable_sizes_still_work)
{
	struct uks_trace *tr = self->tr;
	char expect[32];

	ASSERT_EQ(0, wrt(tr, "buffer_size_kb", "4096"));
	ASSERT_STREQ("4096\n", rd(tr, "buffer_size_kb"));
	snprintf(expect, sizeof(expect), "%u\n", 4096 * uks_nr_cpu_ids());
	ASSERT_STREQ(expect, rd(tr, "buffer_total_size_kb"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "in the big one"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: in the big one"));
	ASSERT_EQ(0, wrt(tr, "buffer_size_kb", "1408"));
	ASSERT_STREQ("1408\n", rd(tr, "buffer_size_kb"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "back"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: back"));
}

TEST_F(lim, per_cpu_buffer_size)
{
	struct uks_trace *tr = self->tr;
	unsigned int nr = uks_nr_cpu_ids(), mode = 0;
	char path[64], other[64], expect[32];
	uint64_t hwm;

	snprintf(path, sizeof(path), "per_cpu/cpu%d/buffer_size_kb", self->cpu);
	ASSERT_EQ(UKS_TRACEFS_REG, uks_tracefs_stat(tr, path, &mode));
	ASSERT_EQ(0644, mode);
	ASSERT_STREQ("1408\n", rd(tr, path));
	ASSERT_EQ(0, wr(tr, "trace_marker", "on my cpu"));

	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 256 * MIB));
	hwm = self_kb("VmHWM");
	ASSERT_EQ(-ENOMEM, wrt(tr, path, "100000000"));
	ASSERT_LT(self_kb("VmHWM"), hwm + SLACK);
	ASSERT_STREQ("1408\n", rd(tr, path));
	ASSERT_STREQ("1408\n", rd(tr, "buffer_size_kb"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: on my cpu"));
	ASSERT_EQ(-EINVAL, wrt(tr, path, "0"));

	if (nr > 1) {
		/* Another CPU: only it changes; this CPU's events stay. */
		snprintf(other, sizeof(other), "per_cpu/cpu%d/buffer_size_kb",
			 (self->cpu + 1) % (int)nr);
		ASSERT_EQ(0, wrt(tr, other, "128"));
		ASSERT_STREQ("128\n", rd(tr, other));
		ASSERT_STREQ("1408\n", rd(tr, path));
		ASSERT_STREQ("X\n", rd(tr, "buffer_size_kb"));
		snprintf(expect, sizeof(expect), "%u\n", 1408 * (nr - 1) + 128);
		ASSERT_STREQ(expect, rd(tr, "buffer_total_size_kb"));
		ASSERT_TRUE(has_marker(tr, "tracing_mark_write: on my cpu"));
	}
	/* The top-level file makes them all the same again. */
	ASSERT_EQ(0, wrt(tr, "buffer_size_kb", "256"));
	ASSERT_STREQ("256\n", rd(tr, "buffer_size_kb"));
	ASSERT_STREQ("256\n", rd(tr, path));
	ASSERT_EQ(0, wrt(tr, path, "512"));
	ASSERT_STREQ(nr > 1 ? "X\n" : "512\n", rd(tr, "buffer_size_kb"));
	ASSERT_EQ(0, wr(tr, "trace_marker", "after"));
	ASSERT_TRUE(has_marker(tr, "tracing_mark_write: after"));
}

TEST_F(lim, saved_cmdlines_size_limits)
{
	struct uks_trace *tr = self->tr;

	ASSERT_STREQ("128\n", rd(tr, "saved_cmdlines_size"));
	/* PID_MAX_DEFAULT is the most, 0 is nothing: -EINVAL, as the kernel */
	ASSERT_EQ(-EINVAL, wrt(tr, "saved_cmdlines_size", "0"));
	ASSERT_EQ(-EINVAL, wrt(tr, "saved_cmdlines_size", "32769"));
	ASSERT_EQ(-EINVAL, wrt(tr, "saved_cmdlines_size", "100000000"));
	ASSERT_EQ(-EINVAL, wrt(tr, "saved_cmdlines_size", "18446744073709551616"));
	ASSERT_EQ(-EINVAL, wrt(tr, "saved_cmdlines_size", "lots"));
	ASSERT_STREQ("128\n", rd(tr, "saved_cmdlines_size"));
	ASSERT_EQ(0, wrt(tr, "saved_cmdlines_size", "32768"));
	ASSERT_STREQ("32768\n", rd(tr, "saved_cmdlines_size"));
	ASSERT_EQ(0, wrt(tr, "saved_cmdlines_size", "1"));
	ASSERT_STREQ("1\n", rd(tr, "saved_cmdlines_size"));
}

TEST_F(lim, saved_cmdlines_size_without_memory)
{
	struct uks_trace *tr = self->tr;
	char comm[16] = { 0 }, entry[64];
	struct rlimit rl;
	int ret;

	prctl(PR_GET_NAME, comm);
	snprintf(entry, sizeof(entry), "%d %s\n", (int)syscall(SYS_gettid), comm);
	ASSERT_EQ(0, wr(tr, "trace_marker", "remember me"));
	ASSERT_TRUE(strstr(rd(tr, "saved_cmdlines"), entry) != NULL);
	/* A limit already passed: the 640 KiB table cannot be had. */
	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &rl));
	rl.rlim_cur = self_kb("VmSize") / 2;
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &rl));
	ret = wrt(tr, "saved_cmdlines_size", "32768");
	ASSERT_EQ(0, unlimit(RLIMIT_AS));
	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_STREQ("128\n", rd(tr, "saved_cmdlines_size"));
	ASSERT_TRUE(strstr(rd(tr, "saved_cmdlines"), entry) != NULL);
}

/* A set of pids, as the kernel's bitmap: appending the same one keeps one. */
TEST_F(lim, set_event_pid_is_a_set)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wrt(tr, "set_event_pid", "7 3"));
	for (int i = 0; i < 2000; i++)
		ASSERT_EQ(0, wr(tr, "set_event_pid", "3 7 7"));
	ASSERT_STREQ("3\n7\n", rd(tr, "set_event_pid"));
	ASSERT_EQ(0, wr(tr, "set_event_pid", "5"));
	ASSERT_STREQ("3\n5\n7\n", rd(tr, "set_event_pid"));
}

TEST_HARNESS_MAIN
