/* SPDX-License-Identifier: MIT */
/* Helpers of the slab tests: sysfs numbers, resident pages, pinning. */
#ifndef UKS_TESTS_UNIT_SLAB_HELPER_H
#define UKS_TESTS_UNIT_SLAB_HELPER_H

#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/mman.h>

#include <uks/slab.h>

#include "slab/policy.h"

/*
 * For a test of what only the kernel policy does: tests/unit/slab-malloc/
 * runs these tests under the malloc policy too (lib/slab/policy.h).
 */
#define KERNEL_POLICY_ONLY() do {					\
	if (__uks_slab_policy != &__uks_slab_kernel_policy)		\
		SKIP(return, "the kernel policy's behaviour");		\
} while (0)

/* The number a cache's sysfs attribute starts with; ~0 if it has none. */
static inline unsigned long attr_ulong(struct uks_kmem_cache *s, const char *attr)
{
	char buf[512];

	if (uks_kmem_cache_attr_show(s, attr, buf, sizeof(buf)) <= 0)
		return ~0UL;
	return strtoul(buf, NULL, 10);
}

/* Resident 4 KiB pages of [p, p + len), 2 MiB per mincore(); ~0 on error. */
static inline unsigned long resident_pages(void *p, size_t len)
{
	unsigned char vec[512];
	unsigned long n = 0;

	for (size_t off = 0; off < len; off += sizeof(vec) * 4096) {
		size_t part = len - off < sizeof(vec) * 4096 ? len - off : sizeof(vec) * 4096;

		if (mincore((char *)p + off, part, vec))
			return ~0UL;
		for (size_t i = 0; i < part / 4096; i++)
			n += vec[i] & 1;
	}
	return n;
}

/* Run the calling thread on @cpu only.  Return: true if it now runs there. */
static inline bool pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET((unsigned int)cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) == 0 && sched_getcpu() == cpu;
}

/*
 * Free objects [0, n) of @objs back to @s, then expect shrink to leave no
 * slab and the cache to be destroyed.  A macro: the EXPECTs are the test's.
 */
#define FREE_ALL_AND_DESTROY(s, objs, n) do {				\
	for (unsigned long _i = 0; _i < (unsigned long)(n); _i++)	\
		uks_kmem_cache_free((s), (objs)[_i]);			\
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));				\
	EXPECT_EQ(0, attr_ulong((s), "slabs"));				\
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));			\
} while (0)

#endif
