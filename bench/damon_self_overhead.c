// SPDX-License-Identifier: MIT
/*
 * bench/damon_self_overhead: how much the "self" primitive (the in-process
 * agent's: sampled pages taken away with userfaultfd) slows the monitored
 * program down.  Target (issue 6): <= 5% with DAMON's usual attributes.
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
 * plain fault, and one TLB shootdown the running program, and what the
 * last run's faults and flushes alone cost at those prices.
 *
 *	damon_self_overhead [-s|-H] [-n MILLION_OPS] [-r ROUNDS] [-a "ATTRS"]
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

static double thread_cpu(pid_t tid)
{
	char path[64], line[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	fclose(f);
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
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

/*
 * What one TLB shootdown costs a thread that is running: every page the
 * monitor moves, out and back, is flushed from the CPUs running the
 * program.  A helper thread pinned to another CPU drops and refills a page
 * of its own (one flush each) in a loop while this thread, pinned too,
 * runs the workload; the workload's extra time over the flushes sent.
 * Microseconds per flush, or a negative value (fewer than 2 CPUs).
 */
static volatile int sd_stop;
static volatile unsigned long sd_flushes;
static char *sd_page;

static void *sd_dropper(void *arg)
{
	(void)arg;
	while (!sd_stop) {
		madvise(sd_page, PG, MADV_DONTNEED);
		*(volatile char *)sd_page = 1;
		sd_flushes++;
	}
	return NULL;
}

static double shootdown_us(uint64_t *buf)
{
	cpu_set_t old, one;
	double plain = 1e9, with = 1e9, us = -1;
	unsigned long flushes = 0;
	int cpu[2], n = 0;

	if (sched_getaffinity(0, sizeof(old), &old))
		return -1;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &old))
			cpu[n++] = c;
	sd_page = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (n < 2 || sd_page == MAP_FAILED)
		goto out;
	CPU_ZERO(&one);
	CPU_SET(cpu[0], &one);
	sched_setaffinity(0, sizeof(one), &one);
	/* alternate, best of three each: the box drifts */
	for (int round = 0; round < 3; round++) {
		pthread_attr_t attr;
		pthread_t th;
		double t0;

		t0 = now();
		workload(buf, 20000000);
		plain = now() - t0 < plain ? now() - t0 : plain;
		CPU_ZERO(&one);
		CPU_SET(cpu[1], &one);
		pthread_attr_init(&attr);
		pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
		sd_stop = 0;
		sd_flushes = 0;
		if (pthread_create(&th, &attr, sd_dropper, NULL)) {
			pthread_attr_destroy(&attr);
			goto out;
		}
		pthread_attr_destroy(&attr);
		while (!sd_flushes)
			sched_yield();
		unsigned long f0 = sd_flushes;

		t0 = now();
		workload(buf, 20000000);
		double t = now() - t0;
		unsigned long f = sd_flushes - f0;

		sd_stop = 1;
		pthread_join(th, NULL);
		if (t < with) {
			with = t;
			flushes = f;
		}
	}
	if (flushes)
		us = (with - plain) * 1e6 / (double)flushes;
out:
	sched_setaffinity(0, sizeof(old), &old);
	if (sd_page != MAP_FAILED)
		munmap(sd_page, PG);
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

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long ops = 60, rounds = 5, attrs[5] = { 5000, 100000, 1000000, 10, 1000 };
	double plain[MAX_ROUNDS], self[MAX_ROUNDS], mon_cpu = 0, mon_wall = 0;
	double user[2][MAX_ROUNDS], sys[2][MAX_ROUNDS];	/* [with] */
	unsigned long id = (unsigned long)getpid();
	struct uks_damon_self_stats st = { 0 };
	uint64_t *buf, ref = 0;
	char why[300];
	bool small = getenv("UKS_DAMON_SELF_HUGE") && !strcmp(getenv("UKS_DAMON_SELF_HUGE"), "0");
	int opt;

	while ((opt = getopt(argc, argv, "n:r:a:sH")) != -1) {
		if (opt == 's' || opt == 'H')
			small = opt == 's';
		else if (opt == 'n')
			ops = strtoul(optarg, NULL, 0);
		else if (opt == 'r')
			rounds = strtoul(optarg, NULL, 0);
		else if (opt == 'a' && sscanf(optarg, "%lu %lu %lu %lu %lu", &attrs[0], &attrs[1],
					      &attrs[2], &attrs[3], &attrs[4]) == 5)
			;
		else {
			fprintf(stderr, "usage: %s [-s|-H] [-n MILLION_OPS] [-r ROUNDS] [-a \"ATTRS\"]\n",
				argv[0]);
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
		for (int with = 0; with < 2; with++) {
			struct uks_damon_ctx *ctx = NULL;
			double t0, t1, c0 = 0, u0, s0, u1, s1;
			uint64_t sum;

			memset(buf, 0, BUF_SZ);
			if (with) {
				if (uks_damon_ctx_create(&ctx) ||
				    uks_damon_set_primitive(ctx, "self") ||
				    uks_damon_set_attrs(ctx, attrs[0], attrs[1], attrs[2], attrs[3],
							attrs[4]) ||
				    uks_damon_set_targets(ctx, &id, 1) || uks_damon_start(&ctx, 1)) {
					fprintf(stderr, "cannot start the self context\n");
					return 1;
				}
				usleep(300000);	/* past the first regions' setup */
				c0 = thread_cpu(uks_damon_kdamond_pid(ctx));
			}
			own_cpu(&u0, &s0);
			t0 = now();
			sum = workload(buf, ops);
			t1 = now();
			own_cpu(&u1, &s1);
			user[with][r] = u1 - u0;
			sys[with][r] = s1 - s0;
			if (with) {
				mon_cpu += thread_cpu(uks_damon_kdamond_pid(ctx)) - c0;
				mon_wall += t1 - t0;
				uks_damon_stop(&ctx, 1);
				uks_damon_self_stats(&st);
				uks_damon_ctx_destroy(ctx);
				self[r] = t1 - t0;
			} else {
				plain[r] = t1 - t0;
			}
			if (!ref)
				ref = sum;
			if (sum != ref) {
				printf("damon_self_overhead: FAIL: checksum %#llx, want %#llx\n",
				       (unsigned long long)sum, (unsigned long long)ref);
				return 1;
			}
		}
	}
	qsort(plain, rounds, sizeof(double), cmp);
	qsort(self, rounds, sizeof(double), cmp);
	for (int with = 0; with < 2; with++) {
		qsort(user[with], rounds, sizeof(double), cmp);
		qsort(sys[with], rounds, sizeof(double), cmp);
	}
	double p = plain[rounds / 2], s = self[rounds / 2], ratio = s / p;

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
	       mon_wall > 0 ? 100.0 * mon_cpu / mon_wall : 0.0);
	/*
	 * Where the program's extra time goes: its own instructions (user:
	 * TLB refills after each move, and on a host with shadow page tables
	 * the host rebuilding them), the kernel (faults, moves), or off the
	 * CPU (waiting for the monitor to serve a fault).
	 */
	double mu[2], ms[2];

	for (int with = 0; with < 2; with++) {
		mu[with] = user[with][rounds / 2];
		ms[with] = sys[with][rounds / 2];
	}
	printf("  program's thread    user %.3f -> %.3f s, system %.3f -> %.3f s, "
	       "off CPU %.3f -> %.3f s (medians)\n", mu[0], mu[1], ms[0], ms[1],
	       p > mu[0] + ms[0] ? p - mu[0] - ms[0] : 0,
	       s > mu[1] + ms[1] ? s - mu[1] - ms[1] : 0);
	if (st.taken)
		printf("                      %.0f us more of its own instructions per taken page\n",
		       (mu[1] - mu[0]) * 1e6 / (double)st.taken);
	double plain_us = 0, rt_us = uffd_round_trip_us(&plain_us);

	double sd_us = shootdown_us(buf);

	if (rt_us > 0)
		printf("  floor: a userfaultfd round trip costs %.1f us here (a plain fault %.1f us);\n"
		       "         the last run's %lu faults alone cost >= %.1f%% of the plain time\n",
		       rt_us, plain_us, st.faults,
		       100.0 * (double)st.faults * (rt_us - plain_us) / 1e6 / p);
	/*
	 * A take flushes the program's CPU; a give-back flushes it only when
	 * the program runs meanwhile (not when it waits in the fault: x86
	 * skips a CPU in lazy TLB mode), so count the takes not faulted on.
	 */
	unsigned long flushes = st.taken + (st.taken > st.faults ? st.taken - st.faults : 0);

	if (sd_us > 0)
		printf("         a TLB shootdown costs the running program %.1f us; the last run's\n"
		       "         %lu (%lu takes, %lu give-backs unasked) alone cost >= %.1f%% of it\n",
		       sd_us, flushes, st.taken, flushes - st.taken,
		       100.0 * (double)flushes * sd_us / 1e6 / p);
	munmap(buf, BUF_SZ);
	return 0;
}
