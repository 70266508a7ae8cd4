/* SPDX-License-Identifier: MIT */
/* The sched files of sysfs, as a kfs tree (core/kfs.h). */
#ifndef UKS_LIB_SCHED_SYSFS_H
#define UKS_LIB_SCHED_SYSFS_H

#include "core/kfs.h"

/*
 * __uks_sched_sysfs_root - sys/devices/system/cpu with aarch32_el0, whose
 * set comes from @list or @config (both may be NULL; see uks_vfs_add_a32())
 * Returns 0, or -ENAMETOOLONG, -ENOMEM.
 */
int __uks_sched_sysfs_root(const char *list, const char *config, struct kfs_root *root);

#endif
