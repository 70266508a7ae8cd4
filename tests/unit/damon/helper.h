/* SPDX-License-Identifier: MIT */
/* Helpers of the DAMON tests: a context with DAMON_MIN_REGION 1 (KUnit's). */
#ifndef UKS_TESTS_UNIT_DAMON_HELPER_H
#define UKS_TESTS_UNIT_DAMON_HELPER_H

#include <uks/slab.h>

#include "damon/damon.h"

static inline struct uks_damon_ctx *kunit_ctx(void)
{
	struct uks_damon_ctx *ctx = NULL;

	if (uks_damon_ctx_create(&ctx))
		return NULL;
	ctx->min_region = 1;	/* the KUnit builds' #define DAMON_MIN_REGION 1 */
	uks_damon_set_seed(ctx, 42);
	return ctx;
}

/*
 * Start a context on process @id with @primitive, attrs @a (sample, aggr,
 * update in us, min and max regions) and callbacks @cb (may be NULL).
 * Return: 0, or the first -errno (*@ctx is then NULL or not started).
 */
static inline int start_monitor(struct uks_damon_ctx **ctx, const char *primitive,
				const unsigned long a[5], unsigned long id,
				const struct uks_damon_callback *cb)
{
	int err = uks_damon_ctx_create(ctx);

	if (!err)
		err = uks_damon_set_primitive(*ctx, primitive);
	if (!err)
		err = uks_damon_set_attrs(*ctx, a[0], a[1], a[2], a[3], a[4]);
	if (!err)
		err = uks_damon_set_targets(*ctx, &id, 1);
	if (err)
		return err;
	if (cb)
		uks_damon_set_callback(*ctx, cb);
	return uks_damon_start(ctx, 1);
}

/*
 * The samples a busy toucher (a thread or child that writes or reads its
 * hot buffer page by page, in order, again and again, and counts the
 * pages) ran through, so that a test can judge an aggregation against the
 * samples in which there was something to see rather than against how
 * much CPU the toucher happened to get.  The count is read at each
 * after_sampling (right after prepare) and at after_aggregation (right
 * after the aggregation's last check): every sampling window lies between
 * two reads.  A sample "ran" when the toucher touched @per_pass pages (the
 * whole buffer) between them: any @per_pass consecutive touches cover
 * every page once, the sampled ones too.  Some of them may fall after the
 * window closed (the next prepare comes before the next read), so a judge
 * allows half: the sampled pages were touched in about ran / 2 windows at
 * least.
 */
struct toucher_samples {
	const volatile unsigned long *pages;
	unsigned long per_pass;
	unsigned long last;
	bool open;		/* a window was opened by the last read */
	unsigned int samples;	/* this aggregation's, */
	unsigned int ran;	/* and those the toucher ran through */
};

static inline void toucher_read(struct toucher_samples *ts, bool opens)
{
	unsigned long now = __atomic_load_n(ts->pages, __ATOMIC_ACQUIRE);

	if (ts->open) {
		ts->samples++;
		ts->ran += now - ts->last >= ts->per_pass;
	}
	ts->last = now;
	ts->open = opens;
}

/* call from after_sampling */
static inline void toucher_after_sampling(struct toucher_samples *ts)
{
	toucher_read(ts, true);
}

/* call from after_aggregation, before judging; toucher_next() after */
static inline void toucher_after_aggregation(struct toucher_samples *ts)
{
	toucher_read(ts, false);
}

static inline void toucher_next(struct toucher_samples *ts)
{
	ts->samples = ts->ran = 0;
}

static inline struct damon_region *nth_region(struct damon_target *t, unsigned int n)
{
	struct damon_region *r;
	unsigned int i = 0;

	damon_for_each_region(r, t)
		if (i++ == n)
			return r;
	return NULL;
}

#endif
