// SPDX-License-Identifier: MIT
/*
 * The DAMON debugfs files of Linux 5.15 (mm/damon/dbgfs.c) as kfs nodes
 * (core/kfs.h), which uksfs attaches at <debugfs>/damon
 * (uks_vfs_add_damon()): attrs, target_ids, kdamond_pid of the root
 * context, mk_contexts, rm_contexts, monitor_on, and one directory per
 * context made with mk_contexts (its own attrs, target_ids, kdamond_pid),
 * and 6.12's schemes file in each (dbgfs_schemes.c).
 *
 * The files take and give what 5.15's do:
 *  - every write is one command from offset 0; a second write on the same
 *    open file, a write after a read of it, or a pwrite() past 0, is
 *    -EINVAL ("we do not accept continuous write");
 *  - numbers are the kernel's sscanf "%lu": no sign, wrapping past
 *    ULONG_MAX (core/kscan.h);
 *  - attrs: "sample aggr update min_nr max_nr\n"; a write needs five
 *    numbers (-EINVAL), no running monitor (-EBUSY), 3 <= min <= max
 *    (-EINVAL);
 *  - attrs, target_ids and kdamond_pid are nonseekable (lseek, pread and
 *    pwrite are -ESPIPE);
 *  - target_ids: pids separated by spaces, "\n" when none; a write parses
 *    up to 32 numbers and stops at the first token that is not one;
 *    a pid that does not exist is -EINVAL (checked first), a pid the
 *    writer could not ptrace itself -EPERM (the socket may be shared
 *    with other users; debugfs is root's alone), then -EBUSY while on; the targets are removed when monitoring ends, so the file
 *    reads "\n" after "off" or after every target exited;
 *  - kdamond_pid: the monitor thread's id, or "none";
 *  - schemes: 6.12's (5.15 had none), see dbgfs_schemes.c;
 *  - monitor_on: "on" if any context runs; "on" starts one monitor per
 *    context (-EBUSY if on), "off" stops them (-EPERM if off), matched
 *    with strncmp(word, "on", count) as 5.15 does, so "echo -n o" is on;
 *    anything else -EINVAL;
 *  - mk_contexts / rm_contexts: the first word names the context;
 *    -EBUSY while on, -EINVAL for no word, -EEXIST for a name in use,
 *    -ENOENT for no such entry, -EINVAL for an entry that is a file
 *    (5.15.0 miscounted there; later kernels return -EINVAL, as here);
 *    names up to NAME_MAX, without '/', "." or "..";
 *  - a file of a removed context fails with -EIO (debugfs_file_get()),
 *    also once a new context of the same name exists.
 * Files are mode 0600, directories 0755, as debugfs makes them.
 *
 * Differences: monitor_on, mk_contexts and rm_contexts have no llseek in
 * 5.15, so lseek() fails there with -ESPIPE while pwrite() reaches the
 * handler (and fails past 0); over FUSE the kernel serves lseek() of a
 * seekable file itself, so lseek() succeeds, and the write after it still
 * fails as 5.15's would.  Target ids are pids as numbers (5.15 keeps struct pid
 * references; uks takes a pidfd when monitoring starts), and the
 * damon_aggregated events name the pid in target_id.
 *
 * The nodes.  A path names a node with ->obj the tree (struct damon_fs)
 * and ->idx the serial of its directory (0: the root), so a file finds
 * its context again at each call and a removed one is told from its
 * namesake.  Context directories are made on demand (->dir ops of the
 * root); their three files and the root's six are static tables.
 *
 * Lock order: fs->lock (5.15's damon_dbgfs_lock; the tree's lock, held by
 * kfs across each walk and ->show) -> ctx->lock (in lib/damon).  Readers
 * format their text at the first read.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "core/kscan.h"
#include "core/log.h"
#include "damon/debugfs/dbgfs.h"

#define DBGFS_NAME_MAX	256	/* NAME_MAX + 1: what lookup_one_len() takes */
#define DBGFS_TEXT_MAX	4096
#define DBGFS_MAX_IDS	32	/* 5.15's str_to_target_ids */

enum dbgfs_kind { F_ATTRS, F_TARGET_IDS, F_KDAMOND_PID, F_SCHEMES, F_MK, F_RM, F_MONITOR_ON };

/* A context's directory; the serial tells a removed one from its namesake. */
struct dbgfs_dir {
	unsigned long serial;
	char name[DBGFS_NAME_MAX];
};

struct damon_fs {
	pthread_mutex_t lock;
	struct uks_damon_ctx **ctxs;
	struct dbgfs_dir *dirs;		/* dirs[0] (serial 0, "") is the root */
	unsigned long last_serial;
	int nr;
	char primitive[32];
};

/* An open file's own: how far it was written (the read side is kfs's). */
struct dbgfs_file {
	off_t wpos;
};

static int ctx_index(struct damon_fs *fs, const char *name)
{
	for (int i = 1; i < fs->nr; i++)
		if (!strcmp(fs->dirs[i].name, name))
			return i;
	return -1;
}

static enum dbgfs_kind file_kind(const struct kfs_open_file *of)
{
	return (enum dbgfs_kind)of->ref.node->data;
}

/*
 * The context of an open file, looked up again under the lock: NULL once
 * its directory is removed (debugfs then fails the file's calls with -EIO).
 */
static struct uks_damon_ctx *file_ctx(const struct kfs_open_file *of)
{
	struct damon_fs *fs = of->ref.obj;

	for (int i = 0; i < fs->nr; i++)
		if (fs->dirs[i].serial == (unsigned long)of->ref.idx)
			return fs->ctxs[i];
	return NULL;
}

static bool any_running(struct damon_fs *fs)
{
	for (int i = 0; i < fs->nr; i++)
		if (uks_damon_is_running(fs->ctxs[i]))
			return true;
	return false;
}

/* The files: every one of them is one of these (ops below). */
static const struct kfs_ops text_ops, kdamond_pid_ops, schemes_ops;

/* damon_dbgfs_open() is nonseekable_open(): lseek, pread are -ESPIPE */
#define CTX_FILES \
	{ .name = "attrs", .mode = S_IFREG | 0600, .flags = KFS_STREAM, .ops = &text_ops, \
	  .data = F_ATTRS }, \
	{ .name = "target_ids", .mode = S_IFREG | 0600, .flags = KFS_STREAM, .ops = &text_ops, \
	  .data = F_TARGET_IDS }, \
	{ .name = "kdamond_pid", .mode = S_IFREG | 0600, .flags = KFS_STREAM, \
	  .ops = &kdamond_pid_ops, .data = F_KDAMOND_PID }, \
	{ .name = "schemes", .mode = S_IFREG | 0600, .flags = KFS_STREAM, \
	  .ops = &schemes_ops, .data = F_SCHEMES }

static const struct kfs_node ctx_files[] = {
	CTX_FILES,
	{ .name = NULL }
};

static const struct kfs_node root_files[] = {
	CTX_FILES,
	{ .name = "mk_contexts", .mode = S_IFREG | 0600, .ops = &text_ops, .data = F_MK },
	{ .name = "rm_contexts", .mode = S_IFREG | 0600, .ops = &text_ops, .data = F_RM },
	{ .name = "monitor_on", .mode = S_IFREG | 0600, .ops = &text_ops, .data = F_MONITOR_ON },
	{ .name = NULL }
};

/* ------------------------------------------------------------ reading */

/* The file's text into @text; its length or -errno.  fs->lock held. */
static int format(const struct kfs_open_file *of, char *text, size_t size)
{
	struct uks_damon_ctx *c = file_ctx(of);
	enum dbgfs_kind kind = file_kind(of);
	struct uks_damon_attrs a;
	pid_t pid;

	if (!c && kind <= F_SCHEMES)
		return -EIO;
	switch (kind) {
	case F_ATTRS:
		uks_damon_get_attrs(c, &a);
		return snprintf(text, size, "%lu %lu %lu %lu %lu\n", a.sample_us, a.aggr_us,
				a.update_us, a.min_nr_regions, a.max_nr_regions);
	case F_TARGET_IDS:
		return uks_damon_sprint_target_ids(c, text, size);
	case F_KDAMOND_PID:
		pid = uks_damon_kdamond_pid(c);
		return pid > 0 ? snprintf(text, size, "%d\n", (int)pid)
			       : snprintf(text, size, "none\n");
	case F_MONITOR_ON:
		return snprintf(text, size, any_running(of->ref.obj) ? "on\n" : "off\n");
	case F_SCHEMES:
		return (int)__uks_damon_dbgfs_sprint_schemes(c, text, size);
	case F_MK:
	case F_RM:
		break;
	}
	return -EINVAL;		/* write-only in 5.15 (no read op) */
}

/* A seq_file show, under the tree's lock (fs->lock). */
static int dbgfs_show(struct kfs_open_file *of, struct uks_seq *s)
{
	char text[DBGFS_TEXT_MAX];
	int n = format(of, text, sizeof(text));

	if (n < 0)
		return n;
	seq_putmem(s, text, (size_t)n < sizeof(text) ? (size_t)n : sizeof(text) - 1);
	return 0;
}

/*
 * 5.15's kdamond_pid formats into a buffer of the read's size at each
 * read: "dd bs=3" reads "no", a 1-byte read nothing.
 */
static ssize_t kdamond_pid_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct damon_fs *fs = of->ref.obj;
	char text[DBGFS_TEXT_MAX];
	size_t tlen, pos = (size_t)of->pos;
	int n;

	pthread_mutex_lock(&fs->lock);
	n = format(of, text, sizeof(text));
	pthread_mutex_unlock(&fs->lock);
	if (n < 0)
		return n;
	tlen = (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
	if (pos >= tlen)	/* the text may shrink under the position */
		return 0;
	if (len > tlen - pos)
		len = tlen - pos;
	memcpy(buf, text + pos, len);
	return (ssize_t)len;
}

/*
 * 6.12's schemes file formats into a buffer of each read's size (its
 * kmalloc(count)), from which the read copies at the file position.
 */
#define SCHEMES_READ_MAX	(1 << 20)

static ssize_t schemes_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct damon_fs *fs = of->ref.obj;
	size_t pos = (size_t)of->pos, room = len < SCHEMES_READ_MAX ? len : SCHEMES_READ_MAX;
	char *text;
	int n;

	if (!len)
		return 0;
	text = uks_kmalloc(room);
	if (!text)
		return -ENOMEM;
	pthread_mutex_lock(&fs->lock);
	n = format(of, text, room);
	pthread_mutex_unlock(&fs->lock);
	if (n < 0 || pos >= (size_t)n) {
		uks_kfree(text);
		return n < 0 ? n : 0;
	}
	if (len > (size_t)n - pos)
		len = (size_t)n - pos;
	memcpy(buf, text + pos, len);
	uks_kfree(text);
	return (ssize_t)len;
}

/* ------------------------------------------------------------ writing */

/* find_get_pid(): any live task id (threads too) */
static bool pid_exists(unsigned long id)
{
	int pid = (int)id;

	return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
}

/*
 * A writer names processes for uksd to read the memory of: it must be
 * allowed to ptrace each itself (debugfs leaves this to root alone; the
 * uksfs socket may be shared).  @peer NULL: the serving process's call.
 */
static int write_target_ids(struct uks_damon_ctx *c, const char *kbuf,
			    const struct uks_peer *peer)
{
	unsigned long ids[DBGFS_MAX_IDS];
	int nr = uks_damon_parse_target_ids(kbuf, ids, DBGFS_MAX_IDS);

	for (int i = 0; i < nr; i++)
		if (!pid_exists(ids[i]))
			return -EINVAL;
	for (int i = 0; peer && i < nr; i++) {
		int ret = __uks_ptrace_may_access(peer, (pid_t)ids[i]);

		if (ret)
			return ret;	/* -EPERM, or -ESRCH if it just went */
	}
	for (int i = 0; i < nr; i++)
		ids[i] = (unsigned long)(int)ids[i];	/* pid_vnr(find_get_pid((int)id)) */
	return uks_damon_set_targets(c, ids, (unsigned int)nr);	/* -EBUSY while on */
}

static int before_terminate(struct uks_damon_ctx *ctx)
{
	uks_damon_destroy_targets(ctx);	/* dbgfs_before_terminate */
	return 0;
}

static int new_ctx(struct damon_fs *fs, struct uks_damon_ctx **out)
{
	static const struct uks_damon_callback cb = { .before_terminate = before_terminate };
	int ret = uks_damon_ctx_create(out);

	if (ret)
		return ret;
	uks_damon_set_callback(*out, &cb);
	if (fs->primitive[0]) {
		ret = uks_damon_set_primitive(*out, fs->primitive);
		if (ret) {
			uks_damon_ctx_destroy(*out);
			return ret;
		}
	}
	return 0;
}

/* Is @name one of the root's files (mk_contexts cannot take it)? */
static bool root_file(const char *name)
{
	for (const struct kfs_node *n = root_files; n->name; n++)
		if (!strcmp(n->name, name))
			return true;
	return false;
}

static int mk_context(struct damon_fs *fs, const char *name)
{
	struct uks_damon_ctx **ctxs, *c;
	struct dbgfs_dir *dirs;
	int ret;

	if (any_running(fs))
		return -EBUSY;
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return -EACCES;		/* lookup_one_len() */
	if (strlen(name) >= DBGFS_NAME_MAX)
		return -ENAMETOOLONG;
	if (root_file(name) || ctx_index(fs, name) > 0)
		return -EEXIST;
	ctxs = uks_krealloc(fs->ctxs, (size_t)(fs->nr + 1) * sizeof(*ctxs));
	if (!ctxs)
		return -ENOMEM;
	fs->ctxs = ctxs;
	dirs = uks_krealloc(fs->dirs, (size_t)(fs->nr + 1) * sizeof(*dirs));
	if (!dirs)
		return -ENOMEM;
	fs->dirs = dirs;
	ret = new_ctx(fs, &c);
	if (ret)
		return ret;
	dirs[fs->nr].serial = ++fs->last_serial;
	snprintf(dirs[fs->nr].name, DBGFS_NAME_MAX, "%s", name);
	fs->ctxs[fs->nr++] = c;
	return 0;
}

static int rm_context(struct damon_fs *fs, const char *name)
{
	int ci;

	if (any_running(fs))
		return -EBUSY;
	ci = ctx_index(fs, name);
	if (ci <= 0)
		return root_file(name) ? -EINVAL : -ENOENT;
	uks_damon_ctx_destroy(fs->ctxs[ci]);
	for (int i = ci; i + 1 < fs->nr; i++) {
		fs->ctxs[i] = fs->ctxs[i + 1];
		fs->dirs[i] = fs->dirs[i + 1];
	}
	fs->nr--;
	return 0;
}

static int monitor_on(struct damon_fs *fs, const char *word, size_t count)
{
	int ret;

	if (!strncmp(word, "on", count)) {
		ret = uks_damon_start(fs->ctxs, fs->nr);
		if (!ret)
			pr_info("damon: monitoring with the %s primitive",
				uks_damon_primitive_name(fs->ctxs[0]));
		return ret;
	}
	if (!strncmp(word, "off", count))
		return uks_damon_stop(fs->ctxs, fs->nr);
	return -EINVAL;
}

/* One command, fs->lock held. */
static int command(struct kfs_open_file *of, const char *kbuf, size_t count,
		   const struct uks_peer *writer)
{
	struct damon_fs *fs = of->ref.obj;
	struct uks_damon_ctx *c = file_ctx(of);
	enum dbgfs_kind kind = file_kind(of);
	const char *p = kbuf;
	unsigned long a[5];
	char *word;
	int ret;

	if (!c && kind <= F_SCHEMES)
		return -EIO;
	switch (kind) {
	case F_ATTRS:
		for (int i = 0; i < 5; i++)	/* sscanf "%lu %lu %lu %lu %lu" */
			if (!kscan_ulong(&p, &a[i]))
				return -EINVAL;
		return uks_damon_set_attrs(c, a[0], a[1], a[2], a[3], a[4]);
	case F_TARGET_IDS:
		return write_target_ids(c, kbuf, writer);
	case F_KDAMOND_PID:
		return -EINVAL;		/* read-only in 5.15 (no write op) */
	case F_SCHEMES:
		return __uks_damon_dbgfs_write_schemes(c, kbuf, count);
	default:
		break;
	}
	word = uks_kmalloc(count + 1);
	if (!word)
		return -ENOMEM;
	if (sscanf(kbuf, "%s", word) != 1) {	/* the first word, trimmed */
		uks_kfree(word);
		return -EINVAL;
	}
	if (kind == F_MK)
		ret = mk_context(fs, word);
	else if (kind == F_RM)
		ret = rm_context(fs, word);
	else
		ret = monitor_on(fs, word, count);
	uks_kfree(word);
	return ret;
}

static ssize_t dbgfs_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			   const struct kfs_caller *caller)
{
	struct dbgfs_file *f = of->priv;
	struct damon_fs *fs = of->ref.obj;
	char *kbuf;
	int ret;

	kbuf = uks_kmalloc(len + 1);
	if (!kbuf)
		return -ENOMEM;
	memcpy(kbuf, buf, len);
	kbuf[len] = '\0';
	/*
	 * user_input_str: *ppos != 0 is -EINVAL, and the file position is
	 * shared, so a write after a read (O_RDWR) fails too; so does a
	 * pwrite() past 0.  Checked and moved under the lock, as the
	 * kernel's f_pos_lock orders writes on one shared file.
	 */
	pthread_mutex_lock(&fs->lock);
	if (off > 0 || f->wpos || of->pos)
		ret = -EINVAL;
	else
		ret = command(of, kbuf, len, caller->peer);
	if (!ret)
		f->wpos += (off_t)len;
	pthread_mutex_unlock(&fs->lock);
	uks_kfree(kbuf);
	return ret ? ret : (ssize_t)len;
}

/* ------------------------------------------------------------ the tree */

static int dbgfs_open(struct kfs_open_file *of)
{
	of->priv = uks_kzalloc(sizeof(struct dbgfs_file));
	return of->priv ? 0 : -ENOMEM;
}

static void dbgfs_release(struct kfs_open_file *of)
{
	uks_kfree(of->priv);
}

static const struct kfs_ops text_ops = {
	.open = dbgfs_open,
	.show = dbgfs_show,
	.write = dbgfs_write,
	.release = dbgfs_release,
};

static const struct kfs_ops kdamond_pid_ops = {
	.open = dbgfs_open,
	.read = kdamond_pid_read,
	.write = dbgfs_write,
	.release = dbgfs_release,
};

static const struct kfs_ops schemes_ops = {
	.open = dbgfs_open,
	.read = schemes_read,
	.write = dbgfs_write,
	.release = dbgfs_release,
};

static const struct kfs_node ctx_dir = KFS_DIR("", 0755, NULL, ctx_files);

/* The contexts' directories, below the root's files. */
static int ctx_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct damon_fs *fs = dir->obj;
	int ci = ctx_index(fs, name);

	if (ci <= 0)
		return -ENOENT;
	child->node = &ctx_dir;
	child->idx = (long)fs->dirs[ci].serial;
	return 0;
}

static int ctx_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct damon_fs *fs = dir->obj;
	int ret = 0;

	for (int i = 1; !ret && i < fs->nr; i++) {
		struct kfs_ref child = *dir;

		child.node = &ctx_dir;
		child.idx = (long)fs->dirs[i].serial;
		ret = fill(fs->dirs[i].name, &child, arg);
	}
	return ret;
}

static const struct kfs_dir_ops root_dir_ops = {
	.lookup = ctx_lookup,
	.iterate = ctx_iterate,
};

static const struct kfs_node root_dir = KFS_DIR("", 0755, &root_dir_ops, root_files);

static void fs_lock(void *obj)
{
	pthread_mutex_lock(&((struct damon_fs *)obj)->lock);
}

static void fs_unlock(void *obj)
{
	pthread_mutex_unlock(&((struct damon_fs *)obj)->lock);
}

static void fs_release(void *obj)
{
	struct damon_fs *fs = obj;

	for (int i = 0; i < fs->nr; i++)
		uks_damon_ctx_destroy(fs->ctxs[i]);
	uks_kfree(fs->ctxs);
	uks_kfree(fs->dirs);
	pthread_mutex_destroy(&fs->lock);
	uks_kfree(fs);
}

int __uks_damon_dbgfs_root(const char *primitive, struct kfs_root *root)
{
	struct damon_fs *fs = uks_kzalloc(sizeof(*fs));
	int ret;

	if (!fs)
		return -ENOMEM;
	pthread_mutex_init(&fs->lock, NULL);
	if (primitive)
		snprintf(fs->primitive, sizeof(fs->primitive), "%s", primitive);
	fs->ctxs = uks_kmalloc(sizeof(*fs->ctxs));
	fs->dirs = uks_kzalloc(sizeof(*fs->dirs));
	ret = fs->ctxs && fs->dirs ? new_ctx(fs, &fs->ctxs[0]) : -ENOMEM;
	if (ret) {
		fs_release(fs);
		return ret;
	}
	fs->nr = 1;
	*root = (struct kfs_root){ .node = &root_dir, .obj = fs, .lock = fs_lock,
				   .unlock = fs_unlock, .release = fs_release };
	return 0;
}
