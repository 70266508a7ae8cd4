// SPDX-License-Identifier: MIT
/* The per-CPU ring buffer: writes, reads, overwrite, stats, concurrency. */
#include <pthread.h>
#include <sched.h>
#include <signal.h>

#include <uks/core.h>

#include "trace/ring_buffer.h"
#include "harness.h"

struct ev { uint32_t writer; uint32_t seq; uint64_t pad[6]; };	/* 56 bytes */

static void put(struct uks_rb *rb, uint32_t writer, uint32_t seq)
{
	unsigned int cpu;
	struct ev *e = __uks_trace_rb_reserve(rb, sizeof(*e), &cpu);

	if (e) {
		e->writer = writer;
		e->seq = seq;
		__uks_trace_rb_commit(rb, e);
	}
}

TEST(write_read_in_order)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(uks_nr_cpu_ids(), 64 * 1024);
	struct uks_rb_snapshot *snap;
	struct uks_rb_event ev;
	struct uks_rb_stats st;
	uint64_t last = 0;
	uint32_t n = 0;

	ASSERT_NE(NULL, rb);
	for (uint32_t i = 0; i < 500; i++)
		put(rb, 0, i);
	snap = __uks_trace_rb_snapshot(rb);
	ASSERT_NE(NULL, snap);
	while (__uks_trace_rb_snapshot_next(snap, &ev)) {
		const struct ev *e = ev.data;

		ASSERT_EQ(n, e->seq);
		ASSERT_GE(ev.ts, last);
		ASSERT_EQ(sizeof(struct ev), ev.len);
		last = ev.ts;
		n++;
	}
	__uks_trace_rb_snapshot_free(snap);
	ASSERT_EQ(500, n);
	/* The snapshot did not consume. */
	n = 0;
	for (unsigned int c = 0; c < __uks_trace_rb_nr_cpus(rb); c++) {
		__uks_trace_rb_stats(rb, c, &st);
		n += st.entries;
		ASSERT_EQ(st.written, st.entries);
	}
	ASSERT_EQ(500, n);
	__uks_trace_rb_free(rb);
}

TEST(consume_and_stats)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 16 * 1024);
	struct uks_rb_stats st;
	struct ev e;
	uint64_t ts;

	ASSERT_NE(NULL, rb);
	for (uint32_t i = 0; i < 10; i++)
		put(rb, 0, i);
	ASSERT_EQ(sizeof(e), __uks_trace_rb_peek(rb, 0, &e, sizeof(e), &ts));
	ASSERT_EQ(0, e.seq);
	ASSERT_EQ(sizeof(e), __uks_trace_rb_consume(rb, 0, &e, sizeof(e), &ts));
	ASSERT_EQ(0, e.seq);
	ASSERT_EQ(sizeof(e), __uks_trace_rb_consume(rb, 0, &e, sizeof(e), &ts));
	ASSERT_EQ(1, e.seq);
	ASSERT_EQ(-ENOSPC, __uks_trace_rb_consume(rb, 0, &e, 8, &ts));
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(8, st.entries);
	ASSERT_EQ(2, st.read);
	ASSERT_EQ(10, st.written);
	ASSERT_EQ(0, st.overrun);
	ASSERT_EQ(8 * (56 + 16), st.bytes);	/* headers count, as in the kernel */
	ASSERT_NE(0, st.oldest_ts);
	__uks_trace_rb_reset(rb);
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(0, st.entries);
	ASSERT_EQ(0, st.written);
	ASSERT_EQ(0, st.read);
	ASSERT_TRUE(__uks_trace_rb_empty(rb));
	put(rb, 0, 77);
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(1, st.entries);
	ASSERT_EQ(1, st.written);
	__uks_trace_rb_free(rb);
}

TEST(discarded_events_are_invisible)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 16 * 1024);
	unsigned int cpu;
	struct ev *e, out;
	struct uks_rb_stats st;

	e = __uks_trace_rb_reserve(rb, sizeof(*e), &cpu);
	ASSERT_NE(NULL, e);
	__uks_trace_rb_discard(rb, e);
	put(rb, 1, 5);
	ASSERT_EQ(sizeof(out), __uks_trace_rb_consume(rb, 0, &out, sizeof(out), NULL));
	ASSERT_EQ(5, out.seq);
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(1, st.written);
	__uks_trace_rb_free(rb);
}

TEST(overwrite_counts_overrun)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 3 * 4096);
	struct uks_rb_stats st;
	struct ev e;
	uint32_t prev = 0, n = 0;
	bool first = true;

	for (uint32_t i = 0; i < 1000; i++)
		put(rb, 0, i);
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(1000, st.written);
	ASSERT_GT(st.overrun, 800);
	ASSERT_EQ(1000, st.entries + st.overrun);
	/* What is left is the newest events, contiguous. */
	while (__uks_trace_rb_consume(rb, 0, &e, sizeof(e), NULL) > 0) {
		if (!first)
			ASSERT_EQ(prev + 1, e.seq);
		first = false;
		prev = e.seq;
		n++;
	}
	ASSERT_EQ(999, prev);
	ASSERT_EQ(st.entries, n);
	__uks_trace_rb_free(rb);
}

TEST(no_overwrite_drops_new_events)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 3 * 4096);
	struct uks_rb_stats st;
	struct ev e;

	__uks_trace_rb_set_overwrite(rb, false);
	for (uint32_t i = 0; i < 1000; i++)
		put(rb, 0, i);
	__uks_trace_rb_stats(rb, 0, &st);
	ASSERT_EQ(0, st.overrun);
	ASSERT_GT(st.dropped, 800);
	ASSERT_EQ(1000, st.entries + st.dropped);
	ASSERT_GT(__uks_trace_rb_consume(rb, 0, &e, sizeof(e), NULL), 0);
	ASSERT_EQ(0, e.seq);	/* the oldest survived */
	__uks_trace_rb_free(rb);
}

TEST(recording_off_and_too_big)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 16 * 1024);
	unsigned int cpu;

	ASSERT_EQ(NULL, __uks_trace_rb_reserve(rb, __uks_trace_rb_max_event() + 1, &cpu));
	__uks_trace_rb_record_on(rb, false);
	ASSERT_EQ(NULL, __uks_trace_rb_reserve(rb, 8, &cpu));
	__uks_trace_rb_record_on(rb, true);
	ASSERT_NE(NULL, __uks_trace_rb_reserve(rb, __uks_trace_rb_max_event(), &cpu));
	__uks_trace_rb_free(rb);
}

/* --- concurrency: writers on every CPU (and more), one consuming reader */

struct conc {
	struct uks_rb *rb;
	uint32_t per_writer;
	int stop;
	unsigned char *seen;	/* bitmap of (writer, seq) received */
	uint64_t got;
	uint64_t bad;		/* duplicates or garbage */
};

#define NR_WRITERS 4

static void *writer_fn(void *arg)
{
	struct conc *c = arg;
	static int next_id;
	uint32_t id = __atomic_fetch_add(&next_id, 1, __ATOMIC_RELAXED) % NR_WRITERS;

	for (uint32_t i = 0; i < c->per_writer; i++) {
		unsigned int cpu;
		struct ev *e;

		while (!(e = __uks_trace_rb_reserve(c->rb, sizeof(*e), &cpu)))
			sched_yield();	/* non-overwrite: wait for the reader */
		e->writer = id;
		e->seq = i;
		__uks_trace_rb_commit(c->rb, e);
		if ((i & 1023) == 0)
			sched_yield();
	}
	return NULL;
}

static void *reader_fn(void *arg)
{
	struct conc *c = arg;
	uint64_t total = (uint64_t)c->per_writer * NR_WRITERS;

	while (c->got < total) {
		bool any = false;

		for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(c->rb); cpu++) {
			struct ev e;

			while (__uks_trace_rb_consume(c->rb, cpu, &e, sizeof(e), NULL) > 0) {
				/* Every (writer, seq) must arrive exactly once. */
				uint64_t bit = (uint64_t)e.writer * c->per_writer + e.seq;

				if (e.writer >= NR_WRITERS || e.seq >= c->per_writer ||
				    (c->seen[bit / 8] & (1u << bit % 8)))
					c->bad++;
				else
					c->seen[bit / 8] |= 1u << bit % 8;
				c->got++;
				any = true;
			}
		}
		if (!any) {
			uint32_t seq = __uks_trace_rb_wait_seq(c->rb);

			if (__uks_trace_rb_empty(c->rb))
				__uks_trace_rb_wait(c->rb, seq, 50);
		}
	}
	return NULL;
}

TEST(concurrent_no_overwrite_loses_nothing)
{
	struct conc c = { 0 };
	pthread_t w[NR_WRITERS], r;
	struct uks_rb_stats st;
	uint64_t dropped_refused = 0;

	c.rb = __uks_trace_rb_alloc(uks_nr_cpu_ids(), 8 * 4096);
	c.per_writer = 200000;
	c.seen = calloc(c.per_writer * NR_WRITERS / 8 + 1, 1);
	__uks_trace_rb_set_overwrite(c.rb, false);
	ASSERT_EQ(0, pthread_create(&r, NULL, reader_fn, &c));
	for (int i = 0; i < NR_WRITERS; i++)
		ASSERT_EQ(0, pthread_create(&w[i], NULL, writer_fn, &c));
	for (int i = 0; i < NR_WRITERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(r, NULL);
	ASSERT_EQ((uint64_t)c.per_writer * NR_WRITERS, c.got);
	ASSERT_EQ(0, c.bad);
	free(c.seen);
	for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(c.rb); cpu++) {
		__uks_trace_rb_stats(c.rb, cpu, &st);
		ASSERT_EQ(0, st.overrun);
		ASSERT_EQ(0, st.entries);
		ASSERT_EQ(st.written, st.read);
		dropped_refused += st.dropped;
	}
	TH_LOG("%llu reservations refused while full (retried)",
	       (unsigned long long)dropped_refused);
	__uks_trace_rb_free(c.rb);
}

static void *overwrite_writer(void *arg)
{
	struct conc *c = arg;

	for (uint32_t i = 0; i < c->per_writer; i++)
		put(c->rb, 0, i);
	return NULL;
}

TEST(concurrent_overwrite_counts_every_event)
{
	struct conc c = { 0 };
	pthread_t w[NR_WRITERS];
	uint64_t written = 0, overrun = 0, lost = 0, read = 0;
	struct uks_rb_stats st;
	struct ev e;

	c.rb = __uks_trace_rb_alloc(uks_nr_cpu_ids(), 8 * 4096);
	c.per_writer = 100000;
	for (int i = 0; i < NR_WRITERS; i++)
		ASSERT_EQ(0, pthread_create(&w[i], NULL, overwrite_writer, &c));
	/* Read concurrently too, so page moves race with the reader. */
	for (int i = 0; i < 20000; i++)
		for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(c.rb); cpu++)
			read += __uks_trace_rb_consume(c.rb, cpu, &e, sizeof(e), NULL) > 0;
	for (int i = 0; i < NR_WRITERS; i++)
		pthread_join(w[i], NULL);
	for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(c.rb); cpu++) {
		__uks_trace_rb_stats(c.rb, cpu, &st);
		written += st.written;
		overrun += st.overrun;
		lost += st.commit_overrun;
		ASSERT_EQ(st.written, st.entries + st.overrun + st.read);
	}
	ASSERT_GT(overrun, 0);
	ASSERT_EQ((uint64_t)c.per_writer * NR_WRITERS, written + lost);
	TH_LOG("written %llu overrun %llu commit overrun %llu read %llu",
	       (unsigned long long)written, (unsigned long long)overrun,
	       (unsigned long long)lost, (unsigned long long)read);
	__uks_trace_rb_free(c.rb);
}

/* A signal handler writing in the middle of a write. */
static struct uks_rb *sig_rb;
static void on_sig(int sig)
{
	put(sig_rb, 9, 9);
}

TEST(nested_writer_from_signal_handler)
{
	struct uks_rb_snapshot *snap;
	struct uks_rb_event ev;
	unsigned int cpu, n = 0, nested = 0;
	struct ev *e;

	sig_rb = __uks_trace_rb_alloc(1, 16 * 1024);
	signal(SIGUSR1, on_sig);
	e = __uks_trace_rb_reserve(sig_rb, sizeof(*e), &cpu);
	ASSERT_NE(NULL, e);
	raise(SIGUSR1);		/* nested write between reserve and commit */
	e->writer = 1;
	e->seq = 1;
	__uks_trace_rb_commit(sig_rb, e);
	snap = __uks_trace_rb_snapshot(sig_rb);
	while (__uks_trace_rb_snapshot_next(snap, &ev)) {
		const struct ev *x = ev.data;

		ASSERT_TRUE(x->writer == 1 || x->writer == 9);
		nested += x->writer == 9;
		n++;
	}
	ASSERT_EQ(2, n);
	ASSERT_EQ(1, nested);
	__uks_trace_rb_snapshot_free(snap);
	__uks_trace_rb_free(sig_rb);
}

TEST(blocking_wait_wakes_on_commit)
{
	struct uks_rb *rb = __uks_trace_rb_alloc(1, 16 * 1024);
	uint32_t seq = __uks_trace_rb_wait_seq(rb);

	ASSERT_EQ(-ETIMEDOUT, __uks_trace_rb_wait(rb, seq, 20));
	put(rb, 0, 0);
	ASSERT_EQ(0, __uks_trace_rb_wait(rb, seq, 1000));	/* data present: no sleep */
	__uks_trace_rb_free(rb);
}

TEST_HARNESS_MAIN
