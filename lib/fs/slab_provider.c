// SPDX-License-Identifier: MIT
/*
 * uksfs provider: /sys/kernel/slab/<cache>/<attribute> for the caches of
 * the serving process (the kernel shows every cache of the machine; a
 * uks process can only show its own).  Reads show the attribute text as
 * of open, like sysfs; a write stores one value with the kernel's rules
 * and errnos.  Caches are looked up by name on every open, so a cache
 * destroyed meanwhile reads as gone (-ENOENT) rather than freed memory;
 * the serving process must not destroy a cache while one of its files is
 * open.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "fs/vfs.h"

#define ATTR_TEXT_MAX	8192

struct slab_file {
	struct uks_kmem_cache *s;
	char attr[64];
	int flags;
	bool shown;
	char text[ATTR_TEXT_MAX];
	size_t len, pos;
};

static bool known_attr(const char *attr)
{
	for (const char *const *a = uks_kmem_cache_attr_names(); *a; a++)
		if (!strcmp(*a, attr))
			return true;
	return false;
}

/* SLUB's SLAB_ATTR_RO / SLAB_ATTR modes (root-only files). */
static unsigned int attr_mode(const char *attr)
{
	return uks_kmem_cache_attr_writable(attr) ? 0600 : 0400;
}

/* Split "cache/attr"; the cache part is one path component. */
static int split(const char *path, char *cache, size_t size, const char **attr)
{
	size_t n = strcspn(path, "/");

	if (n >= size)
		return -ENOENT;
	memcpy(cache, path, n);
	cache[n] = '\0';
	*attr = path[n] ? path + n + 1 : NULL;
	if (*attr && strchr(*attr, '/'))
		return -ENOENT;
	return 0;
}

/* A cache's directory name: '/' becomes '!', as kobject_set_name() does. */
static void dir_name(char *dst, size_t size, const char *name)
{
	strncpy(dst, name, size - 1);
	dst[size - 1] = '\0';
	for (char *p = strchr(dst, '/'); p; p = strchr(p + 1, '/'))
		*p = '!';
}

struct find_ctx {
	const char *dir;
	struct uks_kmem_cache *found;
};

static int match_dir(struct uks_kmem_cache *s, void *arg)
{
	struct find_ctx *fc = arg;
	char name[128];

	dir_name(name, sizeof(name), uks_kmem_cache_name(s));
	if (strcmp(name, fc->dir))
		return 0;
	fc->found = s;
	return 1;
}

/* The cache whose directory is @dir, or NULL. */
static struct uks_kmem_cache *find_cache(const char *dir)
{
	struct find_ctx fc = { dir, NULL };

	if (!strchr(dir, '!'))
		return uks_kmem_cache_find(dir);
	uks_kmem_cache_for_each(match_dir, &fc);
	return fc.found;
}

static int sp_stat(void *ctx, const char *path, struct uks_vfs_stat *st)
{
	char cache[128];
	const char *attr;

	st->stream = false;
	if (!*path) {
		st->type = UKS_VFS_DIR;
		st->mode = 0755;
		return 0;
	}
	if (split(path, cache, sizeof(cache), &attr) || !find_cache(cache))
		return -ENOENT;
	if (!attr) {
		st->type = UKS_VFS_DIR;
		st->mode = 0755;
		return 0;
	}
	if (!known_attr(attr))
		return -ENOENT;
	st->type = UKS_VFS_REG;
	st->mode = attr_mode(attr);
	return 0;
}

struct list_ctx {
	int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg);
	void *arg;
	char (*names)[128];
	size_t nr, cap;
};

static int collect(struct uks_kmem_cache *s, void *arg)
{
	struct list_ctx *lc = arg;

	if (lc->nr == lc->cap) {
		size_t cap = lc->cap ? 2 * lc->cap : 64;
		void *p = uks_krealloc(lc->names, cap * sizeof(*lc->names));

		if (!p)
			return -ENOMEM;
		lc->names = p;
		lc->cap = cap;
	}
	dir_name(lc->names[lc->nr], sizeof(lc->names[0]), uks_kmem_cache_name(s));
	lc->nr++;
	return 0;
}

static int sp_list(void *ctx, const char *path,
		   int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg), void *arg)
{
	static const struct uks_vfs_stat dir = { UKS_VFS_DIR, 0755, false };
	struct list_ctx lc = { fn, arg, NULL, 0, 0 };
	struct uks_vfs_stat st;
	int ret;

	ret = sp_stat(ctx, path, &st);
	if (ret)
		return ret;
	if (st.type != UKS_VFS_DIR)
		return -ENOTDIR;
	if (*path) {
		for (const char *const *a = uks_kmem_cache_attr_names(); *a; a++) {
			struct uks_vfs_stat fst = { UKS_VFS_REG, attr_mode(*a), false };

			ret = fn(*a, &fst, arg);
			if (ret)
				return ret;
		}
		return 0;
	}
	/* Names first, callbacks after: fn must not run under the cache mutex. */
	ret = uks_kmem_cache_for_each(collect, &lc);
	for (size_t i = 0; !ret && i < lc.nr; i++)
		ret = fn(lc.names[i], &dir, arg);
	uks_kfree(lc.names);
	return ret;
}

static int sp_open(void *ctx, const char *path, int flags, const struct uks_peer *peer,
		   void **file)
{
	struct slab_file *f;
	struct uks_vfs_stat st;
	char cache[128];
	const char *attr;
	int ret = sp_stat(ctx, path, &st);

	(void)peer;	/* uksd's own caches: no process is named */
	if (ret)
		return ret;
	if (st.type == UKS_VFS_DIR)
		return -EISDIR;
	split(path, cache, sizeof(cache), &attr);
	f = uks_kzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->s = find_cache(cache);
	if (!f->s) {
		uks_kfree(f);
		return -ENOENT;
	}
	strncpy(f->attr, attr, sizeof(f->attr) - 1);
	f->flags = flags;
	*file = f;
	return 0;
}

static ssize_t sp_read(void *file, void *buf, size_t len)
{
	struct slab_file *f = file;

	if (!f->shown) {
		ssize_t n = uks_kmem_cache_attr_show(f->s, f->attr, f->text, sizeof(f->text));

		if (n < 0)
			return n;
		f->len = (size_t)n;
		f->shown = true;
	}
	if (len > f->len - f->pos)
		len = f->len - f->pos;
	memcpy(buf, f->text + f->pos, len);
	f->pos += len;
	return (ssize_t)len;
}

static ssize_t sp_write(void *file, const void *buf, size_t len, off_t off,
			const struct uks_peer *peer)
{
	struct slab_file *f = file;
	int ret = uks_kmem_cache_attr_store(f->s, f->attr, buf, len);

	(void)off;	/* a command, wherever it lands, as the kernel's handlers take it */
	(void)peer;
	return ret < 0 ? ret : (ssize_t)len;
}

static void sp_close(void *file)
{
	uks_kfree(file);
}

static const struct vfs_provider_ops slab_provider = {
	.stat = sp_stat,
	.list = sp_list,
	.open = sp_open,
	.read = sp_read,
	.write = sp_write,
	.close = sp_close,
};

/** uks_vfs_add_slab - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_slab(struct uks_vfs *vfs, const char *path)
{
	return uks_vfs_mount(vfs, path, &slab_provider, NULL);
}
