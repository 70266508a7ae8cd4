/* SPDX-License-Identifier: MIT */
/*
 * The CPU a benchmark measures on: UKS_BENCH_CPU=N, else the one it
 * starts on.  This project's VM has two vCPUs of different speeds, so
 * figures that are compared with each other come from one CPU.  Shared by
 * bench/slab-fastpath (which pins itself) and bench/malloc-peers (which
 * pins its single-threaded workers).
 */
#ifndef UKS_BENCH_CPU_H
#define UKS_BENCH_CPU_H

#include <sched.h>
#include <stdlib.h>

/* Return: the CPU, or -1 (a bad UKS_BENCH_CPU, or a CPU we may not run on). */
static inline int bench_cpu(void)
{
	const char *want = getenv("UKS_BENCH_CPU");
	cpu_set_t allowed;
	char *end = NULL;
	long cpu;

	if (want && !*want)
		want = NULL;
	cpu = want ? strtol(want, &end, 10) : sched_getcpu();
	if (cpu < 0 || cpu >= CPU_SETSIZE || (want && (end == want || *end)) ||
	    sched_getaffinity(0, sizeof(allowed), &allowed) || !CPU_ISSET((int)cpu, &allowed))
		return -1;
	return (int)cpu;
}

/* Run the calling thread on @cpu only.  Return: 0, or -1. */
static inline int bench_pin(int cpu)
{
	cpu_set_t one;

	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	return sched_setaffinity(0, sizeof(one), &one) ? -1 : 0;
}

#endif
