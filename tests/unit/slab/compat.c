// SPDX-License-Identifier: MIT
/* Kernel-style code compiles and runs against include/uks/slab_compat.h. */
#include <stdint.h>

#include "harness.h"
#include <uks/slab_compat.h>

struct dentry_like {
	int refs;
	char name[40];
};

TEST(kernel_spelling)
{
	struct kmem_cache *cache = kmem_cache_create("compat_dentry", sizeof(struct dentry_like),
						     0, SLAB_HWCACHE_ALIGN, NULL);
	struct dentry_like *d;
	void *objs[4];
	char *buf;

	ASSERT_NONNULL(cache);
	d = kmem_cache_alloc(cache, GFP_KERNEL | __GFP_ZERO);
	ASSERT_NONNULL(d);
	EXPECT_EQ(0, d->refs);
	kmem_cache_free(cache, d);
	ASSERT_EQ(4, kmem_cache_alloc_bulk(cache, GFP_ATOMIC, 4, objs));
	kmem_cache_free_bulk(cache, 4, objs);
	buf = kmalloc_array(10, 10, GFP_NOFS);
	ASSERT_NONNULL(buf);
	EXPECT_EQ(128u, ksize(buf));
	buf = krealloc(buf, 300, GFP_KERNEL);
	EXPECT_EQ(512u, ksize(buf));
	kfree(buf);
	EXPECT_NULL(kmalloc_array(SIZE_MAX, 2, GFP_KERNEL));
	EXPECT_TRUE(ZERO_OR_NULL_PTR(kmalloc(0, GFP_KERNEL)));
	EXPECT_EQ(0, kmem_cache_shrink(cache));
	kmem_cache_destroy(cache);
}

/* The values ported code tests flags against: 5.15's gfp.h. */
TEST(gfp_values_are_5_15s)
{
	EXPECT_EQ(0xcc0u, GFP_KERNEL);
	EXPECT_EQ(0xa20u, GFP_ATOMIC);
	EXPECT_EQ(0x400cc0u, GFP_KERNEL_ACCOUNT);
	EXPECT_EQ(0x800u, GFP_NOWAIT);
	EXPECT_EQ(0xc00u, GFP_NOIO);
	EXPECT_EQ(0xc40u, GFP_NOFS);
	EXPECT_EQ(0x100cc0u, GFP_USER);
	EXPECT_EQ(0x2000u, __GFP_NOWARN);
	EXPECT_EQ(0x8000u, __GFP_NOFAIL);
	EXPECT_EQ(0x10000u, __GFP_NORETRY);
	EXPECT_EQ(0x4000u, __GFP_RETRY_MAYFAIL);
	EXPECT_EQ(0u, GFP_KERNEL & __GFP_ACCOUNT);
}

TEST_HARNESS_MAIN
