// SPDX-License-Identifier: MIT
/*
 * Attaching to a running process (stepped through its system calls) and
 * detaching from it: its events are written while attached, it runs on
 * untraced afterwards; and a stop request from a signal handler makes
 * run() detach a spawned command and return.
 */
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <uks/trace.h>
#include <uks/tracee.h>

#include "harness.h"
#include "unit/tracefs_io.h"
#include "unit/tracee/helper.h"

FIXTURE(att) {
	struct uks_trace *tr;
	struct uks_tracee_session *s;
};

FIXTURE_SETUP(att)
{
	const char *why = tracee_unsupported();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, uks_tracee_session_create(NULL, &self->s));
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	ASSERT_EQ(0, wr(self->tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(self->tr, "events/esys/eopen/enable", "1"));
}

FIXTURE_TEARDOWN(att)
{
	uks_tracee_session_destroy(self->s);
	if (self->tr) {
		wr(self->tr, "events/enable", "0");
		uks_tracefs_write_str(self->tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
		uks_trace_destroy(self->tr);
	}
}

/* The target: for each byte on @in, open /uks-tracee/attached-BYTE, ack on @out. */
static void target(int in, int outfd)
{
	char c, path[64];

	while (read(in, &c, 1) == 1) {
		snprintf(path, sizeof(path), "/uks-tracee/attached-%c", c);
		helper_open(path);
		if (write(outfd, &c, 1) != 1)
			_exit(1);
	}
	_exit(5);
}

static bool tracer_pid_is_zero(pid_t pid)
{
	char path[64], buf[2048], *p;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strstr(buf, "TracerPid:");
	return p && atoi(p + 10) == 0;
}

TEST_F(att, attach_trace_detach_leaves_it_running)
{
	int cmd[2], ack[2], status;
	struct pollfd pfd;
	char c = 0;
	pid_t pid;
	int waited = 0;

	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(ack));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		target(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	ASSERT_EQ(0, uks_tracee_attach(self->s, pid));
	ASSERT_EQ(1, uks_tracee_nr_threads(self->s));
	ASSERT_EQ(1, write(cmd[1], "a", 1));
	/* Handle stops until the target has answered (a generous deadline). */
	pfd = (struct pollfd){ .fd = ack[0], .events = POLLIN };
	for (;;) {
		while (uks_tracee_step(self->s, UKS_TRACEE_NOHANG) > 0)
			;
		if (poll(&pfd, 1, 10) == 1)
			break;
		ASSERT_LT(waited++, 2000);	/* 20 s of polls, under the 30 s test timeout */
	}
	ASSERT_EQ(1, read(ack[0], &c, 1));
	EXPECT_EQ('a', c);
	EXPECT_EQ(1, uks_tracee_detach(self->s));
	EXPECT_EQ(0, uks_tracee_nr_threads(self->s));
	EXPECT_TRUE(tracer_pid_is_zero(pid));

	/* Untraced now: it still answers, and nothing is written for it. */
	ASSERT_EQ(1, write(cmd[1], "b", 1));
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_EQ(1, read(ack[0], &c, 1));
	EXPECT_EQ('b', c);
	close(cmd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 5);
	rd(self->tr, "trace");
	EXPECT_NE(NULL, strstr(out, "file=\"/uks-tracee/attached-a\""));
	EXPECT_EQ(NULL, strstr(out, "attached-b"));
	close(ack[0]);
}

/* Through a keeper: the keeper detaches on release, the session does not wait. */
TEST_F(att, keeper_attach_trace_release_leaves_it_running)
{
	struct uks_tracee_opts o = { .sz = sizeof(o), .flags = UKS_TRACEE_KEEPER };
	struct uks_tracee_session *ks;
	int cmd[2], ack[2], status, waited = 0;
	struct pollfd pfd;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, uks_tracee_session_create(&o, &ks));
	ASSERT_EQ(0, pipe(cmd));
	ASSERT_EQ(0, pipe(ack));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		close(cmd[1]);
		close(ack[0]);
		target(cmd[0], ack[1]);
	}
	close(cmd[0]);
	close(ack[1]);
	ASSERT_EQ(0, uks_tracee_attach(ks, pid));
	EXPECT_FALSE(tracer_pid_is_zero(pid));
	ASSERT_EQ(1, write(cmd[1], "a", 1));
	pfd = (struct pollfd){ .fd = ack[0], .events = POLLIN };
	for (;;) {
		while (uks_tracee_step(ks, UKS_TRACEE_NOHANG) > 0)
			;
		if (poll(&pfd, 1, 10) == 1)
			break;
		ASSERT_LT(waited++, 2000);
	}
	ASSERT_EQ(1, read(ack[0], &c, 1));
	EXPECT_EQ(1, uks_tracee_detach(ks));
	uks_tracee_session_destroy(ks);
	/* the keeper detaches at the target's next stop, then exits */
	for (waited = 0; !tracer_pid_is_zero(pid); waited++) {
		ASSERT_LT(waited, 2000);
		usleep(10000);
	}
	ASSERT_EQ(1, write(cmd[1], "b", 1));
	ASSERT_EQ(1, poll(&pfd, 1, 20000));
	ASSERT_EQ(1, read(ack[0], &c, 1));
	EXPECT_EQ('b', c);
	close(cmd[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 5);
	rd(self->tr, "trace");
	EXPECT_NE(NULL, strstr(out, "file=\"/uks-tracee/attached-a\""));
	EXPECT_EQ(NULL, strstr(out, "attached-b"));
	close(ack[0]);
}

TEST_F(att, attach_to_nothing_fails)
{
	EXPECT_EQ(-ESRCH, uks_tracee_attach(self->s, 0x3ffffff0));
	EXPECT_EQ(-EINVAL, uks_tracee_attach(self->s, 0));
}

static struct uks_tracee_session *alarm_session;

static void on_alarm(int sig)
{
	(void)sig;
	uks_tracee_stop(alarm_session);
}

TEST_F(att, stop_from_a_signal_handler_detaches)
{
	static char sleep_cmd[] = "sleep", secs[] = "100";
	char *argv[] = { sleep_cmd, secs, NULL };
	struct sigaction sa = { .sa_handler = on_alarm };	/* no SA_RESTART */
	int status;
	pid_t pid;

	alarm_session = self->s;
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, argv, &pid));
	alarm(1);
	EXPECT_EQ(-EINTR, uks_tracee_run(self->s, NULL));
	EXPECT_EQ(0, uks_tracee_nr_threads(self->s));
	EXPECT_EQ(0, kill(pid, 0));		/* still there, untraced */
	EXPECT_TRUE(tracer_pid_is_zero(pid));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
}

TEST_HARNESS_MAIN
