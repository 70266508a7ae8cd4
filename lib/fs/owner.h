/* SPDX-License-Identifier: MIT */
/*
 * Owners of the tracing tree's files as tracefs gives them (6.x): every
 * file and directory belongs to the mount's uid and gid (the gid= mount
 * option) unless chown(2) set its own.  What a file falls back to when it
 * has none of its own:
 *  - the tree's top directory: the mount's uid and gid;
 *  - instances/NAME and below: the instances directory's own owner when
 *    it has one (chgrp instances makes new instances that group), else
 *    the top directory's;
 *  - below an events directory: the owner of the directory holding
 *    events (the top or instances/NAME), not that of events itself;
 *  - anything else: the top directory's.
 * Only the tracing tree has owners of its own; the other trees keep the
 * serving user's.
 */
#ifndef UKS_LIB_FS_OWNER_H
#define UKS_LIB_FS_OWNER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fs/vfs.h"

#define FS_OWNERS_MAX		4096	/* paths with an owner of their own */
#define FS_OWNERS_BUCKETS	256

struct fs_owner;

struct fs_owners {
	pthread_mutex_t lock;		/* taken before the VFS's locks */
	uid_t uid;			/* the mount's */
	gid_t gid;			/* the tracing tree's (gid=) */
	gid_t other_gid;		/* the other trees' */
	struct fs_owner *buckets[FS_OWNERS_BUCKETS];
	size_t nr;
};

void __uks_fs_owners_init(struct fs_owners *o, uid_t uid, gid_t gid, gid_t tracing_gid);
void __uks_fs_owners_free(struct fs_owners *o);
/* The owner stat(2) shows for @path. */
void __uks_fs_owner_of(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
		       uid_t *uid, gid_t *gid);
#define FS_CHOWN_GROUPS	64

/* Who asks for a chown(2): a task and its fs uid, gid and groups. */
struct fs_chown_caller {
	pid_t pid;
	uid_t uid;
	gid_t gid;
	unsigned int nr_groups;
	gid_t groups[FS_CHOWN_GROUPS];
};

/*
 * chown(2) of @path by @c as the kernel allows it: the owner may keep the
 * owner and set the group to one of its own; CAP_CHOWN may do anything.
 * 0, -EPERM, or what __uks_fs_owner_set() returns.
 */
int __uks_fs_owner_chown(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
			 const struct fs_chown_caller *c, uid_t uid, gid_t gid);
/*
 * chown(2) of @path, (uid_t)-1 / (gid_t)-1 leaving that one alone; the
 * caller checked the right to.  0, -EPERM outside the tracing tree, or
 * -ENOMEM past FS_OWNERS_MAX paths.
 */
int __uks_fs_owner_set(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
		       uid_t uid, gid_t gid);
/* Do other files take their owner from @path's (the top, instances/NAME)? */
bool __uks_fs_owner_inherited(struct uks_vfs *vfs, const char *path);
/* @path and what was below it are gone (rmdir). */
void __uks_fs_owner_forget(struct fs_owners *o, struct uks_vfs *vfs, const char *path);
/* Drop the owners of paths that no longer exist; did any go? */
bool __uks_fs_owner_prune(struct fs_owners *o, struct uks_vfs *vfs);
/* @path was written: a *_events file may have removed events (prune). */
bool __uks_fs_owner_written(struct fs_owners *o, struct uks_vfs *vfs, const char *path);

#endif
