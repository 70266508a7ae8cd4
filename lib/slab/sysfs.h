/* SPDX-License-Identifier: MIT */
/* The slab caches' sysfs files, as a kfs tree (core/kfs.h). */
#ifndef UKS_LIB_SLAB_SYSFS_H
#define UKS_LIB_SLAB_SYSFS_H

#include "core/kfs.h"

/*
 * __uks_slab_sysfs_root - sys/kernel/slab: a directory per cache of this
 * process, with 5.15's attribute files.  The tree's lock is slab_mutex.
 * Returns 0.
 */
int __uks_slab_sysfs_root(struct kfs_root *root);

#endif
