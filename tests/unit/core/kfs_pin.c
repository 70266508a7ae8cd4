// SPDX-License-Identifier: MIT
/*
 * lib/core/kfs: what open files pin, and directories that share a table.
 *
 *	keep	0444  a file of the top directory only (->has hides it in box/)
 *	data	0644  show, ->open fails when told to
 *	box/	->dir: "b" (->obj = the box) with the same table as the top
 *
 * The root's ->get runs under the tree's lock at the end of the walk, its
 * error fails the open, ->put undoes it at the last close or when ->open
 * fails, without the lock; a flushed file (FUSE's FLUSH at close(2)) is
 * not in use until it is used again, its pin on memory stays to the last
 * close; mkdir and rmdir pin their directory; "." and ".." as the name
 * they act on get the VFS's answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include "harness.h"
#include "core/kfs.h"

static pthread_mutex_t tree_mutex = PTHREAD_MUTEX_INITIALIZER;
static bool locked;
static int wrong;		/* a hook ran with the lock when it must not, or without */
static int pins, busy, get_err, open_err, made;
static int top_obj, box_obj;

static void t_lock(void *obj)
{
	pthread_mutex_lock(&tree_mutex);
	locked = true;
}

static void t_unlock(void *obj)
{
	locked = false;
	pthread_mutex_unlock(&tree_mutex);
}

static int t_get(const struct kfs_ref *ref)
{
	wrong += !locked;
	if (get_err)
		return get_err;
	pins++;
	busy++;
	return 0;
}

static void t_in_use(const struct kfs_ref *ref, bool on)
{
	wrong += locked;
	busy += on ? 1 : -1;
}

static void t_put(const struct kfs_ref *ref)
{
	wrong += locked;
	pins--;
}

static int data_open(struct kfs_open_file *of)
{
	return open_err;
}

static int data_show(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, of->ref.obj == &box_obj ? "box\n" : "top\n");
	return 0;
}

static const struct kfs_ops data_ops = { .open = data_open, .show = data_show };

static const struct kfs_node files[] = {
	KFS_FILE("keep", 0444, &data_ops),
	KFS_FILE("data", 0644, &data_ops),
	KFS_DIR("box", 0755, NULL, NULL),	/* ops set below: they name the node */
	{ .name = NULL },
};

static bool box_has(const struct kfs_ref *dir, const struct kfs_node *child)
{
	return strcmp(child->name, "keep");
}

static const struct kfs_dir_ops b_ops = { .has = box_has };
static const struct kfs_node b_dir = KFS_DIR("", 0755, &b_ops, files);

static int box_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	if (strcmp(name, "b") || !made)
		return -ENOENT;
	child->node = &b_dir;
	child->obj = &box_obj;
	return 0;
}

static int box_mkdir(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer)
{
	wrong += locked;
	made = pins;	/* the directory is pinned across the call */
	return 0;
}

static int box_rmdir(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer)
{
	wrong += locked;
	made = 0;
	return 0;
}

static const struct kfs_dir_ops box_ops = {
	.lookup = box_lookup, .mkdir = box_mkdir, .rmdir = box_rmdir,
};
static struct kfs_node top_files[4];
static const struct kfs_node top = KFS_DIR("", 0755, NULL, top_files);
static const struct kfs_root root = {
	.node = &top, .obj = &top_obj, .lock = t_lock, .unlock = t_unlock,
	.get = t_get, .in_use = t_in_use, .put = t_put,
};

static void setup(void)
{
	memcpy(top_files, files, sizeof(files));
	top_files[2].dir = &box_ops;
}

static int collect(const char *name, const struct kfs_stat *st, void *arg)
{
	strcat(arg, name);
	strcat(arg, " ");
	return 0;
}

TEST(an_open_file_pins_its_ref_under_the_lock_until_the_last_close)
{
	struct kfs_open_file *of;
	char buf[8];

	setup();
	ASSERT_EQ(0, __uks_kfs_open(&root, "data", O_RDONLY, NULL, &of));
	EXPECT_EQ(1, pins);
	EXPECT_EQ(4, __uks_kfs_read(of, buf, sizeof(buf), 0));
	EXPECT_EQ(4, __uks_kfs_read(of, buf, sizeof(buf), 0));	/* a reopen keeps the pin */
	EXPECT_EQ(1, pins);
	__uks_kfs_close(of);
	EXPECT_EQ(0, pins);
	/* ->get refuses: the open fails with its error, nothing is pinned */
	get_err = -ENOENT;
	EXPECT_EQ(-ENOENT, __uks_kfs_open(&root, "data", O_RDONLY, NULL, &of));
	get_err = 0;
	/* ->open fails: the pin is let go */
	open_err = -EIO;
	EXPECT_EQ(-EIO, __uks_kfs_open(&root, "data", O_RDONLY, NULL, &of));
	open_err = 0;
	EXPECT_EQ(0, pins);
	/* errors found by the walk come before any pin */
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "keep", O_WRONLY, NULL, &of));
	EXPECT_EQ(-EISDIR, __uks_kfs_open(&root, "box", O_RDONLY, NULL, &of));
	EXPECT_EQ(0, pins);
	EXPECT_EQ(0, busy);
	EXPECT_EQ(0, wrong);
}

TEST(a_flushed_file_is_not_in_use_until_it_is_used_again)
{
	struct kfs_open_file *of;
	char buf[8];

	setup();
	ASSERT_EQ(0, __uks_kfs_open(&root, "data", O_RDWR, NULL, &of));
	EXPECT_EQ(1, busy);
	__uks_kfs_flush(of);
	__uks_kfs_flush(of);	/* a second descriptor closed: still one pin */
	EXPECT_EQ(0, busy);
	EXPECT_EQ(1, pins);
	EXPECT_EQ(4, __uks_kfs_read(of, buf, sizeof(buf), 0));	/* a dup still open */
	EXPECT_EQ(1, busy);
	__uks_kfs_flush(of);
	EXPECT_EQ(-EINVAL, __uks_kfs_write(of, "x", 1, 0, NULL, NULL));	/* no ->write */
	EXPECT_EQ(1, busy);
	__uks_kfs_flush(of);
	__uks_kfs_close(of);	/* released after its flush */
	EXPECT_EQ(0, busy);
	EXPECT_EQ(0, pins);
	ASSERT_EQ(0, __uks_kfs_open(&root, "data", O_RDONLY, NULL, &of));
	__uks_kfs_close(of);	/* released without a flush (the library API) */
	EXPECT_EQ(0, busy);
	EXPECT_EQ(0, pins);
	EXPECT_EQ(0, wrong);
}

TEST(mkdir_and_rmdir_pin_their_directory_and_answer_dot_names_as_the_vfs)
{
	setup();
	ASSERT_EQ(0, __uks_kfs_mkdir(&root, "box/b", NULL));
	EXPECT_EQ(1, made);
	EXPECT_EQ(0, pins);
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "box/b", NULL));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "box/.", NULL));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "box/..", NULL));
	EXPECT_EQ(-EINVAL, __uks_kfs_rmdir(&root, "box/b/.", NULL));
	EXPECT_EQ(-ENOTEMPTY, __uks_kfs_rmdir(&root, "box/b/..", NULL));
	get_err = -ENOENT;	/* the directory is going: so is the mkdir */
	EXPECT_EQ(-ENOENT, __uks_kfs_mkdir(&root, "box/c", NULL));
	get_err = 0;
	EXPECT_EQ(0, __uks_kfs_rmdir(&root, "box/b", NULL));
	EXPECT_EQ(0, made);
	EXPECT_EQ(0, pins);
	EXPECT_EQ(0, busy);
	EXPECT_EQ(0, wrong);
}

TEST(one_table_serves_directories_that_differ_by_has)
{
	struct kfs_open_file *of;
	struct kfs_stat st;
	char names[256] = "";
	char buf[8];

	setup();
	made = 1;
	ASSERT_EQ(0, __uks_kfs_list(&root, "", collect, names));
	EXPECT_STREQ("keep data box ", names);
	names[0] = '\0';
	ASSERT_EQ(0, __uks_kfs_list(&root, "box/b", collect, names));
	EXPECT_STREQ("data box ", names);
	EXPECT_EQ(0, __uks_kfs_stat(&root, "keep", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "box/b/keep", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_open(&root, "box/b/keep", O_RDONLY, NULL, &of));
	ASSERT_EQ(0, __uks_kfs_open(&root, "box/b/data", O_RDONLY, NULL, &of));
	EXPECT_EQ(4, __uks_kfs_read(of, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp(buf, "box\n", 4));
	__uks_kfs_close(of);
	EXPECT_EQ(0, pins);
}

TEST_HARNESS_MAIN
