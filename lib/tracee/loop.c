// SPDX-License-Identifier: MIT
/*
 * The stops of a tracee and what each one writes: the part of the session
 * that turns waitpid() results into kernel events and resumes the tracee
 * as if nobody were watching.
 *
 *   seccomp stop (spawned)	sys_enter events; PTRACE_SYSCALL when the exit
 *				is wanted, else PTRACE_CONT
 *   syscall-entry-stop (attached, stepped)	sys_enter events
 *   syscall-exit-stop		sys_exit events with the entry's number
 *   PTRACE_EVENT_FORK/VFORK/CLONE	task_newtask, sched_process_fork
 *   PTRACE_EVENT_EXEC		task_rename, sched_process_exec
 *   PTRACE_EVENT_EXIT		sched_process_exit
 *   PTRACE_EVENT_STOP		first stop: resume; group-stop: PTRACE_LISTEN
 *   signal-delivery-stop	re-inject the signal
 *
 * Entry and exit are told apart by PTRACE_GET_SYSCALL_INFO, never by
 * counting, so a stop that went missing (a tracee killed inside a call,
 * an attach in the middle of one) cannot swap them.  Records are written
 * while the tracee is stopped, as the tracee (uks_trace_set_task()), so
 * common_pid and comm are its own and eprobes read its memory.
 *
 * A tracee that is gone makes ptrace() fail with ESRCH; that is ignored
 * here: its exit is reported by waitpid() and handled then.
 *
 * Lock order: none (one thread owns the session).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/slab.h>

#include "trace/event_pids.h"
#include "trace/origin.h"
#include "tracee/events.h"
#include "tracee/internal.h"

#define X32_SYSCALL_BIT	0x40000000ul
#define EXEC_PATH_MAX	4096

/* Write @t's records: hits counted into the session's stats. */
static void as_task(struct tracee_thread *t)
{
	uks_trace_set_task(&t->task);
}

static void as_self(void)
{
	uks_trace_set_task(NULL);
	__uks_trace_set_origin_stack(NULL, NULL);
}

/* As @t, stopped at a system call: a stacktrace trigger unwinds its stack. */
static void as_stopped_task(struct uks_tracee_session *s, struct tracee_thread *t)
{
	s->ustack_req = (struct uks_tracee_ustack_req){ s, t->task.pid, t->task.tgid, t->ip, t->sp };
	as_task(t);
	__uks_trace_set_origin_stack(__uks_tracee_ustack, &s->ustack_req);
}

/**
 * __uks_tracee_resume - let @t run on
 * @sig:	signal to deliver (0 for none)
 *
 * PTRACE_SYSCALL when the thread is stepped or an exit stop is wanted,
 * PTRACE_CONT otherwise.
 */
void __uks_tracee_resume(struct uks_tracee_session *s, struct tracee_thread *t, int sig)
{
	int req = t->flags & (TT_STEP | TT_WANT_EXIT) ? PTRACE_SYSCALL : PTRACE_CONT;

	__uks_tracee_ptrace(s, req, t->task.pid, 0, (void *)(long)sig);
}

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = -1;

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static short read_oom_score_adj(pid_t tid)
{
	char path[64], buf[32];

	snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int)tid);
	return read_small(path, buf, sizeof(buf)) ? 0 : (short)atoi(buf);
}

/* The kernel's p->prio: /proc's "priority" field (prio - MAX_RT_PRIO) + 100. */
static int read_prio(pid_t tid, int fallback)
{
	char path[64], buf[1024], *p;
	int field = 2;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	if (read_small(path, buf, sizeof(buf)) || !(p = strrchr(buf, ')')))
		return fallback;
	/* after "pid (comm)": field 3 is the state, field 18 the priority */
	for (p++; *p && field < 18; p++)
		if (*p == ' ')
			field++;
	return *p ? atoi(p) + 100 : fallback;
}

/* A NUL-terminated string from the tracee, page by page; 0 or -EFAULT. */
static int read_string(pid_t tid, unsigned long addr, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len - 1) {
		size_t chunk = 4096 - ((addr + got) & 4095);
		struct iovec local, remote;
		ssize_t n;

		if (chunk > len - 1 - got)
			chunk = len - 1 - got;
		local = (struct iovec){ buf + got, chunk };
		remote = (struct iovec){ (void *)(addr + got), chunk };
		n = process_vm_readv(tid, &local, 1, &remote, 1, 0);
		if (n <= 0)
			return -EFAULT;
		if (memchr(buf + got, '\0', (size_t)n))
			return 0;
		got += (size_t)n;
	}
	buf[len - 1] = '\0';
	return 0;
}

/* bprm->filename of an execve/execveat about to run (sched_process_exec). */
static void save_exec_file(struct tracee_thread *t)
{
	bool at = t->nr == SYS_execveat;
	char *buf;

	uks_kfree(t->exec_file);
	t->exec_file = NULL;
	if (!__uks_tracee_sched_on(UKS_TRACEE_SCHED_EXEC))
		return;
	buf = uks_kmalloc(EXEC_PATH_MAX);
	if (!buf)
		return;
	if (read_string(t->task.pid, t->args[at ? 1 : 0], buf, EXEC_PATH_MAX)) {
		uks_kfree(buf);
		return;
	}
	/* do_execveat_common: a relative path under a dirfd is /dev/fd/N/path */
	if (at && buf[0] != '/' && (int)t->args[0] != AT_FDCWD) {
		char *full = uks_kmalloc(EXEC_PATH_MAX);

		if (full) {
			if (buf[0])
				snprintf(full, EXEC_PATH_MAX, "/dev/fd/%d/%s", (int)t->args[0], buf);
			else
				snprintf(full, EXEC_PATH_MAX, "/dev/fd/%d", (int)t->args[0]);
		}
		uks_kfree(buf);
		buf = full;
	}
	t->exec_file = buf;
}

static void syscall_enter(struct uks_tracee_session *s, struct tracee_thread *t,
			  unsigned int arch, unsigned long nr, const uint64_t args[6])
{
	t->flags |= TT_IN_SYSCALL;
	t->flags &= ~TT_WANT_EXIT;
	/* compat and x32 calls have no events, as on the kernel */
	if (arch != AUDIT_ARCH_X86_64 || nr & X32_SYSCALL_BIT) {
		t->nr = -1;
		return;
	}
	t->nr = (long)nr;
	for (int i = 0; i < 6; i++)
		t->args[i] = (unsigned long)args[i];
	if (__uks_tracee_syscall_enter_on(t->nr)) {
		as_stopped_task(s, t);
		s->stats.events += (unsigned long)__uks_tracee_emit_sys_enter(t->nr, t->args);
		as_self();
	}
	if (t->nr == SYS_execve || t->nr == SYS_execveat)
		save_exec_file(t);
	if (__uks_tracee_syscall_exit_on(t->nr) ||
	    (t->nr == SYS_prctl && t->args[0] == PR_SET_NAME &&
	     __uks_tracee_sched_on(UKS_TRACEE_TASK_RENAME)))
		t->flags |= TT_WANT_EXIT;
}

static void syscall_exit(struct uks_tracee_session *s, struct tracee_thread *t, long rval)
{
	long nr = t->nr;

	t->flags &= ~(TT_IN_SYSCALL | TT_WANT_EXIT);
	t->nr = -1;
	if (nr < 0)
		return;
	if (__uks_tracee_syscall_exit_on(nr)) {
		as_stopped_task(s, t);
		s->stats.events += (unsigned long)__uks_tracee_emit_sys_exit(nr, rval);
		as_self();
	}
	/* prctl(PR_SET_NAME) succeeded: __set_task_comm() fires task_rename */
	if (nr == SYS_prctl && t->args[0] == PR_SET_NAME && rval == 0) {
		char newcomm[16];

		__uks_tracee_read_comm(t->task.pid, newcomm);
		if (__uks_tracee_sched_on(UKS_TRACEE_TASK_RENAME)) {
			as_task(t);
			s->stats.events += (unsigned long)__uks_tracee_emit_rename(t->task.pid,
				t->task.comm, newcomm, read_oom_score_adj(t->task.pid));
			as_self();
		}
		memcpy(t->task.comm, newcomm, sizeof(newcomm));
	}
}

/* A syscall-entry/exit-stop or a seccomp stop. */
static void syscall_stop(struct uks_tracee_session *s, struct tracee_thread *t, bool seccomp)
{
	struct __ptrace_syscall_info info;

	memset(&info, 0, sizeof(info));
	if (__uks_tracee_ptrace(s, PTRACE_GET_SYSCALL_INFO, t->task.pid, (void *)sizeof(info),
				&info) <= 0)
		return;
	t->ip = (unsigned long)info.instruction_pointer;
	t->sp = (unsigned long)info.stack_pointer;
	switch (info.op) {
	case PTRACE_SYSCALL_INFO_SECCOMP:
		s->stats.seccomp_stops++;
		syscall_enter(s, t, info.arch, info.seccomp.nr, info.seccomp.args);
		break;
	case PTRACE_SYSCALL_INFO_ENTRY:
		s->stats.syscall_stops++;
		syscall_enter(s, t, info.arch, info.entry.nr, info.entry.args);
		break;
	case PTRACE_SYSCALL_INFO_EXIT:
		s->stats.syscall_stops++;
		/* an exit whose entry we did not see (attached inside the call): skip */
		if (t->flags & TT_IN_SYSCALL)
			syscall_exit(s, t, info.exit.rval);
		break;
	default:
		break;
	}
	(void)seccomp;
}

/* copy_process()'s clone_flags for the call @t is in (task_newtask). */
static unsigned long clone_flags_of(struct uks_tracee_session *s, pid_t tid)
{
	struct user_regs_struct regs;
	unsigned long flags = 0;

	if (__uks_tracee_ptrace(s, PTRACE_GETREGS, tid, 0, &regs))
		return 0;
	switch (regs.orig_rax) {
	case SYS_vfork:
		return CLONE_VFORK | CLONE_VM;
	case SYS_clone:
		return (regs.rdi & 0xffffffffu) & ~0xfful;	/* without CSIGNAL */
	case SYS_clone3: {
		struct iovec local = { &flags, sizeof(flags) };
		struct iovec remote = { (void *)regs.rdi, sizeof(flags) };

		if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != sizeof(flags))
			flags = 0;
		return flags;
	}
	default:	/* fork: no flags, SIGCHLD is the exit signal */
		return 0;
	}
}

static void fork_event(struct uks_tracee_session *s, struct tracee_thread *t)
{
	unsigned long msg, flags = clone_flags_of(s, t->task.pid);
	struct tracee_thread *c;
	pid_t child, tgid;

	if (__uks_tracee_ptrace(s, PTRACE_GETEVENTMSG, t->task.pid, 0, &msg))
		return;
	child = (pid_t)msg;
	tgid = flags & CLONE_THREAD ? t->task.tgid : child;
	c = __uks_tracee_find(s, child);
	if (!c)
		c = __uks_tracee_add(s, child, tgid, t->flags & TT_STEP);
	if (c) {
		c->task.tgid = tgid;
		memcpy(c->task.comm, t->task.comm, sizeof(c->task.comm));
	}
	/* options/event-fork: the child joins its parent's pid lists. */
	__uks_trace_task_fork(t->task.pid, child);
	if (__uks_tracee_sched_on(UKS_TRACEE_TASK_NEWTASK) ||
	    __uks_tracee_sched_on(UKS_TRACEE_SCHED_FORK)) {
		as_task(t);
		s->stats.events += (unsigned long)__uks_tracee_emit_newtask(
			child, t->task.comm, flags, read_oom_score_adj(t->task.pid));
		s->stats.events += (unsigned long)__uks_tracee_emit_fork(t->task.comm, t->task.pid,
			t->task.comm, child);
		as_self();
	}
}

static void exit_event(struct uks_tracee_session *s, struct tracee_thread *t)
{
	t->flags &= ~(TT_IN_SYSCALL | TT_WANT_EXIT);
	t->flags |= TT_EXITED;
	t->prio = read_prio(t->task.pid, t->prio);
	if (__uks_tracee_sched_on(UKS_TRACEE_SCHED_EXIT)) {
		as_task(t);
		s->stats.events += (unsigned long)__uks_tracee_emit_exit(t->task.comm, t->task.pid,
									 t->prio);
		as_self();
	}
	__uks_trace_task_exit(t->task.pid);	/* after its last event, as the kernel */
}

/* de_thread(): a non-leader exec'd and took the leader's tid. */
static struct tracee_thread *exec_takeover(struct uks_tracee_session *s,
					   struct tracee_thread *t, pid_t old)
{
	struct tracee_thread *o = __uks_tracee_find(s, old);

	if (!o || o == t)
		return t;
	/* @t is the old leader's record: it is gone without an exit report */
	if (!(t->flags & TT_EXITED) && __uks_tracee_sched_on(UKS_TRACEE_SCHED_EXIT))
		exit_event(s, t);
	o->flags |= t->flags & TT_SEEN;
	__uks_tracee_remove(s, t);
	__uks_tracee_rekey(s, o, o->task.tgid);
	return o;
}

static struct tracee_thread *exec_event(struct uks_tracee_session *s, struct tracee_thread *t)
{
	unsigned long msg;
	pid_t old;
	char newcomm[16], exe[EXEC_PATH_MAX];
	const char *file;

	if (__uks_tracee_ptrace(s, PTRACE_GETEVENTMSG, t->task.pid, 0, &msg))
		old = t->task.pid;
	else
		old = (pid_t)msg;
	t = exec_takeover(s, t, old);
	__uks_tracee_ustack_forget(s, t->task.tgid);	/* a new program's modules */
	__uks_tracee_read_comm(t->task.pid, newcomm);
	if (__uks_tracee_sched_on(UKS_TRACEE_TASK_RENAME)) {
		as_task(t);
		s->stats.events += (unsigned long)__uks_tracee_emit_rename(
			t->task.pid, t->task.comm, newcomm, read_oom_score_adj(t->task.pid));
		as_self();
	}
	memcpy(t->task.comm, newcomm, sizeof(newcomm));
	if (__uks_tracee_sched_on(UKS_TRACEE_SCHED_EXEC)) {
		file = t->exec_file;
		if (!file) {
			char path[64];
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/exe", (int)t->task.pid);
			n = readlink(path, exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
			file = exe;
		}
		as_task(t);
		s->stats.events += (unsigned long)__uks_tracee_emit_exec(file, t->task.pid, old);
		as_self();
	}
	uks_kfree(t->exec_file);
	t->exec_file = NULL;
	return t;
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* How a thread we hear of first by its own stop is traced: like its process or parent. */
static unsigned int new_thread_flags(struct uks_tracee_session *s, pid_t tid, pid_t tgid)
{
	struct tracee_thread *rel = __uks_tracee_find(s, tgid);

	if (!rel)
		rel = __uks_tracee_find(s, __uks_tracee_read_ppid(tid));
	if (rel)
		return rel->flags & TT_STEP;
	if (s->relayed && !s->spawned)
		return s->relay_step ? TT_STEP : 0;
	return s->spawned && !(s->flags & UKS_TRACEE_NO_SECCOMP) ? 0 : TT_STEP;
}

static void exited(struct uks_tracee_session *s, pid_t tid, int status)
{
	struct tracee_thread *t = __uks_tracee_find(s, tid);

	if (t) {
		/* killed without an exit stop (SIGKILL): the kernel still wrote the event */
		if (!(t->flags & TT_EXITED))
			exit_event(s, t);
		if (t->task.pid == t->task.tgid)
			__uks_tracee_ustack_forget(s, t->task.tgid);
		__uks_tracee_remove(s, t);
	}
	if (tid == s->spawned) {
		s->spawned_status = status;
		s->spawned_done = true;
	}
}

/*
 * A new child's first stop can come before its parent's fork event (the
 * two are separate waitpid() results, in either order).  Under event-fork
 * it joins its parent's pid lists now, before it first runs, as the kernel
 * adds it inside fork; the fork event adds it again, which changes nothing.
 * The parent is the process's parent, or for a thread its leader.
 */
static void early_child(pid_t tid, pid_t tgid)
{
	if (__uks_trace_forks_followed())
		__uks_trace_task_fork(tid == tgid ? __uks_tracee_read_ppid(tid) : tgid, tid);
}

/**
 * __uks_tracee_handle - handle one waitpid() result of a tracee
 * @tid:	the thread waitpid() returned
 * @status:	its status
 *
 * Returns 1 (handled), or -ENOMEM when a new thread could not be tracked
 * (it is resumed untracked).
 */
int __uks_tracee_handle(struct uks_tracee_session *s, pid_t tid, int status)
{
	struct tracee_thread *t;
	int sig, ev;

	__uks_tracee_sw_flush();
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		exited(s, tid, status);
		return 1;
	}
	if (!WIFSTOPPED(status))
		return 1;
	sig = WSTOPSIG(status);
	ev = status >> 16;
	t = __uks_tracee_find(s, tid);
	if (!t) {
		pid_t tgid = __uks_tracee_read_tgid(tid);

		t = __uks_tracee_add(s, tid, tgid, new_thread_flags(s, tid, tgid));
		if (!t) {
			__uks_tracee_ptrace(s, PTRACE_CONT, tid, 0, 0);
			return -ENOMEM;
		}
		early_child(tid, tgid);
	}
	if (sig == (SIGTRAP | 0x80)) {
		syscall_stop(s, t, false);
	} else if (sig == SIGTRAP && ev == PTRACE_EVENT_SECCOMP) {
		syscall_stop(s, t, true);
	} else if (sig == SIGTRAP && (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
				      ev == PTRACE_EVENT_CLONE)) {
		fork_event(s, t);
	} else if (sig == SIGTRAP && ev == PTRACE_EVENT_EXEC) {
		t = exec_event(s, t);
	} else if (sig == SIGTRAP && ev == PTRACE_EVENT_EXIT) {
		exit_event(s, t);
	} else if (ev == PTRACE_EVENT_STOP) {
		if (!(t->flags & TT_SEEN)) {
			t->flags |= TT_SEEN;		/* attach or auto-attach stop */
		} else if (stop_signal(sig)) {
			/* group-stop: stay stopped, let the real parent see it */
			s->stats.group_stops++;
			t->flags |= TT_LISTEN;
			__uks_tracee_ptrace(s, PTRACE_LISTEN, tid, 0, 0);
			return 1;
		}
		t->flags &= ~TT_LISTEN;
	} else {
		/* signal-delivery-stop: the signal goes on to the tracee */
		t->flags |= TT_SEEN;
		s->stats.signals++;
		__uks_tracee_resume(s, t, sig);
		return 1;
	}
	__uks_tracee_resume(s, t, 0);
	return 1;
}
