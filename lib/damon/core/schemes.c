// SPDX-License-Identifier: MIT
/*
 * DAMOS: DAMON-based operation schemes, with the semantics of Linux 6.12
 * (Documentation/mm/damon/design.rst "Operation Schemes"), on top of the
 * 5.15 monitor.
 *
 * What.  A context holds a list of schemes.  At each aggregation, after
 * the merge and the after_aggregation hook and before the counts are
 * reset (6.12's order), every scheme that is due (its apply interval
 * passed; 0 means each aggregation) and active (its watermarks) walks the
 * regions in address order and, for each one whose size, count and age
 * are in its pattern, charges it to its quota, passes it through its
 * filters and hands it to the primitive's apply_scheme (the actions are
 * in schemes_vaddr.c).  An action other than stat zeroes the region's age.
 *
 * Quotas (6.12's damos_adjust_quota): a charge window of
 * reset_interval_ms; when a new one starts the effective size quota is
 * recomputed: the goals' feedback loop (the best-achieved goal's score
 * drives a multiplicative correction of the last quota), then the time
 * quota turned into bytes at the throughput measured so far, then the size
 * quota; the smallest wins.  Regions get a score 0..99 (the cold score for
 * pageout, the highest score for every other action, as 6.12's vaddr) and
 * a size histogram of the matching regions gives the lowest score whose
 * regions still fit the quota: only regions at or above it are tried, in
 * address order, until the window's quota is used; the next window starts
 * where the last one stopped.
 *
 * Watermarks: a scheme with a metric is active while the metric is below
 * mid (and above low), inactive above high or below low.  When no scheme is
 * active the monitor thread sleeps the smallest interval instead of
 * sampling (6.12's kdamond_wait_activation).
 *
 * The schemes list and its API are in schemes_api.c.  Lock order:
 * ctx->schemes_lock alone; the monitor thread holds it while it checks the
 * watermarks and applies the schemes, never while it sleeps or runs a
 * hook.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/mem_avail.h"
#include "damon/damon.h"

#define DAMOS_MAX_SCORE		99
#define DAMON_MAX_SUBSCORE	100
#define DAMON_MAX_AGE_IN_LOG	32
#define GOAL_ONE		10000UL	/* a goal's score when achieved exactly */

/* ------------------------------------------------------------ metrics */

/* Read a "Key: N kB" line of /proc/meminfo; 0 if absent. */
static unsigned long meminfo_kb(const char *text, const char *key)
{
	const char *p = strstr(text, key);

	return p ? strtoul(p + strlen(key), NULL, 10) : 0;
}

/* 6.12's damos_wmark_metric_value(); an unknown metric reads as -EINVAL, unsigned. */
static unsigned long wmark_metric_value(unsigned int metric)
{
	char buf[4096];
	unsigned long total, free_kb;
	ssize_t n;
	int fd;

	if (metric != UKS_DAMOS_WMARK_FREE_MEM_RATE)
		return (unsigned long)-EINVAL;
	fd = open("/proc/meminfo", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return (unsigned long)-EINVAL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return (unsigned long)-EINVAL;
	buf[n] = '\0';
	total = meminfo_kb(buf, "MemTotal:");
	free_kb = meminfo_kb(buf, "MemFree:");
	return total ? free_kb * 1000 / total : (unsigned long)-EINVAL;
}

/* The "some" total of /proc/pressure/memory, microseconds; 0 without PSI. */
static uint64_t some_mem_psi_us(void)
{
	char buf[512];
	const char *p;
	ssize_t n;
	int fd = open("/proc/pressure/memory", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strstr(buf, "total=");	/* the first line is "some" */
	return p ? strtoull(p + 6, NULL, 10) : 0;
}

/* ------------------------------------------------------------ watermarks */

static bool interval_passed(const struct timespec *from, unsigned long us)
{
	struct timespec now;
	uint64_t diff;

	if (us > UINT64_MAX / 1000)
		return false;	/* never: it would wrap */
	clock_gettime(CLOCK_MONOTONIC, &now);
	diff = (uint64_t)(now.tv_sec - from->tv_sec) * 1000000000u +
	       (uint64_t)(now.tv_nsec - from->tv_nsec);
	return diff >= (uint64_t)us * 1000u;
}

/* 6.12's damos_wmark_wait_us(), the metric read at most once an interval. */
static unsigned long wmark_wait_us(struct damos *d)
{
	const struct uks_damos_watermarks *w = &d->s.wmarks;
	unsigned long metric;

	if (w->metric == UKS_DAMOS_WMARK_NONE) {
		d->activated = true;
		return 0;
	}
	if (d->wmark_read && !interval_passed(&d->wmark_last, w->interval_us))
		return d->wmark_wait_us;
	d->wmark_read = true;
	clock_gettime(CLOCK_MONOTONIC, &d->wmark_last);
	metric = wmark_metric_value(w->metric);
	if (metric > w->high || metric < w->low)
		d->activated = false;
	else if (metric < w->mid)
		d->activated = true;
	/* between mid and high: stays as it was */
	d->wmark_wait_us = d->activated ? 0 : w->interval_us;
	return d->wmark_wait_us;
}

/*
 * How long the monitor thread should sleep before its next sample: 0 when
 * a scheme is active or there is none, else the smallest interval.
 */
unsigned long __uks_damos_wmark_wait_us(struct uks_damon_ctx *ctx)
{
	unsigned long min = 0;
	bool first = true;
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	damon_for_each_scheme(d, ctx) {
		unsigned long w = wmark_wait_us(d);

		if (first || w < min)
			min = w;
		first = false;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
	return min;
}

/* At the monitor's start: new windows, watermarks read again, intervals from now. */
void __uks_damos_start(struct uks_damon_ctx *ctx)
{
	struct damos *d;

	pthread_mutex_lock(&ctx->schemes_lock);
	damon_for_each_scheme(d, ctx) {
		d->window_started = false;
		d->wmark_read = false;
		d->activated = d->s.wmarks.metric == UKS_DAMOS_WMARK_NONE;
		d->charge_target_from = NULL;
		d->charge_addr_from = 0;
		clock_gettime(CLOCK_MONOTONIC, &d->last_apply);
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
}

/* ------------------------------------------------------------ quotas */

/* 6.12's damon_feed_loop_next_input(): score 10000 is the goal met exactly. */
static unsigned long feed_loop_next_input(unsigned long last, unsigned long score)
{
	const unsigned long min_input = GOAL_ONE;
	unsigned long diff, comp;
	bool over = score > GOAL_ONE;

	if (score == GOAL_ONE)
		return last;
	if (score >= GOAL_ONE * 2)
		return min_input;
	diff = over ? score - GOAL_ONE : GOAL_ONE - score;
	if (last < ~0UL / diff)
		comp = last * diff / GOAL_ONE;
	else
		comp = last / GOAL_ONE * diff;
	if (over)
		return last - comp > min_input ? last - comp : min_input;
	return last < ~0UL - comp ? last + comp : ~0UL;
}

/* The best-achieved goal's score (current * 10000 / target); PSI measured here. */
static unsigned long goals_score(struct damos *d)
{
	unsigned long best = 0;

	for (unsigned int i = 0; i < d->s.quota.nr_goals; i++) {
		struct uks_damos_quota_goal *g = &d->s.quota.goals[i];
		unsigned long score;

		if (g->metric == UKS_DAMOS_GOAL_SOME_MEM_PSI_US) {
			uint64_t now = some_mem_psi_us();

			g->current_value = (unsigned long)(now - d->goal_last_psi[i]);
			d->goal_last_psi[i] = now;
		}
		if (g->current_value > ~0UL / GOAL_ONE)
			score = ~0UL;
		else
			score = g->current_value * GOAL_ONE / g->target_value;
		if (score > best)
			best = score;
	}
	return best;
}

/* 6.12's damos_set_effective_quota(). */
static void set_effective_quota(struct damos *d)
{
	const struct uks_damos_quota *q = &d->s.quota;
	unsigned long esz = ~0UL;

	if (!q->ms && !q->nr_goals) {
		d->esz = q->sz;
		return;
	}
	if (q->nr_goals) {
		d->esz_bp = feed_loop_next_input(d->esz_bp > GOAL_ONE ? d->esz_bp : GOAL_ONE,
						 goals_score(d));
		esz = d->esz_bp / GOAL_ONE;
	}
	if (q->ms) {
		unsigned long throughput;

		if (d->total_charged_ns && d->total_charged_sz < ~0UL / 1000000)
			throughput = (unsigned long)(d->total_charged_sz * 1000000 /
						     d->total_charged_ns);
		else if (d->total_charged_ns)
			throughput = (unsigned long)(d->total_charged_sz /
						     d->total_charged_ns * 1000000);
		else
			throughput = (unsigned long)getpagesize() * 1024;
		if (q->ms <= ~0UL / (throughput ? throughput : 1) && throughput * q->ms < esz)
			esz = throughput * q->ms;
	}
	if (q->sz && q->sz < esz)
		esz = q->sz;
	d->esz = esz;
}

static bool in_pattern(const struct damon_region *r, const struct uks_damos_access_pattern *p)
{
	unsigned long sz = damon_sz_region(r);

	return sz >= p->min_sz && sz <= p->max_sz && r->nr_accesses >= p->min_nr_accesses &&
	       r->nr_accesses <= p->max_nr_accesses && r->age >= p->min_age &&
	       r->age <= p->max_age;
}

/* 6.12's damon_hot_score(): frequency and log2 of the age in seconds, weighted. */
int __uks_damos_hot_score(struct uks_damon_ctx *ctx, const struct damon_region *r,
			  const struct uks_damos_scheme *s)
{
	unsigned long max_nr = ctx->sample_interval ? ctx->aggr_interval / ctx->sample_interval : 1;
	unsigned int fw = s->quota.weight_nr_accesses, aw = s->quota.weight_age;
	unsigned long age_s, freq;
	long hot;
	int age_log = 0;

	if (!max_nr)
		max_nr = 1;
	freq = r->nr_accesses * DAMON_MAX_SUBSCORE / max_nr;
	if (r->age && ctx->aggr_interval > ~0UL / r->age)
		age_s = ~0UL;
	else
		age_s = r->age * ctx->aggr_interval / 1000000;
	while (age_log < DAMON_MAX_AGE_IN_LOG && age_s) {
		age_log++;
		age_s >>= 1;
	}
	if (!freq)		/* never accessed: the older, the colder */
		age_log = -age_log;
	age_log += DAMON_MAX_AGE_IN_LOG;
	hot = (long)(fw * freq) + (long)aw * (age_log * DAMON_MAX_SUBSCORE /
					      DAMON_MAX_AGE_IN_LOG / 2);
	if (fw + aw)
		hot /= (long)(fw + aw);
	hot = hot * DAMOS_MAX_SCORE / DAMON_MAX_SUBSCORE;
	if (hot < 0)
		hot = 0;
	if (hot > DAMOS_MAX_SCORE)
		hot = DAMOS_MAX_SCORE;
	return (int)hot;
}

/* 6.12's vaddr scores: pageout takes the coldest first, other actions all alike. */
static unsigned int scheme_score(struct uks_damon_ctx *ctx, const struct damon_region *r,
				 const struct damos *d)
{
	if (d->s.action == UKS_DAMOS_PAGEOUT)
		return (unsigned int)(DAMOS_MAX_SCORE - __uks_damos_hot_score(ctx, r, &d->s));
	return DAMOS_MAX_SCORE;
}

static void adjust_quota(struct uks_damon_ctx *ctx, struct damos *d)
{
	const struct uks_damos_quota *q = &d->s.quota;
	unsigned long hist[DAMOS_MAX_SCORE + 1] = { 0 }, sum = 0;
	struct damon_target *t;
	struct damon_region *r;
	unsigned int max_score = 0, score;

	if (!q->ms && !q->sz && !q->nr_goals) {
		d->esz = 0;	/* no quota (also after an update removed it) */
		return;
	}
	if (!d->window_started || interval_passed(&d->charged_from,
						      q->reset_interval_ms > ~0UL / 1000 ? ~0UL :
						      q->reset_interval_ms * 1000)) {
		if (d->esz && d->charged_sz >= d->esz)
			d->stat.qt_exceeds++;
		d->total_charged_sz += d->charged_sz;
		clock_gettime(CLOCK_MONOTONIC, &d->charged_from);
		d->window_started = true;
		d->charged_sz = 0;
		set_effective_quota(d);
	}
	damon_for_each_target(t, ctx) {
		damon_for_each_region(r, t) {
			if (!in_pattern(r, &d->s.pattern))
				continue;
			score = scheme_score(ctx, r, d);
			hist[score] += damon_sz_region(r);
			if (score > max_score)
				max_score = score;
		}
	}
	for (score = max_score;; score--) {
		sum += hist[score];
		if (sum >= d->esz || !score)
			break;
	}
	d->min_score = score;
}

/* ------------------------------------------------------------ application */

/* 6.12's damos_skip_charged_region(): resume where the last window stopped. */
static bool skip_charged(struct uks_damon_ctx *ctx, struct damon_target *t,
			 struct damon_region **rp, struct damos *d)
{
	struct damon_region *r = *rp;
	unsigned long skip;

	if (!d->charge_target_from)
		return false;
	if (t != d->charge_target_from)
		return true;
	if (r->list.next == &t->regions_list) {
		d->charge_target_from = NULL;
		d->charge_addr_from = 0;
		return true;
	}
	if (d->charge_addr_from && r->ar.end <= d->charge_addr_from)
		return true;
	if (d->charge_addr_from && r->ar.start < d->charge_addr_from) {
		skip = DAMON_ALIGN_DOWN(d->charge_addr_from - r->ar.start, ctx->min_region);
		if (!skip) {
			if (damon_sz_region(r) <= ctx->min_region)
				return true;
			skip = ctx->min_region;
		}
		__uks_damon_split_region_at(ctx, t, r, skip);
		*rp = damon_next_region(r);
	}
	d->charge_target_from = NULL;
	d->charge_addr_from = 0;
	return false;
}

static unsigned int target_index(struct uks_damon_ctx *ctx, struct damon_target *t)
{
	struct damon_target *ti;
	unsigned int i = 0;

	damon_for_each_target(ti, ctx) {
		if (ti == t)
			break;
		i++;
	}
	return i;
}

/* 6.12's core filters: true if @f leaves @r out (may split @r at the range). */
static bool filter_out_one(struct uks_damon_ctx *ctx, struct damon_target *t,
			   struct damon_region *r, const struct uks_damos_filter *f)
{
	unsigned long start, end;
	bool matched;

	if (f->type == UKS_DAMOS_FILTER_TARGET) {
		matched = target_index(ctx, t) == f->target_idx;
	} else {
		start = DAMON_ALIGN_DOWN(f->addr_start, ctx->min_region);
		end = DAMON_ALIGN_DOWN(f->addr_end, ctx->min_region);
		if (start <= r->ar.start && r->ar.end <= end) {
			matched = true;
		} else if (r->ar.end <= start || end <= r->ar.start) {
			matched = false;
		} else if (r->ar.start < start) {
			__uks_damon_split_region_at(ctx, t, r, start - r->ar.start);
			matched = false;
		} else {
			__uks_damon_split_region_at(ctx, t, r, end - r->ar.start);
			matched = true;
		}
	}
	return matched == f->matching;
}

static bool filtered_out(struct uks_damon_ctx *ctx, struct damon_target *t,
			 struct damon_region *r, const struct damos *d)
{
	for (unsigned int i = 0; i < d->s.nr_filters; i++)
		if (filter_out_one(ctx, t, r, &d->s.filters[i]))
			return true;
	return false;
}

static void note_tried(struct uks_damon_ctx *ctx, struct damos *d, struct damon_target *t,
		       const struct damon_region *r)
{
	struct uks_damos_tried_region *tr;

	if (d->nr_building == d->room_building) {
		unsigned int room = d->room_building ? d->room_building * 2 : 64;

		if (__uks_mem_may_allocate_array(room, sizeof(*tr)))
			return;
		tr = uks_krealloc(d->building, room * sizeof(*tr));
		if (!tr)
			return;	/* the snapshot misses it; the stats do not */
		d->building = tr;
		d->room_building = room;
	}
	tr = &d->building[d->nr_building++];
	tr->start = r->ar.start;
	tr->end = r->ar.end;
	tr->nr_accesses = r->nr_accesses;
	tr->age = r->age;
	tr->target_idx = target_index(ctx, t);
	d->building_bytes += damon_sz_region(r);
}

/* 6.12's damos_apply_scheme(): quota cut, filters, action, charge, stats. */
static void apply_one(struct uks_damon_ctx *ctx, struct damon_target *t, struct damon_region *r,
		      struct damos *d)
{
	unsigned long sz = damon_sz_region(r), applied = 0;
	struct timespec begin, end;

	if (d->esz && d->charged_sz + sz > d->esz) {
		sz = DAMON_ALIGN_DOWN(d->esz - d->charged_sz, ctx->min_region);
		if (!sz)
			goto stat;
		__uks_damon_split_region_at(ctx, t, r, sz);
	}
	if (filtered_out(ctx, t, r, d))
		return;
	sz = damon_sz_region(r);
	note_tried(ctx, d, t, r);
	clock_gettime(CLOCK_MONOTONIC, &begin);
	if (d->s.action != UKS_DAMOS_STAT && ctx->primitive->apply_scheme)
		applied = ctx->primitive->apply_scheme(ctx, t, r, d->s.action);
	clock_gettime(CLOCK_MONOTONIC, &end);
	d->total_charged_ns += (uint64_t)(end.tv_sec - begin.tv_sec) * 1000000000u +
			       (uint64_t)(end.tv_nsec - begin.tv_nsec);
	d->charged_sz += sz;
	if (d->esz && d->charged_sz >= d->esz) {
		d->charge_target_from = t;
		d->charge_addr_from = r->ar.end + 1;
	}
	if (d->s.action != UKS_DAMOS_STAT)
		r->age = 0;
stat:
	d->stat.nr_tried++;
	d->stat.sz_tried += sz;
	if (applied) {
		d->stat.nr_applied++;
		d->stat.sz_applied += applied;
	}
}

static void apply_schemes_to(struct uks_damon_ctx *ctx, struct damon_target *t,
			     struct damon_region *r)
{
	struct damos *d;

	damon_for_each_scheme(d, ctx) {
		if (!d->due || !d->activated)
			continue;
		if (d->esz && d->charged_sz >= d->esz)
			continue;
		if (skip_charged(ctx, t, &r, d))
			continue;
		if (!in_pattern(r, &d->s.pattern))
			continue;
		if (d->esz && scheme_score(ctx, r, d) < d->min_score)
			continue;
		apply_one(ctx, t, r, d);
	}
}

/*
 * At an aggregation, between the after_aggregation hook and the reset of
 * the counts (6.12's kdamond_apply_schemes()).
 */
void __uks_damos_apply(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r, *next;
	struct damos *d;
	bool any = false;

	pthread_mutex_lock(&ctx->schemes_lock);
	damon_for_each_scheme(d, ctx) {
		d->due = d->activated &&
			 (!d->s.apply_interval_us ||
			  interval_passed(&d->last_apply, d->s.apply_interval_us));
		if (!d->due)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &d->last_apply);
		d->nr_building = 0;
		d->building_bytes = 0;
		adjust_quota(ctx, d);
		any = true;
	}
	if (any) {
		damon_for_each_target(t, ctx)
			damon_for_each_region_safe(r, next, t)
				apply_schemes_to(ctx, t, r);
	}
	damon_for_each_scheme(d, ctx) {
		struct uks_damos_tried_region *swap_p;
		unsigned int swap_n;

		if (!d->due)
			continue;
		swap_p = d->tried;
		swap_n = d->room_tried;
		d->tried = d->building;
		d->room_tried = d->room_building;
		d->nr_tried = d->nr_building;
		d->tried_bytes = d->building_bytes;
		d->building = swap_p;
		d->room_building = swap_n;
		d->due = false;
	}
	pthread_mutex_unlock(&ctx->schemes_lock);
}
