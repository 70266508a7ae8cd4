// SPDX-License-Identifier: MIT
/*
 * Event origin (origin.h): the CPU and CLOCK_MONOTONIC time that this
 * thread's next records are written for, until cleared.
 *
 * The time is converted to the buffer's clock by age: the clock's reading
 * now minus how long ago (in CLOCK_MONOTONIC) the event happened, so the
 * TSC-based clocks, "boot" and "mono_raw" need no offsets of their own.
 * The clocks that do not count nanoseconds (counter, uptime, x86-tsc) take
 * the reading now.
 *
 * The stack source: a stacktrace trigger hit while this thread writes
 * events for a stopped tracee records the tracee's stack, not ours.
 */
#include <errno.h>
#include <time.h>

#include "trace/origin.h"
#include "trace/ring_buffer.h"

__thread unsigned int __uks_trace_origin_cpu1 __attribute__((tls_model("initial-exec")));
static __thread uint64_t origin_mono __attribute__((tls_model("initial-exec")));
static __thread uks_trace_stack_fn stack_fn __attribute__((tls_model("initial-exec")));
static __thread void *stack_arg __attribute__((tls_model("initial-exec")));

/**
 * __uks_trace_set_origin - write this thread's next records as of @cpu at @mono_ns
 * @cpu:	the CPU whose buffer takes them (out of range: CPU 0)
 * @mono_ns:	when the event happened, CLOCK_MONOTONIC nanoseconds
 */
void __uks_trace_set_origin(int cpu, uint64_t mono_ns)
{
	__uks_trace_origin_cpu1 = cpu < 0 ? 1u : (unsigned int)cpu + 1;
	origin_mono = mono_ns;
}

/** __uks_trace_clear_origin - back to the writer's own CPU and time */
void __uks_trace_clear_origin(void)
{
	__uks_trace_origin_cpu1 = 0;
}

/** __uks_trace_origin_ts - the origin's time in @rb's clock */
uint64_t __uks_trace_origin_ts(struct uks_rb *rb)
{
	uint64_t now = __uks_trace_rb_now(rb);
	struct timespec ts;
	uint64_t mono, age;

	if (!__uks_trace_clock_in_ns(__uks_trace_rb_clock(rb)))
		return now;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	mono = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	age = mono > origin_mono ? mono - origin_mono : 0;
	return now > age ? now - age : 0;
}

/** __uks_trace_set_origin_stack - where this thread's records' stack comes from (NULL: here) */
void __uks_trace_set_origin_stack(uks_trace_stack_fn fn, void *arg)
{
	stack_fn = fn;
	stack_arg = arg;
}

/** __uks_trace_origin_stack - the origin task's stack, or -ENOENT: it is this thread's */
int __uks_trace_origin_stack(unsigned long *ips, int max)
{
	return stack_fn ? stack_fn(stack_arg, ips, max) : -ENOENT;
}

