// SPDX-License-Identifier: MIT
/*
 * DAMOS, the interface: the schemes of a context (add, replace, update,
 * remove), what they are checked for, and their read side (parameters,
 * stats, tried regions, state) and the user_input goal feedback.  The
 * engine that applies them is schemes.c; the rules are 6.12's (see there).
 *
 * Why a lock of its own: the sysfs tree and the debugfs file change
 * schemes and read their stats while the context runs.  Lock order:
 * ctx->schemes_lock alone (never with ctx->lock or a tree's lock taken
 * inside it); the monitor thread holds it while it checks the watermarks
 * and applies the schemes, never while it sleeps or runs a hook, so every
 * function here may be called from any thread, hooks included, and may
 * wait for one application.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/damon.h"

static const char *const action_names[UKS_DAMOS_NR_ACTIONS] = {
	"willneed", "cold", "pageout", "hugepage", "nohugepage",
	"lru_prio", "lru_deprio", "migrate_hot", "migrate_cold", "stat",
};

/** uks_damos_action_name - Return: 6.12's keyword of @action, or NULL */
UKS_EXPORT const char *uks_damos_action_name(unsigned int action)
{
	return action < UKS_DAMOS_NR_ACTIONS ? action_names[action] : NULL;
}

/** uks_damos_action_from_name - Return: the action of keyword @name, or -EINVAL */
UKS_EXPORT int uks_damos_action_from_name(const char *name)
{
	for (unsigned int i = 0; i < UKS_DAMOS_NR_ACTIONS; i++)
		if (!strcmp(name, action_names[i]))
			return (int)i;
	return -EINVAL;
}

static int why_fail(char *why, size_t len, const char *msg)
{
	if (why && len)
		snprintf(why, len, "%s", msg);
	return -EINVAL;
}

/**
 * uks_damos_check_scheme - can @s be a scheme here?
 * @s:		the scheme
 * @why:	the reason when not (may be NULL)
 * @len:	room in @why
 *
 * Refused: an action the virtual-address primitives do not have or the
 * running kernel cannot do through process_madvise(); a pattern, goal or
 * watermark range whose minimum is above its maximum; a goal without a
 * target value; a filter of a paddr-only type.  An unknown watermark
 * metric is taken, as 6.12 takes it: the scheme then never activates.
 * Return: 0 or -EINVAL.
 */
UKS_EXPORT int uks_damos_check_scheme(const struct uks_damos_scheme *s, char *why, size_t len)
{
	const struct uks_damos_access_pattern *p = &s->pattern;
	int ret;

	if (why && len)
		why[0] = '\0';
	ret = __uks_damos_action_supported(s->action, why, len);
	if (ret)
		return ret;
	if (p->min_sz > p->max_sz || p->min_nr_accesses > p->max_nr_accesses ||
	    p->min_age > p->max_age)
		return why_fail(why, len, "a minimum of the access pattern is above its maximum");
	if (s->wmarks.high < s->wmarks.mid || s->wmarks.high < s->wmarks.low ||
	    s->wmarks.mid < s->wmarks.low)
		return why_fail(why, len, "watermarks must be high >= mid >= low");
	if (s->quota.nr_goals > UKS_DAMOS_MAX_GOALS)
		return why_fail(why, len, "too many quota goals");
	for (unsigned int i = 0; i < s->quota.nr_goals; i++) {
		if (s->quota.goals[i].metric >= UKS_DAMOS_NR_GOAL_METRICS)
			return why_fail(why, len, "unknown quota goal metric");
		if (!s->quota.goals[i].target_value)
			return why_fail(why, len, "a quota goal needs a target value");
	}
	if (s->nr_filters > UKS_DAMOS_MAX_FILTERS)
		return why_fail(why, len, "too many filters");
	for (unsigned int i = 0; i < s->nr_filters; i++) {
		const struct uks_damos_filter *f = &s->filters[i];

		if (f->type == UKS_DAMOS_FILTER_ADDR) {
			if (f->addr_start > f->addr_end)
				return why_fail(why, len, "an addr filter's start is above its end");
		} else if (f->type != UKS_DAMOS_FILTER_TARGET) {
			return why_fail(why, len,
					"anon, memcg and young filters are paddr's (not virtual addresses')");
		}
	}
	return 0;
}

/* ------------------------------------------------------------ the list */

void __uks_damos_init_ctx(struct uks_damon_ctx *ctx)
{
	pthread_mutex_init(&ctx->schemes_lock, NULL);
	INIT_LIST_HEAD(&ctx->schemes);
	ctx->nr_schemes = 0;
}

static void free_scheme(struct uks_damon_ctx *ctx, struct damos *d)
{
	list_del(&d->list);
	ctx->nr_schemes--;
	uks_kfree(d->tried);
	uks_kfree(d->building);
	uks_kfree(d);
}

void __uks_damos_free_ctx(struct uks_damon_ctx *ctx)
{
	struct damos *d, *next;

	list_for_each_entry_safe(d, next, &ctx->schemes, list)
		free_scheme(ctx, d);
	pthread_mutex_destroy(&ctx->schemes_lock);
}

static struct damos *new_scheme(const struct uks_damos_scheme *s)
{
	struct damos *d = uks_kzalloc(sizeof(*d));

	if (!d)
		return NULL;
	d->s = *s;
	d->activated = s->wmarks.metric == UKS_DAMOS_WMARK_NONE;
	INIT_LIST_HEAD(&d->list);
	return d;
}

static struct damos *nth_scheme(struct uks_damon_ctx *ctx, unsigned int idx)
{
	struct damos *d;

	damon_for_each_scheme(d, ctx)
		if (!idx--)
			return d;
	return NULL;
}

/**
 * uks_damos_add_scheme - append a scheme to @ctx (also while it runs)
 * @ctx:	the context
 * @s:		the scheme (copied)
 *
 * Return: the scheme's index, -EINVAL (uks_damos_check_scheme()), -ENOSPC
 * past UKS_DAMOS_MAX_SCHEMES, -ENOMEM.
 */
UKS_EXPORT int uks_damos_add_scheme(struct uks_damon_ctx *ctx, const struct uks_damos_scheme *s)
{
	struct damos *d;
	int ret = uks_damos_check_scheme(s, NULL, 0);

	if (ret)
		return ret;
	d = new_scheme(s);
	if (!d)
		return -ENOMEM;
	pthread_mutex_lock(&ctx->schemes_lock);
	if (ctx->nr_schemes >= UKS_DAMOS_MAX_SCHEMES) {
		pthread_mutex_unlock(&ctx->schemes_lock);
		uks_kfree(d);
		return -ENOSPC;
	}
	list_add_tail(&d->list, &ctx->schemes);
	ret = (int)ctx->nr_schemes++;
	pthread_mutex_unlock(&ctx->schemes_lock);
	return ret;
}

/**
 * uks_damos_set_schemes - replace every scheme of @ctx by @nr of @s
 * @ctx:	the context
 * @s:		the schemes (copied)
 * @nr:		their number (0 removes every scheme)
 *
 * All or nothing: on an error the old schemes stay.
 * Return: 0, -EINVAL, -ENOSPC, -ENOMEM.
 */
UKS_EXPORT int uks_damos_set_schemes(struct uks_damon_ctx *ctx, const struct uks_damos_scheme *s,
				     unsigned int nr)
{
	struct list_head fresh;
	struct damos *d, *next;
	int ret = 0;

	if (nr > UKS_DAMOS_MAX_SCHEMES)
		return -ENOSPC;
	INIT_LIST_HEAD(&fresh);
	for (unsigned int i = 0; i < nr && !ret; i++) {
		ret = uks_damos_check_scheme(&s[i], NULL, 0);
		if (ret)
			break;
		d = new_scheme(&s[i]);
		if (!d) {
			ret = -ENOMEM;
			break;
		}
		list_add_tail(&d->list, &fresh);
	}
	if (ret) {
		list_for_each_entry_safe(d, next, &fresh, list) {
			list_del(&d->list);
			uks_kfree(d);
		}
		return ret;
	}
	pthread_mutex_lock(&ctx->schemes_lock);
	list_for_each_entry_safe(d, next, &ctx->schemes, list)
		free_scheme(ctx, d);
	list_for_each_entry_safe(d, next, &fresh, list) {
		list_del(&d->list);
		list_add_tail(&d->list, &ctx->schemes);
		ctx->nr_schemes++;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return 0;
}

/**
 * uks_damos_update_scheme - change the parameters of scheme @idx in place
 * @ctx:	the context (may run)
 * @idx:	the scheme
 * @s:		its new parameters (copied)
 *
 * Its stats, tried regions and quota window stay (as 6.12's commit of a
 * scheme keeps them); new watermarks are read again at the next check.
 * Return: 0, -EINVAL (uks_damos_check_scheme()), -ENOENT.
 */
UKS_EXPORT int uks_damos_update_scheme(struct uks_damon_ctx *ctx, unsigned int idx,
				       const struct uks_damos_scheme *s)
{
	struct damos *d;
	int ret = uks_damos_check_scheme(s, NULL, 0);

	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d) {
		if (memcmp(&d->s.wmarks, &s->wmarks, sizeof(s->wmarks))) {
			d->wmark_read = false;
			d->activated = s->wmarks.metric == UKS_DAMOS_WMARK_NONE;
		}
		d->s = *s;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return d ? 0 : -ENOENT;
}

/**
 * uks_damos_remove_scheme - remove the scheme at @idx (later ones move down)
 * Return: 0 or -ENOENT.
 */
UKS_EXPORT int uks_damos_remove_scheme(struct uks_damon_ctx *ctx, unsigned int idx)
{
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d)
		free_scheme(ctx, d);
	pthread_mutex_unlock(&ctx->schemes_lock);
	return d ? 0 : -ENOENT;
}

/** uks_damos_nr_schemes - Return: the number of schemes of @ctx */
UKS_EXPORT int uks_damos_nr_schemes(struct uks_damon_ctx *ctx)
{
	int nr;

	pthread_mutex_lock(&ctx->schemes_lock);
	nr = (int)ctx->nr_schemes;
	pthread_mutex_unlock(&ctx->schemes_lock);
	return nr;
}

/**
 * uks_damos_get_scheme - copy the parameters of scheme @idx into @out
 * (goals with their last current_value)
 * Return: 0 or -ENOENT.
 */
UKS_EXPORT int uks_damos_get_scheme(struct uks_damon_ctx *ctx, unsigned int idx,
				    struct uks_damos_scheme *out)
{
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d)
		*out = d->s;
	pthread_mutex_unlock(&ctx->schemes_lock);
	return d ? 0 : -ENOENT;
}

/**
 * uks_damos_get_stats - copy the stats of scheme @idx into @out
 * Return: 0 or -ENOENT.
 */
UKS_EXPORT int uks_damos_get_stats(struct uks_damon_ctx *ctx, unsigned int idx,
				   struct uks_damos_stats *out)
{
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d)
		*out = d->stat;
	pthread_mutex_unlock(&ctx->schemes_lock);
	return d ? 0 : -ENOENT;
}

/**
 * uks_damos_get_tried_regions - the regions scheme @idx was tried on in
 * its last application, in the order it tried them
 * @ctx:	the context
 * @idx:	the scheme
 * @out:	up to @max regions (may be NULL with @max 0)
 * @max:	room in @out
 * @total_bytes: their total size (sysfs's total_bytes), or NULL
 *
 * Return: the number of regions (may exceed @max), or -ENOENT.
 */
UKS_EXPORT int uks_damos_get_tried_regions(struct uks_damon_ctx *ctx, unsigned int idx,
					   struct uks_damos_tried_region *out, unsigned int max,
					   unsigned long *total_bytes)
{
	struct damos *d;
	int nr = -ENOENT;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d) {
		nr = (int)d->nr_tried;
		if (out && max && d->nr_tried)
			memcpy(out, d->tried, (max < d->nr_tried ? max : d->nr_tried) *
			       sizeof(*out));
		if (total_bytes)
			*total_bytes = d->tried_bytes;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return nr;
}

/**
 * uks_damos_get_state - whether scheme @idx is active, and its quota
 * @ctx:	the context
 * @idx:	the scheme
 * @active:	its watermarks let it apply (or NULL)
 * @effective_sz: the effective size quota of its charge window, 0 for
 *		none (sysfs's effective_bytes), or NULL
 * Return: 0 or -ENOENT.
 */
UKS_EXPORT int uks_damos_get_state(struct uks_damon_ctx *ctx, unsigned int idx, bool *active,
				   unsigned long *effective_sz)
{
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d) {
		if (active)
			*active = d->activated;
		if (effective_sz)
			*effective_sz = d->esz;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return d ? 0 : -ENOENT;
}

/**
 * uks_damos_set_goal_current - feed a user_input goal its current value
 * @ctx:	the context
 * @idx:	the scheme
 * @goal:	the goal's index
 * @value:	the metric's value now (used when the next window starts)
 * Return: 0, -ENOENT (no such scheme or goal), -EINVAL (not user_input).
 */
UKS_EXPORT int uks_damos_set_goal_current(struct uks_damon_ctx *ctx, unsigned int idx,
					  unsigned int goal, unsigned long value)
{
	struct damos *d;
	int ret = -ENOENT;

	pthread_mutex_lock(&ctx->schemes_lock);
	d = nth_scheme(ctx, idx);
	if (d && goal < d->s.quota.nr_goals) {
		ret = -EINVAL;
		if (d->s.quota.goals[goal].metric == UKS_DAMOS_GOAL_USER_INPUT) {
			d->s.quota.goals[goal].current_value = value;
			ret = 0;
		}
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return ret;
}
