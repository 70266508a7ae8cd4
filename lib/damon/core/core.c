// SPDX-License-Identifier: MIT
/*
 * DAMON core: contexts, targets, regions, and the region adjustments of
 * Linux 5.15's mm/damon/core.c (merge, split, reset, the size limit).
 *
 * What and why.  A region is [start, end) with the access count of the
 * current aggregation interval.  On every aggregation the monitor thread
 * (kdamond.c) merges neighbours whose counts differ by at most a tenth of
 * the largest count and whose joint size stays under the size limit
 * (total size / min_nr_regions), emits damon:damon_aggregated per region,
 * zeroes the counts and splits every region into two or three pieces at
 * random points.  These are 5.15's rules exactly, with two fixes that
 * later kernels made too:
 *  - the random numbers are 64-bit: 5.15's damon_rand() used
 *    prandom_u32_max(), so a sampling address or split point in a region
 *    over 4 GiB only ever landed in its first 4 GiB;
 *  - the "regions did not change since the last split" counter that picks
 *    three sub-regions instead of two is per context; 5.15 kept it in a
 *    function-static variable shared by every context.
 * Each context has its own random generator (xorshift64*), seedable, so a
 * run over the synthetic primitive is reproducible.
 *
 * Regions come from the uks slab allocator (the "damon_region" cache,
 * created once per process, as the kernel creates its caches at boot).
 *
 * Lock order: ctx->lock -> the slab allocator's locks.  Region lists are
 * not locked: the monitor thread owns them while the context runs, the
 * caller while it does not (see damon.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/kscan.h"
#include "core/mem_avail.h"
#include "damon/damon.h"

#define UKS_CREATE_TRACE_POINTS
#include "damon/core/events.h"

static struct uks_kmem_cache *region_cache;
static pthread_once_t region_cache_once = PTHREAD_ONCE_INIT;

static void region_cache_init(void)
{
	region_cache = uks_kmem_cache_create("damon_region", sizeof(struct damon_region),
					     0, 0, NULL);
}

/* ------------------------------------------------------------- regions */

struct damon_region *__uks_damon_new_region(unsigned long start, unsigned long end)
{
	struct damon_region *r;

	pthread_once(&region_cache_once, region_cache_init);
	if (!region_cache)
		return NULL;
	r = uks_kmem_cache_alloc(region_cache);
	if (!r)
		return NULL;
	r->ar.start = start;
	r->ar.end = end;
	r->sampling_addr = start;
	r->nr_accesses = 0;
	r->age = 0;
	r->last_nr_accesses = 0;
	INIT_LIST_HEAD(&r->list);
	return r;
}

void __uks_damon_add_region(struct damon_region *r, struct damon_target *t)
{
	list_add_tail(&r->list, &t->regions_list);
	t->nr_regions++;
}

void __uks_damon_insert_region(struct damon_region *r, struct damon_region *prev,
			       struct damon_region *next, struct damon_target *t)
{
	__list_add(&r->list, &prev->list, &next->list);
	t->nr_regions++;
}

void __uks_damon_destroy_region(struct damon_region *r, struct damon_target *t)
{
	list_del(&r->list);
	t->nr_regions--;
	uks_kmem_cache_free(region_cache, r);
}

/* ------------------------------------------------------------- targets */

struct damon_target *__uks_damon_new_target(unsigned long id)
{
	struct damon_target *t = uks_kzalloc(sizeof(struct uks_damon_target));

	if (!t)
		return NULL;
	t->id = id;
	INIT_LIST_HEAD(&t->regions_list);
	INIT_LIST_HEAD(&t->list);
	return t;
}

void __uks_damon_add_target(struct uks_damon_ctx *ctx, struct damon_target *t)
{
	list_add_tail(&t->list, &ctx->adaptive_targets);
}

void __uks_damon_destroy_target(struct damon_target *t)
{
	struct damon_region *r, *next;

	damon_for_each_region_safe(r, next, t)
		__uks_damon_destroy_region(r, t);
	/*
	 * A monitor's before_terminate may destroy its targets before the
	 * primitive's cleanup runs (the debugfs files do, as in 5.15): the
	 * primitive's files and memory go with the target.
	 */
	if (t->pstate && t->pstate_free)
		t->pstate_free(t->pstate);
	list_del(&t->list);
	uks_kfree(t);
}

unsigned int __uks_damon_nr_targets(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	unsigned int nr = 0;

	damon_for_each_target(t, ctx)
		nr++;
	return nr;
}

/* ------------------------------------------------------------- contexts */

/**
 * uks_damon_ctx_create - a monitoring context with 5.15's defaults
 * @out:	the context
 *
 * Attributes 5000 us / 100000 us / 60 s, 10..1000 regions, no targets,
 * the default primitive.  Return: 0 or -ENOMEM.
 */
UKS_EXPORT int uks_damon_ctx_create(struct uks_damon_ctx **out)
{
	struct uks_damon_ctx *ctx = uks_kzalloc(sizeof(*ctx));
	pthread_condattr_t ca;

	if (!ctx)
		return -ENOMEM;
	ctx->sample_interval = 5 * 1000;
	ctx->aggr_interval = 100 * 1000;
	ctx->primitive_update_interval = 60 * 1000 * 1000;
	ctx->min_nr_regions = 10;
	ctx->max_nr_regions = 1000;
	ctx->min_region = DAMON_MIN_REGION_DEFAULT;
	/* 5.15 sets the baselines here only, never at start. */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ctx->last_aggregation);
	ctx->last_primitive_update = ctx->last_aggregation;
	pthread_mutex_init(&ctx->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);	/* kdamond_usleep's clock */
	pthread_cond_init(&ctx->wake, &ca);
	pthread_condattr_destroy(&ca);
	INIT_LIST_HEAD(&ctx->adaptive_targets);
	__uks_damos_init_ctx(ctx);
	uks_damon_set_seed(ctx, (uint64_t)ctx->last_aggregation.tv_nsec ^
			   (uint64_t)(uintptr_t)ctx);
	*out = ctx;
	return 0;
}

/**
 * uks_damon_ctx_destroy - stop @ctx if it runs and free it with its targets
 * @ctx:	the context, or NULL
 */
UKS_EXPORT void uks_damon_ctx_destroy(struct uks_damon_ctx *ctx)
{
	struct damon_target *t, *next;

	if (!ctx)
		return;
	uks_damon_stop(&ctx, 1);
	/* Join a thread that ended on its own. */
	if (ctx->has_thread) {
		__uks_damon_join(ctx, ctx->thread);
		ctx->has_thread = false;
	}
	damon_for_each_target_safe(t, next, ctx)
		__uks_damon_destroy_target(t);
	__uks_damos_free_ctx(ctx);
	pthread_cond_destroy(&ctx->wake);
	pthread_mutex_destroy(&ctx->lock);
	uks_kfree(ctx);
}

/**
 * uks_damon_set_attrs - set the monitoring attributes (5.15's damon_set_attrs)
 * @ctx:	the context
 * @sample_us:	sampling interval in microseconds
 * @aggr_us:	aggregation interval
 * @update_us:	primitive update interval
 * @min_nr_regions: at least 3
 * @max_nr_regions: at least @min_nr_regions
 *
 * Zero intervals are accepted, as in 5.15.
 * Return: 0, -EBUSY while @ctx runs, -EINVAL for bad region counts.
 */
UKS_EXPORT int uks_damon_set_attrs(struct uks_damon_ctx *ctx, unsigned long sample_us,
				   unsigned long aggr_us, unsigned long update_us,
				   unsigned long min_nr_regions, unsigned long max_nr_regions)
{
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->running)
		ret = -EBUSY;
	else if (min_nr_regions < 3 || min_nr_regions > max_nr_regions)
		ret = -EINVAL;
	if (!ret) {
		ctx->sample_interval = sample_us;
		ctx->aggr_interval = aggr_us;
		ctx->primitive_update_interval = update_us;
		ctx->min_nr_regions = min_nr_regions;
		ctx->max_nr_regions = max_nr_regions;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/** uks_damon_get_attrs - read the attributes of @ctx into @attrs */
UKS_EXPORT void uks_damon_get_attrs(struct uks_damon_ctx *ctx, struct uks_damon_attrs *attrs)
{
	pthread_mutex_lock(&ctx->lock);
	attrs->sample_us = ctx->sample_interval;
	attrs->aggr_us = ctx->aggr_interval;
	attrs->update_us = ctx->primitive_update_interval;
	attrs->min_nr_regions = ctx->min_nr_regions;
	attrs->max_nr_regions = ctx->max_nr_regions;
	pthread_mutex_unlock(&ctx->lock);
}

/**
 * uks_damon_set_callback - install the hooks of @cb (copied), or none if NULL
 * @ctx:	a context that does not run
 * @cb:		the hooks
 */
UKS_EXPORT void uks_damon_set_callback(struct uks_damon_ctx *ctx,
				       const struct uks_damon_callback *cb)
{
	if (cb)
		ctx->callback = *cb;
	else
		memset(&ctx->callback, 0, sizeof(ctx->callback));
}

/** uks_damon_callback_private - Return: the @private of the installed hooks */
UKS_EXPORT void *uks_damon_callback_private(struct uks_damon_ctx *ctx)
{
	return ctx->callback.priv;
}

/**
 * uks_damon_set_seed - seed the random generator of @ctx
 * @ctx:	a context that does not run
 * @seed:	any value (0 is mapped to a fixed non-zero state)
 */
UKS_EXPORT void uks_damon_set_seed(struct uks_damon_ctx *ctx, uint64_t seed)
{
	/* splitmix64 once, so nearby seeds give unrelated streams */
	seed += 0x9e3779b97f4a7c15ULL;
	seed = (seed ^ (seed >> 30)) * 0xbf58476d1ce4e5b9ULL;
	seed = (seed ^ (seed >> 27)) * 0x94d049bb133111ebULL;
	seed ^= seed >> 31;
	ctx->rnd = seed ? seed : 0x2545f4914f6cdd1dULL;
}

/* damon_rand(): uniform in [l, r), 64-bit (5.15 truncated r - l to 32 bits). */
unsigned long __uks_damon_rand(struct uks_damon_ctx *ctx, unsigned long l, unsigned long r)
{
	uint64_t x = ctx->rnd;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	ctx->rnd = x;
	x *= 0x2545f4914f6cdd1dULL;
	if (r <= l)
		return l;
#ifdef __SIZEOF_INT128__
	return l + (unsigned long)(((unsigned __int128)x * (r - l)) >> 64);
#else
	return l + (unsigned long)(x % (r - l));
#endif
}

/* ------------------------------------------------------------- targets API */

/**
 * uks_damon_add_target - add one target
 * @ctx:	a context that does not run
 * @id:		the target id (a pid for the vaddr primitives)
 * @priv:	the caller's data (the struct uks_damon_synth for "synthetic")
 * @out:	the target, or NULL if not wanted
 *
 * Return: 0, -EBUSY while @ctx runs, -ENOMEM.
 */
UKS_EXPORT int uks_damon_add_target(struct uks_damon_ctx *ctx, unsigned long id, void *priv,
				    struct uks_damon_target **out)
{
	struct damon_target *t;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->running) {
		ret = -EBUSY;
		goto out;
	}
	t = __uks_damon_new_target(id);
	if (!t) {
		ret = -ENOMEM;
		goto out;
	}
	t->priv = priv;
	__uks_damon_add_target(ctx, t);
	if (out)
		*out = (struct uks_damon_target *)t;
out:
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * uks_damon_set_targets - replace the targets (5.15's damon_set_targets)
 * @ctx:	a context that does not run
 * @ids:	the new target ids
 * @nr:		their number (0 removes every target)
 *
 * Return: 0, -EBUSY while @ctx runs, -ENOMEM (no targets are left then).
 */
UKS_EXPORT int uks_damon_set_targets(struct uks_damon_ctx *ctx, const unsigned long *ids,
				     unsigned int nr)
{
	struct damon_target *t, *next;
	int ret = 0;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->running) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	damon_for_each_target_safe(t, next, ctx)
		__uks_damon_destroy_target(t);
	for (unsigned int i = 0; i < nr; i++) {
		t = __uks_damon_new_target(ids[i]);
		if (!t) {
			damon_for_each_target_safe(t, next, ctx)
				__uks_damon_destroy_target(t);
			ret = -ENOMEM;
			break;
		}
		__uks_damon_add_target(ctx, t);
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/**
 * uks_damon_destroy_targets - remove every target of @ctx
 * @ctx:	the context
 *
 * Allowed while @ctx does not run, and from its own monitor thread (the
 * before_terminate hook, as 5.15's debugfs does).
 * Return: 0 or -EBUSY.
 */
UKS_EXPORT int uks_damon_destroy_targets(struct uks_damon_ctx *ctx)
{
	struct damon_target *t, *next;
	pthread_mutex_lock(&ctx->lock);
	/* the monitor thread itself may: it is past its last use of them */
	if (ctx->running && __uks_damon_current != ctx) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	damon_for_each_target_safe(t, next, ctx)
		__uks_damon_destroy_target(t);
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/**
 * uks_damon_target_ids - copy up to @max target ids of @ctx into @ids
 * Safe while @ctx runs.  Return: the number of targets (may exceed @max).
 */
UKS_EXPORT int uks_damon_target_ids(struct uks_damon_ctx *ctx, unsigned long *ids,
				    unsigned int max)
{
	struct damon_target *t;
	int nr = 0;

	pthread_mutex_lock(&ctx->lock);
	damon_for_each_target(t, ctx) {
		if ((unsigned int)nr < max)
			ids[nr] = t->id;
		nr++;
	}
	pthread_mutex_unlock(&ctx->lock);
	return nr;
}

/**
 * uks_damon_sprint_target_ids - the target_ids text: "1 2 3\n", or "\n"
 * @ctx:	the context
 * @buf:	output, NUL-terminated
 * @len:	its size
 *
 * Return: the text's length (truncated to @len - 1), or -EINVAL if @len is 0.
 */
UKS_EXPORT ssize_t uks_damon_sprint_target_ids(struct uks_damon_ctx *ctx, char *buf, size_t len)
{
	struct damon_target *t;
	size_t written = 0;

	if (!len)
		return -EINVAL;
	buf[0] = '\0';
	pthread_mutex_lock(&ctx->lock);
	damon_for_each_target(t, ctx) {
		int n = snprintf(buf + written, len - written, "%lu ", t->id);

		if (n < 0 || (size_t)n >= len - written) {
			written = len - 1;
			break;
		}
		written += (size_t)n;
	}
	pthread_mutex_unlock(&ctx->lock);
	if (written)
		written--;	/* the last space becomes the newline */
	if (written + 1 < len) {
		buf[written++] = '\n';
		buf[written] = '\0';
	}
	return (ssize_t)written;
}

/**
 * uks_damon_parse_target_ids - 5.15's str_to_target_ids
 * @str:	"12 35 46": numbers separated by white space
 * @ids:	the numbers, up to @max
 * @max:	their room (debugfs uses 32)
 *
 * Parsing stops at the first token that does not start with a number:
 * "12 35 abc 46" gives 12 35, "123abc" gives 123, "a123" nothing.  The
 * numbers are the kernel's "%lu": no sign ("-1" and "+7" end the list),
 * and one past ULONG_MAX wraps around.
 * Return: the number of ids.
 */
UKS_EXPORT int uks_damon_parse_target_ids(const char *str, unsigned long *ids, int max)
{
	unsigned long id;
	int nr = 0;

	while (nr < max && kscan_ulong(&str, &id))
		ids[nr++] = id;
	return nr;
}

/**
 * uks_damon_for_each_target - call @fn for each target of @ctx
 * For a context that does not run, or from its hooks.
 * Return: 0 or the first non-zero value of @fn.
 */
UKS_EXPORT int uks_damon_for_each_target(struct uks_damon_ctx *ctx,
					 int (*fn)(struct uks_damon_target *t, void *arg),
					 void *arg)
{
	struct damon_target *t, *next;

	damon_for_each_target_safe(t, next, ctx) {
		int ret = fn((struct uks_damon_target *)t, arg);

		if (ret)
			return ret;
	}
	return 0;
}

/** uks_damon_target_id - Return: the id of @t */
UKS_EXPORT unsigned long uks_damon_target_id(const struct uks_damon_target *t)
{
	return t->t.id;
}

/** uks_damon_target_nr_regions - Return: the number of regions of @t */
UKS_EXPORT unsigned int uks_damon_target_nr_regions(const struct uks_damon_target *t)
{
	return t->t.nr_regions;
}

/**
 * uks_damon_target_regions - copy up to @max regions of @t, in address order
 * Return: the number of regions of @t (may exceed @max).
 */
UKS_EXPORT int uks_damon_target_regions(const struct uks_damon_target *t,
					struct uks_damon_region_info *out, unsigned int max)
{
	const struct damon_region *r;
	unsigned int i = 0;

	list_for_each_entry(r, &t->t.regions_list, list) {
		if (i < max) {
			out[i].start = r->ar.start;
			out[i].end = r->ar.end;
			out[i].nr_accesses = r->nr_accesses;
			out[i].age = r->age;
		}
		i++;
	}
	return (int)i;
}

/* ------------------------------------------------- 5.15's region adjustment */

void __uks_damon_merge_two_regions(struct damon_target *t, struct damon_region *l,
				   struct damon_region *r)
{
	unsigned long sz_l = damon_sz_region(l), sz_r = damon_sz_region(r);

	l->nr_accesses = (unsigned int)((l->nr_accesses * sz_l + r->nr_accesses * sz_r) /
					(sz_l + sz_r));
	l->age = (unsigned int)((l->age * sz_l + r->age * sz_r) / (sz_l + sz_r));
	l->ar.end = r->ar.end;
	__uks_damon_destroy_region(r, t);
}

static unsigned int diff_of(unsigned int a, unsigned int b)
{
	return a > b ? a - b : b - a;
}

void __uks_damon_merge_regions_of(struct damon_target *t, unsigned int thres,
				  unsigned long sz_limit)
{
	struct damon_region *r, *prev = NULL, *next;

	damon_for_each_region_safe(r, next, t) {
		/* 6.12: a region ages while its count holds within the threshold */
		if (diff_of(r->nr_accesses, r->last_nr_accesses) > thres)
			r->age = 0;
		else
			r->age++;
		if (prev && prev->ar.end == r->ar.start &&
		    diff_of(prev->nr_accesses, r->nr_accesses) <= thres &&
		    damon_sz_region(prev) + damon_sz_region(r) <= sz_limit)
			__uks_damon_merge_two_regions(t, prev, r);
		else
			prev = r;
	}
}

void __uks_damon_kdamond_merge_regions(struct uks_damon_ctx *ctx, unsigned int thres,
				       unsigned long sz_limit)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx)
		__uks_damon_merge_regions_of(t, thres, sz_limit);
}

void __uks_damon_split_region_at(struct uks_damon_ctx *ctx, struct damon_target *t,
				 struct damon_region *r, unsigned long sz_r)
{
	struct damon_region *n = __uks_damon_new_region(r->ar.start + sz_r, r->ar.end);

	if (!n)
		return;
	n->age = r->age;
	n->last_nr_accesses = r->last_nr_accesses;
	r->ar.end = n->ar.start;
	__uks_damon_insert_region(n, r, damon_next_region(r), t);
}

void __uks_damon_split_regions_of(struct uks_damon_ctx *ctx, struct damon_target *t,
				  int nr_subs)
{
	struct damon_region *r, *next;
	unsigned long min = ctx->min_region;

	damon_for_each_region_safe(r, next, t) {
		unsigned long sz_region = damon_sz_region(r);

		for (int i = 0; i < nr_subs - 1 && sz_region > 2 * min; i++) {
			/* 10% .. 90% of the (remaining left) piece */
			unsigned long sz_sub = DAMON_ALIGN_DOWN(
				__uks_damon_rand(ctx, 1, 10) * sz_region / 10, min);

			if (sz_sub == 0 || sz_sub >= sz_region)
				continue;
			__uks_damon_split_region_at(ctx, t, r, sz_sub);
			sz_region = sz_sub;
		}
	}
}

/* 8192 regions: half a MiB of new ones when they double */
#define SPLIT_CHECK_MIN	8192u

void __uks_damon_kdamond_split_regions(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	unsigned int nr_regions = 0;
	int nr_subregions = 2;

	damon_for_each_target(t, ctx)
		nr_regions += t->nr_regions;
	if (nr_regions > ctx->max_nr_regions / 2)
		return;
	/* Only three sub-regions if the count did not change since last time. */
	if (ctx->last_nr_regions == nr_regions && nr_regions < ctx->max_nr_regions / 3)
		nr_subregions = 3;
	/*
	 * max_nr_regions is the user's number and may be far more than fits:
	 * a split that could not allocate its new regions waits (checked
	 * only from SPLIT_CHECK_MIN regions on, to keep /proc reads off the
	 * common small case).
	 */
	if (nr_regions >= SPLIT_CHECK_MIN &&
	    __uks_mem_may_allocate_array((size_t)nr_regions * (nr_subregions - 1),
					 sizeof(struct damon_region)))
		return;
	damon_for_each_target(t, ctx)
		__uks_damon_split_regions_of(ctx, t, nr_subregions);
	ctx->last_nr_regions = nr_regions;
}

void __uks_damon_kdamond_reset_aggregated(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;

	damon_for_each_target(t, ctx) {
		damon_for_each_region(r, t) {
			uks_trace_damon_damon_aggregated(t->id, t->nr_regions, r->ar.start,
							 r->ar.end, r->nr_accesses);
			r->last_nr_accesses = r->nr_accesses;
			r->nr_accesses = 0;
		}
	}
}

unsigned long __uks_damon_region_sz_limit(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;
	unsigned long sz = 0;

	damon_for_each_target(t, ctx)
		damon_for_each_region(r, t)
			sz += damon_sz_region(r);
	if (ctx->min_nr_regions)
		sz /= ctx->min_nr_regions;
	if (sz < ctx->min_region)
		sz = ctx->min_region;
	return sz;
}
