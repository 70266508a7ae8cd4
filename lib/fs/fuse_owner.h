/* SPDX-License-Identifier: MIT */
/* The FUSE side of the tracing tree's owners (owner.h); fuse.c's helpers. */
#ifndef UKS_LIB_FS_FUSE_OWNER_H
#define UKS_LIB_FS_FUSE_OWNER_H

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "fs/fuse_nodes.h"
#include "fs/owner.h"

/*
 * chown(2) of @path to @uid / @gid ((uid_t)-1 / (gid_t)-1: unchanged) by
 * the task behind @req; 0 or an errno.
 */
int __uks_fuse_chown(fuse_req_t req, struct fs_owners *o, struct uks_vfs *vfs,
		     const char *path, uid_t uid, gid_t gid);
/*
 * Files whose owner comes from @changed's (or which lost theirs with an
 * event) show the new one at once, not after the attribute timeout: the
 * kernel forgets what it cached of them.  Called after the reply, so the
 * chown(2) itself does not wait on it.
 */
void __uks_fuse_reinherit(struct fuse_session *se, struct fs_nodes *nodes, fuse_ino_t changed);

#endif
