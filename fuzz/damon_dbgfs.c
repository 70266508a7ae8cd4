// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the DAMON debugfs files' input (lib/damon/debugfs/dbgfs.c
 * and core/kscan.h): the first byte picks attrs, target_ids, mk_contexts
 * or rm_contexts of the root or of a context directory, the rest is one
 * write.  A write succeeds whole or fails with one of the errnos 5.15's
 * files return, and afterwards every file reads back in its format: attrs
 * five numbers with 3 <= min <= max, target_ids numbers ending in "\n".
 * monitor_on is left out: starting monitors per input would only time out.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/fs.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define D "sys/kernel/debug/damon/"

static const char *const files[] = { "attrs", "target_ids", "mk_contexts", "rm_contexts" };

static ssize_t read_file(struct uks_vfs *vfs, const char *path, char *buf, size_t len)
{
	ssize_t n = uks_vfs_read_all(vfs, path, buf, len - 1);

	if (n >= 0)
		buf[n] = '\0';
	return n;
}

static void check_dir(struct uks_vfs *vfs, const char *dir)
{
	char path[512], buf[4096];
	unsigned long a[5];
	int used = 0;

	snprintf(path, sizeof(path), "%sattrs", dir);
	if (read_file(vfs, path, buf, sizeof(buf)) < 0 ||
	    sscanf(buf, "%lu %lu %lu %lu %lu\n%n", &a[0], &a[1], &a[2], &a[3], &a[4], &used) != 5 ||
	    buf[used] || a[3] < 3 || a[3] > a[4])
		abort();
	snprintf(path, sizeof(path), "%starget_ids", dir);
	if (read_file(vfs, path, buf, sizeof(buf)) < 1 || buf[strlen(buf) - 1] != '\n' ||
	    strspn(buf, "0123456789 \n") != strlen(buf))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_vfs *vfs;
	struct uks_vfs_file *f;
	char path[256];
	ssize_t n;
	int ret;

	if (!vfs && (uks_vfs_create(&vfs) ||
		     uks_vfs_add_damon(vfs, "sys/kernel/debug/damon", "synthetic")))
		abort();
	if (!size)
		return 0;
	/* bit 2: the same file of context "c" (made if needed) */
	if ((data[0] & 4) && data[0] % 4 < 2) {
		struct uks_vfs_stat st;

		if (uks_vfs_stat(vfs, D "c", &st)) {
			ret = uks_vfs_open(vfs, D "mk_contexts", O_WRONLY, &f);
			if (ret || uks_vfs_write(f, "c", 1) != 1)
				abort();
			uks_vfs_close(f);
		}
		snprintf(path, sizeof(path), D "c/%s", files[data[0] % 4]);
	} else {
		snprintf(path, sizeof(path), D "%s", files[data[0] % 4]);
	}
	ret = uks_vfs_open(vfs, path, O_WRONLY | O_TRUNC, &f);
	if (ret)
		abort();
	n = uks_vfs_write(f, data + 1, size - 1);
	uks_vfs_close(f);
	if (n != (ssize_t)(size - 1) && n != -EINVAL && n != -EEXIST && n != -ENOENT &&
	    n != -ENAMETOOLONG && n != -EACCES && n != -ENOMEM)
		abort();
	check_dir(vfs, D);
	if (!uks_vfs_stat(vfs, D "c", &(struct uks_vfs_stat){ 0 }))
		check_dir(vfs, D "c/");
	return 0;
}
