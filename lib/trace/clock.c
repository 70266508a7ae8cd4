// SPDX-License-Identifier: MIT
/*
 * Trace clocks (the trace_clock file).
 *
 * "local", "global" and "perf" are the kernel's sched_clock()-based clocks:
 * here, when the kernel itself trusts the TSC (its clocksource is "tsc"),
 * the TSC scaled to nanoseconds, calibrated once against CLOCK_MONOTONIC
 * over 5 ms and offset to match it at that moment.  That is half the cost
 * of a vDSO clock_gettime() on the machines we measured, and like
 * sched_clock it may drift from CLOCK_MONOTONIC by some ppm over time.
 * Without a trusted TSC they read CLOCK_MONOTONIC.  "mono", "mono_raw"
 * and "boot" are the POSIX clocks, "uptime" counts jiffies at HZ=250
 * (Debian's configuration), "counter" is an atomic counter, "x86-tsc" the
 * raw TSC.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "trace/ring_buffer.h"

#define UPTIME_HZ 250

const char *const __uks_trace_clock_names[UKS_NR_CLOCKS] = {
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

bool __uks_trace_clock_in_ns(enum uks_trace_clock clock)
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

static struct {
	bool usable;
	uint64_t tsc0, ns0;
	uint64_t mult;		/* ns per tick << 32 */
} tsc;
static pthread_once_t tsc_once = PTHREAD_ONCE_INIT;

static void tsc_calibrate(void)
{
#if defined(__x86_64__)
	FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
	char name[32] = "";
	uint64_t c0, c1, t0, t1;

	if (!f)
		return;
	if (!fgets(name, sizeof(name), f))
		name[0] = '\0';
	fclose(f);
	if (strcmp(name, "tsc\n"))
		return;
	t0 = ns(CLOCK_MONOTONIC);
	c0 = __builtin_ia32_rdtsc();
	do
		t1 = ns(CLOCK_MONOTONIC);
	while (t1 - t0 < 5000000);
	c1 = __builtin_ia32_rdtsc();
	if (c1 <= c0)
		return;
	tsc.mult = (uint64_t)(((unsigned __int128)(t1 - t0) << 32) / (c1 - c0));
	tsc.tsc0 = c1;
	tsc.ns0 = t1;
	tsc.usable = true;
#endif
}

/* Calibrate the local clock now rather than in the first event's write. */
void __uks_trace_clock_init(void)
{
	pthread_once(&tsc_once, tsc_calibrate);
}

static uint64_t local_ns(void)
{
#if defined(__x86_64__)
	if (__builtin_expect(tsc.usable, 1))
		return tsc.ns0 + (uint64_t)(((unsigned __int128)(__builtin_ia32_rdtsc() - tsc.tsc0) *
					     tsc.mult) >> 32);
#endif
	return ns(CLOCK_MONOTONIC);
}

uint64_t __uks_trace_clock_read(enum uks_trace_clock clock, uint64_t *counter)
{
	switch (clock) {
	case UKS_CLOCK_LOCAL:
	case UKS_CLOCK_GLOBAL:
	case UKS_CLOCK_PERF:
		return local_ns();
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
	default:	/* UKS_CLOCK_MONO */
		return ns(CLOCK_MONOTONIC);
	}
}
