/* SPDX-License-Identifier: MIT */
/*
 * The two allocators built from lib/slab: libuks keeps 5.15's SLUB (the
 * kernel policy), libuks-malloc.so tunes it to be a process's malloc (the
 * malloc policy).  Every difference between them is a field here, read
 * from the policy the process runs; none is decided at compile time.
 *
 * Each product defines __uks_slab_policy, the policy it starts with:
 * libuks the kernel one (policy_kernel.c), the preload the malloc one
 * (lib/malloc/preload.c), so that its first malloc(), which may come
 * before any constructor, already runs it.  __uks_slab_select_policy()
 * changes it before the allocator is initialised (the unit tests run
 * the malloc policy in libuks that way).  Fast paths never read it:
 * what they depend on is copied where they look at init (the kmalloc
 * size-class table) or at cache creation (the free pointer offset).
 */
#ifndef UKS_LIB_SLAB_POLICY_H
#define UKS_LIB_SLAB_POLICY_H

#include <stdbool.h>
#include <stdint.h>

struct slab_policy {
	const char *name;			/* "kernel", "malloc" */
	/*
	 * kmalloc size classes: the slot size of each kmalloc_caches[]
	 * index, 0 for an index without a class (and for index 0, which
	 * means none).  A request takes the smallest class it fits in.
	 */
	const uint16_t *class_size;
	unsigned int nr_classes;
	unsigned int kmalloc_minalign;		/* ARCH_KMALLOC_MINALIGN: 8, or malloc's 16 */
	bool kmalloc_on_demand;			/* make each class on its first use, not at init */
	bool kmalloc_sheaves;			/* UKS_SLUB_SHEAVES's default for kmalloc caches */
	bool cpu_partial_in_slabs;		/* 5.16's per-CPU partial limit in slabs, not objects */
	bool freeptr_first;			/* free pointer in the object's first word */
	bool large_runs;			/* kmalloc_large() takes the pages it needs, not a block */
	/*
	 * Bad frees abort as glibc's free() does (lib/slab/malloc_check.c),
	 * and a slab is never cut at a lower order than its cache's (the
	 * free fast path's obj_start_fast() relies on the order).
	 */
	bool in_malloc;
	/*
	 * The stack unwinder for slub_debug's tracks and reports: @prepare
	 * runs before any lock is taken and may allocate; @trace records
	 * up to @max return addresses of its caller's stack, innermost
	 * first, after @skip frames of it.
	 */
	void (*stack_trace_prepare)(void);
	unsigned int (*stack_trace)(unsigned long *addrs, unsigned int max, unsigned int skip);
};

#define SLAB_POLICY_MAX_CLASSES	28	/* kmalloc_caches[] size: the largest nr_classes */

extern const struct slab_policy __uks_slab_malloc_policy;	/* policy.c */
extern const struct slab_policy __uks_slab_kernel_policy;	/* policy_kernel.c, libuks only */
extern const struct slab_policy *__uks_slab_policy;		/* defined by each product */

int __uks_slab_select_policy(const struct slab_policy *policy);

#endif
