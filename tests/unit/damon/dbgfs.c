// SPDX-License-Identifier: MIT
/*
 * Golden tests of the DAMON debugfs files (lib/damon/debugfs/dbgfs.c)
 * through the uksfs API: every file's text, accepted input and errno as
 * Linux 5.15's mm/damon/dbgfs.c, and the selftest debugfs_attrs.sh; the
 * schemes file as 6.12's (usage.rst's example, its errnos, garbage).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <uks/fs.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define D "sys/kernel/debug/damon/"

FIXTURE(dbgfs) {
	struct uks_vfs *vfs;
	char buf[4096];
};

FIXTURE_SETUP(dbgfs)
{
	ASSERT_EQ(0, uks_vfs_create(&self->vfs));
	ASSERT_EQ(0, uks_vfs_add_damon(self->vfs, "sys/kernel/debug/damon", NULL));
}

FIXTURE_TEARDOWN(dbgfs)
{
	uks_vfs_destroy(self->vfs);
}

/* echo -n "$s" > file: one write; Return: 0 or -errno */
static int put(struct uks_vfs *vfs, const char *path, const char *s)
{
	struct uks_vfs_file *f;
	ssize_t n;
	int ret = uks_vfs_open(vfs, path, O_WRONLY | O_TRUNC, &f);

	if (ret)
		return ret;
	n = uks_vfs_write(f, s, strlen(s));
	uks_vfs_close(f);
	return n < 0 ? (int)n : 0;
}

static const char *get(struct uks_vfs *vfs, const char *path, char *buf, size_t len)
{
	ssize_t n = uks_vfs_read_all(vfs, path, buf, len - 1);

	if (n < 0)
		snprintf(buf, len, "error %zd", n);
	else
		buf[n] = '\0';
	return buf;
}

struct names {
	char all[512];
};

static int add_name(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	struct names *n = arg;

	strcat(n->all, name);
	strcat(n->all, st->type == UKS_VFS_DIR ? "/ " : " ");
	return 0;
}

TEST_F(dbgfs, tree_and_modes)
{
	struct names n = { "" };
	struct uks_vfs_stat st;

	ASSERT_EQ(0, uks_vfs_list(self->vfs, D, add_name, &n));
	ASSERT_STREQ("attrs target_ids kdamond_pid schemes mk_contexts rm_contexts monitor_on ", n.all);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, D "attrs", &st));
	ASSERT_EQ(UKS_VFS_REG, st.type);
	ASSERT_EQ(0600U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, D, &st));
	ASSERT_EQ(0755U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, D "schemes", &st));	/* 6.12's */
	ASSERT_EQ(0600U, st.mode);
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, D "init_regions", &st));
}

TEST_F(dbgfs, defaults)
{
	ASSERT_STREQ("5000 100000 60000000 10 1000\n", get(self->vfs, D "attrs", self->buf, 4096));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_STREQ("none\n", get(self->vfs, D "kdamond_pid", self->buf, 4096));
	ASSERT_STREQ("off\n", get(self->vfs, D "monitor_on", self->buf, 4096));
}

/* tools/testing/selftests/damon/debugfs_attrs.sh of 5.15 */
TEST_F(dbgfs, selftest_debugfs_attrs)
{
	char pids[64];

	ASSERT_EQ(0, put(self->vfs, D "attrs", "1 2 3 4 5"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "1 2 3 4"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "1 2 3 5 4"));
	ASSERT_STREQ("1 2 3 4 5\n", get(self->vfs, D "attrs", self->buf, 4096));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "1 2 3 2 5"));	/* min < 3 */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "a b c d e"));

	/* the script uses pids 1-4; ours: this process and its parent */
	snprintf(pids, sizeof(pids), "%d %d", getpid(), getppid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pids));
	strcat(pids, "\n");
	ASSERT_STREQ(pids, get(self->vfs, D "target_ids", self->buf, 4096));
	snprintf(pids, sizeof(pids), "%d %d abc %d", getpid(), getppid(), getpid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pids));
	snprintf(pids, sizeof(pids), "%d %d\n", getpid(), getppid());
	ASSERT_STREQ(pids, get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", "abc 2 3"));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", ""));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
}

TEST_F(dbgfs, nonexistent_pid_is_einval)
{
	char pids[64];

	ASSERT_EQ(-EINVAL, put(self->vfs, D "target_ids", "1073741823"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "target_ids", "0"));
	snprintf(pids, sizeof(pids), "%d 1073741823", getpid());
	ASSERT_EQ(-EINVAL, put(self->vfs, D "target_ids", pids));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
}

TEST_F(dbgfs, no_continued_writes)
{
	struct uks_vfs_file *f;

	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "attrs", O_WRONLY, &f));
	ASSERT_EQ(9, uks_vfs_write(f, "1 2 3 4 5", 9));
	ASSERT_EQ(-EINVAL, uks_vfs_write(f, "1 2 3 4 6", 9));
	uks_vfs_close(f);
	/* a failed write does not move the offset */
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "attrs", O_WRONLY, &f));
	ASSERT_EQ(-EINVAL, uks_vfs_write(f, "1", 1));
	ASSERT_EQ(9, uks_vfs_write(f, "6 7 8 9 9", 9));
	uks_vfs_close(f);
	ASSERT_STREQ("6 7 8 9 9\n", get(self->vfs, D "attrs", self->buf, 4096));
}

TEST_F(dbgfs, write_only_and_read_only_files)
{
	ASSERT_STREQ("error -22", get(self->vfs, D "mk_contexts", self->buf, 4096));
	ASSERT_STREQ("error -22", get(self->vfs, D "rm_contexts", self->buf, 4096));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "kdamond_pid", "1"));
}

TEST_F(dbgfs, monitor_on_words)
{
	ASSERT_EQ(-EPERM, put(self->vfs, D "monitor_on", "off\n"));	/* off when off */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "monitor_on", "\n"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "monitor_on", ""));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "monitor_on", "start"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "monitor_on", "onx"));
	/* no targets: 5.15 starts and the monitor ends at once */
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on\n"));
	for (int i = 0; i < 2000; i++) {
		if (!strcmp(get(self->vfs, D "monitor_on", self->buf, 4096), "off\n"))
			break;
		usleep(10000);
	}
	ASSERT_STREQ("off\n", self->buf);
	/* strncmp(word, "on", count): "o" alone means on */
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "o"));
}

static pid_t spawn_sleeper(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	return pid;
}

TEST_F(dbgfs, on_busy_off_and_target_exit)
{
	pid_t child = spawn_sleeper();
	char pid[32], kpid[32];

	ASSERT_GT(child, 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)child);
	ASSERT_EQ(0, put(self->vfs, D "attrs", "5000 100000 1000000 10 1000\n"));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on\n"));
	ASSERT_STREQ("on\n", get(self->vfs, D "monitor_on", self->buf, 4096));
	get(self->vfs, D "kdamond_pid", kpid, sizeof(kpid));
	ASSERT_GT(atoi(kpid), 0);
	snprintf(self->buf, 64, "/proc/%d/task/%d", getpid(), atoi(kpid));
	ASSERT_EQ(0, access(self->buf, F_OK));	/* a thread of ours */
	ASSERT_EQ(-EBUSY, put(self->vfs, D "monitor_on", "on\n"));
	ASSERT_EQ(-EBUSY, put(self->vfs, D "attrs", "1 2 3 4 5\n"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "1 2 3 4\n"));	/* parse first */
	ASSERT_EQ(-EBUSY, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "target_ids", "1073741823"));	/* pid first */
	ASSERT_EQ(-EBUSY, put(self->vfs, D "mk_contexts", "foo"));
	ASSERT_EQ(-EBUSY, put(self->vfs, D "rm_contexts", "foo"));
	ASSERT_STREQ(pid, get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "off\n"));
	ASSERT_STREQ("off\n", get(self->vfs, D "monitor_on", self->buf, 4096));
	ASSERT_STREQ("none\n", get(self->vfs, D "kdamond_pid", self->buf, 4096));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));	/* removed */

	/* again, and let the target exit: monitoring stops by itself */
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	for (int i = 0; i < 2000; i++) {
		if (!strcmp(get(self->vfs, D "monitor_on", self->buf, 4096), "off\n"))
			break;
		usleep(10000);
	}
	ASSERT_STREQ("off\n", self->buf);
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_EQ(-EPERM, put(self->vfs, D "monitor_on", "off"));
}

TEST_F(dbgfs, mk_and_rm_contexts)
{
	struct names n = { "" };
	struct uks_vfs_stat st;
	char pid[32];

	ASSERT_EQ(-EINVAL, put(self->vfs, D "mk_contexts", "\n"));
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "foo\n"));
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "  bar baz"));	/* first word */
	ASSERT_EQ(-EEXIST, put(self->vfs, D "mk_contexts", "foo"));
	ASSERT_EQ(-EEXIST, put(self->vfs, D "mk_contexts", "attrs"));
	ASSERT_EQ(0, uks_vfs_list(self->vfs, D, add_name, &n));
	ASSERT_STREQ("attrs target_ids kdamond_pid schemes mk_contexts rm_contexts monitor_on foo/ bar/ ",
		     n.all);
	n.all[0] = '\0';
	ASSERT_EQ(0, uks_vfs_list(self->vfs, D "foo", add_name, &n));
	ASSERT_STREQ("attrs target_ids kdamond_pid schemes ", n.all);
	ASSERT_STREQ("5000 100000 60000000 10 1000\n", get(self->vfs, D "foo/attrs", self->buf,
							   4096));
	ASSERT_EQ(0, put(self->vfs, D "foo/attrs", "1000 20000 1000000 5 100"));
	ASSERT_STREQ("1000 20000 1000000 5 100\n", get(self->vfs, D "foo/attrs", self->buf, 4096));
	ASSERT_STREQ("5000 100000 60000000 10 1000\n", get(self->vfs, D "attrs", self->buf, 4096));
	snprintf(pid, sizeof(pid), "%d", getpid());
	ASSERT_EQ(0, put(self->vfs, D "foo/target_ids", pid));
	ASSERT_STREQ("none\n", get(self->vfs, D "foo/kdamond_pid", self->buf, 4096));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, D "foo/monitor_on", &st));

	ASSERT_EQ(-ENOENT, put(self->vfs, D "rm_contexts", "nosuch"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "rm_contexts", "attrs"));	/* not a directory */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "rm_contexts", ""));
	ASSERT_EQ(0, put(self->vfs, D "rm_contexts", "foo\n"));
	ASSERT_STREQ("error -2", get(self->vfs, D "foo/attrs", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "rm_contexts", "bar"));
	n.all[0] = '\0';
	ASSERT_EQ(0, uks_vfs_list(self->vfs, D, add_name, &n));
	ASSERT_STREQ("attrs target_ids kdamond_pid schemes mk_contexts rm_contexts monitor_on ", n.all);
	ASSERT_EQ(-EACCES, put(self->vfs, D "mk_contexts", "a/b"));
}

TEST_F(dbgfs, two_contexts_two_monitors)
{
	pid_t child = spawn_sleeper();
	char pid[32], k0[32], k1[32];

	snprintf(pid, sizeof(pid), "%d", (int)child);
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "second"));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "second/target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
	get(self->vfs, D "kdamond_pid", k0, sizeof(k0));
	get(self->vfs, D "second/kdamond_pid", k1, sizeof(k1));
	ASSERT_GT(atoi(k0), 0);
	ASSERT_GT(atoi(k1), 0);
	ASSERT_NE(atoi(k0), atoi(k1));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "off"));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* Wait for monitor_on to read @want: up to 20 s, for a loaded machine. */
static const char *wait_monitor(struct uks_vfs *vfs, const char *want, char *buf, size_t len)
{
	for (int i = 0; i < 2000; i++) {
		if (!strcmp(get(vfs, D "monitor_on", buf, len), want))
			break;
		usleep(10000);
	}
	return buf;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* 2^64 + @n in decimal: the kernel's "%lu" wraps it to @n. */
static void wrapped(char *buf, size_t len, unsigned long n)
{
	unsigned __int128 v = ((unsigned __int128)1 << 64) + n;
	char tmp[48];
	int i = 0;

	do {
		tmp[i++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v);
	for (int j = 0; j < i && (size_t)j + 1 < len; j++)
		buf[j] = tmp[i - 1 - j];
	buf[(size_t)i < len ? (size_t)i : len - 1] = '\0';
}

TEST_F(dbgfs, numbers_parse_as_the_kernels_sscanf)
{
	char line[128], n[48];

	/* no sign: "-1" and "+7" are not numbers */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "-1 100000 1000000 10 1000\n"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "+7 100000 1000000 10 1000\n"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "attrs", "7 100000 1000000 10 -1000\n"));
	/* past ULONG_MAX wraps (simple_strntoull), it does not saturate */
	wrapped(n, sizeof(n), 5);
	snprintf(line, sizeof(line), "%s 100000 1000000 10 1000\n", n);
	ASSERT_EQ(0, put(self->vfs, D "attrs", line));
	ASSERT_STREQ("5 100000 1000000 10 1000\n", get(self->vfs, D "attrs", self->buf, 4096));
	wrapped(n, sizeof(n), 4);
	snprintf(line, sizeof(line), "5000 100000 1000000 18446744073709551619 %s", n);
	ASSERT_EQ(0, put(self->vfs, D "attrs", line));
	ASSERT_STREQ("5000 100000 1000000 3 4\n", get(self->vfs, D "attrs", self->buf, 4096));
	/* target_ids: a sign ends the list, which may then be empty */
	snprintf(line, sizeof(line), "%d", getpid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", line));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", "-1"));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
	snprintf(line, sizeof(line), "+%d", getpid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", line));
	ASSERT_STREQ("\n", get(self->vfs, D "target_ids", self->buf, 4096));
	snprintf(line, sizeof(line), "%d-%d", getpid(), getppid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", line));
	snprintf(line, sizeof(line), "%d\n", getpid());
	ASSERT_STREQ(line, get(self->vfs, D "target_ids", self->buf, 4096));
	wrapped(n, sizeof(n), (unsigned long)getpid());
	ASSERT_EQ(0, put(self->vfs, D "target_ids", n));
	ASSERT_STREQ(line, get(self->vfs, D "target_ids", self->buf, 4096));
}

TEST_F(dbgfs, no_write_after_a_read_of_the_same_open_file)
{
	struct uks_vfs_file *f;
	char b[64];

	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "attrs", O_RDWR, &f));
	ASSERT_EQ(29, uks_vfs_read(f, b, sizeof(b), 0));
	ASSERT_EQ(-EINVAL, uks_vfs_write(f, "1 2 3 4 5", 9));	/* *ppos is 29 */
	uks_vfs_close(f);
	ASSERT_STREQ("5000 100000 60000000 10 1000\n", get(self->vfs, D "attrs", self->buf, 4096));
}

/* user_input_str(): a write that does not land at 0 is no command */
TEST_F(dbgfs, no_write_past_offset_0)
{
	static const char *const files[] = { "monitor_on", "mk_contexts", "rm_contexts" };
	static const char *const words[] = { "off", "c1", "c1" };
	struct uks_vfs_file *f;

	for (int i = 0; i < 3; i++) {
		char path[128];

		snprintf(path, sizeof(path), D "%s", files[i]);
		ASSERT_EQ(0, uks_vfs_open(self->vfs, path, O_WRONLY, &f));
		EXPECT_EQ(-EINVAL, uks_vfs_pwrite(f, words[i], strlen(words[i]), 1));
		uks_vfs_close(f);
	}
	/* no context was made, and at 0 the same commands work as ever */
	ASSERT_EQ(-ENOENT, put(self->vfs, D "rm_contexts", "c1"));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "mk_contexts", O_WRONLY, &f));
	EXPECT_EQ(2, uks_vfs_pwrite(f, "c1", 2, 0));
	uks_vfs_close(f);
	ASSERT_EQ(0, put(self->vfs, D "rm_contexts", "c1"));
}

TEST_F(dbgfs, kdamond_pid_formats_into_the_reads_size)
{
	struct uks_vfs_file *f;
	char b[8] = "";

	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "kdamond_pid", O_RDONLY, &f));
	ASSERT_EQ(2, uks_vfs_read(f, b, 3, 0));		/* scnprintf(kbuf, 3) */
	ASSERT_EQ(0, memcmp(b, "no", 2));
	ASSERT_EQ(0, uks_vfs_read(f, b, 3, 2));		/* that text ended at 2 */
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "kdamond_pid", O_RDONLY, &f));
	ASSERT_EQ(0, uks_vfs_read(f, b, 1, 0));		/* a 1-byte read: nothing */
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "kdamond_pid", O_RDONLY, &f));
	ASSERT_EQ(5, uks_vfs_read(f, b, 6, 0));
	ASSERT_EQ(0, memcmp(b, "none\n", 5));
	ASSERT_EQ(0, uks_vfs_read(f, b, 1, 5));		/* shorter text than pos: EOF */
	uks_vfs_close(f);
}

TEST_F(dbgfs, a_removed_contexts_files_fail_with_eio)
{
	struct uks_vfs_file *w, *r;
	char b[64];

	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "c3"));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "c3/attrs", O_WRONLY, &w));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "c3/target_ids", O_RDONLY, &r));
	ASSERT_EQ(0, put(self->vfs, D "rm_contexts", "c3"));
	ASSERT_EQ(-EIO, uks_vfs_read(r, b, sizeof(b), 0));
	/* a new context of the same name is another directory */
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "c3"));
	ASSERT_EQ(-EIO, uks_vfs_write(w, "11 12 13 14 15", 14));
	ASSERT_EQ(-EIO, uks_vfs_read(r, b, sizeof(b), 0));
	uks_vfs_close(w);
	uks_vfs_close(r);
	ASSERT_STREQ("5000 100000 60000000 10 1000\n",
		     get(self->vfs, D "c3/attrs", self->buf, 4096));
}

TEST_F(dbgfs, context_names_up_to_name_max)
{
	char name[300];

	memset(name, 'b', 255);
	name[255] = '\0';
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", name));
	snprintf(self->buf, 4096, D "%s/attrs", name);
	ASSERT_STREQ("5000 100000 60000000 10 1000\n",
		     get(self->vfs, self->buf, self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "rm_contexts", name));
	memset(name, 'b', 256);
	name[256] = '\0';
	ASSERT_EQ(-ENAMETOOLONG, put(self->vfs, D "mk_contexts", name));
}

TEST_F(dbgfs, sessions_leave_no_files_open)
{
	pid_t child = spawn_sleeper();
	char pid[32];
	int before;

	ASSERT_GT(child, 0);
	snprintf(pid, sizeof(pid), "%d\n", (int)child);
	before = count_fds();
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
		ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
		ASSERT_STREQ("on\n", get(self->vfs, D "monitor_on", self->buf, 4096));
		ASSERT_EQ(0, put(self->vfs, D "monitor_on", "off"));
	}
	ASSERT_EQ(before, count_fds());
	/* and a session that ends because its target exits */
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	ASSERT_STREQ("off\n", wait_monitor(self->vfs, "off\n", self->buf, 4096));
	ASSERT_EQ(before, count_fds());
}

TEST_F(dbgfs, a_zombie_target_is_monitored_until_reaped)
{
	pid_t child = fork();
	char pid[32];

	ASSERT_GE(child, 0);
	if (child == 0)
		_exit(0);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	ASSERT_EQ(0, waitid(P_PID, (id_t)child, NULL, WEXITED | WNOWAIT));	/* a zombie now */
	ASSERT_EQ(0, put(self->vfs, D "attrs", "5000 20000 1000000 10 1000\n"));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", pid));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
	usleep(200000);	/* ten aggregations: "the pid still has a task" */
	ASSERT_STREQ("on\n", get(self->vfs, D "monitor_on", self->buf, 4096));
	waitpid(child, NULL, 0);
	ASSERT_STREQ("off\n", wait_monitor(self->vfs, "off\n", self->buf, 4096));
}

static void *park(void *arg)
{
	int *fds = arg;
	char c;

	*(volatile pid_t *)&fds[2] = (pid_t)syscall(SYS_gettid);
	return read(fds[0], &c, 1) < 0 ? NULL : arg;
}

TEST_F(dbgfs, a_thread_id_is_a_target_while_the_thread_lives)
{
	int fds[3] = { -1, -1, 0 };
	pthread_t th;
	char tid[32];

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pthread_create(&th, NULL, park, fds));
	while (!*(volatile pid_t *)&fds[2])
		usleep(1000);
	snprintf(tid, sizeof(tid), "%d\n", fds[2]);
	ASSERT_EQ(0, put(self->vfs, D "attrs", "5000 20000 1000000 10 1000\n"));
	ASSERT_EQ(0, put(self->vfs, D "target_ids", tid));
	ASSERT_STREQ(tid, get(self->vfs, D "target_ids", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "monitor_on", "on"));
	usleep(200000);
	ASSERT_STREQ("on\n", get(self->vfs, D "monitor_on", self->buf, 4096));
	ASSERT_EQ(1, write(fds[1], "x", 1));
	pthread_join(th, NULL);
	/* without PIDFD_THREAD (before 6.9) the target is the process: stop it */
	if (strcmp(wait_monitor(self->vfs, "off\n", self->buf, 4096), "off\n"))
		ASSERT_EQ(0, put(self->vfs, D "monitor_on", "off"));
	close(fds[0]);
	close(fds[1]);
}

/* usage.rst's example scheme, and its line when read back with zero stats */
#define EXAMPLE	"4096 8192  0 5    10 20    2 10 1073741824 1000 0 0 100 1 5000000 600 500 300"
#define EXAMPLE_READ "4096 8192 0 5 10 20 2 10 1073741824 1000 0 0 100 1 5000000 600 500 300 0 0 0 0 0\n"

TEST_F(dbgfs, schemes_take_and_show_the_612_format)
{
	char two[512];

	ASSERT_STREQ("", get(self->vfs, D "schemes", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "schemes", EXAMPLE "\n"));
	ASSERT_STREQ(EXAMPLE_READ, get(self->vfs, D "schemes", self->buf, 4096));
	/* two lines, actions by debugfs number: 5 is stat, 0 willneed */
	snprintf(two, sizeof(two), "%s\n%s\n", "1 2 3 4 5 6 5 7 8 9 10 11 12 0 13 16 15 14",
		 "0 18446744073709551615 0 4294967296 0 0 0 0 0 0 0 0 0 0 0 0 0 0");
	ASSERT_EQ(0, put(self->vfs, D "schemes", two));
	/* "%u" wraps: 4294967296 reads 0 */
	ASSERT_STREQ("1 2 3 4 5 6 5 7 8 9 10 11 12 0 13 16 15 14 0 0 0 0 0\n"
		     "0 18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		     get(self->vfs, D "schemes", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "schemes", EXAMPLE));
	ASSERT_EQ(0, put(self->vfs, D "mk_contexts", "c"));
	ASSERT_STREQ("", get(self->vfs, D "c/schemes", self->buf, 4096));	/* its own */
	ASSERT_EQ(0, put(self->vfs, D "c/schemes", EXAMPLE));
	ASSERT_STREQ(EXAMPLE_READ, get(self->vfs, D "c/schemes", self->buf, 4096));
	/* an empty write, or one with no scheme in it, removes them */
	ASSERT_EQ(0, put(self->vfs, D "c/schemes", " \n"));
	ASSERT_STREQ("", get(self->vfs, D "c/schemes", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, D "c/schemes", EXAMPLE));
	ASSERT_EQ(0, put(self->vfs, D "c/schemes", "1 2 3"));
	ASSERT_STREQ("", get(self->vfs, D "c/schemes", self->buf, 4096));
}

TEST_F(dbgfs, schemes_errnos)
{
	ASSERT_EQ(0, put(self->vfs, D "schemes", EXAMPLE));
	/* action 6 and up are not in debugfs's numbering */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes",
			       "0 1 0 1 0 1 6 0 0 0 0 0 0 0 0 0 0 0"));
	/* minimum above maximum: size, accesses, age */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes", "2 1 0 1 0 1 5 0 0 0 0 0 0 0 0 0 0 0"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes", "0 1 2 1 0 1 5 0 0 0 0 0 0 0 0 0 0 0"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes", "0 1 0 1 2 1 5 0 0 0 0 0 0 0 0 0 0 0"));
	/* watermarks: high >= mid >= low */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes", "0 1 0 1 0 1 5 0 0 0 0 0 0 1 0 5 6 1"));
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes", "0 1 0 1 0 1 5 0 0 0 0 0 0 1 0 5 4 6"));
	/* a bad second scheme fails the write whole: the example stays */
	ASSERT_EQ(-EINVAL, put(self->vfs, D "schemes",
			       EXAMPLE "\n0 1 0 1 0 1 9 0 0 0 0 0 0 0 0 0 0 0"));
	ASSERT_STREQ(EXAMPLE_READ, get(self->vfs, D "schemes", self->buf, 4096));
	/* an unknown watermark metric is taken (it never activates the scheme) */
	ASSERT_EQ(0, put(self->vfs, D "schemes", "0 1 0 1 0 1 5 0 0 0 0 0 0 9 0 0 0 0"));
	ASSERT_STREQ("0 1 0 1 0 1 5 0 0 0 0 0 0 9 0 0 0 0 0 0 0 0 0\n",
		     get(self->vfs, D "schemes", self->buf, 4096));
}

TEST_F(dbgfs, schemes_read_formats_into_the_reads_size)
{
	struct uks_vfs_file *f;
	char b[512];

	ASSERT_EQ(0, put(self->vfs, D "schemes", EXAMPLE));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "schemes", O_RDONLY, &f));
	ASSERT_EQ(9, uks_vfs_read(f, b, 10, 0));	/* scnprintf(kbuf, 10) */
	ASSERT_EQ(0, memcmp(b, "4096 8192", 9));
	uks_vfs_close(f);
	/* two schemes, the first line fills a short read: the second finds one byte, -ENOMEM */
	ASSERT_EQ(0, put(self->vfs, D "schemes", EXAMPLE "\n" EXAMPLE));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, D "schemes", O_RDONLY, &f));
	ASSERT_EQ(-ENOMEM, uks_vfs_read(f, b, 10, 0));
	ASSERT_EQ((ssize_t)(2 * strlen(EXAMPLE_READ)), uks_vfs_read(f, b, sizeof(b), 0));
	uks_vfs_close(f);
}

/* Garbage: any bytes give a scheme list or -EINVAL, and the file reads back well-formed. */
TEST_F(dbgfs, schemes_garbage)
{
	static const char *const inputs[] = {
		"", "\n", "x", "-1 2 3 4 5 6 5 7 8 9 10 11 12 0 13 16 15 14",
		"1 2 3 4 5 6 5 7 8 9 10 11 12 0 13 16 15", "1,2,3,4,5,6,5,7,8,9,10,11,12,0,13,16,15,14",
		"99999999999999999999999999 0 0 0 0 0 5 0 0 0 0 0 0 0 0 0 0 0",
		"0 0 0 0 0 0 5 0 0 0 0 0 0 0 0 0 0 0 garbage 1 2",
		"\xff\xfe\x01 0 0 0", "0 0 0 0 0 0 5 0 0 0 0 0 0 0 0 0 0 0\0 1 2 3",
	};
	unsigned int seed = 12345;
	char in[600];

	for (size_t i = 0; i < ARRAY_SIZE(inputs); i++) {
		int ret = put(self->vfs, D "schemes", inputs[i]);

		ASSERT_TRUE(ret == 0 || ret == -EINVAL);
		get(self->vfs, D "schemes", self->buf, 4096);
		ASSERT_EQ(strspn(self->buf, "0123456789 -\n"), strlen(self->buf));
	}
	/* what follows the last whole scheme is ignored */
	ASSERT_EQ(0, put(self->vfs, D "schemes",
			 "0 0 0 0 0 0 5 0 0 0 0 0 0 0 0 0 0 0 garbage 1 2"));
	ASSERT_STREQ("0 0 0 0 0 0 5 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
		     get(self->vfs, D "schemes", self->buf, 4096));
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)(rand_r(&seed) % (sizeof(in) - 1));
		int ret;

		for (size_t k = 0; k < len; k++) {
			unsigned int r = (unsigned int)rand_r(&seed);

			in[k] = r % 4 ? "0123456789 \n"[r % 12] : (char)(r >> 8);
		}
		in[len] = '\0';
		ret = put(self->vfs, D "schemes", in);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL);
		get(self->vfs, D "schemes", self->buf, 4096);
		ASSERT_EQ(strspn(self->buf, "0123456789 -\n"), strlen(self->buf));
	}
}

TEST_HARNESS_MAIN
