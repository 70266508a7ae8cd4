// SPDX-License-Identifier: MIT
/*
 * DAMON monitor threads: 5.15's kdamond_fn, damon_start and damon_stop,
 * and the choice of the access-check primitive.
 *
 * One thread per context, named "kdamond.N" (N its index in the
 * uks_damon_start() call, which is what 5.15 shows when nothing else
 * runs).  Its loop is 5.15's, in 5.15's order:
 *
 *	init; before_start; sz_limit = total / min_nr_regions
 *	while not stopped and some target is valid:
 *		while every scheme is inactive (watermarks): sleep
 *		prepare_access_checks; after_sampling
 *		sleep one sampling interval
 *		max = check_accesses
 *		if an aggregation interval passed:
 *			merge(max / 10, sz_limit); after_aggregation
 *			apply the schemes (6.12's DAMOS, schemes.c)
 *			tune the intervals (goal, budget: tune.c)
 *			emit damon_aggregated per region, zero the counts
 *			split into 2 or 3; primitive reset_aggregated
 *		if an update interval passed: update; recompute sz_limit
 *	free the regions; before_terminate; cleanup
 *
 * Intervals use the coarse monotonic clock and restart from "now" when they
 * pass (they drift, as in 5.15), and their baselines are set when the
 * context is created, not when it starts: the first iteration after a start
 * aggregates and updates at once, like the debugfs context of 5.15.  The
 * sleep waits on a condition variable, so stop does not wait out a long
 * sampling interval.
 *
 * Unlike 5.15 there is no process-wide damon_lock or running count: start
 * refuses (-EBUSY) when one of the contexts it is given runs, so unrelated
 * users (tests, several debugfs trees) do not see each other.
 *
 * Lock order: ctx->lock alone; it is never held while a hook or a
 * primitive runs, nor while joining the thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/compiler.h"
#include "core/log.h"
#include "damon/damon.h"

__thread struct uks_damon_ctx *__uks_damon_current;

/* ---------------------------------------------------------- primitives */

static const struct damon_primitive *const primitives[] = {
	&__uks_damon_vaddr_sd,
	&__uks_damon_vaddr_refs,
	&__uks_damon_fvaddr_sd,
	&__uks_damon_fvaddr_refs,
	&__uks_damon_synthetic,
	&__uks_damon_self,
};

const struct damon_primitive *__uks_damon_find_primitive(const char *name)
{
	for (size_t i = 0; i < sizeof(primitives) / sizeof(primitives[0]); i++)
		if (!strcmp(primitives[i]->name, name))
			return primitives[i];
	return NULL;
}

/**
 * uks_damon_primitive_available - can @name work on this machine?
 * @name:	"vaddr-sd", "vaddr-refs", "fvaddr-sd", "fvaddr-refs", "synthetic"
 *		or "self"
 * @why:	the reason when it cannot (may be NULL)
 * @len:	room in @why
 *
 * Return: 0, -ENOENT for an unknown name, or the primitive's -errno
 * (-EOPNOTSUPP: the kernel lacks what it needs, e.g. CONFIG_MEM_SOFT_DIRTY).
 */
UKS_EXPORT int uks_damon_primitive_available(const char *name, char *why, size_t len)
{
	const struct damon_primitive *p = __uks_damon_find_primitive(name);

	if (why && len)
		why[0] = '\0';
	if (!p) {
		if (why && len)
			snprintf(why, len, "no primitive called '%s'", name);
		return -ENOENT;
	}
	return p->available ? p->available(why, len) : 0;
}

/**
 * uks_damon_default_primitive - the best primitive for real processes here
 *
 * "vaddr-sd" (per page) where the kernel has soft-dirty bits, else
 * "vaddr-refs" (per mapping, reads too).  Return: its name.
 */
UKS_EXPORT const char *uks_damon_default_primitive(void)
{
	if (!uks_damon_primitive_available("vaddr-sd", NULL, 0))
		return "vaddr-sd";
	if (!uks_damon_primitive_available("vaddr-refs", NULL, 0))
		return "vaddr-refs";
	return "vaddr-sd";
}

/**
 * uks_damon_set_primitive - choose how @ctx checks accesses
 * @ctx:	a context that does not run
 * @name:	a primitive name, or NULL for uks_damon_default_primitive()
 *
 * Return: 0, -EBUSY while @ctx runs, -ENOENT (unknown), -EOPNOTSUPP (not
 * available on this kernel).
 */
UKS_EXPORT int uks_damon_set_primitive(struct uks_damon_ctx *ctx, const char *name)
{
	const struct damon_primitive *p;
	int ret;

	if (!name)
		name = uks_damon_default_primitive();
	p = __uks_damon_find_primitive(name);
	if (!p)
		return -ENOENT;
	ret = p->available ? p->available(NULL, 0) : 0;
	if (ret)
		return ret;
	pthread_mutex_lock(&ctx->lock);
	if (ctx->running)
		ret = -EBUSY;
	else
		ctx->primitive = p;
	pthread_mutex_unlock(&ctx->lock);
	return ret;
}

/** uks_damon_primitive_name - Return: the primitive @ctx uses (or will use) */
UKS_EXPORT const char *uks_damon_primitive_name(struct uks_damon_ctx *ctx)
{
	return ctx->primitive ? ctx->primitive->name : uks_damon_default_primitive();
}

/* ---------------------------------------------------------- the loop */

/*
 * Unsigned, as in 5.15, where the signed nanoseconds meet the unsigned
 * interval * 1000: an interval of ULONG_MAX us is never due, not always.
 */
bool __uks_damon_check_reset_time_interval(struct timespec *baseline, unsigned long us)
{
	struct timespec now;
	uint64_t diff_ns;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &now);
	diff_ns = (uint64_t)(now.tv_sec - baseline->tv_sec) * 1000000000u +
		  (uint64_t)(now.tv_nsec - baseline->tv_nsec);
	if (diff_ns < (uint64_t)us * 1000u)
		return false;
	*baseline = now;
	return true;
}

static void set_kdamond_stop(struct uks_damon_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->stop = true;
	pthread_mutex_unlock(&ctx->lock);
}

static bool kdamond_need_stop(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	bool stop;

	pthread_mutex_lock(&ctx->lock);
	stop = ctx->stop;
	pthread_mutex_unlock(&ctx->lock);
	if (stop)
		return true;
	if (!ctx->primitive->target_valid)
		return false;
	damon_for_each_target(t, ctx)
		if (ctx->primitive->target_valid(ctx, t))
			return false;
	return true;
}

/* usleep_range(sample, sample + 1), cut short by a stop request */
static void kdamond_usleep(struct uks_damon_ctx *ctx, unsigned long us)
{
	struct timespec until;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(us / 1000000);
	until.tv_nsec += (long)(us % 1000000) * 1000;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&ctx->lock);
	/* a posted commit ends the sleep too: it waits for no long interval */
	while (!ctx->stop && !ctx->pending_commit &&
	       pthread_cond_timedwait(&ctx->wake, &ctx->lock, &until) != ETIMEDOUT)
		;
	pthread_mutex_unlock(&ctx->lock);
}

/*
 * 6.12's kdamond_wait_activation(): while every scheme is inactive by its
 * watermarks, sleep instead of sampling.  Return: non-zero to stop.
 */
static int kdamond_wait_activation(struct uks_damon_ctx *ctx)
{
	while (!kdamond_need_stop(ctx)) {
		unsigned long us = __uks_damos_wmark_wait_us(ctx);

		if (!us)
			return 0;
		kdamond_usleep(ctx, us);
		__uks_damon_apply_commit(ctx);	/* a commit ends the sleep: apply it */
	}
	return -EBUSY;
}

static void *kdamond_fn(void *arg)
{
	struct uks_damon_ctx *ctx = arg;
	const struct damon_primitive *prim = ctx->primitive;
	struct damon_target *t;
	struct damon_region *r, *next;
	unsigned long sz_limit;
	char name[16];

	snprintf(name, sizeof(name), "kdamond.%u", ctx->nr);
	pthread_setname_np(pthread_self(), name);
	__uks_damon_current = ctx;
	pthread_mutex_lock(&ctx->lock);
	ctx->tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&ctx->wake);
	pthread_mutex_unlock(&ctx->lock);
	pr_info("kdamond (%d) starts", (int)ctx->tid);

	if (prim->init)
		prim->init(ctx);
	pthread_mutex_lock(&ctx->lock);
	ctx->primitive_ready = true;
	pthread_cond_broadcast(&ctx->wake);
	pthread_mutex_unlock(&ctx->lock);
	if (ctx->callback.before_start && ctx->callback.before_start(ctx))
		set_kdamond_stop(ctx);
	__uks_damon_tune_start(ctx);
	sz_limit = __uks_damon_region_sz_limit(ctx);
	__uks_damos_start(ctx);

	while (!kdamond_need_stop(ctx)) {
		unsigned int max_nr_accesses = 0;

		__uks_damon_apply_commit(ctx);	/* a sysfs "commit" (commit.c) */
		if (kdamond_wait_activation(ctx))
			break;

		if (prim->prepare_access_checks)
			prim->prepare_access_checks(ctx);
		if (ctx->callback.after_sampling && ctx->callback.after_sampling(ctx))
			set_kdamond_stop(ctx);
		if (prim->sleep)
			prim->sleep(ctx, ctx->sample_interval);
		else
			kdamond_usleep(ctx, ctx->sample_interval);
		if (prim->check_accesses)
			max_nr_accesses = prim->check_accesses(ctx);
		ctx->tune.samples++;
		if (__uks_damon_check_reset_time_interval(&ctx->last_aggregation,
							  ctx->aggr_interval)) {
			__uks_damon_kdamond_merge_regions(ctx, max_nr_accesses / 10, sz_limit);
			if (ctx->callback.after_aggregation &&
			    ctx->callback.after_aggregation(ctx))
				set_kdamond_stop(ctx);
			__uks_damos_apply(ctx);
			__uks_damon_tune(ctx);		/* goal and budget (tune.c) */
			__uks_damon_kdamond_reset_aggregated(ctx);
			__uks_damon_kdamond_split_regions(ctx);
			if (prim->reset_aggregated)
				prim->reset_aggregated(ctx);
		}
		if (__uks_damon_check_reset_time_interval(&ctx->last_primitive_update,
							  ctx->primitive_update_interval)) {
			if (prim->update)
				prim->update(ctx);
			sz_limit = __uks_damon_region_sz_limit(ctx);
		}
	}

	pthread_mutex_lock(&ctx->lock);
	damon_for_each_target(t, ctx)
		damon_for_each_region_safe(r, next, t)
			__uks_damon_destroy_region(r, t);
	pthread_mutex_unlock(&ctx->lock);
	if (ctx->callback.before_terminate)
		ctx->callback.before_terminate(ctx);
	if (prim->cleanup)
		prim->cleanup(ctx);
	pr_debug("kdamond (%d) finishes", (int)ctx->tid);

	pthread_mutex_lock(&ctx->lock);
	ctx->running = false;
	ctx->tid = 0;
	pthread_cond_broadcast(&ctx->wake);
	pthread_mutex_unlock(&ctx->lock);
	__uks_damon_current = NULL;
	return NULL;
}

/* Join a monitor thread that ended by itself (all targets gone). */
static void reap(struct uks_damon_ctx *ctx)
{
	pthread_t th;

	pthread_mutex_lock(&ctx->lock);
	if (ctx->running || !ctx->has_thread) {
		pthread_mutex_unlock(&ctx->lock);
		return;
	}
	th = ctx->thread;
	ctx->has_thread = false;
	pthread_mutex_unlock(&ctx->lock);
	__uks_damon_join(ctx, th);
}

/*
 * Wait until the monitor of @ctx has run its primitive's init (or ended).
 * The self agent waits before the program's main() runs: the monitor's
 * init takes its own fd table, and a program that closes every fd at
 * once must not get there first.
 */
void __uks_damon_wait_primitive_ready(struct uks_damon_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	while (ctx->running && !ctx->primitive_ready)
		pthread_cond_wait(&ctx->wake, &ctx->lock);
	pthread_mutex_unlock(&ctx->lock);
}

/* Join the monitor thread @th of @ctx; the primitive may then tidy up. */
void __uks_damon_join(struct uks_damon_ctx *ctx, pthread_t th)
{
	pthread_join(th, NULL);
	if (ctx->primitive && ctx->primitive->joined)
		ctx->primitive->joined(ctx);
}

static int __damon_start(struct uks_damon_ctx *ctx, unsigned int nr)
{
	int err;

	reap(ctx);
	pthread_mutex_lock(&ctx->lock);
	if (ctx->running || ctx->has_thread) {
		pthread_mutex_unlock(&ctx->lock);
		return -EBUSY;
	}
	if (!ctx->primitive)
		ctx->primitive = __uks_damon_find_primitive(uks_damon_default_primitive());
	ctx->stop = false;
	ctx->nr = nr;
	ctx->tid = 0;
	ctx->primitive_ready = false;
	err = -pthread_create(&ctx->thread, NULL, kdamond_fn, ctx);
	if (!err) {
		ctx->running = true;
		ctx->has_thread = true;
		while (!ctx->tid && ctx->running)
			pthread_cond_wait(&ctx->wake, &ctx->lock);
	}
	pthread_mutex_unlock(&ctx->lock);
	return err;
}

/**
 * uks_damon_start - start one monitor thread per context
 * @ctxs:	the contexts
 * @nr:		their number
 *
 * A context without targets starts and ends at once, as in 5.15.
 * Return: 0, -EBUSY if one of them runs (none is started then), or the
 * error of creating a thread (the earlier ones keep running, as in 5.15).
 */
UKS_EXPORT int uks_damon_start(struct uks_damon_ctx **ctxs, int nr)
{
	int err = 0;

	for (int i = 0; i < nr; i++)
		if (uks_damon_is_running(ctxs[i]))
			return -EBUSY;
	for (int i = 0; i < nr && !err; i++)
		err = __damon_start(ctxs[i], (unsigned int)i);
	return err;
}

static int __damon_stop(struct uks_damon_ctx *ctx)
{
	pthread_t th;
	bool join = false;

	pthread_mutex_lock(&ctx->lock);
	if (!ctx->running) {
		pthread_mutex_unlock(&ctx->lock);
		return -EPERM;
	}
	ctx->stop = true;
	pthread_cond_broadcast(&ctx->wake);
	if (ctx->primitive && ctx->primitive->wake)
		ctx->primitive->wake(ctx);
	if (ctx->has_thread) {
		th = ctx->thread;
		ctx->has_thread = false;
		join = true;
	}
	while (!join && ctx->running)	/* someone else joins: wait for the end */
		pthread_cond_wait(&ctx->wake, &ctx->lock);
	pthread_mutex_unlock(&ctx->lock);
	if (join)
		__uks_damon_join(ctx, th);
	return 0;
}

/**
 * uks_damon_stop - stop the monitor threads of @ctxs and wait for them
 * @ctxs:	the contexts
 * @nr:		their number
 *
 * Return: 0, or -EPERM at the first context that does not run (5.15:
 * "off" when off, or after every target exited).
 */
UKS_EXPORT int uks_damon_stop(struct uks_damon_ctx **ctxs, int nr)
{
	for (int i = 0; i < nr; i++) {
		int err = __damon_stop(ctxs[i]);

		if (err) {
			reap(ctxs[i]);
			return err;
		}
	}
	return 0;
}

/** uks_damon_is_running - Return: whether @ctx has a monitor thread running */
UKS_EXPORT bool uks_damon_is_running(struct uks_damon_ctx *ctx)
{
	bool running;

	pthread_mutex_lock(&ctx->lock);
	running = ctx->running;
	pthread_mutex_unlock(&ctx->lock);
	return running;
}

/** uks_damon_kdamond_pid - Return: the thread id of the monitor thread, or -1 */
UKS_EXPORT pid_t uks_damon_kdamond_pid(struct uks_damon_ctx *ctx)
{
	pid_t tid;

	pthread_mutex_lock(&ctx->lock);
	tid = ctx->running && ctx->tid ? ctx->tid : -1;
	pthread_mutex_unlock(&ctx->lock);
	return tid;
}
