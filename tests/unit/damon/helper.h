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
