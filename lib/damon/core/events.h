/* SPDX-License-Identifier: MIT */
/*
 * damon:damon_aggregated of Linux 5.15 (include/trace/events/damon.h),
 * and 6.15's damon:damon_monitor_intervals_tune (the goal's new sampling
 * interval, which damo records).  damon_aggregated of Linux 5.15:
 * the same fields in the same order and the same print format.  The one
 * difference is the value of target_id: 5.15's debugfs puts a struct pid
 * pointer there, uks puts the target's id (the pid for vaddr targets), so
 * a trace line names the process it is about.
 */
#ifndef UKS_LIB_DAMON_CORE_EVENTS_H
#define UKS_LIB_DAMON_CORE_EVENTS_H

#include <uks/tracepoint.h>

UKS_TRACE_EVENT(damon, damon_aggregated,
	UKS_TP_PROTO(unsigned long target_id, unsigned int nr_regions, unsigned long start,
		     unsigned long end, unsigned int nr_accesses),
	UKS_TP_ARGS(target_id, nr_regions, start, end, nr_accesses),
	UKS_TP_FIELDS(
		(field, unsigned long, target_id, target_id),
		(field, unsigned int, nr_regions, nr_regions),
		(field, unsigned long, start, start),
		(field, unsigned long, end, end),
		(field, unsigned int, nr_accesses, nr_accesses)),
	UKS_TP_PRINTK("target_id=%lu nr_regions=%u %lu-%lu: %u",
		      REC->target_id, REC->nr_regions, REC->start, REC->end,
		      REC->nr_accesses))

/* 6.15's: the sampling interval the intervals goal just set. */
UKS_TRACE_EVENT(damon, damon_monitor_intervals_tune,
	UKS_TP_PROTO(unsigned long sample_us),
	UKS_TP_ARGS(sample_us),
	UKS_TP_FIELDS(
		(field, unsigned long, sample_us, sample_us)),
	UKS_TP_PRINTK("sample_us=%lu", REC->sample_us))

#endif
