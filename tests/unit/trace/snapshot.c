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

/* uks_test:tick copies 16 bytes of its comm: give it 16. */
static void tick(unsigned int n, const char *name)
{
	char comm[16] = { 0 };

	strncpy(comm, name, sizeof(comm) - 1);
	uks_trace_uks_test_tick(n, comm);
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

/* An ftrace:print record as trace_marker writes it. */
struct print_rec {
	struct uks_trace_entry ent;
	unsigned long ip;
	char buf[48];
};

/*
 * The writer the kernel never has: preempted (or interrupted) between
 * reserve and commit while the buffers are swapped.  Its event lands whole
 * in the ring it reserved in, now the snapshot; the live buffer goes on.
 */
TEST_F(snap, a_writer_between_reserve_and_commit_finishes_in_the_ring_it_reserved_in)
{
	struct print_rec *rec;
	unsigned int cpu;

	ASSERT_EQ(0, __uks_trace_snapshot_alloc(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "before"));
	rec = __uks_trace_rb_reserve(self->tr->rb, sizeof(*rec), &cpu);
	ASSERT_NONNULL(rec);
	__uks_trace_fill_entry(self->tr, &rec->ent, UKS_TRACE_FTRACE_PRINT_ID);
	rec->ip = 0;
	strcpy(rec->buf, "held across the swaps\n");
	/* Swapped by the trigger's path, then by the file, then again. */
	ASSERT_EQ(0, __uks_trace_snapshot_take(self->tr));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "after one"));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "after two"));
	ASSERT_EQ(0, __uks_trace_snapshot_take(self->tr));
	/* Readers stop at the uncommitted event: what follows it waits. */
	ASSERT_EQ(1, count(rd(self->tr, "snapshot"), "before"));
	ASSERT_EQ(0, count(out, "after"));
	__uks_trace_rb_commit(self->tr->rb, rec);
	rd(self->tr, "snapshot");
	ASSERT_EQ(1, count(out, "tracing_mark_write: before\n"));
	ASSERT_EQ(1, count(out, "tracing_mark_write: held across the swaps\n"));
	ASSERT_EQ(1, count(out, "tracing_mark_write: after two\n"));
	ASSERT_EQ(1, count(out, "# entries-in-buffer/entries-written: 3/3"));
	rd(self->tr, "trace");
	ASSERT_EQ(1, count(out, "tracing_mark_write: after one\n"));
	ASSERT_EQ(1, count(out, "# entries-in-buffer/entries-written: 1/1"));
}

/* ------------------------------------------------------- tracing_cpumask */

static const char *hex(unsigned long *map, unsigned int nbits)
{
	static char buf[1100];

	return bitmap_print_hex(map, nbits, buf, sizeof(buf)) < 0 ? "<ENOSPC>" : buf;
}

TEST(cpumask_prints_as_the_kernels_percent_pb)
{
	unsigned long m[BITS_TO_LONGS(4096)] = { 0 };

	bitmap_set(m, 0, 2);
	ASSERT_STREQ("3", hex(m, 2));
	ASSERT_STREQ("03", hex(m, 8));
	ASSERT_STREQ("00000003", hex(m, 32));
	bitmap_set(m, 0, 36);
	ASSERT_STREQ("f,ffffffff", hex(m, 36));
	ASSERT_STREQ("0000000f,ffffffff", hex(m, 64));
	bitmap_zero(m, 4096);
	set_bit(64, m);
	ASSERT_STREQ("1,00000000,00000000", hex(m, 65));
	ASSERT_STREQ("0", hex(m, 1));
}

/* Each answer was read from a Linux tracing_cpumask with nr_cpu_ids = 2. */
TEST(cpumask_parses_as_the_kernels_bitmap_parse)
{
	static const struct { const char *text; int err; unsigned long mask; } two[] = {
		{ "3", 0, 3 }, { "  3", 0, 3 }, { "3 ", 0, 3 }, { "00000003", 0, 3 },
		{ "\n", 0, 0 }, { "2", 0, 2 }, { "3\n4", 0, 3 }, { "1,", 0, 1 },
		{ "  ,  1", 0, 1 }, { "1\n\n", 0, 1 }, { "\n1", 0, 0 }, { ",,,", 0, 0 },
		{ " ", 0, 0 }, { "4", -EOVERFLOW, 0 }, { "xyz", -EINVAL, 0 }, { "1,0", -EOVERFLOW, 0 },
		{ "000000003", -EOVERFLOW, 0 }, { "0,00000003", -EOVERFLOW, 0 }, { "0x3", -EINVAL, 0 },
		{ "g", -EINVAL, 0 }, { "-1", -EINVAL, 0 }, { "1 1", -EOVERFLOW, 0 },
		{ "ffffffff", -EOVERFLOW, 0 }, { "100000000", -EOVERFLOW, 0 },
	};
	unsigned long m[BITS_TO_LONGS(4096)];

	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++) {
		m[0] = 0x5a;
		EXPECT_EQ(two[i].err, bitmap_parse_hex(two[i].text, strlen(two[i].text), m, 2));
		if (!two[i].err)
			EXPECT_EQ(two[i].mask, m[0]);
	}
	/* A NUL ends the text as a newline does. */
	ASSERT_EQ(0, bitmap_parse_hex("3\0" "4", 3, m, 2));
	ASSERT_EQ(3ul, m[0]);
	/* 36 bits: two chunks, the top one four bits wide. */
	ASSERT_EQ(0, bitmap_parse_hex("f,ffffffff\n", 11, m, 36));
	ASSERT_STREQ("f,ffffffff", hex(m, 36));
	ASSERT_EQ(-EOVERFLOW, bitmap_parse_hex("1f,ffffffff", 11, m, 36));
	ASSERT_EQ(0, bitmap_parse_hex("ffffffff", 8, m, 36));
	ASSERT_STREQ("0,ffffffff", hex(m, 36));
}

TEST_F(snap, cpumask_file_format_and_garbage)
{
	char all[1200];

	_Static_assert(sizeof(all) > 1100 + 1, "mask and newline");
	unsigned long m[BITS_TO_LONGS(4096)] = { 0 };
	unsigned int nr = uks_nr_cpu_ids();

	bitmap_set(m, 0, nr);
	snprintf(all, sizeof(all), "%s\n", hex(m, nr));
	ASSERT_STREQ(all, rd(self->tr, "tracing_cpumask"));
	EXPECT_EQ(-EINVAL, wrt(self->tr, "tracing_cpumask", "xyz"));
	EXPECT_EQ(-EINVAL, wrt(self->tr, "tracing_cpumask", "0x1"));
	EXPECT_EQ(-EINVAL, write_nothing(self->tr, "tracing_cpumask"));
	EXPECT_EQ(-EOVERFLOW, wrt(self->tr, "tracing_cpumask", "123456789"));
	EXPECT_EQ(-EOVERFLOW, wrt(self->tr, "tracing_cpumask",
				  "1,00000000,00000000,00000000,00000000,00000000,00000000,"
				  "00000000,00000000,00000000,00000000,00000000,00000000,"
				  "00000000,00000000,00000000,00000000,00000000,00000000"));
	ASSERT_STREQ(all, rd(self->tr, "tracing_cpumask"));	/* unchanged */
	ASSERT_EQ(0, wrt(self->tr, "tracing_cpumask", "1\n"));
	bitmap_zero(m, nr);
	set_bit(0, m);
	snprintf(all, sizeof(all), "%s\n", hex(m, nr));
	ASSERT_STREQ(all, rd(self->tr, "tracing_cpumask"));
}

TEST_F(snap, a_cpu_out_of_the_mask_records_nothing_and_counts_nothing)
{
	struct uks_trace *other;
	char path[64], orig[1200];

	rd(self->tr, "tracing_cpumask");
	ASSERT_LT(strlen(out), sizeof(orig));
	memcpy(orig, out, strlen(out) + 1);
	ASSERT_EQ(0, uks_trace_create("snap_other", &other));
	ASSERT_EQ(0, wrt(self->tr, "events/uks_test/tick/enable", "1"));
	ASSERT_EQ(0, wrt(other, "events/uks_test/tick/enable", "1"));
	ASSERT_EQ(0, wrt(self->tr, "tracing_cpumask", "0"));
	tick(1, "masked");
	/* trace_marker is refused too, as the kernel's (EBADF: not recorded). */
	ASSERT_EQ(-EBADF, wrt(self->tr, "trace_marker", "masked"));
	ASSERT_EQ(0, count(rd(self->tr, "trace"), "masked"));
	snprintf(path, sizeof(path), "per_cpu/cpu%d/stats", self->cpu);
	rd(self->tr, path);
	ASSERT_EQ(1, count(out, "entries: 0\n"));
	ASSERT_EQ(1, count(out, "\noverrun: 0\n"));
	ASSERT_EQ(1, count(out, "dropped events: 0\n"));
	/* The mask is the instance's: another one records. */
	ASSERT_EQ(1, count(rd(other, "trace"), "masked"));
	uks_trace_destroy(other);
	/* snapshot1.tc: a swap with every CPU masked does not lose them. */
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(0, wrt(self->tr, "tracing_cpumask", orig));
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(0, wrt(self->tr, "trace_marker", "test input 1"));
	ASSERT_EQ(1, count(rd(self->tr, "trace"), "test input 1"));
}

/* --------------------------------------------- swaps racing the writers */

#define WRITERS		2
#define NESTED		~0u	/* the number a signal handler's events carry */

struct race {
	struct uks_trace *tr;
	int stop;
	int nested_takes;
};

static struct race *the_race;


/* A signal handler nested in a writer: a hit and a swap, both lockless. */
static void on_usr1(int sig)
{
	(void)sig;
	tick(NESTED, "nested");
	if (!__uks_trace_snapshot_take(the_race->tr))
		__atomic_add_fetch(&the_race->nested_takes, 1, __ATOMIC_RELAXED);
}

static void *writer(void *arg)
{
	char comm[16] = { 0 };

	snprintf(comm, sizeof(comm), "w%ld", (long)arg);
	for (unsigned int n = 0; n < NESTED && !__atomic_load_n(&the_race->stop, __ATOMIC_RELAXED);
	     n++)
		uks_trace_uks_test_tick(n, comm);
	return NULL;
}

/*
 * Every event of @text is whole (its writer's name, a number it wrote)
 * and each writer's numbers rise: events merge by timestamp and a writer
 * stamps each after reserving the one before.  Returns the events seen.
 */
static int check_events(const char *text, int *bad)
{
	unsigned int last[WRITERS];
	int seen = 0;

	memset(last, 0xff, sizeof(last));
	for (const char *p = strstr(text, "tick: n="); p; p = strstr(p + 1, "tick: n=")) {
		unsigned int n, w;
		char comm[17];

		if (sscanf(p, "tick: n=%u comm=%16s", &n, comm) != 2) {
			(*bad)++;
			continue;
		}
		seen++;
		if (!strcmp(comm, "nested") && n == NESTED)
			continue;
		if (!strcmp(comm, "after"))
			continue;
		if (sscanf(comm, "w%u", &w) != 1 || w >= WRITERS || n == NESTED ||
		    (last[w] != ~0u && n <= last[w]))
			(*bad)++;
		else
			last[w] = n;
	}
	return seen;
}

TEST_F(snap, swaps_frees_and_resizes_racing_lockless_writers_lose_no_integrity)
{
	static struct race race;
	pthread_t th[WRITERS];
	int bad = 0, ops = 0, seen = 0;
	cpu_set_t set;

	/* Writers on every CPU: undo the fixture's pinning. */
	CPU_ZERO(&set);
	for (int i = 0; i < CPU_SETSIZE; i++)
		CPU_SET(i, &set);
	sched_setaffinity(0, sizeof(set), &set);
	race.tr = self->tr;
	the_race = &race;
	signal(SIGUSR1, on_usr1);
	ASSERT_EQ(0, wrt(self->tr, "buffer_size_kb", "64"));
	ASSERT_EQ(0, wrt(self->tr, "events/uks_test/tick/enable", "1"));
	for (long i = 0; i < WRITERS; i++)
		ASSERT_EQ(0, pthread_create(&th[i], NULL, writer, (void *)i));
	/* A fixed number of operations, whatever the writers' pace. */
	for (int round = 0; round < 600; round++) {
		switch (round % 12) {
		case 0:
			/* A take while freed turned it off, as the kernel's does. */
			ASSERT_EQ(0, wrt(self->tr, "tracing_on", "1"));
			/* fall through */
		case 4: case 6:
			ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
			break;
		case 1: case 9:
			__uks_trace_snapshot_take(self->tr);	/* may be -EBUSY or -ENODEV */
			break;
		case 2: case 7:
			rd(self->tr, "snapshot");
			seen += check_events(out, &bad);
			break;
		case 3:
			ASSERT_EQ(0, wrt(self->tr, self->path, "1"));
			break;
		case 5:
			ASSERT_EQ(0, wrt(self->tr, "snapshot", "2"));
			break;
		case 8:
			for (int i = 0; i < WRITERS; i++)
				pthread_kill(th[i], SIGUSR1);
			break;
		case 10:
			if (round % 24 == 10)
				ASSERT_EQ(0, wrt(self->tr, "snapshot", "0"));
			else
				ASSERT_EQ(0, wrt(self->tr, "buffer_size_kb", round % 36 == 22 ? "48" : "64"));
			break;
		case 11:
			rd(self->tr, "trace");
			seen += check_events(out, &bad);
			break;
		}
		ops++;
	}
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	rd(self->tr, "snapshot");
	seen += check_events(out, &bad);
	rd(self->tr, "trace");
	seen += check_events(out, &bad);
	ASSERT_EQ(0, bad);
	ASSERT_EQ(600, ops);
	printf("# %d events checked, %d swaps from signal handlers\n", seen, race.nested_takes);
	/* Afterwards every CPU still records, in the buffer the swap made live. */
	ASSERT_EQ(0, wrt(self->tr, "tracing_on", "1"));
	ASSERT_EQ(0, wrt(self->tr, "trace", ""));
	for (int i = 0; i < 10; i++)
		tick(i, "after");
	ASSERT_EQ(0, wrt(self->tr, "snapshot", "1"));
	ASSERT_EQ(10, count(rd(self->tr, "snapshot"), "comm=after\n"));
	ASSERT_EQ(0, count(rd(self->tr, "trace"), "comm=after\n"));
	signal(SIGUSR1, SIG_DFL);
}

TEST_HARNESS_MAIN
