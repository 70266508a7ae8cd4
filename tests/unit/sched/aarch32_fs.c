// SPDX-License-Identifier: MIT
/*
 * uksfs serves sys/devices/system/cpu/aarch32_el0: the capable CPUs in the
 * kernel's cpulist format with a newline, read-only, from a list or a
 * config file, re-read on each open, absent with no source.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/fs.h>

#include "harness.h"

#define F "sys/devices/system/cpu/aarch32_el0"

static int found;

static int seen(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	(void)arg;
	if (!strcmp(name, "aarch32_el0") && st->type == UKS_VFS_REG && st->mode == 0444)
		found++;
	return 0;
}

TEST(list_source_in_cpulist_format)
{
	struct uks_vfs *vfs;
	struct uks_vfs_stat st;
	struct uks_vfs_file *f;
	char buf[64];

	if (!access("/sys/devices/system/cpu/aarch32_el0", F_OK))
		SKIP(return, "this machine has its own aarch32_el0");
	ASSERT_EQ(uks_vfs_create(&vfs), 0);
	ASSERT_EQ(uks_vfs_add_a32(vfs, "sys/devices/system/cpu", "3,2,5-7", NULL), 0);
	ASSERT_EQ(uks_vfs_read_all(vfs, F, buf, sizeof(buf)), 8);
	EXPECT_STREQ(buf, "2-3,5-7\n");
	ASSERT_EQ(uks_vfs_stat(vfs, F, &st), 0);
	EXPECT_EQ(st.mode, 0444u);
	found = 0;
	ASSERT_EQ(uks_vfs_list(vfs, "sys/devices/system/cpu", seen, NULL), 0);
	EXPECT_EQ(found, 1);
	EXPECT_EQ(uks_vfs_open(vfs, F, O_WRONLY, &f), -EACCES);
	EXPECT_EQ(uks_vfs_stat(vfs, "sys/devices/system/cpu/online", &st), -ENOENT);
	uks_vfs_destroy(vfs);
}

TEST(config_file_reread_on_open_and_absent_without_source)
{
	char cfg[] = "/tmp/uks-a32cfg-XXXXXX", buf[64];
	struct uks_vfs *vfs;
	struct uks_vfs_stat st;
	int fd = mkstemp(cfg);

	if (!access("/sys/devices/system/cpu/aarch32_el0", F_OK))
		SKIP(return, "this machine has its own aarch32_el0");
	ASSERT_GE(fd, 0);
	ASSERT_EQ(write(fd, "# capable\n1\n", 12), 12);
	close(fd);
	ASSERT_EQ(uks_vfs_create(&vfs), 0);
	ASSERT_EQ(uks_vfs_add_a32(vfs, "sys/devices/system/cpu", NULL, cfg), 0);
	ASSERT_GT(uks_vfs_read_all(vfs, F, buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "1\n");
	FILE *f = fopen(cfg, "w");

	ASSERT_NONNULL(f);
	fputs("1-2\n", f);		/* a late-onlined capable CPU */
	fclose(f);
	ASSERT_GT(uks_vfs_read_all(vfs, F, buf, sizeof(buf)), 0);
	EXPECT_STREQ(buf, "1-2\n");
	f = fopen(cfg, "w");
	ASSERT_NONNULL(f);
	fputs("garbage\n", f);
	fclose(f);
	EXPECT_EQ(uks_vfs_stat(vfs, F, &st), -ENOENT);
	unlink(cfg);
	EXPECT_EQ(uks_vfs_stat(vfs, F, &st), -ENOENT);
	found = 0;
	ASSERT_EQ(uks_vfs_list(vfs, "sys/devices/system/cpu", seen, NULL), 0);
	EXPECT_EQ(found, 0);
	uks_vfs_destroy(vfs);
}

TEST_HARNESS_MAIN
