// SPDX-License-Identifier: MIT
/*
 * Tracee sessions: create/destroy, spawn a command, attach to a running
 * process, detach, and the wait loop around loop.c's stop handling.
 *
 * Spawn: fork; the child waits on a pipe until the parent has
 * PTRACE_SEIZEd it, installs the seccomp filter (seccomp.c) and execs.
 * Without a keeper, the options have EXITKILL: once its tracer is gone a
 * filtered command's traced calls fail with ENOSYS, so it dies with the
 * tracer rather than run on broken.  With UKS_TRACEE_KEEPER a keeper
 * process (keeper.c) forks and holds the command, without EXITKILL, and
 * relays its stops here: the command then runs on correctly whatever
 * happens to this process.  SEIZE, not
 * TRACEME, so that group-stops are reported as PTRACE_EVENT_STOP and can
 * be left to the real parent with PTRACE_LISTEN.  Everything the child
 * does between fork and exec is async-signal-safe (the path is resolved
 * and the filter built before the fork).
 *
 * Attach: every thread of the process (re-reading /proc/PID/task until no
 * new one shows up) is seized and interrupted; a filter cannot be put into
 * a running process, so attached threads are stepped with PTRACE_SYSCALL
 * (two stops per system call) and events are chosen at each stop.
 *
 * Detach: each thread is interrupted, waited for and PTRACE_DETACHed with
 * the signal it was about to receive, if any; children it forked meanwhile
 * are detached too.  Group-stopped threads stay stopped.
 *
 * The session is a context object; the only process-wide state is the
 * event registration (once per process, in the event files).
 *
 * Lock order: none; a session belongs to one thread (ptrace's rule).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/proc_status.h"
#include "tracee/events.h"
#include "tracee/internal.h"

#define TRACE_OPTS	TRACEE_PTRACE_OPTS
#define OPTS_FLAGS	(UKS_TRACEE_NO_SECCOMP | UKS_TRACEE_KEEPER | UKS_TRACEE_RELAY | \
			 UKS_TRACEE_EVERY_SYSCALL)

extern char **environ;

static unsigned int hash_tid(pid_t tid)
{
	return (unsigned int)tid % TRACEE_HASH;
}

struct tracee_thread *__uks_tracee_find(struct uks_tracee_session *s, pid_t tid)
{
	for (struct tracee_thread *t = s->hash[hash_tid(tid)]; t; t = t->next)
		if (t->task.pid == tid)
			return t;
	return NULL;
}

void __uks_tracee_read_comm(pid_t tid, char comm[16])
{
	proc_comm_read(tid, comm);
}

pid_t __uks_tracee_read_tgid(pid_t tid)
{
	return proc_status_pid(tid, "Tgid", tid);
}

pid_t __uks_tracee_read_ppid(pid_t tid)
{
	return proc_status_pid(tid, "PPid", 0);
}

struct tracee_thread *__uks_tracee_add(struct uks_tracee_session *s, pid_t tid, pid_t tgid,
				       unsigned int flags)
{
	struct tracee_thread *t = uks_kzalloc(sizeof(*t));
	unsigned int h = hash_tid(tid);

	if (!t)
		return NULL;
	t->task.pid = tid;
	t->task.tgid = tgid;
	t->flags = flags;
	t->nr = -1;
	t->prio = 120;
	__uks_tracee_read_comm(tid, t->task.comm);
	__uks_tracee_sw_track(tid, tgid, t->task.comm);
	t->next = s->hash[h];
	s->hash[h] = t;
	s->nr_threads++;
	s->stats.threads++;
	return t;
}

static void unhash(struct uks_tracee_session *s, struct tracee_thread *t)
{
	struct tracee_thread **pp = &s->hash[hash_tid(t->task.pid)];

	while (*pp && *pp != t)
		pp = &(*pp)->next;
	if (*pp)
		*pp = t->next;
}

void __uks_tracee_remove(struct uks_tracee_session *s, struct tracee_thread *t)
{
	unhash(s, t);
	__uks_tracee_sw_untrack(t->task.pid);
	s->nr_threads--;
	uks_kfree(t->exec_file);
	uks_kfree(t);
}

/* @t's thread id became @tid (a non-leader exec'd: it is the leader now). */
void __uks_tracee_rekey(struct uks_tracee_session *s, struct tracee_thread *t, pid_t tid)
{
	unsigned int h = hash_tid(tid);

	unhash(s, t);
	__uks_tracee_sw_untrack(t->task.pid);
	__uks_tracee_sw_track(tid, t->task.tgid, t->task.comm);
	t->task.pid = tid;
	t->next = s->hash[h];
	s->hash[h] = t;
}

/**
 * uks_tracee_register_events - register the events a session writes
 *
 * syscalls:*, raw_syscalls:*, sched:sched_process_{fork,exec,exit},
 * sched:sched_switch and task:task_{newtask,rename}, once per process (session creation does it;
 * call it to see the events in a trace instance before any session
 * exists).  Returns 0 or -ENOMEM.
 */
UKS_EXPORT int uks_tracee_register_events(void)
{
	int ret = __uks_tracee_syscall_events_init();

	return ret ? ret : __uks_tracee_sched_events_init();
}

/**
 * uks_tracee_session_create - a new, empty session
 * @opts:	options or NULL (sz must be set; unknown trailing bytes zero)
 * @out:	the session
 *
 * Registers the events on first use.  Returns 0, -EINVAL or -ENOMEM.
 */
UKS_EXPORT int uks_tracee_session_create(const struct uks_tracee_opts *opts,
					 struct uks_tracee_session **out)
{
	struct uks_tracee_session *s;
	int ret;

	*out = NULL;
	if (opts && opts->sz < offsetof(struct uks_tracee_opts, flags) + sizeof(opts->flags))
		return -EINVAL;
	if (opts && (opts->flags & ~OPTS_FLAGS))
		return -EINVAL;
	if (opts && (opts->flags & UKS_TRACEE_RELAY) &&
	    (opts->sz < offsetof(struct uks_tracee_opts, relay_fd) + sizeof(opts->relay_fd) ||
	     opts->relay_fd < 0 || (opts->flags & UKS_TRACEE_KEEPER)))
		return -EINVAL;
	ret = uks_tracee_register_events();
	if (ret)
		return ret;
	s = uks_kzalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->flags = opts ? opts->flags : 0;
	s->relay_fd = s->wake_fd = -1;
	if (s->flags & UKS_TRACEE_RELAY) {
		s->relayed = true;
		__uks_tracee_relay_open(s, opts->relay_fd);
	}
	*out = s;
	return 0;
}

/**
 * uks_tracee_session_destroy - detach every tracee and free the session
 * @s:		session (NULL is a no-op)
 */
UKS_EXPORT void uks_tracee_session_destroy(struct uks_tracee_session *s)
{
	if (!s)
		return;
	uks_tracee_detach(s);
	/* A keeper still passing a command's stops through is not waited for. */
	if (s->keeper > 0)
		waitpid(s->keeper, NULL, WNOHANG);
	__uks_tracee_ustack_free(s);
	uks_kfree(s);
}

/* The file execv() would run, resolved before fork (execvp allocates). */
static char *resolve_path(const char *file)
{
	const char *path = secure_getenv("PATH");
	size_t flen = strlen(file);
	char *buf;

	if (strchr(file, '/')) {
		buf = uks_kmalloc(flen + 1);
		if (buf)
			memcpy(buf, file, flen + 1);
		return buf;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	buf = uks_kmalloc(strlen(path) + flen + 2);
	if (!buf)
		return NULL;
	for (const char *p = path; ; p++) {
		const char *end = strchrnul(p, ':');
		size_t dlen = (size_t)(end - p);

		memcpy(buf, p, dlen);
		if (!dlen)
			buf[dlen++] = '.';
		buf[dlen] = '/';
		memcpy(buf + dlen + 1, file, flen + 1);
		if (access(buf, X_OK) == 0 || !*end)
			break;
		p = end;
	}
	return buf;
}

/**
 * uks_tracee_spawn - run a command under the session
 * @s:		session
 * @argv:	NULL-terminated argument vector; argv[0] is looked up in PATH
 * @pid:	set to the command's pid (may be NULL)
 *
 * The command gets the caller's environment, file descriptors, signal
 * mask and dispositions.  Its system calls stop only for the events that
 * are enabled now.  As from a shell, it exits with 127 when it is not
 * found and 126 when it cannot be executed or the filter cannot be
 * installed.  One spawned command per session (its status is what uks_tracee_run() returns).  Without a
 * keeper it is the caller's child and dies with the caller
 * (PTRACE_O_EXITKILL); with UKS_TRACEE_KEEPER it is the keeper's child,
 * in the caller's process group, and runs on if the caller dies.
 *
 * Returns 0, -EBUSY (already spawned), -EINVAL (a UKS_TRACEE_RELAY
 * session), -ENOMEM, or the -errno of fork or PTRACE_SEIZE (-EPERM where
 * ptrace is not allowed).
 */
UKS_EXPORT int uks_tracee_spawn(struct uks_tracee_session *s, char *const argv[], pid_t *pid)
{
	struct sock_fprog prog = { 0 };
	bool step = s->flags & UKS_TRACEE_NO_SECCOMP;
	struct tracee_thread *t;
	char *path;
	int p[2], ret;
	pid_t child;

	if (s->spawned)
		return -EBUSY;
	if (!argv || !argv[0] || (s->flags & UKS_TRACEE_RELAY))
		return -EINVAL;
	path = resolve_path(argv[0]);
	if (!path)
		return -ENOMEM;
	if (!step && (ret = __uks_tracee_seccomp_build(&prog,
						       s->flags & UKS_TRACEE_EVERY_SYSCALL))) {
		uks_kfree(path);
		return ret;
	}
	if (s->flags & UKS_TRACEE_KEEPER) {
		ret = __uks_tracee_start_kept(s, path, argv, prog.filter ? &prog : NULL, step,
					      &child);
		if (ret)
			goto out;
		t = __uks_tracee_add(s, child, child, step ? TT_STEP : TT_SEEN);
		if (!t) {
			kill(child, SIGKILL);
			ret = -ENOMEM;
			goto out;
		}
		s->spawned = child;
		if (pid)
			*pid = child;
		goto out;
	}
	if (pipe2(p, O_CLOEXEC)) {
		ret = -errno;
		goto out;
	}
	child = fork();
	if (child < 0) {
		ret = -errno;
		close(p[0]);
		close(p[1]);
		goto out;
	}
	if (child == 0) {
		char c;
		ssize_t n;

		close(p[1]);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);
		close(p[0]);
		if (prog.filter && __uks_tracee_seccomp_install(&prog))
			_exit(126);
		execve(path, argv, environ);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(p[0]);
	if (ptrace(PTRACE_SEIZE, child, 0, TRACE_OPTS | PTRACE_O_EXITKILL)) {
		ret = -errno;
		close(p[1]);
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		goto out;
	}
	/* Stepping needs a first stop to start PTRACE_SYSCALL from. */
	if (step)
		ptrace(PTRACE_INTERRUPT, child, 0, 0);
	t = __uks_tracee_add(s, child, child, step ? TT_STEP : TT_SEEN);
	if (write(p[1], "g", 1) != 1 || !t) {
		ret = t ? -EIO : -ENOMEM;
		close(p[1]);
		kill(child, SIGKILL);
		while (waitpid(child, NULL, __WALL) < 0 && errno == EINTR)
			;
		if (t)
			__uks_tracee_remove(s, t);
		goto out;
	}
	close(p[1]);
	s->spawned = child;
	if (pid)
		*pid = child;
	ret = 0;
out:
	if (prog.filter)
		__uks_tracee_seccomp_free(&prog);
	uks_kfree(path);
	return ret;
}

/* Seize the threads of @pid not yet seized; returns how many were new. */
static int seize_threads(struct uks_tracee_session *s, pid_t pid, unsigned int how, int *err)
{
	char path[64];
	struct dirent *de;
	int added = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		*err = errno == ENOENT ? -ESRCH : -errno;
		return 0;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		if (tid <= 0 || __uks_tracee_find(s, tid))
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, TRACE_OPTS)) {
			/* gone, or auto-attached already through a clone we have not seen */
			if (tid == pid && errno != ESRCH)
				*err = -errno;
			continue;
		}
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		if (!__uks_tracee_add(s, tid, pid, how)) {
			*err = -ENOMEM;
			break;
		}
		added++;
	}
	closedir(d);
	return added;
}

static int attach(struct uks_tracee_session *s, pid_t pid, unsigned int how)
{
	int err = 0, rounds = 0;

	if (pid <= 0)
		return -EINVAL;
	if (s->flags & UKS_TRACEE_RELAY) {
		/* the keeper has seized them: threads are added at their first stop */
		if (kill(pid, 0) && errno == ESRCH)
			return -ESRCH;
		s->relay_step = how & TT_STEP;
		return 0;
	}
	if (s->flags & UKS_TRACEE_KEEPER) {
		if (s->relayed)
			return -EBUSY;	/* one keeper per session */
		s->relay_step = how & TT_STEP;
		return __uks_tracee_attach_kept(s, pid, how & TT_STEP);
	}
	while (seize_threads(s, pid, how, &err) > 0 && !err && ++rounds < 100)
		;
	if (err && !__uks_tracee_find(s, pid))
		return err;
	return err == -ENOMEM ? err : 0;
}

/**
 * uks_tracee_attach - trace a running process and all its threads
 * @s:		session
 * @pid:	process id
 *
 * Attached processes are not killed when the tracer goes away, and are
 * stepped through every system call (no seccomp filter can be installed
 * from outside).  With UKS_TRACEE_KEEPER a keeper seizes them (its
 * threads join the session at their first stop); with UKS_TRACEE_RELAY
 * the keeper behind the session has.  Returns 0, -ESRCH, -EPERM (ptrace
 * not allowed, or it is traced already), -EBUSY (a keeper already) or
 * -ENOMEM.
 */
UKS_EXPORT int uks_tracee_attach(struct uks_tracee_session *s, pid_t pid)
{
	return attach(s, pid, TT_STEP);
}

/**
 * uks_tracee_attach_filtered - attach to a process that installs our filter
 * @s:		session
 * @pid:	process id; it must call uks_tracee_install_filter() with a
 *		program from uks_tracee_filter() right after this returns
 *		(uks trace's child does, before it execs the command)
 *
 * Its threads are not stepped: only the calls the filter traces stop.
 * Returns what uks_tracee_attach() does.
 */
UKS_EXPORT int uks_tracee_attach_filtered(struct uks_tracee_session *s, pid_t pid)
{
	return attach(s, pid, 0);
}

/* Wait for @t's next stop and detach it there; it may already be gone. */
static void detach_one(struct uks_tracee_session *s, struct tracee_thread *t)
{
	pid_t tid = t->task.pid;
	int status, sig = 0;

	if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) && errno == ESRCH) {
		/* Not traced any more or a zombie: reap what is left, if ours. */
		waitpid(tid, &status, __WALL | WNOHANG);
		__uks_tracee_remove(s, t);
		return;
	}
	for (;;) {
		pid_t r = waitpid(tid, &status, __WALL);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) {
			if (r == s->spawned && r > 0) {
				s->spawned_status = status;
				s->spawned_done = true;
			}
			__uks_tracee_remove(s, t);
			return;
		}
		if (WIFSTOPPED(status))
			break;
	}
	if (status >> 16 == PTRACE_EVENT_FORK || status >> 16 == PTRACE_EVENT_VFORK ||
	    status >> 16 == PTRACE_EVENT_CLONE) {
		unsigned long child;

		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &child) &&
		    !__uks_tracee_find(s, (pid_t)child))
			__uks_tracee_add(s, (pid_t)child, __uks_tracee_read_tgid((pid_t)child), 0);
	} else if (status >> 16 == 0 && WSTOPSIG(status) != (SIGTRAP | 0x80)) {
		sig = WSTOPSIG(status);		/* signal-delivery-stop: deliver it */
	}
	ptrace(PTRACE_DETACH, tid, 0, sig);
	__uks_tracee_remove(s, t);
}

/**
 * uks_tracee_detach - detach every tracee; they run on untraced
 * @s:		session
 *
 * Spawned commands keep their seccomp filter: their traced system calls
 * fail with ENOSYS from then on (the kernel's rule), so detach them only
 * to leave them to die or be killed.  Returns the number of threads
 * detached.
 */
UKS_EXPORT int uks_tracee_detach(struct uks_tracee_session *s)
{
	int n = 0;

	if (s->relayed) {
		/* The keeper lets them go (or passes a filtered one through). */
		struct relay_cmd c = { RELAY_RELEASE, 0, 0, 0 };

		if (s->relay_fd >= 0) {
			if (send(s->relay_fd, &c, sizeof(c), MSG_NOSIGNAL) < 0)
				n = 0;
			__uks_tracee_relay_close(s);
		}
		for (unsigned int h = 0; h < TRACEE_HASH; h++) {
			while (s->hash[h]) {
				__uks_tracee_remove(s, s->hash[h]);
				n++;
			}
		}
		return n;
	}

	for (unsigned int h = 0; h < TRACEE_HASH; h++) {
		while (s->hash[h]) {
			detach_one(s, s->hash[h]);
			n++;
		}
	}
	return n;
}

/**
 * uks_tracee_step - wait for one stop or exit of a tracee and handle it
 * @s:		session
 * @flags:	UKS_TRACEE_NOHANG: do not block
 *
 * Returns 1 when something was handled, 0 if nothing was ready (NOHANG),
 * -ECHILD when no tracee is left, -EINTR when a signal interrupted the
 * wait, or another -errno.
 */
UKS_EXPORT int uks_tracee_step(struct uks_tracee_session *s, int flags)
{
	int status;
	pid_t pid;

	if (s->relayed)
		return __uks_tracee_relay_wait(s, flags);
	if (!s->nr_threads)
		return -ECHILD;
	pid = waitpid(-1, &status, __WALL | (flags & UKS_TRACEE_NOHANG ? WNOHANG : 0));
	if (pid < 0)
		return -errno;
	if (pid == 0)
		return 0;
	return __uks_tracee_handle(s, pid, status);
}

/**
 * uks_tracee_run - trace until every tracee is gone
 * @s:		session
 * @status:	set to the spawned command's wait status (may be NULL)
 *
 * Follows forks, so it returns when the spawned command and everything it
 * started have exited.  After uks_tracee_stop() (from a signal handler
 * installed without SA_RESTART, or before the call) it detaches all and
 * returns -EINTR.  Returns 0, -EINTR, or -ECHILD when nothing was spawned
 * and no tracee was left.
 */
UKS_EXPORT int uks_tracee_run(struct uks_tracee_session *s, int *status)
{
	int ret = 0;

	for (;;) {
		if (s->stop) {
			uks_tracee_detach(s);
			s->stop = 0;
			ret = -EINTR;
			break;
		}
		ret = uks_tracee_step(s, 0);
		if (ret == -ECHILD) {
			ret = 0;
			break;
		}
		if (ret < 0 && ret != -EINTR)
			break;
	}
	if (status && s->spawned_done)
		*status = s->spawned_status;
	if (!ret && !s->spawned_done && s->spawned)
		ret = -ECHILD;
	return ret;
}

/**
 * uks_tracee_stop - make uks_tracee_run() detach and return
 * @s:		session
 *
 * Async-signal-safe: for a SIGTERM/SIGINT handler.
 */
UKS_EXPORT void uks_tracee_stop(struct uks_tracee_session *s)
{
	s->stop = 1;
}

/** uks_tracee_nr_threads - threads the session traces now */
UKS_EXPORT int uks_tracee_nr_threads(const struct uks_tracee_session *s)
{
	return s->nr_threads;
}

/** uks_tracee_get_stats - copy the session's counters */
UKS_EXPORT void uks_tracee_get_stats(const struct uks_tracee_session *s,
				     struct uks_tracee_stats *st)
{
	*st = s->stats;
}
