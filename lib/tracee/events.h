/* SPDX-License-Identifier: MIT */
/*
 * The events a tracee session writes (internal to lib/tracee): the
 * syscalls:* and raw_syscalls:* tracepoints (syscall_events.c) and the
 * sched:/task: ones (sched_events.c), registered once per process.
 *
 * Every emit function writes for the task uks_trace_set_task() names; the
 * caller sets it (the tracee, stopped) around the call.
 */
#ifndef UKS_TRACEE_EVENTS_H
#define UKS_TRACEE_EVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uks/tracepoint.h>

/* Highest x86-64 number with syscalls:* events, plus one. */
#define UKS_TRACEE_NR_SYSCALLS	512

int __uks_tracee_syscall_events_init(void);
int __uks_tracee_sched_events_init(void);

/* Some probe is attached to an event for @nr's entry or exit. */
bool __uks_tracee_syscall_enter_on(long nr);
bool __uks_tracee_syscall_exit_on(long nr);
/* Set the bit of every number below @nr whose entry/exit event reads the tracee. */
void __uks_tracee_syscall_read(uint64_t *enter, uint64_t *exit, long nr);
/* Returns the number of records written (tracepoints with a probe). */
int __uks_tracee_emit_sys_enter(long nr, const unsigned long args[6]);
int __uks_tracee_emit_sys_exit(long nr, long ret);

enum uks_tracee_sched_event {
	UKS_TRACEE_SCHED_FORK,
	UKS_TRACEE_SCHED_EXEC,
	UKS_TRACEE_SCHED_EXIT,
	UKS_TRACEE_TASK_NEWTASK,
	UKS_TRACEE_TASK_RENAME,
	UKS_TRACEE_NR_SCHED,
};

bool __uks_tracee_sched_on(enum uks_tracee_sched_event ev);
int __uks_tracee_emit_fork(const char *parent_comm, pid_t parent, const char *child_comm,
			   pid_t child);
int __uks_tracee_emit_exec(const char *filename, pid_t pid, pid_t old_pid);
int __uks_tracee_emit_exit(const char *comm, pid_t pid, int prio);
int __uks_tracee_emit_newtask(pid_t pid, const char *comm, unsigned long clone_flags,
			      short oom_score_adj);
int __uks_tracee_emit_rename(pid_t pid, const char *oldcomm, const char *newcomm,
			     short oom_score_adj);

/* sched:sched_switch (sched_switch.c) */
int __uks_tracee_sched_switch_init(void);
void __uks_tracee_sw_track(pid_t tid, pid_t tgid, const char *comm);
void __uks_tracee_sw_untrack(pid_t tid);
void __uks_tracee_sw_flush(void);

#endif
