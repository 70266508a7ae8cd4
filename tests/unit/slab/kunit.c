// SPDX-License-Identifier: MIT
/*
 * The five cases of 5.15's lib/slub_kunit.c, with the same corruptions and
 * the same expected error counts.  As there, reports and fixes are counted
 * (one each) in a per-test "slab_errors" and not printed.
 */
#include <string.h>

#include "harness.h"
#include <uks/slab.h>
#include "slab/slub.h"

static int slab_errors;

static struct uks_kmem_cache *test_cache(const char *name, unsigned long flags)
{
	__uks_slab_kunit_errors = &slab_errors;
	slab_errors = 0;
	return uks_kmem_cache_create(name, 64, 0, flags, NULL);
}

TEST(test_clobber_zone)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_RZ_alloc", UKS_SLAB_RED_ZONE);
	unsigned char *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(p);
	p[64] = 0x12;			/* first byte of the right red zone */
	__uks_validate_slab_cache(s);
	EXPECT_EQ(2, slab_errors);	/* "Right Redzone overwritten" + FIX */
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(test_next_pointer)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_next_ptr_free", UKS_SLAB_POISON);
	unsigned char *p;
	unsigned long tmp, *ptr_addr;

	ASSERT_NONNULL(s);
	EXPECT_EQ(64u, s->offset);	/* poisoning moved it after the object */
	/*
	 * Unhardened, so that the byte written below always breaks the chain:
	 * through the random key, about one run in 50 turned the pointer into
	 * another object's address (two errors) or left it as it was (none).
	 */
	s->random = 0;
	p = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(p);
	uks_kmem_cache_free(s, p);

	ptr_addr = (unsigned long *)(p + s->offset);
	tmp = *ptr_addr;
	p[s->offset] = 0x12;
	/* Freechain corrupt, Wrong object count, Object count adjusted. */
	__uks_validate_slab_cache(s);
	EXPECT_EQ(3, slab_errors);

	/* Pointer repaired: the count "adjusted" before is wrong now. */
	*ptr_addr = tmp;
	slab_errors = 0;
	__uks_validate_slab_cache(s);
	EXPECT_EQ(2, slab_errors);

	/* The previous pass repaired the count. */
	slab_errors = 0;
	__uks_validate_slab_cache(s);
	EXPECT_EQ(0, slab_errors);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(test_first_word)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_1th_word_free", UKS_SLAB_POISON);
	unsigned char *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	*p = 0x78;
	__uks_validate_slab_cache(s);
	EXPECT_EQ(2, slab_errors);	/* "Poison overwritten" + FIX */
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(test_clobber_50th_byte)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_50th_word_free", UKS_SLAB_POISON);
	unsigned char *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	p[50] = 0x9a;
	__uks_validate_slab_cache(s);
	EXPECT_EQ(2, slab_errors);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(test_clobber_redzone_free)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_RZ_free", UKS_SLAB_RED_ZONE);
	unsigned char *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	p[64] = 0xab;			/* right red zone of a free object */
	__uks_validate_slab_cache(s);
	EXPECT_EQ(2, slab_errors);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/* A clean debug cache validates without a single report. */
TEST(clean_cache_has_no_errors)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_clean",
		UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | UKS_SLAB_STORE_USER |
		UKS_SLAB_CONSISTENCY_CHECKS);
	void *p[300];

	ASSERT_NONNULL(s);
	for (int i = 0; i < 300; i++)
		p[i] = uks_kmem_cache_alloc(s);
	for (int i = 0; i < 300; i += 2)
		uks_kmem_cache_free(s, p[i]);
	__uks_validate_slab_cache(s);
	EXPECT_EQ(0, slab_errors);
	for (int i = 1; i < 300; i += 2)
		uks_kmem_cache_free(s, p[i]);
	EXPECT_EQ(0, slab_errors);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/* uks extension: full slabs are validated too, not only listed ones. */
TEST(full_slabs_are_validated)
{
	struct uks_kmem_cache *s = test_cache("TestSlub_full", UKS_SLAB_RED_ZONE);
	unsigned char *p[64];
	unsigned int per_slab = (unsigned int)(4096 / s->size);

	ASSERT_NONNULL(s);
	ASSERT_LE(per_slab, 64u);
	for (unsigned int i = 0; i < per_slab; i++)
		p[i] = uks_kmem_cache_alloc(s);	/* exactly one full slab */
	p[3][64] = 0x33;
	EXPECT_EQ(1, __uks_validate_slab_cache(s));
	EXPECT_EQ(2, slab_errors);
	for (unsigned int i = 0; i < per_slab; i++)
		uks_kmem_cache_free(s, p[i]);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_HARNESS_MAIN
