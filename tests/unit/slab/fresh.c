// SPDX-License-Identifier: MIT
/*
 * Fresh slabs: allocate_slab() links one page worth of objects and leaves
 * the rest untouched until the CPU freelist needs them; deactivation (here
 * through shrink) links whatever is left.  A process of its own, so that
 * the first slabs come from memory nothing has touched yet.
 */
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "harness.h"
#include "unit/slab/helper.h"
#include <uks/core.h>
#include <uks/slab.h>

/*
 * 2 KiB objects, 16 to a 32 KiB slab: linked four at a time (the minimum
 * batch, two pages), so each pair of pages is touched only when needed.
 */
TEST(pages_of_a_fresh_slab_stay_untouched_until_used)
{
	enum { SZ = 2048, BATCH = 4, PG = 4096 };
	struct uks_kmem_cache *s;
	unsigned long objs, bytes;
	char *p[BATCH + 1], **more;

	if (getpagesize() != PG)
		SKIP(return, "the layout below assumes 4 KiB pages");
	/* A transparent huge page would make the whole slab resident at once. */
	prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
	pin_to_cpu(sched_getcpu());	/* one CPU slab for consecutive allocations */
	s = uks_kmem_cache_create("t_fresh2k", SZ, 0, 0, NULL);
	ASSERT_NONNULL(s);
	objs = attr_ulong(s, "objs_per_slab");
	ASSERT_GE(objs, 3 * BATCH);
	ASSERT_LE(objs, 128);
	bytes = objs * SZ;

	p[0] = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(p[0]);
	EXPECT_EQ(BATCH * SZ / PG, resident_pages(p[0], BATCH * SZ));
	EXPECT_EQ(0, resident_pages(p[0] + BATCH * SZ, bytes - BATCH * SZ));
	for (int i = 1; i <= BATCH; i++) {
		p[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(p[i]);
		EXPECT_EQ(p[0] + i * SZ, p[i]);	/* fresh objects in address order */
	}
	/* The fifth linked the next batch, and nothing beyond it. */
	EXPECT_EQ(2 * BATCH * SZ / PG, resident_pages(p[0], 2 * BATCH * SZ));
	EXPECT_EQ(0, resident_pages(p[0] + 2 * BATCH * SZ, bytes - 2 * BATCH * SZ));
	EXPECT_EQ(2, attr_ulong(s, "alloc_slowpath"));

	/* Shrink flushes the CPU slab: the rest is linked, 5.15's accounting. */
	EXPECT_EQ(1, uks_kmem_cache_shrink(s));	/* 1: a slab is left */
	EXPECT_EQ(bytes / PG, resident_pages(p[0], bytes));
	EXPECT_EQ(1, attr_ulong(s, "slabs"));
	EXPECT_EQ(BATCH + 1, attr_ulong(s, "objects"));
	EXPECT_EQ(1, attr_ulong(s, "partial"));

	/* The slab hands out exactly its other objects, then a new slab. */
	more = calloc(objs, sizeof(*more));
	ASSERT_NONNULL(more);
	for (unsigned long i = 0; i < objs - BATCH; i++) {
		more[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(more[i]);
		for (int j = 0; j <= BATCH; j++)
			ASSERT_TRUE(more[i] != p[j]);
		for (unsigned long j = 0; j < i; j++)
			ASSERT_TRUE(more[i] != more[j]);
	}
	for (unsigned long i = 0; i < objs - BATCH - 1; i++)
		EXPECT_TRUE(more[i] >= p[0] && more[i] < p[0] + bytes);
	EXPECT_EQ(2, attr_ulong(s, "slabs"));
	for (int j = 0; j <= BATCH; j++)
		uks_kmem_cache_free(s, p[j]);
	FREE_ALL_AND_DESTROY(s, more, objs - BATCH);
	free(more);
}

TEST(small_objects_come_out_in_address_order_across_batches)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_fresh1k", 1000, 0, 0, NULL);
	unsigned long objs, size;
	char **p;

	ASSERT_NONNULL(s);
	pin_to_cpu(sched_getcpu());	/* one CPU slab for consecutive allocations */
	objs = attr_ulong(s, "objs_per_slab");
	size = attr_ulong(s, "slab_size");
	ASSERT_GT(objs, 4);		/* more than one page worth: several batches */
	p = calloc(objs, sizeof(*p));
	ASSERT_NONNULL(p);
	for (unsigned long i = 0; i < objs; i++) {
		p[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(p[i]);
		memset(p[i], (int)i, 1000);
		EXPECT_EQ(p[0] + i * size, p[i]);
	}
	for (unsigned long i = 0; i < objs; i++)
		for (int j = 0; j < 1000; j++)
			ASSERT_EQ((char)i, p[i][j]);
	FREE_ALL_AND_DESTROY(s, p, objs);
	free(p);
}

/* Debug caches build the whole freelist at once, poisoned, as 5.15 does. */
TEST(debug_caches_set_up_every_object_at_once)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_fresh_dbg", 1000, 0,
							 UKS_SLAB_POISON | UKS_SLAB_RED_ZONE, NULL);
	char *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(p);
	EXPECT_EQ(0, uks_kmem_cache_validate(s));
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_validate(s));
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_HARNESS_MAIN
