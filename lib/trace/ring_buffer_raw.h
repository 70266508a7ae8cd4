/* SPDX-License-Identifier: MIT */
/*
 * The kernel's ring-buffer page ("sub-buffer") layout, as trace_pipe_raw
 * hands it out and events/header_page and events/header_event describe it
 * (Documentation/trace/ring-buffer-design.rst):
 *
 *	u64 time_stamp;		the first event's time
 *	u64 commit;		data bytes | RB_MISSED_* flags
 *	data: events, each a 32-bit word { type_len:5, time_delta:27 },
 *	      then array[0..]
 *
 * type_len 1..28: the payload is type_len * 4 bytes at array[0]; 0: array[0]
 * holds the payload length + 4 and the payload follows it; 29: padding;
 * 30: time extend (delta bits 27.. in array[0]); 31: absolute time stamp.
 */
#ifndef UKS_LIB_TRACE_RING_BUFFER_RAW_H
#define UKS_LIB_TRACE_RING_BUFFER_RAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RB_PAGE_HDR		16u		/* time_stamp + commit */
#define RB_EVNT_HDR		4u
#define RB_MAX_SMALL_DATA	(28u * 4u)	/* largest payload told by type_len */
#define RB_TYPE_PADDING		29u
#define RB_TYPE_TIME_EXTEND	30u
#define RB_TYPE_TIME_STAMP	31u
#define RB_TS_SHIFT		27u
#define RB_TS_MASK		((1u << RB_TS_SHIFT) - 1)
#define RB_MISSED_EVENTS	(1ul << 31)	/* events were lost before this page */
#define RB_MISSED_STORED	(1ul << 30)	/* ... and their count follows the data */
#define RB_MISSED_FLAGS		(RB_MISSED_EVENTS | RB_MISSED_STORED)

/* Fills one page (of 4 KiB << order bytes) with events in the kernel's layout. */
struct uks_rb_page_writer {
	unsigned char *page;
	uint32_t size;		/* whole page, header included */
	uint32_t commit;	/* data bytes so far */
	uint32_t events;
	uint64_t last_ts;	/* the time the deltas are relative to */
};

void __uks_trace_rb_page_start(struct uks_rb_page_writer *w, void *page, uint32_t size);
/*
 * Append one event of @len bytes (a multiple of 4) stamped @ts.  False when
 * it does not fit: the page is unchanged.
 */
bool __uks_trace_rb_page_add(struct uks_rb_page_writer *w, uint64_t ts, const void *data,
			     uint32_t len);
/* Write the header (@lost: events missed before this page) and zero the rest. */
void __uks_trace_rb_page_finish(struct uks_rb_page_writer *w, uint64_t lost);

/* Reads a page back (tests, fuzzing, bench): the reverse of the writer. */
struct uks_rb_page_reader {
	const unsigned char *page;
	uint32_t end;		/* data bytes, from the commit word */
	uint32_t off;
	uint64_t ts;
	int64_t lost;		/* stored missed count; -1 missed, not stored; 0 none */
};

/* -EINVAL when the header does not fit in @size. */
int __uks_trace_rb_page_open(struct uks_rb_page_reader *r, const void *page, uint32_t size);
/*
 * The next event: 1 with its time, payload and length set, 0 at the end,
 * -EINVAL on a malformed record.
 */
int __uks_trace_rb_page_next(struct uks_rb_page_reader *r, uint64_t *ts, const void **data,
			     uint32_t *len);

#endif
