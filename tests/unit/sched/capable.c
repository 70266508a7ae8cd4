// SPDX-License-Identifier: MIT
/*
 * The real inputs of the 32-bit rules (lib/sched/a32_sys.c): the capable
 * set from a list or a config file (comments, blank lines, garbage), our
 * own task and environment from /proc and /sys, and the user-space saved
 * mask: exported, read back, invalidated by a tombstone, and the fork
 * rule (children forked before the invalidation keep theirs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uks/sched.h>

#include "harness.h"

static char cfg[] = "/tmp/uks-a32cap-XXXXXX";

static void write_cfg(const void *buf, size_t len)
{
	FILE *f = fopen(cfg, "w");

	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
}

static bool own_sysfs(void)
{
	return !access("/sys/devices/system/cpu/aarch32_el0", F_OK);
}

TEST(list_then_config_file)
{
	struct uks_cpumask m;
	char src[256], buf[64];
	int fd;

	if (own_sysfs())
		SKIP(return, "this machine has aarch32_el0");
	ASSERT_EQ(uks_a32_capable_read(&m, "3,1", NULL, src, sizeof(src)), 0);
	uks_cpumask_print_list(&m, buf, sizeof(buf));
	EXPECT_STREQ(buf, "1,3");
	EXPECT_STREQ(src, "--capable");
	fd = mkstemp(cfg);
	ASSERT_GE(fd, 0);
	close(fd);
	write_cfg("# the big cores\n\n  \t2-3\nignored\n", 32);
	ASSERT_EQ(uks_a32_capable_read(&m, NULL, cfg, src, sizeof(src)), 0);
	uks_cpumask_print_list(&m, buf, sizeof(buf));
	EXPECT_STREQ(buf, "2-3");
	EXPECT_STREQ(src, cfg);
	write_cfg("# nothing\n", 10);
	ASSERT_EQ(uks_a32_capable_read(&m, NULL, cfg, NULL, 0), 0);
	EXPECT_TRUE(uks_cpumask_empty(&m));
	EXPECT_EQ(uks_a32_capable_read(&m, NULL, "/nonexistent/cfg", NULL, 0), -ENOENT);
	EXPECT_LT(uks_a32_capable_read(&m, "1-x", NULL, NULL, 0), 0);
	unlink(cfg);
}

TEST(config_garbage)
{
	unsigned char buf[300];
	struct uks_cpumask m;
	int fd;

	if (own_sysfs())
		SKIP(return, "this machine has aarch32_el0");
	strcpy(cfg, "/tmp/uks-a32cap-XXXXXX");
	fd = mkstemp(cfg);
	ASSERT_GE(fd, 0);
	close(fd);
	srand(32);
	for (int round = 0; round < 2000; round++) {
		size_t len = (size_t)rand() % sizeof(buf);

		for (size_t i = 0; i < len; i++)
			buf[i] = (unsigned char)(round & 1 ? "0123456789,-:/N#\n \t"[rand() % 19] : rand());
		write_cfg(buf, len);
		int ret = uks_a32_capable_read(&m, NULL, cfg, NULL, 0);

		if (!(ret == 0 || ret == -EINVAL || ret == -ERANGE || ret == -EOVERFLOW))
			TH_LOG("ret %d", ret);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL || ret == -ERANGE || ret == -EOVERFLOW);
	}
	unlink(cfg);
}

TEST(own_task_and_environment)
{
	struct uks_a32_task t;
	struct uks_a32_env env;
	struct uks_cpumask cap;

	uks_cpumask_clear(&cap);
	uks_cpumask_set_cpu(&cap, 0);
	unsetenv(UKS_A32_ENV_SAVED);
	unsetenv(UKS_A32_ENV_TASK);
	ASSERT_EQ(uks_a32_task_read(&t, 0), 0);
	EXPECT_FALSE(uks_cpumask_empty(&t.affinity));
	EXPECT_FALSE(t.is32);			/* this test is a 64-bit (or native) ELF */
	EXPECT_FALSE(t.has_saved);
	ASSERT_EQ(uks_a32_env_read(&env, 0, &cap), 0);
	EXPECT_TRUE(uks_cpumask_subset(&t.affinity, &env.online) || !uks_cpumask_empty(&env.online));
	EXPECT_TRUE(uks_cpumask_equal(&env.capable, &cap));
	/* the last level of the chain is the root: every online CPU */
	if (env.nr_cpusets)
		EXPECT_TRUE(uks_cpumask_equal(&env.cpusets[env.nr_cpusets - 1], &env.online));
	EXPECT_EQ(uks_a32_task_read(&t, 999999999), -ESRCH);
}

TEST(saved_mask_export_invalidate_and_fork_rule)
{
	char state[] = "/tmp/uks-a32st-XXXXXX";
	struct uks_a32_task t, u;
	int p[2], st;
	pid_t before;
	char r = 0;

	ASSERT_NONNULL(mkdtemp(state));
	setenv("UKS_A32_STATE", state, 1);
	memset(&t, 0, sizeof(t));
	uks_cpumask_set_cpu(&t.saved, 0);
	t.has_saved = true;
	ASSERT_EQ(uks_a32_saved_set(&t), 0);
	ASSERT_NONNULL(getenv(UKS_A32_ENV_SAVED));
	ASSERT_EQ(uks_a32_task_read(&u, 0), 0);
	EXPECT_TRUE(u.has_saved);
	EXPECT_TRUE(uks_cpumask_test_cpu(&u.saved, 0));
	/* a child forked before the invalidation keeps its copy */
	ASSERT_EQ(pipe(p), 0);
	before = fork();
	if (before == 0) {
		struct uks_a32_task c;

		close(p[1]);
		if (read(p[0], &r, 1) != 1)
			_exit(3);
		_exit(uks_a32_task_read(&c, 0) ? 2 : c.has_saved ? 0 : 1);
	}
	close(p[0]);
	usleep(30000);				/* start times have 10 ms ticks */
	ASSERT_EQ(uks_a32_invalidate(0), 0);
	usleep(30000);
	ASSERT_EQ(uks_a32_task_read(&u, 0), 0);
	EXPECT_FALSE(u.has_saved);		/* our own tombstone */
	ASSERT_EQ(write(p[1], "x", 1), 1);
	close(p[1]);
	ASSERT_EQ(waitpid(before, &st, 0), before);
	EXPECT_EQ(WEXITSTATUS(st), 0);
	/* a child forked after it inherits an invalid mask */
	pid_t after = fork();

	if (after == 0) {
		struct uks_a32_task c;

		_exit(uks_a32_task_read(&c, 0) ? 2 : c.has_saved ? 0 : 1);
	}
	ASSERT_EQ(waitpid(after, &st, 0), after);
	EXPECT_EQ(WEXITSTATUS(st), 1);
	/* a mask saved after the tombstone is valid again */
	ASSERT_EQ(uks_a32_saved_set(&t), 0);
	ASSERT_EQ(uks_a32_task_read(&u, 0), 0);
	EXPECT_TRUE(u.has_saved);
	t.has_saved = false;
	ASSERT_EQ(uks_a32_saved_set(&t), 0);
	EXPECT_NULL(getenv(UKS_A32_ENV_SAVED));
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", state);
	EXPECT_EQ(system(cmd), 0);
	unsetenv("UKS_A32_STATE");
}

TEST_HARNESS_MAIN
