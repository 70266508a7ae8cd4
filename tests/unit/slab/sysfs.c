// SPDX-License-Identifier: MIT
/*
 * lib/slab's /sys/kernel/slab tree (slab/sysfs.h) through kfs, as uksfs
 * serves it: a directory per cache in creation order ('/' shown as '!'),
 * 5.15's attribute files in slab_attrs[] order with SLUB's modes, reads as
 * of the first read (again after a seek), one value per write with the
 * kernel's errnos, and a cache destroyed before an open (-ENOENT) or after
 * it (-ENODEV, as kernfs answers for a removed node).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "harness.h"
#include "slab/sysfs.h"

struct listing {
	char buf[8192];
	int nr;
};

static int collect(const char *name, const struct kfs_stat *st, void *arg)
{
	struct listing *l = arg;
	size_t len = strlen(l->buf);

	snprintf(l->buf + len, sizeof(l->buf) - len, "%s%s %o\n", name,
		 S_ISDIR(st->mode) ? "/" : "", (unsigned int)(st->mode & 07777));
	l->nr++;
	return 0;
}

/* The whole text of @path, read as cat(1) does; its length or -errno. */
static ssize_t cat(const struct kfs_root *root, const char *path, char *buf, size_t size)
{
	struct kfs_open_file *of;
	size_t got = 0;
	ssize_t n;
	int ret = __uks_kfs_open(root, path, O_RDONLY, NULL, &of);

	if (ret)
		return ret;
	while ((n = __uks_kfs_read(of, buf + got, size - 1 - got, (off_t)got)) > 0)
		got += (size_t)n;
	__uks_kfs_close(of);
	if (n < 0)
		return n;
	buf[got] = '\0';
	return (ssize_t)got;
}

static ssize_t echo(const struct kfs_root *root, const char *path, const char *text)
{
	struct kfs_open_file *of;
	ssize_t n;
	int ret = __uks_kfs_open(root, path, O_WRONLY | O_TRUNC, NULL, &of);

	if (ret)
		return ret;
	n = __uks_kfs_write(of, text, strlen(text), 0, NULL, NULL);
	__uks_kfs_close(of);
	return n;
}

/* 5.15 with CONFIG_SLUB_DEBUG, CONFIG_SLUB_STATS and CONFIG_NUMA. */
static const char *const kernel_attrs[] = {
	"slab_size", "object_size", "objs_per_slab", "order", "min_partial*", "cpu_partial*",
	"objects", "objects_partial", "partial", "cpu_slabs", "ctor", "aliases", "align",
	"hwcache_align", "reclaim_account", "destroy_by_rcu", "shrink*", "slabs_cpu_partial",
	"total_objects", "slabs", "sanity_checks", "trace", "red_zone", "poison", "store_user",
	"validate*", "cache_dma", "usersize", "remote_node_defrag_ratio*", "failslab",
	"alloc_fastpath*", "alloc_slowpath*", "free_fastpath*", "free_slowpath*", "free_frozen*",
	"free_add_partial*", "free_remove_partial*", "alloc_from_partial*", "alloc_slab*",
	"alloc_refill*", "alloc_node_mismatch*", "free_slab*", "cpuslab_flush*",
	"deactivate_full*", "deactivate_empty*", "deactivate_to_head*", "deactivate_to_tail*",
	"deactivate_remote_frees*", "deactivate_bypass*", "order_fallback*",
	"cmpxchg_double_cpu_fail*", "cmpxchg_double_fail*", "cpu_partial_alloc*",
	"cpu_partial_free*", "cpu_partial_node*", "cpu_partial_drain*",
};

TEST(a_cache_directory_lists_the_kernel_attributes_in_order_with_slub_modes)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_sysfs_attrs", 40, 0, 0, NULL);
	struct listing got = { "", 0 }, want = { "", 0 };
	const char *const *names = uks_kmem_cache_attr_names();
	struct kfs_root root;

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, __uks_slab_sysfs_root(&root));
	ASSERT_EQ(0, __uks_kfs_list(&root, "t_sysfs_attrs", collect, &got));
	for (size_t i = 0; i < sizeof(kernel_attrs) / sizeof(kernel_attrs[0]); i++) {
		size_t len = strlen(want.buf), n = strcspn(kernel_attrs[i], "*");
		bool rw = kernel_attrs[i][n] == '*';

		snprintf(want.buf + len, sizeof(want.buf) - len, "%.*s %o\n", (int)n,
			 kernel_attrs[i], rw ? 0600 : 0400);
		/* The library API comes from the same table. */
		EXPECT_EQ(0, strncmp(names[i], kernel_attrs[i], n));
		EXPECT_EQ('\0', names[i][n]);
		EXPECT_EQ(rw, uks_kmem_cache_attr_writable(names[i]));
	}
	EXPECT_NULL(names[56]);
	EXPECT_EQ(56, got.nr);
	EXPECT_STREQ(want.buf, got.buf);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(caches_are_directories_in_creation_order_named_with_bang_for_slash)
{
	struct uks_kmem_cache *a = uks_kmem_cache_create("t_sysfs/one", 72, 0, 0, NULL);
	struct uks_kmem_cache *b = uks_kmem_cache_create("t_sysfs_two", 72, 0, 0, NULL);
	struct listing l = { "", 0 };
	struct kfs_root root;
	struct kfs_stat st;
	const char *one, *two;
	char long_name[300];

	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	ASSERT_EQ(0, __uks_slab_sysfs_root(&root));
	ASSERT_EQ(0, __uks_kfs_list(&root, "", collect, &l));
	one = strstr(l.buf, "\nt_sysfs!one/ 755\n");
	two = strstr(l.buf, "\nt_sysfs_two/ 755\n");
	ASSERT_NONNULL(one);
	ASSERT_NONNULL(two);
	EXPECT_LT(one, two);
	EXPECT_NONNULL(strstr(l.buf, "kmalloc-64/ 755\n"));
	EXPECT_LT(strstr(l.buf, "kmalloc-64/"), one);	/* made at initialisation */

	ASSERT_EQ(0, __uks_kfs_stat(&root, "t_sysfs!one", &st));
	EXPECT_TRUE(S_ISDIR(st.mode));
	EXPECT_EQ(0755, st.mode & 07777);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "/t_sysfs!one//order", &st));
	EXPECT_EQ(S_IFREG | 0400, st.mode);
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "t_sysfs/one", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "t_sysfs!two", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "t_sysfs_two/nosuch", &st));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_stat(&root, "t_sysfs_two/order/x", &st));
	/* sysfs (kernfs) has no entry of a name past NAME_MAX: -ENOENT, not -ENAMETOOLONG. */
	memset(long_name, 'x', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, long_name, &st));
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, long_name, NULL));
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, "t_sysfs_three", NULL));
	EXPECT_EQ(-EPERM, __uks_kfs_rmdir(&root, "t_sysfs_two", NULL));
	EXPECT_EQ(0, uks_kmem_cache_destroy(a));
	EXPECT_EQ(0, uks_kmem_cache_destroy(b));
}

static void ctor(void *p)
{
	memset(p, 0, 8);
}

TEST(reads_show_the_attribute_text_and_writes_store_one_value)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_sysfs_rw", 100, 0,
							 UKS_SLAB_HWCACHE_ALIGN, ctor);
	struct kfs_open_file *of;
	struct kfs_root root;
	char buf[512], api[512];

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, __uks_slab_sysfs_root(&root));
	ASSERT_EQ(4, cat(&root, "t_sysfs_rw/object_size", buf, sizeof(buf)));
	EXPECT_STREQ("100\n", buf);
	ASSERT_EQ(2, cat(&root, "t_sysfs_rw/hwcache_align", buf, sizeof(buf)));
	EXPECT_STREQ("1\n", buf);
	ASSERT_EQ(0, cat(&root, "t_sysfs_rw/shrink", buf, sizeof(buf)));
	ASSERT_GT(cat(&root, "t_sysfs_rw/ctor", buf, sizeof(buf)), 1);	/* a symbol or an address */
	EXPECT_EQ('\n', buf[strlen(buf) - 1]);
	/* The same text as the library API gives. */
	for (const char *const *a = uks_kmem_cache_attr_names(); *a; a++) {
		char path[128];
		ssize_t n;

		snprintf(path, sizeof(path), "t_sysfs_rw/%s", *a);
		n = cat(&root, path, buf, sizeof(buf));
		ASSERT_EQ(n, uks_kmem_cache_attr_show(s, *a, api, sizeof(api)));
		EXPECT_STREQ(api, buf);
	}

	EXPECT_EQ(2, echo(&root, "t_sysfs_rw/min_partial", "7\n"));
	EXPECT_EQ(2, cat(&root, "t_sysfs_rw/min_partial", buf, sizeof(buf)));
	EXPECT_STREQ("7\n", buf);
	EXPECT_EQ(2, echo(&root, "t_sysfs_rw/min_partial", "99"));
	cat(&root, "t_sysfs_rw/min_partial", buf, sizeof(buf));
	EXPECT_STREQ("10\n", buf);
	EXPECT_EQ(-EINVAL, echo(&root, "t_sysfs_rw/min_partial", "x\n"));
	EXPECT_EQ(-ERANGE, echo(&root, "t_sysfs_rw/remote_node_defrag_ratio", "101"));
	EXPECT_EQ(-EINVAL, echo(&root, "t_sysfs_rw/shrink", "2"));
	EXPECT_EQ(1, echo(&root, "t_sysfs_rw/shrink", "1"));
	EXPECT_EQ(1, echo(&root, "t_sysfs_rw/validate", "1"));
	EXPECT_EQ(-EINVAL, echo(&root, "t_sysfs_rw/alloc_slab", "1"));
	EXPECT_EQ(2, echo(&root, "t_sysfs_rw/alloc_slab", "0\n"));
	cat(&root, "t_sysfs_rw/alloc_slab", buf, sizeof(buf));
	EXPECT_STREQ("0\n", buf);

	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "t_sysfs_rw/order", O_WRONLY, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "t_sysfs_rw/order", O_RDONLY | O_TRUNC, NULL, &of));
	EXPECT_EQ(-EISDIR, __uks_kfs_open(&root, "t_sysfs_rw", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EISDIR, __uks_kfs_open(&root, "", O_RDONLY, NULL, &of));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/* seq_file: the text of the first read; a read at another offset makes it again. */
TEST(an_open_file_reads_its_first_text_until_a_seek)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_sysfs_seq", 64, 0, 0, NULL);
	struct kfs_open_file *of;
	struct kfs_root root;
	char buf[16] = "";

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, __uks_slab_sysfs_root(&root));
	ASSERT_EQ(0, uks_kmem_cache_attr_store(s, "min_partial", "6", 1));
	ASSERT_EQ(0, __uks_kfs_open(&root, "t_sysfs_seq/min_partial", O_RDWR, NULL, &of));
	ASSERT_EQ(1, __uks_kfs_read(of, buf, 1, 0));
	EXPECT_EQ('6', buf[0]);
	ASSERT_EQ(1, __uks_kfs_write(of, "8", 1, -1, NULL, NULL));
	ASSERT_EQ(1, __uks_kfs_read(of, buf, sizeof(buf), 1));
	EXPECT_EQ('\n', buf[0]);
	ASSERT_EQ(2, __uks_kfs_read(of, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp("8\n", buf, 2));
	__uks_kfs_close(of);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(a_destroyed_cache_is_gone_before_an_open_and_enodev_after)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_sysfs_gone", 64, 0, 0, NULL);
	struct kfs_open_file *r, *w, *of;
	struct kfs_root root;
	struct kfs_stat st;
	char buf[16];

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, __uks_slab_sysfs_root(&root));
	ASSERT_EQ(0, __uks_kfs_open(&root, "t_sysfs_gone/object_size", O_RDONLY, NULL, &r));
	ASSERT_EQ(0, __uks_kfs_open(&root, "t_sysfs_gone/min_partial", O_WRONLY, NULL, &w));
	ASSERT_EQ(0, uks_kmem_cache_destroy(s));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "t_sysfs_gone", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_open(&root, "t_sysfs_gone/object_size", O_RDONLY, NULL, &of));
	EXPECT_EQ(-ENODEV, __uks_kfs_read(r, buf, sizeof(buf), 0));
	EXPECT_EQ(-ENODEV, __uks_kfs_write(w, "7", 1, 0, NULL, NULL));
	__uks_kfs_close(r);
	__uks_kfs_close(w);
}

TEST_HARNESS_MAIN
