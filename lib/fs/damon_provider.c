// SPDX-License-Identifier: MIT
/*
 * uksfs provider: the DAMON debugfs files of Linux 5.15 (mm/damon/dbgfs.c)
 * at <debugfs>/damon: attrs, target_ids, kdamond_pid of the root context,
 * mk_contexts, rm_contexts, monitor_on, and one directory per context made
 * with mk_contexts (its own attrs, target_ids, kdamond_pid).
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
 * Lock order: fs->lock (5.15's damon_dbgfs_lock) -> ctx->lock (in
 * lib/damon).  Readers format their text at the first read.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "core/kscan.h"
#include "core/log.h"
#include "fs/vfs.h"

#define DBGFS_NAME_MAX	256	/* NAME_MAX + 1: what lookup_one_len() takes */
#define DBGFS_TEXT_MAX	4096
#define DBGFS_MAX_IDS	32	/* 5.15's str_to_target_ids */

enum dbgfs_kind { F_ATTRS, F_TARGET_IDS, F_KDAMOND_PID, F_MK, F_RM, F_MONITOR_ON };

static const char *const ctx_files[] = { "attrs", "target_ids", "kdamond_pid" };
static const char *const root_files[] = { "mk_contexts", "rm_contexts", "monitor_on" };

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

struct dbgfs_file {
	struct damon_fs *fs;
	enum dbgfs_kind kind;
	unsigned long serial;	/* of its directory: a new one of the same name is another */
	bool shown;
	off_t wpos;
	char text[DBGFS_TEXT_MAX];
	size_t len, pos;
};

static int ctx_index(struct damon_fs *fs, const char *name)
{
	for (int i = 1; i < fs->nr; i++)
		if (!strcmp(fs->dirs[i].name, name))
			return i;
	return -1;
}

static int file_kind(const char *name, bool root)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(ctx_files[i], name))
			return F_ATTRS + i;
	for (int i = 0; root && i < 3; i++)
		if (!strcmp(root_files[i], name))
			return F_MK + i;
	return -1;
}

/* Resolve @path: a directory (ctx index in *ci, *kind -1) or a file. */
static int resolve(struct damon_fs *fs, const char *path, int *ci, int *kind)
{
	const char *slash = strchr(path, '/');
	char name[DBGFS_NAME_MAX];
	size_t n;

	*ci = 0;
	*kind = -1;
	if (!*path)
		return 0;
	if (!slash) {
		*kind = file_kind(path, true);
		if (*kind >= 0)
			return 0;
		*ci = ctx_index(fs, path);
		return *ci > 0 ? 0 : -ENOENT;
	}
	n = (size_t)(slash - path);
	if (n >= sizeof(name))
		return -ENOENT;
	memcpy(name, path, n);
	name[n] = '\0';
	*ci = ctx_index(fs, name);
	if (*ci <= 0 || strchr(slash + 1, '/'))
		return -ENOENT;
	*kind = file_kind(slash + 1, false);
	return *kind >= 0 ? 0 : -ENOENT;
}

static int dp_stat(void *ctx, const char *path, struct uks_vfs_stat *st)
{
	struct damon_fs *fs = ctx;
	int ci, kind, ret;

	pthread_mutex_lock(&fs->lock);
	ret = resolve(fs, path, &ci, &kind);
	pthread_mutex_unlock(&fs->lock);
	if (ret)
		return ret;
	st->type = kind < 0 ? UKS_VFS_DIR : UKS_VFS_REG;
	st->mode = kind < 0 ? 0755 : 0600;
	/* damon_dbgfs_open() is nonseekable_open(): lseek, pread are -ESPIPE */
	st->stream = kind >= F_ATTRS && kind <= F_KDAMOND_PID;
	return 0;
}

static int dp_list(void *ctx, const char *path,
		   int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg), void *arg)
{
	static const struct uks_vfs_stat reg = { UKS_VFS_REG, 0600, false };
	static const struct uks_vfs_stat dir = { UKS_VFS_DIR, 0755, false };
	struct damon_fs *fs = ctx;
	struct dbgfs_dir *dirs = NULL;
	int ci, kind, ret, nr = 0;

	pthread_mutex_lock(&fs->lock);
	ret = resolve(fs, path, &ci, &kind);
	if (!ret && kind >= 0)
		ret = -ENOTDIR;
	if (!ret && ci == 0 && fs->nr > 1) {	/* copy: fn runs unlocked */
		nr = fs->nr - 1;
		dirs = uks_kmalloc((size_t)nr * sizeof(*dirs));
		if (!dirs)
			ret = -ENOMEM;
		else
			memcpy(dirs, fs->dirs + 1, (size_t)nr * sizeof(*dirs));
	}
	pthread_mutex_unlock(&fs->lock);
	for (int i = 0; !ret && i < 3; i++)
		ret = fn(ctx_files[i], &reg, arg);
	for (int i = 0; !ret && ci == 0 && i < 3; i++)
		ret = fn(root_files[i], &reg, arg);
	for (int i = 0; !ret && i < nr; i++)
		ret = fn(dirs[i].name, &dir, arg);
	uks_kfree(dirs);
	return ret;
}

static int dp_open(void *ctx, const char *path, int flags, const struct uks_peer *peer,
		   void **file)
{
	struct damon_fs *fs = ctx;
	struct dbgfs_file *f;
	int ci, kind, ret;

	(void)peer;	/* target_ids checks its writer */
	f = uks_kzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&fs->lock);
	ret = resolve(fs, path, &ci, &kind);
	if (!ret)
		f->serial = fs->dirs[ci].serial;
	pthread_mutex_unlock(&fs->lock);
	if (!ret && kind < 0)
		ret = -EISDIR;
	if (ret) {
		uks_kfree(f);
		return ret;
	}
	f->fs = fs;
	f->kind = (enum dbgfs_kind)kind;
	*file = f;
	return 0;
}

/*
 * The context of @f, looked up again under the lock: NULL once its
 * directory is removed (debugfs then fails the file's calls with -EIO).
 */
static struct uks_damon_ctx *file_ctx(struct dbgfs_file *f)
{
	for (int i = 0; i < f->fs->nr; i++)
		if (f->fs->dirs[i].serial == f->serial)
			return f->fs->ctxs[i];
	return NULL;
}

static bool any_running(struct damon_fs *fs)
{
	for (int i = 0; i < fs->nr; i++)
		if (uks_damon_is_running(fs->ctxs[i]))
			return true;
	return false;
}

static ssize_t show(struct dbgfs_file *f)
{
	struct damon_fs *fs = f->fs;
	struct uks_damon_ctx *c;
	struct uks_damon_attrs a;
	ssize_t n = -EINVAL;
	pid_t pid;

	pthread_mutex_lock(&fs->lock);
	c = file_ctx(f);
	if (!c && f->kind <= F_KDAMOND_PID) {
		n = -EIO;
		goto out;
	}
	switch (f->kind) {
	case F_ATTRS:
		uks_damon_get_attrs(c, &a);
		n = snprintf(f->text, sizeof(f->text), "%lu %lu %lu %lu %lu\n", a.sample_us,
			     a.aggr_us, a.update_us, a.min_nr_regions, a.max_nr_regions);
		break;
	case F_TARGET_IDS:
		n = uks_damon_sprint_target_ids(c, f->text, sizeof(f->text));
		break;
	case F_KDAMOND_PID:
		pid = uks_damon_kdamond_pid(c);
		n = pid > 0 ? snprintf(f->text, sizeof(f->text), "%d\n", (int)pid)
			    : snprintf(f->text, sizeof(f->text), "none\n");
		break;
	case F_MONITOR_ON:
		n = snprintf(f->text, sizeof(f->text), any_running(fs) ? "on\n" : "off\n");
		break;
	case F_MK:
	case F_RM:
		n = -EINVAL;	/* write-only in 5.15 (no read op) */
		break;
	}
out:
	pthread_mutex_unlock(&fs->lock);
	return n;
}

static ssize_t dp_read(void *file, void *buf, size_t len)
{
	struct dbgfs_file *f = file;

	/*
	 * 5.15's kdamond_pid formats into a buffer of the read's size at each
	 * read: "dd bs=3" reads "no", a 1-byte read nothing.
	 */
	if (f->kind == F_KDAMOND_PID) {
		ssize_t n = show(f);

		if (n < 0)
			return n;
		f->len = (size_t)n < len ? (size_t)n : (len ? len - 1 : 0);
		f->shown = true;
	}
	if (!f->shown) {
		ssize_t n = show(f);

		if (n < 0)
			return n;
		f->len = (size_t)n < sizeof(f->text) ? (size_t)n : sizeof(f->text) - 1;
		f->shown = true;
	}
	if (f->pos >= f->len)	/* kdamond_pid's text may shrink under pos */
		return 0;
	if (len > f->len - f->pos)
		len = f->len - f->pos;
	memcpy(buf, f->text + f->pos, len);
	f->pos += len;
	return (ssize_t)len;
}

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
static int write_target_ids(struct damon_fs *fs, struct uks_damon_ctx *c, const char *kbuf,
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
	if (file_kind(name, true) >= 0 || ctx_index(fs, name) > 0)
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
		return file_kind(name, true) >= 0 ? -EINVAL : -ENOENT;
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

static int command(struct dbgfs_file *f, const char *kbuf, size_t count,
		   const struct uks_peer *peer)
{
	struct damon_fs *fs = f->fs;
	struct uks_damon_ctx *c = file_ctx(f);
	const char *p = kbuf;
	unsigned long a[5];
	char *word;
	int ret;

	if (!c && f->kind <= F_KDAMOND_PID)
		return -EIO;
	switch (f->kind) {
	case F_ATTRS:
		for (int i = 0; i < 5; i++)	/* sscanf "%lu %lu %lu %lu %lu" */
			if (!kscan_ulong(&p, &a[i]))
				return -EINVAL;
		return uks_damon_set_attrs(c, a[0], a[1], a[2], a[3], a[4]);
	case F_TARGET_IDS:
		return write_target_ids(fs, c, kbuf, peer);
	case F_KDAMOND_PID:
		return -EINVAL;		/* read-only in 5.15 (no write op) */
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
	if (f->kind == F_MK)
		ret = mk_context(fs, word);
	else if (f->kind == F_RM)
		ret = rm_context(fs, word);
	else
		ret = monitor_on(fs, word, count);
	uks_kfree(word);
	return ret;
}

static ssize_t dp_write(void *file, const void *buf, size_t len, off_t off,
			const struct uks_peer *peer)
{
	struct dbgfs_file *f = file;
	char *kbuf;
	int ret;

	/*
	 * user_input_str: *ppos != 0 is -EINVAL, and the file position is
	 * shared, so a write after a read (O_RDWR) fails too; so does a
	 * pwrite() past 0.
	 */
	if (off > 0 || f->wpos || f->pos)
		return -EINVAL;
	kbuf = uks_kmalloc(len + 1);
	if (!kbuf)
		return -ENOMEM;
	memcpy(kbuf, buf, len);
	kbuf[len] = '\0';
	pthread_mutex_lock(&f->fs->lock);
	ret = command(f, kbuf, len, peer);
	pthread_mutex_unlock(&f->fs->lock);
	uks_kfree(kbuf);
	if (ret)
		return ret;
	f->wpos += (off_t)len;
	return (ssize_t)len;
}

static void dp_close(void *file)
{
	uks_kfree(file);
}

static void dp_release(void *ctx)
{
	struct damon_fs *fs = ctx;

	for (int i = 0; i < fs->nr; i++)
		uks_damon_ctx_destroy(fs->ctxs[i]);
	uks_kfree(fs->ctxs);
	uks_kfree(fs->dirs);
	pthread_mutex_destroy(&fs->lock);
	uks_kfree(fs);
}

static const struct vfs_provider_ops damon_provider = {
	.stat = dp_stat,
	.list = dp_list,
	.open = dp_open,
	.read = dp_read,
	.write = dp_write,
	.close = dp_close,
	.release = dp_release,
};

/**
 * uks_vfs_add_damon - serve 5.15's DAMON debugfs files at @path
 * @vfs:	the tree
 * @path:	where, e.g. "sys/kernel/debug/damon"
 * @primitive:	the access-check primitive of every context, or NULL for
 *		uks_damon_default_primitive()
 *
 * The tree owns the monitoring contexts: they stop and go with @vfs.
 * Return: 0, -ENOENT (unknown primitive), -EOPNOTSUPP (primitive not
 * available here), -ENOMEM, or the mount's error.
 */
UKS_EXPORT int uks_vfs_add_damon(struct uks_vfs *vfs, const char *path, const char *primitive)
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
	if (!ret) {
		fs->nr = 1;
		ret = uks_vfs_mount(vfs, path, &damon_provider, fs);
	}
	if (ret)
		dp_release(fs);
	return ret;
}
