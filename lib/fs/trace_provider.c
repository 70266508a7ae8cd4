// SPDX-License-Identifier: MIT
/*
 * uksfs provider: a trace instance's tracefs files (lib/trace/tracefs.c
 * does the work; this maps the calls and tells stream files apart).
 *
 * A write is made for its caller: a trace_marker line carries the
 * writing task's pid and comm (read from /proc), not the uksd thread's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

static int tp_open(void *ctx, const char *path, int flags, const struct uks_peer *peer,
		   void **file)
{
	(void)peer;	/* no tracefs file acts on a process named by pid */
	return uks_tracefs_open(ctx, path, flags, (struct uks_tracefs_file **)file);
}

static ssize_t tp_read(void *file, void *buf, size_t len)
{
	return uks_tracefs_read(file, buf, len);
}

static void tp_set_nonblock(void *file, bool nonblock)
{
	uks_tracefs_set_nonblock(file, nonblock);
}

/* /proc/@pid/@name into @buf (NUL-terminated, newline dropped); 0 or -1. */
static int read_proc(pid_t pid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

/* The task behind @peer: its thread id, process id and comm. */
static bool peer_task(const struct uks_peer *peer, struct uks_trace_task *task)
{
	char status[1024], *tgid;

	if (!peer || peer->pid <= 0)
		return false;
	memset(task, 0, sizeof(*task));
	task->pid = peer->pid;
	task->tgid = peer->pid;
	if (!read_proc(peer->pid, "status", status, sizeof(status)) &&
	    (tgid = strstr(status, "\nTgid:")))
		task->tgid = (pid_t)atoi(tgid + 6);
	if (read_proc(peer->pid, "comm", task->comm, sizeof(task->comm)))
		strcpy(task->comm, "<...>");	/* gone already */
	return true;
}

static ssize_t tp_write(void *file, const void *buf, size_t len, off_t off,
			const struct uks_peer *peer)
{
	struct uks_trace_task task;

	(void)off;	/* a command, wherever it lands, as the kernel's handlers take it */
	return uks_tracefs_write_as(file, buf, len, peer_task(peer, &task) ? &task : NULL);
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
	.set_nonblock = tp_set_nonblock,
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
