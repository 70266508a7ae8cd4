// SPDX-License-Identifier: MIT
/*
 * The commands of a kdamond's "state" file (6.12's damon_sysfs_handle_cmd,
 * with 6.15's update_tuned_intervals): what "on" builds from the files,
 * what "commit" changes in a running monitor, and the errors of both.
 *
 *  - every command but "off" needs exactly one context (-EINVAL), as the
 *    kernel since its fix "mm/damon/sysfs: check contexts->nr before
 *    accessing contexts_arr" (6.12 itself read past the array);
 *  - on: -EBUSY while running; builds a new monitoring context from the
 *    files (the previous one, kept after "off" for its results, goes):
 *    operations not in avail_operations, min_nr_regions < 3, min > max,
 *    sample_us > aggr_us, an invalid intervals goal (6.15: with aggrs
 *    set, min_sample_us <= sample_us <= max_sample_us), a region with
 *    start > end or overlapping the one before, a pid_target that names
 *    no task: -EINVAL.  A pid the writer could not ptrace is -EPERM
 *    (uksfs may be shared; the kernel's files are root's);
 *  - off: -EINVAL if it never ran, -EPERM if it is not running
 *    (damon_stop());
 *  - commit: -EINVAL unless running; the same checks as "on", nothing
 *    changes when one fails; other operations than the running ones are
 *    -EINVAL (uks does not swap a running monitor's primitive; the kernel
 *    does); then the monitor thread applies the new
 *    attributes, intervals goal and targets between two samples
 *    (core/commit.c) and monitoring goes on;
 *  - update_tuned_intervals (6.15): -EINVAL unless running; the running
 *    context's sample and aggregation intervals into sample_us and aggr_us;
 *  - commit_schemes_quota_goals, update_schemes_stats,
 *    update_schemes_tried_bytes, update_schemes_tried_regions,
 *    clear_schemes_tried_regions, update_schemes_effective_quotas:
 *    -EINVAL unless running (6.12 handed them to the running kdamond);
 *    with no schemes there is nothing to do;
 *  - anything else: -EINVAL.  Words compare as sysfs_streq() (one
 *    trailing newline).
 *
 * Lock order: sfs->lock (held by the caller) -> ctx->lock.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "core/mem_avail.h"
#include "damon/sysfs/sysfs.h"

bool __uks_damon_sysfs_streq(const char *s1, const char *s2)
{
	while (*s1 && *s1 == *s2) {
		s1++;
		s2++;
	}
	if (*s1 == *s2)
		return true;
	if (!*s1 && *s2 == '\n' && !s2[1])
		return true;
	return *s1 == '\n' && !s1[1] && !*s2;
}

bool __uks_damon_sysfs_running(const struct sfs_kdamond *kd)
{
	return kd->damon && uks_damon_is_running(kd->damon);
}

/**
 * __uks_damon_sysfs_primitive - the uks primitive behind operations @ops
 * @sfs:	the tree ("vaddr" runs on its primitive, or the default)
 * @ops:	vaddr, fvaddr or paddr
 * @buf:	room for the name
 * @len:	its size
 *
 * fvaddr is the fixed-range twin of the vaddr primitive ("vaddr-sd" ->
 * "fvaddr-sd"); paddr has none (user space sees no physical accessed bits).
 * Return: @buf, or NULL when @ops is not available here (also vaddr, on a
 * kernel with neither soft-dirty bits nor smaps' Referenced:).
 */
const char *__uks_damon_sysfs_primitive(const struct damon_sysfs *sfs, enum sfs_ops ops,
					char *buf, size_t len)
{
	const char *vaddr = sfs->primitive[0] ? sfs->primitive : uks_damon_default_primitive();

	switch (ops) {
	case SFS_OPS_VADDR:
		snprintf(buf, len, "%s", vaddr);
		break;
	case SFS_OPS_FVADDR:
		if (strncmp(vaddr, "vaddr-", 6))
			return NULL;
		snprintf(buf, len, "f%s", vaddr);
		break;
	default:
		return NULL;
	}
	return uks_damon_primitive_available(buf, NULL, 0) ? NULL : buf;
}

/* find_get_pid(): a task with that id (threads too) */
static bool pid_exists(int pid)
{
	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * What "on" and "commit" take from a context's files, checked as the
 * kernel's damon_sysfs_build_ctx() checks them.  @c->targets and their
 * ranges are allocated here; free with inputs_free().
 */
static int inputs_of(const struct damon_sysfs *sfs, const struct sfs_context *sc,
		     const struct uks_peer *writer, struct damon_commit *c, char prim[32])
{
	struct damon_commit_target *ts;

	memset(c, 0, sizeof(*c));
	if (!__uks_damon_sysfs_primitive(sfs, sc->ops, prim, 32))
		return -EINVAL;		/* damon_select_ops(): not registered */
	c->attrs = (struct uks_damon_attrs){
		.sample_us = sc->sample_us, .aggr_us = sc->aggr_us, .update_us = sc->update_us,
		.min_nr_regions = sc->min_nr_regions, .max_nr_regions = sc->max_nr_regions,
	};
	c->goal = sc->goal;
	if (sc->min_nr_regions < 3 || sc->min_nr_regions > sc->max_nr_regions ||
	    sc->sample_us > sc->aggr_us ||
	    !__uks_damon_valid_intervals_goal(&sc->goal, sc->sample_us))
		return -EINVAL;
	if (!sc->nr_targets)
		return 0;
	ts = uks_kzalloc((size_t)sc->nr_targets * sizeof(*ts));
	if (!ts)
		return -ENOMEM;
	c->targets = ts;
	c->nr_targets = (unsigned int)sc->nr_targets;
	for (int i = 0; i < sc->nr_targets; i++) {
		const struct sfs_target *st = sc->targets[i];
		struct damon_addr_range *ar;

		if (!pid_exists(st->pid))
			return -EINVAL;
		if (writer) {
			int ret = __uks_ptrace_may_access(writer, st->pid);

			if (ret)
				return ret == -ESRCH ? -EINVAL : ret;
		}
		ts[i].id = (unsigned long)st->pid;
		if (!st->nr_regions)
			continue;
		if (__uks_mem_may_allocate_array((size_t)st->nr_regions, sizeof(*ar)))
			return -ENOMEM;
		ar = uks_kmalloc((size_t)st->nr_regions * sizeof(*ar));
		if (!ar)
			return -ENOMEM;
		ts[i].ranges = ar;
		ts[i].nr_ranges = (unsigned int)st->nr_regions;
		for (int j = 0; j < st->nr_regions; j++) {
			ar[j].start = st->regions[j]->start;
			ar[j].end = st->regions[j]->end;
			if (ar[j].start > ar[j].end || (j && ar[j - 1].end > ar[j].start))
				return -EINVAL;
		}
	}
	return 0;
}

static void inputs_free(struct damon_commit *c)
{
	for (unsigned int i = 0; i < c->nr_targets; i++)
		uks_kfree((void *)c->targets[i].ranges);
	uks_kfree((void *)c->targets);
}

/* damon_sysfs_before_terminate(): the targets go with the monitor */
static int before_terminate(struct uks_damon_ctx *ctx)
{
	uks_damon_destroy_targets(ctx);
	return 0;
}

static int build_ctx(const char *prim, const struct damon_commit *c,
		     struct uks_damon_ctx **out)
{
	static const struct uks_damon_callback cb = { .before_terminate = before_terminate };
	const struct uks_damon_attrs *a = &c->attrs;
	struct uks_damon_ctx *ctx;
	int ret = uks_damon_ctx_create(&ctx);

	if (ret)
		return ret;
	uks_damon_set_callback(ctx, &cb);
	ret = uks_damon_set_primitive(ctx, prim);
	if (!ret)
		ret = uks_damon_set_attrs(ctx, a->sample_us, a->aggr_us, a->update_us,
					  a->min_nr_regions, a->max_nr_regions);
	if (!ret)
		__uks_damon_set_intervals_goal(ctx, &c->goal);
	for (unsigned int i = 0; !ret && i < c->nr_targets; i++) {
		struct uks_damon_target *t;

		ret = uks_damon_add_target(ctx, c->targets[i].id, NULL, &t);
		if (!ret && c->targets[i].nr_ranges)
			ret = __uks_damon_set_regions(ctx, &t->t, c->targets[i].ranges,
						      c->targets[i].nr_ranges);
	}
	if (ret) {
		uks_damon_ctx_destroy(ctx);
		return ret;
	}
	*out = ctx;
	return 0;
}

static int turn_on(struct damon_sysfs *sfs, struct sfs_kdamond *kd,
		   const struct uks_peer *writer)
{
	struct damon_commit c;
	struct uks_damon_ctx *ctx;
	char prim[32];
	int ret;

	if (__uks_damon_sysfs_running(kd))
		return -EBUSY;
	ret = inputs_of(sfs, kd->ctx, writer, &c, prim);
	if (!ret) {
		uks_damon_ctx_destroy(kd->damon);	/* the last run's */
		kd->damon = NULL;
		ret = build_ctx(prim, &c, &ctx);
	}
	inputs_free(&c);
	if (ret)
		return ret;
	ret = uks_damon_start(&ctx, 1);
	if (ret) {
		uks_damon_ctx_destroy(ctx);
		return ret;
	}
	kd->damon = ctx;
	return 0;
}

static int commit(struct damon_sysfs *sfs, struct sfs_kdamond *kd,
		  const struct uks_peer *writer)
{
	struct damon_commit c;
	char prim[32];
	int ret;

	if (!__uks_damon_sysfs_running(kd))
		return -EINVAL;
	ret = inputs_of(sfs, kd->ctx, writer, &c, prim);
	/* the monitor keeps its primitive: other operations need off and on */
	if (!ret && strcmp(prim, uks_damon_primitive_name(kd->damon)))
		ret = -EINVAL;
	if (!ret)
		ret = __uks_damon_commit(kd->damon, &c);
	inputs_free(&c);
	return ret;
}

static int update_tuned_intervals(struct sfs_kdamond *kd)
{
	struct uks_damon_attrs a;

	if (!__uks_damon_sysfs_running(kd))
		return -EINVAL;
	uks_damon_get_attrs(kd->damon, &a);
	kd->ctx->sample_us = a.sample_us;
	kd->ctx->aggr_us = a.aggr_us;
	return 0;
}

/* The 6.12 commands about schemes: nothing to do without schemes. */
static const char *const scheme_cmds[] = {
	"commit_schemes_quota_goals", "update_schemes_stats", "update_schemes_tried_bytes",
	"update_schemes_tried_regions", "clear_schemes_tried_regions",
	"update_schemes_effective_quotas",
};

int __uks_damon_sysfs_state(struct damon_sysfs *sfs, struct sfs_kdamond *kd,
			    const char *cmd, const struct uks_peer *writer)
{
	if (__uks_damon_sysfs_streq(cmd, "off")) {
		if (!kd->damon)
			return -EINVAL;
		return uks_damon_stop(&kd->damon, 1);	/* -EPERM when not running */
	}
	if (__uks_damon_sysfs_streq(cmd, "on"))
		return kd->nr_contexts != 1 ? -EINVAL : turn_on(sfs, kd, writer);
	if (__uks_damon_sysfs_streq(cmd, "commit"))
		return kd->nr_contexts != 1 ? -EINVAL : commit(sfs, kd, writer);
	if (__uks_damon_sysfs_streq(cmd, "update_tuned_intervals"))
		return kd->nr_contexts != 1 ? -EINVAL : update_tuned_intervals(kd);
	for (size_t i = 0; i < sizeof(scheme_cmds) / sizeof(scheme_cmds[0]); i++)
		if (__uks_damon_sysfs_streq(cmd, scheme_cmds[i]))
			return kd->nr_contexts == 1 && __uks_damon_sysfs_running(kd) ? 0 : -EINVAL;
	return -EINVAL;
}
