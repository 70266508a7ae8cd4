/* SPDX-License-Identifier: MIT */
/*
 * Probes that read the task an event is written for (writer_sync.c): an
 * eprobe that dereferences into its memory, a stacktrace trigger that
 * unwinds its stack.  A writer for stopped tasks (lib/tracee) keeps a task
 * stopped while its events on these tracepoints are written.
 */
#ifndef UKS_LIB_TRACE_WRITER_SYNC_H
#define UKS_LIB_TRACE_WRITER_SYNC_H

#include <stdbool.h>

#include <uks/tracepoint.h>

/* -ENOMEM or 0; each add is undone by one del. */
int __uks_trace_sync_tp_add(const struct uks_tracepoint *tp);
void __uks_trace_sync_tp_del(const struct uks_tracepoint *tp);
/* @fn for each tracepoint added (as often as added), under a leaf lock. */
void __uks_trace_for_each_sync_tp(void (*fn)(const struct uks_tracepoint *tp, void *arg),
				  void *arg);

/*
 * The events this thread writes next are for a task already resumed (a
 * stop let go before it was written), until reset with false: probes
 * that read it record nothing of it.
 */
void __uks_trace_writer_running(bool running);
bool __uks_trace_writer_is_running(void);

#endif
