/* SPDX-License-Identifier: MIT */
/*
 * vduse:vduse_request and vduse:vduse_complete: one record when a chain
 * becomes a request and one when its status is written, so eprobes and
 * filters can select block I/O by queue, type, sector or status.  @type is
 * the virtio-blk request type (0 IN, 1 OUT, 4 FLUSH, 8 GET_ID, 11 DISCARD,
 * 13 WRITE_ZEROES; 0xffffffff for a chain rejected before its header was
 * read), @length the data bytes, @latency the nanoseconds from taking the
 * chain to returning it.
 */
#ifndef UKS_LIB_VDUSE_EVENTS_H
#define UKS_LIB_VDUSE_EVENTS_H

#include <uks/tracepoint.h>

UKS_TRACE_EVENT(vduse, vduse_request,
	UKS_TP_PROTO(unsigned int queue, unsigned int type, unsigned long long sector,
		     unsigned int length),
	UKS_TP_ARGS(queue, type, sector, length),
	UKS_TP_FIELDS(
		(field, unsigned int, queue, queue),
		(field, unsigned int, type, type),
		(field, unsigned long long, sector, sector),
		(field, unsigned int, length, length)),
	UKS_TP_PRINTK("queue=%u type=%u sector=%llu length=%u",
		      REC->queue, REC->type, REC->sector, REC->length))

UKS_TRACE_EVENT(vduse, vduse_complete,
	UKS_TP_PROTO(unsigned int queue, unsigned int type, unsigned long long sector,
		     unsigned int length, unsigned int status, unsigned long long latency),
	UKS_TP_ARGS(queue, type, sector, length, status, latency),
	UKS_TP_FIELDS(
		(field, unsigned int, queue, queue),
		(field, unsigned int, type, type),
		(field, unsigned long long, sector, sector),
		(field, unsigned int, length, length),
		(field, unsigned int, status, status),
		(field, unsigned long long, latency, latency)),
	UKS_TP_PRINTK("queue=%u type=%u sector=%llu length=%u status=%u latency=%llu",
		      REC->queue, REC->type, REC->sector, REC->length, REC->status,
		      REC->latency))

#endif
