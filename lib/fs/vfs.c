// SPDX-License-Identifier: MIT
/*
 * uksfs: one tree of kernel-style files, served by FUSE and a Unix socket.
 *
 * What.  The kernel spreads the files of the subsystems uks implements
 * over tracefs, debugfs and sysfs; uksfs puts them in one tree with the
 * kernel's paths, so a script written for /sys/kernel/tracing runs against
 * $ROOT/sys/kernel/tracing.  Each subsystem declares its files as kfs
 * nodes next to its code (core/kfs.h) and uksfs attaches the trees at the
 * kernel's paths; the directories above them are synthesised from the
 * mount table ("sys", "sys/kernel", ...), read-only, mode 0755.
 *
 * This layer is only the mount table: below a mount point, the path walk,
 * open files and read offsets are kfs's (one walk, one offset layer), so
 * both front ends (fuse.c, sock.c) and the subsystems' own file APIs give
 * the same bytes.
 *
 * Lock order: vfs->lock (mount table, read-mostly) -> the tree's locks.
 * The mount table is fixed once serving starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "fs/vfs.h"
#include "trace/tracefs.h"

/**
 * uks_vfs_create - an empty tree
 * Returns 0 or -ENOMEM.
 */
UKS_EXPORT int uks_vfs_create(struct uks_vfs **out)
{
	struct uks_vfs *vfs = uks_kzalloc(sizeof(*vfs));

	if (!vfs)
		return -ENOMEM;
	pthread_rwlock_init(&vfs->lock, NULL);
	*out = vfs;
	return 0;
}

/** uks_vfs_destroy - release the providers and the tree (files must be closed) */
UKS_EXPORT void uks_vfs_destroy(struct uks_vfs *vfs)
{
	if (!vfs)
		return;
	for (unsigned int i = 0; i < vfs->nr_mounts; i++) {
		const struct vfs_mount *m = &vfs->mounts[i];

		if (m->root.release)
			m->root.release(m->root.obj);
	}
	pthread_rwlock_destroy(&vfs->lock);
	uks_kfree(vfs);
}

/* Normalise @in into @out; -ENOENT for "..", -ENAMETOOLONG. */
static int normalise(const char *in, char *out, size_t size)
{
	size_t o = 0;

	while (*in) {
		size_t n;

		while (*in == '/')
			in++;
		n = strcspn(in, "/");
		if (!n)
			break;
		if (n == 1 && in[0] == '.') {
			in += n;
			continue;
		}
		if (n == 2 && in[0] == '.' && in[1] == '.')
			return -ENOENT;	/* never above the root */
		if (o + n + 2 > size)
			return -ENAMETOOLONG;
		if (o)
			out[o++] = '/';
		memcpy(out + o, in, n);
		o += n;
		in += n;
	}
	out[o] = '\0';
	return 0;
}

/**
 * __uks_vfs_attach - serve @root's tree at @path
 *
 * The tree is uksfs's from then on, also when attaching fails: its
 * ->release runs then, or at uks_vfs_destroy().  Returns 0, -ENOSPC (too
 * many trees), -EEXIST (@path is taken), -EINVAL (the root itself),
 * -ENOENT or -ENAMETOOLONG.
 */
int __uks_vfs_attach(struct uks_vfs *vfs, const char *path, const struct kfs_root *root)
{
	struct vfs_mount *m;
	int ret = 0;

	pthread_rwlock_wrlock(&vfs->lock);
	if (vfs->nr_mounts == VFS_MAX_MOUNTS) {
		ret = -ENOSPC;
		goto out;
	}
	m = &vfs->mounts[vfs->nr_mounts];
	ret = normalise(path, m->path, sizeof(m->path));
	if (ret)
		goto out;
	if (!m->path[0]) {
		ret = -EINVAL;	/* the root itself is synthetic */
		goto out;
	}
	for (unsigned int i = 0; i < vfs->nr_mounts; i++) {
		if (!strcmp(vfs->mounts[i].path, m->path)) {
			ret = -EEXIST;
			goto out;
		}
	}
	m->len = strlen(m->path);
	m->root = *root;
	vfs->nr_mounts++;
out:
	pthread_rwlock_unlock(&vfs->lock);
	if (ret && root->release)
		root->release(root->obj);
	return ret;
}

static void kfs_to_vfs_stat(const struct kfs_stat *ks, struct uks_vfs_stat *st)
{
	st->type = S_ISDIR(ks->mode) ? UKS_VFS_DIR : UKS_VFS_REG;
	st->mode = ks->mode & 07777;
	st->stream = !S_ISDIR(ks->mode) && (ks->flags & KFS_STREAM);
}

/*
 * The mount serving @path, with @rest set to the path inside it, or NULL
 * when @path is (above) no mount.  The longest mount point wins.
 */
static const struct vfs_mount *find_mount(struct uks_vfs *vfs, const char *path,
					  const char **rest)
{
	const struct vfs_mount *best = NULL;

	for (unsigned int i = 0; i < vfs->nr_mounts; i++) {
		const struct vfs_mount *m = &vfs->mounts[i];

		if (strncmp(path, m->path, m->len) || (path[m->len] && path[m->len] != '/'))
			continue;
		if (!best || m->len > best->len)
			best = m;
	}
	if (best)
		*rest = path[best->len] ? path + best->len + 1 : "";
	return best;
}

bool __uks_vfs_tracefs_path(struct uks_vfs *vfs, const char *path, const void **tree,
			    const char **rest)
{
	const struct vfs_mount *m;
	bool ret = false;

	pthread_rwlock_rdlock(&vfs->lock);
	m = find_mount(vfs, path, rest);
	if (m && (m->root.node == &__uks_tracefs_top || m->root.node == &__uks_tracefs_instance)) {
		*tree = m->root.obj;
		ret = true;
	}
	pthread_rwlock_unlock(&vfs->lock);
	return ret;
}

/* Is @path a strict ancestor of some mount point (a synthetic directory)? */
static bool is_synthetic_dir(struct uks_vfs *vfs, const char *path)
{
	size_t n = strlen(path);

	if (!n)
		return true;
	for (unsigned int i = 0; i < vfs->nr_mounts; i++) {
		const struct vfs_mount *m = &vfs->mounts[i];

		if (m->len > n && !strncmp(m->path, path, n) && m->path[n] == '/')
			return true;
	}
	return false;
}

/** uks_vfs_stat - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_stat(struct uks_vfs *vfs, const char *path, struct uks_vfs_stat *st)
{
	const struct vfs_mount *m;
	char norm[VFS_PATH_MAX];
	const char *rest;
	int ret = normalise(path, norm, sizeof(norm));

	if (ret)
		return ret;
	pthread_rwlock_rdlock(&vfs->lock);
	m = find_mount(vfs, norm, &rest);
	if (m) {
		struct kfs_stat ks;

		ret = __uks_kfs_stat(&m->root, rest, &ks);
		if (!ret)
			kfs_to_vfs_stat(&ks, st);
	} else if (is_synthetic_dir(vfs, norm)) {
		*st = (struct uks_vfs_stat){ .type = UKS_VFS_DIR, .mode = 0755 };
	} else {
		ret = -ENOENT;
	}
	pthread_rwlock_unlock(&vfs->lock);
	return ret;
}

/* The children of a synthetic @dir: the next component of each mount below it. */
static int list_synthetic(struct uks_vfs *vfs, const char *dir,
			  int (*fn)(const char *, const struct uks_vfs_stat *, void *),
			  void *arg)
{
	static const struct uks_vfs_stat dir_st = { UKS_VFS_DIR, 0755, false };
	char names[VFS_MAX_MOUNTS][256];
	unsigned int nr = 0;
	size_t n = strlen(dir);

	for (unsigned int i = 0; i < vfs->nr_mounts; i++) {
		const char *m = vfs->mounts[i].path, *child;
		size_t len;
		bool seen = false;

		if (n && (strncmp(m, dir, n) || m[n] != '/'))
			continue;
		child = n ? m + n + 1 : m;
		len = strcspn(child, "/");
		if (len >= sizeof(names[0]))
			continue;
		memcpy(names[nr], child, len);
		names[nr][len] = '\0';
		/* Mounts may share a child ("sys/kernel/tracing", "sys/kernel/slab"). */
		for (unsigned int j = 0; j < nr && !seen; j++)
			seen = !strcmp(names[j], names[nr]);
		if (!seen)
			nr++;
	}
	for (unsigned int i = 0; i < nr; i++) {
		int ret = fn(names[i], &dir_st, arg);

		if (ret)
			return ret;
	}
	return 0;
}

struct kfs_list_arg {
	int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg);
	void *arg;
};

static int kfs_list_one(const char *name, const struct kfs_stat *ks, void *arg)
{
	struct kfs_list_arg *la = arg;
	struct uks_vfs_stat st;

	kfs_to_vfs_stat(ks, &st);
	return la->fn(name, &st, la->arg);
}

/** uks_vfs_list - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_list(struct uks_vfs *vfs, const char *path,
			    int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg),
			    void *arg)
{
	char norm[VFS_PATH_MAX];
	const struct vfs_mount *m;
	const char *rest;
	int ret = normalise(path, norm, sizeof(norm));

	if (ret)
		return ret;
	pthread_rwlock_rdlock(&vfs->lock);
	m = find_mount(vfs, norm, &rest);
	if (m) {
		struct kfs_list_arg la = { fn, arg };

		ret = __uks_kfs_list(&m->root, rest, kfs_list_one, &la);
	} else if (is_synthetic_dir(vfs, norm)) {
		ret = list_synthetic(vfs, norm, fn, arg);
	} else {
		ret = -ENOENT;
	}
	pthread_rwlock_unlock(&vfs->lock);
	return ret;
}

/** uks_vfs_open - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_open(struct uks_vfs *vfs, const char *path, int flags,
			    struct uks_vfs_file **out)
{
	return __uks_vfs_open_as(vfs, path, flags, NULL, out);
}

/* The tree walks to the file and checks its mode against @flags. */
int __uks_vfs_open_as(struct uks_vfs *vfs, const char *path, int flags,
		      const struct uks_peer *peer, struct uks_vfs_file **out)
{
	const struct vfs_mount *m;
	struct uks_vfs_file *f;
	char norm[VFS_PATH_MAX];
	const char *rest;
	int ret = normalise(path, norm, sizeof(norm));

	if (ret)
		return ret;
	f = uks_kzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_rwlock_rdlock(&vfs->lock);
	m = find_mount(vfs, norm, &rest);
	if (m)
		ret = __uks_kfs_open(&m->root, rest, flags, peer, &f->of);
	else
		ret = is_synthetic_dir(vfs, norm) ? -EISDIR : -ENOENT;
	pthread_rwlock_unlock(&vfs->lock);
	if (ret) {
		uks_kfree(f);
		return ret;
	}
	kfs_to_vfs_stat(&(struct kfs_stat){ f->of->ref.node->mode, f->of->ref.node->flags }, &f->st);
	*out = f;
	return 0;
}

/** uks_vfs_read - see <uks/fs.h> */
UKS_EXPORT ssize_t uks_vfs_read(struct uks_vfs_file *f, void *buf, size_t len, off_t off)
{
	return __uks_kfs_read(f->of, buf, len, off);
}

/* O_NONBLOCK is the file's at the time of each read (FUSE sends it with each). */
ssize_t __uks_vfs_read_nb(struct uks_vfs_file *f, void *buf, size_t len, off_t off,
			  bool nonblock)
{
	__uks_kfs_set_nonblock(f->of, nonblock);
	return __uks_kfs_read(f->of, buf, len, off);
}

ssize_t __uks_vfs_read_pages(struct uks_vfs_file *f, void *buf, size_t len)
{
	return __uks_kfs_read_pages(f->of, buf, len);
}

bool __uks_vfs_has_pages(const struct uks_vfs_file *f)
{
	return kfs_has_pages(f->of);
}

/** uks_vfs_pwrite - see <uks/fs.h> */
UKS_EXPORT ssize_t uks_vfs_pwrite(struct uks_vfs_file *f, const void *buf, size_t len, off_t off)
{
	return __uks_kfs_write(f->of, buf, len, off, f->of->peer, NULL);
}

/* @peer: who writes (a FUSE write may come from another task than the opener's) */
ssize_t __uks_vfs_pwrite_as(struct uks_vfs_file *f, const void *buf, size_t len, off_t off,
			    const struct uks_peer *peer)
{
	return __uks_kfs_write(f->of, buf, len, off, peer, NULL);
}

/** uks_vfs_write - see <uks/fs.h> */
UKS_EXPORT ssize_t uks_vfs_write(struct uks_vfs_file *f, const void *buf, size_t len)
{
	return uks_vfs_pwrite(f, buf, len, -1);
}

/** uks_vfs_poll - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_poll(struct uks_vfs_file *f)
{
	return __uks_kfs_poll(f->of);
}

/** uks_vfs_interrupt - see <uks/fs.h> */
UKS_EXPORT void uks_vfs_interrupt(struct uks_vfs_file *f)
{
	__uks_kfs_interrupt(f->of);
}

/* A descriptor of @f was closed (FUSE's FLUSH): see kfs.h, ->in_use. */
void __uks_vfs_flush(struct uks_vfs_file *f)
{
	__uks_kfs_flush(f->of);
}

/** uks_vfs_close - see <uks/fs.h> */
UKS_EXPORT void uks_vfs_close(struct uks_vfs_file *f)
{
	if (!f)
		return;
	__uks_kfs_close(f->of);
	uks_kfree(f);
}

long __uks_vfs_ioctl(struct uks_vfs_file *f, unsigned int cmd, void *arg)
{
	return __uks_kfs_ioctl(f->of, cmd, arg);
}

/* mkdir and rmdir are the tree's to allow; synthetic directories refuse (-EPERM). */
static int dir_op(struct uks_vfs *vfs, const char *path, const struct uks_peer *peer, bool make)
{
	char norm[VFS_PATH_MAX];
	const struct vfs_mount *m;
	const char *rest;
	int ret = normalise(path, norm, sizeof(norm));

	if (ret)
		return ret;
	pthread_rwlock_rdlock(&vfs->lock);
	m = find_mount(vfs, norm, &rest);
	if (m)
		ret = make ? __uks_kfs_mkdir(&m->root, rest, peer) : __uks_kfs_rmdir(&m->root, rest, peer);
	else if (is_synthetic_dir(vfs, norm))
		ret = make ? -EEXIST : -EPERM;
	else
		ret = make ? -EPERM : -ENOENT;
	pthread_rwlock_unlock(&vfs->lock);
	return ret;
}

int __uks_vfs_mkdir(struct uks_vfs *vfs, const char *path, const struct uks_peer *peer)
{
	return dir_op(vfs, path, peer, true);
}

int __uks_vfs_rmdir(struct uks_vfs *vfs, const char *path, const struct uks_peer *peer)
{
	return dir_op(vfs, path, peer, false);
}

/** uks_vfs_file_stat - see <uks/fs.h> */
UKS_EXPORT const struct uks_vfs_stat *uks_vfs_file_stat(const struct uks_vfs_file *f)
{
	return &f->st;
}

/** uks_vfs_read_all - see <uks/fs.h> */
UKS_EXPORT ssize_t uks_vfs_read_all(struct uks_vfs *vfs, const char *path, char *buf,
				    size_t len)
{
	struct uks_vfs_file *f;
	size_t got = 0;
	ssize_t n = 0;
	int ret = uks_vfs_open(vfs, path, O_RDONLY | O_NONBLOCK, &f);

	if (ret)
		return ret;
	while (got < len && (n = uks_vfs_read(f, buf + got, len - got, (off_t)got)) > 0)
		got += (size_t)n;
	uks_vfs_close(f);
	if (n < 0 && n != -EAGAIN)
		return n;
	return (ssize_t)got;
}
