// SPDX-License-Identifier: MIT
/*
 * sched:sched_process_fork, sched:sched_process_exec,
 * sched:sched_process_exit, task:task_newtask and task:task_rename for
 * tracees: the records, field tables and print formats of the kernel's
 * include/trace/events/sched.h and task.h (5.15 and 6.1 agree), defined at
 * run time and registered once per process.
 *
 * The layouts are the kernel's TP_STRUCT__entry structs for x86-64; the
 * field tables give their offsets by offsetof, so the format files match
 * the kernel's byte for byte ("char comm[16]" is signed:1 because char is
 * signed on x86, __data_loc char[] too).
 *
 * Lock order: none here; registration takes the tracepoint registry lock.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#include "tracee/events.h"

struct fork_rec {
	struct uks_trace_entry ent;
	char parent_comm[16];
	pid_t parent_pid;
	char child_comm[16];
	pid_t child_pid;
};

struct exec_rec {
	struct uks_trace_entry ent;
	uint32_t __data_loc_filename;
	pid_t pid;
	pid_t old_pid;		/* the filename follows the fixed part */
};

struct exit_rec {
	struct uks_trace_entry ent;
	char comm[16];
	pid_t pid;
	int prio;
};

struct newtask_rec {
	struct uks_trace_entry ent;
	pid_t pid;
	char comm[16];
	unsigned long clone_flags;
	short oom_score_adj;
};

struct rename_rec {
	struct uks_trace_entry ent;
	pid_t pid;
	char oldcomm[16];
	char newcomm[16];
	short oom_score_adj;
};

#define F(rec, type, name, sgn, ft) \
	{ type, #name, offsetof(struct rec, name), sizeof(((struct rec *)0)->name), sgn, ft }
#define COMM(rec, name)	F(rec, "char[16]", name, true, UKS_FILTER_STATIC_STRING)
#define PID(rec, name)	F(rec, "pid_t", name, true, UKS_FILTER_OTHER)

static const struct uks_event_field fork_fields[] = {
	COMM(fork_rec, parent_comm), PID(fork_rec, parent_pid),
	COMM(fork_rec, child_comm), PID(fork_rec, child_pid),
};

static const struct uks_event_field exec_fields[] = {
	{ "__data_loc char[]", "filename", offsetof(struct exec_rec, __data_loc_filename), 4,
	  true, UKS_FILTER_DYN_STRING },
	PID(exec_rec, pid), PID(exec_rec, old_pid),
};

static const struct uks_event_field exit_fields[] = {
	COMM(exit_rec, comm), PID(exit_rec, pid), F(exit_rec, "int", prio, true, UKS_FILTER_OTHER),
};

static const struct uks_event_field newtask_fields[] = {
	PID(newtask_rec, pid), COMM(newtask_rec, comm),
	F(newtask_rec, "unsigned long", clone_flags, false, UKS_FILTER_OTHER),
	F(newtask_rec, "short", oom_score_adj, true, UKS_FILTER_OTHER),
};

static const struct uks_event_field rename_fields[] = {
	PID(rename_rec, pid), COMM(rename_rec, oldcomm), COMM(rename_rec, newcomm),
	F(rename_rec, "short", oom_score_adj, true, UKS_FILTER_OTHER),
};

static int fork_print(char *buf, size_t len, const void *rec)
{
	const struct fork_rec *r = rec;

	return snprintf(buf, len, "comm=%.16s pid=%d child_comm=%.16s child_pid=%d",
			r->parent_comm, r->parent_pid, r->child_comm, r->child_pid);
}

static int exec_print(char *buf, size_t len, const void *rec)
{
	const struct exec_rec *r = rec;

	return snprintf(buf, len, "filename=%s pid=%d old_pid=%d",
			(const char *)r + (r->__data_loc_filename & 0xffff), r->pid, r->old_pid);
}

static int exit_print(char *buf, size_t len, const void *rec)
{
	const struct exit_rec *r = rec;

	return snprintf(buf, len, "comm=%.16s pid=%d prio=%d", r->comm, r->pid, r->prio);
}

static int newtask_print(char *buf, size_t len, const void *rec)
{
	const struct newtask_rec *r = rec;

	return snprintf(buf, len, "pid=%d comm=%.16s clone_flags=%lx oom_score_adj=%hd",
			r->pid, r->comm, r->clone_flags, r->oom_score_adj);
}

static int rename_print(char *buf, size_t len, const void *rec)
{
	const struct rename_rec *r = rec;

	return snprintf(buf, len, "pid=%d oldcomm=%.16s newcomm=%.16s oom_score_adj=%hd",
			r->pid, r->oldcomm, r->newcomm, r->oom_score_adj);
}

#define TP(sys, evt, rec, flds, printer, fmt) {				\
	.system = sys, .name = evt, .fields = flds,			\
	.nr_fields = sizeof(flds) / sizeof(flds[0]),			\
	.fixed_size = sizeof(struct rec), .print_fmt = "UKS_TP_PRINTK(" fmt ")", \
	.print = printer }

static struct uks_tracepoint sched_tps[UKS_TRACEE_NR_SCHED] = {
	[UKS_TRACEE_SCHED_FORK] = TP("sched", "sched_process_fork", fork_rec, fork_fields,
		fork_print, "\"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, "
		"REC->parent_pid, REC->child_comm, REC->child_pid"),
	[UKS_TRACEE_SCHED_EXEC] = TP("sched", "sched_process_exec", exec_rec, exec_fields,
		exec_print, "\"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
		"REC->old_pid"),
	[UKS_TRACEE_SCHED_EXIT] = TP("sched", "sched_process_exit", exit_rec, exit_fields,
		exit_print, "\"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio"),
	[UKS_TRACEE_TASK_NEWTASK] = TP("task", "task_newtask", newtask_rec, newtask_fields,
		newtask_print, "\"pid=%d comm=%s clone_flags=%lx oom_score_adj=%hd\", REC->pid, "
		"REC->comm, REC->clone_flags, REC->oom_score_adj"),
	[UKS_TRACEE_TASK_RENAME] = TP("task", "task_rename", rename_rec, rename_fields,
		rename_print, "\"pid=%d oldcomm=%s newcomm=%s oom_score_adj=%hd\", REC->pid, "
		"REC->oldcomm, REC->newcomm, REC->oom_score_adj"),
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

static void init_events(void)
{
	for (int i = 0; !init_err && i < UKS_TRACEE_NR_SCHED; i++)
		init_err = uks_tracepoint_register(&sched_tps[i]);
	if (!init_err)
		init_err = __uks_tracee_sched_switch_init();
}

/**
 * __uks_tracee_sched_events_init - register the sched: and task: events
 *
 * Once per process.  Returns 0 or the registration's -errno.
 */
int __uks_tracee_sched_events_init(void)
{
	pthread_once(&init_once, init_events);
	return init_err;
}

/** __uks_tracee_sched_on - does @ev have a probe attached? */
bool __uks_tracee_sched_on(enum uks_tracee_sched_event ev)
{
	return __atomic_load_n(&sched_tps[ev].key, __ATOMIC_RELAXED) > 0;
}

static int emit(enum uks_tracee_sched_event ev, void *rec, size_t len)
{
	if (!__uks_tracee_sched_on(ev))
		return 0;
	uks_tracepoint_emit(&sched_tps[ev], (char *)rec + sizeof(struct uks_trace_entry),
			    len - sizeof(struct uks_trace_entry));
	return 1;
}

static void comm_copy(char dst[16], const char *src)
{
	memset(dst, 0, 16);
	strncpy(dst, src, 15);
}

/**
 * __uks_tracee_emit_fork - sched_process_fork (written as the parent)
 * Returns the number of tracepoints hit.
 */
int __uks_tracee_emit_fork(const char *parent_comm, pid_t parent, const char *child_comm,
			   pid_t child)
{
	struct fork_rec r = { .parent_pid = parent, .child_pid = child };

	comm_copy(r.parent_comm, parent_comm);
	comm_copy(r.child_comm, child_comm);
	return emit(UKS_TRACEE_SCHED_FORK, &r, sizeof(r));
}

/** __uks_tracee_emit_exec - sched_process_exec (written as the new image) */
int __uks_tracee_emit_exec(const char *filename, pid_t pid, pid_t old_pid)
{
	struct {
		struct exec_rec r;
		char str[4096];
	} b;
	size_t n = strnlen(filename, sizeof(b.str) - 1);

	memset(&b.r, 0, sizeof(b.r));
	memcpy(b.str, filename, n);
	b.str[n] = '\0';
	b.r.__data_loc_filename = (uint32_t)(n + 1) << 16 | (uint32_t)sizeof(b.r);
	b.r.pid = pid;
	b.r.old_pid = old_pid;
	return emit(UKS_TRACEE_SCHED_EXEC, &b, sizeof(b.r) + n + 1);
}

/** __uks_tracee_emit_exit - sched_process_exit (written as the exiting thread) */
int __uks_tracee_emit_exit(const char *comm, pid_t pid, int prio)
{
	struct exit_rec r = { .pid = pid, .prio = prio };

	comm_copy(r.comm, comm);
	return emit(UKS_TRACEE_SCHED_EXIT, &r, sizeof(r));
}

/** __uks_tracee_emit_newtask - task_newtask (written as the parent) */
int __uks_tracee_emit_newtask(pid_t pid, const char *comm, unsigned long clone_flags,
			      short oom_score_adj)
{
	struct newtask_rec r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	comm_copy(r.comm, comm);
	r.clone_flags = clone_flags;
	r.oom_score_adj = oom_score_adj;
	return emit(UKS_TRACEE_TASK_NEWTASK, &r, sizeof(r));
}

/** __uks_tracee_emit_rename - task_rename (written as the renamed thread) */
int __uks_tracee_emit_rename(pid_t pid, const char *oldcomm, const char *newcomm,
			     short oom_score_adj)
{
	struct rename_rec r;

	memset(&r, 0, sizeof(r));
	r.pid = pid;
	comm_copy(r.oldcomm, oldcomm);
	comm_copy(r.newcomm, newcomm);
	r.oom_score_adj = oom_score_adj;
	return emit(UKS_TRACEE_TASK_RENAME, &r, sizeof(r));
}
