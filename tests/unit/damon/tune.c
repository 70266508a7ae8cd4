// SPDX-License-Identifier: MIT
/*
 * The interval tuner (lib/damon/core/tune.c) on the real monitor thread
 * and the synthetic primitive: the intervals goal halves the sampling
 * interval while far more accesses are seen than it asks for, and grows
 * it while far fewer are, within its bounds, keeping the samples per
 * aggregation; the budget raises the interval until the monitor's measured
 * CPU share is within it; bad goals and budgets are refused.
 */
#include <time.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB	(1UL << 20)
#define HEAP	0x10000000UL
#define NR_SEEN	12

/* The intervals seen at each aggregation (before that aggregation's tuning). */
struct seen {
	unsigned long sample[NR_SEEN], aggr[NR_SEEN];
	int n;
	long burn_ns;		/* CPU to spend per sample in after_sampling */
};

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct seen *s = uks_damon_callback_private(ctx);

	if (s->n < NR_SEEN) {
		s->sample[s->n] = ctx->sample_interval;
		s->aggr[s->n] = ctx->aggr_interval;
		s->n++;
	}
	return 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int after_sampling(struct uks_damon_ctx *ctx)
{
	struct seen *s = uks_damon_callback_private(ctx);
	uint64_t end = thread_cpu_ns() + (uint64_t)s->burn_ns;

	while (s->burn_ns && thread_cpu_ns() < end)
		;
	return 0;
}

/* A 64 MiB space of which all (or nothing much) is accessed at @permille. */
static struct uks_damon_ctx *start(struct seen *seen, unsigned int permille,
				   unsigned long sample_us, unsigned long aggr_us,
				   struct uks_damon_synth **sp)
{
	struct uks_damon_callback cb = { seen, NULL, after_sampling, after_aggregation, NULL };
	struct uks_damon_synth *s;
	struct uks_damon_ctx *ctx;

	if (uks_damon_synth_create(&s))
		return NULL;
	uks_damon_synth_add_mapping(s, HEAP, HEAP + 64 * MB);
	uks_damon_synth_add_mapping(s, HEAP + 128 * MB, HEAP + 130 * MB);
	uks_damon_synth_add_mapping(s, HEAP + 256 * MB, HEAP + 257 * MB);
	uks_damon_synth_add_phase(s, 100000);
	uks_damon_synth_add_access(s, HEAP, HEAP + 64 * MB, permille);
	*sp = s;
	if (uks_damon_ctx_create(&ctx))
		return NULL;
	uks_damon_set_seed(ctx, 7);
	if (uks_damon_set_primitive(ctx, "synthetic") ||
	    uks_damon_set_attrs(ctx, sample_us, aggr_us, 60000000, 10, 1000) ||
	    uks_damon_add_target(ctx, 1, s, NULL))
		return NULL;
	uks_damon_set_callback(ctx, &cb);
	return ctx;
}

static void wait_aggregations(struct seen *seen, int n)
{
	/* a bound for a broken run, not a timing assumption */
	for (int i = 0; i < 3000 && __atomic_load_n(&seen->n, __ATOMIC_ACQUIRE) < n; i++)
		usleep(10000);
}

TEST(many_accesses_halve_the_sampling_interval_down_to_its_minimum)
{
	struct seen seen = { 0 };
	struct uks_damon_synth *s;
	struct uks_damon_ctx *ctx = start(&seen, 900, 4000, 40000, &s);

	ASSERT_TRUE(ctx != NULL);
	ASSERT_EQ(0, uks_damon_set_intervals_goal(ctx, 400, 1, 1000, 8000));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_aggregations(&seen, 6);
	ASSERT_EQ(0, uks_damon_stop(&ctx, 1));
	ASSERT_GE(seen.n, 6);
	/* ~90% of the samples see the space accessed: 22 times the 4% asked for */
	EXPECT_EQ(4000, seen.sample[0]);
	EXPECT_EQ(2000, seen.sample[1]);
	EXPECT_EQ(1000, seen.sample[2]);
	for (int i = 3; i < seen.n; i++)
		EXPECT_EQ(1000, seen.sample[i]);
	for (int i = 0; i < seen.n; i++)
		EXPECT_EQ(10 * seen.sample[i], seen.aggr[i]);	/* samples per aggregation kept */
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST(few_accesses_grow_the_sampling_interval_up_to_its_maximum)
{
	struct seen seen = { 0 };
	struct uks_damon_synth *s;
	struct uks_damon_ctx *ctx = start(&seen, 0, 1000, 10000, &s);

	ASSERT_TRUE(ctx != NULL);
	ASSERT_EQ(0, uks_damon_set_intervals_goal(ctx, 400, 1, 500, 4000));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_aggregations(&seen, 5);
	ASSERT_EQ(0, uks_damon_stop(&ctx, 1));
	ASSERT_GE(seen.n, 5);
	/* nothing seen: the score is 0, the step doubles */
	EXPECT_EQ(1000, seen.sample[0]);
	EXPECT_EQ(2000, seen.sample[1]);
	EXPECT_EQ(4000, seen.sample[2]);
	EXPECT_EQ(4000, seen.sample[3]);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST(the_budget_raises_the_interval_until_the_monitor_fits_in_it)
{
	struct seen seen = { .burn_ns = 500000 };	/* 0.5 ms of CPU per sample */
	struct uks_damon_cost c0, c1;
	struct uks_damon_synth *s;
	struct uks_damon_ctx *ctx = start(&seen, 100, 1000, 10000, &s);
	double share, per_sample_ms;

	ASSERT_TRUE(ctx != NULL);
	ASSERT_EQ(0, uks_damon_set_budget(ctx, 30, 0));		/* 3% of a CPU */
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_aggregations(&seen, 4);		/* the raise happens at the first */
	uks_damon_get_cost(ctx, &c0);
	wait_aggregations(&seen, 8);
	uks_damon_get_cost(ctx, &c1);
	ASSERT_EQ(0, uks_damon_stop(&ctx, 1));
	ASSERT_GE(seen.n, 8);
	ASSERT_GT(c1.aggregations, c0.aggregations);
	share = (double)(c1.monitor_cpu_ns - c0.monitor_cpu_ns) / (double)(c1.wall_ns - c0.wall_ns);
	/* each sample costs the burn at least: the interval must make room for it */
	per_sample_ms = (double)seen.burn_ns / 1e6;
	EXPECT_GE((double)c1.sample_us / 1000.0, per_sample_ms / 0.030 * 0.8);
	/* and the share measured after the raise is within the budget (10% slack
	   for the monitor's own work beyond the burn) */
	EXPECT_LE(share, 0.030 * 1.1);
	EXPECT_GE(c1.retunes, 1);
	EXPECT_EQ(10 * c1.sample_us, c1.aggr_us);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST(bad_goals_and_budgets_are_refused)
{
	struct seen seen = { 0 };
	struct uks_damon_synth *s;
	struct uks_damon_ctx *ctx = start(&seen, 0, 5000, 100000, &s);
	struct uks_damon_cost c;

	ASSERT_TRUE(ctx != NULL);
	EXPECT_EQ(-EINVAL, uks_damon_set_intervals_goal(ctx, 400, 1, 8000, 1000));	/* min > max */
	EXPECT_EQ(-EINVAL, uks_damon_set_intervals_goal(ctx, 400, 1, 6000, 9000));	/* 5000 outside */
	EXPECT_EQ(0, uks_damon_set_intervals_goal(ctx, 400, 0, 8000, 1000));	/* off: not checked */
	EXPECT_EQ(-EINVAL, uks_damon_set_budget(ctx, 1001, 0));
	EXPECT_EQ(-EINVAL, uks_damon_set_budget(ctx, 0, 5000));
	uks_damon_get_cost(ctx, &c);
	EXPECT_EQ(0, c.aggregations);
	EXPECT_EQ(5000, c.sample_us);
	EXPECT_EQ(100000, c.aggr_us);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST_HARNESS_MAIN
