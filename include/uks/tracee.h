/* SPDX-License-Identifier: MIT */
/*
 * uks tracee sessions: real processes as event sources.
 *
 * A session traces processes with ptrace (and a seccomp filter in the ones
 * it spawns) and writes kernel-format events for them into every uks trace
 * instance that has them enabled: syscalls:sys_enter_<name> and
 * sys_exit_<name> for every x86-64 system call, raw_syscalls:sys_enter and
 * sys_exit, sched:sched_process_fork/exec/exit, sched:sched_switch (from
 * the kernel's perf context-switch records, docs/TRACEE.md) and
 * task:task_newtask and task_rename.  The records carry the tracee's pid
 * and comm, and eprobes dereference the tracee's memory:
 *
 *	struct uks_trace *tr;
 *	struct uks_tracee_session *s;
 *	char *argv[] = { "/bin/ls", "/", NULL };
 *	int status;
 *
 *	uks_trace_create(NULL, &tr);
 *	uks_tracee_session_create(NULL, &s);	// registers the events
 *	uks_tracefs_write_str(tr, "dynamic_events",
 *		"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring",
 *		UKS_TRACEFS_APPEND);
 *	uks_tracefs_write_str(tr, "events/esys/eopen/enable", "1", UKS_TRACEFS_APPEND);
 *	uks_tracee_spawn(s, argv, NULL);
 *	uks_tracee_run(s, &status);		// status as from waitpid()
 *	uks_tracee_session_destroy(s);
 *
 * Which system calls stop a spawned command is decided when it is spawned,
 * from the events enabled at that moment (see docs/TRACEE.md).
 *
 * ptrace belongs to a thread: create, spawn, attach, step, run and destroy
 * must all be called from the same thread.  The session waits with
 * waitpid(-1, __WALL), so it also reaps other children of the calling
 * process that exit while it runs.
 */
#ifndef UKS_TRACEE_H
#define UKS_TRACEE_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uks_tracee_session;

/**
 * struct uks_tracee_opts - session options
 * @sz:		sizeof(struct uks_tracee_opts)
 * @flags:	UKS_TRACEE_* flags
 * @relay_fd:	UKS_TRACEE_RELAY: the connection of the keeper that holds
 *		the tracees (the session owns it from then on)
 */
struct uks_tracee_opts {
	size_t sz;
	unsigned int flags;
	int relay_fd;
};

/* Step every system call of spawned commands too (no seccomp filter). */
#define UKS_TRACEE_NO_SECCOMP	1u
/*
 * Spawn and attach through a keeper process that holds the ptrace
 * attachment and relays the stops: the tracees run on correctly if this
 * process dies (uks_tracee_keeper_run()).
 */
#define UKS_TRACEE_KEEPER	2u
/*
 * A keeper started elsewhere (uks_tracee_keeper_create()) holds the
 * tracees and relays on @relay_fd; attach and attach_filtered name the pid
 * it seized; no spawn.
 */
#define UKS_TRACEE_RELAY	4u
/*
 * Spawned commands stop at every system call (a seccomp filter that traces
 * them all, one stop per call): syscall events enabled after the spawn are
 * seen too, as in the kernel.  Without it the filter is fixed at spawn.
 */
#define UKS_TRACEE_EVERY_SYSCALL	8u

/**
 * struct uks_tracee_stats - what the session has seen
 * @seccomp_stops:	seccomp stops (system-call entries of spawned commands)
 * @syscall_stops:	syscall-entry and syscall-exit stops
 * @signals:		signals re-injected at signal-delivery-stop
 * @group_stops:	group-stops (handled with PTRACE_LISTEN)
 * @events:		event records emitted (tracepoint hits with a probe)
 * @threads:		threads traced so far
 * @resumed_early:	stops of the above a keeper resumed before the session
 *			saw them (system calls no eprobe needs stopped)
 */
struct uks_tracee_stats {
	unsigned long seccomp_stops;
	unsigned long syscall_stops;
	unsigned long signals;
	unsigned long group_stops;
	unsigned long events;
	unsigned long threads;
	unsigned long resumed_early;
};

int uks_tracee_session_create(const struct uks_tracee_opts *opts,
			      struct uks_tracee_session **out);
void uks_tracee_session_destroy(struct uks_tracee_session *s);
int uks_tracee_spawn(struct uks_tracee_session *s, char *const argv[], pid_t *pid);
int uks_tracee_attach(struct uks_tracee_session *s, pid_t pid);
int uks_tracee_attach_filtered(struct uks_tracee_session *s, pid_t pid);
/* The seccomp program for the events enabled now, and installing one. */
ssize_t uks_tracee_filter(void *buf, size_t len);
/* The seccomp program that stops at every system call (UKS_TRACEE_EVERY_SYSCALL). */
ssize_t uks_tracee_filter_every_syscall(void *buf, size_t len);
int uks_tracee_install_filter(const void *prog, size_t len);

/* uks_tracee_step() flags */
#define UKS_TRACEE_NOHANG	1
int uks_tracee_step(struct uks_tracee_session *s, int flags);
int uks_tracee_run(struct uks_tracee_session *s, int *status);
void uks_tracee_stop(struct uks_tracee_session *s);
int uks_tracee_detach(struct uks_tracee_session *s);
int uks_tracee_nr_threads(const struct uks_tracee_session *s);
void uks_tracee_get_stats(const struct uks_tracee_session *s, struct uks_tracee_stats *st);
int uks_tracee_register_events(void);

/*
 * The keeper: a process of its own that holds the ptrace attachment for a
 * session in another process and passes every stop through once that
 * session is gone (docs/TRACEE.md).
 */
struct uks_tracee_keeper;
/* The process runs (or is about to install) a filter from uks_tracee_filter(). */
#define UKS_TRACEE_KEEP_FILTERED	1u
/* Bytes written to the front: the session went away / the first pid exited. */
#define UKS_TRACEE_KEEPER_LOST	'L'
#define UKS_TRACEE_KEEPER_DONE	'D'
int uks_tracee_keeper_create(pid_t pid, unsigned int flags, struct uks_tracee_keeper **out);
int uks_tracee_keeper_run(struct uks_tracee_keeper *k, int consumer_fd, int front_fd);

#ifdef __cplusplus
}
#endif

#endif
