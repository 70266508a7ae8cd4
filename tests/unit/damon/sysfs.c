// SPDX-License-Identifier: MIT
/*
 * Golden tests of the DAMON sysfs files (lib/damon/sysfs/) through the
 * uksfs API: the tree, every file's default, what it takes back and its
 * errno as Linux 6.12's mm/damon/sysfs.c (6.15 for the intervals goal and
 * update_tuned_intervals); "on", "commit" and "off" on a real child; and
 * the core's fixed initial regions (__uks_damon_set_regions).
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include <uks/fs.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define A "sys/kernel/mm/damon/admin/"
#define K A "kdamonds/0/"
#define C K "contexts/0/"
#define I C "monitoring_attrs/intervals/"
#define G I "intervals_goal/"
#define T C "targets/0/"
#define R T "regions/0/"

FIXTURE(sysfs) {
	struct uks_vfs *vfs;
	char buf[4096];
};

FIXTURE_SETUP(sysfs)
{
	ASSERT_EQ(0, uks_vfs_create(&self->vfs));
	ASSERT_EQ(0, uks_vfs_add_damon_sysfs(self->vfs, "sys/kernel/mm/damon/admin", NULL));
}

FIXTURE_TEARDOWN(sysfs)
{
	uks_vfs_destroy(self->vfs);
}

/* echo -n "$s" > file: one write; Return: 0 or -errno */
static int put(struct uks_vfs *vfs, const char *path, const char *s)
{
	struct uks_vfs_file *f;
	ssize_t n;
	int ret = uks_vfs_open(vfs, path, O_WRONLY, &f);

	if (ret)
		return ret;
	n = uks_vfs_write(f, s, strlen(s));
	uks_vfs_close(f);
	if (n >= 0 && (size_t)n != strlen(s))
		return -EIO;
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

static const char *names(struct uks_vfs *vfs, const char *path, struct names *n)
{
	n->all[0] = '\0';
	if (uks_vfs_list(vfs, path, add_name, n))
		strcpy(n->all, "error");
	return n->all;
}

/* nr_kdamonds 1, nr_contexts 1, nr_targets 1, nr_regions 1 */
static int full_tree(struct uks_vfs *vfs)
{
	int ret = put(vfs, A "kdamonds/nr_kdamonds", "1");

	if (!ret)
		ret = put(vfs, K "contexts/nr_contexts", "1\n");
	if (!ret)
		ret = put(vfs, C "targets/nr_targets", "1");
	if (!ret)
		ret = put(vfs, T "regions/nr_regions", "1");
	return ret;
}

TEST_F(sysfs, tree_and_modes)
{
	struct uks_vfs_stat st;
	struct names n;

	ASSERT_STREQ("kdamonds/ ", names(self->vfs, A, &n));
	ASSERT_STREQ("nr_kdamonds ", names(self->vfs, A "kdamonds", &n));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, A "kdamonds/0", &st));
	ASSERT_EQ(0, full_tree(self->vfs));
	ASSERT_STREQ("nr_kdamonds 0/ ", names(self->vfs, A "kdamonds", &n));
	ASSERT_STREQ("state pid contexts/ ", names(self->vfs, K, &n));
	ASSERT_STREQ("nr_contexts 0/ ", names(self->vfs, K "contexts", &n));
	ASSERT_STREQ("avail_operations operations monitoring_attrs/ targets/ schemes/ ",
		     names(self->vfs, C, &n));
	ASSERT_STREQ("intervals/ nr_regions/ ", names(self->vfs, C "monitoring_attrs", &n));
	ASSERT_STREQ("sample_us aggr_us update_us intervals_goal/ ", names(self->vfs, I, &n));
	ASSERT_STREQ("access_bp aggrs min_sample_us max_sample_us ", names(self->vfs, G, &n));
	ASSERT_STREQ("min max ", names(self->vfs, C "monitoring_attrs/nr_regions", &n));
	ASSERT_STREQ("nr_targets 0/ ", names(self->vfs, C "targets", &n));
	ASSERT_STREQ("pid_target regions/ ", names(self->vfs, T, &n));
	ASSERT_STREQ("nr_regions 0/ ", names(self->vfs, T "regions", &n));
	ASSERT_STREQ("start end ", names(self->vfs, R, &n));
	ASSERT_STREQ("nr_schemes ", names(self->vfs, C "schemes", &n));

	ASSERT_EQ(0, uks_vfs_stat(self->vfs, K "state", &st));
	ASSERT_EQ(0600U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, K "pid", &st));
	ASSERT_EQ(0400U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, C "avail_operations", &st));
	ASSERT_EQ(0400U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, R "end", &st));
	ASSERT_EQ(0600U, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, T "regions", &st));
	ASSERT_EQ(UKS_VFS_DIR, st.type);
	ASSERT_EQ(0755U, st.mode);
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, A "kdamonds/1", &st));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, A "kdamonds/00", &st));
	ASSERT_EQ(-EACCES, put(self->vfs, K "pid", "1"));
	ASSERT_EQ(-EACCES, put(self->vfs, C "avail_operations", "vaddr"));

	/* N makes 0..N-1; 0 removes them all */
	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "3"));
	ASSERT_STREQ("nr_kdamonds 0/ 1/ 2/ ", names(self->vfs, A "kdamonds", &n));
	ASSERT_STREQ("nr_contexts ", names(self->vfs, K "contexts", &n));	/* afresh */
	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "0"));
	ASSERT_STREQ("nr_kdamonds ", names(self->vfs, A "kdamonds", &n));
}

/* vaddr and fvaddr where the default primitive works here, else none */
static const char *avail_ops(void)
{
	return uks_damon_primitive_available(uks_damon_default_primitive(), NULL, 0)
		       ? "" : "vaddr\nfvaddr\n";
}

TEST_F(sysfs, defaults)
{
	ASSERT_STREQ("0\n", get(self->vfs, A "kdamonds/nr_kdamonds", self->buf, 4096));
	ASSERT_EQ(0, full_tree(self->vfs));
	ASSERT_STREQ("1\n", get(self->vfs, A "kdamonds/nr_kdamonds", self->buf, 4096));
	ASSERT_STREQ("off\n", get(self->vfs, K "state", self->buf, 4096));
	ASSERT_STREQ("-1\n", get(self->vfs, K "pid", self->buf, 4096));
	ASSERT_STREQ("1\n", get(self->vfs, K "contexts/nr_contexts", self->buf, 4096));
	ASSERT_STREQ(avail_ops(), get(self->vfs, C "avail_operations", self->buf, 4096));
	ASSERT_STREQ("vaddr\n", get(self->vfs, C "operations", self->buf, 4096));
	ASSERT_STREQ("5000\n", get(self->vfs, I "sample_us", self->buf, 4096));
	ASSERT_STREQ("100000\n", get(self->vfs, I "aggr_us", self->buf, 4096));
	ASSERT_STREQ("60000000\n", get(self->vfs, I "update_us", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, G "access_bp", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, G "aggrs", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, G "min_sample_us", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, G "max_sample_us", self->buf, 4096));
	ASSERT_STREQ("10\n", get(self->vfs, C "monitoring_attrs/nr_regions/min", self->buf, 4096));
	ASSERT_STREQ("1000\n", get(self->vfs, C "monitoring_attrs/nr_regions/max", self->buf, 4096));
	ASSERT_STREQ("1\n", get(self->vfs, C "targets/nr_targets", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, T "pid_target", self->buf, 4096));
	ASSERT_STREQ("1\n", get(self->vfs, T "regions/nr_regions", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, R "start", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, R "end", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, C "schemes/nr_schemes", self->buf, 4096));
}

/* Each value file: what it takes (kstrto* base 0, one newline), read back. */
static const char *const ul_files[] = {
	I "sample_us", I "aggr_us", I "update_us", G "access_bp", G "aggrs",
	G "min_sample_us", G "max_sample_us", C "monitoring_attrs/nr_regions/min",
	C "monitoring_attrs/nr_regions/max", R "start", R "end",
};

TEST_F(sysfs, values_read_back)
{
	ASSERT_EQ(0, full_tree(self->vfs));
	for (size_t i = 0; i < sizeof(ul_files) / sizeof(ul_files[0]); i++) {
		const char *f = ul_files[i];

		ASSERT_EQ(0, put(self->vfs, f, "42\n"));
		ASSERT_STREQ("42\n", get(self->vfs, f, self->buf, 4096));
		ASSERT_EQ(0, put(self->vfs, f, "0x10"));
		ASSERT_STREQ("16\n", get(self->vfs, f, self->buf, 4096));
		ASSERT_EQ(0, put(self->vfs, f, "010"));
		ASSERT_STREQ("8\n", get(self->vfs, f, self->buf, 4096));
		ASSERT_EQ(0, put(self->vfs, f, "+7"));
		ASSERT_STREQ("7\n", get(self->vfs, f, self->buf, 4096));
		ASSERT_EQ(0, put(self->vfs, f, "18446744073709551615"));
		ASSERT_STREQ("18446744073709551615\n", get(self->vfs, f, self->buf, 4096));
	}
	ASSERT_EQ(0, put(self->vfs, T "pid_target", "-5\n"));	/* any int */
	ASSERT_STREQ("-5\n", get(self->vfs, T "pid_target", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, T "pid_target", "0x7fffffff"));
	ASSERT_STREQ("2147483647\n", get(self->vfs, T "pid_target", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, C "operations", "paddr\n"));	/* checked at "on" */
	ASSERT_STREQ("paddr\n", get(self->vfs, C "operations", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, C "operations", "fvaddr"));
	ASSERT_STREQ("fvaddr\n", get(self->vfs, C "operations", self->buf, 4096));
	ASSERT_EQ(0, put(self->vfs, C "operations", "paddr"));
	ASSERT_EQ(0, put(self->vfs, T "pid_target", "1"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "on"));		/* not available */
	ASSERT_EQ(0, put(self->vfs, C "operations", "vaddr"));
	ASSERT_EQ(0, put(self->vfs, C "schemes/nr_schemes", "0"));
	ASSERT_EQ(0, put(self->vfs, T "regions/nr_regions", "0x3"));
	ASSERT_STREQ("3\n", get(self->vfs, T "regions/nr_regions", self->buf, 4096));
	ASSERT_STREQ("0\n", get(self->vfs, R "start", self->buf, 4096));	/* afresh */
}

struct bad {
	const char *in;
	int err;	/* for a ul file passing kstrtoul's error on */
};

/* kstrtoul's answers */
static const struct bad bad_ul[] = {
	{ "", 0 }, { "abc", -EINVAL }, { "-1", -EINVAL }, { " 1", -EINVAL }, { "1 ", -EINVAL },
	{ "1\n\n", -EINVAL }, { "1x", -EINVAL }, { "0x", -EINVAL }, { "08", -EINVAL },
	{ "++1", -EINVAL }, { "\n", -EINVAL }, { "18446744073709551616", -ERANGE },
	{ "0x10000000000000000", -ERANGE },
};

TEST_F(sysfs, garbage_is_refused_and_leaves_the_value)
{
	ASSERT_EQ(0, full_tree(self->vfs));
	for (size_t i = 0; i < sizeof(ul_files) / sizeof(ul_files[0]); i++) {
		const char *f = ul_files[i];
		bool minmax = strstr(f, "nr_regions/") != NULL;	/* -EINVAL whatever kstrtoul says */

		ASSERT_EQ(0, put(self->vfs, f, "5"));
		for (size_t j = 0; j < sizeof(bad_ul) / sizeof(bad_ul[0]); j++) {
			int want = bad_ul[j].err;

			if (minmax && want)
				want = -EINVAL;
			EXPECT_EQ(want, put(self->vfs, f, bad_ul[j].in));
			ASSERT_STREQ("5\n", get(self->vfs, f, self->buf, 4096));
		}
	}
	/* nr_* files: kstrtoint's error; negative -EINVAL */
	static const char *const nr_files[] = {
		A "kdamonds/nr_kdamonds", K "contexts/nr_contexts", C "targets/nr_targets",
		T "regions/nr_regions", C "schemes/nr_schemes",
	};
	for (size_t i = 0; i < sizeof(nr_files) / sizeof(nr_files[0]); i++) {
		EXPECT_EQ(-EINVAL, put(self->vfs, nr_files[i], "abc"));
		EXPECT_EQ(-EINVAL, put(self->vfs, nr_files[i], "-1"));
		EXPECT_EQ(-EINVAL, put(self->vfs, nr_files[i], "-+1"));
		EXPECT_EQ(-ERANGE, put(self->vfs, nr_files[i], "2147483648"));
		EXPECT_EQ(-ERANGE, put(self->vfs, nr_files[i], "-2147483649"));
		EXPECT_EQ(-EINVAL, put(self->vfs, nr_files[i], "1 2"));
	}
	ASSERT_EQ(-EINVAL, put(self->vfs, K "contexts/nr_contexts", "2"));	/* one per kdamond */
	ASSERT_EQ(-EINVAL, put(self->vfs, C "schemes/nr_schemes", "1"));	/* no DAMOS yet */
	ASSERT_EQ(-EINVAL, put(self->vfs, T "pid_target", "abc"));
	ASSERT_EQ(-EINVAL, put(self->vfs, T "pid_target", "2147483648"));	/* not -ERANGE */
	ASSERT_EQ(-EINVAL, put(self->vfs, C "operations", "vaddrx"));
	ASSERT_EQ(-EINVAL, put(self->vfs, C "operations", " vaddr"));
	ASSERT_EQ(-EINVAL, put(self->vfs, C "operations", "vaddr\n\n"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "onn"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "ON"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "update_tuned_interval"));
	/* the tree is as it was */
	ASSERT_STREQ("1\n", get(self->vfs, A "kdamonds/nr_kdamonds", self->buf, 4096));
	ASSERT_STREQ("1\n", get(self->vfs, T "regions/nr_regions", self->buf, 4096));
	ASSERT_STREQ("vaddr\n", get(self->vfs, C "operations", self->buf, 4096));
	ASSERT_STREQ("off\n", get(self->vfs, K "state", self->buf, 4096));
}

TEST_F(sysfs, commands_of_a_stopped_kdamond)
{
	static const char *const need_running[] = {
		"commit", "update_tuned_intervals", "commit_schemes_quota_goals",
		"update_schemes_stats", "update_schemes_tried_bytes",
		"update_schemes_tried_regions", "clear_schemes_tried_regions",
		"update_schemes_effective_quotas",
	};

	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "1"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "on"));	/* no context */
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "off"));	/* never ran */
	ASSERT_EQ(0, put(self->vfs, K "contexts/nr_contexts", "1"));
	for (size_t i = 0; i < sizeof(need_running) / sizeof(need_running[0]); i++)
		EXPECT_EQ(-EINVAL, put(self->vfs, K "state", need_running[i]));
	/* no targets: it starts and ends at once, as the kernel's */
	ASSERT_EQ(0, put(self->vfs, K "state", "on\n"));
	for (int i = 0; i < 500 && strcmp(get(self->vfs, K "state", self->buf, 64), "off\n"); i++)
		usleep(10000);
	ASSERT_STREQ("off\n", self->buf);
	ASSERT_EQ(-EPERM, put(self->vfs, K "state", "off"));	/* damon_stop() */
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

static void reap(pid_t child)
{
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* "on" checks what the files say together; nothing starts on an error */
TEST_F(sysfs, on_checks_the_inputs)
{
	pid_t child = spawn_sleeper();
	char pid[32];
	struct {
		const char *file, *bad, *good;
	} cases[] = {
		{ C "monitoring_attrs/nr_regions/min", "2", "10" },
		{ C "monitoring_attrs/nr_regions/min", "1001", "10" },
		{ I "sample_us", "100001", "5000" },
		{ G "aggrs", "3", "0" },		/* goal on: 0 <= 5000 <= 0 fails */
		{ T "pid_target", "0", pid },
		{ T "pid_target", "-1", pid },
		{ T "pid_target", "1073741823", pid },
		{ R "start", "8192", "0" },		/* start > end (4096) */
		{ C "operations", "paddr", "vaddr" },
	};

	ASSERT_GT(child, 0);
	snprintf(pid, sizeof(pid), "%d", (int)child);
	ASSERT_EQ(0, full_tree(self->vfs));
	ASSERT_EQ(0, put(self->vfs, T "pid_target", pid));
	ASSERT_EQ(0, put(self->vfs, R "end", "4096"));
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, put(self->vfs, cases[i].file, cases[i].bad));
		EXPECT_EQ(-EINVAL, put(self->vfs, K "state", "on"));
		ASSERT_STREQ("off\n", get(self->vfs, K "state", self->buf, 64));
		ASSERT_STREQ("-1\n", get(self->vfs, K "pid", self->buf, 64));
		ASSERT_EQ(0, put(self->vfs, cases[i].file, cases[i].good));
	}
	/* a goal whose bounds hold the sampling interval; max < min does not */
	ASSERT_EQ(0, put(self->vfs, G "aggrs", "3"));
	ASSERT_EQ(0, put(self->vfs, G "min_sample_us", "6000"));
	ASSERT_EQ(0, put(self->vfs, G "max_sample_us", "4000"));
	EXPECT_EQ(-EINVAL, put(self->vfs, K "state", "on"));
	ASSERT_EQ(0, put(self->vfs, G "min_sample_us", "1000"));
	ASSERT_EQ(0, put(self->vfs, G "max_sample_us", "10000"));
	/* overlapping regions */
	ASSERT_EQ(0, put(self->vfs, T "regions/nr_regions", "2"));
	ASSERT_EQ(0, put(self->vfs, R "end", "8192"));
	ASSERT_EQ(0, put(self->vfs, T "regions/1/start", "4096"));
	ASSERT_EQ(0, put(self->vfs, T "regions/1/end", "12288"));
	EXPECT_EQ(-EINVAL, put(self->vfs, K "state", "on"));
	ASSERT_EQ(0, put(self->vfs, R "end", "4096"));		/* touching is fine */
	ASSERT_EQ(0, put(self->vfs, K "state", "on"));
	ASSERT_STREQ("on\n", get(self->vfs, K "state", self->buf, 64));
	ASSERT_EQ(0, put(self->vfs, K "state", "off"));
	reap(child);
}

TEST_F(sysfs, on_commit_update_tuned_intervals_off)
{
	pid_t child = spawn_sleeper(), other = spawn_sleeper();
	char pid[32], path[64];
	int kpid;

	ASSERT_GT(child, 0);
	ASSERT_GT(other, 0);
	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "1"));
	ASSERT_EQ(0, put(self->vfs, K "contexts/nr_contexts", "1"));
	ASSERT_EQ(0, put(self->vfs, C "operations", "vaddr"));
	ASSERT_EQ(0, put(self->vfs, C "targets/nr_targets", "1"));
	snprintf(pid, sizeof(pid), "%d\n", (int)child);
	ASSERT_EQ(0, put(self->vfs, T "pid_target", pid));
	ASSERT_EQ(0, put(self->vfs, I "update_us", "1000000"));
	ASSERT_EQ(0, put(self->vfs, K "state", "on"));
	ASSERT_STREQ("on\n", get(self->vfs, K "state", self->buf, 64));
	kpid = atoi(get(self->vfs, K "pid", self->buf, 64));
	ASSERT_GT(kpid, 0);
	snprintf(path, sizeof(path), "/proc/%d/task/%d", getpid(), kpid);
	ASSERT_EQ(0, access(path, F_OK));	/* a thread of ours */

	ASSERT_EQ(-EBUSY, put(self->vfs, K "state", "on"));
	ASSERT_EQ(-EBUSY, put(self->vfs, A "kdamonds/nr_kdamonds", "1"));
	ASSERT_EQ(0, put(self->vfs, K "state", "update_schemes_stats"));
	ASSERT_EQ(0, put(self->vfs, K "state", "clear_schemes_tried_regions\n"));

	/* commit new intervals; the files' later values are not the monitor's */
	ASSERT_EQ(0, put(self->vfs, I "sample_us", "7000"));
	ASSERT_EQ(0, put(self->vfs, I "aggr_us", "140000"));
	ASSERT_EQ(0, put(self->vfs, K "state", "commit"));
	ASSERT_EQ(0, put(self->vfs, I "sample_us", "1"));
	ASSERT_EQ(0, put(self->vfs, I "aggr_us", "2"));
	ASSERT_EQ(0, put(self->vfs, K "state", "update_tuned_intervals"));
	ASSERT_STREQ("7000\n", get(self->vfs, I "sample_us", self->buf, 64));
	ASSERT_STREQ("140000\n", get(self->vfs, I "aggr_us", self->buf, 64));

	/* a commit that fails changes nothing */
	ASSERT_EQ(0, put(self->vfs, I "sample_us", "200000"));	/* > aggr_us */
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "commit"));
	ASSERT_EQ(0, put(self->vfs, K "state", "update_tuned_intervals"));
	ASSERT_STREQ("7000\n", get(self->vfs, I "sample_us", self->buf, 64));

	/* targets change while it runs: another process, then both */
	snprintf(pid, sizeof(pid), "%d", (int)other);
	ASSERT_EQ(0, put(self->vfs, T "pid_target", pid));
	ASSERT_EQ(0, put(self->vfs, K "state", "commit"));
	ASSERT_EQ(0, put(self->vfs, C "targets/nr_targets", "2"));
	ASSERT_EQ(0, put(self->vfs, T "pid_target", pid));
	snprintf(pid, sizeof(pid), "%d", (int)child);
	ASSERT_EQ(0, put(self->vfs, C "targets/1/pid_target", pid));
	ASSERT_EQ(0, put(self->vfs, K "state", "commit"));
	ASSERT_STREQ("on\n", get(self->vfs, K "state", self->buf, 64));
	ASSERT_EQ(kpid, atoi(get(self->vfs, K "pid", self->buf, 64)));	/* never stopped */

	/* a commit does not wait out a long sampling interval */
	ASSERT_EQ(0, put(self->vfs, I "sample_us", "3600000000"));
	ASSERT_EQ(0, put(self->vfs, I "aggr_us", "3600000000"));
	ASSERT_EQ(0, put(self->vfs, K "state", "commit"));
	ASSERT_EQ(0, put(self->vfs, I "sample_us", "7000"));
	ASSERT_EQ(0, put(self->vfs, I "aggr_us", "140000"));
	ASSERT_EQ(0, put(self->vfs, K "state", "commit"));	/* in the hour-long sleep */
	ASSERT_EQ(0, put(self->vfs, K "state", "update_tuned_intervals"));
	ASSERT_STREQ("7000\n", get(self->vfs, I "sample_us", self->buf, 64));

	ASSERT_EQ(0, put(self->vfs, K "state", "off\n"));
	ASSERT_STREQ("off\n", get(self->vfs, K "state", self->buf, 64));
	ASSERT_STREQ("-1\n", get(self->vfs, K "pid", self->buf, 64));
	ASSERT_EQ(-EPERM, put(self->vfs, K "state", "off"));
	ASSERT_EQ(-EINVAL, put(self->vfs, K "state", "commit"));
	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "0"));
	reap(child);
	reap(other);
}

/* A file left open across the removal of its directory: -ENODEV (kernfs). */
TEST_F(sysfs, removed_directory)
{
	struct uks_vfs_file *f;
	char b[16];

	ASSERT_EQ(0, full_tree(self->vfs));
	ASSERT_EQ(0, uks_vfs_open(self->vfs, R "start", O_RDWR, &f));
	ASSERT_EQ(0, put(self->vfs, C "targets/nr_targets", "1"));	/* afresh */
	ASSERT_EQ(-ENODEV, uks_vfs_write(f, "1", 1));
	ASSERT_EQ(-ENODEV, uks_vfs_read(f, b, sizeof(b), 0));
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, K "state", O_RDWR, &f));
	ASSERT_EQ(0, put(self->vfs, A "kdamonds/nr_kdamonds", "0"));
	ASSERT_EQ(-ENODEV, uks_vfs_write(f, "on", 2));
	uks_vfs_close(f);
}

/* Regions from fixed ranges (the kernel's damon_set_regions()). */
TEST(sysfs_core_set_regions)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_addr_range r1[] = { { 5, 27 }, { 45, 55 }, { 73, 104 } };
	struct damon_addr_range r2[] = { { 10, 30 }, { 60, 80 } };
	struct uks_damon_region_info info[8];
	struct uks_damon_target *t;

	ASSERT_NE(NULL, ctx);
	ASSERT_EQ(0, uks_damon_add_target(ctx, 1, NULL, &t));
	ASSERT_EQ(0, __uks_damon_set_regions(ctx, &t->t, r1, 3));
	ASSERT_EQ(3, uks_damon_target_regions(t, info, 8));
	ASSERT_EQ(5UL, info[0].start);
	ASSERT_EQ(27UL, info[0].end);
	ASSERT_EQ(45UL, info[1].start);
	ASSERT_EQ(104UL, info[2].end);
	/* stretched where they meet a range, gone where they meet none, new between */
	ASSERT_EQ(0, __uks_damon_set_regions(ctx, &t->t, r2, 2));
	ASSERT_EQ(2, uks_damon_target_regions(t, info, 8));
	ASSERT_EQ(10UL, info[0].start);
	ASSERT_EQ(30UL, info[0].end);
	ASSERT_EQ(60UL, info[1].start);
	ASSERT_EQ(80UL, info[1].end);
	uks_damon_ctx_destroy(ctx);
}

struct fixed_check {
	unsigned long lo, hi;
	int aggregations, bad;
};

static int check_fixed(struct uks_damon_ctx *ctx)
{
	struct fixed_check *fc = uks_damon_callback_private(ctx);
	struct damon_target *t;
	struct damon_region *r;

	damon_for_each_target(t, ctx) {
		unsigned long next = fc->lo;

		damon_for_each_region(r, t) {	/* contiguous, from lo to hi */
			if (r->ar.start != next || r->ar.end <= r->ar.start)
				fc->bad++;
			next = r->ar.end;
		}
		if (next != fc->hi)
			fc->bad++;
	}
	return ++fc->aggregations >= 5;
}

/* fvaddr: the given range is what is monitored, never fitted to the maps */
TEST(sysfs_core_fvaddr_keeps_the_given_ranges)
{
	struct fixed_check fc = { .lo = 0x10000000UL, .hi = 0x10400000UL };
	struct uks_damon_callback cb = { .priv = &fc, .after_aggregation = check_fixed };
	struct damon_addr_range ar = { fc.lo, fc.hi };
	struct uks_damon_ctx *ctx;
	struct uks_damon_target *t;
	pid_t child = spawn_sleeper();
	char prim[32];

	ASSERT_GT(child, 0);
	snprintf(prim, sizeof(prim), "f%s", uks_damon_default_primitive());
	if (uks_damon_primitive_available(prim, NULL, 0)) {
		reap(child);
		SKIP(return, "%s is not available here", prim);
	}
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, prim));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 1000, 10000, 1000, 10, 1000));	/* update often */
	ASSERT_EQ(0, uks_damon_add_target(ctx, (unsigned long)child, NULL, &t));
	ASSERT_EQ(0, __uks_damon_set_regions(ctx, &t->t, &ar, 1));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 1000 && uks_damon_is_running(ctx); i++)
		usleep(10000);
	uks_damon_stop(&ctx, 1);
	EXPECT_EQ(5, fc.aggregations);
	EXPECT_EQ(0, fc.bad);
	uks_damon_ctx_destroy(ctx);
	reap(child);
}

TEST_HARNESS_MAIN
