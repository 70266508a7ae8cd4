// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the kernel-layout page writer and reader behind
 * trace_pipe_raw (lib/trace/ring_buffer_raw.c):
 *
 *  - round trip: the input is a list of events (time step, length,
 *    payload bytes) and a missed count; what the writer accepts must read
 *    back event for event -- same time, length and bytes -- with the
 *    missed count, and every refused event must really not have fitted;
 *  - the reader on the raw input as a page (any commit word, any records)
 *    ends or fails cleanly and never hands out bytes outside the page.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "trace/ring_buffer_raw.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_EVENTS 512

struct ev { uint64_t ts; uint32_t len; const uint8_t *data; };

static void round_trip(const uint8_t *in, size_t size)
{
	static unsigned char page[16384];
	static struct ev evs[MAX_EVENTS];
	struct uks_rb_page_writer w;
	struct uks_rb_page_reader r;
	uint32_t psize, n = 0, len;
	uint64_t ts = 0, lost = 0, t;
	const void *d;
	size_t i = 0;

	if (size < 2)
		return;
	psize = 4096u << (in[0] % 3);
	memcpy(&lost, in + 1, 1);	/* 0..255 */
	i = 2;
	__uks_trace_rb_page_start(&w, page, psize);
	while (i + 3 <= size && n < MAX_EVENTS) {
		uint8_t step = in[i], l = in[i + 1];

		/* time: small steps, 27-bit-plus jumps, steps back */
		if (step & 0x80)
			ts += (uint64_t)(step & 0x7f) << 24;
		else if (step & 0x40)
			ts = ts > (step & 0x3f) ? ts - (step & 0x3f) : 0;
		else
			ts += step;
		len = (uint32_t)(l % 64 + 1) * 4;	/* 4..256: both sides of 112 */
		i += 2;
		if (i + len > size)
			len = (uint32_t)((size - i) & ~3ul);
		if (!len)
			break;
		if (!__uks_trace_rb_page_add(&w, ts, in + i, len)) {
			/* refused: it did not fit (header, length word, time record) */
			if (w.commit + 4 + len + 8 + 8 <= psize - RB_PAGE_HDR)
				abort();
			break;
		}
		evs[n++] = (struct ev){ ts, len, in + i };
		i += len;
	}
	__uks_trace_rb_page_finish(&w, lost);
	if (__uks_trace_rb_page_open(&r, page, psize))
		abort();
	if (lost && r.lost != (int64_t)lost && r.lost != -1)
		abort();
	if (!lost && r.lost)
		abort();
	for (uint32_t k = 0; k < n; k++) {
		if (__uks_trace_rb_page_next(&r, &t, &d, &len) != 1)
			abort();
		if (t != evs[k].ts || len != evs[k].len || memcmp(d, evs[k].data, len))
			abort();
	}
	if (__uks_trace_rb_page_next(&r, &t, &d, &len) != 0)
		abort();
}

static void decode(const uint8_t *in, size_t size)
{
	struct uks_rb_page_reader r;
	const unsigned char *p;
	const void *d;
	uint32_t len;
	uint64_t t;
	int guard = 0;

	if (size > 65536 || __uks_trace_rb_page_open(&r, in, (uint32_t)size))
		return;
	while (__uks_trace_rb_page_next(&r, &t, &d, &len) == 1) {
		p = d;
		if (p < in + RB_PAGE_HDR || p + len > in + size)
			abort();
		if (++guard > 65536)
			abort();	/* every record moves forward */
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	round_trip(data, size);
	decode(data, size);
	return 0;
}
