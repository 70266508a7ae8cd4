/* SPDX-License-Identifier: MIT */
/*
 * kfs: the file-node contract every subsystem's kernel files are built on
 * (tracefs, DAMON's debugfs, the slab caches' sysfs, aarch32_el0), in the
 * spirit of the kernel's kernfs and seq_file.
 *
 * What.  A subsystem describes its files as nodes: a name, a mode, and
 * either file ops or directory contents.  A directory's children are a
 * static table (->children), found by the walk itself, and/or produced on
 * demand by ->dir ops (events that come and go, one directory per slab
 * cache, instances made by mkdir).  Nodes are constant descriptions; what
 * a path names is a node plus the objects it is for, a struct kfs_ref,
 * built one component at a time by the walk: a child found in a static
 * table inherits its parent's objects, a ->dir lookup sets its own.  So
 * "per_cpu/cpu3/stats" is one "stats" node with ref->idx = 3, and
 * "events/kmem/kfree/enable" one "enable" node with ref->sub = the event's
 * file in that instance.
 *
 * The walk, open-file state and read offsets live here (kfs.c), once:
 * front ends (uksfs over FUSE and a socket) and the subsystems' own file
 * APIs (uks_tracefs_open()) go through the same code, so the bytes are the
 * same whichever way a file is reached.
 *
 *  - A "show" file (->show) is seq_file: its text is made at the first
 *    read of an open, under the tree's lock, and served by offset; a read
 *    at another offset makes it again and skips forward, as lseek() on a
 *    seq_file does.
 *  - A "read" file (->read) keeps its own state (trace, trace_pipe); a
 *    read at another offset of a non-stream file reopens it and skips.
 *    KFS_STREAM files (trace_pipe) ignore offsets.
 *  - ->write gets the bytes of one write(2), where it lands (-1: the
 *    library API, which has no offset) and who writes.  Most kernel
 *    handlers take a command wherever it lands; files that care look at
 *    @off.  Writes are not serialised per open file: threads that share
 *    one trace_marker descriptor write at once, as in the kernel, so a
 *    ->write that keeps per-open state guards it itself.
 *
 * Adding a file is one entry in its subsystem's table:
 *
 *	static const struct kfs_ops id_ops = { .show = show_event_id };
 *	... KFS_FILE("id", 0444, &id_ops), ...
 *
 * Lock order: the tree's lock (struct kfs_root ->lock, e.g. trace's
 * event_mutex) is held across each walk and each ->show, never across
 * ->open, ->read, ->write or ->release, which take what they need.  An
 * open file's own mutex (one read at a time: its offset and text) is taken
 * outside it.
 *
 * Lifetime: what a ref points to may go away once the tree's lock is
 * dropped (an instance removed by rmdir, a dynamic event deleted).  An
 * open file pins its ref's objects through the root's ->get, called under
 * the lock at the end of the walk, and lets go through ->put at the last
 * close, as kernfs's active references do.
 */
#ifndef UKS_LIB_CORE_KFS_H
#define UKS_LIB_CORE_KFS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "core/ptrace_access.h"
#include "core/seq.h"

#define KFS_NAME_MAX	256	/* one component, NUL included */
#define KFS_PATH_MAX	1024

struct kfs_node;
struct kfs_open_file;

/*
 * struct kfs_ref - what a path names: a node and the objects it serves
 * @node:	the node
 * @obj:	the tree's object (the trace instance, the DAMON context, the cache)
 * @sub:	an object below it (an event system or an event's file)
 * @idx:	a number the name carries (cpuN, an option's index)
 */
struct kfs_ref {
	const struct kfs_node *node;
	void *obj;
	void *sub;
	long idx;
};

/* One entry of a listing: @name, and what it names (for its mode). */
typedef int (*kfs_filldir_t)(const char *name, const struct kfs_ref *child, void *arg);

/*
 * struct kfs_dir_ops - a directory whose children are made on demand
 * @lookup:	@name in @dir: fill @child (its node and objects); -ENOENT if none
 * @iterate:	call @fill for each child, in the order ls shows; stop at and
 *		return its first non-zero value
 * @mkdir:	make @name in @dir (instances/); without it mkdir is -EPERM
 * @rmdir:	remove @name (-EBUSY while in use); without it -EPERM
 * @has:	which children of the static table @dir has (NULL: all): one
 *		table can serve directories that differ a little (tracefs's
 *		top level and an instance, which lacks README and others)
 *
 * ->lookup, ->iterate and ->has run under the tree's lock; children of
 * the static table come first and are not passed to ->lookup/->iterate.
 * ->mkdir and ->rmdir run without it, with the directory pinned (see
 * struct kfs_root ->get): they look @name up again under their own lock.
 */
struct kfs_dir_ops {
	int (*lookup)(const struct kfs_ref *dir, const char *name, struct kfs_ref *child);
	int (*iterate)(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg);
	bool (*has)(const struct kfs_ref *dir, const struct kfs_node *child);
	int (*mkdir)(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer);
	int (*rmdir)(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer);
};

/*
 * struct kfs_caller - who a write is for
 * @peer:	the task behind the request (a FUSE write may come from
 *		another task than the opener), or NULL for the serving process
 * @arg:	what the caller passes along for the file, or NULL
 *		(trace_marker: the task to credit the line to)
 */
struct kfs_caller {
	const struct uks_peer *peer;
	const void *arg;
};

/*
 * struct kfs_ops - a file
 * @open:	per-open setup (->priv); the error fails open(2)
 * @show:	a seq_file: write the whole text into @s (under the tree's lock)
 * @read:	or a read of its own, from the open file's state
 * @write:	one write(2): @buf (not NUL-terminated), @len, @off (-1 when
 *		the caller has no offset), for @caller; returns @len, or -errno
 * @poll:	non-zero when a read would not block (default: always)
 * @interrupt:	make a blocked ->read return -EINTR (from another thread)
 * @ioctl:	an ioctl(2) on the file; without it -ENOTTY
 * @read_pages: a consuming file that hands out whole pages
 *		(trace_pipe_raw): the next complete page into @buf, without
 *		waiting; returns its size, 0 when no page is complete yet,
 *		-EMSGSIZE when a page does not fit in @len, or -errno.  What
 *		it takes is no longer read by ->read.  Servers use it to place
 *		pages where splice(2) finds them (FUSE's page cache).
 * @release:	the last close
 */
struct kfs_ops {
	int (*open)(struct kfs_open_file *of);
	int (*show)(struct kfs_open_file *of, struct uks_seq *s);
	ssize_t (*read)(struct kfs_open_file *of, void *buf, size_t len);
	ssize_t (*write)(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			 const struct kfs_caller *caller);
	int (*poll)(struct kfs_open_file *of);
	void (*interrupt)(struct kfs_open_file *of);
	long (*ioctl)(struct kfs_open_file *of, unsigned int cmd, void *arg);
	ssize_t (*read_pages)(struct kfs_open_file *of, void *buf, size_t len);
	void (*release)(struct kfs_open_file *of);
};

/* struct kfs_node ->flags */
#define KFS_STREAM	0x1	/* reads consume (trace_pipe), or nonseekable_open(): no offsets,
				   no caching; pread/lseek over FUSE are -ESPIPE */

/*
 * struct kfs_node - one file or directory, as a constant description
 * @name:	the name in its directory (NULL ends a table; "" for nodes
 *		only reached through ->dir ops)
 * @mode:	S_IFDIR or S_IFREG, and the permission bits the kernel gives it
 * @flags:	KFS_*
 * @ops:	a file's operations
 * @dir:	a directory's children made on demand (or NULL)
 * @children:	a directory's static children, a table ended by a NULL name
 * @data:	a constant for shared ops (which attribute, which option)
 */
struct kfs_node {
	const char *name;
	mode_t mode;
	unsigned int flags;
	const struct kfs_ops *ops;
	const struct kfs_dir_ops *dir;
	const struct kfs_node *children;
	long data;
};

#define KFS_FILE(n, m, o)	{ .name = (n), .mode = S_IFREG | (m), .ops = (o) }
#define KFS_DIR(n, m, d, c)	{ .name = (n), .mode = S_IFDIR | (m), .dir = (d), .children = (c) }

static inline bool kfs_is_dir(const struct kfs_node *n)
{
	return S_ISDIR(n->mode);
}

/*
 * struct kfs_root - a subsystem's tree, as attached under a path
 * @node:	the top directory
 * @obj:	its object (->obj of the top ref)
 * @lock, @unlock: the tree's lock (optional), see the lock order above
 * @get:	pin the objects of @ref, which the walk just found, for an open
 *		file (or a mkdir/rmdir in that directory): called under the
 *		tree's lock, so whatever removes objects under that lock either
 *		sees the pin (tracefs: rmdir of an instance says -EBUSY) or ran
 *		before the walk (which then fails with -ENOENT).  The kernel's
 *		kernfs_get_active() and trace_array_get().  Returns 0 or -errno.
 * @in_use:	an open file stops (@on false) or starts again making its
 *		objects busy, without the tree's lock: after @get it is in use;
 *		__uks_kfs_flush() (a descriptor of it was closed: FUSE's FLUSH,
 *		sent before close(2) returns, while RELEASE comes later) stops
 *		it until the next read, write, poll or ioctl; the last close or
 *		a failed open stops it if it was.  @get's pin on memory stays
 *		until @put.  Optional.
 * @put:	undo @get: at the last close, or when the open fails; without
 *		the tree's lock
 * @release:	the tree goes away (uksfs is destroyed)
 * @kernfs:	a sysfs tree: a name past NAME_MAX is one it does not have
 *		(-ENOENT), as kernfs looks names up; libfs trees (tracefs,
 *		debugfs) refuse it with -ENAMETOOLONG
 */
struct kfs_root {
	const struct kfs_node *node;
	void *obj;
	void (*lock)(void *obj);
	void (*unlock)(void *obj);
	int (*get)(const struct kfs_ref *ref);
	void (*in_use)(const struct kfs_ref *ref, bool on);
	void (*put)(const struct kfs_ref *ref);
	void (*release)(void *obj);
	bool kernfs;
};

/*
 * struct kfs_open_file - an open file
 * @ref:	what was opened
 * @root:	the tree it is in
 * @flags:	open(2) flags; O_NONBLOCK is the current read's
 * @peer:	who opened it, or NULL for the serving process itself
 * @priv:	the file's own state, set by ->open
 */
struct kfs_open_file {
	struct kfs_ref ref;
	const struct kfs_root *root;
	int flags;
	const struct uks_peer *peer;
	void *priv;
	/* kfs.c's own */
	struct uks_peer opener;
	struct uks_seq seq;
	bool shown;
	off_t pos;
	pthread_mutex_t lock;
	int idle;		/* flushed, not used since: not in use */
};

/* What stat(2) shows of a path. */
struct kfs_stat {
	mode_t mode;
	unsigned int flags;	/* the node's KFS_* */
};

/*
 * The walk.  @path is relative to @root, components separated by '/'
 * (leading, trailing and doubled slashes are ignored; "." and ".." are
 * the caller's to resolve).  Errors are the kernel's: -ENOENT, -ENOTDIR,
 * -ENAMETOOLONG (not in a kernfs tree), -EISDIR, -EACCES (the mode forbids
 * the access).
 */
int __uks_kfs_stat(const struct kfs_root *root, const char *path, struct kfs_stat *st);
int __uks_kfs_list(const struct kfs_root *root, const char *path,
		   int (*fn)(const char *name, const struct kfs_stat *st, void *arg), void *arg);
int __uks_kfs_mkdir(const struct kfs_root *root, const char *path, const struct uks_peer *peer);
int __uks_kfs_rmdir(const struct kfs_root *root, const char *path, const struct uks_peer *peer);

int __uks_kfs_open(const struct kfs_root *root, const char *path, int flags,
		   const struct uks_peer *peer, struct kfs_open_file **out);
/* @off: where the read starts, or -1 for the file's own position. */
ssize_t __uks_kfs_read(struct kfs_open_file *of, void *buf, size_t len, off_t off);
ssize_t __uks_kfs_write(struct kfs_open_file *of, const void *buf, size_t len, off_t off,
			const struct uks_peer *writer, const void *write_arg);
void __uks_kfs_set_nonblock(struct kfs_open_file *of, bool nonblock);
int __uks_kfs_poll(struct kfs_open_file *of);
void __uks_kfs_interrupt(struct kfs_open_file *of);
long __uks_kfs_ioctl(struct kfs_open_file *of, unsigned int cmd, void *arg);
/* ->read_pages, between reads; -EOPNOTSUPP for other files.  Not a use (->in_use). */
ssize_t __uks_kfs_read_pages(struct kfs_open_file *of, void *buf, size_t len);
static inline bool kfs_has_pages(const struct kfs_open_file *of)
{
	return of->ref.node->ops->read_pages != NULL;
}
/* A descriptor of @of was closed (FUSE's FLUSH); see struct kfs_root ->in_use. */
void __uks_kfs_flush(struct kfs_open_file *of);
void __uks_kfs_close(struct kfs_open_file *of);

/* The node's type and flags as kfs_stat, for listings made by hand. */
static inline void kfs_stat_of(const struct kfs_node *n, struct kfs_stat *st)
{
	st->mode = n->mode;
	st->flags = n->flags;
}

#endif
