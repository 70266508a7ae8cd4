/* SPDX-License-Identifier: MIT */
/*
 * bench:event64, the 64-byte event the trace benchmarks write: seven
 * uint64_t fields after the common header.  Include once, after
 * UKS_CREATE_TRACE_POINTS and <uks/tracepoint.h>.
 */
#ifndef UKS_BENCH_EVENT64_H
#define UKS_BENCH_EVENT64_H

UKS_TRACE_EVENT(bench, event64,
	UKS_TP_PROTO(uint64_t a, uint64_t b, uint64_t c, uint64_t d, uint64_t e,
		     uint64_t f, uint64_t g),
	UKS_TP_ARGS(a, b, c, d, e, f, g),
	UKS_TP_FIELDS(
		(field, uint64_t, a, a), (field, uint64_t, b, b), (field, uint64_t, c, c),
		(field, uint64_t, d, d), (field, uint64_t, e, e), (field, uint64_t, f, f),
		(field, uint64_t, g, g)),
	UKS_TP_PRINTK("a=%lu b=%lu c=%lu d=%lu e=%lu f=%lu g=%lu", (unsigned long)REC->a,
		      (unsigned long)REC->b, (unsigned long)REC->c, (unsigned long)REC->d,
		      (unsigned long)REC->e, (unsigned long)REC->f, (unsigned long)REC->g))

#endif
