// SPDX-License-Identifier: MIT
/*
 * kfs: the walk from a path to a node, open files, and read offsets, for
 * every subsystem's files (the contract is in kfs.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <uks/tracepoint.h>

#include "core/kfs.h"

static void tree_lock(const struct kfs_root *root)
{
	if (root->lock)
		root->lock(root->obj);
}

static void tree_unlock(const struct kfs_root *root)
{
	if (root->unlock)
		root->unlock(root->obj);
}

/*
 * The next component of *@path into @name, *@path moved past it: 1, 0 at
 * the end, or -ENAMETOOLONG.
 */
static int next_name(const char **path, char name[KFS_NAME_MAX])
{
	const char *p = *path + strspn(*path, "/");
	size_t len = strcspn(p, "/");

	*path = p + len;
	if (!len)
		return 0;
	if (len >= KFS_NAME_MAX)
		return -ENAMETOOLONG;
	memcpy(name, p, len);
	name[len] = '\0';
	return 1;
}

/* Nothing but slashes left? */
static bool at_end(const char *path)
{
	return !path[strspn(path, "/")];
}

/* Does @dir have @c of its static table? */
static bool has(const struct kfs_ref *dir, const struct kfs_node *c)
{
	const struct kfs_dir_ops *ops = dir->node->dir;

	return !ops || !ops->has || ops->has(dir, c);
}

/* @name in the directory @dir: the static table first, then ->dir. */
static int lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	const struct kfs_node *n = dir->node;

	if (!kfs_is_dir(n))
		return -ENOTDIR;
	for (const struct kfs_node *c = n->children; c && c->name; c++) {
		if (!strcmp(c->name, name) && has(dir, c)) {
			*child = *dir;
			child->node = c;
			return 0;
		}
	}
	if (!n->dir || !n->dir->lookup)
		return -ENOENT;
	*child = *dir;
	return n->dir->lookup(dir, name, child);
}

/*
 * A name past NAME_MAX in @dir: libfs's lookup refuses it; kernfs has no
 * such entry.  With @last, it is the name mkdir or rmdir acts on: 1 says
 * so to dir_op().
 */
static int too_long(const struct kfs_root *root, const struct kfs_ref *dir, bool last)
{
	if (!kfs_is_dir(dir->node))
		return -ENOTDIR;
	if (!root->kernfs)
		return -ENAMETOOLONG;
	return last ? 1 : -ENOENT;
}

/*
 * Resolve @path from @root into @ref; with @last, stop before the last
 * component and copy it there (mkdir, rmdir; 1 when it cannot be a name,
 * see too_long()).  Caller holds the tree lock.  Components are taken in
 * order, as link_path_walk() does: an error of an earlier one (-ENOENT,
 * -ENOTDIR) comes before a later one's -ENAMETOOLONG.
 */
static int walk(const struct kfs_root *root, const char *path, struct kfs_ref *ref,
		char *last)
{
	char name[KFS_NAME_MAX];
	int ret;

	*ref = (struct kfs_ref){ .node = root->node, .obj = root->obj };
	while ((ret = next_name(&path, name))) {
		struct kfs_ref child;

		if (ret < 0)
			return too_long(root, ref, last && at_end(path));
		if (last && at_end(path)) {
			strcpy(last, name);
			return kfs_is_dir(ref->node) ? 0 : -ENOTDIR;
		}
		ret = lookup(ref, name, &child);
		if (ret)
			return ret;
		*ref = child;
	}
	return last ? -EEXIST : 0;	/* mkdir of the root itself */
}

int __uks_kfs_stat(const struct kfs_root *root, const char *path, struct kfs_stat *st)
{
	struct kfs_ref ref;
	int ret;

	tree_lock(root);
	ret = walk(root, path, &ref, NULL);
	tree_unlock(root);
	if (!ret)
		kfs_stat_of(ref.node, st);
	return ret;
}

/*
 * A listing is collected under the tree's lock and reported without it,
 * so @fn may take locks of its own (FUSE replies, a socket write).  Each
 * entry is a struct kfs_stat followed by the name and its NUL.
 */
static int collect(const char *name, const struct kfs_ref *child, void *arg)
{
	struct uks_seq *s = arg;
	struct kfs_stat st;

	kfs_stat_of(child->node, &st);
	seq_putmem(s, &st, sizeof(st));
	seq_putmem(s, name, strlen(name) + 1);
	return s->overflow ? -ENOMEM : 0;
}

int __uks_kfs_list(const struct kfs_root *root, const char *path,
		   int (*fn)(const char *name, const struct kfs_stat *st, void *arg), void *arg)
{
	struct uks_seq names = UKS_SEQ_INIT;
	struct kfs_ref dir;
	int ret;

	tree_lock(root);
	ret = walk(root, path, &dir, NULL);
	if (!ret && !kfs_is_dir(dir.node))
		ret = -ENOTDIR;
	for (const struct kfs_node *c = dir.node->children; !ret && c && c->name; c++) {
		struct kfs_ref child = dir;

		child.node = c;
		if (has(&dir, c))
			ret = collect(c->name, &child, &names);
	}
	if (!ret && dir.node->dir && dir.node->dir->iterate)
		ret = dir.node->dir->iterate(&dir, collect, &names);
	tree_unlock(root);
	for (size_t off = 0; !ret && off < names.len;) {
		struct kfs_stat st;
		const char *name = names.buf + off + sizeof(st);

		memcpy(&st, names.buf + off, sizeof(st));
		ret = fn(name, &st, arg);
		off += sizeof(st) + strlen(name) + 1;
	}
	seq_free(&names);
	return ret;
}

static int pin(const struct kfs_root *root, const struct kfs_ref *ref)
{
	return root->get ? root->get(ref) : 0;
}

/* Undo pin(); @in_use: the pin still makes its objects busy. */
static void unpin(const struct kfs_root *root, const struct kfs_ref *ref, bool in_use)
{
	if (in_use && root->in_use)
		root->in_use(ref, false);
	if (root->put)
		root->put(ref);
}

/* The file is used: in use again if a flush had stopped it. */
static void use(struct kfs_open_file *of)
{
	if (__atomic_load_n(&of->idle, __ATOMIC_RELAXED) &&
	    __atomic_exchange_n(&of->idle, 0, __ATOMIC_ACQ_REL) && of->root->in_use)
		of->root->in_use(&of->ref, true);
}

/*
 * "." and ".." as the name mkdir or rmdir acts on, answered as the VFS
 * does (front ends that resolve paths themselves never pass them): 0 when
 * @name is neither.
 */
static int dot_name(const char *name, bool make)
{
	if (strcmp(name, ".") && strcmp(name, ".."))
		return 0;
	if (make)
		return -EEXIST;
	return name[1] ? -ENOTEMPTY : -EINVAL;
}

/*
 * mkdir(2) and rmdir(2) are the parent directory's to allow (-EPERM).  The
 * parent is pinned across the operation, which runs without the tree's
 * lock (it allocates, and takes the lock itself).
 */
static int dir_op(const struct kfs_root *root, const char *path, const struct uks_peer *peer,
		  bool make)
{
	char name[KFS_NAME_MAX];
	struct kfs_ref dir, child;
	const struct kfs_dir_ops *ops;
	int ret;

	tree_lock(root);
	ret = walk(root, path, &dir, name);
	if (ret > 0) {
		/* A kernfs tree has no such name: mkdir of a new one, rmdir of none. */
		tree_unlock(root);
		ops = dir.node->dir;
		if (!make)
			return -ENOENT;
		return ops && ops->mkdir ? -ENAMETOOLONG : -EPERM;
	}
	if (!ret)
		ret = dot_name(name, make);
	if (!ret) {
		int found = lookup(&dir, name, &child);

		if (make)
			ret = found == -ENOENT ? 0 : found ? found : -EEXIST;
		else if (found)
			ret = found;
		else if (!kfs_is_dir(child.node))
			ret = -ENOTDIR;
	}
	ops = dir.node->dir;
	if (!ret && !(make ? ops && ops->mkdir : ops && ops->rmdir))
		ret = -EPERM;
	if (!ret)
		ret = pin(root, &dir);
	tree_unlock(root);
	if (ret)
		return ret;
	ret = make ? ops->mkdir(&dir, name, peer) : ops->rmdir(&dir, name, peer);
	unpin(root, &dir, true);
	return ret;
}

int __uks_kfs_mkdir(const struct kfs_root *root, const char *path, const struct uks_peer *peer)
{
	return dir_op(root, path, peer, true);
}

int __uks_kfs_rmdir(const struct kfs_root *root, const char *path, const struct uks_peer *peer)
{
	return dir_op(root, path, peer, false);
}

/* The permission the mode grants its owner (the serving user). */
static int check_access(mode_t mode, int flags)
{
	int acc = flags & O_ACCMODE;

	if ((acc == O_RDONLY || acc == O_RDWR) && !(mode & S_IRUSR))
		return -EACCES;
	if ((acc == O_WRONLY || acc == O_RDWR) && !(mode & S_IWUSR))
		return -EACCES;
	if ((flags & O_TRUNC) && !(mode & S_IWUSR))
		return -EACCES;
	return 0;
}

int __uks_kfs_open(const struct kfs_root *root, const char *path, int flags,
		   const struct uks_peer *peer, struct kfs_open_file **out)
{
	struct kfs_open_file *of = calloc(1, sizeof(*of));
	int ret;

	if (!of)
		return -ENOMEM;
	tree_lock(root);
	ret = walk(root, path, &of->ref, NULL);
	if (!ret && kfs_is_dir(of->ref.node))
		ret = -EISDIR;
	if (!ret)
		ret = check_access(of->ref.node->mode, flags);
	if (!ret && !of->ref.node->ops)
		ret = -ENXIO;	/* a file without operations: a table's mistake */
	if (!ret)
		ret = pin(root, &of->ref);	/* before anything can remove what it names */
	tree_unlock(root);
	if (ret) {
		free(of);
		return ret;
	}
	of->root = root;
	of->flags = flags;
	if (peer) {
		of->opener = *peer;
		of->peer = &of->opener;
	}
	if (of->ref.node->ops->open) {
		ret = of->ref.node->ops->open(of);
		if (ret) {
			unpin(root, &of->ref, true);
			free(of);
			return ret;
		}
	}
	pthread_mutex_init(&of->lock, NULL);
	*out = of;
	return 0;
}

/* Read from the file's position; of->lock held. */
static ssize_t read_on(struct kfs_open_file *of, void *buf, size_t len)
{
	const struct kfs_ops *ops = of->ref.node->ops;
	size_t avail;
	ssize_t n;

	if (ops->read) {
		n = ops->read(of, buf, len);
		if (n > 0)
			of->pos += n;
		return n;
	}
	if (!ops->show)
		return -EINVAL;
	if (!of->shown) {
		int ret;

		seq_reset(&of->seq);
		tree_lock(of->root);
		ret = ops->show(of, &of->seq);
		tree_unlock(of->root);
		if (ret < 0)
			return ret;
		if (of->seq.overflow)
			return -ENOMEM;
		of->shown = true;
	}
	avail = of->seq.len > (size_t)of->pos ? of->seq.len - (size_t)of->pos : 0;
	if (len > avail)
		len = avail;
	if (!len)
		return 0;	/* seq.buf may be NULL when nothing was shown */
	memcpy(buf, of->seq.buf + of->pos, len);
	of->pos += (off_t)len;
	return (ssize_t)len;
}

/*
 * lseek() on a seq_file: start over and skip to @off.  A file with an
 * ->open is opened afresh (without O_TRUNC or O_APPEND, which acted at
 * the first open), so "trace" takes a new snapshot as the kernel's does.
 */
static ssize_t reread_to(struct kfs_open_file *of, off_t off)
{
	const struct kfs_ops *ops = of->ref.node->ops;
	char skip[4096];

	if (ops->open) {
		void *old = of->priv;
		int flags = of->flags, ret;

		of->flags &= ~(O_TRUNC | O_APPEND);
		ret = ops->open(of);
		of->flags = flags;
		if (ret) {
			of->priv = old;
			return ret;
		}
		if (ops->release) {
			void *fresh = of->priv;

			of->priv = old;
			ops->release(of);
			of->priv = fresh;
		}
	}
	of->shown = false;
	of->pos = 0;
	while (of->pos < off) {
		size_t want = (size_t)(off - of->pos) < sizeof(skip) ? (size_t)(off - of->pos)
								      : sizeof(skip);
		ssize_t n = read_on(of, skip, want);

		if (n <= 0)
			return n;
	}
	return 0;
}

ssize_t __uks_kfs_read(struct kfs_open_file *of, void *buf, size_t len, off_t off)
{
	ssize_t n;

	if ((of->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	use(of);
	pthread_mutex_lock(&of->lock);
	if (off >= 0 && off != of->pos && !(of->ref.node->flags & KFS_STREAM)) {
		n = reread_to(of, off);
		if (n < 0 || of->pos < off) {
			pthread_mutex_unlock(&of->lock);
			return n < 0 ? n : 0;
		}
	}
	n = read_on(of, buf, len);
	pthread_mutex_unlock(&of->lock);
	return n;
}

ssize_t __uks_kfs_write(struct kfs_open_file *of, const void *buf, size_t len, off_t off,
			const struct uks_peer *writer, const void *write_arg)
{
	const struct kfs_ops *ops = of->ref.node->ops;
	const struct kfs_caller caller = { writer, write_arg };
	unsigned long gen;
	ssize_t n;

	if ((of->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	use(of);
	if (!ops->write)
		return -EINVAL;
	/* an enable is in force for remote writers when the write returns */
	gen = __uks_tracepoint_generation();
	n = ops->write(of, buf, len, off, &caller);
	__uks_tracepoint_sync(gen);
	return n;
}

/* O_NONBLOCK is each read's own (fcntl may change it), as f_flags are. */
void __uks_kfs_set_nonblock(struct kfs_open_file *of, bool nonblock)
{
	int flags = __atomic_load_n(&of->flags, __ATOMIC_RELAXED);

	flags = nonblock ? flags | O_NONBLOCK : flags & ~O_NONBLOCK;
	__atomic_store_n(&of->flags, flags, __ATOMIC_RELAXED);
}

int __uks_kfs_poll(struct kfs_open_file *of)
{
	use(of);
	return of->ref.node->ops->poll ? of->ref.node->ops->poll(of) : 1;
}

/* Not under of->lock: the blocked reader holds it. */
void __uks_kfs_interrupt(struct kfs_open_file *of)
{
	if (of->ref.node->ops->interrupt)
		of->ref.node->ops->interrupt(of);
}

long __uks_kfs_ioctl(struct kfs_open_file *of, unsigned int cmd, void *arg)
{
	use(of);
	return of->ref.node->ops->ioctl ? of->ref.node->ops->ioctl(of, cmd, arg) : -ENOTTY;
}

ssize_t __uks_kfs_read_pages(struct kfs_open_file *of, void *buf, size_t len)
{
	ssize_t n;

	if (!kfs_has_pages(of))
		return -EOPNOTSUPP;
	pthread_mutex_lock(&of->lock);
	n = of->ref.node->ops->read_pages(of, buf, len);
	pthread_mutex_unlock(&of->lock);
	return n;
}

/*
 * FUSE sends FLUSH at each close(2) and before it returns, RELEASE at the
 * last one and later: a flushed file stops making its objects busy (an
 * rmdir right after the close must not fail with -EBUSY), until it is
 * used again (a descriptor of it was still open elsewhere).
 */
void __uks_kfs_flush(struct kfs_open_file *of)
{
	if (!__atomic_exchange_n(&of->idle, 1, __ATOMIC_ACQ_REL) && of->root->in_use)
		of->root->in_use(&of->ref, false);
}

void __uks_kfs_close(struct kfs_open_file *of)
{
	if (!of)
		return;
	if (of->ref.node->ops->release)
		of->ref.node->ops->release(of);
	unpin(of->root, &of->ref, !__atomic_exchange_n(&of->idle, 1, __ATOMIC_ACQ_REL));
	seq_free(&of->seq);
	pthread_mutex_destroy(&of->lock);
	free(of);
}
