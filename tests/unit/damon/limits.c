// SPDX-License-Identifier: MIT
/*
 * DAMON's min_nr_regions and max_nr_regions are the user's numbers (the
 * debugfs attrs file).  5.15 takes any 3 <= min <= max, so the bound is
 * on what they make: the first split into ~min_nr_regions pieces and the
 * adaptive splits up to max_nr_regions are refused (-ENOMEM, regions
 * unchanged) when their new regions would not fit in memory
 * (MemAvailable, RLIMIT_AS, RLIMIT_DATA).  A soft RLIMIT_AS a little
 * above the process's size keeps a check that let one through from
 * taking the machine's memory; the peak RSS shows nothing was allocated.
 */
#include "harness.h"
#include "unit/damon/helper.h"
#include "unit/mem_limit.h"

TEST(attrs_take_any_counts_the_kernel_takes)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct uks_damon_attrs a;

	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 1ul << 40, ~0ul));
	ASSERT_EQ(-EINVAL, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 2, 1000));
	ASSERT_EQ(-EINVAL, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 1001, 1000));
	uks_damon_get_attrs(ctx, &a);
	ASSERT_EQ(1ul << 40, a.min_nr_regions);
	ASSERT_EQ(~0ul, a.max_nr_regions);
	uks_damon_ctx_destroy(ctx);
}

/*
 * min_nr_regions 2^40 over three 8 TiB regions: 2^31 pieces of
 * DAMON_MIN_REGION each, 128 GiB of regions.
 */
TEST(init_regions_refuse_a_split_that_cannot_fit)
{
	static const struct damon_addr_range three[] = {
		{ 0, 1ul << 43 }, { 1ul << 44, (1ul << 44) + (1ul << 43) },
		{ 1ul << 45, (1ul << 45) + (1ul << 43) },
	};
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);
	uint64_t hwm;

	ctx->min_region = 4096;		/* DAMON_MIN_REGION */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 1ul << 40, 1ul << 41));
	__uks_damon_add_target(ctx, t);
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 64 * MIB));
	hwm = self_kb("VmHWM");
	__uks_damon_init_regions_of(ctx, t, three);
	ASSERT_LT(self_kb("VmHWM"), hwm + 8 * MIB);
	/* the three regions, unsplit: the adaptive splits take it from there */
	ASSERT_EQ(3U, t->nr_regions);
	ASSERT_EQ(1ul << 43, nth_region(t, 0)->ar.end);
	uks_damon_ctx_destroy(ctx);
}

TEST(even_split_refused_leaves_the_region)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);
	struct damon_region *r = __uks_damon_new_region(0, 1ul << 46);

	ctx->min_region = 4096;
	__uks_damon_add_region(r, t);
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 64 * MIB));
	ASSERT_EQ(-ENOMEM, __uks_damon_evenly_split_region(ctx, t, r, 1u << 30));
	ASSERT_EQ(1U, t->nr_regions);
	ASSERT_EQ(1ul << 46, r->ar.end);
	/* what fits still splits */
	ASSERT_EQ(0, __uks_damon_evenly_split_region(ctx, t, r, 1000));
	ASSERT_EQ(1000U, t->nr_regions);
	__uks_damon_destroy_target(t);
	uks_damon_ctx_destroy(ctx);
}

/* 100000 regions, max_nr_regions far above: doubling them must fit first. */
TEST(adaptive_split_waits_for_memory)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);
	struct damon_region *r = __uks_damon_new_region(0, 1000000);
	uint64_t hwm;

	__uks_damon_add_target(ctx, t);
	__uks_damon_add_region(r, t);
	ASSERT_EQ(0, __uks_damon_evenly_split_region(ctx, t, r, 100000));
	ASSERT_EQ(100000U, t->nr_regions);
	ctx->max_nr_regions = 1ul << 40;
	/* Less headroom than 100000 more regions take (6 MiB and more). */
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 1 * MIB));
	hwm = self_kb("VmHWM");
	__uks_damon_kdamond_split_regions(ctx);
	ASSERT_EQ(100000U, t->nr_regions);
	ASSERT_LT(self_kb("VmHWM"), hwm + 2 * MIB);
	/* with the memory there, it splits */
	ASSERT_EQ(0, unlimit(RLIMIT_AS));
	__uks_damon_kdamond_split_regions(ctx);
	ASSERT_GT(t->nr_regions, 100000U);
	uks_damon_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
