// SPDX-License-Identifier: MIT
/*
 * The kernel's ring-buffer page layout as trace_pipe_raw writes it: golden
 * bytes for small, large and time-extended events, the missed-events
 * flags, and the batch reader of the ring under it.
 */
#include <string.h>

#include <uks/core.h>

#include "trace/ring_buffer.h"
#include "trace/ring_buffer_raw.h"
#include "harness.h"

static unsigned char page[4096];

#define LE32(v)	(v) & 0xff, ((v) >> 8) & 0xff, ((v) >> 16) & 0xff, ((v) >> 24) & 0xff
#define LE64(v)	LE32((uint64_t)(v) & 0xffffffff), LE32((uint64_t)(v) >> 32)

static bool page_is(const unsigned char *want, size_t len)
{
	if (memcmp(page, want, len))
		return false;
	for (size_t i = len; i < sizeof(page); i++)
		if (page[i])
			return false;
	return true;
}

TEST(small_events_carry_their_length_in_type_len)
{
	struct uks_rb_page_writer w;
	uint64_t a = 0x1111111122222222ull, b = 0x3333333344444444ull;
	static const unsigned char want[] = {
		LE64(1000), LE64(24),
		LE32(2u), LE64(0x1111111122222222ull),		/* type_len 2, delta 0 */
		LE32(2u | 10u << 5), LE64(0x3333333344444444ull),	/* delta 10 */
	};

	memset(page, 0xaa, sizeof(page));
	__uks_trace_rb_page_start(&w, page, sizeof(page));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, 1000, &a, 8));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, 1010, &b, 8));
	__uks_trace_rb_page_finish(&w, 0);
	ASSERT_TRUE(page_is(want, sizeof(want)));
}

TEST(a_payload_over_112_bytes_has_a_length_word)
{
	struct uks_rb_page_writer w;
	unsigned char big[120], small[112];
	unsigned char want[16 + 8 + 120 + 4 + 112];
	size_t o = 0;

	memset(big, 0x5a, sizeof(big));
	memset(small, 0x77, sizeof(small));
	memcpy(want, (unsigned char[]){ LE64(7), LE64(8 + 120 + 4 + 112) }, 16);
	o = 16;
	memcpy(want + o, (unsigned char[]){ LE32(0u), LE32(124u) }, 8);	/* array[0] = len + 4 */
	o += 8;
	memcpy(want + o, big, sizeof(big));
	o += sizeof(big);
	memcpy(want + o, (unsigned char[]){ LE32(28u | 3u << 5) }, 4);	/* data max type_len */
	o += 4;
	memcpy(want + o, small, sizeof(small));
	__uks_trace_rb_page_start(&w, page, sizeof(page));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, 7, big, sizeof(big)));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, 10, small, sizeof(small)));
	__uks_trace_rb_page_finish(&w, 0);
	ASSERT_TRUE(page_is(want, sizeof(want)));
}

TEST(a_delta_over_27_bits_gets_a_time_extend_and_a_step_back_a_time_stamp)
{
	struct uks_rb_page_writer w;
	uint64_t v = 0x0102030405060708ull, t0 = 5000, t1 = t0 + (3ull << 27) + 9, t2 = 4000;
	static const unsigned char want[] = {
		LE64(5000), LE64(12 + 8 + 12 + 8 + 12),
		LE32(2u), LE64(0x0102030405060708ull),
		LE32(30u | 9u << 5), LE32(3u),			/* time extend: 3 << 27 | 9 */
		LE32(2u), LE64(0x0102030405060708ull),		/* then delta 0 */
		LE32(31u | (4000u & 0x7ffffff) << 5), LE32(0u),	/* absolute 4000 */
		LE32(2u), LE64(0x0102030405060708ull),
	};
	struct uks_rb_page_reader r;
	const void *data;
	uint32_t len;
	uint64_t ts;

	__uks_trace_rb_page_start(&w, page, sizeof(page));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, t0, &v, 8));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, t1, &v, 8));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, t2, &v, 8));
	__uks_trace_rb_page_finish(&w, 0);
	ASSERT_TRUE(page_is(want, sizeof(want)));
	/* And back. */
	ASSERT_EQ(0, __uks_trace_rb_page_open(&r, page, sizeof(page)));
	ASSERT_EQ(1, __uks_trace_rb_page_next(&r, &ts, &data, &len));
	ASSERT_EQ(t0, ts);
	ASSERT_EQ(1, __uks_trace_rb_page_next(&r, &ts, &data, &len));
	ASSERT_EQ(t1, ts);
	ASSERT_EQ(1, __uks_trace_rb_page_next(&r, &ts, &data, &len));
	ASSERT_EQ(t2, ts);
	ASSERT_EQ(8, len);
	ASSERT_EQ(0, memcmp(data, &v, 8));
	ASSERT_EQ(0, __uks_trace_rb_page_next(&r, &ts, &data, &len));
}

TEST(missed_events_are_flagged_and_counted_after_the_data_when_it_fits)
{
	struct uks_rb_page_writer w;
	uint64_t v = 42, n = 0;
	static const unsigned char want[] = {
		LE64(1), LE32(12u | 0xc0000000u), LE32(0u),	/* RB_MISSED_EVENTS | _STORED */
		LE32(2u), LE64(42), LE64(7),		/* the count after the data */
	};
	struct uks_rb_page_reader r;

	__uks_trace_rb_page_start(&w, page, sizeof(page));
	ASSERT_TRUE(__uks_trace_rb_page_add(&w, 1, &v, 8));
	__uks_trace_rb_page_finish(&w, 7);
	ASSERT_TRUE(page_is(want, sizeof(want)));
	ASSERT_EQ(0, __uks_trace_rb_page_open(&r, page, sizeof(page)));
	ASSERT_EQ(7, r.lost);

	/* A full page has no room for the count: the flag alone. */
	__uks_trace_rb_page_start(&w, page, sizeof(page));
	while (__uks_trace_rb_page_add(&w, 1, &v, 8))
		n++;
	ASSERT_EQ(4080 / 12, n);
	ASSERT_FALSE(__uks_trace_rb_page_add(&w, 1, &v, 4));	/* 4080 - 340 * 12 = 0 */
	__uks_trace_rb_page_finish(&w, 3);
	ASSERT_EQ(0, __uks_trace_rb_page_open(&r, page, sizeof(page)));
	ASSERT_EQ(-1, r.lost);
	memcpy(&v, page + 8, 8);
	ASSERT_EQ(0x80000000ull | 4080, v);
}

static bool take(void *arg, uint64_t ts, const void *data, unsigned int len)
{
	return __uks_trace_rb_page_add(arg, ts, data, len);
}

TEST(batches_consume_what_fits_and_report_overwritten_events_once)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 3 * 4096);
	struct uks_rb_page_writer w;
	struct uks_rb_page_reader r;
	uint64_t lost = 99, ts, want = 0, total = 0;
	const void *data;
	uint32_t len;
	int n;

	ASSERT_NONNULL(rb);
	/* 1000 events in 3 pages: the oldest are overwritten. */
	for (uint64_t i = 0; i < 1000; i++) {
		unsigned int cpu;
		uint64_t *e = __uks_trace_rb_reserve(rb, 8, &cpu);

		ASSERT_NONNULL(e);
		*e = i;
		__uks_trace_rb_commit(rb, e);
	}
	for (int round = 0;; round++) {
		__uks_trace_rb_page_start(&w, page, 200);	/* a short read's page */
		n = __uks_trace_rb_consume_batch(rb, 0, take, &w, &lost);
		ASSERT_GE(n, 0);
		if (!n)
			break;
		ASSERT_LE(n, (200 - 16) / 12);
		if (round)
			ASSERT_EQ(0, lost);
		else
			ASSERT_GT(lost, 0);
		if (!round)
			want = lost;	/* events before the first one we see */
		__uks_trace_rb_page_finish(&w, lost);
		ASSERT_EQ(0, __uks_trace_rb_page_open(&r, page, 200));
		while (__uks_trace_rb_page_next(&r, &ts, &data, &len) == 1) {
			uint64_t got;

			memcpy(&got, data, 8);	/* payloads are 4-byte aligned in a page */
			ASSERT_EQ(want, got);
			want++;
			total++;
		}
	}
	ASSERT_EQ(1000, want);
	ASSERT_LT(total, 1000);
	__uks_trace_rb_free(rb);
}

TEST_HARNESS_MAIN
