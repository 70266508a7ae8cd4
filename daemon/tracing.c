// SPDX-License-Identifier: MIT
/*
 * uksd: tracing processes for "uks trace".  The CLI starts the command
 * itself (so it stays in the terminal's process group: job control, ^C
 * and exit codes are untouched), stops it before exec, and asks uksd to
 * attach; the child then installs the seccomp filter uksd built for the
 * events enabled in it (UKSD_OP_TRACE_FILTER), so only those calls stop; uksd's socket thread for that request becomes the tracer
 * (ptrace belongs to a thread) until the tracee is gone or the client
 * hangs up.  The events go into the daemon's trace instance, where the
 * user enabled them.
 *
 * One tracing session at a time: a session waits with waitpid(-1), which
 * would steal another session's stops.  A watcher thread notices the
 * client hanging up and wakes the tracer with SIGURG (unblocked only in the
 * tracer thread, handled without SA_RESTART so waitpid returns EINTR).
 *
 * Lock order: tracing.lock is a leaf.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uks/tracee.h>

#include "uksd.h"

static struct {
	pthread_mutex_t lock;
	bool busy;
	pthread_t thread;
	struct uks_tracee_session *session;
} tracing = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void on_wake(int sig)
{
	(void)sig;	/* only to make waitpid() return EINTR */
}

/* Ask the tracer thread to detach; the wake may race waitpid, so repeat. */
static void wake_tracer_locked(void)
{
	if (tracing.session) {
		uks_tracee_stop(tracing.session);
		pthread_kill(tracing.thread, SIGURG);
	}
}

struct watch {
	int fd;
	volatile int done;
};

static void *watch_client(void *arg)
{
	struct watch *w = arg;

	while (!w->done) {
		struct pollfd p = { w->fd, POLLRDHUP, 0 };

		if (poll(&p, 1, 100) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
			pthread_mutex_lock(&tracing.lock);
			wake_tracer_locked();
			pthread_mutex_unlock(&tracing.lock);
		}
	}
	return NULL;
}

static int trace_attach(const char *arg, const char *how, int fd)
{
	struct sigaction sa = { .sa_handler = on_wake };	/* no SA_RESTART */
	struct uks_tracee_session *s;
	struct watch w = { fd, 0 };
	pthread_t watcher;
	sigset_t wake;
	char *end;
	long pid = strtol(arg, &end, 10);
	int ret;

	if (*end || pid <= 0)
		return -EINVAL;
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
	ret = uks_tracee_session_create(NULL, &s);
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
		ret = uks_sock_send(fd, "attached\n", 9);
		if (!ret && pthread_create(&watcher, NULL, watch_client, &w) == 0) {
			ret = uks_tracee_run(s, NULL);
			w.done = 1;
			pthread_join(watcher, NULL);
		} else if (!ret) {
			ret = uks_tracee_run(s, NULL);
		}
		if (ret == -ECHILD)
			ret = 0;	/* everything exited */
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
