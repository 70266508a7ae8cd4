// SPDX-License-Identifier: MIT
/*
 * The monitoring intervals, tuned: toward 6.15's intervals goal, and under
 * a cost budget that user space needs and the kernel does not.
 *
 * The goal (6.15's intervals_goal: access_bp, aggrs, min/max_sample_us).
 * Every @aggrs aggregations the monitor compares the accesses it saw in
 * that aggregation, weighted by region size (size x nr_accesses summed),
 * with what the goal asks for: access_bp ten-thousandths of the most it
 * could have seen (size x samples per aggregation).  The ratio, in basis
 * points of the goal (the score), drives a feedback step on the sampling
 * interval: at the goal it stays; under it the interval grows by the
 * shortfall (seeing too little: look longer); over it, it shrinks by the
 * excess, and at twice the goal or more it halves; a shrink is never
 * more than a halving.  The interval is kept within [min_sample_us,
 * max_sample_us] and the aggregation interval follows it, keeping the
 * number of samples per aggregation.
 *
 * The budget.  A user-space access check costs what the kernel's does not:
 * the monitor reads and rewrites the target's page tables through /proc,
 * under the target's mmap lock, each sample; at fixed 5 ms intervals a
 * large process pays for that in full.  So each aggregation measures the
 * monitor thread's CPU time and the time the primitive held its targets'
 * page tables (__uks_damon_cost_stall(): clear_refs writes and smaps
 * reads), per sample: a sample costs about the same whatever the
 * interval, so an interval of that cost over the budget's share keeps the
 * share within it, and the interval is raised to that at once; when the
 * cost falls it comes back toward the interval the user (or the goal)
 * set, a quarter of the way per aggregation.  The budget bounds the
 * goal's tuning from below.
 * A context has no budget unless one is set (uks_damon_set_budget()), so
 * the intervals are the user's, as in the kernel.
 *
 * All of it runs in the monitor thread at the end of an aggregation,
 * before the counts are reset.  Lock order: ctx->lock alone, taken to
 * publish new intervals and read by uks_damon_get_cost().
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <uks/damon.h>

#include "damon/core/events.h"
#include "damon/damon.h"

#define BP		10000UL

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The feedback step: the next input for a score in bp of the goal, from
 * @last (kept at or above BP so a step never reaches zero).
 */
static unsigned long feedback(unsigned long last, unsigned long score)
{
	unsigned long diff, step;

	if (score == BP)
		return last;
	if (score >= 2 * BP)
		return BP;
	diff = score > BP ? score - BP : BP - score;
	step = last / BP * diff + last % BP * diff / BP;
	if (score > BP)
		return last - step > BP ? last - step : BP;
	return last + step;
}

/* The goal's factor for the sampling interval, in bp (5000: halve, 20000: double). */
static unsigned long goal_factor_bp(const struct uks_damon_ctx *ctx, unsigned long samples)
{
	unsigned long seen = 0, most = 0, want, score, next;
	struct damon_target *t;
	struct damon_region *r;

	damon_for_each_target(t, ctx) {
		damon_for_each_region(r, t) {
			unsigned long pages = damon_sz_region(r) / ctx->min_region;

			seen += pages * r->nr_accesses;
			most += pages * samples;
		}
	}
	want = most / BP * ctx->intervals_goal.access_bp +
	       most % BP * ctx->intervals_goal.access_bp / BP;
	if (!want)
		want = 1;
	score = seen >= ~0UL / BP ? 2 * BP : seen * BP / want;
	next = feedback(BP * BP, score) / BP;	/* 1 .. 20000 */
	/* a fast shrink loses the accesses it wanted to see: at most halve */
	return next <= BP ? BP / 2 + next / 2 : next;
}

/*
 * The sampling interval the budget needs: a sample costs @cpu_ns of the
 * monitor's CPU and @stall_ns of the target's time whatever the interval,
 * so an interval of cost x 1000 / permille keeps its share under the
 * budget.  It may come down by a quarter per aggregation when the cost
 * falls, so one cheap aggregation does not undo it.
 */
static unsigned long budget_floor(struct damon_tune *tn, uint64_t cpu_ns, uint64_t stall_ns)
{
	uint64_t need = 0;

	if (tn->monitor_permille)
		need = cpu_ns / tn->monitor_permille;	/* ns x 1000 / permille, in us */
	if (tn->target_permille && stall_ns / tn->target_permille > need)
		need = stall_ns / tn->target_permille;
	if (need >= tn->floor_us)
		tn->floor_us = (unsigned long)need;
	else
		tn->floor_us -= (tn->floor_us - (unsigned long)need) / 4;
	return tn->floor_us;
}

/**
 * __uks_damon_tune - measure this aggregation's cost and tune the intervals
 * @ctx:	the context (monitor thread, before the counts are reset)
 */
void __uks_damon_tune(struct uks_damon_ctx *ctx)
{
	struct damon_tune *tn = &ctx->tune;
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID), wall = clock_ns(CLOCK_MONOTONIC);
	uint64_t d_cpu = tn->cpu_ns ? cpu - tn->cpu_ns : 0, d_wall = tn->wall_ns ? wall - tn->wall_ns : 0;
	uint64_t d_stall = tn->stall_ns - tn->stall_seen_ns;
	uint64_t d_samples = tn->samples - tn->samples_seen;
	unsigned long sample = ctx->sample_interval, next, floor = tn->floor_us;

	/* intervals someone else set (start, a commit) are the new base */
	if (sample != tn->applied_us || !tn->samples_per_aggr) {
		tn->base_us = sample;
		tn->samples_per_aggr = sample ? ctx->aggr_interval / sample : 0;
		if (!tn->samples_per_aggr)
			tn->samples_per_aggr = 1;
		tn->goal_aggrs = 0;
		tn->floor_us = 0;
	}
	tn->cpu_ns = cpu;
	tn->wall_ns = wall;
	tn->stall_seen_ns = tn->stall_ns;
	tn->samples_seen = tn->samples;
	if (ctx->intervals_goal.aggrs && ++tn->goal_aggrs >= ctx->intervals_goal.aggrs) {
		tn->goal_aggrs = 0;
		next = (unsigned long)((uint64_t)sample * goal_factor_bp(ctx, tn->samples_per_aggr) / BP);
		if (next < ctx->intervals_goal.min_sample_us)
			next = ctx->intervals_goal.min_sample_us;
		if (next > ctx->intervals_goal.max_sample_us)
			next = ctx->intervals_goal.max_sample_us;
		tn->base_us = next;
		if (next != sample)
			uks_trace_damon_damon_monitor_intervals_tune(next);
	}
	/* the user's interval or the goal's, raised to what the budget needs */
	if (d_samples && d_wall)
		floor = budget_floor(tn, d_cpu / d_samples, d_stall / d_samples);
	next = tn->base_us > floor ? tn->base_us : floor;
	pthread_mutex_lock(&ctx->lock);
	tn->cost.aggregations++;
	tn->cost.monitor_cpu_ns += d_cpu;
	tn->cost.target_stall_ns += d_stall;
	tn->cost.wall_ns += d_wall;
	if (next && next != sample) {
		ctx->sample_interval = next;
		ctx->aggr_interval = next * tn->samples_per_aggr;
		tn->cost.retunes++;
	}
	tn->applied_us = ctx->sample_interval;
	pthread_mutex_unlock(&ctx->lock);
}

/**
 * __uks_damon_tune_start - a run starts: new measurements, the user's intervals
 * @ctx:	the context (its monitor thread, before the first sample)
 */
void __uks_damon_tune_start(struct uks_damon_ctx *ctx)
{
	struct damon_tune *tn = &ctx->tune;

	pthread_mutex_lock(&ctx->lock);
	memset(&tn->cost, 0, sizeof(tn->cost));
	tn->applied_us = tn->samples_per_aggr = 0;	/* the next round takes the base */
	tn->cpu_ns = tn->wall_ns = 0;
	tn->stall_ns = tn->stall_seen_ns = 0;
	tn->samples = tn->samples_seen = 0;
	pthread_mutex_unlock(&ctx->lock);
}

/**
 * __uks_damon_cost_stall - a primitive held its target's page tables @ns long
 *
 * Monitor thread only.  What the target may have waited for (its page
 * faults and mmap calls wait for that lock).
 */
void __uks_damon_cost_stall(struct uks_damon_ctx *ctx, uint64_t ns)
{
	ctx->tune.stall_ns += ns;
}

/**
 * uks_damon_set_budget - bound what monitoring may cost
 * @ctx:		the context
 * @monitor_permille:	the monitor thread's CPU time, in thousandths of
 *			one CPU (30: 3%); 0 for no bound
 * @target_permille:	the time the targets' page tables are held, in
 *			thousandths of the time passed (20: 2%); 0 for no bound
 *
 * The sampling interval (and the aggregation interval with it) grows as
 * much as the measured cost needs; see lib/damon/core/tune.c.
 * Return: 0, or -EINVAL for a bound over 1000.
 */
UKS_EXPORT int uks_damon_set_budget(struct uks_damon_ctx *ctx, unsigned int monitor_permille,
				    unsigned int target_permille)
{
	if (monitor_permille > 1000 || target_permille > 1000)
		return -EINVAL;
	pthread_mutex_lock(&ctx->lock);
	ctx->tune.monitor_permille = monitor_permille;
	ctx->tune.target_permille = target_permille;
	pthread_mutex_unlock(&ctx->lock);
	return 0;
}

/**
 * uks_damon_set_intervals_goal - tune the intervals toward an access ratio
 * @ctx:		the context
 * @access_bp:		the accesses to see per aggregation, in ten-thousandths
 *			of the most that could be seen (the kernel's docs
 *			suggest 400: 4%)
 * @aggrs:		tune every this many aggregations; 0 turns tuning off
 * @min_sample_us:	the sampling interval's bounds
 * @max_sample_us:
 *
 * 6.15's intervals_goal.  Return: 0, or -EINVAL when the bounds are
 * inverted or the current sampling interval lies outside them (as 6.15).
 */
UKS_EXPORT int uks_damon_set_intervals_goal(struct uks_damon_ctx *ctx, unsigned long access_bp,
					    unsigned long aggrs, unsigned long min_sample_us,
					    unsigned long max_sample_us)
{
	struct damon_intervals_goal goal = { access_bp, aggrs, min_sample_us, max_sample_us };
	unsigned long sample;

	pthread_mutex_lock(&ctx->lock);
	sample = ctx->sample_interval;
	pthread_mutex_unlock(&ctx->lock);
	if (!__uks_damon_valid_intervals_goal(&goal, sample))
		return -EINVAL;
	__uks_damon_set_intervals_goal(ctx, &goal);
	return 0;
}

/**
 * uks_damon_get_cost - what monitoring @ctx has cost so far
 * @ctx:	the context
 * @cost:	filled: aggregations, monitor CPU, target stall and wall time
 *		they spanned, how often the intervals changed, and the
 *		intervals in force
 */
UKS_EXPORT void uks_damon_get_cost(struct uks_damon_ctx *ctx, struct uks_damon_cost *cost)
{
	pthread_mutex_lock(&ctx->lock);
	*cost = ctx->tune.cost;
	cost->sample_us = ctx->sample_interval;
	cost->aggr_us = ctx->aggr_interval;
	pthread_mutex_unlock(&ctx->lock);
}
