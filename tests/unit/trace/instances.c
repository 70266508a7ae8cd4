// SPDX-License-Identifier: MIT
/*
 * instances/: mkdir makes a full, independent instance with exactly the
 * files the kernel gives one (the top-level-only files absent), rmdir
 * removes it (-EBUSY while any of its files is open), names and errnos
 * as the kernel's; an event is written to every instance that enabled
 * it; memory is checked before an instance is made; open files pin what
 * they name against rmdir and a removed dynamic event (-ENODEV after).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/mem_limit.h"
#include "unit/tracefs_io.h"
#include "trace/tracefs.h"

FIXTURE(inst) {
	struct uks_trace *top;
	struct kfs_root root;
};

FIXTURE_SETUP(inst)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->top));
	__uks_tracefs_root(self->top, &self->root);
}

FIXTURE_TEARDOWN(inst)
{
	uks_trace_destroy(self->top);	/* and its instances */
}

static int list_cat(const char *name, const struct kfs_stat *st, void *arg)
{
	char *buf = arg;

	strcat(buf, name);
	strcat(buf, S_ISDIR(st->mode) ? "/ " : " ");
	return 0;
}

static const char *ls(struct kfs_root *root, const char *path)
{
	int ret;

	out[0] = '\0';
	ret = __uks_kfs_list(root, path, list_cat, out);
	if (ret)
		snprintf(out, sizeof(out), "<error %d>", ret);
	return out;
}

/* A whole file through kfs, as a path below the top level. */
static const char *kread(struct kfs_root *root, const char *path)
{
	struct kfs_open_file *of;
	ssize_t n, got = 0;
	int ret = __uks_kfs_open(root, path, O_RDONLY | O_NONBLOCK, NULL, &of);

	if (ret) {
		snprintf(out, sizeof(out), "<error %d>", ret);
		return out;
	}
	while ((n = __uks_kfs_read(of, out + got, sizeof(out) - 1 - got, -1)) > 0)
		got += n;
	__uks_kfs_close(of);
	if (n < 0 && n != -EAGAIN)
		snprintf(out, sizeof(out), "<error %zd>", n);
	else
		out[got] = '\0';
	return out;
}

static ssize_t kwrite(struct kfs_root *root, const char *path, const char *text)
{
	struct kfs_open_file *of;
	ssize_t n;
	int ret = __uks_kfs_open(root, path, O_WRONLY, NULL, &of);

	if (ret)
		return ret;
	n = __uks_kfs_write(of, text, strlen(text), -1, NULL, NULL);
	__uks_kfs_close(of);
	return n;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

TEST_F(inst, mkdir_makes_an_instance_with_the_kernels_files)
{
	struct kfs_root *r = &self->root;
	struct kfs_stat st;
	char top[4096];

	snprintf(top, sizeof(top), "%s", ls(r, ""));
	ASSERT_STREQ("", ls(r, "instances"));
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/foo", NULL));
	ASSERT_EQ(0, __uks_kfs_stat(r, "instances/foo", &st));
	ASSERT_EQ(S_IFDIR | 0755, st.mode);
	ASSERT_STREQ("foo/ ", ls(r, "instances"));
	/* The top level keeps all; the instance lacks exactly the top-only files. */
	ASSERT_STREQ(top, ls(r, ""));
	ASSERT_EQ(NULL, strstr(ls(r, "instances/foo"), "README"));
	for (const char *gone = "README available_events dynamic_events instances/ "
				"saved_cmdlines saved_cmdlines_size saved_tgids "; *gone;) {
		char name[64];
		size_t n = strcspn(gone, " ");

		snprintf(name, sizeof(name), " %.*s ", (int)n, gone);
		EXPECT_NE(NULL, strstr(top, name + 1));	/* at the top */
		EXPECT_EQ(NULL, strstr(ls(r, "instances/foo"), name));
		gone += n + 1;
	}
	for (const char *kept = "available_tracers buffer_size_kb buffer_total_size_kb "
				"current_tracer error_log events/ options/ per_cpu/ set_event "
				"set_event_pid trace trace_clock trace_marker trace_options "
				"trace_pipe tracing_on "; *kept;) {
		char name[64];
		size_t n = strcspn(kept, " ");

		snprintf(name, sizeof(name), "%.*s ", (int)n, kept);
		EXPECT_NE(NULL, strstr(ls(r, "instances/foo"), name));
		kept += n + 1;
	}
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(r, "instances/foo/README", &st));
	EXPECT_EQ(-ENOENT, __uks_kfs_stat(r, "instances/foo/instances", &st));
	EXPECT_EQ(0, __uks_kfs_stat(r, "instances/foo/events/uks_test/tick/enable", &st));
	EXPECT_EQ(0, __uks_kfs_stat(r, "instances/foo/per_cpu/cpu0/trace_pipe", &st));
	/* options/: record-cmd is the top level's only (TOP_LEVEL_TRACE_FLAGS) */
	EXPECT_NE(NULL, strstr(ls(r, "options"), "record-cmd "));
	EXPECT_EQ(NULL, strstr(ls(r, "instances/foo/options"), "record-cmd "));
	EXPECT_NE(NULL, strstr(ls(r, "instances/foo/options"), "overwrite "));
	EXPECT_NE(NULL, strstr(kread(r, "instances/foo/trace_options"), "record-cmd\n"));
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/foo", NULL));
	ASSERT_STREQ("", ls(r, "instances"));
	ASSERT_EQ(-ENOENT, __uks_kfs_stat(r, "instances/foo", &st));
}

TEST_F(inst, errnos_and_names_are_the_kernels)
{
	struct kfs_root *r = &self->root;
	char path[400];

	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/x", NULL));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(r, "instances/x", NULL));
	EXPECT_EQ(-ENOENT, __uks_kfs_rmdir(r, "instances/y", NULL));
	EXPECT_EQ(-EPERM, __uks_kfs_mkdir(r, "instances/x/sub", NULL));
	EXPECT_EQ(-ENOENT, __uks_kfs_mkdir(r, "instances/x/instances/y", NULL));
	EXPECT_EQ(-EPERM, __uks_kfs_rmdir(r, "instances/x/events", NULL));
	EXPECT_EQ(-ENOTDIR, __uks_kfs_rmdir(r, "instances/x/trace", NULL));
	EXPECT_EQ(-EPERM, __uks_kfs_rmdir(r, "instances", NULL));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(r, "instances/.", NULL));
	EXPECT_EQ(-EEXIST, __uks_kfs_mkdir(r, "instances/..", NULL));
	EXPECT_EQ(-EINVAL, __uks_kfs_rmdir(r, "instances/x/.", NULL));
	EXPECT_EQ(-ENOTEMPTY, __uks_kfs_rmdir(r, "instances/x/..", NULL));
	/* Any name the VFS takes is an instance name, up to NAME_MAX. */
	memset(path, 0, sizeof(path));
	strcpy(path, "instances/");
	memset(path + 10, 'a', 255);
	EXPECT_EQ(0, __uks_kfs_mkdir(r, path, NULL));
	EXPECT_EQ(0, __uks_kfs_rmdir(r, path, NULL));
	path[10 + 255] = 'a';
	EXPECT_EQ(-ENAMETOOLONG, __uks_kfs_mkdir(r, path, NULL));
	static const char *const odd[] = { "a b", "-x", "a:b", "\n", "*", "\xc3\xa9t\xc3\xa9", "x.y" };

	for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++) {
		snprintf(path, sizeof(path), "instances/%s", odd[i]);
		EXPECT_EQ(0, __uks_kfs_mkdir(r, path, NULL));
		snprintf(path, sizeof(path), "instances/%s/tracing_on", odd[i]);
		EXPECT_STREQ("1\n", kread(r, path));
		snprintf(path, sizeof(path), "instances/%s", odd[i]);
		EXPECT_EQ(0, __uks_kfs_rmdir(r, path, NULL));
	}
	/* A library instance's own name rules: not "", ".", "..", "a/b". */
	struct uks_trace *tr;

	EXPECT_EQ(-EINVAL, uks_trace_create("", &tr));
	EXPECT_EQ(-EINVAL, uks_trace_create("a/b", &tr));
	EXPECT_EQ(-EINVAL, uks_trace_create("..", &tr));
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/x", NULL));
}

TEST_F(inst, an_instance_is_independent_and_inherits_the_top_options)
{
	struct kfs_root *r = &self->root;

	ASSERT_EQ(0, wrt(self->top, "trace_options", "nooverwrite"));
	ASSERT_EQ(0, wrt(self->top, "trace_options", "verbose"));
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/a", NULL));
	EXPECT_STREQ("0\n", kread(r, "instances/a/options/overwrite"));
	EXPECT_STREQ("1\n", kread(r, "instances/a/options/verbose"));
	ASSERT_EQ(2, kwrite(r, "instances/a/tracing_on", "0\n"));
	EXPECT_STREQ("0\n", kread(r, "instances/a/tracing_on"));
	EXPECT_STREQ("1\n", rd(self->top, "tracing_on"));
	ASSERT_EQ(3, kwrite(r, "instances/a/buffer_size_kb", "64\n"));
	EXPECT_STREQ("64\n", kread(r, "instances/a/buffer_size_kb"));
	EXPECT_STREQ("1408\n", rd(self->top, "buffer_size_kb"));
	ASSERT_EQ(2, kwrite(r, "instances/a/tracing_on", "1\n"));
	ASSERT_EQ(6, kwrite(r, "instances/a/trace_marker", "only a"));
	EXPECT_NE(NULL, strstr(kread(r, "instances/a/trace"), "tracing_mark_write: only a\n"));
	EXPECT_EQ(NULL, strstr(rd(self->top, "trace"), "only a"));
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/a", NULL));
}

TEST_F(inst, an_event_is_written_to_every_instance_that_enabled_it)
{
	struct kfs_root *r = &self->root;
	static const char comm[16] = "ticker";	/* the event copies 16 bytes */

	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/one", NULL));
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/two", NULL));
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/off", NULL));
	ASSERT_EQ(0, wr(self->top, "events/uks_test/tick/enable", "1"));
	ASSERT_EQ(2, kwrite(r, "instances/one/events/uks_test/tick/enable", "1\n"));
	ASSERT_EQ(18, kwrite(r, "instances/two/set_event", "uks_test:tick\n  \n\n"));
	ASSERT_EQ(4, kwrite(r, "instances/two/events/uks_test/tick/filter", "n<3\n"));
	for (unsigned int i = 1; i <= 4; i++)
		uks_trace_uks_test_tick(i, comm);
	EXPECT_EQ(4, count(rd(self->top, "trace"), "tick: n="));
	EXPECT_EQ(4, count(kread(r, "instances/one/trace"), "tick: n="));
	EXPECT_EQ(2, count(kread(r, "instances/two/trace"), "tick: n="));
	EXPECT_EQ(0, count(kread(r, "instances/off/trace"), "tick: n="));
	EXPECT_STREQ("1\n", kread(r, "instances/one/events/uks_test/tick/enable"));
	EXPECT_STREQ("0\n", kread(r, "instances/off/events/uks_test/tick/enable"));
	/* rmdir with events enabled disables them: the others go on */
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/one", NULL));
	uks_trace_uks_test_tick(1, comm);
	EXPECT_EQ(3, count(kread(r, "instances/two/trace"), "tick: n="));
}

TEST_F(inst, rmdir_is_ebusy_while_a_file_of_the_instance_is_open)
{
	struct kfs_root *r = &self->root;
	struct kfs_open_file *of, *ev;

	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/busy", NULL));
	ASSERT_EQ(0, __uks_kfs_open(r, "instances/busy/trace_pipe", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EBUSY, __uks_kfs_rmdir(r, "instances/busy", NULL));
	__uks_kfs_close(of);
	ASSERT_EQ(0, __uks_kfs_open(r, "instances/busy/events/uks_test/tick/enable", O_RDWR,
				    NULL, &ev));
	EXPECT_EQ(-EBUSY, __uks_kfs_rmdir(r, "instances/busy", NULL));
	/* an open file of the top level does not hold an instance */
	ASSERT_EQ(0, __uks_kfs_open(r, "trace", O_RDONLY, NULL, &of));
	__uks_kfs_close(ev);
	EXPECT_EQ(0, __uks_kfs_rmdir(r, "instances/busy", NULL));
	__uks_kfs_close(of);
	EXPECT_EQ(0, self->top->opens);
}

/*
 * Over FUSE a file is flushed at close(2) and released later: once
 * flushed it no longer holds rmdir off, and the instance is freed at its
 * release; until then the file works on the removed instance.
 */
TEST_F(inst, a_flushed_file_does_not_hold_rmdir_and_outlives_its_instance)
{
	struct kfs_root *r = &self->root;
	struct kfs_open_file *tr, *en;
	char buf[256];

	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/fl", NULL));
	ASSERT_EQ(0, __uks_kfs_open(r, "instances/fl/trace", O_RDONLY, NULL, &tr));
	ASSERT_EQ(0, __uks_kfs_open(r, "instances/fl/events/uks_test/tick/enable", O_RDWR,
				    NULL, &en));
	__uks_kfs_flush(tr);
	EXPECT_EQ(-EBUSY, __uks_kfs_rmdir(r, "instances/fl", NULL));
	__uks_kfs_flush(en);
	EXPECT_GT(__uks_kfs_read(tr, buf, sizeof(buf), 0), 0);	/* used again: busy */
	EXPECT_EQ(-EBUSY, __uks_kfs_rmdir(r, "instances/fl", NULL));
	__uks_kfs_flush(tr);
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/fl", NULL));
	EXPECT_EQ(-ENOENT, __uks_kfs_mkdir(r, "instances/fl/x", NULL));
	EXPECT_STREQ("", ls(r, "instances"));
	/* the files still work: the instance's buffer, its event file gone */
	EXPECT_GT(__uks_kfs_read(tr, buf, sizeof(buf), 0), 0);
	EXPECT_EQ(-ENODEV, __uks_kfs_write(en, "1", 1, 0, NULL, NULL));
	__uks_kfs_close(en);
	__uks_kfs_close(tr);	/* frees it */
	EXPECT_EQ(0, self->top->opens);
}

TEST_F(inst, a_removed_eprobe_leaves_its_open_files_answering_enodev)
{
	struct kfs_root *r = &self->root;
	struct kfs_open_file *en, *fmt;
	char buf[64];

	ASSERT_EQ(0, wr(self->top, "dynamic_events", "e:eprobes/gone uks_test.open fd=$fd"));
	ASSERT_EQ(0, __uks_kfs_open(r, "events/eprobes/gone/enable", O_RDWR, NULL, &en));
	ASSERT_EQ(0, __uks_kfs_open(r, "events/eprobes/gone/format", O_RDONLY, NULL, &fmt));
	/* Open but not enabled: removing it is allowed, as in the kernel. */
	ASSERT_EQ(0, wr(self->top, "dynamic_events", "-:eprobes/gone"));
	EXPECT_EQ(-ENODEV, __uks_kfs_read(en, buf, sizeof(buf), 0));
	EXPECT_EQ(-ENODEV, __uks_kfs_write(en, "1", 1, 0, NULL, NULL));
	EXPECT_EQ(-ENODEV, __uks_kfs_read(fmt, buf, sizeof(buf), 0));
	__uks_kfs_close(en);
	__uks_kfs_close(fmt);
	/* Enabled: -EBUSY */
	ASSERT_EQ(0, wr(self->top, "dynamic_events", "e:eprobes/on uks_test.open fd=$fd"));
	ASSERT_EQ(0, wr(self->top, "events/eprobes/on/enable", "1"));
	EXPECT_EQ(-EBUSY, wr(self->top, "dynamic_events", "-:eprobes/on"));
	ASSERT_EQ(0, wr(self->top, "events/eprobes/on/enable", "0"));
	EXPECT_EQ(0, wr(self->top, "dynamic_events", "-:eprobes/on"));
}

TEST_F(inst, memory_is_checked_and_instances_are_capped)
{
	struct kfs_root *r = &self->root;
	struct rlimit rl;
	int ret;

	/* A limit already passed: no ring buffer can be had. */
	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &rl));
	rl.rlim_cur = self_kb("VmSize") / 2;	/* bytes, despite the name */
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &rl));
	ret = __uks_kfs_mkdir(r, "instances/big", NULL);
	ASSERT_EQ(0, unlimit(RLIMIT_AS));
	ASSERT_EQ(-ENOMEM, ret);
	ASSERT_STREQ("", ls(r, "instances"));
	self->top->max_instances = 2;
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/a", NULL));
	ASSERT_EQ(0, __uks_kfs_mkdir(r, "instances/b", NULL));
	EXPECT_EQ(-ENOSPC, __uks_kfs_mkdir(r, "instances/c", NULL));
	ASSERT_EQ(0, __uks_kfs_rmdir(r, "instances/a", NULL));
	EXPECT_EQ(0, __uks_kfs_mkdir(r, "instances/c", NULL));
	/* b and c go with the top level (teardown; ASan's leak check sees it). */
}

/*
 * Threads open and close files of instances/x (and read them) while
 * others make and remove it: each open either pins the instance (rmdir
 * then fails with -EBUSY) or fails with -ENOENT; nothing is used after
 * being freed (run it under ASan).
 */
#define ROUNDS	150

struct hammer {
	struct kfs_root *root;
	int bad;
};

static void *opener(void *arg)
{
	static const char *const paths[] = {
		"instances/x/tracing_on", "instances/x/events/uks_test/tick/enable",
		"instances/x/per_cpu/cpu0/stats", "instances/x/trace",
	};
	struct hammer *h = arg;
	char buf[256];

	for (int i = 0; i < ROUNDS * 4; i++) {
		struct kfs_open_file *of;
		int ret = __uks_kfs_open(h->root, paths[i % 4], i % 4 == 2 ? O_RDONLY : O_RDWR,
					 NULL, &of);

		if (ret == -ENOENT)
			continue;
		if (ret) {
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
			continue;
		}
		if (__uks_kfs_read(of, buf, sizeof(buf), 0) < 0)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
		if (i % 4 == 1)
			__uks_kfs_write(of, "1", 1, 0, NULL, NULL);
		__uks_kfs_close(of);
	}
	return NULL;
}

static int list_count(const char *name, const struct kfs_stat *st, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static void *maker(void *arg)
{
	struct hammer *h = arg;

	for (int i = 0; i < ROUNDS; i++) {
		int ret = __uks_kfs_mkdir(h->root, "instances/x", NULL);

		if (ret && ret != -EEXIST)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
		ret = __uks_kfs_rmdir(h->root, "instances/x", NULL);
		if (ret && ret != -EBUSY && ret != -ENOENT)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
		int n = 0;

		if (__uks_kfs_list(h->root, "instances", list_count, &n) || n > 1)
			__atomic_add_fetch(&h->bad, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

TEST_F(inst, open_and_close_race_mkdir_and_rmdir_safely)
{
	struct hammer h = { &self->root, 0 };
	pthread_t t[4];

	ASSERT_EQ(0, pthread_create(&t[0], NULL, opener, &h));
	ASSERT_EQ(0, pthread_create(&t[1], NULL, opener, &h));
	ASSERT_EQ(0, pthread_create(&t[2], NULL, maker, &h));
	ASSERT_EQ(0, pthread_create(&t[3], NULL, maker, &h));
	for (int i = 0; i < 4; i++)
		pthread_join(t[i], NULL);
	EXPECT_EQ(0, h.bad);
	EXPECT_EQ(0, self->top->opens);
	__uks_kfs_rmdir(&self->root, "instances/x", NULL);
	ASSERT_STREQ("", ls(&self->root, "instances"));
}

TEST_HARNESS_MAIN
