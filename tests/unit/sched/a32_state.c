// SPDX-License-Identifier: MIT
/*
 * Where uks taskset keeps its tombstones for a user without
 * XDG_RUNTIME_DIR: a32 in the private /tmp/uks-UID, never a directory that
 * another user made first or can write to (a planted tombstone would make
 * the user's saved 32-bit masks look stale).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/sched.h>

#include "harness.h"

/* Run @fn as an unused uid with no XDG_RUNTIME_DIR; its exit status. */
static int as_user(uid_t uid, int (*fn)(void))
{
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		unsetenv("XDG_RUNTIME_DIR");
		unsetenv("UKS_A32_STATE");
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(100);
		_exit(fn());
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static uid_t uid;
static char dir[64];

static int refused(void)
{
	char buf[256];

	if (*uks_a32_state_dir(buf, sizeof(buf)))
		return 1;
	return uks_a32_invalidate(getpid()) == -EPERM ? 0 : 2;
}

static int private(void)
{
	char buf[256], want[80];

	snprintf(want, sizeof(want), "%s/a32", dir);
	if (strcmp(uks_a32_state_dir(buf, sizeof(buf)), want))
		return 1;
	return uks_a32_invalidate(getpid()) ? 2 : 0;
}

static void clean(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	(void)!system(cmd);
}

TEST(a_state_dir_open_to_others_or_not_ours_is_refused)
{
	if (geteuid())
		SKIP(return, "needs root to act as another uid");
	uid = 40000 + (uid_t)(getpid() % 20000);
	snprintf(dir, sizeof(dir), "/tmp/uks-%u", (unsigned int)uid);
	clean();

	ASSERT_EQ(mkdir(dir, 0700), 0);		/* root's, not the user's */
	EXPECT_EQ(as_user(uid, refused), 0);
	ASSERT_EQ(chown(dir, uid, uid), 0);
	ASSERT_EQ(chmod(dir, 0777), 0);		/* the user's, but open to all */
	EXPECT_EQ(as_user(uid, refused), 0);
	clean();
	EXPECT_EQ(as_user(uid, private), 0);	/* made fresh, 0700 */
	clean();
}

TEST_HARNESS_MAIN
