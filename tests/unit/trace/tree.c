// SPDX-License-Identifier: MIT
/*
 * An instance's tracefs tree as kfs serves it to uksfs (__uks_tracefs_root()):
 * every file acts on the instance its path leads to (the shape instances/NAME
 * will have), trace_marker credits the task it is told of (write_arg), else
 * the write's peer, else the caller, open files are counted per instance,
 * and a read of "trace" at another offset takes a new snapshot, as lseek()
 * on the kernel's trace file does.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"
#include "trace/tracefs.h"

FIXTURE(tree) {
	struct uks_trace *top, *inst;
	struct kfs_root root;
};

/* A directory holding "inst": the top table again, serving another instance. */
static int inst_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	if (strcmp(name, "inst"))
		return -ENOENT;
	child->node = &__uks_tracefs_top;
	child->obj = (void *)dir->node->data;
	return 0;
}

static const struct kfs_dir_ops inst_ops = { .lookup = inst_lookup };
static struct kfs_node holder = KFS_DIR("", 0755, &inst_ops, NULL);

FIXTURE_SETUP(tree)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->top));
	ASSERT_EQ(0, uks_trace_create("tree_inst", &self->inst));
	__uks_tracefs_root(self->top, &self->root);
}

FIXTURE_TEARDOWN(tree)
{
	uks_trace_destroy(self->inst);
	uks_trace_destroy(self->top);
}

static ssize_t kwrite(struct kfs_root *root, const char *path, const char *text,
		      const struct uks_peer *writer, const struct uks_trace_task *task)
{
	struct kfs_open_file *of;
	ssize_t n;
	int ret = __uks_kfs_open(root, path, O_WRONLY, NULL, &of);

	if (ret)
		return ret;
	n = __uks_kfs_write(of, text, strlen(text), -1, writer, task);
	__uks_kfs_close(of);
	return n;
}

TEST_F(tree, files_act_on_the_instance_their_path_leads_to)
{
	struct kfs_root root = self->root;
	struct kfs_stat st;

	holder.data = (long)self->inst;
	root.node = &holder;
	ASSERT_EQ(0, __uks_kfs_stat(&root, "inst/per_cpu/cpu0/stats", &st));
	ASSERT_EQ(2, kwrite(&root, "inst/tracing_on", "0\n", NULL, NULL));
	ASSERT_STREQ("0\n", rd(self->inst, "tracing_on"));
	ASSERT_STREQ("1\n", rd(self->top, "tracing_on"));
	ASSERT_EQ(5, kwrite(&root, "inst/options/markers", "0\n\n\n\n", NULL, NULL));
	ASSERT_STREQ("0\n", rd(self->inst, "options/markers"));
	ASSERT_STREQ("1\n", rd(self->top, "options/markers"));
}

TEST_F(tree, open_files_are_counted_per_instance)
{
	struct kfs_root root = self->root;
	struct kfs_open_file *of;

	holder.data = (long)self->inst;
	root.node = &holder;
	ASSERT_EQ(0, __uks_kfs_open(&root, "inst/events/uks_test/open/id", O_RDONLY, NULL, &of));
	ASSERT_EQ(1, self->inst->opens);
	ASSERT_EQ(0, self->top->opens);
	__uks_kfs_close(of);
	ASSERT_EQ(0, self->inst->opens);
}

TEST_F(tree, trace_marker_credits_the_task_it_is_told_of_then_the_peer)
{
	struct uks_trace_task given = { .pid = 4242, .tgid = 4242, .comm = "given" };
	int ready[2];
	char want[64], c;
	pid_t child;

	ASSERT_EQ(0, pipe(ready));
	child = fork();
	if (!child) {
		prctl(PR_SET_NAME, "tree-peer");
		if (write(ready[1], "x", 1) == 1)
			pause();
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	struct uks_peer peer = { .pid = child, .uid = getuid(), .gid = getgid() };

	ASSERT_EQ(3, kwrite(&self->root, "trace_marker", "one", &peer, NULL));
	ASSERT_EQ(3, kwrite(&self->root, "trace_marker", "two", &peer, &given));
	ASSERT_EQ(5, kwrite(&self->root, "trace_marker", "three", NULL, NULL));
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	close(ready[0]);
	close(ready[1]);
	rd(self->top, "trace");
	snprintf(want, sizeof(want), "tree-peer-%d ", (int)child);
	ASSERT_NE(NULL, strstr(out, want));
	ASSERT_NE(NULL, strstr(strstr(out, want), "tracing_mark_write: one\n"));
	ASSERT_NE(NULL, strstr(out, "given-4242 "));
	ASSERT_NE(NULL, strstr(strstr(out, "given-4242 "), "tracing_mark_write: two\n"));
	snprintf(want, sizeof(want), "-%d ", (int)getpid());
	ASSERT_NE(NULL, strstr(out, want));
	ASSERT_NE(NULL, strstr(strstr(out, want), "tracing_mark_write: three\n"));
}

TEST_F(tree, reading_trace_at_another_offset_takes_a_new_snapshot)
{
	struct kfs_open_file *of;
	char buf[8192];
	ssize_t n;

	ASSERT_EQ(0, wr(self->top, "set_event", "uks_other:ping"));
	ASSERT_EQ(0, __uks_kfs_open(&self->root, "trace", O_RDONLY, NULL, &of));
	n = __uks_kfs_read(of, buf, sizeof(buf) - 1, 0);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	ASSERT_EQ(NULL, strstr(buf, "ping: v=77\n"));
	uks_trace_uks_other_ping(77);
	/* On from where it was: the snapshot of the open. */
	ASSERT_EQ(0, __uks_kfs_read(of, buf, sizeof(buf) - 1, n));
	/* From 0 again: a new one, with the event. */
	n = __uks_kfs_read(of, buf, sizeof(buf) - 1, 0);
	ASSERT_GT(n, 0);
	buf[n] = '\0';
	ASSERT_NE(NULL, strstr(buf, "ping: v=77\n"));
	__uks_kfs_close(of);
}

TEST_HARNESS_MAIN
