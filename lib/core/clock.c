// SPDX-License-Identifier: MIT
/* Clocks in nanoseconds (the trace clocks build on these). */
#include <time.h>

#include <uks/core.h>
#include "core/compiler.h"

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/** uks_clock_mono_ns - Return: CLOCK_MONOTONIC in ns (the kernel's "mono"). */
UKS_EXPORT uint64_t uks_clock_mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

/** uks_clock_real_ns - Return: CLOCK_REALTIME in ns since the epoch. */
UKS_EXPORT uint64_t uks_clock_real_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
