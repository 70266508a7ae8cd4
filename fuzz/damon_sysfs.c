// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the DAMON sysfs files' input (lib/damon/sysfs/): the
 * first byte picks one of the writable files of kdamond 0 (nr_* files,
 * operations, intervals, goal, nr_regions bounds, pid_target, a region's
 * start/end, state), the rest is one write.  A write succeeds whole or
 * fails with one of the errnos 6.12's files return; afterwards every
 * number file reads back one number and a newline, and the numbered
 * directories match their nr_* files.  "on" is kept from the state file
 * (the first byte never picks it with its word), so no monitor starts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/fs.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define K "sys/kernel/mm/damon/admin/kdamonds/0/"
#define C K "contexts/0/"

static const char *const files[] = {
	"sys/kernel/mm/damon/admin/kdamonds/nr_kdamonds", K "contexts/nr_contexts",
	C "operations", C "monitoring_attrs/intervals/sample_us",
	C "monitoring_attrs/intervals/intervals_goal/aggrs", C "monitoring_attrs/nr_regions/min",
	C "targets/nr_targets", C "targets/0/pid_target", C "targets/0/regions/nr_regions",
	C "targets/0/regions/0/start", C "targets/0/regions/0/end", C "schemes/nr_schemes",
	K "state",
};
#define NR_FILES (sizeof(files) / sizeof(files[0]))

static void put(struct uks_vfs *vfs, const char *path, const char *s)
{
	struct uks_vfs_file *f;

	if (uks_vfs_open(vfs, path, O_WRONLY, &f))
		return;
	(void)uks_vfs_write(f, s, strlen(s));
	uks_vfs_close(f);
}

/* A number file: one number (a sign for pid_target) and "\n", or gone. */
static void check_number(struct uks_vfs *vfs, const char *path)
{
	char buf[64];
	ssize_t n = uks_vfs_read_all(vfs, path, buf, sizeof(buf) - 1);

	if (n == -ENOENT)
		return;
	if (n < 2)
		abort();
	buf[n] = '\0';
	if (buf[n - 1] != '\n' || strspn(buf + (buf[0] == '-'), "0123456789\n") !=
	    (size_t)n - (buf[0] == '-'))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_vfs *vfs;
	struct uks_vfs_file *f;
	const char *path;
	char *text;
	ssize_t n;

	if (!vfs && (uks_vfs_create(&vfs) ||
		     uks_vfs_add_damon_sysfs(vfs, "sys/kernel/mm/damon/admin", NULL)))
		abort();
	if (!size)
		return 0;
	/* keep a tree to write into, small enough to stay fast */
	put(vfs, files[0], "1");
	put(vfs, files[1], "1");
	path = files[data[0] % NR_FILES];
	if (data[0] % NR_FILES <= 1 || !strcmp(path + strlen(path) - 10, "nr_targets") ||
	    !strcmp(path + strlen(path) - 10, "nr_regions")) {
		/* nr_* files: at most 3 directories, so inputs cannot ask for gigabytes */
		if (size > 2 || (size == 2 && (data[1] < '0' || data[1] > '3')))
			return 0;
	}
	if (data[0] % NR_FILES == NR_FILES - 1 && size > 1 && data[1] == 'o')
		return 0;	/* "on", "off": no monitors from fuzz inputs */
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	if (uks_vfs_open(vfs, path, O_WRONLY, &f)) {
		free(text);
		return 0;	/* a directory this input's tree does not have */
	}
	n = uks_vfs_write(f, text, size - 1);
	uks_vfs_close(f);
	free(text);
	if (n != (ssize_t)(size - 1) && !(size - 1 > 4096 && n == 4096) && n != -EINVAL &&
	    n != -ERANGE && n != -ENOMEM && n != -EBUSY)
		abort();
	for (size_t i = 0; i < NR_FILES; i++)
		if (i != 2 && i != NR_FILES - 1)
			check_number(vfs, files[i]);
	return 0;
}
