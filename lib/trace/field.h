/* SPDX-License-Identifier: MIT */
/*
 * Event fields: the description of one member of a trace record, shared by
 * the format file printer, the filter compiler and the probe-argument
 * fetcher.  Offsets are from the start of the record, i.e. the common header
 * (common_type … common_pid, 8 bytes) is at offset 0 and an event's own
 * fields follow it, as in the kernel's struct trace_entry.
 */
#ifndef UKS_LIB_TRACE_FIELD_H
#define UKS_LIB_TRACE_FIELD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* struct uks_event_field, enum uks_field_filter_type, struct uks_trace_entry */
#include <uks/tracepoint.h>

/* Flag bits of uks_trace_entry.flags (the kernel's TRACE_FLAG_* values). */
#define UKS_TRACE_FLAG_IRQS_OFF		0x01
#define UKS_TRACE_FLAG_IRQS_NOSUPPORT	0x02
#define UKS_TRACE_FLAG_NEED_RESCHED	0x04
#define UKS_TRACE_FLAG_HARDIRQ		0x08
#define UKS_TRACE_FLAG_SOFTIRQ		0x10
#define UKS_TRACE_FLAG_PREEMPT_RESCHED	0x20
#define UKS_TRACE_FLAG_NMI		0x40

/* __data_loc helpers: the u32 holds the length in the high half. */
static inline uint32_t uks_data_loc(unsigned int offset, unsigned int len)
{
	return (uint32_t)len << 16 | (offset & 0xffff);
}
static inline unsigned int uks_data_loc_offset(uint32_t loc) { return loc & 0xffff; }
static inline unsigned int uks_data_loc_len(uint32_t loc) { return loc >> 16; }

/**
 * __uks_trace_event_field_find - look a field up by name
 * Returns the field or NULL.
 */
const struct uks_event_field *__uks_trace_event_field_find(const struct uks_event_field *fields,
							   size_t nr, const char *name);

#endif
