/* SPDX-License-Identifier: MIT */
/* What uksfs tells the kernel unasked: poll wake-ups and fed pages (fuse_notify.c). */
#ifndef UKS_LIB_FS_FUSE_NOTIFY_H
#define UKS_LIB_FS_FUSE_NOTIFY_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>

#include "fs/vfs.h"

struct fs_poll;
struct fs_feed;

/**
 * struct fs_notify - a mount's pending polls and page feeds
 * @se:		the session notifications go to
 * @lock:	@polls, @feeds and each feed's state (a leaf: no VFS call
 *		is made under it but ->read_pages)
 * @polls:	poll(2)s waiting for their file to become readable
 * @feeds:	files whose pages are put in the page cache
 */
struct fs_notify {
	struct fuse_session *se;
	pthread_mutex_t lock;
	struct fs_poll *polls;
	struct fs_feed *feeds;
};

/* @n->se is set once the session exists. */
void __uks_fuse_notify_init(struct fs_notify *n);
void __uks_fuse_notify_destroy(struct fs_notify *n);
/* The notifier thread's round (every 20 ms): feed pages, then wake polls. */
void __uks_fuse_notify_tick(struct fs_notify *n);

/* A POLL request on @f: is it readable, and if not keep @ph for later (taken). */
bool __uks_fuse_poll(struct fs_notify *n, struct uks_vfs_file *f, struct fuse_pollhandle *ph);
/* @f, inode @ino, was opened: feed its pages if it hands out pages. */
void __uks_fuse_feed_open(struct fs_notify *n, fuse_ino_t ino, struct uks_vfs_file *f);
/* @f's last close: its polls and feed go (before it is closed). */
void __uks_fuse_notify_release(struct fs_notify *n, struct uks_vfs_file *f);
/*
 * A READ of @f (inode @ino) at @off: 1 when the feed answered it (@buf,
 * *@got bytes), 0 when it is an ordinary read.  @direct: read(2), not the
 * page cache filling itself.
 */
int __uks_fuse_feed_read(struct fs_notify *n, fuse_ino_t ino, struct uks_vfs_file *f,
			 off_t off, size_t size, bool direct, char *buf, size_t *got);
/* The size stat(2) shows of inode @ino: the end of its feed, else @size. */
off_t __uks_fuse_feed_size(struct fs_notify *n, fuse_ino_t ino, off_t size);

#endif
