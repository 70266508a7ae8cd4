/* SPDX-License-Identifier: MIT */
/*
 * uksfs internals: subsystems' file trees (struct kfs_root, core/kfs.h)
 * attached in a struct uks_vfs.
 *
 * A tree serves one subtree (tracefs, slab).  Paths it gets are relative
 * to its mount point ("" is its root) and already normalised: no leading,
 * trailing or doubled slashes, no "." or "..".
 *
 * Open and write get the caller (@peer): the task behind a FUSE request
 * or the socket's peer, whose pid is a thread id for FUSE.  NULL means
 * the serving process itself (the library API).  Files that make uksd act
 * on a process named by pid check the caller against it with the
 * kernel's ptrace rule (__uks_ptrace_may_access()).
 */
#ifndef UKS_LIB_FS_VFS_H
#define UKS_LIB_FS_VFS_H

#include <pthread.h>

#include <uks/fs.h>

#include "core/kfs.h"
#include "core/ptrace_access.h"

#define VFS_PATH_MAX	1024
#define VFS_MAX_MOUNTS	8

struct vfs_mount {
	char path[VFS_PATH_MAX];	/* normalised, e.g. "sys/kernel/tracing" */
	size_t len;
	struct kfs_root root;
};

struct uks_vfs {
	pthread_rwlock_t lock;		/* the mount table */
	struct vfs_mount mounts[VFS_MAX_MOUNTS];
	unsigned int nr_mounts;
};

/* An open file: the tree's, and what stat(2) shows of it. */
struct uks_vfs_file {
	struct kfs_open_file *of;
	struct uks_vfs_stat st;
};

/* Serve @root's tree at @path (see vfs.c). */
int __uks_vfs_attach(struct uks_vfs *vfs, const char *path, const struct kfs_root *root);
/* mkdir(2), rmdir(2) and ioctl(2) for a caller, as the front ends ask. */
int __uks_vfs_mkdir(struct uks_vfs *vfs, const char *path, const struct uks_peer *peer);
int __uks_vfs_rmdir(struct uks_vfs *vfs, const char *path, const struct uks_peer *peer);
long __uks_vfs_ioctl(struct uks_vfs_file *f, unsigned int cmd, void *arg);
/* A descriptor of @f was closed; its last close is uks_vfs_close(). */
void __uks_vfs_flush(struct uks_vfs_file *f);

/* The front ends' calls: uks_vfs_open(), _read() and _pwrite() for a caller. */
int __uks_vfs_open_as(struct uks_vfs *vfs, const char *path, int flags,
		      const struct uks_peer *peer, struct uks_vfs_file **out);
/* @nonblock: the O_NONBLOCK of this read request (fcntl may change it). */
ssize_t __uks_vfs_read_nb(struct uks_vfs_file *f, void *buf, size_t len, off_t off,
			  bool nonblock);
/* Whole pages of a page-feeding file (kfs ->read_pages); see kfs.h. */
ssize_t __uks_vfs_read_pages(struct uks_vfs_file *f, void *buf, size_t len);
bool __uks_vfs_has_pages(const struct uks_vfs_file *f);
ssize_t __uks_vfs_pwrite_as(struct uks_vfs_file *f, const void *buf, size_t len, off_t off,
			    const struct uks_peer *peer);

/*
 * Is @path inside a tracefs tree?  Then @tree is set to the tree (its
 * instance) and @rest to the path inside it.
 */
bool __uks_vfs_tracefs_path(struct uks_vfs *vfs, const char *path, const void **tree,
			    const char **rest);

#endif
