/* SPDX-License-Identifier: MIT */
/*
 * Tracee sessions, internal: the session and thread records shared by
 * session.c (life cycle, spawn, attach, detach), loop.c (the stops) and
 * seccomp.c (the filter of spawned commands).
 */
#ifndef UKS_TRACEE_INTERNAL_H
#define UKS_TRACEE_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

#include <uks/trace.h>
#include <uks/tracee.h>

#include <sys/ptrace.h>

#include "tracee/relay.h"

#define TRACEE_HASH	64

/* Every tracee's options: no PTRACE_O_EXITKILL here (see session.c). */
#define TRACEE_PTRACE_OPTS	(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACEFORK | \
				 PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE | \
				 PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | \
				 PTRACE_O_TRACESECCOMP)

/* struct tracee_thread.flags */
#define TT_SEEN		0x01	/* had its first stop (attach or auto-attach) */
#define TT_IN_SYSCALL	0x02	/* entry seen, exit pending */
#define TT_WANT_EXIT	0x04	/* resume with PTRACE_SYSCALL to catch the exit */
#define TT_STEP		0x08	/* syscall-stop stepping (attached, no seccomp) */
#define TT_EXITED	0x10	/* sched_process_exit written */
#define TT_LISTEN	0x20	/* in group-stop under PTRACE_LISTEN */

/**
 * struct tracee_thread - one traced thread
 * @task:	pid (thread id), tgid and comm the events are written as
 * @flags:	TT_*
 * @nr:		system call in progress (TT_IN_SYSCALL)
 * @args:	its arguments
 * @ip, @sp:	instruction and stack pointer at its last system-call stop
 * @exec_file:	execve's filename read at entry (sched_process_exec), or NULL
 * @prio:	last known kernel prio (sched_process_exit after a SIGKILL)
 * @next:	hash chain
 */
struct tracee_thread {
	struct uks_trace_task task;
	unsigned int flags;
	long nr;
	unsigned long args[6];
	unsigned long ip, sp;		/* at its last system-call stop */
	char *exec_file;
	int prio;
	struct tracee_thread *next;
};

/* A stopped tracee whose stack a stacktrace trigger may ask for (ustack.c). */
struct uks_tracee_ustack_req {
	struct uks_tracee_session *s;
	pid_t tid, tgid;
	unsigned long ip, sp;
};

struct uks_tracee_ustack;

/**
 * struct uks_tracee_session - a set of traced processes
 * @flags:	UKS_TRACEE_* options
 * @hash:	threads by tid
 * @nr_threads:	threads in @hash
 * @spawned:	the command spawn started (its status is run()'s), or 0
 * @spawned_status: its wait status once it is gone
 * @spawned_done: @spawned_status is valid
 * @stop:	set by uks_tracee_stop() (async-signal-safe)
 * @stats:	counters
 * @relayed:	a keeper holds ptrace: stops come from it (@relay_fd)
 * @relay_fd:	the keeper's socket, or -1 once released
 * @keeper:	the keeper process this session started (reaped at the end), or 0
 * @relay_step:	threads first heard of through the keeper are stepped
 * @cur:	the stop being handled (relayed): what ptrace() would answer
 * @policy_sent: the keeper has a policy (relay.h), made at @policy_gen
 * @policy_gen:	__uks_tracepoint_generation() when it was made
 * @rbuf:	bytes read from @relay_fd not handled yet (the keeper sends
 *		resumed stops in batches: one read takes many)
 * @rlen:	bytes in @rbuf
 * @wake_fd:	eventfd: a write changed the probes, send a policy now
 *		(relay.c), or -1
 * @owner:	the thread that waits on @relay_fd (never waits for itself)
 * @acked:	the keeper acknowledged a policy made at @acked_gen
 * @acked_gen:	(both under relay.c's sync lock)
 * @sync_next:	the list of sessions with a keeper (relay.c)
 * @ustack:	processes' modules kept for unwinding (ustack.c), or NULL
 * @ustack_req:	the stop whose events are being written, for their stack
 */
struct uks_tracee_session {
	unsigned int flags;
	struct tracee_thread *hash[TRACEE_HASH];
	int nr_threads;
	pid_t spawned;
	int spawned_status;
	bool spawned_done;
	volatile int stop;
	struct uks_tracee_stats stats;
	bool relayed;
	int relay_fd;
	pid_t keeper;
	bool relay_step;
	struct relay_stop cur;
	bool policy_sent;
	unsigned long policy_gen;
	char rbuf[32 * sizeof(struct relay_stop)];
	size_t rlen;
	int wake_fd;
	pthread_t owner;
	bool acked;
	unsigned long acked_gen;
	struct uks_tracee_session *sync_next;
	struct uks_tracee_ustack *ustack;
	struct uks_tracee_ustack_req ustack_req;
};

struct tracee_thread *__uks_tracee_find(struct uks_tracee_session *s, pid_t tid);
struct tracee_thread *__uks_tracee_add(struct uks_tracee_session *s, pid_t tid, pid_t tgid,
				       unsigned int flags);
void __uks_tracee_remove(struct uks_tracee_session *s, struct tracee_thread *t);
void __uks_tracee_read_comm(pid_t tid, char comm[16]);
pid_t __uks_tracee_read_tgid(pid_t tid);
pid_t __uks_tracee_read_ppid(pid_t tid);
void __uks_tracee_rekey(struct uks_tracee_session *s, struct tracee_thread *t, pid_t tid);

/* ptrace() of the session: direct, or answered and relayed for a keeper (relay.c) */
long __uks_tracee_ptrace(struct uks_tracee_session *s, int req, pid_t tid, void *addr, void *data);

/* loop.c */
int __uks_tracee_handle(struct uks_tracee_session *s, pid_t tid, int status);
void __uks_tracee_resume(struct uks_tracee_session *s, struct tracee_thread *t, int sig);

/* ustack.c: the stack source (lib/trace/origin.h) of a stopped tracee */
int __uks_tracee_ustack(void *arg, unsigned long *ips, int max);
void __uks_tracee_ustack_forget(struct uks_tracee_session *s, pid_t tgid);
void __uks_tracee_ustack_free(struct uks_tracee_session *s);

/* seccomp.c */
struct sock_fprog;
int __uks_tracee_seccomp_build(struct sock_fprog *prog, bool every_call);
void __uks_tracee_seccomp_free(struct sock_fprog *prog);
int __uks_tracee_seccomp_install(const struct sock_fprog *prog);

/* relay.c */
int __uks_tracee_start_kept(struct uks_tracee_session *s, const char *path, char *const argv[],
			    const struct sock_fprog *prog, bool step, pid_t *child);
int __uks_tracee_attach_kept(struct uks_tracee_session *s, pid_t pid, bool step);
int __uks_tracee_relay_wait(struct uks_tracee_session *s, int flags);
void __uks_tracee_relay_open(struct uks_tracee_session *s, int fd);
void __uks_tracee_relay_close(struct uks_tracee_session *s);

/* keeper.c */
struct uks_tracee_keeper *__uks_tracee_keeper_alloc(unsigned int flags);
void __uks_tracee_keeper_free(struct uks_tracee_keeper *k);
int __uks_tracee_keeper_seize(struct uks_tracee_keeper *k, pid_t pid);
__attribute__((noreturn))
void __uks_tracee_keeper_spawn(struct uks_tracee_keeper *k, int fd, const char *path,
			       char *const argv[], const struct sock_fprog *prog, bool step);

#endif
