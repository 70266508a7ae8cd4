// SPDX-License-Identifier: MIT
/*
 * The self agent's binary stream (lib/damon/record/record_packets.c): a monitor's
 * aggregations, written as packets and fed to a record writer, make a
 * record whose snapshots are the monitor's own, with the bytes the same
 * events give as trace_pipe text and as snapshots written directly; each
 * packet fits PIPE_BUF; a snapshot cut by an exec() is dropped and the
 * stream goes on; bytes that start no packet (trace text among them) are
 * skipped, never parsed.
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/mman.h>

#include <uks/damon_record.h>

#include "damon/record/record.h"
#include "harness.h"
#include "unit/damon/helper.h"

struct buf {
	unsigned char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

/* A target of @nr regions, page multiples of varying size, with counts. */
static struct damon_target *make_target(unsigned long id, unsigned int nr, unsigned long base)
{
	struct damon_target *t = __uks_damon_new_target(id);

	for (unsigned int i = 0; t && i < nr; i++) {
		unsigned long sz = 4096UL * (1 + (i * 7 + id) % 13);
		struct damon_region *r = __uks_damon_new_region(base, base + sz);

		if (!r)
			return NULL;
		r->nr_accesses = (i * 31 + (unsigned int)id) % 21;
		__uks_damon_add_region(r, t);
		base += sz + (i % 5 ? 0 : 8192);	/* some gaps */
	}
	return t;
}

static struct uks_damon_rec_snapshot snapshot_of(struct damon_target *t, int64_t ts)
{
	struct uks_damon_rec_snapshot s = { .target_id = t->id, .start_ns = ts, .end_ns = ts };
	struct damon_region *r;
	uint32_t i = 0;

	s.regions = calloc(t->nr_regions, sizeof(*s.regions));
	damon_for_each_region(r, t) {
		s.regions[i].start = r->ar.start;
		s.regions[i].end = r->ar.end;
		s.regions[i++].nr_accesses = r->nr_accesses;
	}
	s.nr_regions = i;
	return s;
}

/* The trace_pipe lines of one aggregation of @t, as the tracepoint prints them. */
static void trace_lines(struct buf *b, struct damon_target *t, int64_t ts)
{
	struct damon_region *r;
	char line[256];

	damon_for_each_region(r, t) {
		int n = snprintf(line, sizeof(line),
				 "       kdamond.0-77      [000] .....  %lld.%06lld: damon_aggregated: "
				 "target_id=%lu nr_regions=%u %lu-%lu: %u\n",
				 (long long)(ts / 1000000000), (long long)(ts % 1000000000 / 1000),
				 t->id, t->nr_regions, r->ar.start, r->ar.end, r->nr_accesses);

		buf_add(b, line, (size_t)n);
	}
}

/* The whole content of memfd @fd. */
static struct buf file_bytes(int fd)
{
	struct buf b = { 0 };
	unsigned char tmp[65536];
	ssize_t n;

	lseek(fd, 0, SEEK_SET);
	while ((n = read(fd, tmp, sizeof(tmp))) > 0)
		buf_add(&b, tmp, (size_t)n);
	return b;
}

/* Feed @b to a new writer in chunks of the sizes in @chunks, cycling. */
static struct buf record_of_stream(const struct buf *b, bool text, const size_t *chunks,
				   size_t nr_chunks, struct uks_damon_rec_stats *st)
{
	int fd = memfd_create("rec", 0);
	struct uks_damon_rec_writer *w;
	struct buf out = { 0 };

	if (fd < 0 || uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, &w))
		return out;
	for (size_t off = 0, i = 0; off < b->len; i++) {
		size_t n = chunks ? chunks[i % nr_chunks] : b->len;

		if (n > b->len - off)
			n = b->len - off;
		if (text)
			uks_damon_rec_writer_feed(w, (const char *)b->p + off, n);
		else
			uks_damon_rec_writer_feed_packets(w, b->p + off, n);
		off += n;
	}
	uks_damon_rec_writer_finish(w, st);
	out = file_bytes(fd);
	close(fd);
	return out;
}

/*
 * Put @t at @ts through a packet-mode pipe (O_DIRECT: a read returns one
 * write) and add what came out to @stream; each packet must fit PIPE_BUF
 * and start with the magic.
 */
static int put_through_pipe(struct damon_target *t, int64_t ts, struct buf *stream,
			    unsigned int *packets)
{
	unsigned char pkt[PIPE_BUF * 2];
	int p[2];
	ssize_t n;

	if (pipe2(p, O_DIRECT | O_NONBLOCK))
		return -errno;
	if (__uks_damon_rec_packets_put(p[1], (struct uks_damon_target *)t, ts))
		return -EIO;
	while ((n = read(p[0], pkt, sizeof(pkt))) > 0) {
		if (n > PIPE_BUF || memcmp(pkt, "dAgg", 4))
			return -EPROTO;
		buf_add(stream, pkt, (size_t)n);
		++*packets;
	}
	close(p[0]);
	close(p[1]);
	return 0;
}

TEST(packets_fit_pipe_buf_and_make_the_bytes_of_trace_lines)
{
	/* 203 regions fill one packet exactly; 1000 take five */
	struct damon_target *t[] = {
		make_target(4242, 1000, 0x10000000UL), make_target(7, 3, 0x7f0000000000UL),
		make_target(1, 203, 0x20000000UL), make_target(2, 204, 0x30000000UL),
	};
	static const int order[] = { 0, 1, 2, 3, 0, 1 };
	static const size_t chunks[] = { 1, 7, 28, 4088, 333, 5000, 19 };
	struct buf stream = { 0 }, text = { 0 }, direct, via_packets, via_text;
	struct uks_damon_rec_writer *w;
	struct uks_damon_rec_stats st;
	unsigned long regions = 0;
	unsigned int packets = 0;
	int fd = memfd_create("direct", 0);

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, &w));
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		struct damon_target *tt = t[order[i]];
		int64_t ts = 812114432000LL + (int64_t)i / 2 * 100000000LL;
		struct uks_damon_rec_snapshot s = snapshot_of(tt, ts);

		ASSERT_EQ(0, put_through_pipe(tt, ts, &stream, &packets));
		trace_lines(&text, tt, ts);
		ASSERT_EQ(0, uks_damon_rec_write_snapshot(w, &s));
		regions += tt->nr_regions;
		free(s.regions);
	}
	ASSERT_EQ(0, uks_damon_rec_writer_finish(w, NULL));
	direct = file_bytes(fd);
	close(fd);
	ASSERT_EQ(5U + 1 + 1 + 2 + 5 + 1, packets);

	via_packets = record_of_stream(&stream, false, chunks, sizeof(chunks) / sizeof(chunks[0]),
				       &st);
	EXPECT_EQ(regions, st.lines);
	EXPECT_EQ(0UL, st.bad_lines);
	EXPECT_EQ(0UL, st.dropped);
	EXPECT_EQ(6UL, st.snapshots);
	ASSERT_EQ(direct.len, via_packets.len);
	ASSERT_EQ(0, memcmp(direct.p, via_packets.p, direct.len));

	via_text = record_of_stream(&text, true, NULL, 0, &st);
	EXPECT_EQ(regions, st.lines);
	ASSERT_EQ(direct.len, via_text.len);
	ASSERT_EQ(0, memcmp(direct.p, via_text.p, direct.len));
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		__uks_damon_destroy_target(t[i]);
	free(stream.p), free(text.p), free(direct.p), free(via_packets.p), free(via_text.p);
}

/* ------------------------------------------------ a running monitor */

#define AGGREGATIONS	20

struct seen {
	int fd;				/* the stream's write end */
	int aggregations;
	int err;
	struct uks_damon_rec_snapshot snap[AGGREGATIONS];
};

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct seen *seen = uks_damon_callback_private(ctx);
	struct damon_target *t = list_first_entry(&ctx->adaptive_targets, struct damon_target,
						  list);
	/* nanoseconds that trace_pipe text would lose */
	int64_t ts = 1000000000LL * (seen->aggregations + 1) + 123;

	seen->snap[seen->aggregations] = snapshot_of(t, ts);
	seen->err |= __uks_damon_rec_packets_put(seen->fd, (struct uks_damon_target *)t, ts);
	return ++seen->aggregations >= AGGREGATIONS;
}

struct feeder {
	int fd;
	struct uks_damon_rec_writer *w;
};

static void *feed_fn(void *arg)
{
	struct feeder *f = arg;
	char buf[3000];		/* packets cross reads */
	ssize_t n;

	while ((n = read(f->fd, buf, sizeof(buf))) > 0)
		uks_damon_rec_writer_feed_packets(f->w, buf, (size_t)n);
	return NULL;
}

TEST_TIMEOUT(a_monitors_snapshots_reach_the_record_unchanged, 60)
{
	struct uks_damon_synth *s;
	struct seen seen = { 0 };
	struct uks_damon_callback cb = { .priv = &seen,
					 .after_aggregation = after_aggregation };
	struct uks_damon_ctx *ctx;
	struct uks_damon_record *rec;
	struct uks_damon_rec_stats st;
	struct feeder f;
	pthread_t th;
	int p[2], out = memfd_create("rec", 0);
	unsigned long big = 0;

	ASSERT_LE(0, out);
	ASSERT_EQ(0, pipe2(p, O_CLOEXEC));
	ASSERT_EQ(0, uks_damon_synth_create(&s));
	/* a process's three areas: heap, libraries, stack */
	ASSERT_EQ(0, uks_damon_synth_add_mapping(s, 0x10000000UL, 0x30000000UL));
	ASSERT_EQ(0, uks_damon_synth_add_mapping(s, 0x7f0000000000UL, 0x7f0004000000UL));
	ASSERT_EQ(0, uks_damon_synth_add_mapping(s, 0x7ffff0000000UL, 0x7ffff0800000UL));
	ASSERT_EQ(0, uks_damon_synth_add_phase(s, 1000));
	ASSERT_EQ(0, uks_damon_synth_add_access(s, 0x14000000UL, 0x15000000UL, 800));
	seen.fd = p[1];
	f.fd = p[0];
	ASSERT_EQ(0, uks_damon_rec_writer_create(out, UKS_DAMON_RECFMT_VERSION, &f.w));
	ASSERT_EQ(0, pthread_create(&th, NULL, feed_fn, &f));
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	/* at least 300 regions: every snapshot spans packets */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 500, 5000, 1000000, 300, 1000));
	ASSERT_EQ(0, uks_damon_add_target(ctx, 31337, s, NULL));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 1200 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	close(p[1]);
	pthread_join(th, NULL);
	close(p[0]);
	ASSERT_EQ(0, uks_damon_rec_writer_finish(f.w, &st));
	ASSERT_EQ(0, seen.err);
	EXPECT_EQ(0UL, st.bad_lines);
	EXPECT_EQ(0UL, st.dropped);
	ASSERT_EQ((unsigned long)AGGREGATIONS, st.snapshots);

	struct buf bytes = file_bytes(out);

	ASSERT_EQ(0, uks_damon_record_parse(bytes.p, bytes.len, &rec));
	ASSERT_EQ((size_t)AGGREGATIONS, rec->nr_snapshots);
	for (int i = 0; i < AGGREGATIONS; i++) {
		const struct uks_damon_rec_snapshot *a = &rec->snapshots[i], *m = &seen.snap[i];

		ASSERT_EQ(31337ULL, a->target_id);
		ASSERT_EQ(m->end_ns, a->end_ns);
		ASSERT_EQ(m->nr_regions, a->nr_regions);
		for (uint32_t j = 0; j < m->nr_regions; j++) {
			ASSERT_EQ(m->regions[j].start, a->regions[j].start);
			ASSERT_EQ(m->regions[j].end, a->regions[j].end);
			ASSERT_EQ(m->regions[j].nr_accesses, a->regions[j].nr_accesses);
		}
		big += m->nr_regions > 203;
		free(m->regions);
	}
	ASSERT_EQ((unsigned long)AGGREGATIONS, big);
	uks_damon_record_free(rec);
	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(s);
	free(bytes.p);
	close(out);
}

/* ------------------------------------------------ cuts and garbage */

TEST(a_snapshot_cut_by_exec_is_dropped_and_the_stream_goes_on)
{
	struct damon_target *a = make_target(9, 1000, 0x10000000UL);
	struct damon_target *b = make_target(9, 1000, 0x10000000UL);
	struct buf whole = { 0 }, stream = { 0 }, direct, got;
	struct uks_damon_rec_stats st;
	struct uks_damon_rec_writer *w;
	struct uks_damon_rec_snapshot s;
	unsigned int packets = 0;
	size_t three = 0;
	int fd = memfd_create("direct", 0);

	/* the first image wrote three of its five packets when exec() came */
	ASSERT_EQ(0, put_through_pipe(a, 1000000000LL, &whole, &packets));
	for (int i = 0; i < 3; i++) {
		uint32_t nr;

		memcpy(&nr, whole.p + three + 4, 4);
		three += 28 + (size_t)nr * 20;
	}
	buf_add(&stream, whole.p, three);
	ASSERT_EQ(0, put_through_pipe(b, 2000000000LL, &stream, &packets));
	got = record_of_stream(&stream, false, NULL, 0, &st);
	EXPECT_EQ(609UL, st.dropped);
	EXPECT_EQ(0UL, st.bad_lines);
	EXPECT_EQ(1UL, st.snapshots);

	ASSERT_EQ(0, uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, &w));
	s = snapshot_of(b, 2000000000LL);
	ASSERT_EQ(0, uks_damon_rec_write_snapshot(w, &s));
	ASSERT_EQ(0, uks_damon_rec_writer_finish(w, NULL));
	direct = file_bytes(fd);
	ASSERT_EQ(direct.len, got.len);
	ASSERT_EQ(0, memcmp(direct.p, got.p, got.len));
	__uks_damon_destroy_target(a);
	__uks_damon_destroy_target(b);
	free(s.regions), free(whole.p), free(stream.p), free(direct.p), free(got.p);
	close(fd);
}

TEST(bytes_that_start_no_packet_are_skipped_not_parsed)
{
	struct damon_target *t = make_target(5, 250, 0x10000000UL);
	struct buf stream = { 0 }, text = { 0 }, got;
	struct uks_damon_rec_stats st;
	unsigned int packets = 0;

	/* trace text is no packet: none of it may become a snapshot */
	trace_lines(&text, t, 3000000000LL);
	buf_add(&stream, text.p, text.len);
	ASSERT_EQ(0, put_through_pipe(t, 4000000000LL, &stream, &packets));
	buf_add(&stream, "dAg", 3);		/* garbage between packets */
	ASSERT_EQ(0, put_through_pipe(t, 5000000000LL, &stream, &packets));
	/* and a packet cut short at the end */
	ASSERT_EQ(0, put_through_pipe(t, 6000000000LL, &stream, &packets));
	stream.len -= 30;
	got = record_of_stream(&stream, false, (const size_t[]){ 100 }, 1, &st);
	EXPECT_EQ(2UL, st.snapshots);
	EXPECT_EQ(3UL, st.bad_lines);		/* the text, "dAg", the cut packet */
	EXPECT_EQ(203UL, st.dropped);		/* the first packet of the cut snapshot */
	ASSERT_EQ(16 + 4 + 2 * (32UL + 250 * 20), got.len);
	__uks_damon_destroy_target(t);
	free(stream.p), free(text.p), free(got.p);
}

TEST_HARNESS_MAIN
