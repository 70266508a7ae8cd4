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
 * much CPU the toucher happened to get.
 *
 * A sampling window is the time between a prepare and the check after
 * it: only a touch inside it can be seen.  The count is read right after
 * each prepare (after_sampling) and right before each check (the
 * primitive's check, wrapped by toucher_watch_checks()), so a window's
 * reads bound it exactly, however long the monitor is preempted between
 * its check and the next prepare.  A sample "ran" when the toucher
 * touched @per_pass pages (the whole buffer) between its two reads: any
 * @per_pass consecutive touches cover every page once, the sampled ones
 * too, inside the window.  A correct primitive sees the buffer accessed
 * in every sample that ran.
 */
struct toucher_samples {
	const volatile unsigned long *pages;
	unsigned long per_pass;
	unsigned long last;
	bool open;		/* a window was opened by the last read */
	bool last_ran;		/* the window closed last was run through */
	unsigned int samples;	/* this aggregation's, */
	unsigned int ran;	/* and those the toucher ran through */
};

static inline void toucher_read(struct toucher_samples *ts, bool opens)
{
	unsigned long now = __atomic_load_n(ts->pages, __ATOMIC_ACQUIRE);

	if (ts->open) {
		ts->last_ran = now - ts->last >= ts->per_pass;
		ts->samples++;
		ts->ran += ts->last_ran;
	}
	ts->last = now;
	ts->open = opens;
}

/* call from after_sampling: opens the window */
static inline void toucher_after_sampling(struct toucher_samples *ts)
{
	toucher_read(ts, true);
}

/* call from after_aggregation, before judging; toucher_next() after */
static inline void toucher_after_aggregation(struct toucher_samples *ts)
{
	if (ts->open)		/* no wrapped check: close it here */
		toucher_read(ts, false);
}

static inline void toucher_next(struct toucher_samples *ts)
{
	ts->samples = ts->ran = 0;
}

/* One monitored toucher per test process: each test runs in a child. */
static struct toucher_samples *toucher_checked;
static unsigned int (*toucher_inner_check)(struct uks_damon_ctx *ctx);
static struct damon_primitive toucher_primitive;

static inline unsigned int toucher_check(struct uks_damon_ctx *ctx)
{
	toucher_read(toucher_checked, false);	/* closes the window */
	return toucher_inner_check(ctx);
}

/*
 * After uks_damon_set_primitive() and before uks_damon_start(): the
 * context's check reads @ts first, so that its windows end where the
 * primitive's do.
 */
static inline void toucher_watch_checks(struct uks_damon_ctx *ctx, struct toucher_samples *ts)
{
	toucher_primitive = *ctx->primitive;
	toucher_inner_check = toucher_primitive.check_accesses;
	toucher_primitive.check_accesses = toucher_check;
	toucher_checked = ts;
	ctx->primitive = &toucher_primitive;
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
