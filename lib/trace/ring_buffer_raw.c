// SPDX-License-Identifier: MIT
/*
 * The page writer behind trace_pipe_raw: our ring keeps events in its own
 * layout (ring_buffer.c), so a raw read encodes the events it consumes into
 * a page of the kernel's layout (ring_buffer_raw.h) -- one header word per
 * event, plus a length word for payloads over 112 bytes and a time-extend
 * record when the delta from the previous event needs more than 27 bits.
 * Our ring is multi-producer, so two threads on one CPU may commit out of
 * time order: a step back in time is written as an absolute time stamp
 * (type 31), which the kernel uses for absolute times too.
 *
 * The reader half decodes such pages for tests and fuzzing.
 */
#include <errno.h>
#include <string.h>

#include "trace/ring_buffer_raw.h"

static inline void put32(unsigned char *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void put64(unsigned char *p, uint64_t v) { memcpy(p, &v, 8); }
static inline uint32_t get32(const unsigned char *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint64_t get64(const unsigned char *p) { uint64_t v; memcpy(&v, p, 8); return v; }

static inline uint32_t evhdr(uint32_t type_len, uint32_t delta)
{
	return type_len | delta << 5;
}

void __uks_trace_rb_page_start(struct uks_rb_page_writer *w, void *page, uint32_t size)
{
	w->page = page;
	w->size = size;
	w->commit = 0;
	w->events = 0;
	w->last_ts = 0;
}

bool __uks_trace_rb_page_add(struct uks_rb_page_writer *w, uint64_t ts, const void *data,
			     uint32_t len)
{
	uint32_t room = w->size - RB_PAGE_HDR - w->commit;
	uint32_t need = RB_EVNT_HDR + len + (len > RB_MAX_SMALL_DATA ? 4 : 0);
	unsigned char *p = w->page + RB_PAGE_HDR + w->commit;
	uint64_t delta = 0;
	uint32_t type = 0;

	if (w->events) {
		if (ts < w->last_ts) {
			type = RB_TYPE_TIME_STAMP;
			delta = ts;
		} else {
			delta = ts - w->last_ts;
			if (delta > RB_TS_MASK)
				type = delta >> 59 ? RB_TYPE_TIME_STAMP : RB_TYPE_TIME_EXTEND;
		}
		if (type)
			need += 8;
	}
	if (need > room || !len)
		return false;
	if (!w->events) {
		put64(w->page, ts);
	} else if (type) {
		put32(p, evhdr(type, (uint32_t)(delta & RB_TS_MASK)));
		put32(p + 4, (uint32_t)(delta >> RB_TS_SHIFT));
		p += 8;
		delta = 0;
	}
	if (len <= RB_MAX_SMALL_DATA) {
		put32(p, evhdr(len / 4, (uint32_t)delta));
		p += 4;
	} else {
		put32(p, evhdr(0, (uint32_t)delta));
		put32(p + 4, len + 4);
		p += 8;
	}
	memcpy(p, data, len);
	w->commit += need;
	w->events++;
	w->last_ts = ts;
	return true;
}

/*
 * As the kernel: a loss is flagged in the commit word, and its count is
 * stored after the data when a long fits there.
 */
void __uks_trace_rb_page_finish(struct uks_rb_page_writer *w, uint64_t lost)
{
	uint32_t data = w->size - RB_PAGE_HDR, end = w->commit;
	uint64_t commit = w->commit;

	if (!w->events)
		put64(w->page, 0);
	if (lost) {
		commit |= RB_MISSED_EVENTS;
		if (end + 8 <= data) {
			put64(w->page + RB_PAGE_HDR + end, lost);
			end += 8;
			commit |= RB_MISSED_STORED;
		}
	}
	put64(w->page + 8, commit);
	memset(w->page + RB_PAGE_HDR + end, 0, data - end);
}

int __uks_trace_rb_page_open(struct uks_rb_page_reader *r, const void *page, uint32_t size)
{
	uint64_t commit;

	if (size < RB_PAGE_HDR)
		return -EINVAL;
	r->page = page;
	r->ts = get64(r->page);
	commit = get64(r->page + 8);
	r->end = (uint32_t)(commit & ~RB_MISSED_FLAGS);
	r->off = 0;
	r->lost = 0;
	if ((commit & ~RB_MISSED_FLAGS) > size - RB_PAGE_HDR)
		return -EINVAL;
	if (commit & RB_MISSED_STORED) {
		if (r->end + 8 > size - RB_PAGE_HDR)
			return -EINVAL;
		r->lost = (int64_t)get64(r->page + RB_PAGE_HDR + r->end);
	} else if (commit & RB_MISSED_EVENTS) {
		r->lost = -1;
	}
	return 0;
}

int __uks_trace_rb_page_next(struct uks_rb_page_reader *r, uint64_t *ts, const void **data,
			     uint32_t *len)
{
	const unsigned char *d = r->page + RB_PAGE_HDR;

	while (r->off < r->end) {
		uint32_t left = r->end - r->off, w, type, delta, n;

		if (left < 4)
			return -EINVAL;
		w = get32(d + r->off);
		type = w & 31;
		delta = w >> 5;
		if (type >= RB_TYPE_PADDING) {
			if (left < 8)
				return -EINVAL;
			n = get32(d + r->off + 4);
			if (type == RB_TYPE_PADDING) {
				if (!delta)
					return 0;	/* the rest of the page is padding */
				/* a discarded record: array[0] is its length past the word */
				if (n < 4 || n > left - 4)
					return -EINVAL;
				r->off += 4 + n;
				continue;
			}
			if (type == RB_TYPE_TIME_EXTEND)
				r->ts += (uint64_t)n << RB_TS_SHIFT | delta;
			else
				r->ts = (uint64_t)n << RB_TS_SHIFT | delta;
			r->off += 8;
			continue;
		}
		if (type) {
			n = type * 4;
			if (n > left - 4)
				return -EINVAL;
			*data = d + r->off + 4;
			r->off += 4 + n;
		} else {
			if (left < 8)
				return -EINVAL;
			n = get32(d + r->off + 4);
			if (n < 4 || n - 4 > left - 8)
				return -EINVAL;
			n -= 4;
			*data = d + r->off + 8;
			r->off += 8 + n;
		}
		r->ts += delta;
		*ts = r->ts;
		*len = n;
		return 1;
	}
	return 0;
}
