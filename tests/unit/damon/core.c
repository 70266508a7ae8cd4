// SPDX-License-Identifier: MIT
/*
 * The KUnit cases of Linux 5.15's mm/damon/core-test.h (suite "damon"),
 * with the same inputs and expected values, plus the 5.15 rules around
 * them (attrs checks, the size limit, the split conditions).
 */
#include <limits.h>
#include <time.h>

#include "harness.h"
#include "unit/damon/helper.h"

TEST(damon_test_target)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t;

	ASSERT_NONNULL(ctx);
	t = __uks_damon_new_target(42);
	ASSERT_EQ(42UL, t->id);
	ASSERT_EQ(0U, __uks_damon_nr_targets(ctx));
	__uks_damon_add_target(ctx, t);
	ASSERT_EQ(1U, __uks_damon_nr_targets(ctx));
	__uks_damon_destroy_target(t);
	ASSERT_EQ(0U, __uks_damon_nr_targets(ctx));
	uks_damon_ctx_destroy(ctx);
}

TEST(damon_test_regions)
{
	struct damon_region *r = __uks_damon_new_region(1, 2);
	struct damon_target *t;

	ASSERT_EQ(1UL, r->ar.start);
	ASSERT_EQ(2UL, r->ar.end);
	ASSERT_EQ(0U, r->nr_accesses);
	t = __uks_damon_new_target(42);
	ASSERT_EQ(0U, t->nr_regions);
	__uks_damon_add_region(r, t);
	ASSERT_EQ(1U, t->nr_regions);
	__uks_damon_destroy_region(r, t);
	ASSERT_EQ(0U, t->nr_regions);
	__uks_damon_destroy_target(t);
}

TEST(damon_test_aggregate)
{
	static const unsigned long saddr[][3] = { {10, 20, 30}, {5, 42, 49}, {13, 33, 55} };
	static const unsigned long eaddr[][3] = { {15, 27, 40}, {31, 45, 55}, {23, 44, 66} };
	static const unsigned int accesses[][3] = { {42, 95, 84}, {10, 20, 30}, {0, 1, 2} };
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t;
	struct damon_region *r;
	int it, ir;

	for (it = 0; it < 3; it++) {
		t = __uks_damon_new_target((unsigned long)it);
		__uks_damon_add_target(ctx, t);
		for (ir = 0; ir < 3; ir++) {
			r = __uks_damon_new_region(saddr[it][ir], eaddr[it][ir]);
			r->nr_accesses = accesses[it][ir];
			__uks_damon_add_region(r, t);
		}
	}
	__uks_damon_kdamond_reset_aggregated(ctx);
	it = 0;
	damon_for_each_target(t, ctx) {
		ir = 0;
		damon_for_each_region(r, t) {
			ASSERT_EQ(0U, r->nr_accesses);
			ir++;
		}
		ASSERT_EQ(3, ir);
		it++;
	}
	ASSERT_EQ(3, it);
	uks_damon_ctx_destroy(ctx);
}

TEST(damon_test_split_at)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(0, 100);

	__uks_damon_add_region(r, t);
	__uks_damon_split_region_at(ctx, t, r, 25);
	ASSERT_EQ(0UL, r->ar.start);
	ASSERT_EQ(25UL, r->ar.end);
	r = damon_next_region(r);
	ASSERT_EQ(25UL, r->ar.start);
	ASSERT_EQ(100UL, r->ar.end);
	ASSERT_EQ(2U, t->nr_regions);
	__uks_damon_destroy_target(t);
	uks_damon_ctx_destroy(ctx);
}

TEST(damon_test_merge_two)
{
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(0, 100), *r2;
	unsigned int i = 0;

	r->nr_accesses = 10;
	__uks_damon_add_region(r, t);
	r2 = __uks_damon_new_region(100, 300);
	r2->nr_accesses = 20;
	__uks_damon_add_region(r2, t);
	__uks_damon_merge_two_regions(t, r, r2);
	ASSERT_EQ(0UL, r->ar.start);
	ASSERT_EQ(300UL, r->ar.end);
	ASSERT_EQ(16U, r->nr_accesses);
	damon_for_each_region(r2, t) {
		ASSERT_TRUE(r == r2);
		i++;
	}
	ASSERT_EQ(1U, i);
	__uks_damon_destroy_target(t);
}

TEST(damon_test_merge_regions_of)
{
	static const unsigned long sa[] = { 0, 100, 114, 122, 130, 156, 170, 184 };
	static const unsigned long ea[] = { 100, 112, 122, 130, 156, 170, 184, 230 };
	static const unsigned int nrs[] = { 0, 0, 10, 10, 20, 30, 1, 2 };
	static const unsigned long saddrs[] = { 0, 114, 130, 156, 170 };
	static const unsigned long eaddrs[] = { 112, 130, 156, 170, 230 };
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r;

	for (int i = 0; i < 8; i++) {
		r = __uks_damon_new_region(sa[i], ea[i]);
		r->nr_accesses = nrs[i];
		__uks_damon_add_region(r, t);
	}
	__uks_damon_merge_regions_of(t, 9, 9999);
	ASSERT_EQ(5U, t->nr_regions);
	for (unsigned int i = 0; i < 5; i++) {
		r = nth_region(t, i);
		ASSERT_EQ(saddrs[i], r->ar.start);
		ASSERT_EQ(eaddrs[i], r->ar.end);
	}
	__uks_damon_destroy_target(t);
}

TEST(damon_test_split_regions_of)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(42);

	__uks_damon_add_region(__uks_damon_new_region(0, 22), t);
	__uks_damon_split_regions_of(ctx, t, 2);
	ASSERT_LE(t->nr_regions, 2U);
	__uks_damon_destroy_target(t);

	t = __uks_damon_new_target(42);
	__uks_damon_add_region(__uks_damon_new_region(0, 220), t);
	__uks_damon_split_regions_of(ctx, t, 4);
	ASSERT_LE(t->nr_regions, 4U);
	__uks_damon_destroy_target(t);
	uks_damon_ctx_destroy(ctx);
}

/*
 * 6.12's region age: one more each aggregation whose count is within the
 * threshold of the last one, zero when it moved further; a merge takes
 * the size-weighted mean (ages 9 and 3 over 100 and 200 bytes give 5), a
 * split copies it.
 */
TEST(age_grows_resets_merges_and_splits)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(0, 100), *r2;
	struct uks_damon_region_info info[4];

	ASSERT_NONNULL(ctx);
	__uks_damon_add_target(ctx, t);
	__uks_damon_add_region(r, t);
	r2 = __uks_damon_new_region(200, 400);	/* not adjacent: never merged */
	__uks_damon_add_region(r2, t);
	/* counts 5 then 6 (threshold 1): older; 5 then 9: reset */
	r->last_nr_accesses = 5;
	r->nr_accesses = 6;
	r->age = 3;
	r2->last_nr_accesses = 5;
	r2->nr_accesses = 9;
	r2->age = 7;
	__uks_damon_merge_regions_of(t, 1, 1000);
	EXPECT_EQ(4U, r->age);
	EXPECT_EQ(0U, r2->age);
	/* the reset keeps the count as the last one */
	__uks_damon_kdamond_reset_aggregated(ctx);
	EXPECT_EQ(6U, r->last_nr_accesses);
	EXPECT_EQ(0U, r->nr_accesses);
	EXPECT_EQ(9U, r2->last_nr_accesses);
	/* merge: (9 * 100 + 3 * 200) / 300 */
	r->age = 9;
	r2->age = 3;
	r2->ar.start = 100;
	r2->ar.end = 300;
	__uks_damon_merge_two_regions(t, r, r2);
	EXPECT_EQ(5U, r->age);
	/* split: both pieces keep it */
	__uks_damon_split_region_at(ctx, t, r, 50);
	ASSERT_EQ(2, uks_damon_target_regions((struct uks_damon_target *)t, info, 4));
	EXPECT_EQ(5U, info[0].age);
	EXPECT_EQ(5U, info[1].age);
	EXPECT_EQ(6U, damon_next_region(r)->last_nr_accesses);
	uks_damon_ctx_destroy(ctx);
}

/* ---------------------------------------------- the rules around them */

TEST(attrs_defaults_and_checks)
{
	struct uks_damon_ctx *ctx;
	struct uks_damon_attrs a;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	uks_damon_get_attrs(ctx, &a);
	ASSERT_EQ(5000UL, a.sample_us);
	ASSERT_EQ(100000UL, a.aggr_us);
	ASSERT_EQ(60000000UL, a.update_us);
	ASSERT_EQ(10UL, a.min_nr_regions);
	ASSERT_EQ(1000UL, a.max_nr_regions);
	ASSERT_EQ(-EINVAL, uks_damon_set_attrs(ctx, 1, 2, 3, 2, 5));	/* min < 3 */
	ASSERT_EQ(-EINVAL, uks_damon_set_attrs(ctx, 1, 2, 3, 5, 4));	/* min > max */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 0, 0, 0, 3, 3));		/* 0 intervals: ok */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 1, 2, 3, 4, 5));
	uks_damon_get_attrs(ctx, &a);
	ASSERT_EQ(1UL, a.sample_us);
	ASSERT_EQ(5UL, a.max_nr_regions);
	uks_damon_ctx_destroy(ctx);
}

/*
 * 5.15 compares the elapsed nanoseconds with interval * 1000 unsigned:
 * an interval of ULONG_MAX us never comes due (and 0 always does).
 */
TEST(huge_intervals_never_come_due)
{
	struct timespec baseline;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &baseline);
	baseline.tv_sec -= 10;	/* ten seconds ago */
	EXPECT_FALSE(__uks_damon_check_reset_time_interval(&baseline, ULONG_MAX));
	EXPECT_FALSE(__uks_damon_check_reset_time_interval(&baseline, ULONG_MAX / 1000));
	EXPECT_FALSE(__uks_damon_check_reset_time_interval(&baseline, 11000000));
	EXPECT_TRUE(__uks_damon_check_reset_time_interval(&baseline, 9000000));
	/* reset to now: 0 is due at once, 1 s is not */
	EXPECT_TRUE(__uks_damon_check_reset_time_interval(&baseline, 0));
	EXPECT_FALSE(__uks_damon_check_reset_time_interval(&baseline, 1000000));
}

TEST(region_sz_limit)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);

	__uks_damon_add_target(ctx, t);
	ASSERT_EQ(1UL, __uks_damon_region_sz_limit(ctx));	/* nothing: MIN_REGION */
	__uks_damon_add_region(__uks_damon_new_region(0, 1000), t);
	__uks_damon_add_region(__uks_damon_new_region(2000, 2500), t);
	ASSERT_EQ(150UL, __uks_damon_region_sz_limit(ctx));	/* 1500 / 10 */
	uks_damon_ctx_destroy(ctx);
}

TEST(merge_respects_sz_limit_and_weights)
{
	struct damon_target *t = __uks_damon_new_target(1);
	struct damon_region *r;

	for (unsigned long i = 0; i < 4; i++) {
		r = __uks_damon_new_region(i * 100, i * 100 + 100);
		r->nr_accesses = (unsigned int)i;
		__uks_damon_add_region(r, t);
	}
	__uks_damon_merge_regions_of(t, 5, 200);	/* pairs only */
	ASSERT_EQ(2U, t->nr_regions);
	ASSERT_EQ(200UL, nth_region(t, 0)->ar.end);
	ASSERT_EQ(0U, nth_region(t, 0)->nr_accesses);	/* (0 + 1) / 2 */
	ASSERT_EQ(2U, nth_region(t, 1)->nr_accesses);	/* (2 + 3) / 2 */
	__uks_damon_destroy_target(t);
}

TEST(merge_needs_adjacency)
{
	struct damon_target *t = __uks_damon_new_target(1);

	__uks_damon_add_region(__uks_damon_new_region(0, 100), t);
	__uks_damon_add_region(__uks_damon_new_region(101, 200), t);
	__uks_damon_merge_regions_of(t, 100, 100000);
	ASSERT_EQ(2U, t->nr_regions);
	__uks_damon_destroy_target(t);
}

TEST(split_pieces_are_10_to_90_percent)
{
	struct uks_damon_ctx *ctx = kunit_ctx();

	for (int n = 0; n < 200; n++) {
		struct damon_target *t = __uks_damon_new_target(1);
		struct damon_region *r = __uks_damon_new_region(0, 1000);

		__uks_damon_add_region(r, t);
		__uks_damon_split_regions_of(ctx, t, 2);
		ASSERT_EQ(2U, t->nr_regions);
		ASSERT_GE(r->ar.end, 100UL);
		ASSERT_LE(r->ar.end, 900UL);
		ASSERT_EQ(0UL, r->ar.end % 100);
		ASSERT_EQ(1000UL, damon_next_region(r)->ar.end);
		__uks_damon_destroy_target(t);
	}
	uks_damon_ctx_destroy(ctx);
}

TEST(split_two_then_three_and_max_half)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);

	__uks_damon_add_target(ctx, t);
	__uks_damon_add_region(__uks_damon_new_region(0, 1000000), t);
	ctx->max_nr_regions = 1000;
	/* first split: count changed since last time (0 -> 1): two pieces */
	__uks_damon_kdamond_split_regions(ctx);
	ASSERT_EQ(2U, t->nr_regions);
	/* merged back to one region, the count equals the last one (1) */
	__uks_damon_merge_regions_of(t, 1000, ~0UL);
	ASSERT_EQ(1U, t->nr_regions);
	__uks_damon_kdamond_split_regions(ctx);	/* 1 == last: three pieces */
	ASSERT_EQ(3U, t->nr_regions);
	/* over max / 2: no split at all */
	ctx->max_nr_regions = 5;
	__uks_damon_kdamond_split_regions(ctx);
	ASSERT_EQ(3U, t->nr_regions);
	uks_damon_ctx_destroy(ctx);
}

TEST(split_counter_is_per_context)
{
	struct uks_damon_ctx *a = kunit_ctx(), *b = kunit_ctx();
	struct damon_target *ta = __uks_damon_new_target(1), *tb = __uks_damon_new_target(2);

	__uks_damon_add_target(a, ta);
	__uks_damon_add_target(b, tb);
	__uks_damon_add_region(__uks_damon_new_region(0, 1000000), ta);
	__uks_damon_add_region(__uks_damon_new_region(0, 1000000), tb);
	__uks_damon_kdamond_split_regions(a);	/* a's last becomes 1 */
	/* 5.15's shared static would now make b split in three */
	__uks_damon_kdamond_split_regions(b);
	ASSERT_EQ(2U, tb->nr_regions);
	uks_damon_ctx_destroy(a);
	uks_damon_ctx_destroy(b);
}

TEST(rand_is_64_bit)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	unsigned long l = 0, r = 1UL << 40, hi = 0;

	/* 5.15's prandom_u32_max() never went past 4 GiB into a region */
	for (int i = 0; i < 1000; i++) {
		unsigned long v = __uks_damon_rand(ctx, l, r);

		ASSERT_LT(v, r);
		if (v > hi)
			hi = v;
	}
	ASSERT_GT(hi, 1UL << 32);
	ASSERT_EQ(5UL, __uks_damon_rand(ctx, 5, 5));
	uks_damon_ctx_destroy(ctx);
}

TEST(seed_makes_runs_reproducible)
{
	struct uks_damon_ctx *a = kunit_ctx(), *b = kunit_ctx();

	uks_damon_set_seed(a, 7);
	uks_damon_set_seed(b, 7);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(__uks_damon_rand(a, 0, 1000000), __uks_damon_rand(b, 0, 1000000));
	uks_damon_ctx_destroy(a);
	uks_damon_ctx_destroy(b);
}

TEST_HARNESS_MAIN
