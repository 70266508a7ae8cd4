// SPDX-License-Identifier: MIT
/*
 * uksfs provider: a trace instance's tracefs files (lib/trace/tracefs.c
 * does the work; this maps the calls and tells stream files apart).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uks/trace.h>

#include "core/compiler.h"
#include "fs/vfs.h"

static bool is_stream(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "trace_pipe");
}

static int tp_stat(void *ctx, const char *path, struct uks_vfs_stat *st)
{
	unsigned int mode = 0;
	int type = uks_tracefs_stat(ctx, path, &mode);

	if (type < 0)
		return type;
	st->type = type == UKS_TRACEFS_DIR ? UKS_VFS_DIR : UKS_VFS_REG;
	st->mode = mode;
	st->stream = st->type == UKS_VFS_REG && is_stream(path);
	return 0;
}

struct list_ctx {
	struct uks_trace *tr;
	const char *dir;
	int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg);
	void *arg;
};

static int tp_list_one(const char *name, enum uks_tracefs_type type, void *arg)
{
	struct list_ctx *lc = arg;
	struct uks_vfs_stat st = { type == UKS_TRACEFS_DIR ? UKS_VFS_DIR : UKS_VFS_REG, 0, false };
	char path[VFS_PATH_MAX];
	unsigned int mode = type == UKS_TRACEFS_DIR ? 0755 : 0644;

	/* The modes come from a stat of each entry (the list has types only). */
	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", lc->dir, *lc->dir ? "/" : "", name) <
	    sizeof(path))
		uks_tracefs_stat(lc->tr, path, &mode);
	st.mode = mode;
	st.stream = st.type == UKS_VFS_REG && is_stream(name);
	return lc->fn(name, &st, lc->arg);
}

static int tp_list(void *ctx, const char *path,
		   int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg), void *arg)
{
	struct list_ctx lc = { ctx, path, fn, arg };

	return uks_tracefs_list(ctx, path, tp_list_one, &lc);
}

static int tp_open(void *ctx, const char *path, int flags, void **file)
{
	return uks_tracefs_open(ctx, path, flags, (struct uks_tracefs_file **)file);
}

static ssize_t tp_read(void *file, void *buf, size_t len)
{
	return uks_tracefs_read(file, buf, len);
}

static ssize_t tp_write(void *file, const void *buf, size_t len, off_t off)
{
	(void)off;	/* a command, wherever it lands, as the kernel's handlers take it */
	return uks_tracefs_write(file, buf, len);
}

static int tp_poll(void *file)
{
	return uks_tracefs_poll(file);
}

static void tp_interrupt(void *file)
{
	uks_tracefs_interrupt(file);
}

static void tp_close(void *file)
{
	uks_tracefs_close(file);
}

static const struct vfs_provider_ops trace_provider = {
	.stat = tp_stat,
	.list = tp_list,
	.open = tp_open,
	.read = tp_read,
	.write = tp_write,
	.poll = tp_poll,
	.interrupt = tp_interrupt,
	.close = tp_close,
};

/** uks_vfs_add_tracefs - see <uks/fs.h>; the instance must outlive the tree */
UKS_EXPORT int uks_vfs_add_tracefs(struct uks_vfs *vfs, const char *path, struct uks_trace *tr)
{
	return uks_vfs_mount(vfs, path, &trace_provider, tr);
}
