/* SPDX-License-Identifier: MIT */
/*
 * DAMON's sysfs files (<sysfs>/kernel/mm/damon/admin of Linux 6.12, with
 * 6.15's intervals goal and update_tuned_intervals), as a kfs tree: the
 * directories' objects, shared by the tree (sysfs.c) and the kdamond
 * commands (sysfs_cmd.c).
 *
 * Every object a directory stands for (a kdamond, a context, a target, a
 * region) is counted: the tree holds one reference while the directory
 * exists, an open file one more (kfs_root ->get/->put), so a file left
 * open across an nr_* write that removed its directory reads and writes
 * -ENODEV, as kernfs answers for a removed node, instead of freed memory.
 *
 * Lock order: sfs->lock (the tree's kfs lock; 6.12's damon_sysfs_lock)
 * -> ctx->lock (lib/damon).
 */
#ifndef UKS_LIB_DAMON_SYSFS_SYSFS_H
#define UKS_LIB_DAMON_SYSFS_SYSFS_H

#include <pthread.h>
#include <stdbool.h>

#include "core/kfs.h"
#include "damon/damon.h"

enum sfs_ops { SFS_OPS_VADDR, SFS_OPS_FVADDR, SFS_OPS_PADDR, SFS_NR_OPS };

struct sfs_obj {
	unsigned int refs;	/* under sfs->lock */
	bool dead;		/* its directory was removed */
};

struct sfs_region {
	struct sfs_obj o;
	unsigned long start, end;
};

struct sfs_target {
	struct sfs_obj o;
	int pid;
	int nr_regions;
	struct sfs_region **regions;
};

struct sfs_context {
	struct sfs_obj o;
	enum sfs_ops ops;
	unsigned long sample_us, aggr_us, update_us;
	struct damon_intervals_goal goal;
	unsigned long min_nr_regions, max_nr_regions;
	int nr_targets;
	struct sfs_target **targets;
};

struct sfs_kdamond {
	struct sfs_obj o;
	int nr_contexts;		/* 0 or 1, as 6.12 */
	struct sfs_context *ctx;
	struct uks_damon_ctx *damon;	/* from the last "on"; kept after "off" */
};

struct damon_sysfs {
	pthread_mutex_t lock;
	int nr_kdamonds;
	struct sfs_kdamond **kdamonds;
	char primitive[32];		/* what "vaddr" runs on; "" = the default */
};

extern const char *const __uks_damon_sysfs_ops_names[SFS_NR_OPS];

/* sysfs_cmd.c: a write to a kdamond's "state"; sfs->lock held. */
int __uks_damon_sysfs_state(struct damon_sysfs *sfs, struct sfs_kdamond *kd,
			    const char *cmd, const struct uks_peer *writer);
bool __uks_damon_sysfs_running(const struct sfs_kdamond *kd);
const char *__uks_damon_sysfs_primitive(const struct damon_sysfs *sfs, enum sfs_ops ops,
					char *buf, size_t len);
/* sysfs_cmd.c: the kernel's sysfs_streq() */
bool __uks_damon_sysfs_streq(const char *s1, const char *s2);

/*
 * __uks_damon_sysfs_root - <sysfs>/kernel/mm/damon/admin of 6.12; "vaddr"
 * contexts run on @primitive (NULL: uks_damon_default_primitive())
 * Return: 0, -ENOENT (unknown primitive), -EOPNOTSUPP (not available
 * here), -ENOMEM.
 */
int __uks_damon_sysfs_root(const char *primitive, struct kfs_root *root);

#endif
