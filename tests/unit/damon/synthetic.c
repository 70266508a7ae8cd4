// SPDX-License-Identifier: MIT
/*
 * The monitor over the synthetic primitive: the hot range of a scripted
 * pattern is found (stepping the 5.15 loop by hand, so the run is exact
 * and reproducible, and with the real monitor thread), the monitor
 * thread's start/stop rules, the hooks, and damon:damon_aggregated in a
 * trace instance with the kernel's print format.
 */
#include <uks/trace.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB	(1UL << 20)
#define HEAP	0x10000000UL
#define HOT_S	(HEAP + 64 * MB)
#define HOT_E	(HEAP + 80 * MB)

/* A process-like space: heap, libraries, stack; 16 MiB of the heap hot. */
static struct uks_damon_synth *make_space(unsigned int permille)
{
	struct uks_damon_synth *s;

	if (uks_damon_synth_create(&s))
		return NULL;
	uks_damon_synth_add_mapping(s, HEAP, HEAP + 256 * MB);
	uks_damon_synth_add_mapping(s, 0x7f0000000000UL, 0x7f0000000000UL + 64 * MB);
	uks_damon_synth_add_mapping(s, 0x7ffff0000000UL, 0x7ffff0000000UL + 8 * MB);
	uks_damon_synth_add_phase(s, 1000);
	uks_damon_synth_add_access(s, HOT_S, HOT_E, permille);
	return s;
}

struct verdict {
	unsigned long hot_found, cold_reported;	/* bytes */
	unsigned int nr_regions;
};

/* Regions with at least half the max count are "hot". */
static void judge(struct damon_target *t, struct verdict *v)
{
	struct damon_region *r;
	unsigned int max = 0;

	memset(v, 0, sizeof(*v));
	damon_for_each_region(r, t)
		if (r->nr_accesses > max)
			max = r->nr_accesses;
	damon_for_each_region(r, t) {
		unsigned long s = r->ar.start, e = r->ar.end;
		unsigned long is = s > HOT_S ? s : HOT_S, ie = e < HOT_E ? e : HOT_E;
		unsigned long in = ie > is ? ie - is : 0;

		v->nr_regions++;
		if (!max || r->nr_accesses * 2 < max)
			continue;
		v->hot_found += in;
		v->cold_reported += (e - s) - in;
	}
}

/* 5.15's kdamond_fn body, one aggregation of @samples samples, no sleeping. */
static void step_aggregation(struct uks_damon_ctx *ctx, unsigned long sz_limit, int samples,
			     struct verdict *v)
{
	const struct damon_primitive *p = ctx->primitive;
	unsigned int max = 0;

	for (int i = 0; i < samples; i++) {
		p->prepare_access_checks(ctx);
		max = p->check_accesses(ctx);
	}
	__uks_damon_kdamond_merge_regions(ctx, max / 10, sz_limit);
	if (v)
		judge(list_first_entry(&ctx->adaptive_targets, struct damon_target, list), v);
	__uks_damon_kdamond_reset_aggregated(ctx);
	__uks_damon_kdamond_split_regions(ctx);
}

static void run_stepped(struct th_result *_th_r, uint64_t seed, struct verdict *v,
			unsigned long *sig)
{
	struct uks_damon_synth *s = make_space(1000);
	struct uks_damon_ctx *ctx;
	struct damon_target *t;
	struct damon_region *r;
	unsigned long sz_limit;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	uks_damon_set_seed(ctx, seed);
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	ASSERT_EQ(0, uks_damon_add_target(ctx, 1, s, NULL));
	ctx->primitive->init(ctx);
	t = list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
	ASSERT_GE(t->nr_regions, 8U);	/* about min_nr_regions */
	sz_limit = __uks_damon_region_sz_limit(ctx);
	for (int a = 0; a < 40; a++)
		step_aggregation(ctx, sz_limit, 20, a == 39 ? v : NULL);
	*sig = 0;
	damon_for_each_region(r, t)
		*sig = *sig * 31 + r->ar.start;
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST(stepped_run_finds_the_hot_range)
{
	struct verdict v;
	unsigned long sig;

	run_stepped(_th_r, 1, &v, &sig);
	TH_LOG("hot found %lu of %lu bytes, cold reported %lu, %u regions", v.hot_found,
	       HOT_E - HOT_S, v.cold_reported, v.nr_regions);
	ASSERT_GE(v.hot_found * 10, (HOT_E - HOT_S) * 9);
	ASSERT_LE(v.cold_reported * 10, HOT_E - HOT_S);
	ASSERT_LE(v.nr_regions, 1000U);
}

TEST(stepped_runs_with_one_seed_are_identical)
{
	struct verdict v1, v2;
	unsigned long sig1, sig2;

	run_stepped(_th_r, 99, &v1, &sig1);
	run_stepped(_th_r, 99, &v2, &sig2);
	ASSERT_EQ(sig1, sig2);
	ASSERT_EQ(v1.nr_regions, v2.nr_regions);
	ASSERT_EQ(v1.hot_found, v2.hot_found);
}

TEST(synth_ground_truth_and_phases)
{
	struct uks_damon_synth *s;

	ASSERT_EQ(0, uks_damon_synth_create(&s));
	ASSERT_EQ(-EINVAL, uks_damon_synth_add_access(s, 0, 10, 1000));	/* no phase */
	ASSERT_EQ(0, uks_damon_synth_add_mapping(s, 0, 100));
	ASSERT_EQ(-EINVAL, uks_damon_synth_add_mapping(s, 50, 200));	/* overlap */
	ASSERT_EQ(0, uks_damon_synth_add_phase(s, 2));
	ASSERT_EQ(0, uks_damon_synth_add_access(s, 0, 10, 1000));
	ASSERT_EQ(0, uks_damon_synth_add_phase(s, 1));
	ASSERT_EQ(0, uks_damon_synth_add_access(s, 50, 60, 500));
	ASSERT_EQ(-EINVAL, uks_damon_synth_add_access(s, 50, 60, 1001));
	ASSERT_EQ(0U, uks_damon_synth_phase(s));
	ASSERT_EQ(1000, uks_damon_synth_access_permille(s, 5));
	ASSERT_EQ(0, uks_damon_synth_access_permille(s, 55));
	ASSERT_TRUE(__uks_damon_synth_sample(s, 9, 123));
	ASSERT_FALSE(__uks_damon_synth_sample(s, 10, 0));
	uks_damon_synth_destroy(s);
}

/* ------------------------------------------------ the monitor thread */

struct agg_seen {
	int aggregations;
	struct verdict v;
	int stop_after;
};

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct agg_seen *seen = uks_damon_callback_private(ctx);

	seen->aggregations++;
	judge(list_first_entry(&ctx->adaptive_targets, struct damon_target, list), &seen->v);
	return seen->stop_after && seen->aggregations >= seen->stop_after;
}

TEST_TIMEOUT(thread_finds_the_hot_range, 60)
{
	struct uks_damon_synth *s = make_space(1000);
	struct agg_seen seen = { .stop_after = 30 };
	struct uks_damon_callback cb = { .priv = &seen,
					 .after_aggregation = after_aggregation };
	struct uks_damon_ctx *ctx;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	ASSERT_STREQ("synthetic", uks_damon_primitive_name(ctx));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 1000, 20000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_add_target(ctx, 7, s, NULL));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	ASSERT_GT(uks_damon_kdamond_pid(ctx), 0);
	ASSERT_EQ(-EBUSY, uks_damon_start(&ctx, 1));
	ASSERT_EQ(-EBUSY, uks_damon_set_attrs(ctx, 1, 2, 3, 4, 5));
	ASSERT_EQ(-EBUSY, uks_damon_set_targets(ctx, NULL, 0));
	ASSERT_EQ(-EBUSY, uks_damon_set_primitive(ctx, "synthetic"));
	/* the after_aggregation hook stops it after 30 aggregations */
	for (int i = 0; i < 600 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	ASSERT_EQ(-1, uks_damon_kdamond_pid(ctx));
	ASSERT_EQ(-EPERM, uks_damon_stop(&ctx, 1));
	ASSERT_EQ(30, seen.aggregations);
	TH_LOG("hot found %lu, cold reported %lu, %u regions", seen.v.hot_found,
	       seen.v.cold_reported, seen.v.nr_regions);
	ASSERT_GE(seen.v.hot_found * 10, (HOT_E - HOT_S) * 9);
	ASSERT_LE(seen.v.cold_reported * 10, HOT_E - HOT_S);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
}

TEST(no_targets_ends_at_once)
{
	struct uks_damon_ctx *ctx;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	ASSERT_EQ(-EPERM, uks_damon_stop(&ctx, 1));	/* off when off */
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));		/* 5.15 allows it */
	for (int i = 0; i < 2000 && uks_damon_is_running(ctx); i++)
		usleep(10000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	ASSERT_EQ(-EPERM, uks_damon_stop(&ctx, 1));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));		/* and again */
	uks_damon_ctx_destroy(ctx);
}

static int before_terminate(struct uks_damon_ctx *ctx)
{
	return uks_damon_destroy_targets(ctx);	/* what 5.15's debugfs does */
}

TEST_TIMEOUT(stop_is_prompt_and_two_contexts_run, 60)
{
	struct uks_damon_synth *s1 = make_space(1000), *s2 = make_space(500);
	struct uks_damon_callback cb = { .before_terminate = before_terminate };
	struct uks_damon_ctx *ctxs[2];
	struct timespec a, b;
	unsigned long ids[1];

	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, uks_damon_ctx_create(&ctxs[i]));
		ASSERT_EQ(0, uks_damon_set_primitive(ctxs[i], "synthetic"));
		/*
		 * A 100 s sampling interval: stop must not wait for it.  Bound
		 * at 20 s below, far from both, so a loaded machine's delays
		 * cannot fail it and a stop that sleeps the interval out can.
		 */
		ASSERT_EQ(0, uks_damon_set_attrs(ctxs[i], 100000000, 200000000, 600000000, 10, 1000));
		uks_damon_set_callback(ctxs[i], &cb);
	}
	ASSERT_EQ(0, uks_damon_add_target(ctxs[0], 1, s1, NULL));
	ASSERT_EQ(0, uks_damon_add_target(ctxs[1], 2, s2, NULL));
	ASSERT_EQ(0, uks_damon_start(ctxs, 2));
	ASSERT_NE(uks_damon_kdamond_pid(ctxs[0]), uks_damon_kdamond_pid(ctxs[1]));
	ASSERT_EQ(1, uks_damon_target_ids(ctxs[1], ids, 1));
	ASSERT_EQ(2UL, ids[0]);
	usleep(20000);
	clock_gettime(CLOCK_MONOTONIC, &a);
	ASSERT_EQ(0, uks_damon_stop(ctxs, 2));
	clock_gettime(CLOCK_MONOTONIC, &b);
	ASSERT_LT(b.tv_sec - a.tv_sec, 20);
	ASSERT_EQ(0, uks_damon_target_ids(ctxs[0], ids, 1));	/* destroyed at the end */
	for (int i = 0; i < 2; i++)
		uks_damon_ctx_destroy(ctxs[i]);
	uks_damon_synth_destroy(s1);
	uks_damon_synth_destroy(s2);
}

TEST_TIMEOUT(damon_aggregated_in_a_trace_instance, 60)
{
	struct uks_damon_synth *s = make_space(1000);
	struct agg_seen seen = { .stop_after = 5 };
	struct uks_damon_callback cb = { .priv = &seen,
					 .after_aggregation = after_aggregation };
	static char buf[1 << 20];
	struct uks_damon_ctx *ctx;
	struct uks_trace *tr;
	unsigned long id, st, en;
	unsigned int nr, acc;
	char *line;
	int lines = 0;

	ASSERT_EQ(0, uks_trace_create(NULL, &tr));
	ASSERT_GT(uks_tracefs_read_all(tr, "events/damon/damon_aggregated/format", buf,
				       sizeof(buf)), 0);
	ASSERT_NONNULL(strstr(buf, "field:unsigned long target_id;\toffset:8;\tsize:8;\tsigned:0;"));
	ASSERT_NONNULL(strstr(buf, "field:unsigned int nr_regions;\toffset:16;\tsize:4;\tsigned:0;"));
	ASSERT_NONNULL(strstr(buf, "field:unsigned long start;\toffset:24;\tsize:8;\tsigned:0;"));
	ASSERT_NONNULL(strstr(buf, "field:unsigned long end;\toffset:32;\tsize:8;\tsigned:0;"));
	ASSERT_NONNULL(strstr(buf, "field:unsigned int nr_accesses;\toffset:40;\tsize:4;\tsigned:0;"));
	ASSERT_NONNULL(strstr(buf, "print fmt: \"target_id=%lu nr_regions=%u %lu-%lu: %u\""));
	ASSERT_EQ(0, uks_tracefs_write_str(tr, "events/damon/damon_aggregated/enable", "1", 0));

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 1000, 20000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_add_target(ctx, 4242, s, NULL));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 1500 && uks_damon_is_running(ctx); i++)
		usleep(20000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	ASSERT_GT(uks_tracefs_read_all(tr, "trace", buf, sizeof(buf)), 0);
	for (line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
		char *p = strstr(line, " damon_aggregated: ");

		if (!p)
			continue;
		ASSERT_NONNULL(strstr(line, "kdamond.0-"));
		ASSERT_EQ(5, sscanf(p, " damon_aggregated: target_id=%lu nr_regions=%u %lu-%lu: %u",
				    &id, &nr, &st, &en, &acc));
		ASSERT_EQ(4242UL, id);
		ASSERT_LT(st, en);
		ASSERT_LE(acc, 28U);	/* 20 samples; the coarse clock ticks 4 ms */
		lines++;
	}
	ASSERT_GE(lines, 5 * 3);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
	uks_trace_destroy(tr);
}

TEST_HARNESS_MAIN
