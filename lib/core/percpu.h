/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU support: which CPU this thread runs on, and per-CPU data areas.
 *
 * The current CPU comes from the rseq area glibc registers for every thread
 * (glibc >= 2.35 exports __rseq_offset/__rseq_size): the kernel rewrites
 * cpu_id on every return to user space after a migration, so reading it is
 * one TLS load.  Without rseq (old glibc, or
 * GLIBC_TUNABLES=glibc.pthread.rseq=0) we fall back to sched_getcpu().
 *
 * Either way the answer may be stale the moment it is read: the thread can
 * migrate right after.  Code that must stay on one CPU's data either commits
 * inside an rseq critical section or takes that CPU's local lock
 * (core/local_lock.h) and keeps using the CPU number it locked.
 */
#ifndef UKS_LIB_CORE_PERCPU_H
#define UKS_LIB_CORE_PERCPU_H

#include <stddef.h>
#include <stdint.h>

#include "core/compiler.h"

/* The fixed head of the kernel's struct rseq (uapi/linux/rseq.h). */
struct uks_rseq_abi {
	uint32_t cpu_id_start;
	int32_t cpu_id;		/* -1 uninitialised, -2 registration failed */
	uint64_t rseq_cs;
	uint32_t flags;
} __attribute__((aligned(32)));

extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

/* Set once at start-up: glibc registered rseq for every thread. */
extern int __uks_rseq_usable;

static inline void *uks_thread_pointer(void)
{
#if defined(__x86_64__)
	void *tp;

	__asm__("mov %%fs:0, %0" : "=r"(tp));
	return tp;
#else
	return __builtin_thread_pointer();
#endif
}

/*
 * Set once at start-up to __rseq_offset: a hidden copy is one load, the
 * weak libc symbol two (through the GOT); hidden in the declaration too,
 * so PIC code loads it directly.
 */
extern ptrdiff_t __uks_rseq_off __attribute__((visibility("hidden")));

/* The rseq area's offset from the thread pointer (valid if rseq is usable). */
static inline ptrdiff_t uks_rseq_off(void)
{
	return __uks_rseq_off;
}

/* This thread's rseq cpu_id, read as %fs:off where the fast paths use it. */
static inline int uks_rseq_cpu_id(void)
{
#if defined(__x86_64__)
	int cpu;

	__asm__ __volatile__("movl %%fs:4(%1), %0" : "=r"(cpu) : "r"(__uks_rseq_off));
	return cpu;
#else
	return READ_ONCE(((struct uks_rseq_abi *)((char *)__builtin_thread_pointer() +
						  __uks_rseq_off))->cpu_id);
#endif
}

static inline struct uks_rseq_abi *uks_rseq_area(void)
{
	return (struct uks_rseq_abi *)((char *)uks_thread_pointer() + __rseq_offset);
}

int __uks_cpu_slow(void);
unsigned int __uks_nr_present_cpus(void);
void __uks_percpu_detect_rseq(void);

/* The CPU this thread runs on now (a hint: it may migrate right after). */
static inline int uks_this_cpu(void)
{
	if (likely(__uks_rseq_usable)) {
		int cpu = READ_ONCE(uks_rseq_area()->cpu_id);

		if (likely(cpu >= 0))
			return cpu;
	}
	return __uks_cpu_slow();
}

/* A per-CPU data area: one cache-line-aligned slot per possible CPU. */
struct uks_percpu {
	char *base;
	size_t stride;
	unsigned int nr_cpus;
};

int __uks_percpu_alloc(struct uks_percpu *pcp, size_t size);
void __uks_percpu_free(struct uks_percpu *pcp);

static inline void *uks_per_cpu_ptr(const struct uks_percpu *pcp, unsigned int cpu)
{
	return pcp->base + (size_t)cpu * pcp->stride;
}

#define for_each_possible_cpu(cpu, pcp) \
	for ((cpu) = 0; (cpu) < (pcp)->nr_cpus; (cpu)++)

#endif
