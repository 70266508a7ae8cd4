// SPDX-License-Identifier: MIT
/*
 * bench/damon_self_overhead: how much the "self" primitive (the in-process
 * agent's: sampled pages taken away with userfaultfd) slows the monitored
 * program down.  Target: <= 5% with DAMON's usual attributes.
 *
 * The workload is one thread doing a fixed number of 8-byte read-modify-
 * writes on a 128 MiB buffer, 80% of them in a hot 16 MiB part and 20%
 * anywhere (xorshift addresses), with a checksum so nothing is optimised
 * out.  It runs alternately without and with a self context on this very
 * process (attrs 5 ms / 100 ms / 1 s / 10 / 1000: what damo and the
 * kernel's figures use), ROUNDS times each; the medians give the ratio.
 * The checksum must be the same every run (no data changed by the
 * monitor), and the monitor thread's CPU time is printed, with the
 * program thread's user, system and off-CPU time in each.  Last, the
 * floor: what one userfaultfd round trip costs on this machine beyond a
 * plain fault, and what one TLB shootdown costs the running program, and what the
 * last run's faults and flushes alone cost at those prices.
 *
 * The peer, where the running kernel has DAMON's sysfs interface with
 * vaddr and no kdamond is set up (Debian's 6.12 in the tests/vm guest;
 * bench/vduse_vm.sh runs this program there): the same workload, in the
 * same rounds, under the kernel's own DAMON on this process with the same
 * attrs, and its slowdown beside self's.  -K leaves it out.
 *
 *	damon_self_overhead [-s|-H] [-K] [-n MILLION_OPS] [-r ROUNDS] [-a "ATTRS"]
 *
 * -s: small pages only (MADV_NOHUGEPAGE); -H: the buffer asks for
 * transparent huge pages (MADV_HUGEPAGE: THP in "always" or "madvise"
 * mode).  The default is -H when the agent takes huge pages whole (2 MiB
 * moves, its default), else -s (UKS_DAMON_SELF_HUGE=0): sampling a huge
 * page 4 KiB at a time splits it, 5x slower than anything worth timing.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon.h>

#include "kdamond_sysfs.h"

#define MB		(1UL << 20)
#define BUF_SZ		(128 * MB)
#define HOT_SZ		(16 * MB)
#define MAX_ROUNDS	15
#define PG		4096UL

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static uint64_t workload(uint64_t *buf, unsigned long ops)
{
	uint64_t x = 88172645463325252ULL, sum = 0;

	for (unsigned long i = 0; i < ops; i++) {
		uint64_t idx;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if ((x & 1023) < 819)	/* 80% */
			idx = (x >> 12) % (HOT_SZ / 8);
		else
			idx = (x >> 12) % (BUF_SZ / 8);
		buf[idx] += i;
		sum += buf[idx];
	}
	return sum;
}

/* CPU seconds of thread @tid of this process. */
static double thread_cpu(pid_t tid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	return kd_stat_cpu_s(path);
}

/*
 * The floor under any fault-based monitor on this machine: one
 * userfaultfd round trip (a page dropped, touched, the fault read by a
 * handler thread and resolved), against the same drop and touch without
 * userfaultfd.  Each fault the self agent causes costs the program at
 * least the difference.  Microseconds per fault, or a negative value.
 */
static int rt_uffd = -1;
static char *rt_page;
static volatile int rt_stop;

static void *rt_handler(void *arg)
{
	struct uffd_msg m;

	(void)arg;
	while (!rt_stop) {
		struct pollfd p = { rt_uffd, POLLIN, 0 };
		struct uffdio_zeropage z = { .range = { (unsigned long)rt_page, PG } };

		if (poll(&p, 1, 100) <= 0 || read(rt_uffd, &m, sizeof(m)) != sizeof(m))
			continue;
		ioctl(rt_uffd, UFFDIO_ZEROPAGE, &z);
	}
	return NULL;
}

static double drop_and_touch_us(char *page, int n)
{
	double t0 = now();

	for (int i = 0; i < n; i++) {
		madvise(page, PG, MADV_DONTNEED);
		(void)*(volatile char *)page;
	}
	return (now() - t0) * 1e6 / n;
}

static double uffd_round_trip_us(double *plain_us)
{
	struct uffdio_api api = { .api = UFFD_API };
	char *plain = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	double us = -1;
	pthread_t th;

	rt_uffd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	rt_page = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct uffdio_register r = { .range = { (unsigned long)rt_page, PG },
				     .mode = UFFDIO_REGISTER_MODE_MISSING };

	if (rt_uffd >= 0 && rt_page != MAP_FAILED && plain != MAP_FAILED &&
	    !ioctl(rt_uffd, UFFDIO_API, &api) && !ioctl(rt_uffd, UFFDIO_REGISTER, &r) &&
	    !pthread_create(&th, NULL, rt_handler, NULL)) {
		us = drop_and_touch_us(rt_page, 2000);
		*plain_us = drop_and_touch_us(plain, 2000);
		rt_stop = 1;
		pthread_join(th, NULL);
	}
	if (rt_uffd >= 0)
		close(rt_uffd);
	munmap(rt_page, PG);
	munmap(plain, PG);
	return us;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * What one TLB shootdown costs a thread that is running: every page the
 * monitor moves, out and back, is flushed from the CPUs running the
 * program.  A helper thread pinned to another CPU drops and refills a page
 * of its own (one flush each), paced at one every 200 us, about the rate
 * of self's takes here, while this thread, pinned too, runs the workload.
 * The control is the same helper writing its page at the same pace
 * without dropping it (no flush), so its wake-ups and its share of the
 * machine cancel out: the workload's time with flushes minus its time
 * with the control, over the flushes sent; the median of five such
 * pairs.  Microseconds per flush, or a negative value (fewer than 2 CPUs,
 * or no difference to measure).
 */
struct sd_helper {
	char *page;
	bool flush;
	volatile int stop;
	volatile unsigned long n;	/* rounds done */
};

static void *sd_helper_run(void *arg)
{
	struct sd_helper *h = arg;
	const struct timespec gap = { 0, 200000 };

	while (!h->stop) {
		if (h->flush)
			madvise(h->page, PG, MADV_DONTNEED);
		*(volatile char *)h->page = 1;
		h->n++;
		nanosleep(&gap, NULL);
	}
	return NULL;
}

/* The workload's seconds for @ops with a helper on @cpu; *@rounds: the helper's. */
static double with_helper(uint64_t *buf, unsigned long ops, struct sd_helper *h, int cpu,
			  unsigned long *rounds)
{
	pthread_attr_t attr;
	cpu_set_t one;
	pthread_t th;
	unsigned long n0;
	double t0, t;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	h->stop = 0;
	h->n = 0;
	if (pthread_create(&th, &attr, sd_helper_run, h)) {
		pthread_attr_destroy(&attr);
		return -1;
	}
	pthread_attr_destroy(&attr);
	while (!h->n)
		sched_yield();
	n0 = h->n;
	t0 = now();
	workload(buf, ops);
	t = now() - t0;
	*rounds = h->n - n0;
	h->stop = 1;
	pthread_join(th, NULL);
	return t;
}

static double shootdown_us(uint64_t *buf, unsigned long ops)
{
	struct sd_helper h = { 0 };
	double per_flush[5], us = -1;
	cpu_set_t old, one;
	int cpu[2], n = 0;

	if (sched_getaffinity(0, sizeof(old), &old))
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &old))
			cpu[n++] = c;
	h.page = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n < 2 || h.page == MAP_FAILED)
		goto out;
	CPU_ZERO(&one);
	CPU_SET(cpu[0], &one);
	sched_setaffinity(0, sizeof(one), &one);
	/* pairs run back to back, so that drift on the box hits both alike */
	for (int pair = 0; pair < 5; pair++) {
		unsigned long control_rounds, flushes;
		double control, flushing;

		h.flush = false;
		control = with_helper(buf, ops, &h, cpu[1], &control_rounds);
		h.flush = true;
		flushing = with_helper(buf, ops, &h, cpu[1], &flushes);
		if (control < 0 || flushing < 0 || !flushes)
			goto out;
		per_flush[pair] = (flushing - control) * 1e6 / (double)flushes;
	}
	qsort(per_flush, 5, sizeof(double), cmp);
	if (per_flush[2] > 0)
		us = per_flush[2];
out:
	sched_setaffinity(0, sizeof(old), &old);
	if (h.page && h.page != MAP_FAILED)
		munmap(h.page, PG);
	return us;
}

/* The calling thread's user and system CPU seconds. */
static void own_cpu(double *user, double *sys)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	*user = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*sys = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

enum { ARM_PLAIN, ARM_SELF, ARM_KERNEL, NR_ARMS };

/* One way of running the workload, over the rounds. */
struct arm {
	bool on;
	long lost;		/* the kernel's: 1 + the round it would not start in */
	double wall[MAX_ROUNDS], user[MAX_ROUNDS], sys[MAX_ROUNDS];
	double mon_cpu, mon_wall;	/* the monitor's CPU seconds, over these */
};

/* The median of @v[0..n); @v keeps its round order. */
static double median(const double *v, unsigned long n)
{
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(double), cmp);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/*
 * Start what watches this process in @which: nothing, a uks self context
 * (*@ctx), or the kernel's DAMON on vaddr (its kdamond's pid in *@kpid).
 * Return: 0, or -1 if it cannot run here.
 */
static int monitor_on(int which, const unsigned long attrs[5], struct uks_damon_ctx **ctx,
		      long *kpid)
{
	unsigned long id = (unsigned long)getpid();
	char ops[16];

	if (which == ARM_KERNEL) {
		*kpid = kdamond_on(getpid(), attrs, 1, ops, sizeof(ops));
		return *kpid > 0 ? 0 : -1;
	}
	if (which == ARM_SELF) {
		if (uks_damon_ctx_create(ctx) || uks_damon_set_primitive(*ctx, "self") ||
		    uks_damon_set_attrs(*ctx, attrs[0], attrs[1], attrs[2], attrs[3], attrs[4]) ||
		    uks_damon_set_targets(*ctx, &id, 1) || uks_damon_start(ctx, 1))
			return -1;
		usleep(300000);	/* past the first regions' setup */
	}
	return 0;
}

static double monitor_cpu(int which, struct uks_damon_ctx *ctx, long kpid)
{
	if (which == ARM_SELF)
		return thread_cpu(uks_damon_kdamond_pid(ctx));
	return which == ARM_KERNEL ? kd_proc_cpu_s((pid_t)kpid) : 0;
}

static void monitor_off(int which, struct uks_damon_ctx **ctx, struct uks_damon_self_stats *st)
{
	if (which == ARM_KERNEL) {
		kdamond_off();
	} else if (which == ARM_SELF) {
		uks_damon_stop(ctx, 1);
		uks_damon_self_stats(st);
		uks_damon_ctx_destroy(*ctx);
	}
}

/*
 * Where the program's extra time goes under self: its own instructions
 * (user: TLB refills after each move, and on a host with shadow page
 * tables the host rebuilding them), the kernel (faults, moves), or off
 * the CPU (waiting for the monitor to serve a fault, or preempted).  Then
 * the floor, its workload a third of the runs'.
 */
static void print_breakdown(const struct arm *a, unsigned long rounds, unsigned long ops,
			    double p, double s, const struct uks_damon_self_stats *st,
			    uint64_t *buf)
{
	double mu[2], ms[2], off[2], v[MAX_ROUNDS];

	for (int i = 0; i < 2; i++) {
		mu[i] = median(a[i].user, rounds);
		ms[i] = median(a[i].sys, rounds);
		for (unsigned long r = 0; r < rounds; r++)
			v[r] = a[i].wall[r] > a[i].user[r] + a[i].sys[r] ?
			       a[i].wall[r] - a[i].user[r] - a[i].sys[r] : 0;
		off[i] = median(v, rounds);
	}
	printf("  program's thread    user %.3f -> %.3f s, system %.3f -> %.3f s, "
	       "off CPU %.3f -> %.3f s (medians)\n", mu[0], mu[1], ms[0], ms[1], off[0], off[1]);
	if (st->taken && mu[1] > mu[0])
		printf("                      %.0f us more of its own instructions per taken page\n",
		       (mu[1] - mu[0]) * 1e6 / (double)st->taken);

	double plain_us = 0, rt_us = uffd_round_trip_us(&plain_us);
	double sd_us = shootdown_us(buf, ops / 3);
	/*
	 * A take flushes the program's CPU; a give-back flushes it only when
	 * the program runs meanwhile (not when it waits in the fault: x86
	 * skips a CPU in lazy TLB mode), so count the takes not faulted on.
	 */
	unsigned long flushes = st->taken + (st->taken > st->faults ? st->taken - st->faults : 0);

	if (rt_us > 0)
		printf("  floor: a userfaultfd round trip costs %.1f us here (a plain fault %.1f us);\n"
		       "         the last run's %lu faults alone cost >= %.1f%% of the plain time\n",
		       rt_us, plain_us, st->faults,
		       100.0 * (double)st->faults * (rt_us - plain_us) / 1e6 / p);
	double share = (double)flushes * sd_us / 1e6 / p;

	/* a price the whole slowdown cannot pay is no floor for this run */
	if (sd_us > 0)
		printf("  %s a TLB shootdown costs the running program %.1f us; the last run's\n"
		       "         %lu (%lu takes, %lu give-backs unasked) alone cost >= %.1f%% "
		       "of the plain time%s\n", rt_us > 0 ? "      " : "floor:",
		       sd_us, flushes, st->taken, flushes - st->taken, 100.0 * share,
		       share > s / p - 1 ? "\n         (more than the whole slowdown: that price does "
					   "not hold for this run, no floor)" : "");
}

int main(int argc, char **argv)
{
	unsigned long ops = 60, rounds = 5, attrs[5] = { 5000, 100000, 1000000, 10, 1000 };
	static struct arm arm[NR_ARMS] = { [ARM_PLAIN].on = true, [ARM_SELF].on = true,
					   [ARM_KERNEL].on = true };
	struct uks_damon_self_stats st = { 0 };
	uint64_t *buf, ref = 0;
	char why[300];
	bool small = getenv("UKS_DAMON_SELF_HUGE") && !strcmp(getenv("UKS_DAMON_SELF_HUGE"), "0");
	int opt;

	while ((opt = getopt(argc, argv, "n:r:a:sHK")) != -1) {
		if (opt == 's' || opt == 'H')
			small = opt == 's';
		else if (opt == 'K')
			arm[ARM_KERNEL].on = false;
		else if (opt == 'n')
			ops = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else if (opt == 'a' && sscanf(optarg, "%lu %lu %lu %lu %lu", &attrs[0], &attrs[1],
					      &attrs[2], &attrs[3], &attrs[4]) == 5)
			;
		else {
			fprintf(stderr, "usage: %s [-s|-H] [-K] [-n MILLION_OPS] [-r ROUNDS] "
				"[-a \"ATTRS\"]\n", argv[0]);
			return 2;
		}
	}
	if (rounds < 1 || rounds > MAX_ROUNDS)
		rounds = 5;
	ops *= 1000000;
	if (uks_damon_primitive_available("self", why, sizeof(why))) {
		printf("damon_self_overhead: SKIP: %s\n", why);
		return 0;
	}
	buf = mmap(NULL, BUF_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	madvise(buf, BUF_SZ, small ? MADV_NOHUGEPAGE : MADV_HUGEPAGE);
	for (unsigned long r = 0; r < rounds; r++) {
		/* rotate the start, so that no arm always follows another */
		for (int k = 0; k < NR_ARMS; k++) {
			int which = (int)((k + r) % NR_ARMS);
			struct arm *a = &arm[which];
			struct uks_damon_ctx *ctx = NULL;
			double t0, t1, c0, u0, s0, u1, s1;
			long kpid = 0;
			uint64_t sum;

			if (!a->on)
				continue;
			memset(buf, 0, BUF_SZ);
			if (monitor_on(which, attrs, &ctx, &kpid)) {
				if (which == ARM_SELF) {
					fprintf(stderr, "cannot start the self context\n");
					return 1;
				}
				a->on = false;	/* the kernel has no DAMON vaddr for us */
				a->lost = (long)r + 1;
				continue;
			}
			c0 = monitor_cpu(which, ctx, kpid);
			own_cpu(&u0, &s0);
			t0 = now();
			sum = workload(buf, ops);
			t1 = now();
			own_cpu(&u1, &s1);
			a->mon_cpu += monitor_cpu(which, ctx, kpid) - c0;
			a->mon_wall += t1 - t0;
			monitor_off(which, &ctx, &st);
			a->wall[r] = t1 - t0;
			a->user[r] = u1 - u0;
			a->sys[r] = s1 - s0;
			if (!ref)
				ref = sum;
			if (sum != ref) {
				printf("damon_self_overhead: FAIL: checksum %#llx, want %#llx\n",
				       (unsigned long long)sum, (unsigned long long)ref);
				return 1;
			}
		}
	}
	double p = median(arm[ARM_PLAIN].wall, rounds), s = median(arm[ARM_SELF].wall, rounds);
	double ratio = s / p;

	printf("damon_self_overhead: %lu M ops on %lu MiB (%lu MiB hot, %s), attrs %lu %lu %lu %lu %lu, "
	       "mode %s, %lu rounds\n", ops / 1000000, BUF_SZ / MB, HOT_SZ / MB,
	       small ? "4 KiB pages" : "THP allowed", attrs[0],
	       attrs[1], attrs[2], attrs[3], attrs[4], uks_damon_self_mode(), rounds);
	printf("  without monitoring  median %.3f s\n", p);
	printf("  under self          median %.3f s   (last run: %lu samples, %lu taken, "
	       "%lu huge, %lu faults)\n", s, st.samples, st.taken, st.huge, st.faults);
	printf("  slowdown ratio      %.3f  (target <= 1.050: %s)\n", ratio,
	       ratio <= 1.05 ? "MET" : "NOT MET");
	printf("  monitor thread CPU  %.1f%% of one CPU\n",
	       100.0 * arm[ARM_SELF].mon_cpu / arm[ARM_SELF].mon_wall);
	if (arm[ARM_KERNEL].on) {
		double k = median(arm[ARM_KERNEL].wall, rounds);

		printf("  under kernel DAMON  median %.3f s   (vaddr, same attrs, its kdamond %.1f%% "
		       "of one CPU)\n", k, 100.0 * arm[ARM_KERNEL].mon_cpu / arm[ARM_KERNEL].mon_wall);
		/* a quotient of extra times needs both to be there (noise can undo either) */
		if (k > p && s > p)
			printf("  kernel's slowdown   %.3f  (self's extra time over the kernel's: "
			       "%.2fx)\n", k / p, (s - p) / (k - p));
		else
			printf("  kernel's slowdown   %.3f  (no extra time on %s side: noise, no "
			       "quotient)\n", k / p, k > p ? "self's" : "the kernel's");
	} else if (arm[ARM_KERNEL].lost > 1) {
		printf("  kernel DAMON        would not start in round %ld; not counted\n",
		       arm[ARM_KERNEL].lost);
	} else {
		printf("  kernel DAMON        not available (no vaddr in DAMON's sysfs, a kdamond "
		       "already set up, or not root)\n");
	}
	print_breakdown(arm, rounds, ops, p, s, &st, buf);
	munmap(buf, BUF_SZ);
	return 0;
}
