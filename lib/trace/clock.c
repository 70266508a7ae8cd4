// SPDX-License-Identifier: MIT
/*
 * Trace clocks (the trace_clock file).  User space has no sched_clock, so
 * "local", "global" and "perf" all read CLOCK_MONOTONIC, which the vDSO
 * serves without a system call and which is consistent across CPUs (the
 * kernel's local clock is not).  "uptime" counts jiffies at HZ=250 (Debian's
 * configuration), "counter" is an atomic counter, "x86-tsc" the raw TSC.
 */
#include <time.h>

#include "trace/ring_buffer.h"

#define UPTIME_HZ 250

const char *const uks_trace_clock_names[UKS_NR_CLOCKS] = {
	[UKS_CLOCK_LOCAL] = "local",
	[UKS_CLOCK_GLOBAL] = "global",
	[UKS_CLOCK_COUNTER] = "counter",
	[UKS_CLOCK_UPTIME] = "uptime",
	[UKS_CLOCK_PERF] = "perf",
	[UKS_CLOCK_MONO] = "mono",
	[UKS_CLOCK_MONO_RAW] = "mono_raw",
	[UKS_CLOCK_BOOT] = "boot",
	[UKS_CLOCK_X86_TSC] = "x86-tsc",
};

bool uks_trace_clock_in_ns(enum uks_trace_clock clock)
{
	return clock != UKS_CLOCK_COUNTER && clock != UKS_CLOCK_UPTIME &&
	       clock != UKS_CLOCK_X86_TSC;
}

static uint64_t ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t uks_trace_clock_read(enum uks_trace_clock clock, uint64_t *counter)
{
	switch (clock) {
	case UKS_CLOCK_COUNTER:
		return __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
	case UKS_CLOCK_UPTIME:
		return ns(CLOCK_MONOTONIC_COARSE) / (1000000000u / UPTIME_HZ);
	case UKS_CLOCK_MONO_RAW:
		return ns(CLOCK_MONOTONIC_RAW);
	case UKS_CLOCK_BOOT:
		return ns(CLOCK_BOOTTIME);
	case UKS_CLOCK_X86_TSC:
#if defined(__x86_64__) || defined(__i386__)
		return __builtin_ia32_rdtsc();
#else
		return ns(CLOCK_MONOTONIC_RAW);
#endif
	default:
		return ns(CLOCK_MONOTONIC);
	}
}
