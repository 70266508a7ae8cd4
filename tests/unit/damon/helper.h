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
