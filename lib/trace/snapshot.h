/* SPDX-License-Identifier: MIT */
/*
 * The snapshot: an instance's spare buffer, swapped with the live one (the
 * kernel's max_buffer, tracing_snapshot_instance()).  See snapshot.c.
 */
#ifndef UKS_LIB_TRACE_SNAPSHOT_H
#define UKS_LIB_TRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>

#include "core/seq.h"

struct uks_trace;

/*
 * Take a snapshot from a tracepoint hit (the "snapshot" trigger): swap
 * @tr's live buffer with its spare.  Never allocates, never waits for a
 * lock: safe in a writer and in a signal handler nested in one.  Returns
 * 0; -ENODEV when no spare is allocated (then, as the kernel's
 * tracing_snapshot_instance(), it writes "*** SNAPSHOT NOT ALLOCATED ***"
 * and "*** stopping trace here!   ***" into the live buffer and turns
 * tracing_on off); -EBUSY when another swap, a resize or a free is under
 * way or this thread holds a buffer lock (nothing happens, nothing is
 * written, as the kernel ignores a snapshot from NMI context).
 */
int __uks_trace_snapshot_take(struct uks_trace *tr);

/*
 * Allocate the spare at the live buffer's size if it is not (echo 1 >
 * snapshot, and the trigger's registration, as tracing_alloc_snapshot_instance()).
 * The memory is checked first.  Caller holds event_mutex.  0 or -ENOMEM.
 */
int __uks_trace_snapshot_alloc(struct uks_trace *tr);
/* Free it (echo 0): waits for writers still in its pages.  Caller holds event_mutex. */
void __uks_trace_snapshot_free(struct uks_trace *tr);
bool __uks_trace_snapshot_allocated(struct uks_trace *tr);
/*
 * The snapshot file's write of @val for one CPU (per_cpu/cpuN/snapshot) or
 * all (@cpu < 0).  Caller holds event_mutex.  0 or -errno.
 */
int __uks_trace_snapshot_write(struct uks_trace *tr, int cpu, unsigned long val);
/* The help the snapshot file shows while it has no event for its reader. */
void __uks_trace_snapshot_help(struct uks_trace *tr, int cpu, struct uks_seq *s);

/*
 * buffer_size_kb: resize the live buffer and, if allocated, the spare to
 * @bytes per CPU (@cpu < 0: all), as the kernel resizes both.  The caller
 * holds event_mutex and has stopped the writers; the check needs neither.
 */
int __uks_trace_resize_check(struct uks_trace *tr, int cpu, size_t bytes);
int __uks_trace_resize_buffers(struct uks_trace *tr, int cpu, size_t bytes);
/* trace_clock changed: the spare takes the clock and is cleared. */
void __uks_trace_snapshot_set_clock(struct uks_trace *tr);
/* uks_trace_destroy(): the spare and the cpumask go. */
void __uks_trace_snapshot_destroy(struct uks_trace *tr);

/* tracing_cpumask (cpumask.c): show, and write one write(2)'s bytes. */
void __uks_trace_show_cpumask(struct uks_trace *tr, struct uks_seq *s);
int __uks_trace_write_cpumask(struct uks_trace *tr, const char *buf, size_t len);

#endif
