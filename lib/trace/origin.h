/* SPDX-License-Identifier: MIT */
/*
 * Event origin: records an event source writes for something that already
 * happened elsewhere (a context switch the kernel reported through perf)
 * go to the CPU it happened on, stamped with its time.
 */
#ifndef UKS_TRACE_ORIGIN_H
#define UKS_TRACE_ORIGIN_H

#include <stdint.h>

struct uks_rb;

/*
 * The stack of the task this thread's next records are written for, when
 * that is another process stopped for it (lib/tracee): fills @ips with at
 * most @max return addresses, innermost first; returns how many or -errno.
 */
typedef int (*uks_trace_stack_fn)(void *arg, unsigned long *ips, int max);

/* CPU + 1 of this thread's records, or 0: the CPU the writer runs on. */
extern __thread unsigned int __uks_trace_origin_cpu1 __attribute__((tls_model("initial-exec")));

void __uks_trace_set_origin(int cpu, uint64_t mono_ns);
void __uks_trace_clear_origin(void);
uint64_t __uks_trace_origin_ts(struct uks_rb *rb);
/* Set (@fn non-NULL) or clear the stack source; -ENOENT from ..._stack() without one. */
void __uks_trace_set_origin_stack(uks_trace_stack_fn fn, void *arg);
int __uks_trace_origin_stack(unsigned long *ips, int max);

#endif
