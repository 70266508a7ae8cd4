/* SPDX-License-Identifier: MIT */
/*
 * The LTTng-UST peer of bench/trace-event.c's uks events: the same two
 * events with the same fields.  bench:event64 carries seven uint64_t
 * (56 bytes of payload after LTTng's event header, as uks's bench/event64
 * does after its 8-byte common header); bench:off is the one left disabled.
 *
 * bench/trace-lttng.c creates the probes (LTTng-UST 2.13 API); the call
 * sites in trace-event.c include this header plainly.  Built only when
 * pkg-config finds lttng-ust (UKS_HAVE_LTTNG_UST, set by the Makefile).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER bench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "trace-lttng-tp.h"

#if !defined(UKS_BENCH_TRACE_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define UKS_BENCH_TRACE_LTTNG_TP_H

#include <stdint.h>
#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(bench, event64,
	LTTNG_UST_TP_ARGS(uint64_t, a, uint64_t, b, uint64_t, c, uint64_t, d,
			  uint64_t, e, uint64_t, f, uint64_t, g),
	LTTNG_UST_TP_FIELDS(
		lttng_ust_field_integer(uint64_t, a, a)
		lttng_ust_field_integer(uint64_t, b, b)
		lttng_ust_field_integer(uint64_t, c, c)
		lttng_ust_field_integer(uint64_t, d, d)
		lttng_ust_field_integer(uint64_t, e, e)
		lttng_ust_field_integer(uint64_t, f, f)
		lttng_ust_field_integer(uint64_t, g, g)))

LTTNG_UST_TRACEPOINT_EVENT(bench, off,
	LTTNG_UST_TP_ARGS(uint64_t, a),
	LTTNG_UST_TP_FIELDS(lttng_ust_field_integer(uint64_t, a, a)))

#endif

#include <lttng/tracepoint-event.h>
