// SPDX-License-Identifier: MIT
/* chown(2) over FUSE: the caller from the request, cached attributes dropped. */
#include "config.h"

#if UKS_HAVE_FUSE3

#include "fs/fuse_owner.h"

int __uks_fuse_chown(fuse_req_t req, struct fs_owners *o, struct uks_vfs *vfs,
		     const char *path, uid_t uid, gid_t gid)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	struct fs_chown_caller c = { ctx->pid, ctx->uid, ctx->gid, 0, {0} };
	int n = fuse_req_getgroups(req, FS_CHOWN_GROUPS, c.groups);

	c.nr_groups = n < 0 ? 0 : n > FS_CHOWN_GROUPS ? FS_CHOWN_GROUPS : (unsigned int)n;
	return -__uks_fs_owner_chown(o, vfs, path, &c, uid, gid);
}

void __uks_fuse_reinherit(struct fuse_session *se, struct fs_nodes *nodes, fuse_ino_t changed)
{
	for (uint64_t ino = 1;; ino++) {
		struct fs_node *n = __uks_fs_node_by_ino(nodes, ino);

		if (!n)
			break;
		if (ino != changed && __atomic_load_n(&n->nlookup, __ATOMIC_RELAXED))
			fuse_lowlevel_notify_inval_inode(se, ino, -1, 0);
	}
}

#endif
