/* SPDX-License-Identifier: MIT */
/* set_event_pid, set_event_notrace_pid and event-fork (event_pids.c). */
#ifndef UKS_LIB_TRACE_EVENT_PIDS_H
#define UKS_LIB_TRACE_EVENT_PIDS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "core/seq.h"

struct uks_trace;

/* A pid list as a hit reads it: sorted, without repeats. */
struct uks_pid_list {
	size_t nr;
	pid_t pids[];
};

bool __uks_trace_ignore_pid(struct uks_trace *tr, pid_t pid);
void __uks_trace_show_event_pids(struct uks_trace *tr, bool notrace, struct uks_seq *s);
int __uks_trace_write_event_pids(struct uks_trace *tr, bool notrace, const char *text, bool clear);
void __uks_trace_free_event_pids(struct uks_trace *tr);
void __uks_trace_event_fork_changed(bool on);

/* What the code that sees forks and exits (lib/tracee) reports. */
bool __uks_trace_forks_followed(void);
void __uks_trace_task_fork(pid_t parent, pid_t child);
void __uks_trace_task_exit(pid_t pid);

#endif
