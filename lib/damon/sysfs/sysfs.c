// SPDX-License-Identifier: MIT
/*
 * The DAMON sysfs files of Linux 6.12 (mm/damon/sysfs.c), as kfs nodes
 * (core/kfs.h) that uksfs attaches at <sysfs>/kernel/mm/damon/admin:
 *
 *	kdamonds/nr_kdamonds
 *	kdamonds/<K>/state, pid
 *	kdamonds/<K>/contexts/nr_contexts
 *	contexts/<C>/avail_operations, operations
 *	contexts/<C>/monitoring_attrs/intervals/sample_us, aggr_us, update_us
 *	contexts/<C>/monitoring_attrs/intervals/intervals_goal/access_bp, aggrs,
 *		min_sample_us, max_sample_us			(6.15)
 *	contexts/<C>/monitoring_attrs/nr_regions/min, max
 *	contexts/<C>/targets/nr_targets
 *	targets/<T>/pid_target, regions/nr_regions, regions/<R>/start, end
 *	contexts/<C>/schemes/nr_schemes			(0 only: no DAMOS yet)
 *
 * The files take and give what 6.12's do:
 *  - a file holds the value written, checked only for its syntax; what
 *    the values mean together (3 <= min <= max regions, sample_us <=
 *    aggr_us, the intervals goal, ranges in order, pids that exist) is
 *    checked by "on" and "commit" (sysfs_cmd.c);
 *  - numbers are kstrtoul()/kstrtoint() in base 0 (0x hex, 0 octal, '+',
 *    one trailing newline): syntax -EINVAL, out of range -ERANGE where the
 *    kernel passes kstrto*'s error on (intervals, goal, start/end, the
 *    nr_* files) and -EINVAL where it does not (nr_regions/min and max,
 *    pid_target);
 *  - nr_* files: a negative number is -EINVAL; writing N removes every
 *    directory and makes 0..N-1 afresh with defaults; nr_kdamonds is
 *    -EBUSY while a kdamond runs; nr_contexts takes 0 or 1 only;
 *    nr_schemes takes 0 only (-EINVAL), until DAMOS is in the core;
 *  - operations: "vaddr", "fvaddr" or "paddr" (sysfs_streq), whatever
 *    avail_operations lists; "on" refuses one that is not available;
 *  - defaults: vaddr, 5000 / 100000 / 60000000 us, goal 0 0 0 0,
 *    10..1000 regions, pid_target 0, start/end 0;
 *  - modes: 0600, read-only files (pid, avail_operations) 0400; a write
 *    of 0 bytes is 0 (sysfs never calls the store); one write is one
 *    value, wherever it lands, up to a page.
 * avail_operations lists "vaddr", served by the primitive the tree was
 * made with (uks_damon_default_primitive(): vaddr-sd, else vaddr-refs),
 * and "fvaddr", its fixed-range twin (fvaddr-sd, fvaddr-refs: the regions
 * written, never fitted to the mappings); not "paddr": user space has no
 * physical accessed bits to sample.
 *
 * The nodes.  ref->obj is the tree (struct damon_sysfs), ref->sub the
 * object of the nearest numbered directory above (struct sfs_kdamond,
 * sfs_context, sfs_target, sfs_region; see sysfs.h for their lifetime).
 * ->data says which file a node is.
 *
 * Lock order: sfs->lock (the tree's kfs lock, held by kfs across walks and
 * ->show; taken by ->write) -> ctx->lock.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "core/mem_avail.h"
#include "damon/sysfs/sysfs.h"

#define SFS_WRITE_MAX	4096	/* kernfs hands a store one page */

const char *const __uks_damon_sysfs_ops_names[SFS_NR_OPS] = { "vaddr", "fvaddr", "paddr" };

enum sfs_file {
	F_NR_KDAMONDS, F_STATE, F_PID, F_NR_CONTEXTS, F_AVAIL_OPS, F_OPS,
	F_SAMPLE_US, F_AGGR_US, F_UPDATE_US,
	F_GOAL_ACCESS_BP, F_GOAL_AGGRS, F_GOAL_MIN_SAMPLE, F_GOAL_MAX_SAMPLE,
	F_NR_MIN, F_NR_MAX, F_NR_TARGETS, F_PID_TARGET, F_NR_REGIONS,
	F_START, F_END, F_NR_SCHEMES,
};

/* ------------------------------------------------------------ numbers */

static unsigned int hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10u : 16u;
}

/* kstrtoull(s, 0): '+'?, 0x hex / 0 octal / decimal, one '\n' may end it */
static int k_strtoull(const char *s, unsigned long long *res)
{
	unsigned long long v = 0;
	unsigned int base = 10, digits = 0;
	bool overflow = false;

	if (*s == '+')
		s++;
	if (s[0] == '0') {
		base = ((s[1] | 0x20) == 'x' && hexval((unsigned char)s[2]) < 16) ? 16 : 8;
		if (base == 16)
			s += 2;
	}
	for (;; s++, digits++) {
		unsigned int d = hexval((unsigned char)*s);

		if (d >= base)
			break;
		if (v > (ULLONG_MAX - d) / base)
			overflow = true;
		v = v * base + d;
	}
	if (!digits)
		return -EINVAL;
	if (overflow)
		return -ERANGE;
	if (*s == '\n')
		s++;
	if (*s)
		return -EINVAL;
	*res = v;
	return 0;
}

static int k_strtoul(const char *s, unsigned long *res)
{
	unsigned long long v;
	int ret = k_strtoull(s, &v);

	if (!ret)
		*res = (unsigned long)v;
	return ret;
}

/* kstrtoint(s, 0): kstrtoll, then -ERANGE outside int */
static int k_strtoint(const char *s, int *res)
{
	unsigned long long v;
	int ret;

	if (s[0] == '-') {
		ret = k_strtoull(s + 1, &v);	/* no '+' after the '-' */
		if (ret)
			return ret;
		if (s[1] == '+')
			return -EINVAL;
		if (v > (unsigned long long)-(long long)INT_MIN)
			return -ERANGE;
		*res = (int)-(long long)v;
		return 0;
	}
	ret = k_strtoull(s, &v);
	if (ret)
		return ret;
	if (v > INT_MAX)
		return -ERANGE;
	*res = (int)v;
	return 0;
}

/* ------------------------------------------------------------ objects */

static void *obj_new(size_t size)
{
	struct sfs_obj *o = uks_kzalloc(size);

	if (o)
		o->refs = 1;	/* the tree's */
	return o;
}

/* Drop a reference; sfs->lock held.  Objects hold no memory but their own. */
static void obj_put(struct sfs_obj *o)
{
	if (!--o->refs)
		uks_kfree(o);
}

static void obj_kill(struct sfs_obj *o)
{
	o->dead = true;
	obj_put(o);
}

static void regions_rm(struct sfs_target *t)
{
	for (int i = 0; i < t->nr_regions; i++)
		obj_kill(&t->regions[i]->o);
	uks_kfree(t->regions);
	t->regions = NULL;
	t->nr_regions = 0;
}

static void targets_rm(struct sfs_context *c)
{
	for (int i = 0; i < c->nr_targets; i++) {
		regions_rm(c->targets[i]);
		obj_kill(&c->targets[i]->o);
	}
	uks_kfree(c->targets);
	c->targets = NULL;
	c->nr_targets = 0;
}

static void contexts_rm(struct sfs_kdamond *kd)
{
	if (kd->ctx) {
		targets_rm(kd->ctx);
		obj_kill(&kd->ctx->o);
	}
	kd->ctx = NULL;
	kd->nr_contexts = 0;
}

static void kdamonds_rm(struct damon_sysfs *sfs)
{
	for (int i = 0; i < sfs->nr_kdamonds; i++) {
		struct sfs_kdamond *kd = sfs->kdamonds[i];

		contexts_rm(kd);
		uks_damon_ctx_destroy(kd->damon);	/* not running: checked */
		kd->damon = NULL;
		obj_kill(&kd->o);
	}
	uks_kfree(sfs->kdamonds);
	sfs->kdamonds = NULL;
	sfs->nr_kdamonds = 0;
}

/*
 * Room for @nr objects of @size and their pointers, checked before taking
 * it: the numbers come from users (the kernel's kmalloc_array() with
 * __GFP_NOWARN fails the same way, -ENOMEM).
 */
static void **array_new(int nr, size_t size)
{
	if (__uks_mem_may_allocate_array((size_t)nr, size + sizeof(void *)))
		return NULL;
	return uks_kzalloc((size_t)nr * sizeof(void *));
}

static int regions_add(struct sfs_target *t, int nr)
{
	regions_rm(t);
	if (!nr)
		return 0;
	t->regions = (struct sfs_region **)array_new(nr, sizeof(struct sfs_region));
	if (!t->regions)
		return -ENOMEM;
	for (; t->nr_regions < nr; t->nr_regions++) {
		t->regions[t->nr_regions] = obj_new(sizeof(struct sfs_region));
		if (!t->regions[t->nr_regions]) {
			regions_rm(t);
			return -ENOMEM;
		}
	}
	return 0;
}

static int targets_add(struct sfs_context *c, int nr)
{
	targets_rm(c);
	if (!nr)
		return 0;
	c->targets = (struct sfs_target **)array_new(nr, sizeof(struct sfs_target));
	if (!c->targets)
		return -ENOMEM;
	for (; c->nr_targets < nr; c->nr_targets++) {
		c->targets[c->nr_targets] = obj_new(sizeof(struct sfs_target));
		if (!c->targets[c->nr_targets]) {
			targets_rm(c);
			return -ENOMEM;
		}
	}
	return 0;
}

static int contexts_add(struct sfs_kdamond *kd, int nr)
{
	struct sfs_context *c;

	contexts_rm(kd);
	if (!nr)
		return 0;
	c = obj_new(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->ops = SFS_OPS_VADDR;
	c->sample_us = 5000;
	c->aggr_us = 100000;
	c->update_us = 60000000;
	c->min_nr_regions = 10;
	c->max_nr_regions = 1000;
	kd->ctx = c;
	kd->nr_contexts = 1;
	return 0;
}

static int kdamonds_add(struct damon_sysfs *sfs, int nr)
{
	for (int i = 0; i < sfs->nr_kdamonds; i++)
		if (__uks_damon_sysfs_running(sfs->kdamonds[i]))
			return -EBUSY;
	kdamonds_rm(sfs);
	if (!nr)
		return 0;
	sfs->kdamonds = (struct sfs_kdamond **)array_new(nr, sizeof(struct sfs_kdamond));
	if (!sfs->kdamonds)
		return -ENOMEM;
	for (; sfs->nr_kdamonds < nr; sfs->nr_kdamonds++) {
		sfs->kdamonds[sfs->nr_kdamonds] = obj_new(sizeof(struct sfs_kdamond));
		if (!sfs->kdamonds[sfs->nr_kdamonds]) {
			kdamonds_rm(sfs);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ------------------------------------------------------------ files */

static enum sfs_file file_of(const struct kfs_open_file *of)
{
	return (enum sfs_file)of->ref.node->data;
}

/* The file's text; sfs->lock held (kfs holds it across ->show). */
static int sfs_show(struct kfs_open_file *of, struct uks_seq *s)
{
	struct sfs_obj *o = of->ref.sub;
	struct sfs_kdamond *kd = of->ref.sub;
	struct sfs_context *c = of->ref.sub;
	struct sfs_target *t = of->ref.sub;
	struct sfs_region *r = of->ref.sub;
	struct damon_sysfs *sfs = of->ref.obj;

	if (o && o->dead)
		return -ENODEV;
	switch (file_of(of)) {
	case F_NR_KDAMONDS:
		seq_printf(s, "%d\n", sfs->nr_kdamonds);
		break;
	case F_STATE:
		seq_puts(s, __uks_damon_sysfs_running(kd) ? "on\n" : "off\n");
		break;
	case F_PID:
		seq_printf(s, "%d\n", kd->damon ? (int)uks_damon_kdamond_pid(kd->damon) : -1);
		break;
	case F_NR_CONTEXTS:
		seq_printf(s, "%d\n", kd->nr_contexts);
		break;
	case F_AVAIL_OPS:
		for (int i = 0; i < SFS_NR_OPS; i++) {
			char prim[32];

			if (__uks_damon_sysfs_primitive(sfs, (enum sfs_ops)i, prim, sizeof(prim)))
				seq_printf(s, "%s\n", __uks_damon_sysfs_ops_names[i]);
		}
		break;
	case F_OPS:
		seq_printf(s, "%s\n", __uks_damon_sysfs_ops_names[c->ops]);
		break;
	case F_SAMPLE_US:
		seq_printf(s, "%lu\n", c->sample_us);
		break;
	case F_AGGR_US:
		seq_printf(s, "%lu\n", c->aggr_us);
		break;
	case F_UPDATE_US:
		seq_printf(s, "%lu\n", c->update_us);
		break;
	case F_GOAL_ACCESS_BP:
		seq_printf(s, "%lu\n", c->goal.access_bp);
		break;
	case F_GOAL_AGGRS:
		seq_printf(s, "%lu\n", c->goal.aggrs);
		break;
	case F_GOAL_MIN_SAMPLE:
		seq_printf(s, "%lu\n", c->goal.min_sample_us);
		break;
	case F_GOAL_MAX_SAMPLE:
		seq_printf(s, "%lu\n", c->goal.max_sample_us);
		break;
	case F_NR_MIN:
		seq_printf(s, "%lu\n", c->min_nr_regions);
		break;
	case F_NR_MAX:
		seq_printf(s, "%lu\n", c->max_nr_regions);
		break;
	case F_NR_TARGETS:
		seq_printf(s, "%d\n", c->nr_targets);
		break;
	case F_PID_TARGET:
		seq_printf(s, "%d\n", t->pid);
		break;
	case F_NR_REGIONS:
		seq_printf(s, "%d\n", t->nr_regions);
		break;
	case F_START:
		seq_printf(s, "%lu\n", r->start);
		break;
	case F_END:
		seq_printf(s, "%lu\n", r->end);
		break;
	case F_NR_SCHEMES:
		seq_puts(s, "0\n");
		break;
	}
	return 0;
}

/* An "nr_*" file: kstrtoint's error, -EINVAL below 0. */
static int parse_nr(const char *kbuf, int *nr)
{
	int ret = k_strtoint(kbuf, nr);

	if (ret)
		return ret;
	return *nr < 0 ? -EINVAL : 0;
}

/* A value into an unsigned long field: kstrtoul's own error. */
static int store_ul(const char *kbuf, unsigned long *field)
{
	unsigned long v;
	int ret = k_strtoul(kbuf, &v);

	if (!ret)
		*field = v;
	return ret;
}

/* One store; sfs->lock held. */
static int store(struct kfs_open_file *of, const char *kbuf, const struct uks_peer *writer)
{
	struct damon_sysfs *sfs = of->ref.obj;
	struct sfs_kdamond *kd = of->ref.sub;
	struct sfs_context *c = of->ref.sub;
	struct sfs_target *t = of->ref.sub;
	struct sfs_region *r = of->ref.sub;
	struct sfs_obj *o = of->ref.sub;
	int nr, ret, pid;

	if (o && o->dead)
		return -ENODEV;
	switch (file_of(of)) {
	case F_NR_KDAMONDS:
		ret = parse_nr(kbuf, &nr);
		return ret ? ret : kdamonds_add(sfs, nr);
	case F_STATE:
		return __uks_damon_sysfs_state(sfs, kd, kbuf, writer);
	case F_NR_CONTEXTS:
		ret = parse_nr(kbuf, &nr);
		if (ret)
			return ret;
		return nr > 1 ? -EINVAL : contexts_add(kd, nr);	/* one per kdamond */
	case F_OPS:
		for (int i = 0; i < SFS_NR_OPS; i++) {
			if (__uks_damon_sysfs_streq(kbuf, __uks_damon_sysfs_ops_names[i])) {
				c->ops = (enum sfs_ops)i;
				return 0;
			}
		}
		return -EINVAL;
	case F_SAMPLE_US:
		return store_ul(kbuf, &c->sample_us);
	case F_AGGR_US:
		return store_ul(kbuf, &c->aggr_us);
	case F_UPDATE_US:
		return store_ul(kbuf, &c->update_us);
	case F_GOAL_ACCESS_BP:
		return store_ul(kbuf, &c->goal.access_bp);
	case F_GOAL_AGGRS:
		return store_ul(kbuf, &c->goal.aggrs);
	case F_GOAL_MIN_SAMPLE:
		return store_ul(kbuf, &c->goal.min_sample_us);
	case F_GOAL_MAX_SAMPLE:
		return store_ul(kbuf, &c->goal.max_sample_us);
	case F_NR_MIN:
		return store_ul(kbuf, &c->min_nr_regions) ? -EINVAL : 0;
	case F_NR_MAX:
		return store_ul(kbuf, &c->max_nr_regions) ? -EINVAL : 0;
	case F_NR_TARGETS:
		ret = parse_nr(kbuf, &nr);
		return ret ? ret : targets_add(c, nr);
	case F_PID_TARGET:
		if (k_strtoint(kbuf, &pid))
			return -EINVAL;
		/*
		 * The kernel takes any number here (debugfs and sysfs are
		 * root's); uksfs may be shared, so a pid that exists must be
		 * one the writer could ptrace.  "on" and "commit" check again.
		 */
		if (writer && pid > 0) {
			ret = __uks_ptrace_may_access(writer, pid);
			if (ret && ret != -ESRCH)
				return ret;
		}
		t->pid = pid;
		return 0;
	case F_NR_REGIONS:
		ret = parse_nr(kbuf, &nr);
		return ret ? ret : regions_add(t, nr);
	case F_START:
		return store_ul(kbuf, &r->start);
	case F_END:
		return store_ul(kbuf, &r->end);
	case F_NR_SCHEMES:
		ret = parse_nr(kbuf, &nr);
		return ret ? ret : nr ? -EINVAL : 0;	/* no DAMOS in the core yet */
	case F_PID:
	case F_AVAIL_OPS:
		break;
	}
	return -EACCES;		/* no store: kernfs refuses the open for writing */
}

static ssize_t sfs_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			 const struct kfs_caller *caller)
{
	struct damon_sysfs *sfs = of->ref.obj;
	char *kbuf;
	int ret;

	(void)off;
	if (!len)
		return 0;
	if (len > SFS_WRITE_MAX)
		len = SFS_WRITE_MAX;
	kbuf = uks_kmalloc(len + 1);
	if (!kbuf)
		return -ENOMEM;
	memcpy(kbuf, buf, len);
	kbuf[len] = '\0';	/* a store sees up to the first NUL */
	pthread_mutex_lock(&sfs->lock);
	ret = store(of, kbuf, caller->peer);
	pthread_mutex_unlock(&sfs->lock);
	uks_kfree(kbuf);
	return ret ? ret : (ssize_t)len;
}

static const struct kfs_ops rw_ops = { .show = sfs_show, .write = sfs_write };
static const struct kfs_ops ro_ops = { .show = sfs_show };

#define RW(n, f)	{ .name = (n), .mode = S_IFREG | 0600, .ops = &rw_ops, .data = (f) }
#define RO(n, f)	{ .name = (n), .mode = S_IFREG | 0400, .ops = &ro_ops, .data = (f) }

/* ------------------------------------------------------------ the tree */

static const struct kfs_node region_files[] = {
	RW("start", F_START), RW("end", F_END), { .name = NULL }
};
static const struct kfs_node region_dir = KFS_DIR("", 0755, NULL, region_files);

/* The numbered children of a directory: its object's array. */
static int numbered(const struct kfs_ref *dir, void ***arr)
{
	struct sfs_obj *o = dir->sub;

	if (o && o->dead)
		return 0;
	switch (dir->node->children[0].data) {
	case F_NR_KDAMONDS:
		*arr = (void **)((struct damon_sysfs *)dir->obj)->kdamonds;
		return ((struct damon_sysfs *)dir->obj)->nr_kdamonds;
	case F_NR_CONTEXTS:
		*arr = (void **)&((struct sfs_kdamond *)dir->sub)->ctx;
		return ((struct sfs_kdamond *)dir->sub)->nr_contexts;
	case F_NR_TARGETS:
		*arr = (void **)((struct sfs_context *)dir->sub)->targets;
		return ((struct sfs_context *)dir->sub)->nr_targets;
	case F_NR_REGIONS:
		*arr = (void **)((struct sfs_target *)dir->sub)->regions;
		return ((struct sfs_target *)dir->sub)->nr_regions;
	default:
		return 0;
	}
}

static const struct kfs_node kdamond_dir, context_dir, target_dir;

static const struct kfs_node *numbered_node(const struct kfs_ref *dir)
{
	switch (dir->node->children[0].data) {
	case F_NR_KDAMONDS:
		return &kdamond_dir;
	case F_NR_CONTEXTS:
		return &context_dir;
	case F_NR_TARGETS:
		return &target_dir;
	default:
		return &region_dir;
	}
}

static int num_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	void **arr = NULL;
	int nr = numbered(dir, &arr);
	char *end;
	long i;

	if (name[0] < '0' || name[0] > '9' || (name[0] == '0' && name[1]))
		return -ENOENT;
	i = strtol(name, &end, 10);
	if (*end || i >= nr)
		return -ENOENT;
	*child = *dir;
	child->node = numbered_node(dir);
	child->sub = arr[i];
	return 0;
}

static int num_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	void **arr = NULL;
	int nr = numbered(dir, &arr), ret = 0;

	for (int i = 0; !ret && i < nr; i++) {
		struct kfs_ref child = *dir;
		char name[16];

		child.node = numbered_node(dir);
		child.sub = arr[i];
		snprintf(name, sizeof(name), "%d", i);
		ret = fill(name, &child, arg);
	}
	return ret;
}

static const struct kfs_dir_ops num_dir_ops = { .lookup = num_lookup, .iterate = num_iterate };

static const struct kfs_node regions_files[] = { RW("nr_regions", F_NR_REGIONS), { .name = NULL } };
static const struct kfs_node target_files[] = {
	RW("pid_target", F_PID_TARGET),
	KFS_DIR("regions", 0755, &num_dir_ops, regions_files),
	{ .name = NULL }
};
static const struct kfs_node target_dir = KFS_DIR("", 0755, NULL, target_files);

static const struct kfs_node targets_files[] = { RW("nr_targets", F_NR_TARGETS), { .name = NULL } };
static const struct kfs_node schemes_files[] = { RW("nr_schemes", F_NR_SCHEMES), { .name = NULL } };
static const struct kfs_node goal_files[] = {
	RW("access_bp", F_GOAL_ACCESS_BP), RW("aggrs", F_GOAL_AGGRS),
	RW("min_sample_us", F_GOAL_MIN_SAMPLE), RW("max_sample_us", F_GOAL_MAX_SAMPLE),
	{ .name = NULL }
};
static const struct kfs_node intervals_files[] = {
	RW("sample_us", F_SAMPLE_US), RW("aggr_us", F_AGGR_US), RW("update_us", F_UPDATE_US),
	KFS_DIR("intervals_goal", 0755, NULL, goal_files),
	{ .name = NULL }
};
static const struct kfs_node nr_regions_files[] = {
	RW("min", F_NR_MIN), RW("max", F_NR_MAX), { .name = NULL }
};
static const struct kfs_node attrs_files[] = {
	KFS_DIR("intervals", 0755, NULL, intervals_files),
	KFS_DIR("nr_regions", 0755, NULL, nr_regions_files),
	{ .name = NULL }
};
static const struct kfs_node context_files[] = {
	RO("avail_operations", F_AVAIL_OPS),
	RW("operations", F_OPS),
	KFS_DIR("monitoring_attrs", 0755, NULL, attrs_files),
	KFS_DIR("targets", 0755, &num_dir_ops, targets_files),
	KFS_DIR("schemes", 0755, NULL, schemes_files),
	{ .name = NULL }
};
static const struct kfs_node context_dir = KFS_DIR("", 0755, NULL, context_files);

static const struct kfs_node contexts_files[] = {
	RW("nr_contexts", F_NR_CONTEXTS), { .name = NULL }
};
static const struct kfs_node kdamond_files[] = {
	RW("state", F_STATE),
	RO("pid", F_PID),
	KFS_DIR("contexts", 0755, &num_dir_ops, contexts_files),
	{ .name = NULL }
};
static const struct kfs_node kdamond_dir = KFS_DIR("", 0755, NULL, kdamond_files);

static const struct kfs_node kdamonds_files[] = {
	RW("nr_kdamonds", F_NR_KDAMONDS), { .name = NULL }
};
static const struct kfs_node admin_files[] = {
	KFS_DIR("kdamonds", 0755, &num_dir_ops, kdamonds_files),
	{ .name = NULL }
};
static const struct kfs_node admin_dir = KFS_DIR("", 0755, NULL, admin_files);

static void sfs_lock(void *obj)
{
	pthread_mutex_lock(&((struct damon_sysfs *)obj)->lock);
}

static void sfs_unlock(void *obj)
{
	pthread_mutex_unlock(&((struct damon_sysfs *)obj)->lock);
}

/* An open file pins its directory's object (under sfs->lock). */
static int sfs_get(const struct kfs_ref *ref)
{
	struct sfs_obj *o = ref->sub;

	if (o)
		o->refs++;
	return 0;
}

static void sfs_put(const struct kfs_ref *ref)
{
	struct damon_sysfs *sfs = ref->obj;
	struct sfs_obj *o = ref->sub;

	if (!o)
		return;
	pthread_mutex_lock(&sfs->lock);
	obj_put(o);
	pthread_mutex_unlock(&sfs->lock);
}

static void sfs_release(void *obj)
{
	struct damon_sysfs *sfs = obj;

	pthread_mutex_lock(&sfs->lock);
	for (int i = 0; i < sfs->nr_kdamonds; i++)	/* stop before removing */
		if (sfs->kdamonds[i]->damon && uks_damon_is_running(sfs->kdamonds[i]->damon))
			uks_damon_stop(&sfs->kdamonds[i]->damon, 1);
	kdamonds_rm(sfs);
	pthread_mutex_unlock(&sfs->lock);
	pthread_mutex_destroy(&sfs->lock);
	uks_kfree(sfs);
}

int __uks_damon_sysfs_root(const char *primitive, struct kfs_root *root)
{
	struct damon_sysfs *sfs;
	int ret;

	if (primitive) {
		ret = uks_damon_primitive_available(primitive, NULL, 0);
		if (ret)
			return ret;
	}
	sfs = uks_kzalloc(sizeof(*sfs));
	if (!sfs)
		return -ENOMEM;
	pthread_mutex_init(&sfs->lock, NULL);
	if (primitive)
		snprintf(sfs->primitive, sizeof(sfs->primitive), "%s", primitive);
	*root = (struct kfs_root){ .node = &admin_dir, .obj = sfs, .lock = sfs_lock,
				   .unlock = sfs_unlock, .get = sfs_get, .put = sfs_put,
				   .release = sfs_release, .kernfs = true };
	return 0;
}
