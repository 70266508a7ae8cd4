// SPDX-License-Identifier: MIT
/*
 * lib/core/kfs: the file-node contract, on a small tree of its own.
 *
 *	info	0444  show: the ref it was opened at (obj, sub, idx)
 *	ctl	0644  show (a long text with its generation), write, ioctl
 *	wonly	0200  write
 *	log	0644  ->read with ->open/->release (state in ->priv)
 *	pipe	0444  ->read, KFS_STREAM
 *	bare	0444  no ops
 *	sub/	static: leaf (0444, info's show)
 *	cpus/	static "online", then cpu0..cpu3 from ->dir (idx, sub), each
 *		with a static "stats" (info's show)
 *	inst/	->dir with mkdir/rmdir
 *
 * Walks, errnos, which ref a node is reached with, seq_file offsets, the
 * reopen of ->read files, streams, write context, directories made and
 * removed, the hooks, and which callbacks run under the tree's lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/kfs.h"

static pthread_mutex_t tree_mutex;
static bool locked;		/* the tree lock is held */
static int relocked;		/* a lock taken by its holder (would deadlock) */
static int under_lock_wrong;	/* a callback ran with the lock when it must not, or without */

static void t_lock(void *obj)
{
	if (pthread_mutex_lock(&tree_mutex) == EDEADLK) {
		relocked++;
		return;
	}
	locked = true;
}

static void t_unlock(void *obj)
{
	locked = false;
	pthread_mutex_unlock(&tree_mutex);
}

static void must_hold(bool held)
{
	if (locked != held)
		under_lock_wrong++;
}

struct tree_obj {
	int id;
};

static struct tree_obj the_obj = { 42 };
static int subs[4];
static int opened, closed, released_tree;

/* Open files pin their ref under the tree's lock and let go without it. */
static int t_get(const struct kfs_ref *ref)
{
	must_hold(true);
	opened++;
	return 0;
}

static void t_put(const struct kfs_ref *ref)
{
	must_hold(false);
	closed++;
}

/* Where the file was reached: "obj=42 sub=2 idx=2" (sub: which subs[] or -1). */
static int info_show(struct kfs_open_file *of, struct uks_seq *s)
{
	const struct tree_obj *o = of->ref.obj;
	int *sub = of->ref.sub;

	must_hold(true);
	seq_printf(s, "obj=%d sub=%ld idx=%ld\n", o ? o->id : -1,
		   sub ? (long)(sub - subs) : -1L, of->ref.idx);
	return 0;
}

static const struct kfs_ops info_ops = { .show = info_show };

#define CTL_LEN	10000	/* past the walk's 4 KiB skip buffer */
static int shows;

/* "<generation>:" then letters: which show made the bytes a read returns. */
static int ctl_show(struct kfs_open_file *of, struct uks_seq *s)
{
	must_hold(true);
	shows++;
	seq_printf(s, "%d:", shows);
	while (s->len < CTL_LEN)
		seq_putc(s, (char)('a' + s->len % 26));
	return 0;
}

static struct {
	const struct uks_peer *writer;
	const void *write_arg;
	off_t off;
	char buf[64];
	int calls;
	bool file_locked;	/* a write found the open file's mutex taken */
} last_write;

static ssize_t record_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			    const struct kfs_caller *caller)
{
	must_hold(false);
	if (pthread_mutex_trylock(&of->lock))
		last_write.file_locked = true;
	else
		pthread_mutex_unlock(&of->lock);
	last_write.writer = caller->peer;
	last_write.write_arg = caller->arg;
	last_write.off = off;
	snprintf(last_write.buf, sizeof(last_write.buf), "%.*s", (int)len, buf);
	last_write.calls++;
	return (ssize_t)len;
}

static long ctl_ioctl(struct kfs_open_file *of, unsigned int cmd, void *arg)
{
	return cmd == 7 ? 70 : -EINVAL;
}

static const struct kfs_ops ctl_ops = { .show = ctl_show, .write = record_write, .ioctl = ctl_ioctl };
static const struct kfs_ops wonly_ops = { .write = record_write };

/* log: an ->open that counts, state in ->priv, a read of its own. */
struct log_state {
	int id;		/* which ->open made it */
	int flags;	/* of->flags it saw */
	size_t pos;
};

static int log_opens, log_releases;
static void *log_released_last;
static const char log_text[] = "0123456789abcdefghijklmnopqrstuvwxyz";

static int log_open(struct kfs_open_file *of)
{
	struct log_state *st = calloc(1, sizeof(*st));

	must_hold(false);
	if (!st)
		return -ENOMEM;
	st->id = ++log_opens;
	st->flags = of->flags;
	of->priv = st;
	return 0;
}

static ssize_t log_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct log_state *st = of->priv;
	size_t left = sizeof(log_text) - 1 - st->pos;

	must_hold(false);
	if (len > left)
		len = left;
	memcpy(buf, log_text + st->pos, len);
	st->pos += len;
	return (ssize_t)len;
}

static void log_release(struct kfs_open_file *of)
{
	must_hold(false);
	log_releases++;
	log_released_last = of->priv;
	free(of->priv);
}

static const struct kfs_ops log_ops = {
	.open = log_open, .read = log_read, .write = record_write, .release = log_release,
};

/* pipe: each read consumes one record, "r1\n", "r2\n", ... */
static int pipe_reads;

static ssize_t pipe_read(struct kfs_open_file *of, void *buf, size_t len)
{
	char rec[16];
	int n = snprintf(rec, sizeof(rec), "r%d\n", ++pipe_reads);

	if ((size_t)n > len)
		n = (int)len;
	memcpy(buf, rec, (size_t)n);
	return n;
}

static const struct kfs_ops pipe_ops = { .read = pipe_read };

static const struct kfs_node sub_children[] = {
	KFS_FILE("leaf", 0444, &info_ops),
	{ .name = NULL },
};

static const struct kfs_node cpu_children[] = {
	KFS_FILE("stats", 0444, &info_ops),
	{ .name = NULL },
};

static const struct kfs_node cpu_dir = KFS_DIR("", 0755, NULL, cpu_children);

static int cpus_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	char *end;
	long n;

	must_hold(true);
	if (strncmp(name, "cpu", 3) || !name[3])
		return -ENOENT;
	n = strtol(name + 3, &end, 10);
	if (*end || n < 0 || n > 3)
		return -ENOENT;
	/* @child comes filled with @dir's objects: only what differs is set. */
	if (child->obj != dir->obj || child->node != dir->node)
		return -EIO;
	child->node = &cpu_dir;
	child->sub = &subs[n];
	child->idx = n;
	return 0;
}

static int fill_calls;

static int cpus_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	must_hold(true);
	for (long n = 0; n < 4; n++) {
		struct kfs_ref child = *dir;
		char name[8];
		int ret;

		child.node = &cpu_dir;
		child.sub = &subs[n];
		child.idx = n;
		snprintf(name, sizeof(name), "cpu%ld", n);
		fill_calls++;
		ret = fill(name, &child, arg);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct kfs_dir_ops cpus_ops = { .lookup = cpus_lookup, .iterate = cpus_iterate };

static const struct kfs_node cpus_children[] = {
	KFS_FILE("online", 0444, &info_ops),
	{ .name = NULL },
};

/* inst/: names made by mkdir, each an empty directory. */
static char made[4][KFS_NAME_MAX];
static const struct kfs_node inst_dir = KFS_DIR("", 0755, NULL, NULL);
static struct {
	const struct kfs_node *dir_node;
	void *dir_obj;
	char name[KFS_NAME_MAX];
	const struct uks_peer *peer;
	int calls;
} last_dirop;

static int inst_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	must_hold(true);
	if (!strcmp(name, "forbidden"))
		return -EACCES;
	for (int i = 0; i < 4; i++) {
		if (made[i][0] && !strcmp(made[i], name)) {
			child->node = &inst_dir;
			child->idx = i;
			return 0;
		}
	}
	return -ENOENT;
}

static int inst_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	must_hold(true);
	for (int i = 0; i < 4; i++) {
		struct kfs_ref child = *dir;

		child.node = &inst_dir;
		if (made[i][0] && fill(made[i], &child, arg))
			return 1;
	}
	return 0;
}

static void record_dirop(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer)
{
	must_hold(false);
	last_dirop.dir_node = dir->node;
	last_dirop.dir_obj = dir->obj;
	strcpy(last_dirop.name, name);
	last_dirop.peer = peer;
	last_dirop.calls++;
}

static int inst_mkdir(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer)
{
	record_dirop(dir, name, peer);
	for (int i = 0; i < 4; i++) {
		if (!made[i][0]) {
			strcpy(made[i], name);
			return 0;
		}
	}
	return -ENOSPC;
}

static int inst_rmdir(const struct kfs_ref *dir, const char *name, const struct uks_peer *peer)
{
	record_dirop(dir, name, peer);
	for (int i = 0; i < 4; i++) {
		if (!strcmp(made[i], name)) {
			made[i][0] = '\0';
			return 0;
		}
	}
	return -ENOENT;
}

static const struct kfs_dir_ops inst_ops = {
	.lookup = inst_lookup, .iterate = inst_iterate, .mkdir = inst_mkdir, .rmdir = inst_rmdir,
};

static const struct kfs_node root_children[] = {
	KFS_FILE("info", 0444, &info_ops),
	KFS_FILE("ctl", 0644, &ctl_ops),
	KFS_FILE("wonly", 0200, &wonly_ops),
	KFS_FILE("log", 0644, &log_ops),
	{ .name = "pipe", .mode = S_IFREG | 0444, .flags = KFS_STREAM, .ops = &pipe_ops },
	KFS_FILE("bare", 0444, NULL),
	KFS_DIR("sub", 0755, NULL, sub_children),
	KFS_DIR("cpus", 0555, &cpus_ops, cpus_children),
	KFS_DIR("inst", 0755, &inst_ops, NULL),
	{ .name = NULL },
};

static const struct kfs_node root_dir = KFS_DIR("", 0755, NULL, root_children);

static void t_release(void *obj)
{
	released_tree++;
}

static struct kfs_root root = {
	.node = &root_dir, .obj = &the_obj, .lock = t_lock, .unlock = t_unlock,
	.get = t_get, .put = t_put, .release = t_release,
};

/* The tree's mutex reports a relock (EDEADLK) instead of hanging. */
static void init_lock(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&tree_mutex, &a);
	pthread_mutexattr_destroy(&a);
}

static ssize_t cat(const char *path, char *buf, size_t size)
{
	struct kfs_open_file *of;
	size_t got = 0;
	ssize_t n;
	int ret = __uks_kfs_open(&root, path, O_RDONLY, NULL, &of);

	if (ret)
		return ret;
	while ((n = __uks_kfs_read(of, buf + got, size - 1 - got, (off_t)got)) > 0)
		got += (size_t)n;
	__uks_kfs_close(of);
	buf[got] = '\0';
	return n < 0 ? n : (ssize_t)got;
}

struct listing {
	char buf[1024];
	int stop_after;		/* return 5 after this many entries (0: never) */
	int nr;
	int stat_ret;		/* what a walk made from inside the callback gave */
};

static int collect(const char *name, const struct kfs_stat *st, void *arg)
{
	struct listing *l = arg;
	struct kfs_stat inner;
	size_t len = strlen(l->buf);

	snprintf(l->buf + len, sizeof(l->buf) - len, "%s%s%o ", name,
		 S_ISDIR(st->mode) ? "/" : " ", (unsigned int)(st->mode & 07777));
	/* A callback may take the tree's lock: it runs after the walk has let it go. */
	l->stat_ret = __uks_kfs_stat(&root, "cpus/cpu1/stats", &inner);
	if (locked)
		under_lock_wrong++;
	return ++l->nr == l->stop_after ? 5 : 0;
}

static char *long_name(char *buf, size_t len)
{
	memset(buf, 'n', len);
	buf[len] = '\0';
	return buf;
}

TEST(static_tables_and_the_walk_errnos)
{
	char name[KFS_NAME_MAX + 8], path[KFS_NAME_MAX + 32];
	struct kfs_stat st;

	init_lock();
	ASSERT_EQ(0, __uks_kfs_stat(&root, "", &st));
	EXPECT_EQ(S_IFDIR | 0755, st.mode);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "info", &st));
	EXPECT_EQ(S_IFREG | 0444, st.mode);
	EXPECT_EQ(0u, st.flags);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "pipe", &st));
	EXPECT_EQ((unsigned int)KFS_STREAM, st.flags);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "//sub///leaf/", &st));
	EXPECT_EQ(S_IFREG | 0444, st.mode);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "cpus", &st));
	EXPECT_EQ(S_IFDIR | 0555, st.mode);

	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "nosuch", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "sub/nosuch", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "nosuch/leaf", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "inf", &st));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_stat(&root, "info/x", &st));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_stat(&root, "sub/leaf/x/y", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, long_name(name, KFS_NAME_MAX - 1), &st));
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_stat(&root, long_name(name, KFS_NAME_MAX), &st));
	snprintf(path, sizeof(path), "sub/%s", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_stat(&root, path, &st));
	snprintf(path, sizeof(path), "%s/x", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_stat(&root, path, &st));
	/* Components in order, as link_path_walk(): what an earlier one gives first. */
	snprintf(path, sizeof(path), "nosuch/%s", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, path, &st));
	snprintf(path, sizeof(path), "info/%s", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_stat(&root, path, &st));
	EXPECT_FALSE(locked);
	EXPECT_EQ(0, under_lock_wrong);
}

/* sysfs has no entry of a name past NAME_MAX (kernfs), where libfs refuses it. */
TEST(a_kernfs_tree_has_no_names_past_name_max)
{
	struct kfs_root sysfs = root;
	char name[KFS_NAME_MAX + 8], path[KFS_NAME_MAX + 32];
	struct kfs_open_file *of;
	struct listing l = { "", 0, 0, 0 };
	struct kfs_stat st;

	init_lock();
	sysfs.kernfs = true;
	long_name(name, KFS_NAME_MAX);
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&sysfs, name, &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_open(&sysfs, name, O_RDONLY, NULL, &of));
	EXPECT_EQ(-ENOENT, __uks_kfs_list(&sysfs, name, collect, &l));
	snprintf(path, sizeof(path), "sub/%s/leaf", name);
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&sysfs, path, &st));
	snprintf(path, sizeof(path), "info/%s", name);
	EXPECT_EQ(-ENOTDIR, __uks_kfs_stat(&sysfs, path, &st));
	/* mkdir of a new name: -EPERM where the directory makes none. */
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&sysfs, name, NULL));
	EXPECT_EQ(-ENOENT, __uks_kfs_rmdir(&sysfs, name, NULL));
	snprintf(path, sizeof(path), "inst/%s", name);
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_mkdir(&sysfs, path, NULL));
	EXPECT_EQ(-ENOENT, __uks_kfs_rmdir(&sysfs, path, NULL));
	snprintf(path, sizeof(path), "inst/%s/x", name);
	EXPECT_EQ(-ENOENT, __uks_kfs_mkdir(&sysfs, path, NULL));
	EXPECT_EQ(0, last_dirop.calls);
	/* Names that fit are looked up as in any tree. */
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&sysfs, long_name(name, KFS_NAME_MAX - 1), &st));
	EXPECT_EQ(0, __uks_kfs_stat(&sysfs, "cpus/cpu1/stats", &st));
	EXPECT_FALSE(locked);
}

TEST(dir_ops_children_inherit_and_set_the_ref)
{
	char buf[128];
	struct kfs_stat st;

	init_lock();
	ASSERT_GT(cat("info", buf, sizeof(buf)), 0);
	EXPECT_STREQ("obj=42 sub=-1 idx=0\n", buf);
	ASSERT_GT(cat("sub/leaf", buf, sizeof(buf)), 0);
	EXPECT_STREQ("obj=42 sub=-1 idx=0\n", buf);
	ASSERT_GT(cat("cpus/online", buf, sizeof(buf)), 0);
	EXPECT_STREQ("obj=42 sub=-1 idx=0\n", buf);
	/* A ->dir child sets sub and idx; its static children inherit them. */
	ASSERT_GT(cat("cpus/cpu2/stats", buf, sizeof(buf)), 0);
	EXPECT_STREQ("obj=42 sub=2 idx=2\n", buf);
	ASSERT_GT(cat("cpus/cpu3/stats", buf, sizeof(buf)), 0);
	EXPECT_STREQ("obj=42 sub=3 idx=3\n", buf);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "cpus/cpu0", &st));
	EXPECT_EQ(S_IFDIR | 0755, st.mode);
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "cpus/cpu4", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "cpus/cpu0/nosuch", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "sub/cpu0", &st));	/* no ->dir there */
	EXPECT_EQ(0, under_lock_wrong);
}

TEST(listings_static_first_then_dir_ops_collected_under_the_lock)
{
	struct listing l = { "", 0, 0, 1 };

	init_lock();
	ASSERT_EQ(0, __uks_kfs_list(&root, "", collect, &l));
	EXPECT_STREQ("info 444 ctl 644 wonly 200 log 644 pipe 444 bare 444 sub/755 cpus/555 "
		     "inst/755 ", l.buf);
	memset(&l, 0, sizeof(l));
	ASSERT_EQ(0, __uks_kfs_list(&root, "cpus", collect, &l));
	EXPECT_STREQ("online 444 cpu0/755 cpu1/755 cpu2/755 cpu3/755 ", l.buf);
	/* The callback walked the tree itself, so it ran without the lock. */
	EXPECT_EQ(0, l.stat_ret);
	EXPECT_EQ(0, relocked);
	EXPECT_EQ(0, under_lock_wrong);
	EXPECT_EQ(4, fill_calls);

	/* The callback's first non-zero value ends the listing and is returned. */
	memset(&l, 0, sizeof(l));
	l.stop_after = 2;
	EXPECT_EQ(5, __uks_kfs_list(&root, "cpus", collect, &l));
	EXPECT_STREQ("online 444 cpu0/755 ", l.buf);

	EXPECT_EQ(-ENOTDIR, __uks_kfs_list(&root, "info", collect, &l));
	EXPECT_EQ(-ENOENT, __uks_kfs_list(&root, "nosuch", collect, &l));
	EXPECT_EQ(-ENOENT, __uks_kfs_list(&root, "cpus/cpu9", collect, &l));
	EXPECT_FALSE(locked);
}

TEST(open_checks_the_mode_against_the_flags)
{
	struct kfs_open_file *of = NULL;
	const struct uks_peer peer = { .pid = 1234, .uid = 5, .gid = 6 };
	char buf[8];

	init_lock();
	EXPECT_EQ(-EISDIR, __uks_kfs_open(&root, "", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EISDIR, __uks_kfs_open(&root, "cpus/cpu1", O_RDONLY, NULL, &of));
	EXPECT_EQ(-ENOENT, __uks_kfs_open(&root, "nosuch", O_RDONLY, NULL, &of));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_open(&root, "info/x", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "info", O_WRONLY, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "info", O_RDWR, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "info", O_RDONLY | O_TRUNC, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "wonly", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EACCES, __uks_kfs_open(&root, "wonly", O_RDWR, NULL, &of));
	EXPECT_EQ(-ENXIO, __uks_kfs_open(&root, "bare", O_RDONLY, NULL, &of));
	EXPECT_NULL(of);
	EXPECT_EQ(0, opened);	/* a failed open is not an open file */

	ASSERT_EQ(0, __uks_kfs_open(&root, "wonly", O_WRONLY | O_TRUNC, &peer, &of));
	EXPECT_EQ(-EBADF, __uks_kfs_read(of, buf, sizeof(buf), 0));
	/* The opener is the file's own copy. */
	ASSERT_NONNULL(of->peer);
	EXPECT_NE((const void *)&peer, (const void *)of->peer);
	EXPECT_EQ(1234, of->peer->pid);
	EXPECT_EQ(O_WRONLY | O_TRUNC, of->flags);
	EXPECT_EQ(&the_obj, of->ref.obj);
	EXPECT_EQ(&root, of->root);
	__uks_kfs_close(of);

	ASSERT_EQ(0, __uks_kfs_open(&root, "info", O_RDONLY, NULL, &of));
	EXPECT_NULL(of->peer);
	EXPECT_EQ(-EBADF, __uks_kfs_write(of, "1", 1, 0, NULL, NULL));
	__uks_kfs_close(of);
	EXPECT_EQ(2, opened);
	EXPECT_EQ(2, closed);
	__uks_kfs_close(NULL);
	EXPECT_EQ(0, under_lock_wrong);
}

/* Are @got the bytes at @off of the text of show number @gen? */
static bool ctl_is(const char *got, size_t off, size_t len, int gen)
{
	char want[CTL_LEN + 1];
	int n = snprintf(want, sizeof(want), "%d:", gen);

	for (size_t i = (size_t)n; i < CTL_LEN; i++)
		want[i] = (char)('a' + i % 26);
	want[CTL_LEN] = '\0';
	return !memcmp(want + off, got, len);
}

TEST(show_files_are_served_by_offset_and_made_again_on_a_seek)
{
	struct kfs_open_file *of;
	char buf[CTL_LEN];

	init_lock();
	ASSERT_EQ(0, __uks_kfs_open(&root, "ctl", O_RDONLY, NULL, &of));
	EXPECT_EQ(0, shows);	/* made at the first read, not at open */
	ASSERT_EQ(5, __uks_kfs_read(of, buf, 5, 0));
	EXPECT_TRUE(ctl_is(buf, 0, 5, 1));
	ASSERT_EQ(5, __uks_kfs_read(of, buf, 5, 5));
	EXPECT_TRUE(ctl_is(buf, 5, 5, 1));
	ASSERT_EQ(5, __uks_kfs_read(of, buf, 5, -1));	/* the file's own position */
	EXPECT_TRUE(ctl_is(buf, 10, 5, 1));
	EXPECT_EQ(1, shows);

	/* lseek() back: the text is made again and skipped to the offset. */
	ASSERT_EQ(4, __uks_kfs_read(of, buf, 4, 0));
	EXPECT_EQ(2, shows);
	EXPECT_TRUE(ctl_is(buf, 0, 4, 2));
	ASSERT_EQ(6, __uks_kfs_read(of, buf, 6, 9000));	/* past the 4 KiB skip buffer */
	EXPECT_EQ(3, shows);
	EXPECT_TRUE(ctl_is(buf, 9000, 6, 3));
	ASSERT_EQ(CTL_LEN - 9006, __uks_kfs_read(of, buf, sizeof(buf), 9006));
	EXPECT_EQ(3, shows);
	EXPECT_EQ(0, __uks_kfs_read(of, buf, sizeof(buf), CTL_LEN));
	EXPECT_EQ(0, __uks_kfs_read(of, buf, sizeof(buf), CTL_LEN + 100));
	__uks_kfs_close(of);
	EXPECT_EQ(0, under_lock_wrong);
}

TEST(read_files_are_reopened_on_a_seek_and_the_old_state_released)
{
	struct kfs_open_file *of;
	struct log_state *first;
	char buf[64];

	init_lock();
	ASSERT_EQ(0, __uks_kfs_open(&root, "log", O_RDWR | O_TRUNC | O_APPEND, NULL, &of));
	EXPECT_EQ(1, log_opens);
	first = of->priv;
	EXPECT_EQ(O_RDWR | O_TRUNC | O_APPEND, first->flags);
	ASSERT_EQ(4, __uks_kfs_read(of, buf, 4, 0));
	EXPECT_EQ(0, memcmp("0123", buf, 4));
	ASSERT_EQ(4, __uks_kfs_read(of, buf, 4, 4));
	EXPECT_EQ(0, memcmp("4567", buf, 4));
	EXPECT_EQ(1, log_opens);
	EXPECT_EQ(0, log_releases);

	/* Back to 2: a fresh ->open (without O_TRUNC/O_APPEND), the old state released. */
	ASSERT_EQ(3, __uks_kfs_read(of, buf, 3, 2));
	EXPECT_EQ(0, memcmp("234", buf, 3));
	EXPECT_EQ(2, log_opens);
	EXPECT_EQ(1, log_releases);
	EXPECT_EQ((void *)first, log_released_last);
	ASSERT_NONNULL(of->priv);
	EXPECT_EQ(2, ((struct log_state *)of->priv)->id);
	EXPECT_EQ(O_RDWR, ((struct log_state *)of->priv)->flags);
	EXPECT_EQ(O_RDWR | O_TRUNC | O_APPEND, of->flags);
	/* Past the end: reopened, skipped, nothing left. */
	EXPECT_EQ(0, __uks_kfs_read(of, buf, sizeof(buf), 1000));
	EXPECT_EQ(3, log_opens);
	EXPECT_EQ(2, log_releases);
	__uks_kfs_close(of);
	EXPECT_EQ(3, log_releases);
	EXPECT_EQ(0, under_lock_wrong);
}

TEST(stream_files_ignore_offsets)
{
	struct kfs_open_file *of;
	char buf[16];

	init_lock();
	ASSERT_EQ(0, __uks_kfs_open(&root, "pipe", O_RDONLY, NULL, &of));
	ASSERT_EQ(3, __uks_kfs_read(of, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp("r1\n", buf, 3));
	ASSERT_EQ(3, __uks_kfs_read(of, buf, sizeof(buf), 0));
	EXPECT_EQ(0, memcmp("r2\n", buf, 3));
	ASSERT_EQ(3, __uks_kfs_read(of, buf, sizeof(buf), 100));
	EXPECT_EQ(0, memcmp("r3\n", buf, 3));
	EXPECT_EQ(3, pipe_reads);	/* nothing read to skip */
	__uks_kfs_close(of);
}

/* Writes are not serialised per open file: threads sharing trace_marker write at once. */
TEST(a_write_gets_its_caller_and_does_not_take_the_file_lock)
{
	const struct uks_peer opener = { .pid = 10 }, writer = { .pid = 20 };
	struct kfs_open_file *of;
	int token;

	init_lock();
	ASSERT_EQ(0, __uks_kfs_open(&root, "ctl", O_WRONLY, &opener, &of));
	ASSERT_EQ(6, __uks_kfs_write(of, "hello!", 6, 7, &writer, &token));
	EXPECT_EQ(1, last_write.calls);
	EXPECT_EQ(&writer, last_write.writer);
	EXPECT_EQ((const void *)&token, last_write.write_arg);
	EXPECT_EQ(7, last_write.off);
	EXPECT_STREQ("hello!", last_write.buf);
	EXPECT_FALSE(last_write.file_locked);
	EXPECT_EQ(10, of->peer->pid);

	ASSERT_EQ(2, __uks_kfs_write(of, "ab", 2, -1, NULL, NULL));
	EXPECT_EQ(-1, last_write.off);
	EXPECT_NULL(last_write.writer);
	EXPECT_STREQ("ab", last_write.buf);

	EXPECT_EQ(70, __uks_kfs_ioctl(of, 7, NULL));
	EXPECT_EQ(-EINVAL, __uks_kfs_ioctl(of, 8, NULL));
	EXPECT_EQ(1, __uks_kfs_poll(of));
	__uks_kfs_interrupt(of);	/* no ->interrupt: nothing to wake */
	__uks_kfs_close(of);

	ASSERT_EQ(0, __uks_kfs_open(&root, "info", O_RDONLY, NULL, &of));
	EXPECT_EQ(-ENOTTY, __uks_kfs_ioctl(of, 7, NULL));
	__uks_kfs_close(of);
	EXPECT_EQ(0, under_lock_wrong);
}

TEST(mkdir_and_rmdir_are_the_parent_directory_s)
{
	const struct uks_peer peer = { .pid = 77 };
	char name[KFS_NAME_MAX + 8], path[KFS_NAME_MAX + 32];
	struct kfs_stat st;
	struct listing l = { "", 0, 0, 0 };

	init_lock();
	/* Without ->dir ops: -EPERM, but -EEXIST/-ENOENT/-ENOTDIR come first. */
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, "newdir", &peer));
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, "sub/newdir", &peer));
	EXPECT_EQ(-EPERM, __uks_kfs_rmdir(&root, "sub", &peer));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "info", &peer));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "sub/", &peer));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "", &peer));
	EXPECT_EQ(-ENOENT, __uks_kfs_rmdir(&root, "nosuch", &peer));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_rmdir(&root, "info", &peer));
	EXPECT_EQ(-ENOENT, __uks_kfs_mkdir(&root, "nosuch/x", &peer));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_mkdir(&root, "info/x", &peer));
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, "cpus/cpu7", &peer));	/* ->dir without mkdir */
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "cpus/cpu1", &peer));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "cpus/online", &peer));
	snprintf(path, sizeof(path), "inst/%s", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_mkdir(&root, path, &peer));
	snprintf(path, sizeof(path), "info/%s", long_name(name, KFS_NAME_MAX));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_mkdir(&root, path, &peer));
	/* The lookup's own error, as filename_create() returns it. */
	EXPECT_EQ(-EACCES, __uks_kfs_mkdir(&root, "inst/forbidden", &peer));
	EXPECT_EQ(-EACCES, __uks_kfs_rmdir(&root, "inst/forbidden", &peer));
	EXPECT_EQ(0, last_dirop.calls);

	ASSERT_EQ(0, __uks_kfs_mkdir(&root, "/inst/one/", &peer));
	EXPECT_EQ(1, last_dirop.calls);
	EXPECT_EQ(&root_children[8], last_dirop.dir_node);
	EXPECT_EQ((void *)&the_obj, last_dirop.dir_obj);
	EXPECT_STREQ("one", last_dirop.name);
	EXPECT_EQ(&peer, last_dirop.peer);
	ASSERT_EQ(0, __uks_kfs_stat(&root, "inst/one", &st));
	EXPECT_TRUE(S_ISDIR(st.mode));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(&root, "inst/one", &peer));
	ASSERT_EQ(0, __uks_kfs_mkdir(&root, "inst/two", NULL));
	EXPECT_NULL(last_dirop.peer);
	ASSERT_EQ(0, __uks_kfs_list(&root, "inst", collect, &l));
	EXPECT_STREQ("one/755 two/755 ", l.buf);
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(&root, "inst/one/deeper", &peer));
	EXPECT_EQ(2, last_dirop.calls);

	ASSERT_EQ(0, __uks_kfs_rmdir(&root, "inst/one", &peer));
	EXPECT_EQ(3, last_dirop.calls);
	EXPECT_STREQ("one", last_dirop.name);
	EXPECT_EQ(-ENOENT, __uks_kfs_rmdir(&root, "inst/one", &peer));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(&root, "inst/one", &st));
	EXPECT_EQ(3, last_dirop.calls);
	EXPECT_EQ(0, under_lock_wrong);
	EXPECT_FALSE(locked);
}

TEST(get_and_put_pin_every_open_file)
{
	struct kfs_open_file *of[3];
	char buf[16];

	init_lock();
	ASSERT_EQ(0, __uks_kfs_open(&root, "info", O_RDONLY, NULL, &of[0]));
	ASSERT_EQ(0, __uks_kfs_open(&root, "log", O_RDONLY, NULL, &of[1]));
	ASSERT_EQ(0, __uks_kfs_open(&root, "cpus/cpu0/stats", O_RDONLY, NULL, &of[2]));
	EXPECT_EQ(3, opened);
	EXPECT_EQ(0, closed);
	/* A reopen on a seek is the same open file. */
	ASSERT_EQ(4, __uks_kfs_read(of[1], buf, 4, 0));
	ASSERT_EQ(2, __uks_kfs_read(of[1], buf, 2, 1));
	EXPECT_EQ(3, opened);
	for (int i = 0; i < 3; i++)
		__uks_kfs_close(of[i]);
	EXPECT_EQ(3, closed);
	EXPECT_EQ(0, released_tree);	/* the tree's ->release is its owner's to call */
}

TEST_HARNESS_MAIN
