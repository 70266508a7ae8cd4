// SPDX-License-Identifier: MIT
/*
 * DAMOS on the synthetic primitive (where every action "succeeds" on the
 * whole region, so the figures are exact): the regions a scheme is tried
 * on are the regions its pattern matches at that aggregation (read by the
 * after_aggregation hook, which runs on the same regions just before the
 * schemes), the stats add up to them, an addr filter leaves its range out,
 * a size quota bounds the bytes of each charge window exactly, the
 * watermarks stop and allow the monitor, also when a running scheme is
 * updated, and the API may be used while the context runs.  Also what a
 * scheme is refused for.
 */
#include <pthread.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB	(1UL << 20)
#define HEAP	0x10000000UL
#define HOT_S	(HEAP + 64 * MB)
#define HOT_E	(HEAP + 80 * MB)
#define ROOM	2048

static struct uks_damon_synth *make_space(void)
{
	struct uks_damon_synth *s;

	if (uks_damon_synth_create(&s))
		return NULL;
	uks_damon_synth_add_mapping(s, HEAP, HEAP + 256 * MB);
	uks_damon_synth_add_mapping(s, 0x7f0000000000UL, 0x7f0000000000UL + 64 * MB);
	uks_damon_synth_add_mapping(s, 0x7ffff0000000UL, 0x7ffff0000000UL + 8 * MB);
	uks_damon_synth_add_phase(s, 1000);
	uks_damon_synth_add_access(s, HOT_S, HOT_E, 1000);
	return s;
}

static struct uks_damos_scheme cold_stat(void)
{
	struct uks_damos_scheme s = {
		.pattern = { .min_sz = 0, .max_sz = ~0UL, .min_nr_accesses = 0,
			     .max_nr_accesses = 0, .min_age = 1, .max_age = ~0U },
		.action = UKS_DAMOS_STAT,
	};

	return s;
}

struct run {
	struct th_result *th_r;
	struct uks_damos_access_pattern pattern;
	unsigned long filter_start, filter_end;	/* the second scheme's addr filter */
	/* the matching regions of the last aggregation, as the hook saw them */
	struct uks_damos_tried_region want[ROOM];
	unsigned int nr_want;
	unsigned long want_bytes, sum_nr, sum_bytes;
	unsigned int aggregations, checked, samples;
	bool pending;
	unsigned int stop_after;
};

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct run *run = uks_damon_callback_private(ctx);
	struct damon_target *t = list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
	struct damon_region *r;

	run->nr_want = 0;
	run->want_bytes = 0;
	damon_for_each_region(r, t) {
		unsigned long sz = r->ar.end - r->ar.start;

		/* 6.12's rule, written out: closed ranges of size, count, age */
		if (sz < run->pattern.min_sz || sz > run->pattern.max_sz ||
		    r->nr_accesses < run->pattern.min_nr_accesses ||
		    r->nr_accesses > run->pattern.max_nr_accesses ||
		    r->age < run->pattern.min_age || r->age > run->pattern.max_age)
			continue;
		if (run->nr_want < ROOM) {
			struct uks_damos_tried_region *w = &run->want[run->nr_want++];

			w->start = r->ar.start;
			w->end = r->ar.end;
			w->nr_accesses = r->nr_accesses;
			w->age = r->age;
		}
		run->want_bytes += sz;
	}
	run->sum_nr += run->nr_want;
	run->sum_bytes += run->want_bytes;
	run->pending = true;
	return ++run->aggregations >= run->stop_after;
}

/* The sample after an aggregation: the schemes have run on those regions. */
static int after_sampling(struct uks_damon_ctx *ctx)
{
	struct run *run = uks_damon_callback_private(ctx);
	struct th_result *_th_r = run->th_r;
	static struct uks_damos_tried_region got[ROOM];
	unsigned long total = 0;
	int nr;

	run->samples++;
	if (!run->pending)
		return 0;
	run->pending = false;
	nr = uks_damos_get_tried_regions(ctx, 0, got, ROOM, &total);
	EXPECT_EQ((int)run->nr_want, nr);
	EXPECT_EQ(run->want_bytes, total);
	for (int i = 0; i < nr && i < (int)run->nr_want && !_th_r->failed; i++) {
		EXPECT_EQ(run->want[i].start, got[i].start);
		EXPECT_EQ(run->want[i].end, got[i].end);
		EXPECT_EQ(run->want[i].nr_accesses, got[i].nr_accesses);
		EXPECT_EQ(run->want[i].age, got[i].age);
		EXPECT_EQ(0U, got[i].target_idx);
	}
	/* the filtered scheme: what it tried lies outside the filter's range */
	nr = uks_damos_get_tried_regions(ctx, 1, got, ROOM, NULL);
	for (int i = 0; i < nr && i < ROOM; i++)
		EXPECT_TRUE(got[i].end <= run->filter_start || got[i].start >= run->filter_end);
	run->checked++;
	return _th_r->failed;
}

static struct uks_damon_ctx *synth_ctx(struct uks_damon_synth *space, void *priv,
				       bool hooks)
{
	struct uks_damon_callback cb = { .priv = priv, .after_aggregation = after_aggregation,
					 .after_sampling = after_sampling };
	struct uks_damon_ctx *ctx;

	if (uks_damon_ctx_create(&ctx))
		return NULL;
	uks_damon_set_seed(ctx, 7);
	if (uks_damon_set_primitive(ctx, "synthetic") ||
	    uks_damon_set_attrs(ctx, 1000, 20000, 60000000, 10, 1000) ||
	    uks_damon_add_target(ctx, 1, space, NULL)) {
		uks_damon_ctx_destroy(ctx);
		return NULL;
	}
	if (hooks)
		uks_damon_set_callback(ctx, &cb);
	return ctx;
}

static void wait_end(struct uks_damon_ctx *ctx)
{
	for (int i = 0; i < 3000 && uks_damon_is_running(ctx); i++)
		usleep(10000);
}

TEST(stat_tries_exactly_the_matching_regions)
{
	struct uks_damon_synth *space = make_space();
	struct run *run = calloc(1, sizeof(*run));
	struct uks_damos_scheme s = cold_stat(), f;
	struct uks_damos_stats st;
	struct uks_damon_ctx *ctx;

	ASSERT_NONNULL(space);
	ASSERT_NONNULL(run);
	run->th_r = _th_r;
	run->pattern = s.pattern;
	run->stop_after = 30;
	run->filter_start = HEAP;
	run->filter_end = HEAP + 128 * MB;
	ctx = synth_ctx(space, run, true);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	f = s;
	f.nr_filters = 1;
	f.filters[0] = (struct uks_damos_filter){ .type = UKS_DAMOS_FILTER_ADDR, .matching = true,
						  .addr_start = run->filter_start,
						  .addr_end = run->filter_end };
	ASSERT_EQ(1, uks_damos_add_scheme(ctx, &f));
	ASSERT_EQ(2, uks_damos_nr_schemes(ctx));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_end(ctx);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	TH_LOG("%u aggregations, %u checked, %lu regions %lu bytes matched in all",
	       run->aggregations, run->checked, run->sum_nr, run->sum_bytes);
	EXPECT_GE(run->checked, run->aggregations - 1);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	/* stat counts and applies nothing (6.12's vaddr returns 0 for it) */
	EXPECT_EQ(run->sum_nr, st.nr_tried);
	EXPECT_EQ(run->sum_bytes, st.sz_tried);
	EXPECT_EQ(0UL, st.nr_applied);
	EXPECT_EQ(0UL, st.sz_applied);
	EXPECT_GT(st.sz_tried, 0UL);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 1, &st));
	EXPECT_LT(st.sz_tried, run->sum_bytes);
	EXPECT_GT(st.sz_tried, 0UL);
	EXPECT_EQ(-ENOENT, uks_damos_get_stats(ctx, 2, &st));
	/* an update in place keeps the stats */
	s.pattern.min_age = 3;
	EXPECT_EQ(0, uks_damos_update_scheme(ctx, 0, &s));
	ASSERT_EQ(0, uks_damos_get_scheme(ctx, 0, &f));
	EXPECT_EQ(3U, f.pattern.min_age);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	EXPECT_EQ(run->sum_bytes, st.sz_tried);
	s.pattern.min_age = 4;
	s.pattern.max_age = 2;
	EXPECT_EQ(-EINVAL, uks_damos_update_scheme(ctx, 0, &s));
	EXPECT_EQ(-ENOENT, uks_damos_update_scheme(ctx, 5, &f));
	EXPECT_EQ(0, uks_damos_remove_scheme(ctx, 0));
	EXPECT_EQ(1, uks_damos_nr_schemes(ctx));
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(space);
	free(run);
}

struct counter {
	unsigned int aggregations, samples, stop_after;
};

static int count_aggr(struct uks_damon_ctx *ctx)
{
	struct counter *c = uks_damon_callback_private(ctx);

	return ++c->aggregations >= c->stop_after;
}

static int count_sample(struct uks_damon_ctx *ctx)
{
	struct counter *c = uks_damon_callback_private(ctx);

	c->samples++;
	return 0;
}

static struct uks_damon_ctx *counted_ctx(struct uks_damon_synth *space, struct counter *c)
{
	struct uks_damon_callback cb = { .priv = c, .after_aggregation = count_aggr,
					 .after_sampling = count_sample };
	struct uks_damon_ctx *ctx = synth_ctx(space, NULL, false);

	if (ctx)
		uks_damon_set_callback(ctx, &cb);
	return ctx;
}

/*
 * 1 MiB a window, the cold bytes far more: each window applies exactly
 * 1 MiB.  One window for the whole run: 1 MiB in all, no window ended
 * full.  A window per aggregation (reset interval 0): 1 MiB each, and
 * every window but the last ended with the quota used up.
 */
TEST(size_quota_bounds_each_charge_window)
{
	struct uks_damon_synth *space = make_space();
	struct uks_damos_scheme s = cold_stat();
	struct uks_damos_stats st;
	unsigned long esz = 0;
	struct counter c = { .stop_after = 20 };
	struct uks_damon_ctx *ctx;

	ASSERT_NONNULL(space);
	s.action = UKS_DAMOS_PAGEOUT;
	s.pattern.min_age = 0;
	s.quota.sz = MB;
	s.quota.reset_interval_ms = 3600 * 1000;
	ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_end(ctx);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	ASSERT_EQ(0, uks_damos_get_state(ctx, 0, NULL, &esz));
	EXPECT_EQ(MB, esz);
	EXPECT_EQ(MB, st.sz_applied);
	EXPECT_EQ(MB, st.sz_tried);
	EXPECT_EQ(0UL, st.qt_exceeds);
	uks_damon_ctx_destroy(ctx);

	c = (struct counter){ .stop_after = 20 };
	s.quota.reset_interval_ms = 0;
	ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_end(ctx);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	TH_LOG("%u windows: %lu bytes applied in %lu regions, %lu exceeds", c.aggregations,
	       st.sz_applied, st.nr_applied, st.qt_exceeds);
	EXPECT_EQ(c.aggregations * MB, st.sz_applied);
	EXPECT_EQ(c.aggregations * MB, st.sz_tried);
	EXPECT_EQ((unsigned long)c.aggregations - 1, st.qt_exceeds);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(space);
}

/*
 * free_mem_rate is in 1..999 on any running machine.  Marks 1000/1000/0:
 * the rate is under mid, the scheme is active and the monitor samples.
 * Marks 0/0/0: above high, inactive, and with no active scheme the
 * monitor does not sample at all.  Metric none: always active.
 */
TEST(watermarks_activate_and_deactivate)
{
	static const struct { unsigned int metric; unsigned long high, mid, low; bool active; } c[] = {
		{ UKS_DAMOS_WMARK_FREE_MEM_RATE, 1000, 1000, 0, true },
		{ UKS_DAMOS_WMARK_FREE_MEM_RATE, 0, 0, 0, false },
		{ UKS_DAMOS_WMARK_NONE, 0, 0, 0, true },
	};
	struct uks_damon_synth *space = make_space();

	ASSERT_NONNULL(space);
	for (size_t i = 0; i < ARRAY_SIZE(c); i++) {
		struct uks_damos_scheme s = cold_stat();
		struct counter cnt = { .stop_after = 5 };
		struct uks_damos_stats st;
		struct uks_damon_ctx *ctx = counted_ctx(space, &cnt);
		bool active = !c[i].active;

		ASSERT_NONNULL(ctx);
		s.pattern.min_age = 0;
		s.wmarks = (struct uks_damos_watermarks){ c[i].metric, 10000, c[i].high,
							  c[i].mid, c[i].low };
		ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
		ASSERT_EQ(0, uks_damon_start(&ctx, 1));
		if (c[i].active) {
			wait_end(ctx);
		} else {
			usleep(300000);
			EXPECT_TRUE(uks_damon_is_running(ctx));
			uks_damon_stop(&ctx, 1);
		}
		ASSERT_EQ(0, uks_damos_get_state(ctx, 0, &active, NULL));
		ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
		TH_LOG("case %zu: active %d, %u samples, %lu tried", i, active, cnt.samples,
		       st.nr_tried);
		EXPECT_EQ(c[i].active, active);
		if (c[i].active) {
			EXPECT_GE(cnt.aggregations, 5U);
			EXPECT_GT(st.nr_tried, 0UL);
		} else {
			EXPECT_EQ(0U, cnt.samples);
			EXPECT_EQ(0UL, st.nr_tried);
		}
		uks_damon_ctx_destroy(ctx);
	}
	uks_damon_synth_destroy(space);
}

TEST(schemes_are_checked)
{
	struct uks_damos_scheme s = cold_stat(), b;
	struct uks_damon_ctx *ctx;
	char why[200];

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	for (unsigned int a = UKS_DAMOS_LRU_PRIO; a <= UKS_DAMOS_MIGRATE_COLD; a++) {
		b = s;
		b.action = a;
		EXPECT_EQ(-EINVAL, uks_damos_check_scheme(&b, why, sizeof(why)));
		EXPECT_NONNULL(strstr(why, "paddr"));
		EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));
	}
	b = s;
	b.action = UKS_DAMOS_NR_ACTIONS;
	EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));
	b = s;
	b.pattern.min_sz = 2;
	b.pattern.max_sz = 1;
	EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));
	b = s;
	b.wmarks = (struct uks_damos_watermarks){ 1, 1000, 500, 600, 300 };
	EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));
	b = s;
	b.nr_filters = 1;
	b.filters[0].type = UKS_DAMOS_FILTER_ANON;
	EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));
	b = s;
	b.quota.nr_goals = 1;
	EXPECT_EQ(-EINVAL, uks_damos_add_scheme(ctx, &b));	/* target_value 0 */
	b.quota.goals[0].target_value = 100;
	EXPECT_EQ(0, uks_damos_add_scheme(ctx, &b));
	EXPECT_EQ(0, uks_damos_set_goal_current(ctx, 0, 0, 50));
	EXPECT_EQ(-ENOENT, uks_damos_set_goal_current(ctx, 0, 1, 50));
	/* an unknown watermark metric is taken (the scheme never activates) */
	b = s;
	b.wmarks.metric = 7;
	EXPECT_EQ(1, uks_damos_add_scheme(ctx, &b));
	/*
	 * nohugepage: as the running kernel's process_madvise() answers for
	 * another process (no kernel up to 6.18 takes MADV_NOHUGEPAGE there)
	 */
	b = s;
	b.action = UKS_DAMOS_NOHUGEPAGE;
	TH_LOG("nohugepage: %d %s", uks_damos_check_scheme(&b, why, sizeof(why)), why);
	b.action = UKS_DAMOS_PAGEOUT;
	EXPECT_EQ(0, uks_damos_check_scheme(&b, why, sizeof(why)));
	EXPECT_EQ(0, uks_damos_set_schemes(ctx, NULL, 0));
	EXPECT_EQ(0, uks_damos_nr_schemes(ctx));
	EXPECT_STREQ("pageout", uks_damos_action_name(UKS_DAMOS_PAGEOUT));
	EXPECT_EQ(UKS_DAMOS_STAT, uks_damos_action_from_name("stat"));
	EXPECT_EQ(-EINVAL, uks_damos_action_from_name("bogus"));
	uks_damon_ctx_destroy(ctx);
}

/* The goal feedback: far over the target shrinks the quota, under grows it. */
TEST(goal_tunes_the_effective_quota)
{
	struct uks_damon_synth *space = make_space();
	struct uks_damos_scheme s = cold_stat();
	struct counter c = { .stop_after = 6 };
	unsigned long esz_over = 0, esz_under = 0;
	struct uks_damon_ctx *ctx;

	ASSERT_NONNULL(space);
	s.pattern.min_age = 0;
	s.quota.reset_interval_ms = 0;
	s.quota.nr_goals = 1;
	s.quota.goals[0] = (struct uks_damos_quota_goal){ UKS_DAMOS_GOAL_USER_INPUT, 100, 300 };
	ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_end(ctx);
	ASSERT_EQ(0, uks_damos_get_state(ctx, 0, NULL, &esz_over));
	uks_damon_ctx_destroy(ctx);
	/* score >= 2x the goal: the minimum input, 10000 bp = 1 byte */
	EXPECT_EQ(1UL, esz_over);

	c = (struct counter){ .stop_after = 6 };
	s.quota.goals[0].current_value = 50;	/* half the goal: +50% a window */
	ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	wait_end(ctx);
	ASSERT_EQ(0, uks_damos_get_state(ctx, 0, NULL, &esz_under));
	TH_LOG("over: %lu, under after %u windows: %lu", esz_over, c.aggregations, esz_under);
	EXPECT_GT(esz_under, 1UL);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(space);
}

/*
 * Live changes: a context whose only scheme is inactive (marks 0/0/0)
 * samples nothing; updating the scheme in place to marks it meets
 * (1000/1000/0) starts the sampling within a few of its watermark
 * intervals, and its stats grow.
 */
TEST(an_update_activates_a_running_scheme)
{
	struct uks_damon_synth *space = make_space();
	struct uks_damos_scheme s = cold_stat();
	struct counter c = { .stop_after = 1000000 };
	struct uks_damos_stats st;
	struct uks_damon_ctx *ctx;
	bool active = true;

	ASSERT_NONNULL(space);
	s.pattern.min_age = 0;
	s.wmarks = (struct uks_damos_watermarks){ UKS_DAMOS_WMARK_FREE_MEM_RATE, 20000, 0, 0, 0 };
	ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	usleep(200000);
	EXPECT_EQ(0U, c.samples);
	s.wmarks.high = 1000;
	s.wmarks.mid = 1000;
	ASSERT_EQ(0, uks_damos_update_scheme(ctx, 0, &s));
	for (int i = 0; i < 500 && c.aggregations < 3; i++)
		usleep(10000);
	ASSERT_EQ(0, uks_damos_get_state(ctx, 0, &active, NULL));
	EXPECT_TRUE(active);
	EXPECT_GE(c.aggregations, 3U);
	uks_damon_stop(&ctx, 1);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	EXPECT_GT(st.nr_tried, 0UL);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(space);
}

struct churn {
	struct uks_damon_ctx *ctx;
	volatile bool stop;
	unsigned long rounds;
	int bad;
};

/* Another thread adds, reads, updates and removes schemes as fast as it can. */
static void *churn_fn(void *arg)
{
	struct churn *ch = arg;
	struct uks_damos_scheme s = cold_stat(), got;
	struct uks_damos_tried_region tr[64];
	struct uks_damos_stats st;

	s.pattern.min_age = 0;
	while (!ch->stop) {
		int idx = uks_damos_add_scheme(ch->ctx, &s);

		if (idx < 0 || uks_damos_get_scheme(ch->ctx, (unsigned int)idx, &got) ||
		    uks_damos_get_stats(ch->ctx, (unsigned int)idx, &st) ||
		    uks_damos_get_tried_regions(ch->ctx, 0, tr, 64, NULL) < 0 ||
		    uks_damos_update_scheme(ch->ctx, (unsigned int)idx, &s) ||
		    (uks_damos_nr_schemes(ch->ctx) > 4 && uks_damos_remove_scheme(ch->ctx, 1)))
			ch->bad++;
		ch->rounds++;
		usleep(50);	/* a mutex is not fair: let the monitor in */
	}
	return NULL;
}

TEST(the_api_is_safe_while_the_context_runs)
{
	struct uks_damon_synth *space = make_space();
	struct uks_damos_scheme s = cold_stat();
	struct counter c = { .stop_after = 1000000 };
	struct churn ch = { 0 };
	struct uks_damos_stats st;
	pthread_t th;

	ASSERT_NONNULL(space);
	s.pattern.min_age = 0;
	ch.ctx = counted_ctx(space, &c);
	ASSERT_NONNULL(ch.ctx);
	ASSERT_EQ(0, uks_damos_add_scheme(ch.ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ch.ctx, 1));
	ASSERT_EQ(0, pthread_create(&th, NULL, churn_fn, &ch));
	for (int i = 0; i < 500 && c.aggregations < 10; i++)
		usleep(10000);
	ch.stop = true;
	pthread_join(th, NULL);
	uks_damon_stop(&ch.ctx, 1);
	TH_LOG("%lu rounds of add/read/update/remove over %u aggregations", ch.rounds,
	       c.aggregations);
	EXPECT_EQ(0, ch.bad);
	EXPECT_GE(c.aggregations, 10U);
	ASSERT_EQ(0, uks_damos_get_stats(ch.ctx, 0, &st));
	EXPECT_GT(st.nr_tried, 0UL);
	EXPECT_EQ(0, uks_damos_set_schemes(ch.ctx, NULL, 0));
	uks_damon_ctx_destroy(ch.ctx);
	uks_damon_synth_destroy(space);
}

TEST_HARNESS_MAIN
