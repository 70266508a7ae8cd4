// SPDX-License-Identifier: MIT
/*
 * The LTTng-UST tracepoint provider of bench/trace-event (statically linked
 * into it): the probes, the tracepoint definitions and their registration.
 * Not a benchmark of its own; the Makefile links it into trace-event only.
 */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "trace-lttng-tp.h"
