// SPDX-License-Identifier: MIT
/*
 * uksd: tracing processes for "uks trace".  The ptrace attachment is not
 * ours: uks trace forks a keeper (lib/tracee/keeper.c) with the caller's
 * own credentials, which seizes the command (or the -p process) and asks
 * us to be its session (UKSD_OP_TRACE_ATTACH).  Its connection then
 * carries one message per stop up and the resume back; this request's
 * thread runs the session (uks_tracee_run) and writes the events into the
 * daemon's trace instance.  If uksd stops or dies, the keeper goes on
 * alone and the traced program runs on as if untraced.  The command is
 * uks trace's child, in the terminal's process group, and installs the
 * seccomp filter uksd built for the events enabled in it
 * (UKSD_OP_TRACE_FILTER), so only those calls stop.
 *
 * Who may: the kernel's rule on behalf of the peer (SO_PEERCRED): it must
 * be allowed to ptrace the pid itself (__uks_ptrace_may_access()), and it
 * must be the pid's tracer already (TracerPid), as its keeper is; else
 * EPERM, and nothing is traced.
 *
 * One session at a time (tracing.busy); uksd_stop_tracing() makes it
 * release its keeper: SIGURG, unblocked only in the session's thread and
 * handled without SA_RESTART, interrupts its read.
 *
 * Lock order: tracing.lock is a leaf.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <uks/tracee.h>

#include "core/proc_status.h"
#include "core/ptrace_access.h"
#include "uksd.h"

static struct {
	pthread_mutex_t lock;
	bool busy;
	pthread_t thread;
	struct uks_tracee_session *session;
	const char *mount;
} tracing = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_wake(int sig)
{
	(void)sig;	/* only to make the session's read() return EINTR */
}

/* Ask the session to release its keeper; the wake may race read, so repeat. */
static void wake_tracer_locked(void)
{
	if (tracing.session) {
		uks_tracee_stop(tracing.session);
		pthread_kill(tracing.thread, SIGURG);
	}
}

void uksd_tracing_set_mount(const char *mount)
{
	tracing.mount = mount;
}

/* The peer may trace @pid: the kernel's rule, and it is @pid's tracer now. */
static int may_trace(int fd, pid_t pid)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);
	struct uks_peer peer;
	int ret;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &uc, &len))
		return -errno;
	peer = (struct uks_peer){ uc.pid, uc.uid, uc.gid };
	ret = __uks_ptrace_may_access(&peer, pid);
	if (ret)
		return ret;
	return proc_status_pid(pid, "TracerPid", 0) == uc.pid && uc.pid > 0 ? 0 : -EPERM;
}

static int trace_attach(const char *arg, const char *how, int fd)
{
	struct sigaction sa = { .sa_handler = on_wake };	/* no SA_RESTART */
	struct uks_tracee_opts o = { .sz = sizeof(o), .flags = UKS_TRACEE_RELAY };
	struct uks_tracee_session *s;
	char line[4200];
	sigset_t wake;
	char *end;
	long pid = strtol(arg, &end, 10);
	int ret;

	if (*end || pid <= 0 || pid > INT_MAX)
		return -EINVAL;
	ret = may_trace(fd, (pid_t)pid);
	if (ret)
		return ret;
	pthread_mutex_lock(&tracing.lock);
	if (tracing.busy) {
		pthread_mutex_unlock(&tracing.lock);
		return -EBUSY;
	}
	tracing.busy = true;
	tracing.thread = pthread_self();
	pthread_mutex_unlock(&tracing.lock);

	sigaction(SIGURG, &sa, NULL);
	sigemptyset(&wake);
	sigaddset(&wake, SIGURG);
	pthread_sigmask(SIG_UNBLOCK, &wake, NULL);
	o.relay_fd = dup(fd);	/* the session's own; the server closes @fd */
	ret = o.relay_fd < 0 ? -errno : uks_tracee_session_create(&o, &s);
	if (ret && o.relay_fd >= 0)
		close(o.relay_fd);
	if (!ret) {
		/* "filtered": the process installs our seccomp filter itself. */
		ret = !strcmp(how, "filtered") ? uks_tracee_attach_filtered(s, (pid_t)pid)
					       : uks_tracee_attach(s, (pid_t)pid);
		if (ret)
			uks_tracee_session_destroy(s);
	}
	if (!ret) {
		pthread_mutex_lock(&tracing.lock);
		tracing.session = s;
		pthread_mutex_unlock(&tracing.lock);
		/* "attached [MOUNT]": where the user reads the trace, if mounted */
		snprintf(line, sizeof(line), "attached%s%s\n", tracing.mount ? " " : "",
			 tracing.mount ? tracing.mount : "");
		ret = uks_sock_send(fd, line, strlen(line));
		if (!ret)
			ret = uks_tracee_run(s, NULL);
		if (ret == -ECHILD || ret == -EINTR)
			ret = 0;	/* everything exited, or we let the keeper go */
		pthread_mutex_lock(&tracing.lock);
		tracing.session = NULL;
		pthread_mutex_unlock(&tracing.lock);
		uks_tracee_session_destroy(s);
	}
	pthread_sigmask(SIG_BLOCK, &wake, NULL);
	pthread_mutex_lock(&tracing.lock);
	tracing.busy = false;
	pthread_mutex_unlock(&tracing.lock);
	return ret;
}

int uksd_handle_request(int op, const char *arg, const void *data, size_t len, int fd,
			void *ctx)
{
	(void)len;
	(void)ctx;
	switch (op) {
	case UKSD_OP_TRACE_ATTACH:
		return trace_attach(arg, data, fd);
	case UKSD_OP_TRACE_FILTER: {
		static char prog[65536];	/* BPF_MAXINSNS * 8 */
		static pthread_mutex_t prog_lock = PTHREAD_MUTEX_INITIALIZER;
		ssize_t n;
		int ret;

		pthread_mutex_lock(&prog_lock);
		n = uks_tracee_filter(prog, sizeof(prog));
		ret = n < 0 ? (int)n : uks_sock_send(fd, prog, (size_t)n);
		pthread_mutex_unlock(&prog_lock);
		return ret;
	}
	default:
		return -EOPNOTSUPP;
	}
}

void uksd_stop_tracing(void)
{
	const struct timespec tick = { 0, 20 * 1000 * 1000 };

	for (int i = 0; i < 250; i++) {
		bool busy;

		pthread_mutex_lock(&tracing.lock);
		busy = tracing.busy;
		wake_tracer_locked();
		pthread_mutex_unlock(&tracing.lock);
		if (!busy)
			return;
		nanosleep(&tick, NULL);
	}
}
