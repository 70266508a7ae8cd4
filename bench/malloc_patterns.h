/* SPDX-License-Identifier: MIT */
/*
 * The patterns of bench/malloc-peers.c (see there), each run by a worker
 * process under one allocator: the timed part, in nanoseconds, with its
 * self-checks.  Included once, by malloc-peers.c.
 */
#ifndef UKS_BENCH_MALLOC_PATTERNS_H
#define UKS_BENCH_MALLOC_PATTERNS_H

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define KEEP(p) __asm__ __volatile__("" : : "r"(p) : "memory")

static long scale = 1;

static void fail(const char *pattern, const char *what, unsigned long long a)
{
	fprintf(stderr, "malloc-peers: %s: self-check failed: %s (%llu)\n",
		pattern, what, a);
	exit(2);
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* xorshift64*: small, deterministic, good enough for picking slots */
static inline uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

static inline uint64_t rnd_range(uint64_t *s, uint64_t lo, uint64_t hi)
{
	return lo + (rnd(s) >> 11) % (hi - lo + 1);
}

static void *xmalloc(const char *pattern, size_t n)
{
	void *p = malloc(n);

	if (!p)
		fail(pattern, "malloc returned NULL for size", n);
	return p;
}

/* Stamp an object (>= 8 B): 8-byte tag, a byte of it in the last byte. */
static inline void stamp(unsigned char *p, size_t size, uint64_t tag)
{
	memcpy(p, &tag, sizeof(tag));
	if (size > sizeof(tag))
		p[size - 1] = (unsigned char)(tag ^ 0x5a);
}

static inline int stamp_ok(const unsigned char *p, size_t size, uint64_t tag)
{
	uint64_t t;

	memcpy(&t, p, sizeof(t));
	return t == tag && (size <= sizeof(tag) || p[size - 1] == (unsigned char)(tag ^ 0x5a));
}

/* ------------------------------------------------------------ pair64 */
static uint64_t run_pair64(void)
{
	long n = 30000000L * scale;
	uint64_t t0 = now_ns();

	for (long i = 0; i < n; i++) {
		unsigned char *p = malloc(64);

		if (!p)
			fail("pair64", "malloc(64) NULL at", (unsigned long long)i);
		p[0] = (unsigned char)i;
		KEEP(p);
		if (p[0] != (unsigned char)i)
			fail("pair64", "byte lost at", (unsigned long long)i);
		free(p);
	}
	return now_ns() - t0;
}

/* ------------------------------------------------------------ free64 */
#define FREE64_BATCH	48	/* the preload's 64-byte sheaf holds 62 */
#define FREE64_BUCKETS	8192

/*
 * A clock read costs 70-80 ns on this project's VM (kvm-clock), more than
 * the 48 frees it would bracket: on x86-64 each run of frees is timed
 * with the TSC (about 40 ns a read there, the same for every allocator).
 * The result is the mean time of the runs that took at most twice the
 * median, times the number of runs: on a box shared with other work a run
 * is either untouched or preempted whole, and the sum of all runs moved
 * 2x between identical invocations.  (The median alone moves in steps of
 * 10 ns, the TSC's as this VM shows it.)
 */
#if defined(__x86_64__)
#include <x86intrin.h>
#define ticks() __rdtsc()
#else
#define ticks() now_ns()
#endif

static uint64_t run_free64(void)
{
	static uint32_t hist[FREE64_BUCKETS];	/* runs by their length in ticks */
	long rounds = 1000000L * scale, seen = 0;
	void *v[FREE64_BATCH];
	uint64_t ns0 = now_ns(), tk0 = ticks(), median = 0;
	double sum = 0, kept = 0;

	for (long r = 0; r < rounds; r++) {
		uint64_t t0, t;

		for (int i = 0; i < FREE64_BATCH; i++) {
			v[i] = malloc(64);
			if (!v[i])
				fail("free64", "malloc(64) NULL at", (unsigned long long)r);
			KEEP(v[i]);
		}
		t0 = ticks();
		for (int i = 0; i < FREE64_BATCH; i++)
			free(v[i]);
		t = ticks() - t0;
		hist[t < FREE64_BUCKETS ? t : FREE64_BUCKETS - 1]++;
	}
	while (median < FREE64_BUCKETS - 1 && (seen += hist[median]) < (rounds + 1) / 2)
		median++;
	/* the mean of the runs within twice the median: none preempted */
	for (uint64_t b = 0; b <= 2 * median && b < FREE64_BUCKETS - 1; b++) {
		sum += (double)b * hist[b];
		kept += hist[b];
	}
	/* ticks to nanoseconds, by the clock over the whole loop */
	return (uint64_t)(sum / kept * (double)rounds * (double)(now_ns() - ns0) /
			  (double)(ticks() - tk0));
}

/* ------------------------------------------------------------ allfree */
#define ALLFREE_N 100000

static uint64_t run_allfree(void)
{
	long reps = 200L * scale;
	void **v = xmalloc("allfree", ALLFREE_N * sizeof(*v));
	uint64_t t0 = now_ns();

	for (long r = 0; r < reps; r++) {
		for (long i = 0; i < ALLFREE_N; i++) {
			v[i] = malloc(64);
			if (!v[i])
				fail("allfree", "malloc(64) NULL at", (unsigned long long)i);
			stamp(v[i], 64, (uint64_t)(r * ALLFREE_N + i));
		}
		for (long i = 0; i < ALLFREE_N; i++) {
			if (!stamp_ok(v[i], 64, (uint64_t)(r * ALLFREE_N + i)))
				fail("allfree", "object corrupted at", (unsigned long long)i);
			free(v[i]);
		}
	}
	t0 = now_ns() - t0;
	free(v);
	return t0;
}

/* ------------------------------------------------------------ prodcons */
#define RING 1024

struct ring {
	_Alignas(64) _Atomic size_t head;	/* written by the producer */
	_Alignas(64) _Atomic size_t tail;	/* written by the consumer */
	_Alignas(64) void *slot[RING];
	long count;
};

struct obj_hdr {
	uint32_t size;
	uint32_t seq;
};

static inline void spin_wait(unsigned *spins)
{
	if (++*spins > 256) {
		*spins = 0;
		sched_yield();
	} else {
		__builtin_ia32_pause();
	}
}

static void *consumer(void *arg)
{
	struct ring *rg = arg;
	size_t tail = 0, head = 0;	/* head: cached, reloaded when caught up */

	for (long i = 0; i < rg->count; i++) {
		unsigned spins = 0;
		unsigned char *p;
		struct obj_hdr h;

		while (head == tail) {
			head = atomic_load_explicit(&rg->head, memory_order_acquire);
			if (head == tail)
				spin_wait(&spins);
		}
		p = rg->slot[tail % RING];
		memcpy(&h, p, sizeof(h));
		if (h.seq != (uint32_t)i || h.size < 16 || h.size > 512 ||
		    p[h.size - 1] != (unsigned char)(i ^ 0x5a))
			fail("prodcons", "object corrupted at", (unsigned long long)i);
		free(p);
		atomic_store_explicit(&rg->tail, ++tail, memory_order_release);
	}
	return NULL;
}

static uint64_t run_prodcons(void)
{
	struct ring *rg = xmalloc("prodcons", sizeof(*rg));
	uint64_t seed = 0x9e3779b97f4a7c15ull, t0;
	size_t head = 0, tail = 0;	/* tail: cached, reloaded when full */
	pthread_t th;

	atomic_init(&rg->head, 0);
	atomic_init(&rg->tail, 0);
	rg->count = 5000000L * scale;
	t0 = now_ns();
	if (pthread_create(&th, NULL, consumer, rg))
		fail("prodcons", "pthread_create", 0);
	for (long i = 0; i < rg->count; i++) {
		struct obj_hdr h = { .size = (uint32_t)rnd_range(&seed, 16, 512),
				     .seq = (uint32_t)i };
		unsigned char *p = xmalloc("prodcons", h.size);
		unsigned spins = 0;

		memcpy(p, &h, sizeof(h));
		p[h.size - 1] = (unsigned char)(i ^ 0x5a);
		while (head - tail == RING) {
			tail = atomic_load_explicit(&rg->tail, memory_order_acquire);
			if (head - tail == RING)
				spin_wait(&spins);
		}
		rg->slot[head % RING] = p;
		atomic_store_explicit(&rg->head, ++head, memory_order_release);
	}
	pthread_join(th, NULL);
	t0 = now_ns() - t0;
	free(rg);
	return t0;
}

/* ------------------------------------------------------------ larson */
#define LARSON_T 2
#define LARSON_SLOTS 1000
#define LARSON_EPOCH_OPS 20000

struct larson_slot {
	unsigned char *p;
	uint32_t size;
	uint64_t tag;
};

struct larson_arena {
	struct larson_slot s[LARSON_SLOTS];
	uint64_t seed;
	long ops;	/* total operations done on this array */
};

static void *larson_thread(void *arg)
{
	struct larson_arena *a = arg;

	for (long i = 0; i < LARSON_EPOCH_OPS; i++) {
		struct larson_slot *s = &a->s[rnd(&a->seed) % LARSON_SLOTS];
		uint32_t size = (uint32_t)rnd_range(&a->seed, 8, 1000);

		if (!stamp_ok(s->p, s->size, s->tag))
			fail("larson", "object corrupted at op", (unsigned long long)a->ops);
		free(s->p);
		s->p = malloc(size);
		if (!s->p)
			fail("larson", "malloc NULL for size", size);
		s->size = size;
		s->tag = rnd(&a->seed);
		stamp(s->p, size, s->tag);
		a->ops++;
	}
	return NULL;
}

static uint64_t run_larson(void)
{
	long epochs = 150L * scale, total = 0;
	struct larson_arena *a[LARSON_T];
	uint64_t t0;

	for (int t = 0; t < LARSON_T; t++) {
		a[t] = xmalloc("larson", sizeof(*a[t]));
		a[t]->seed = 0x1234567ull + (uint64_t)t * 0x9e3779b97f4a7c15ull;
		a[t]->ops = 0;
		for (int i = 0; i < LARSON_SLOTS; i++) {
			struct larson_slot *s = &a[t]->s[i];

			s->size = (uint32_t)rnd_range(&a[t]->seed, 8, 1000);
			s->p = xmalloc("larson", s->size);
			s->tag = rnd(&a[t]->seed);
			stamp(s->p, s->size, s->tag);
		}
	}
	/* The main thread filled the arrays: even epoch 0 frees remotely. */
	t0 = now_ns();
	for (long e = 0; e < epochs; e++) {
		pthread_t th[LARSON_T];

		for (int t = 0; t < LARSON_T; t++)
			if (pthread_create(&th[t], NULL, larson_thread, a[t]))
				fail("larson", "pthread_create in epoch", (unsigned long long)e);
		for (int t = 0; t < LARSON_T; t++)
			pthread_join(th[t], NULL);
	}
	t0 = now_ns() - t0;
	for (int t = 0; t < LARSON_T; t++) {
		for (int i = 0; i < LARSON_SLOTS; i++) {
			struct larson_slot *s = &a[t]->s[i];

			if (!stamp_ok(s->p, s->size, s->tag))
				fail("larson", "object corrupted at slot", (unsigned long long)i);
			free(s->p);
		}
		total += a[t]->ops;
		free(a[t]);
	}
	if (total != epochs * LARSON_T * LARSON_EPOCH_OPS)
		fail("larson", "operation count", (unsigned long long)total);
	return t0;
}

/* ------------------------------------------------------------ scratch */
#define SCRATCH_T 2
#define SCRATCH_WRITES 200

struct scratch_arg {
	unsigned char *first;
	long iters;
	int id;
};

static void *scratch_thread(void *arg)
{
	struct scratch_arg *sa = arg;

	if (sa->first[0] != (unsigned char)(0xa0 + sa->id))
		fail("scratch", "handed-over object corrupted, thread", (unsigned long long)sa->id);
	free(sa->first);
	for (long i = 0; i < sa->iters; i++) {
		volatile unsigned char *p = malloc(8);

		if (!p)
			fail("scratch", "malloc(8) NULL at", (unsigned long long)i);
		for (int w = 0; w < SCRATCH_WRITES; w++)
			p[w & 7] = (unsigned char)(w + sa->id);
		if (p[(SCRATCH_WRITES - 1) & 7] != (unsigned char)(SCRATCH_WRITES - 1 + sa->id))
			fail("scratch", "write lost at", (unsigned long long)i);
		free((void *)p);
	}
	return NULL;
}

static uint64_t run_scratch(void)
{
	struct scratch_arg sa[SCRATCH_T];
	pthread_t th[SCRATCH_T];
	uint64_t t0;

	for (int t = 0; t < SCRATCH_T; t++) {
		sa[t].first = xmalloc("scratch", 8);
		sa[t].first[0] = (unsigned char)(0xa0 + t);
		sa[t].iters = 1000000L * scale;
		sa[t].id = t;
	}
	t0 = now_ns();
	for (int t = 0; t < SCRATCH_T; t++)
		if (pthread_create(&th[t], NULL, scratch_thread, &sa[t]))
			fail("scratch", "pthread_create", (unsigned long long)t);
	for (int t = 0; t < SCRATCH_T; t++)
		pthread_join(th[t], NULL);
	return now_ns() - t0;
}

/* ------------------------------------------------------------ mixed */
#define MIXED_SLOTS 20000
#define MIXED_PREFIX 32

struct mixed_slot {
	unsigned char *p;
	uint32_t size;
	uint8_t tag;
};

static size_t mixed_size(uint64_t *seed)
{
	uint64_t r = rnd(seed) % 1000;

	if (r < 850)
		return (size_t)rnd_range(seed, 8, 256);
	if (r < 995)
		return (size_t)rnd_range(seed, 257, 4096);
	return (size_t)rnd_range(seed, 4097, 65536);
}

static void mixed_fill(struct mixed_slot *s)
{
	size_t n = s->size - 1 < MIXED_PREFIX ? s->size - 1 : MIXED_PREFIX;

	for (size_t i = 0; i < n; i++)
		s->p[i] = (unsigned char)(s->tag + i);
	s->p[s->size - 1] = (unsigned char)(s->tag ^ 0x5a);
}

/* Check the stamped prefix, the first upto bytes at most. */
static void mixed_check(const struct mixed_slot *s, size_t upto, long op)
{
	size_t n = s->size - 1 < MIXED_PREFIX ? s->size - 1 : MIXED_PREFIX;

	if (n > upto)
		n = upto;

	for (size_t i = 0; i < n; i++)
		if (s->p[i] != (unsigned char)(s->tag + i))
			fail("mixed", "object corrupted at op", (unsigned long long)op);
}

static uint64_t run_mixed(void)
{
	struct mixed_slot *w = calloc(MIXED_SLOTS, sizeof(*w));
	uint64_t seed = 0xfeedfacecafebeefull, t0;
	long ops = 1500000L * scale;

	if (!w)
		fail("mixed", "calloc of the working set", 0);
	t0 = now_ns();
	for (long op = 0; op < ops; op++) {
		struct mixed_slot *s = &w[rnd(&seed) % MIXED_SLOTS];
		uint64_t kind = rnd(&seed) % 16;
		size_t size = mixed_size(&seed);

		if (s->p && kind < 2) {		/* realloc, growing or shrinking */
			size_t keep = size < s->size ? size : s->size;
			unsigned char *q = realloc(s->p, size);

			if (!q)
				fail("mixed", "realloc NULL for size", size);
			s->p = q;
			mixed_check(s, keep, op);
			s->size = (uint32_t)size;
			mixed_fill(s);
			continue;
		}
		if (s->p) {
			mixed_check(s, s->size, op);
			if (s->p[s->size - 1] != (unsigned char)(s->tag ^ 0x5a))
				fail("mixed", "last byte corrupted at op", (unsigned long long)op);
			free(s->p);
		}
		if (kind == 2) {
			s->p = calloc(1, size);
			if (!s->p)
				fail("mixed", "calloc NULL for size", size);
			for (size_t i = 0; i < size; i += 509)
				if (s->p[i])
					fail("mixed", "calloc memory not zeroed at op", (unsigned long long)op);
		} else {
			s->p = xmalloc("mixed", size);
		}
		s->size = (uint32_t)size;
		s->tag = (uint8_t)op;
		mixed_fill(s);
	}
	t0 = now_ns() - t0;
	for (long i = 0; i < MIXED_SLOTS; i++) {
		if (w[i].p)
			mixed_check(&w[i], w[i].size, -1);
		free(w[i].p);
	}
	free(w);
	return t0;
}

/* ------------------------------------------------------------ grow */
#define GROW_STEP	(64UL << 10)
#define GROW_MAX	(128UL << 20)

static uint64_t run_grow(void)
{
	uint64_t t0 = now_ns();

	for (long r = 0; r < scale; r++) {
		unsigned char *buf = NULL;
		size_t size = 0;

		while (size < GROW_MAX) {
			unsigned char *q = realloc(buf, size + GROW_STEP);

			if (!q)
				fail("grow", "realloc NULL for size", size + GROW_STEP);
			buf = q;
			/* the new step, and a check that the last one moved with the block */
			if (size && buf[size - 1] != (unsigned char)(size / GROW_STEP))
				fail("grow", "lost bytes at size", size);
			memset(buf + size, (unsigned char)(size / GROW_STEP + 1), GROW_STEP);
			size += GROW_STEP;
		}
		while (size > GROW_STEP) {
			size /= 2;
			buf = realloc(buf, size);
			if (!buf || buf[size - 1] != (unsigned char)(size / GROW_STEP))
				fail("grow", "shrink lost bytes at size", size);
		}
		free(buf);
	}
	return now_ns() - t0;
}

#endif
