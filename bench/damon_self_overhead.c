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
 * monitor), and the monitor thread's CPU time is printed.  Last, the
 * floor: what one userfaultfd round trip costs on this machine beyond a
 * plain fault, and what the last run's faults alone cost at that price.
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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
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

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	unsigned long ops = 60, rounds = 5, attrs[5] = { 5000, 100000, 1000000, 10, 1000 };
	double plain[MAX_ROUNDS], self[MAX_ROUNDS], mon_cpu = 0, mon_wall = 0;
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
			double t0, t1, c0 = 0;
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
			t0 = now();
			sum = workload(buf, ops);
			t1 = now();
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
	double plain_us = 0, rt_us = uffd_round_trip_us(&plain_us);

	if (rt_us > 0)
		printf("  floor: a userfaultfd round trip costs %.1f us here (a plain fault %.1f us);\n"
		       "         the last run's %lu faults alone cost >= %.1f%% of the plain time\n",
		       rt_us, plain_us, st.faults,
		       100.0 * (double)st.faults * (rt_us - plain_us) / 1e6 / p);
	munmap(buf, BUF_SZ);
	return 0;
}
