// SPDX-License-Identifier: MIT
/*
 * uksfs over FUSE: the low-level libfuse3 API on top of the VFS tree.
 *
 * What.  A mount whose files behave as the kernel's: regular files report
 * size 0 and are opened with direct_io (reads always reach us, whatever
 * the size says, as with tracefs and sysfs), trace_pipe is non-seekable
 * and blocks in a worker thread, a FUSE interrupt (^C on a blocked cat)
 * interrupts that read, O_TRUNC arrives with the open (atomic_o_trunc) so
 * "echo > trace" clears the buffer and "echo >> set_event" appends, and
 * truncate(2) to size 0 does what opening with O_TRUNC does.
 *
 * Inodes.  The tree has no inode numbers of its own; a node is created for
 * each path the kernel looks up and kept for the life of the mount
 * (fuse_nodes.c), so the same path always has the same number.  Lookup counts are tracked for FORGET but nodes are never freed
 * before unmount, which keeps the lookup lock-free of use-after-free.
 *
 * Poll and splice.  A notifier thread wakes, every 20 ms, the poll(2)s
 * whose file became readable, and puts trace_pipe_raw's complete pages in
 * the page cache, where splice(2) takes them (fuse_notify.c): that file's
 * size is what was put there.
 *
 * Permissions: the files belong to the serving user with the kernel's
 * modes, the kernel checks them (default_permissions), and without
 * allow_other no other user gets in at all.  The tracing tree's group is
 * the gid= option's, and chown(2) gives its files owners of their own
 * (owner.c) under the kernel's rules, checked again there.  Opens and
 * writes reach the files with the requesting task (fuse_req_ctx(): its
 * thread id, uid and gid), which trace_marker credits and target_ids
 * checks.
 *
 * Worker threads come and go with the load; they stay out of
 * saved_cmdlines, whose slots belong to the traced programs.
 *
 * Stopping.  Unmounting ends the kernel's side and the workers' reads.
 * When that cannot be done (the mount point was detached while a bind
 * mount elsewhere keeps the connection), stopping must not wait for the
 * kernel: the workers wait on the device and on a stop eventfd together
 * (libfuse's custom I/O), leave when it fires, and closing the device
 * then aborts the connection, so what is left of the mount answers
 * ENOTCONN, as after a crash.
 *
 * Lock order: the node table's lock and fs->notify's are leaves; VFS calls are
 * made without either.  The owners' lock (owner.c) comes before the VFS's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/slab.h>
#include <uks/trace.h>

#include "config.h"
#include "core/compiler.h"
#include "fs/fuse_nodes.h"
#include "fs/server.h"
#include "fs/vfs.h"

#if UKS_HAVE_FUSE3

#define FUSE_USE_VERSION 312
#include <fuse_lowlevel.h>
#include <linux/fuse.h>	/* struct fuse_dirent: the readdir reply layout */

#include "fs/fuse_notify.h"
#include "fs/fuse_owner.h"

#define ATTR_TIMEOUT	1.0	/* tracefs trees change: event dirs come and go */

struct fuse_fs {
	struct uks_server srv;
	struct uks_vfs *vfs;
	struct fuse_session *se;
	char *mountpoint;
	pthread_t loop_thread, poll_thread;
	bool poll_thread_started;
	int stopping;
	unsigned int threads;
	void (*on_unmounted)(void *arg);
	void *arg;
	int stop_fd;			/* eventfd: readable once stopping; -1 without */
	struct fs_owners owners;
	struct timespec start;

	struct fs_nodes nodes;
	struct fs_notify notify;
};

static struct fuse_fs *fs_of(fuse_req_t req)
{
	uks_trace_set_thread_cmdline(false);
	return fuse_req_userdata(req);
}

/* Who sent @req: the calling thread's id and its fs uid and gid. */
static void req_peer(fuse_req_t req, struct uks_peer *peer)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	peer->pid = ctx->pid;
	peer->uid = ctx->uid;
	peer->gid = ctx->gid;
}

static void fill_stat(struct fuse_fs *fs, fuse_ino_t ino, const char *path,
		      const struct uks_vfs_stat *vs, struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = ino;
	st->st_mode = (vs->type == UKS_VFS_DIR ? S_IFDIR : S_IFREG) | (vs->mode & 07777);
	st->st_nlink = vs->type == UKS_VFS_DIR ? 2 : 1;
	__uks_fs_owner_of(&fs->owners, fs->vfs, path, &st->st_uid, &st->st_gid);
	st->st_blksize = 4096;
	st->st_size = __uks_fuse_feed_size(&fs->notify, ino, 0);
	st->st_atim = st->st_mtim = st->st_ctim = fs->start;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* Our files have no size the page cache could trust. */
	conn->want &= ~(unsigned int)FUSE_CAP_AUTO_INVAL_DATA;
	/* Fed pages (fuse_notify.c) leave the page cache when we say so only. */
	if (conn->capable & FUSE_CAP_EXPLICIT_INVAL_DATA)
		conn->want |= FUSE_CAP_EXPLICIT_INVAL_DATA;
}

/* @name in the directory numbered @parent, as a path into @path; 0 or an errno. */
static int child_path(struct fuse_fs *fs, fuse_ino_t parent, const char *name, char *path,
		      size_t size)
{
	struct fs_node *dir = __uks_fs_node_by_ino(&fs->nodes, parent);

	if (!dir)
		return ENOENT;
	if ((size_t)snprintf(path, size, "%s%s%s", dir->path, *dir->path ? "/" : "", name) >= size)
		return ENAMETOOLONG;
	return 0;
}

/* Answer a lookup (or a mkdir) of @path with its entry. */
static void reply_entry(fuse_req_t req, struct fuse_fs *fs, const char *path)
{
	struct fuse_entry_param e;
	struct uks_vfs_stat vs;
	struct fs_node *n;
	int ret = uks_vfs_stat(fs->vfs, path, &vs);

	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	n = __uks_fs_node_get(&fs->nodes, path);
	if (!n) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	__atomic_add_fetch(&n->nlookup, 1, __ATOMIC_RELAXED);
	memset(&e, 0, sizeof(e));
	e.ino = n->ino;
	e.attr_timeout = e.entry_timeout = ATTR_TIMEOUT;
	fill_stat(fs, n->ino, path, &vs, &e.attr);
	fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_fs *fs = fs_of(req);
	char path[VFS_PATH_MAX];
	int ret = child_path(fs, parent, name, path, sizeof(path));

	if (ret)
		fuse_reply_err(req, ret);
	else
		reply_entry(req, fs, path);
}

/* mkdir(2) and rmdir(2): the directory's tree decides (instances/; else EPERM). */
static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct fuse_fs *fs = fs_of(req);
	char path[VFS_PATH_MAX];
	struct uks_peer peer;
	int ret = child_path(fs, parent, name, path, sizeof(path));

	(void)mode;	/* the tree gives its directories the kernel's mode */
	if (!ret) {
		req_peer(req, &peer);
		ret = -__uks_vfs_mkdir(fs->vfs, path, &peer);
	}
	if (ret)
		fuse_reply_err(req, ret);
	else
		reply_entry(req, fs, path);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_fs *fs = fs_of(req);
	char path[VFS_PATH_MAX];
	struct uks_peer peer;
	int ret = child_path(fs, parent, name, path, sizeof(path));

	if (!ret) {
		req_peer(req, &peer);
		ret = -__uks_vfs_rmdir(fs->vfs, path, &peer);
	}
	if (!ret)
		__uks_fs_owner_forget(&fs->owners, fs->vfs, path);
	fuse_reply_err(req, ret);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs_node *n = __uks_fs_node_by_ino(&fs_of(req)->nodes, ino);

	if (n)
		__atomic_sub_fetch(&n->nlookup, nlookup, __ATOMIC_RELAXED);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_fs *fs = fs_of(req);
	struct fs_node *n = __uks_fs_node_by_ino(&fs->nodes, ino);
	struct uks_vfs_stat vs;
	struct stat st;
	int ret;

	(void)fi;
	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	ret = uks_vfs_stat(fs->vfs, n->path, &vs);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fill_stat(fs, ino, n->path, &vs, &st);
	fuse_reply_attr(req, &st, ATTR_TIMEOUT);
}

/*
 * truncate(2)/ftruncate to 0 is the kernel's O_TRUNC and chown(2) sets
 * the owner (the tracing tree only); nothing else changes.
 */
static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fuse_fs *fs = fs_of(req);
	struct fs_node *n = __uks_fs_node_by_ino(&fs->nodes, ino);
	struct uks_vfs_file *f;
	bool inherited = false;
	int ret;

	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	if (to_set & ~(FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME |
		       FUSE_SET_ATTR_ATIME_NOW | FUSE_SET_ATTR_MTIME_NOW | FUSE_SET_ATTR_CTIME |
		       FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		ret = __uks_fuse_chown(req, &fs->owners, fs->vfs, n->path,
			       to_set & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1,
			       to_set & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1);
		if (ret) {
			fuse_reply_err(req, ret);
			return;
		}
		inherited = __uks_fs_owner_inherited(fs->vfs, n->path);
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (attr->st_size != 0) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		struct uks_peer peer;

		req_peer(req, &peer);
		ret = __uks_vfs_open_as(fs->vfs, n->path, O_WRONLY | O_TRUNC, &peer, &f);
		if (ret) {
			fuse_reply_err(req, -ret);
			return;
		}
		uks_vfs_close(f);
	}
	op_getattr(req, ino, fi);
	if (inherited)
		__uks_fuse_reinherit(fs->se, &fs->nodes, ino);
}

struct dir_buf {
	fuse_req_t req;
	struct fuse_fs *fs;
	const char *dir;		/* while filling */
	char *buf;
	size_t len, cap;
};

/* readdir's inode numbers must be non-zero (0 reads as a deleted entry). */
static int dir_add(struct dir_buf *db, const char *name, fuse_ino_t ino, mode_t mode)
{
	struct stat st = { .st_ino = ino, .st_mode = mode };
	size_t need = fuse_add_direntry(db->req, NULL, 0, name, NULL, 0);

	if (db->len + need > db->cap) {
		size_t cap = db->cap ? 2 * db->cap : 4096;
		char *p;

		while (cap < db->len + need)
			cap *= 2;
		p = uks_krealloc(db->buf, cap);
		if (!p)
			return -ENOMEM;
		db->buf = p;
		db->cap = cap;
	}
	fuse_add_direntry(db->req, db->buf + db->len, need, name, &st, (off_t)(db->len + need));
	db->len += need;
	return 0;
}

static int dir_fill(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	struct dir_buf *db = arg;
	char path[VFS_PATH_MAX];
	struct fs_node *n;

	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", db->dir, *db->dir ? "/" : "", name) >=
	    sizeof(path))
		return 0;	/* unreachable by lookup anyway */
	n = __uks_fs_node_get(&db->fs->nodes, path);
	if (!n)
		return -ENOMEM;
	return dir_add(db, name, n->ino, st->type == UKS_VFS_DIR ? S_IFDIR : S_IFREG);
}

/* The whole listing is built at opendir and served by offset. */
static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_fs *fs = fs_of(req);
	struct fs_node *n = __uks_fs_node_by_ino(&fs->nodes, ino);
	struct dir_buf *db;
	int ret;

	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	db = uks_kzalloc(sizeof(*db));
	if (!db) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	db->req = req;
	db->fs = fs;
	db->dir = n->path;
	ret = dir_add(db, ".", ino, S_IFDIR);
	if (!ret)
		ret = dir_add(db, "..", ino == FUSE_ROOT_ID ? ino : FUSE_ROOT_ID, S_IFDIR);
	if (!ret)
		ret = uks_vfs_list(fs->vfs, n->path, dir_fill, db);
	if (ret) {
		uks_kfree(db->buf);
		uks_kfree(db);
		fuse_reply_err(req, -ret);
		return;
	}
	fi->fh = (uintptr_t)db;
	fuse_reply_open(req, fi);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct dir_buf *db = (struct dir_buf *)(uintptr_t)fi->fh;

	(void)ino;
	if (off < 0 || (size_t)off >= db->len) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	if (size < db->len - (size_t)off) {
		/* Whole entries only: walk them up to what fits. */
		size_t o = (size_t)off, end = o;

		while (end < db->len) {
			const struct fuse_dirent *d = (const void *)(db->buf + end);
			size_t rec = FUSE_DIRENT_ALIGN(FUSE_NAME_OFFSET + d->namelen);

			if (end + rec - o > size)
				break;
			end += rec;
		}
		size = end - o;
	} else {
		size = db->len - (size_t)off;
	}
	fuse_reply_buf(req, db->buf + off, size);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct dir_buf *db = (struct dir_buf *)(uintptr_t)fi->fh;

	(void)ino;
	uks_kfree(db->buf);
	uks_kfree(db);
	fuse_reply_err(req, 0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fuse_fs *fs = fs_of(req);
	struct fs_node *n = __uks_fs_node_by_ino(&fs->nodes, ino);
	struct uks_vfs_file *f;
	struct uks_peer peer;
	int ret;

	if (!n) {
		fuse_reply_err(req, ENOENT);
		return;
	}
	req_peer(req, &peer);
	ret = __uks_vfs_open_as(fs->vfs, n->path, fi->flags, &peer, &f);
	if (ret) {
		fuse_reply_err(req, -ret);
		return;
	}
	fi->fh = (uintptr_t)f;
	fi->direct_io = 1;
	fi->keep_cache = 0;
	fi->nonseekable = uks_vfs_file_stat(f)->stream;
	__uks_fuse_feed_open(&fs_of(req)->notify, ino, f);
	fuse_reply_open(req, fi);
}

static void on_interrupt(fuse_req_t req, void *data)
{
	(void)req;
	uks_vfs_interrupt(data);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct uks_vfs_file *f = (struct uks_vfs_file *)(uintptr_t)fi->fh;
	char *buf = uks_kmalloc(size ? size : 1);
	size_t fed;
	ssize_t n;

	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	/* read(2) comes with a lock owner; the page cache filling itself without */
	if (__uks_fuse_feed_read(&fs_of(req)->notify, ino, f, off, size, fi->lock_owner != 0,
				 buf, &fed)) {
		fuse_reply_buf(req, buf, fed);
		uks_kfree(buf);
		return;
	}
	if (uks_vfs_file_stat(f)->stream)
		fuse_req_interrupt_func(req, on_interrupt, f);
	/*
	 * A read request carries the file's flags as they are now (the
	 * kernel copies f_flags into fuse_read_in, libfuse into fi->flags),
	 * so O_NONBLOCK set or cleared by fcntl() after open counts.
	 */
	n = __uks_vfs_read_nb(f, buf, size, off, fi->flags & O_NONBLOCK);
	if (n < 0)
		fuse_reply_err(req, (int)-n);
	else
		fuse_reply_buf(req, buf, (size_t)n);
	uks_kfree(buf);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	struct uks_vfs_file *f = (struct uks_vfs_file *)(uintptr_t)fi->fh;
	struct fuse_fs *fs = fs_of(req);
	struct fs_node *node = __uks_fs_node_by_ino(&fs->nodes, ino);
	struct uks_peer peer;
	ssize_t n;

	req_peer(req, &peer);
	n = __uks_vfs_pwrite_as(f, buf, size, off, &peer);
	if (n < 0) {
		fuse_reply_err(req, (int)-n);
		return;
	}
	fuse_reply_write(req, (size_t)n);
	if (node && __uks_fs_owner_written(&fs->owners, fs->vfs, node->path))
		__uks_fuse_reinherit(fs->se, &fs->nodes, 0);
}

/*
 * FLUSH comes with each close(2), before it returns; RELEASE with the last
 * one, later.  A flushed file stops holding an rmdir of its instance off
 * until it is used again, so "cat instances/x/trace; rmdir instances/x"
 * works as on the kernel whichever request a worker thread serves first.
 */
static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	__uks_vfs_flush((struct uks_vfs_file *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct uks_vfs_file *f = (struct uks_vfs_file *)(uintptr_t)fi->fh;

	(void)ino;
	__uks_fuse_notify_release(&fs_of(req)->notify, f);
	uks_vfs_close(f);
	fuse_reply_err(req, 0);
}

static void op_poll(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
		    struct fuse_pollhandle *ph)
{
	struct uks_vfs_file *f = (struct uks_vfs_file *)(uintptr_t)fi->fh;
	unsigned int revents = 0;

	(void)ino;
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		revents |= POLLOUT;
	if (__uks_fuse_poll(&fs_of(req)->notify, f, ph))
		revents |= POLLIN;
	fuse_reply_poll(req, revents);
}

static void *poll_notifier(void *arg)
{
	struct fuse_fs *fs = arg;
	const struct timespec tick = { 0, 20 * 1000 * 1000 };

	while (!__atomic_load_n(&fs->stopping, __ATOMIC_ACQUIRE)) {
		nanosleep(&tick, NULL);
		__uks_fuse_notify_tick(&fs->notify);
	}
	return NULL;
}

static const struct fuse_lowlevel_ops fs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.mkdir = op_mkdir,
	.rmdir = op_rmdir,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.releasedir = op_releasedir,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.poll = op_poll,
};

#if FUSE_VERSION >= FUSE_MAKE_VERSION(3, 14)
/*
 * A worker's wait for the next request: the device is non-blocking, so a
 * worker woken with others for one request goes back to poll() instead of
 * sleeping in read(), where only the kernel could wake it.
 */
static ssize_t io_read(int fd, void *buf, size_t len, void *userdata)
{
	struct fuse_fs *fs = userdata;

	for (;;) {
		struct pollfd p[2] = { { fd, POLLIN, 0 }, { fs->stop_fd, POLLIN, 0 } };
		ssize_t n = read(fd, buf, len);

		if (n >= 0 || errno != EAGAIN)
			return n;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			return -1;
		if (p[1].revents) {
			errno = ENODEV;		/* libfuse's "connection gone": the worker ends */
			return -1;
		}
	}
}

static ssize_t io_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	(void)userdata;
	return writev(fd, iov, count);
}

static void stoppable_io(struct fuse_fs *fs)
{
	static const struct fuse_custom_io io = { .writev = io_writev, .read = io_read };
	int fd = fuse_session_fd(fs->se);
	int fl = fcntl(fd, F_GETFL);

	fs->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (fs->stop_fd < 0)
		return;
	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) ||
	    fuse_session_custom_io(fs->se, &io, fd)) {
		if (fl >= 0)
			fcntl(fd, F_SETFL, fl);
		close(fs->stop_fd);
		fs->stop_fd = -1;
	}
}
#else
static void stoppable_io(struct fuse_fs *fs)
{
	(void)fs;	/* libfuse < 3.14: stopping relies on the unmount */
}
#endif

static void *loop_main(void *arg)
{
	struct fuse_fs *fs = arg;
	struct fuse_loop_config *cfg = fuse_loop_cfg_create();

	if (cfg) {
		fuse_loop_cfg_set_max_threads(cfg, fs->threads);
		fuse_loop_cfg_set_idle_threads(cfg, 2);
	}
	fuse_session_loop_mt(fs->se, cfg);
	if (cfg)
		fuse_loop_cfg_destroy(cfg);
	if (!__atomic_load_n(&fs->stopping, __ATOMIC_ACQUIRE) && fs->on_unmounted)
		fs->on_unmounted(fs->arg);
	return NULL;
}

static void fs_free(struct fuse_fs *fs)
{
	__uks_fs_nodes_free(&fs->nodes);
	__uks_fs_owners_free(&fs->owners);
	__uks_fuse_notify_destroy(&fs->notify);
	if (fs->stop_fd >= 0)
		close(fs->stop_fd);
	free(fs->mountpoint);
	uks_kfree(fs);
}

static void fuse_stop(struct uks_server *srv)
{
	struct fuse_fs *fs = (struct fuse_fs *)srv;

	__atomic_store_n(&fs->stopping, 1, __ATOMIC_RELEASE);
	fuse_session_exit(fs->se);
	/* Unmounting ends the kernel's side; the workers' reads then fail. */
	fuse_session_unmount(fs->se);
	/* If it could not (a bind mount keeps it), the workers leave anyway. */
	if (fs->stop_fd >= 0) {
		uint64_t one = 1;

		while (write(fs->stop_fd, &one, sizeof(one)) < 0 && errno == EINTR)
			;
	}
	pthread_join(fs->loop_thread, NULL);
	if (fs->poll_thread_started)
		pthread_join(fs->poll_thread, NULL);
	fuse_session_destroy(fs->se);
	fs_free(fs);
}

static bool is_mountpoint(const char *dir)
{
	struct stat a, b;
	char parent[VFS_PATH_MAX];

	if ((size_t)snprintf(parent, sizeof(parent), "%s/..", dir) >= sizeof(parent))
		return false;
	if (stat(dir, &a) || stat(parent, &b))
		return false;
	return a.st_dev != b.st_dev;
}

/** uks_fuse_serve - see <uks/fs.h> */
UKS_EXPORT int uks_fuse_serve(struct uks_vfs *vfs, const char *mountpoint,
			      const struct uks_fuse_opts *opts, struct uks_server **out)
{
	char fsname[96], progname[] = "uksfs", debug[] = "-d", *argv[4];
	struct fuse_args args;
	struct fuse_fs *fs;
	int ret;

	if (access("/dev/fuse", R_OK | W_OK))
		return -ENODEV;
	if (is_mountpoint(mountpoint))
		return -EBUSY;
	fs = uks_kzalloc(sizeof(*fs));
	if (!fs)
		return -ENOMEM;
	__uks_fuse_notify_init(&fs->notify);
	fs->stop_fd = -1;
	fs->vfs = vfs;
	__uks_fs_owners_init(&fs->owners, getuid(), getgid(),
			     opts && opts->set_gid ? opts->gid : getgid());
	fs->threads = opts && opts->threads ? opts->threads : 64;
	fs->on_unmounted = opts ? opts->on_unmounted : NULL;
	fs->arg = opts ? opts->arg : NULL;
	clock_gettime(CLOCK_REALTIME, &fs->start);
	fs->mountpoint = realpath(mountpoint, NULL);
	ret = fs->mountpoint ? -ENOMEM : -errno;
	if (!fs->mountpoint || __uks_fs_nodes_init(&fs->nodes) ||
	    !__uks_fs_node_get(&fs->nodes, "")) {
		fs_free(fs);
		return ret;
	}
	snprintf(fsname, sizeof(fsname), "-ofsname=%s,default_permissions%s",
		 opts && opts->fsname ? opts->fsname : "uksfs",
		 opts && opts->allow_other ? ",allow_other" : "");
	argv[0] = progname;
	argv[1] = fsname;
	argv[2] = debug;
	argv[3] = NULL;
	/* UKS_FUSE_DEBUG=1: libfuse logs every request to stderr. */
	args = (struct fuse_args)FUSE_ARGS_INIT(secure_getenv("UKS_FUSE_DEBUG") ? 3 : 2, argv);
	fs->se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), fs);
	fuse_opt_free_args(&args);	/* what libfuse added to them */
	if (!fs->se) {
		fs_free(fs);
		return -EINVAL;
	}
	fs->notify.se = fs->se;
	if (fuse_session_mount(fs->se, fs->mountpoint)) {
		fuse_session_destroy(fs->se);
		fs_free(fs);
		return -EPERM;
	}
	stoppable_io(fs);
	ret = -pthread_create(&fs->loop_thread, NULL, loop_main, fs);
	if (ret) {
		fuse_session_unmount(fs->se);
		fuse_session_destroy(fs->se);
		fs_free(fs);
		return ret;
	}
	fs->poll_thread_started = !pthread_create(&fs->poll_thread, NULL, poll_notifier, fs);
	fs->srv.stop = fuse_stop;
	*out = &fs->srv;
	return 0;
}

#else /* !UKS_HAVE_FUSE3 */

UKS_EXPORT int uks_fuse_serve(struct uks_vfs *vfs, const char *mountpoint,
			      const struct uks_fuse_opts *opts, struct uks_server **out)
{
	(void)vfs;
	(void)mountpoint;
	(void)opts;
	(void)out;
	return -ENOTSUP;
}

#endif
