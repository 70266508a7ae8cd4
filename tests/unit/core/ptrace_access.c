// SPDX-License-Identifier: MIT
/*
 * The kernel's ptrace rule for uksd's peers, checked as another uid: a
 * peer may name its own tasks, not root's, not a task of its uid that made
 * itself undumpable, and CAP_SYS_PTRACE may name any.
 */
#include <errno.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "core/ptrace_access.h"

#define NOBODY	65534

/* A child that sleeps as @uid, undumpable if asked; its pid. */
static pid_t sleeper(uid_t uid, int dumpable, int ready[2])
{
	pid_t pid = fork();

	if (pid == 0) {
		if (setresgid(uid, uid, uid) || setresuid(uid, uid, uid))
			_exit(1);
		/* A change of uid leaves the task undumpable (suid_dumpable). */
		prctl(PR_SET_DUMPABLE, dumpable);
		(void)!write(ready[1], "x", 1);
		pause();
		_exit(0);
	}
	return pid;
}

static pid_t start(uid_t uid, int dumpable)
{
	int ready[2];
	char c;
	pid_t pid;

	if (pipe(ready))
		return -1;
	pid = sleeper(uid, dumpable, ready);
	close(ready[1]);
	if (read(ready[0], &c, 1) != 1)
		pid = -1;
	close(ready[0]);
	return pid;
}

static void stop(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

TEST(root_with_cap_sys_ptrace_may_name_anyone)
{
	struct uks_peer me = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
	pid_t other;

	if (geteuid() != 0)
		SKIP(return, "needs root to start tasks as another uid");
	other = start(NOBODY, 0);
	ASSERT_GT(other, 0);
	EXPECT_EQ(__uks_ptrace_may_access(&me, other), 0);
	EXPECT_EQ(__uks_ptrace_may_access(&me, 1), 0);
	stop(other);
}

TEST(another_uid_may_name_only_its_dumpable_tasks)
{
	pid_t own, undumpable, root_task, checker;
	int status;

	if (geteuid() != 0)
		SKIP(return, "needs root to start tasks as another uid");
	own = start(NOBODY, 1);
	undumpable = start(NOBODY, 0);
	root_task = start(0, 1);
	ASSERT_GT(own, 0);
	ASSERT_GT(undumpable, 0);
	ASSERT_GT(root_task, 0);

	/* The checker runs as nobody, so its CapEff is empty. */
	checker = fork();
	if (checker == 0) {
		struct uks_peer peer = { .uid = NOBODY, .gid = NOBODY };
		int bad = 0;

		if (setresgid(NOBODY, NOBODY, NOBODY) || setresuid(NOBODY, NOBODY, NOBODY))
			_exit(100);
		peer.pid = getpid();
		bad |= (__uks_ptrace_may_access(&peer, own) != 0) << 0;
		bad |= (__uks_ptrace_may_access(&peer, undumpable) != -EPERM) << 1;
		bad |= (__uks_ptrace_may_access(&peer, root_task) != -EPERM) << 2;
		bad |= (__uks_ptrace_may_access(&peer, 1) != -EPERM) << 3;
		bad |= (__uks_ptrace_may_access(&peer, getpid()) != 0) << 4;
		bad |= (__uks_peer_has_cap(&peer, 19) != 0) << 5;
		_exit(bad);
	}
	ASSERT_EQ(waitpid(checker, &status, 0), checker);
	stop(own);
	stop(undumpable);
	stop(root_task);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(a_root_peer_without_cap_sys_ptrace_may_not_name_another_uid)
{
	pid_t other, checker;
	int status;

	if (geteuid() != 0)
		SKIP(return, "needs root to start tasks as another uid");
	other = start(NOBODY, 1);
	ASSERT_GT(other, 0);
	checker = fork();
	if (checker == 0) {
		struct uks_peer peer = { .pid = getpid(), .uid = 0, .gid = 0 };

		/* Drop CAP_SYS_PTRACE from the effective set only. */
		struct { unsigned int version; int pid; } hdr = { 0x20080522, 0 };
		struct { unsigned int eff, perm, inh; } data[2];

		if (syscall(SYS_capget, &hdr, data))
			_exit(100);
		data[0].eff &= ~(1u << 19);
		if (syscall(SYS_capset, &hdr, data))
			_exit(101);
		_exit(__uks_ptrace_may_access(&peer, other) == -EPERM ? 0 : 1);
	}
	ASSERT_EQ(waitpid(checker, &status, 0), checker);
	stop(other);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

TEST(a_task_that_is_gone_is_esrch)
{
	struct uks_peer me = { .pid = getpid(), .uid = getuid(), .gid = getgid() };
	pid_t gone = fork();

	if (gone == 0)
		_exit(0);
	ASSERT_EQ(waitpid(gone, NULL, 0), gone);
	EXPECT_EQ(__uks_ptrace_may_access(&me, gone), -ESRCH);
	EXPECT_EQ(__uks_ptrace_may_access(&me, 0), -ESRCH);
	EXPECT_EQ(__uks_ptrace_may_access(&me, -5), -ESRCH);
}

TEST_HARNESS_MAIN
