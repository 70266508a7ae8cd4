// SPDX-License-Identifier: MIT
/*
 * The subsystems' trees, attached at the paths the caller names: each
 * subsystem declares its files next to its code (core/kfs.h); uksfs only
 * says where they appear.
 */
#include <uks/fs.h>

#include "core/compiler.h"
#include "damon/debugfs/dbgfs.h"
#include "damon/sysfs/sysfs.h"
#include "fs/vfs.h"
#include "sched/sysfs.h"
#include "slab/sysfs.h"
#include "trace/tracefs.h"

/** uks_vfs_add_a32 - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_a32(struct uks_vfs *vfs, const char *path, const char *list,
			       const char *config)
{
	struct kfs_root root;
	int ret = __uks_sched_sysfs_root(list, config, &root);

	return ret ? ret : __uks_vfs_attach(vfs, path, &root);
}

/** uks_vfs_add_slab - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_slab(struct uks_vfs *vfs, const char *path)
{
	struct kfs_root root;
	int ret = __uks_slab_sysfs_root(&root);

	return ret ? ret : __uks_vfs_attach(vfs, path, &root);
}

/** uks_vfs_add_tracefs - see <uks/fs.h>; the instance must outlive the tree */
UKS_EXPORT int uks_vfs_add_tracefs(struct uks_vfs *vfs, const char *path, struct uks_trace *tr)
{
	struct kfs_root root;

	__uks_tracefs_root(tr, &root);
	return __uks_vfs_attach(vfs, path, &root);
}

/** uks_vfs_add_damon - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_damon(struct uks_vfs *vfs, const char *path, const char *primitive)
{
	struct kfs_root root;
	int ret = __uks_damon_dbgfs_root(primitive, &root);

	return ret ? ret : __uks_vfs_attach(vfs, path, &root);
}

/** uks_vfs_add_damon_sysfs - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_damon_sysfs(struct uks_vfs *vfs, const char *path,
				       const char *primitive)
{
	struct kfs_root root;
	int ret = __uks_damon_sysfs_root(primitive, &root);

	return ret ? ret : __uks_vfs_attach(vfs, path, &root);
}
