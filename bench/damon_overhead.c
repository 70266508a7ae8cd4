// SPDX-License-Identifier: MIT
/*
 * bench/damon_overhead: the CPU a DAMON monitor thread costs, with the
 * issue's attrs (5 ms sampling, 100 ms aggregation, 1 s update, 10..1000
 * regions), on a real process, against the kernel's own kdamond in the
 * same run where the running kernel has DAMON.
 *
 * The workload is a child of this program: 256 MiB of anonymous memory in
 * 16 mappings, a 32 MiB hot set it writes continuously and a cold rest it
 * touched once; run twice, in 4 KiB pages and in huge pages.  Then, not
 * a target, the same child idle (it writes nothing after its first
 * touch): what watching a quiet process costs.  The vaddr
 * primitives' clear_refs and smaps walks cost what the process's page
 * tables hold: 65536 entries in small pages, 128 in huge ones.  uks
 * monitors it with its default primitive (vaddr-sd where the kernel has
 * soft-dirty bits, else vaddr-refs); the monitor thread's CPU time comes
 * from its thread CPU clock.  The kernel peer, in both runs, is
 * DAMON's sysfs interface (/sys/kernel/mm/damon/admin) with the same
 * attrs on the operations set the kernel has (vaddr on the child where
 * built in, else paddr: all of physical memory), its CPU from
 * /proc/KDAMOND/stat.  The kernel's published figures (0.9-3.7%, mean
 * 2.7%, on a server) are printed for reference, not measured here.
 * bench/vduse_vm.sh also runs this program in the tests/vm guest
 * (Debian's 6.12: soft-dirty bits, DAMON_VADDR), where both sides exist.
 *
 * Then the size independence of the core: the monitor thread's CPU per
 * aggregation on synthetic targets of 1 GiB and of 1 TiB (a heap with a
 * hot eighth, libraries, a stack; the same shape at both sizes), the same
 * attrs, both monitored at once by their own threads so that noise on the
 * box hits both alike; five rounds, medians.
 *
 * Targets: monitor CPU <= 3% of one CPU; CPU per aggregation of the
 * 1 TiB target within 10% of the 1 GiB one.
 *
 * Usage: damon_overhead [SECONDS]   (default 10 per configuration)
 */
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon.h>

#include "kdamond_sysfs.h"

#define MB		(1UL << 20)
#define NR_MAPS		16
#define MAP_SZ		(16 * MB)
#define HOT_SZ		(32 * MB)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * @huge: MADV_HUGEPAGE, so the page walks of the vaddr primitives see 2 MiB
 * entries; @idle: the child writes nothing after its first touch.
 */
static pid_t spawn_workload(bool huge, bool idle)
{
	char *maps[NR_MAPS];
	pid_t pid;

	for (int i = 0; i < NR_MAPS; i++) {
		maps[i] = mmap(NULL, MAP_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			       -1, 0);
		if (maps[i] == MAP_FAILED)
			return -1;
		madvise(maps[i], MAP_SZ, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
		memset(maps[i], 1, MAP_SZ);
	}
	pid = fork();
	if (pid != 0) {
		for (int i = 0; i < NR_MAPS; i++)
			munmap(maps[i], MAP_SZ);
		return pid;
	}
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	while (idle)
		pause();
	for (unsigned char v = 0;; v++)		/* the hot set: the first two mappings */
		for (unsigned long o = 0; o < HOT_SZ; o += 4096)
			maps[o / MAP_SZ][o % MAP_SZ] = (char)v;
}

/* CPU seconds of thread @tid of this process (its CPU clock). */
static double thread_cpu_s(pid_t tid)
{
	clockid_t clk = (clockid_t)(((unsigned int)~tid << 3) | 6);	/* per-thread, sched */
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double uks_monitor(pid_t child, double seconds, const char **prim)
{
	struct uks_damon_ctx *ctx;
	unsigned long id = (unsigned long)child;
	double c0, c1, t0, t1;
	pid_t tid;

	if (uks_damon_ctx_create(&ctx))
		return -1;
	if (uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000) ||
	    uks_damon_set_targets(ctx, &id, 1) || uks_damon_start(&ctx, 1)) {
		uks_damon_ctx_destroy(ctx);
		return -1;
	}
	*prim = uks_damon_primitive_name(ctx);
	usleep(200000);		/* past start-up: the first regions and mappings */
	tid = uks_damon_kdamond_pid(ctx);
	t0 = now_s();
	c0 = thread_cpu_s(tid);
	usleep((useconds_t)(seconds * 1e6));
	c1 = thread_cpu_s(tid);
	t1 = now_s();
	uks_damon_stop(&ctx, 1);
	uks_damon_ctx_destroy(ctx);
	if (c0 < 0 || c1 < 0)
		return -1;
	return 100.0 * (c1 - c0) / (t1 - t0);
}

/* The kernel's kdamond with the same attrs; -1 if the kernel cannot. */
static double kernel_monitor(pid_t child, double seconds, char *ops, size_t len)
{
	static const unsigned long attrs[5] = { 5000, 100000, 1000000, 10, 1000 };
	long kpid = kdamond_on(child, attrs, 0, ops, len);
	double c0, c1, t0, t1;

	if (kpid <= 0)
		return -1;
	t0 = now_s();
	c0 = kd_proc_cpu_s((pid_t)kpid);
	usleep((useconds_t)(seconds * 1e6));
	c1 = kd_proc_cpu_s((pid_t)kpid);
	t1 = now_s();
	kdamond_off();
	if (c0 < 0 || c1 < 0)
		return -1;
	return 100.0 * (c1 - c0) / (t1 - t0);
}

struct aggr_count {
	unsigned long n;
	unsigned long regions;	/* summed over aggregations */
};

static int add_regions(struct uks_damon_target *t, void *arg)
{
	*(unsigned long *)arg += uks_damon_target_nr_regions(t);
	return 0;
}

static int count_aggregation(struct uks_damon_ctx *ctx)
{
	struct aggr_count *cnt = uks_damon_callback_private(ctx);
	unsigned long regions = 0;

	uks_damon_for_each_target(ctx, add_regions, &regions);
	__atomic_add_fetch(&cnt->regions, regions, __ATOMIC_RELAXED);
	__atomic_add_fetch(&cnt->n, 1, __ATOMIC_RELAXED);
	return 0;
}

/*
 * One synthetic space: a heap with a hot eighth, a library and a stack,
 * laid out in units of heap/1024.  The two sizes get the same shape, so
 * that size is the only thing that differs between them: DAMON's rules
 * are relative (size limit = total / min_nr_regions, splits at tenths,
 * sampling addresses drawn as fractions of a region), and with the same
 * seed both spaces see the same sequence of splits and samples.
 */
static struct uks_damon_ctx *synth_ctx(unsigned long heap, struct aggr_count *cnt,
				       struct uks_damon_callback *cb, struct uks_damon_synth **spp)
{
	const unsigned long u = heap / 1024;
	struct uks_damon_synth *sp;
	struct uks_damon_ctx *ctx;

	if (uks_damon_synth_create(&sp))
		return NULL;
	uks_damon_synth_add_mapping(sp, 4096 * u, 4096 * u + heap);
	uks_damon_synth_add_mapping(sp, 100000 * u, 100064 * u);	/* libraries */
	uks_damon_synth_add_mapping(sp, 120000 * u, 120008 * u);	/* stack */
	uks_damon_synth_add_phase(sp, 1000);
	uks_damon_synth_add_access(sp, 4096 * u + heap / 2, 4096 * u + heap / 2 + heap / 8, 800);
	cb->priv = cnt;
	cb->after_aggregation = count_aggregation;
	if (uks_damon_ctx_create(&ctx)) {
		uks_damon_synth_destroy(sp);
		return NULL;
	}
	uks_damon_set_seed(ctx, 42);
	uks_damon_set_callback(ctx, cb);
	if (uks_damon_set_primitive(ctx, "synthetic") ||
	    uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000) ||
	    uks_damon_add_target(ctx, 1, sp, NULL)) {
		uks_damon_ctx_destroy(ctx);
		uks_damon_synth_destroy(sp);
		return NULL;
	}
	*spp = sp;
	return ctx;
}

struct synth_sample {
	double us_per_aggr;
	double regions;		/* mean per aggregation */
};

/*
 * Monitor CPU per aggregation of a 1 GiB (@out[0]) and a 1 TiB (@out[1])
 * synthetic space, monitored at the same time by two monitor threads, so
 * that whatever else runs on the box hits both alike.
 * Return: 0, or -1 if monitoring failed.
 */
static int synth_pair(double seconds, struct synth_sample out[2])
{
	const unsigned long heap[2] = { 1UL << 30, 1UL << 40 };
	struct uks_damon_callback cb[2] = { 0 };
	struct aggr_count cnt[2] = { 0 };
	struct uks_damon_synth *sp[2] = { 0 };
	struct uks_damon_ctx *ctx[2] = { 0 };
	unsigned long n0[2], r0[2];
	double c0[2];
	pid_t tid[2];
	int ret = -1;

	for (int i = 0; i < 2; i++)
		if (!(ctx[i] = synth_ctx(heap[i], &cnt[i], &cb[i], &sp[i])))
			goto out;
	if (uks_damon_start(ctx, 2))
		goto out;
	for (int i = 0; i < 2; i++) {
		cpu_set_t one;

		/*
		 * Both on one CPU: the two vCPUs of a VM differ in what a
		 * wakeup costs (timer interrupts, the host), and the spread
		 * between them would show up as a difference of sizes.
		 */
		CPU_ZERO(&one);
		CPU_SET(0, &one);
		tid[i] = uks_damon_kdamond_pid(ctx[i]);
		sched_setaffinity(tid[i], sizeof(one), &one);
	}
	usleep(1000000);	/* regions adapted: the steady state */
	for (int i = 0; i < 2; i++) {
		n0[i] = __atomic_load_n(&cnt[i].n, __ATOMIC_RELAXED);
		r0[i] = __atomic_load_n(&cnt[i].regions, __ATOMIC_RELAXED);
		c0[i] = thread_cpu_s(tid[i]);
	}
	usleep((useconds_t)(seconds * 1e6));
	ret = 0;
	for (int i = 0; i < 2; i++) {
		double c1 = thread_cpu_s(tid[i]);
		unsigned long n = __atomic_load_n(&cnt[i].n, __ATOMIC_RELAXED) - n0[i];
		unsigned long r = __atomic_load_n(&cnt[i].regions, __ATOMIC_RELAXED) - r0[i];

		if (c0[i] < 0 || c1 < 0 || !n) {
			ret = -1;
			continue;
		}
		out[i].us_per_aggr = (c1 - c0[i]) * 1e6 / (double)n;
		out[i].regions = (double)r / (double)n;
	}
	uks_damon_stop(ctx, 2);
out:
	for (int i = 0; i < 2; i++) {
		if (ctx[i])
			uks_damon_ctx_destroy(ctx[i]);
		if (sp[i])
			uks_damon_synth_destroy(sp[i]);
	}
	return ret;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* kB of the child's memory in huge pages (AnonHugePages of smaps_rollup); -1 unknown. */
static long huge_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

/*
 * One workload, monitored by uks and then by the kernel.
 * Return: uks's monitor CPU in % of a CPU, -1 if it could not monitor.
 */
static double measure_workload(bool huge, bool idle, double seconds, const char **prim)
{
	char ops[16] = "";
	double uks, kern = -1;
	long hkb;
	pid_t child = spawn_workload(huge, idle);

	if (child < 0) {
		perror("damon_overhead: workload");
		return -1;
	}
	usleep(200000);
	hkb = huge_kb(child);
	uks = uks_monitor(child, seconds, prim);
	kern = kernel_monitor(child, seconds, ops, sizeof(ops));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);

	printf("workload: 256 MiB in %d mappings, %s, %s (%ld MiB in huge pages)\n", NR_MAPS,
	       idle ? "touched once, then idle" : "32 MiB written continuously",
	       huge ? "MADV_HUGEPAGE" : "MADV_NOHUGEPAGE", hkb < 0 ? 0 : hkb / 1024);
	printf("  %-34s %8s\n", "monitor", "% of a CPU");
	if (uks < 0) {
		printf("  uks (%s): failed to monitor the workload\n", *prim);
		return -1;
	}
	printf("  %-34s %8.2f\n", "uks kdamond", uks);
	if (kern >= 0)
		printf("  %-34s %8.2f   uks/kernel %.2fx\n",
		       !strcmp(ops, "vaddr") ? "kernel kdamond (vaddr, same child)" :
					       "kernel kdamond (paddr, all RAM)", kern,
		       kern > 0 ? uks / kern : 0.0);
	else
		printf("  kernel kdamond: not available (no DAMON sysfs, busy, or not root)\n");
	printf("  kernel's published figures: 0.9-3.7%%, mean 2.7%% (reference, not measured here)\n");
	return uks;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	const char *prim = "?", *prim_huge = "?";
	double uks, uks_huge;

	if (seconds <= 0) {
		fprintf(stderr, "usage: %s [SECONDS]\n", argv[0]);
		return 2;
	}
	printf("DAMON monitor CPU, attrs 5 ms / 100 ms / 1 s / 10..1000 regions, %.0f s each\n",
	       seconds);
	uks = measure_workload(false, false, seconds, &prim);
	uks_huge = measure_workload(true, false, seconds, &prim_huge);
	if (uks < 0 || uks_huge < 0)
		return 1;
	/* not a target: what a process that writes nothing costs to watch */
	if (measure_workload(false, true, seconds, &prim) < 0)
		return 1;

	enum { ROUNDS = 5 };
	double small[ROUNDS], big[ROUNDS], ratio[ROUNDS], small_regions[ROUNDS], big_regions[ROUNDS];

	for (int i = 0; i < ROUNDS; i++) {
		struct synth_sample pair[2];

		if (synth_pair(seconds / 2, pair)) {
			printf("synthetic: monitoring failed\n");
			return 1;
		}
		small[i] = pair[0].us_per_aggr;
		big[i] = pair[1].us_per_aggr;
		ratio[i] = big[i] / small[i];
		small_regions[i] = pair[0].regions;
		big_regions[i] = pair[1].regions;
	}
	qsort(small, ROUNDS, sizeof(double), cmp_double);
	qsort(big, ROUNDS, sizeof(double), cmp_double);
	qsort(ratio, ROUNDS, sizeof(double), cmp_double);
	qsort(small_regions, ROUNDS, sizeof(double), cmp_double);
	qsort(big_regions, ROUNDS, sizeof(double), cmp_double);
	printf("target: uks (%s) monitor CPU <= 3%% of one CPU: %.2f%%  %s\n", prim, uks,
	       uks <= 3.0 ? "MET" : "NOT MET");
	printf("target: the same, workload in huge pages (%s): %.2f%%  %s\n", prim_huge,
	       uks_huge, uks_huge <= 3.0 ? "MET" : "NOT MET");
	printf("synthetic spaces of the same shape, both monitored at once, same attrs,\n"
	       "CPU per aggregation (medians of %d rounds):\n"
	       "  1 GiB: %.1f us   1 TiB: %.1f us   per-round ratios %.2f..%.2f\n"
	       "  regions per aggregation: 1 GiB %.1f, 1 TiB %.1f (max_nr_regions 1000)\n",
	       ROUNDS, small[ROUNDS / 2], big[ROUNDS / 2], ratio[0], ratio[ROUNDS - 1],
	       small_regions[ROUNDS / 2], big_regions[ROUNDS / 2]);
	printf("target: CPU per aggregation, 1 TiB within 10%% of 1 GiB: %.2fx  %s\n",
	       ratio[ROUNDS / 2],
	       ratio[ROUNDS / 2] >= 0.9 && ratio[ROUNDS / 2] <= 1.1 ? "MET" : "NOT MET");
	return 0;
}
