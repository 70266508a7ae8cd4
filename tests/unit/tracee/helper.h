/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tracee tests: the programs they trace and the skip probe.
 *
 * A test binary runs itself again (/proc/self/exe) with UKS_TRACEE_HELPER
 * set to be a traced program; a constructor catches that before the
 * harness starts.  Modes:
 *   getpid N	N getpid() calls and three openat()s of /uks-tracee/probe-K
 *   sigusr1	catches SIGUSR1 sent to itself; exits 42 if it was handled
 *   fork	forks a child that forks a grandchild; the grandchild opens
 *		/uks-tracee/grandchild; exits 0 when both exited 0
 *   stop	forks a child that stops itself (SIGSTOP); sees it stopped
 *		with WUNTRACED, continues it, exits 9 when all went right
 *   rename	prctl(PR_SET_NAME, "renamed") then exits 0
 *   threads	a second thread opens /uks-tracee/thread; exits 0
 *   dup2 N	N times: dup2(0, 64 + i), then openat() of /uks-tracee/fast-i
 *		from a buffer overwritten as soon as the call returns;
 *		then dup2(-1, 64) (EBADF); exits 0
 */
#ifndef UKS_TESTS_TRACEE_HELPER_H
#define UKS_TESTS_TRACEE_HELPER_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t helper_got_usr1;

static void helper_usr1(int sig)
{
	(void)sig;
	helper_got_usr1 = 1;
}

static __attribute__((unused)) void helper_open(const char *path)
{
	int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY, 0);

	if (fd >= 0)
		close(fd);
}

static void *helper_thread(void *arg)
{
	(void)arg;
	helper_open("/uks-tracee/thread");
	return NULL;
}

static int helper_main(const char *mode)
{
	if (!strncmp(mode, "getpid ", 7)) {
		long n = atol(mode + 7);

		for (long i = 0; i < n; i++)
			syscall(SYS_getpid);
		helper_open("/uks-tracee/probe-1");
		helper_open("/uks-tracee/probe-2");
		helper_open("/uks-tracee/probe-3");
		return 0;
	}
	if (!strncmp(mode, "dup2 ", 5)) {
		long n = atol(mode + 5);
		char path[64];

		for (long i = 0; i < n; i++) {
			if (syscall(SYS_dup2, 0, 64 + i) != 64 + i)
				return 1;
			snprintf(path, sizeof(path), "/uks-tracee/fast-%ld", i);
			helper_open(path);
			memset(path, 'X', sizeof(path) - 1);	/* stale if read late */
			close((int)(64 + i));
		}
		return syscall(SYS_dup2, -1, 64) == -1 && errno == EBADF ? 0 : 2;
	}
	if (!strcmp(mode, "sigusr1")) {
		signal(SIGUSR1, helper_usr1);
		kill(getpid(), SIGUSR1);
		return helper_got_usr1 ? 42 : 1;
	}
	if (!strcmp(mode, "fork")) {
		int st;
		pid_t c = fork();

		if (c == 0) {
			pid_t g = fork();

			if (g == 0) {
				helper_open("/uks-tracee/grandchild");
				_exit(0);
			}
			waitpid(g, &st, 0);
			_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 1);
		}
		waitpid(c, &st, 0);
		return WIFEXITED(st) ? WEXITSTATUS(st) : 1;
	}
	if (!strcmp(mode, "stop")) {
		int st;
		pid_t c = fork();

		if (c == 0) {
			raise(SIGSTOP);
			_exit(5);
		}
		if (waitpid(c, &st, WUNTRACED) != c || !WIFSTOPPED(st) || WSTOPSIG(st) != SIGSTOP)
			return 1;
		kill(c, SIGCONT);
		if (waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 5)
			return 2;
		return 9;
	}
	if (!strcmp(mode, "rename")) {
		prctl(PR_SET_NAME, "renamed", 0, 0, 0);
		return 0;
	}
	if (!strcmp(mode, "threads")) {
		pthread_t th;

		if (pthread_create(&th, NULL, helper_thread, NULL))
			return 1;
		pthread_join(th, NULL);
		return 0;
	}
	return 100;
}

__attribute__((constructor)) static void helper_ctor(void)
{
	const char *mode = getenv("UKS_TRACEE_HELPER");

	if (mode)
		_exit(helper_main(mode));
}

/* Run this binary as a helper in @mode: argv for uks_tracee_spawn(). */
static char helper_exe[4096];
static char helper_env[256];

static __attribute__((unused)) char **helper_argv(const char *mode)
{
	static char *argv[2];
	ssize_t n = readlink("/proc/self/exe", helper_exe, sizeof(helper_exe) - 1);

	helper_exe[n > 0 ? n : 0] = '\0';
	snprintf(helper_env, sizeof(helper_env), "UKS_TRACEE_HELPER=%s", mode);
	putenv(helper_env);
	argv[0] = helper_exe;
	argv[1] = NULL;
	return argv;
}

/* NULL when ptrace and seccomp work here, else why not (for SKIP). */
static __attribute__((unused)) const char *tracee_unsupported(void)
{
	static char why[128];
	int st;
	pid_t c = fork();

	if (c < 0)
		return "fork failed";
	if (c == 0) {
		pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, c, 0, 0)) {
		snprintf(why, sizeof(why), "ptrace not permitted here (PTRACE_SEIZE: %s; "
			 "see /proc/sys/kernel/yama/ptrace_scope)", strerror(errno));
		kill(c, SIGKILL);
		waitpid(c, &st, 0);
		return why;
	}
	kill(c, SIGKILL);
	waitpid(c, &st, __WALL);
	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL)
		return "seccomp is not available";
	return NULL;
}

#endif
