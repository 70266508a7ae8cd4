/* SPDX-License-Identifier: MIT */
/*
 * The keeper's relay protocol: what a keeper process (keeper.c), which
 * holds the ptrace attachment, and the session that writes the events
 * (session.c, loop.c; in uksd or in uks trace) say to each other over a
 * stream socket.  Both ends are on the same host: native layout.
 *
 *   keeper -> session	struct relay_stop per waitpid() result: an exit
 *			needs no answer, a stop exactly one RELAY_RESUME
 *			for its tid (the session's only ptrace request);
 *			a struct relay_stop of type RELAY_POLICY (tid 0,
 *			@eventmsg the policy's @gen) once a policy is in
 *			force: the acknowledgement
 *   session -> keeper	RELAY_RESUME {tid, request, data}: the keeper makes
 *			the ptrace() call; RELAY_RELEASE: stop relaying;
 *			RELAY_POLICY + struct relay_policy: which system-call
 *			stops the keeper may resume on its own
 *
 * Everything the session asks of a stopped thread besides its resume is
 * sent up with the stop, so a traced call costs one message each way.
 *
 * Fast path: a syscall or seccomp stop the policy says nobody needs to see
 * stopped (no eprobe reads the tracee's memory for that call, the session
 * reads nothing of it from /proc) is resumed by the keeper at once, with
 * PTRACE_SYSCALL when the exit is wanted, and sent up marked
 * RELAY_RESUMED: the session writes its events from the message alone and
 * makes no resume request for it.  Every other stop waits for the session,
 * and all of them do until the first policy arrives.  The session sends a
 * new policy as soon as it sees the tracepoints' generation move, or is
 * woken by the write that moved it (__uks_tracepoint_sync()): that write
 * returns once the keeper has acknowledged a policy made at its
 * generation or later, so every system call its writer (or anyone)
 * starts afterwards is judged by the new policy, as a kernel probe is in
 * force once the write that enabled it returned.
 */
#ifndef UKS_TRACEE_RELAY_H
#define UKS_TRACEE_RELAY_H

#include <sys/ptrace.h>
#include <stdint.h>

#define RELAY_STOP	1
#define RELAY_RESUME	2
#define RELAY_RELEASE	3
#define RELAY_POLICY	4

/* struct relay_stop.flags */
#define RELAY_RESUMED	1u	/* the keeper resumed it: no resume request */

/* System calls the policy covers (x86-64 numbers); others always wait. */
#define RELAY_NR_SYSCALLS	512
#define RELAY_POLICY_WORDS	(RELAY_NR_SYSCALLS / 64)

/**
 * struct relay_stop - one waitpid() result of a tracee
 * @type:	RELAY_STOP
 * @flags:	RELAY_RESUMED or 0
 * @tid:	the thread
 * @status:	its wait status
 * @info_ret:	PTRACE_GET_SYSCALL_INFO's return at a syscall or seccomp stop
 *		(bytes of @info), else -errno
 * @eventmsg_ret: 0 when @eventmsg is PTRACE_GETEVENTMSG's (fork, vfork,
 *		clone and exec events), else -errno
 * @regs_ret:	0 when @orig_rax, @rdi and @rbp are the thread's (fork
 *		events: the clone flags are read from them; system-call stops
 *		that wait for the session: a stack may be unwound), else -errno
 * @info:	the system call
 * @eventmsg:	the event's message
 * @orig_rax:	the system call number register
 * @rdi:	its first argument
 * @rbp:	the frame pointer
 */
struct relay_stop {
	uint32_t type;
	uint32_t flags;
	int32_t tid;
	int32_t status;
	int32_t info_ret;
	int32_t eventmsg_ret;
	int32_t regs_ret;
	struct __ptrace_syscall_info info;
	uint64_t eventmsg;
	uint64_t orig_rax;
	uint64_t rdi;
	uint64_t rbp;
};

/**
 * struct relay_cmd - a request of the session
 * @type:	RELAY_RESUME, RELAY_RELEASE, or RELAY_POLICY (a struct
 *		relay_policy follows)
 * @tid:	the thread
 * @req:	PTRACE_CONT, PTRACE_SYSCALL, PTRACE_LISTEN or PTRACE_DETACH
 * @data:	the signal to deliver
 */
struct relay_cmd {
	uint32_t type;
	int32_t tid;
	int32_t req;
	int32_t data;
};

/**
 * struct relay_policy - which system-call stops the keeper resumes itself
 * @step:	the tracees are stepped (every resume is PTRACE_SYSCALL)
 * @gen:	the tracepoints' generation it was made at (acknowledged)
 * @sync_enter:	bit per number: its entry stop waits for the session
 * @sync_exit:	bit per number: its exit stop waits for the session
 * @want_exit:	bit per number: resume its entry with PTRACE_SYSCALL
 */
struct relay_policy {
	uint32_t step;
	uint32_t pad;
	uint64_t gen;
	uint64_t sync_enter[RELAY_POLICY_WORDS];
	uint64_t sync_exit[RELAY_POLICY_WORDS];
	uint64_t want_exit[RELAY_POLICY_WORDS];
};

#endif
