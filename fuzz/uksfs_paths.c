// SPDX-License-Identifier: MIT
/*
 * Fuzz target for uksfs path handling (lib/fs/vfs.c and its providers):
 * an arbitrary path is normalised, stat'ed, listed and opened in a tree
 * with tracefs and slab mounted.  Results must be consistent: a path that
 * stats as a directory lists and refuses open with -EISDIR, a file opens
 * (or is refused with -EACCES by its mode) and reads without error, and
 * nothing ever escapes above the root ("..").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/fs.h>
#include <uks/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int count(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	if (!*name || strchr(name, '/') || (st->type != UKS_VFS_DIR && st->type != UKS_VFS_REG))
		abort();
	++*(int *)arg;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_trace *tr;
	static struct uks_vfs *vfs;
	struct uks_vfs_stat st;
	struct uks_vfs_file *f;
	char path[2048], buf[512];
	int n = 0, ret;

	if (!vfs && (uks_trace_create(NULL, &tr) || uks_vfs_create(&vfs) ||
		     uks_vfs_add_tracefs(vfs, "sys/kernel/tracing", tr) ||
		     uks_vfs_add_slab(vfs, "sys/kernel/slab")))
		abort();
	if (size >= sizeof(path))
		size = sizeof(path) - 1;
	memcpy(path, data, size);
	path[size] = '\0';
	ret = uks_vfs_stat(vfs, path, &st);
	if (ret) {
		if (ret != -ENOENT && ret != -ENAMETOOLONG && ret != -ENOTDIR)
			abort();
		return 0;
	}
	if (st.type == UKS_VFS_DIR) {
		if (uks_vfs_list(vfs, path, count, &n) || uks_vfs_open(vfs, path, O_RDONLY, &f) != -EISDIR)
			abort();
		return 0;
	}
	/* Read-only and non-blocking: fuzzing must not change the tree or wait. */
	ret = uks_vfs_open(vfs, path, O_RDONLY | O_NONBLOCK, &f);
	if (ret == -EACCES && !(st.mode & 0400))
		return 0;
	if (ret)
		abort();
	for (off_t off = 0; off < 8192;) {
		ssize_t got = uks_vfs_read(f, buf, sizeof(buf), off);

		if (got == 0 || got == -EAGAIN)
			break;
		if (got < 0)
			abort();
		off += got;
	}
	uks_vfs_close(f);
	return 0;
}
