/* SPDX-License-Identifier: MIT */
/* Per-thread scratch records (scratch.c). */
#ifndef UKS_LIB_TRACE_SCRATCH_H
#define UKS_LIB_TRACE_SCRATCH_H

#include <stdbool.h>
#include <stddef.h>

/*
 * A record that must not reach the ring buffer but is needed whole: an
 * eprobe's copy of the record it attaches to, a trigger's record when the
 * event is soft-disabled or the buffer refused it.  Taken and given back
 * in nesting order (a thread, then signal handlers, and a probe's record
 * inside another's); __uks_trace_scratch_nest is non-zero while this
 * thread holds one.
 */
extern __thread int __uks_trace_scratch_nest __attribute__((tls_model("initial-exec")));
/* NULL when @len is over a ring-buffer page, nesting is too deep, or no memory. */
void *__uks_trace_scratch_get(size_t len);
/* @rec is this thread's scratch record in flight. */
bool __uks_trace_scratch_owns(const void *rec);
void __uks_trace_scratch_put(void);

#endif
