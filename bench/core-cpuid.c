// SPDX-License-Identifier: MIT
/*
 * bench/core-cpuid: the cost of "which CPU am I on" and of a local-lock
 * round trip, against their peers, in one run:
 *   uks_this_cpu (rseq area read)   vs  sched_getcpu()  vs  raw getcpu syscall
 *   local_lock/unlock               vs  one pthread mutex lock/unlock
 * Usage: core-cpuid [ITERATIONS]   (median of 5 runs; ns per operation)
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/core.h>
#include "core/local_lock.h"

static volatile int sink;
static struct uks_local_lock llock;
static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;

static void op_rseq(void) { sink = uks_this_cpu(); }
static void op_sched_getcpu(void) { sink = sched_getcpu(); }
static void op_syscall(void)
{
	unsigned int cpu;

	syscall(SYS_getcpu, &cpu, NULL, NULL);
	sink = (int)cpu;
}
static void op_local_lock(void) { local_unlock(&llock, local_lock(&llock)); }
static void op_mutex(void) { pthread_mutex_lock(&mutex); pthread_mutex_unlock(&mutex); }

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double measure(void (*op)(void), long iters)
{
	double runs[5];

	for (int r = 0; r < 5; r++) {
		uint64_t t0 = uks_clock_mono_ns();

		for (long i = 0; i < iters; i++)
			op();
		runs[r] = (double)(uks_clock_mono_ns() - t0) / (double)iters;
	}
	qsort(runs, 5, sizeof(runs[0]), cmp);
	return runs[2];
}

int main(int argc, char **argv)
{
	long iters = argc > 1 ? atol(argv[1]) : 2000000;

	if (local_lock_init(&llock))
		return 1;
	double rseq = measure(op_rseq, iters);
	double glibc = measure(op_sched_getcpu, iters);
	double sys = measure(op_syscall, iters / 10);
	double ll = measure(op_local_lock, iters);
	double mtx = measure(op_mutex, iters);

	printf("cpu id source: %s\n", uks_rseq_active() ? "rseq" : "sched_getcpu fallback");
	printf("%-28s %8.2f ns\n", "uks_this_cpu", rseq);
	printf("%-28s %8.2f ns  (uks is %.2fx its cost)\n", "sched_getcpu (glibc)", glibc, rseq / glibc);
	printf("%-28s %8.2f ns  (uks is %.3fx its cost)\n", "getcpu syscall", sys, rseq / sys);
	printf("%-28s %8.2f ns\n", "local_lock+unlock", ll);
	printf("%-28s %8.2f ns  (local lock is %.2fx its cost)\n", "pthread_mutex lock+unlock", mtx, ll / mtx);
	local_lock_destroy(&llock);
	return 0;
}
