// SPDX-License-Identifier: MIT
/*
 * uksfs provider: /sys/devices/system/cpu/aarch32_el0, the 32-bit-capable
 * CPUs in the kernel's cpulist format ("2-3\n"), read-only (0444) as in
 * sysfs.  The set is read on every open from the same sources as
 * `uks exec32` (the kernel's own file where it exists, else the list or
 * config file given at mount time, else $UKS_A32_CONFIG or
 * /etc/uks/aarch32_el0), so a late change shows on the next open, as the
 * kernel's file does after late onlining.  With no source the file does
 * not exist (-ENOENT), as on kernels without the asymmetric support.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/sched.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "fs/vfs.h"

#define A32_FILE "aarch32_el0"

struct a32_ctx {
	char list[1024];	/* "" for none */
	char config[1024];
};

struct a32_file {
	char text[8192];
	size_t len, pos;
};

static int a32_text(struct a32_ctx *c, char *buf, size_t size)
{
	struct uks_cpumask m;
	int ret = uks_a32_capable_read(&m, c->list[0] ? c->list : NULL,
				       c->config[0] ? c->config : NULL, NULL, 0);
	int n;

	if (ret)
		return ret == -ENOENT ? -ENOENT : ret;
	n = uks_cpumask_print_list(&m, buf, size - 1);
	if (n < 0)
		return n;
	buf[n++] = '\n';
	buf[n] = '\0';
	return n;
}

static int a32_stat(void *ctx, const char *path, struct uks_vfs_stat *st)
{
	char buf[8192];

	st->stream = false;
	if (!*path) {
		st->type = UKS_VFS_DIR;
		st->mode = 0755;
		return 0;
	}
	if (strcmp(path, A32_FILE) || a32_text(ctx, buf, sizeof(buf)) < 0)
		return -ENOENT;
	st->type = UKS_VFS_REG;
	st->mode = 0444;
	return 0;
}

static int a32_list(void *ctx, const char *path,
		    int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg), void *arg)
{
	struct uks_vfs_stat st;

	if (*path)
		return a32_stat(ctx, path, &st) ? -ENOENT : -ENOTDIR;
	if (a32_stat(ctx, A32_FILE, &st))
		return 0;
	return fn(A32_FILE, &st, arg);
}

static int a32_open(void *ctx, const char *path, int flags, const struct uks_peer *peer,
		    void **file)
{
	struct a32_file *f;
	int n;

	(void)peer;
	if (!*path)
		return -EISDIR;
	if (strcmp(path, A32_FILE))
		return -ENOENT;
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	f = uks_kzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	n = a32_text(ctx, f->text, sizeof(f->text));
	if (n < 0) {
		uks_kfree(f);
		return n;
	}
	f->len = (size_t)n;
	*file = f;
	return 0;
}

static ssize_t a32_read(void *file, void *buf, size_t len)
{
	struct a32_file *f = file;

	if (len > f->len - f->pos)
		len = f->len - f->pos;
	memcpy(buf, f->text + f->pos, len);
	f->pos += len;
	return (ssize_t)len;
}

static ssize_t a32_write(void *file, const void *buf, size_t len, off_t off,
			 const struct uks_peer *peer)
{
	(void)off;	/* a command, wherever it lands, as the kernel's handlers take it */
	(void)peer;
	(void)file;
	(void)buf;
	(void)len;
	return -EACCES;
}

static void a32_close(void *file)
{
	uks_kfree(file);
}

static void a32_release(void *ctx)
{
	uks_kfree(ctx);
}

static const struct vfs_provider_ops a32_provider = {
	.stat = a32_stat,
	.list = a32_list,
	.open = a32_open,
	.read = a32_read,
	.write = a32_write,
	.close = a32_close,
	.release = a32_release,
};

/** uks_vfs_add_a32 - see <uks/fs.h> */
UKS_EXPORT int uks_vfs_add_a32(struct uks_vfs *vfs, const char *path, const char *list,
			       const char *config)
{
	struct a32_ctx *c = uks_kzalloc(sizeof(*c));
	int ret;

	if (!c)
		return -ENOMEM;
	if ((list && strlen(list) >= sizeof(c->list)) || (config && strlen(config) >= sizeof(c->config))) {
		uks_kfree(c);
		return -ENAMETOOLONG;
	}
	if (list)
		strcpy(c->list, list);
	if (config)
		strcpy(c->config, config);
	ret = uks_vfs_mount(vfs, path, &a32_provider, c);
	if (ret)
		uks_kfree(c);
	return ret;
}
