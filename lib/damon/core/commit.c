// SPDX-License-Identifier: MIT
/*
 * Changing a context while it monitors (6.12's damon_commit_ctx, as the
 * sysfs "commit" command uses it), fixed initial regions (damon_set_regions)
 * and the intervals goal of 6.15 (stored for the interval tuner).
 *
 * Why through the monitor thread.  The targets and their regions belong to
 * the monitor thread while a context runs (damon.h), so a commit is posted
 * to the context and applied by that thread at the top of its loop, between
 * two samples, where nothing holds a region: what the kernel does with
 * damon_call().  Posting one ends the sampling sleep in progress (that
 * sample is checked early), so a commit never waits out a long sampling
 * interval.  The poster waits for the result; if the monitor ends
 * first the commit is dropped and the poster gets -EINVAL (the kernel's
 * answer for a kdamond that is not running).  Monitoring never stops for a
 * commit.
 *
 * What a commit changes, as 6.12: the attributes (intervals, region
 * bounds) and the intervals goal; the targets by position: the i-th target
 * takes the i-th new id (a new process: the primitive opens it again) and,
 * when given ranges, those as its regions, else keeps its regions (the next
 * update fits them to the process); targets past the new count go away and
 * new ones are added (the primitive's init sets them up, which only a
 * primitive whose init may run again, ->init_again, allows).  The primitive
 * itself is not changed.
 *
 * Lock order: ctx->lock alone (the poster waits on ctx->wake under it); the
 * primitive's init runs without it.
 */
#include <errno.h>
#include <pthread.h>

#include <uks/slab.h>

#include "damon/damon.h"

/**
 * __uks_damon_set_intervals_goal - store the intervals goal of @ctx
 * @ctx:	the context
 * @goal:	access_bp, aggrs (0: no tuning), min/max_sample_us
 *
 * Only stored: the tuner reads ctx->intervals_goal.  Validate first with
 * __uks_damon_valid_intervals_goal().
 */
void __uks_damon_set_intervals_goal(struct uks_damon_ctx *ctx,
				    const struct damon_intervals_goal *goal)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->intervals_goal = *goal;
	pthread_mutex_unlock(&ctx->lock);
}

/* 6.15's damon_valid_intervals_goal(): aggrs 0 turns tuning off. */
bool __uks_damon_valid_intervals_goal(const struct damon_intervals_goal *goal,
				      unsigned long sample_us)
{
	if (!goal->aggrs)
		return true;
	if (goal->min_sample_us > goal->max_sample_us)
		return false;
	return goal->min_sample_us <= sample_us && sample_us <= goal->max_sample_us;
}

static bool intersects(const struct damon_region *r, const struct damon_addr_range *ar)
{
	return !(r->ar.end <= ar->start || ar->end <= r->ar.start);
}

/**
 * __uks_damon_set_regions - make @t's regions cover exactly @ranges
 * @ctx:	the context (DAMON_MIN_REGION)
 * @t:		a target the caller owns (not running, or the monitor thread)
 * @ranges:	sorted, not overlapping
 * @nr:		their number
 *
 * The kernel's damon_set_regions(): regions outside every range go away,
 * the ones that meet a range are stretched to its bounds (aligned to
 * DAMON_MIN_REGION), a range that meets none gets a new region.
 * Return: 0 or -ENOMEM.
 */
int __uks_damon_set_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
			    const struct damon_addr_range *ranges, unsigned int nr)
{
	unsigned long min = ctx->min_region;
	struct damon_region *r, *next;
	unsigned int i;

	damon_for_each_region_safe(r, next, t) {
		for (i = 0; i < nr; i++)
			if (intersects(r, &ranges[i]))
				break;
		if (i == nr)
			__uks_damon_destroy_region(r, t);
	}
	for (i = 0; i < nr; i++) {
		const struct damon_addr_range *ar = &ranges[i];
		struct damon_region *first = NULL, *last = NULL;
		struct list_head *pos = &t->regions_list;	/* insert before */

		damon_for_each_region(r, t) {
			if (intersects(r, ar)) {
				if (!first)
					first = r;
				last = r;
			}
			if (r->ar.start >= ar->end) {
				pos = &r->list;
				break;
			}
		}
		if (first) {
			first->ar.start = DAMON_ALIGN_DOWN(ar->start, min);
			last->ar.end = DAMON_ALIGN(ar->end, min);
			continue;
		}
		r = __uks_damon_new_region(DAMON_ALIGN_DOWN(ar->start, min),
					   DAMON_ALIGN(ar->end, min));
		if (!r)
			return -ENOMEM;
		__list_add(&r->list, pos->prev, pos);
		t->nr_regions++;
	}
	return 0;
}

static struct damon_target *nth_target(struct uks_damon_ctx *ctx, unsigned int n)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx)
		if (!n--)
			return t;
	return NULL;
}

/* On the monitor thread: apply @c.  Return: 0 or -errno. */
static int apply(struct uks_damon_ctx *ctx, const struct damon_commit *c)
{
	const struct damon_primitive *prim = ctx->primitive;
	unsigned int nr_old = __uks_damon_nr_targets(ctx), i;
	struct damon_target *t, *next;
	bool reinit = false;
	int ret = 0;

	if (!prim->init_again) {	/* refused before anything changes */
		if (c->nr_targets > nr_old)
			return -EOPNOTSUPP;
		for (i = 0; i < c->nr_targets; i++)
			if (nth_target(ctx, i)->id != c->targets[i].id)
				return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&ctx->lock);
	ctx->sample_interval = c->attrs.sample_us;
	ctx->aggr_interval = c->attrs.aggr_us;
	ctx->primitive_update_interval = c->attrs.update_us;
	ctx->min_nr_regions = c->attrs.min_nr_regions;
	ctx->max_nr_regions = c->attrs.max_nr_regions;
	ctx->intervals_goal = c->goal;
	i = 0;
	damon_for_each_target_safe(t, next, ctx) {
		if (i >= c->nr_targets) {
			__uks_damon_destroy_target(t);
			continue;
		}
		if (t->id != c->targets[i].id) {
			if (t->pstate && t->pstate_free)
				t->pstate_free(t->pstate);
			t->pstate = NULL;
			t->id = c->targets[i].id;
			reinit = true;
		}
		i++;
	}
	for (; i < c->nr_targets; i++) {
		t = __uks_damon_new_target(c->targets[i].id);
		if (!t) {
			ret = -ENOMEM;
			break;
		}
		__uks_damon_add_target(ctx, t);
		reinit = true;
	}
	pthread_mutex_unlock(&ctx->lock);
	for (i = 0; !ret && i < c->nr_targets; i++) {
		t = nth_target(ctx, i);
		if (t && c->targets[i].nr_ranges)
			ret = __uks_damon_set_regions(ctx, t, c->targets[i].ranges,
						      c->targets[i].nr_ranges);
	}
	if (reinit && prim->init)
		prim->init(ctx);	/* opens the new processes, regions where none */
	return ret;
}

/**
 * __uks_damon_apply_commit - the monitor thread applies a posted commit
 * @ctx:	its context
 *
 * Called at the top of each loop iteration; cheap when nothing is posted.
 */
void __uks_damon_apply_commit(struct uks_damon_ctx *ctx)
{
	struct damon_commit *c;

	pthread_mutex_lock(&ctx->lock);
	c = ctx->pending_commit;
	pthread_mutex_unlock(&ctx->lock);
	if (!c)
		return;
	c->ret = apply(ctx, c);
	pthread_mutex_lock(&ctx->lock);
	ctx->pending_commit = NULL;
	pthread_cond_broadcast(&ctx->wake);
	pthread_mutex_unlock(&ctx->lock);
}

/**
 * __uks_damon_commit - apply @c to @ctx while it monitors
 * @ctx:	a running context
 * @c:		what to apply; validated by the caller (attributes as
 *		uks_damon_set_attrs() and the kernel's damon_set_attrs() want
 *		them, targets' ranges sorted and apart)
 *
 * Waits until the monitor thread applied it (the sampling sleep in progress
 * is cut short: the monitor's work of one sample at most).  Must not be called from the monitor thread.
 * Return: 0; -EINVAL when @ctx does not run (or stopped before applying
 * it); -EBUSY when another commit is pending; -EOPNOTSUPP when targets
 * change under a primitive that cannot take new ones; -ENOMEM.
 */
int __uks_damon_commit(struct uks_damon_ctx *ctx, struct damon_commit *c)
{
	int ret;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->running) {
		pthread_mutex_unlock(&ctx->lock);
		return -EINVAL;
	}
	if (ctx->pending_commit) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	c->ret = 0;
	ctx->pending_commit = c;
	pthread_cond_broadcast(&ctx->wake);	/* cut the sampling sleep short */
	while (ctx->pending_commit == c && ctx->running)
		pthread_cond_wait(&ctx->wake, &ctx->lock);
	if (ctx->pending_commit == c) {		/* the monitor ended first */
		ctx->pending_commit = NULL;
		ret = -EINVAL;
	} else {
		ret = c->ret;
	}
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}
