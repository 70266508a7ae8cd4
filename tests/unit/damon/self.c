// SPDX-License-Identifier: MIT
/*
 * The "self" primitive in this very process: a thread touches a known hot
 * buffer (writes, or only reads: what vaddr-sd cannot see), a cold one is
 * populated once; DAMON must rank the hot buffer hot and the cold one not,
 * and when monitoring stops every byte must be what was written, every
 * page back in place, and the mappings whole again (mremap of the whole
 * buffer works); kernel-side accesses (read(2)/write(2) on a taken page)
 * fault and wait instead of failing; a sample inside a transparent huge
 * page takes the whole 2 MiB page (a write to one 4 KiB page of it makes
 * its region hot, and the huge page is still whole after); the program
 * cannot close the monitor's userfaultfd.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB	(1UL << 20)
#define HOT_SZ	(4 * MB)
#define COLD_SZ	(64 * MB)
#define PG	4096UL

/*
 * What after_sampling reads and writes: it runs on the monitor thread
 * right after prepare, while pages are taken, and a taken page it touched
 * would wait for the monitor thread itself.  So it lives in a MAP_SHARED
 * page, which self does not monitor, and is the callbacks' private data.
 */
struct watch {
	unsigned long pages;			/* hot pages the toucher touched */
	struct toucher_samples ts;
	struct bufs *b;				/* for after_aggregation: pages are back */
};

struct bufs {
	char *hot, *cold;
	bool read_only;
	atomic_int stop;
	unsigned long pages;			/* hot pages the writer wrote (__atomic) */
	struct watch *w;			/* the toucher's, out of self's reach */
	int aggregations, judged, passed;
	int unresolved;				/* ran through, but regions mostly not hot buffer */
	unsigned int samples, ran;		/* the last judged aggregation's */
	unsigned long hot_bytes_seen, hot_bytes_hot, cold_bytes_hot;
	unsigned long hot_bytes_above_cold;	/* in regions hotter than any cold one */
	unsigned int max_bufs, max_all;		/* the last judged aggregation's */
	char layout[600];			/* ... and its regions over the buffers */
	uint64_t sum;
};

static void *toucher(void *arg)
{
	struct bufs *b = arg;
	uint64_t sum = 0;

	for (unsigned int v = 1; !atomic_load(&b->stop); v++) {
		for (unsigned long i = 0; i < HOT_SZ; i += PG) {
			if (b->read_only)
				sum += ((volatile uint64_t *)(b->hot + i))[1];
			else
				((volatile uint64_t *)(b->hot + i))[1] = v;
			__atomic_add_fetch(&b->w->pages, 1, __ATOMIC_RELEASE);
		}
		usleep(300);
	}
	b->sum = sum;
	return NULL;
}

static bool overlaps(const struct uks_damon_region_info *r, const char *p, unsigned long len)
{
	return r->start < (unsigned long)p + len && r->end > (unsigned long)p;
}

/*
 * Adds this aggregation's hot and cold bytes seen to b's sums.  "Seen"
 * is at least (R + 1) / 2 accesses, R the samples the toucher ran through
 * (struct toucher_samples in helper.h): in those its whole buffer was
 * touched, the sampled pages too, so the primitive must have seen the hot
 * buffer in about half of them at least, and the cold buffer (never
 * touched again) in none.  A primitive blind to the accesses fails, and
 * so does one that sees them everywhere.  Other memory of the process
 * (stacks, the heap) does not matter.
 *
 * Only regions that are mostly hot buffer count as "seen" hot bytes: the
 * core's adaptation can leave the end of the hot buffer inside a huge cold
 * region (one run had its first 532 KiB in a 100 MiB region reaching down
 * through the cold buffer, for all 30 aggregations: 5.15 splits at tenths
 * of a region, so no split isolates a 0.5% sliver, and the two never
 * merge).  Sampled in the cold part, that region is rightly cold, and
 * that is the core's resolution, not the primitive's sight.
 */
static int judge(struct uks_damon_target *t, void *arg)
{
	struct bufs *b = arg;
	struct uks_damon_region_info r[1024];
	int nr = uks_damon_target_regions(t, r, 1024);
	unsigned int max = 0, cold_max = 0, thr = (b->w->ts.ran + 1) / 2;

	b->max_all = 0;
	for (int i = 0; i < nr && i < 1024; i++) {
		if (r[i].nr_accesses > b->max_all)
			b->max_all = r[i].nr_accesses;
		if ((overlaps(&r[i], b->hot, HOT_SZ) || overlaps(&r[i], b->cold, COLD_SZ)) &&
		    r[i].nr_accesses > max)
			max = r[i].nr_accesses;
	}
	b->max_bufs = max;
	b->layout[0] = 0;
	for (int i = 0, len = 0; i < nr && i < 1024 && len < (int)sizeof(b->layout) - 40; i++) {
		long from = (long)(r[i].start - (unsigned long)b->hot) / 1024;

		if (overlaps(&r[i], b->hot, HOT_SZ + PG) || overlaps(&r[i], b->cold, COLD_SZ))
			len += snprintf(b->layout + len, sizeof(b->layout) - (size_t)len,
					" %ld+%lu:%u", from, (r[i].end - r[i].start) / 1024,
					r[i].nr_accesses);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (int i = 0; i < nr && i < 1024; i++) {
			unsigned long hs = (unsigned long)b->hot, he = hs + HOT_SZ;
			unsigned long cs = (unsigned long)b->cold, ce = cs + COLD_SZ;
			unsigned long is = r[i].start > hs ? r[i].start : hs;
			unsigned long ie = r[i].end < he ? r[i].end : he;
			unsigned long cis = r[i].start > cs ? r[i].start : cs;
			unsigned long cie = r[i].end < ce ? r[i].end : ce;
			unsigned long in_hot = ie > is ? ie - is : 0;
			unsigned long in_cold = cie > cis ? cie - cis : 0;
			bool mostly_hot = in_hot * 2 >= r[i].end - r[i].start;

			if (pass == 0) {
				/* the hottest region that is mostly cold buffer */
				if (in_cold * 2 >= r[i].end - r[i].start &&
				    r[i].nr_accesses > cold_max)
					cold_max = r[i].nr_accesses;
				continue;
			}
			b->hot_bytes_seen += mostly_hot ? in_hot : 0;
			if (mostly_hot && r[i].nr_accesses > cold_max)
				b->hot_bytes_above_cold += in_hot;
			if (r[i].nr_accesses < thr)
				continue;
			b->hot_bytes_hot += mostly_hot ? in_hot : 0;
			b->cold_bytes_hot += in_cold;
		}
	}
	return 0;
}

/*
 * After WARMUP aggregations (the regions adapt), the aggregations in which
 * the toucher ran through 2 samples or more and the regions mostly of the
 * hot buffer hold at least half of it (the core's adaptation, which fewer
 * samples make slower, is not what is judged) are judged, until JUDGED
 * were (or MAX_AGGRS: a machine so loaded that the toucher hardly ever ran
 * through a sample skips the judgement).  Right: >= 90% of the bytes of
 * those regions are seen, and <= 10% of the cold buffer is.  Most judged ones must be right (a
 * region straddling the buffers' edges is not exact); before, the last 10
 * of 30 were judged whatever the toucher got, and a starved toucher
 * failed them (4 of 10 right beside two CPU hogs).
 *
 * An aggregation also counts as right when >= 90% of the hot bytes seen
 * lie in regions with more accesses than any region of the cold buffer:
 * that still tells the buffers apart, and a primitive that sees the cold
 * buffer accessed fails it as well.
 */
#define WARMUP		20
#define JUDGED		10
#define MAX_AGGRS	300

static int sampled(struct uks_damon_ctx *ctx)
{
	toucher_after_sampling(&((struct watch *)uks_damon_callback_private(ctx))->ts);
	return 0;
}

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct watch *w = uks_damon_callback_private(ctx);
	struct bufs *b = w->b;

	toucher_after_aggregation(&w->ts);
	if (++b->aggregations > WARMUP && w->ts.ran >= 2) {
		b->hot_bytes_seen = b->hot_bytes_hot = b->cold_bytes_hot = 0;
		b->hot_bytes_above_cold = 0;
		uks_damon_for_each_target(ctx, judge, b);
		b->samples = w->ts.samples;
		b->ran = w->ts.ran;
		/* the core's regions resolve the hot buffer: the primitive can be judged */
		if (b->hot_bytes_seen * 2 >= HOT_SZ) {
			b->judged++;
			b->passed += (b->hot_bytes_hot * 10 >= b->hot_bytes_seen * 9 &&
				      b->cold_bytes_hot * 10 <= COLD_SZ) ||
				     b->hot_bytes_above_cold * 10 >= b->hot_bytes_seen * 9;
		} else {
			b->unresolved++;
		}
	}
	toucher_next(&w->ts);
	return b->judged >= JUDGED || b->aggregations >= MAX_AGGRS;
}

static bool all_present(const char *p, unsigned long len)
{
	int fd = open("/proc/self/pagemap", O_RDONLY);
	bool ok = fd >= 0;

	for (unsigned long i = 0; ok && i < len; i += PG) {
		uint64_t e = 0;

		if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)(p + i) / PG * 8)) != 8 ||
		    !(e >> 63))
			ok = false;
	}
	if (fd >= 0)
		close(fd);
	return ok;
}

static void find_hot(struct th_result *_th_r, bool read_only)
{
	struct bufs b = { .read_only = read_only };
	struct watch *w = mmap(NULL, sizeof(*w), PROT_READ | PROT_WRITE,
			       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	struct uks_damon_callback cb = { .priv = w, .after_sampling = sampled,
					 .after_aggregation = after_aggregation };
	struct uks_damon_self_stats st;
	struct uks_damon_ctx *ctx;
	unsigned long id = (unsigned long)getpid();
	char why[300];
	pthread_t th;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	b.hot = mmap(NULL, HOT_SZ + PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b.cold = mmap(NULL, COLD_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, b.hot);
	ASSERT_NE(MAP_FAILED, b.cold);
	mprotect(b.hot + HOT_SZ, PG, PROT_NONE);
	madvise(b.hot, HOT_SZ, MADV_NOHUGEPAGE);
	madvise(b.cold, COLD_SZ, MADV_NOHUGEPAGE);
	for (unsigned long i = 0; i < HOT_SZ; i += 8)
		*(uint64_t *)(b.hot + i) = i ^ 0xabcdef;
	for (unsigned long i = 0; i < COLD_SZ; i += 8)
		*(uint64_t *)(b.cold + i) = i ^ 0x123456;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "self"));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_NE(MAP_FAILED, (void *)w);
	toucher_watch_checks(ctx, &w->ts);
	b.w = w;
	w->b = &b;
	w->ts.pages = &w->pages;
	w->ts.per_pass = HOT_SZ / PG;
	ASSERT_EQ(0, pthread_create(&th, NULL, toucher, &b));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	/* until JUDGED aggregations were judged, or MAX_AGGRS, or 45 s of them */
	for (int i = 0; i < 900 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	atomic_store(&b.stop, 1);
	pthread_join(th, NULL);
	uks_damon_self_stats(&st);
	TH_LOG("self (%s, %s): %d aggregations, %d judged, %d right, %d not resolved; the "
	       "last: %u samples, the toucher ran through %u, hot %lu of %lu bytes seen (of %lu) "
	       "at least %u times, %lu above the cold buffer, cold %lu, hottest "
	       "region %u accesses in the buffers and %u in all; %lu samples, %lu taken, "
	       "%lu faults, %lu refused",
	       uks_damon_self_mode(), read_only ? "reads" : "writes", b.aggregations, b.judged,
	       b.passed, b.unresolved, b.samples, b.ran, b.hot_bytes_hot, b.hot_bytes_seen, HOT_SZ,
	       (b.ran + 1) / 2, b.hot_bytes_above_cold,
	       b.cold_bytes_hot, b.max_bufs,
	       b.max_all, st.samples,
	       st.taken, st.faults, st.refused);
	/* KiB from the hot buffer's start + KiB: accesses; the cold one lies below */
	TH_LOG("regions over the buffers:%s", b.layout);
	ASSERT_GT(b.aggregations, WARMUP);
#if !defined(__SANITIZE_ADDRESS__)
	/*
	 * Under ASan the allocator's mappings spread over terabytes, so the
	 * regions start 90 GiB wide and 30 aggregations do not narrow them
	 * to the buffers; the data checks below still run.
	 */
	EXPECT_GT(st.taken, 0);
	EXPECT_GT(st.faults, 0);
	/* the regions resolve the buffer sooner or later: not 100 times in a row */
	EXPECT_TRUE(b.judged >= JUDGED || b.unresolved < 100);
	if (b.judged < JUDGED)
		TH_LOG("the toucher ran through 2 or more samples in only %d of %d aggregations: "
		       "too loaded to judge the ranking", b.judged + b.unresolved,
		       b.aggregations - WARMUP);
	else
		EXPECT_GE(b.passed * 10, b.judged * 8);
#endif

	/* every byte as written, every page back */
	for (unsigned long i = 0; i < HOT_SZ; i += 8)
		if ((i & (PG - 1)) != 8 && *(uint64_t *)(b.hot + i) != (i ^ 0xabcdef)) {
			TH_LOG("hot byte %lu changed", i);
			ASSERT_TRUE(false);
		}
	for (unsigned long i = 0; i < COLD_SZ; i += 8)
		if (*(uint64_t *)(b.cold + i) != (i ^ 0x123456)) {
			TH_LOG("cold byte %lu changed", i);
			ASSERT_TRUE(false);
		}
	EXPECT_TRUE(all_present(b.cold, COLD_SZ));
	/* no registration left: the mapping is one piece again */
	char *moved = mremap(b.cold, COLD_SZ, COLD_SZ, MREMAP_MAYMOVE | MREMAP_FIXED,
			     b.cold + COLD_SZ * 2);

	EXPECT_NE(MAP_FAILED, moved);
	if (moved != MAP_FAILED)
		b.cold = moved;
	munmap(b.hot, HOT_SZ + PG);
	munmap(b.cold, COLD_SZ);
	uks_damon_ctx_destroy(ctx);
	munmap(w, sizeof(*w));
}

TEST_TIMEOUT(self_ranks_written_pages_hot, 90)
{
	find_hot(_th_r, false);
}

TEST_TIMEOUT(self_ranks_read_pages_hot, 90)
{
	find_hot(_th_r, true);
}

/*
 * fork() while pages are taken: the fork handler closes the sampling
 * window first, so each child sees every byte the parent wrote.
 */
static void *writer(void *arg)
{
	struct bufs *b = arg;

	for (uint64_t v = 1; !atomic_load(&b->stop); v++) {
		for (unsigned long i = 0; i < HOT_SZ; i += PG) {
			((volatile uint64_t *)(b->hot + i))[0] = v;
			__atomic_add_fetch(&b->pages, 1, __ATOMIC_RELEASE);
		}
		usleep(200);
	}
	return NULL;
}

/*
 * The two buffers (the cold one stamped), a writer on the hot one, and a
 * self context on this process sampling every 1 ms.
 */
static void start_writer_and_self(struct th_result *_th_r, struct bufs *b,
				  struct uks_damon_ctx **ctx, pthread_t *th)
{
	static const unsigned long attrs[5] = { 1000, 20000, 200000, 200, 1000 };
	unsigned long id = (unsigned long)getpid();

	b->hot = mmap(NULL, HOT_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	b->cold = mmap(NULL, HOT_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, b->hot);
	ASSERT_NE(MAP_FAILED, b->cold);
	for (unsigned long i = 0; i < HOT_SZ; i += 8)
		*(uint64_t *)(b->cold + i) = i * 7 + 1;
	ASSERT_EQ(0, pthread_create(th, NULL, writer, b));
	ASSERT_EQ(0, start_monitor(ctx, "self", attrs, id, NULL));
}

/* @n fork children, @gap_us apart, each checking the buffers; Return: how many failed */
static int fork_children(struct th_result *_th_r, const struct bufs *b, int n, useconds_t gap_us)
{
	int bad = 0;

	for (int k = 0; k < n; k++) {
		pid_t pid = fork();
		int status = 0;

		if (pid == 0) {
			for (unsigned long i = 0; i < HOT_SZ; i += 8)
				if (*(uint64_t *)(b->cold + i) != i * 7 + 1)
					_exit(1);
			for (unsigned long i = 0; i < HOT_SZ; i += PG)
				if (!((uint64_t *)(b->hot + i))[0])	/* lost: zero */
					_exit(2);
			_exit(0);
		}
		ASSERT_GT(pid, 0);
		waitpid(pid, &status, 0);
		bad += !WIFEXITED(status) || WEXITSTATUS(status);
		usleep(gap_us);
	}
	return bad;
}

/* Stop the context and the writer; @st: what the context did. */
static void stop_writer_and_self(struct bufs *b, struct uks_damon_ctx *ctx, pthread_t th,
				 struct uks_damon_self_stats *st)
{
	uks_damon_stop(&ctx, 1);
	atomic_store(&b->stop, 1);
	pthread_join(th, NULL);
	uks_damon_self_stats(st);
}

/* Pages were taken (not under ASan: see find_hot()); free what start_writer_and_self() made. */
static void free_writer_and_self(struct th_result *_th_r, struct bufs *b, struct uks_damon_ctx *ctx,
				 const struct uks_damon_self_stats *st)
{
#if !defined(__SANITIZE_ADDRESS__)
	EXPECT_GT(st->taken, 0);
#else
	(void)st;
	(void)_th_r;
#endif
	munmap(b->hot, HOT_SZ);
	munmap(b->cold, HOT_SZ);
	uks_damon_ctx_destroy(ctx);
}

TEST_TIMEOUT(self_fork_child_sees_every_byte, 60)
{
	struct bufs b = { 0 };
	struct uks_damon_ctx *ctx;
	struct uks_damon_self_stats st;
	char why[300];
	pthread_t th;
	int bad;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	start_writer_and_self(_th_r, &b, &ctx, &th);
	/*
	 * Until the writer wrote every page once (a child checks that none is
	 * zero), not 200 ms: beside two CPU hogs it had not, and a child saw
	 * a page never written yet.
	 */
	for (int i = 0; i < 3000 && __atomic_load_n(&b.pages, __ATOMIC_ACQUIRE) < HOT_SZ / PG; i++)
		usleep(10000);
	ASSERT_GE(__atomic_load_n(&b.pages, __ATOMIC_ACQUIRE), HOT_SZ / PG);
	bad = fork_children(_th_r, &b, 20, 20000);
	stop_writer_and_self(&b, ctx, th, &st);
	TH_LOG("20 forks, %d bad children; %lu samples, %lu taken, %lu faults", bad,
	       st.samples, st.taken, st.faults);
	EXPECT_EQ(0, bad);
	free_writer_and_self(_th_r, &b, ctx, &st);
}

static int stop_after_three(struct uks_damon_ctx *ctx)
{
	int *n = uks_damon_callback_private(ctx);

	return ++*n >= 3;
}

/*
 * A monitor that stops by itself (its callback says so) while a thread
 * forks all the time: a fork's pause and resume straddle the monitor's
 * cleanup, which used to wait forever for a count the resume no longer
 * found (it looked the context up again, and cleanup had cleared it).
 */
TEST_TIMEOUT(self_stops_by_itself_beside_a_forking_thread, 60)
{
	static const unsigned long attrs[5] = { 1000, 10000, 100000, 10, 100 };
	struct uks_damon_callback cb = { .after_aggregation = stop_after_three };
	unsigned long id = (unsigned long)getpid();
	struct uks_damon_ctx *ctx;
	char why[300];
	int rounds = 0, forks = 0;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	for (; rounds < 20; rounds++) {
		int aggregations = 0;
		struct timespec t0, t;

		cb.priv = &aggregations;
		ASSERT_EQ(0, start_monitor(&ctx, "self", attrs, id, &cb));
		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			pid_t pid = fork();
			int status = -1;

			if (pid == 0)
				_exit(0);
			ASSERT_GT(pid, 0);
			ASSERT_EQ(pid, waitpid(pid, &status, 0));
			/* a child that got a taken page empty dies on its stack */
			ASSERT_EQ(0, status);
			forks++;
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (uks_damon_is_running(ctx) && t.tv_sec - t0.tv_sec < 10);
		ASSERT_FALSE(uks_damon_is_running(ctx));
		uks_damon_ctx_destroy(ctx);
	}
	TH_LOG("%d self-stopping monitors, %d forks beside them", rounds, forks);
}

/* lib/damon/self/self_fork.c: the fork handlers' pause, called here directly */
void __uks_damon_self_pause(void);
void __uks_damon_self_resume(void);

/* Three aggregations of a self monitor on this process; its stats. */
static int run_three_aggregations(struct uks_damon_self_stats *st)
{
	static const unsigned long attrs[5] = { 1000, 10000, 100000, 10, 100 };
	struct uks_damon_callback cb = { .after_aggregation = stop_after_three };
	unsigned long id = (unsigned long)getpid();
	struct uks_damon_ctx *ctx;
	int aggregations = 0, err;

	cb.priv = &aggregations;
	err = start_monitor(&ctx, "self", attrs, id, &cb);
	if (err)
		return err;
	for (int i = 0; i < 1000 && uks_damon_is_running(ctx); i++)
		usleep(10000);
	uks_damon_stop(&ctx, 1);
	uks_damon_ctx_destroy(ctx);
	uks_damon_self_stats(st);
	return aggregations >= 3 ? 0 : -ETIMEDOUT;
}

/*
 * A fork that looked for a monitor before one started (and found none)
 * still holds the new monitor's windows until it is done: the monitor
 * samples but takes no page.  Without that, a child forked beside a
 * starting monitor got taken pages empty (its stack: a return to 0).
 * The pause here is the fork handler's, held for three aggregations.
 */
TEST_TIMEOUT(self_takes_nothing_while_an_earlier_fork_runs, 60)
{
	struct uks_damon_self_stats paused, after;
	unsigned long samples = 0, taken = 0;
	char why[300];
	char *buf;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
#if defined(__SANITIZE_ADDRESS__)
	/* as find_hot(): regions terabytes wide, a sample seldom lands on the buffer */
	SKIP(return, "ASan's shadow: 0-1 pages taken unpaused (the regular build runs it)");
#endif
	/* most samples land here, populated: each is a page to take */
	buf = mmap(NULL, COLD_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, buf);
	memset(buf, 1, COLD_SZ);
	__uks_damon_self_pause();
	ASSERT_EQ(0, run_three_aggregations(&paused));
	__uks_damon_self_resume();
	/*
	 * Unpaused, most samples take a page.  A slow guest samples less
	 * often (12 samples in three aggregations, 9 taken, in a CI run): up
	 * to five monitors' worth of aggregations, to take ten pages.
	 */
	for (int i = 0; i < 5 && taken < 10; i++) {
		ASSERT_EQ(0, run_three_aggregations(&after));
		samples += after.samples;
		taken += after.taken;
	}
	munmap(buf, COLD_SZ);
	TH_LOG("paused: %lu samples, %lu taken; after: %lu samples, %lu taken", paused.samples,
	       paused.taken, samples, taken);
	ASSERT_GE(paused.samples, 3);
	ASSERT_EQ(0, paused.taken);
	ASSERT_GE(taken, 10);
}

/* How many of this process's fds (its table: this thread's) are userfaultfds? */
static int program_uffds(void)
{
	char path[64], target[128];
	int n = 0;

	for (int fd = 0; fd < 4096; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, target, sizeof(target) - 1);
		if (len <= 0)
			continue;
		target[len] = '\0';
		n += strstr(target, "userfaultfd") != NULL;
	}
	return n;
}

/*
 * The userfaultfd lives in the monitor thread's own fd table: the
 * program's has none to close.  A program that closes every fd opened
 * since (a raw close_range(), past the agent's wrappers, as a daemon's
 * start-up may) loses no byte, and a fork after that, whose handshake
 * then has no eventfd to wake the monitor, still gives each child every
 * byte.
 */
TEST_TIMEOUT(self_keeps_its_userfaultfd_out_of_the_programs_reach, 60)
{
	struct bufs b = { 0 };
	struct uks_damon_ctx *ctx;
	struct uks_damon_self_stats st;
	int first_free, uffds, bad;
	char why[300];
	pthread_t th;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	first_free = fcntl(0, F_DUPFD, 0);
	ASSERT_GE(first_free, 0);
	close(first_free);
	start_writer_and_self(_th_r, &b, &ctx, &th);
	usleep(300000);
	uffds = program_uffds();
	syscall(SYS_close_range, (unsigned int)first_free, ~0U, 0);
	bad = fork_children(_th_r, &b, 10, 30000);
	EXPECT_TRUE(uks_damon_is_running(ctx));
	stop_writer_and_self(&b, ctx, th, &st);
	TH_LOG("%d userfaultfds in the program's table; 10 forks after the close, %d bad; "
	       "%lu samples, %lu taken, %lu faults", uffds, bad, st.samples, st.taken, st.faults);
	EXPECT_EQ(0, uffds);
	EXPECT_EQ(0, bad);
	for (unsigned long i = 0; i < HOT_SZ; i += 8)
		if (*(uint64_t *)(b.cold + i) != i * 7 + 1) {
			TH_LOG("byte %lu of the cold buffer lost", i);
			ASSERT_TRUE(false);
		}
	free_writer_and_self(_th_r, &b, ctx, &st);
}

/*
 * Kernel-side accesses: one region of exactly one page, so that page is
 * taken every sampling interval, and only read(2) (into it) and write(2)
 * (from it) ever touch it.  UFFD_USER_MODE_ONLY is not set, so those
 * copies fault and wait for the monitor instead of failing with EFAULT:
 * every call must succeed with the right bytes, and faults must be seen.
 */
struct kio {
	char *page;
	atomic_int stop;
	atomic_long rounds;
	long bad;
	atomic_ulong samples;	/* the monitor's */
};

static int kio_sampled(struct uks_damon_ctx *ctx)
{
	atomic_fetch_add(&((struct kio *)uks_damon_callback_private(ctx))->samples, 1);
	return 0;
}

static void *kernel_io(void *arg)
{
	struct kio *k = arg;
	char src[PG], back[PG];
	int in[2], out[2];

	if (pipe(in) || pipe(out))
		return NULL;
	for (long n = 0; !atomic_load(&k->stop); n++) {
		memset(src, (int)(n & 0xff), PG);
		src[0] = (char)(n >> 8);
		if (write(in[1], src, PG) != (ssize_t)PG ||
		    read(in[0], k->page, PG) != (ssize_t)PG ||		/* kernel writes P */
		    write(out[1], k->page, PG) != (ssize_t)PG ||	/* kernel reads P */
		    read(out[0], back, PG) != (ssize_t)PG || memcmp(src, back, PG))
			k->bad++;
		k->rounds++;
		usleep(500);
	}
	close(in[0]);
	close(in[1]);
	close(out[0]);
	close(out[1]);
	return NULL;
}

TEST_TIMEOUT(self_kernel_accesses_fault_and_wait, 90)
{
	struct kio k = { 0 };
	struct uks_damon_callback cb = { .priv = &k, .after_sampling = kio_sampled };
	struct uks_damon_ctx *ctx;
	struct uks_damon_self_stats st;
	struct damon_target *t;
	unsigned long id = (unsigned long)getpid();
	char why[300];
	pthread_t th;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	k.page = mmap(NULL, 3 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, k.page);
	k.page += PG;
	memset(k.page, 1, PG);
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "self"));
	/* 2 ms sampling, no update in the test's life: the region stays */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 2000, 50000, 1000000000, 3, 3));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	t = list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
	__uks_damon_add_region(__uks_damon_new_region((unsigned long)k.page,
						      (unsigned long)k.page + PG), t);
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, pthread_create(&th, NULL, kernel_io, &k));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	/*
	 * Until 200 samples and 200 rounds went by (1.5 s on an idle machine),
	 * not a fixed time: on a loaded one either may get little CPU.
	 */
	for (int i = 0; i < 1000 && (atomic_load(&k.samples) < 200 ||
				      atomic_load(&k.rounds) < 200); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	atomic_store(&k.stop, 1);
	pthread_join(th, NULL);
	uks_damon_self_stats(&st);
	TH_LOG("%ld read/write rounds through the page, %ld bad; %lu samples, %lu taken, "
	       "%lu faults", atomic_load(&k.rounds), k.bad, st.samples, st.taken, st.faults);
	EXPECT_EQ(0, k.bad);
	ASSERT_GE(atomic_load(&k.samples), 200UL);	/* else nothing progressed for 50 s */
	ASSERT_GE(atomic_load(&k.rounds), 200L);
	/* taken in most samples (the kernel may refuse a page it has pinned), and touched */
	EXPECT_GE(st.taken * 4, st.samples);
	EXPECT_GT(st.faults, 0);
	munmap(k.page - PG, 3 * PG);
	uks_damon_ctx_destroy(ctx);
}

/*
 * Two regions, each one 2 MiB transparent huge page; a thread writes one
 * word of one 4 KiB page of the first only.  Taken whole, the first huge
 * page sees that write every sample (4 KiB samples would see it once in
 * 512) and the second none; every byte stays, and both are still huge
 * pages (not split) when monitoring stops.
 */
struct hp {
	char *buf;
	atomic_int stop;
	int aggregations;
	unsigned long acc[2];
};

static void *huge_writer(void *arg)
{
	struct hp *h = arg;

	for (uint64_t v = 1; !atomic_load(&h->stop); v++) {
		((volatile uint64_t *)(h->buf + 300 * PG))[3] = v;
		usleep(200);
	}
	return NULL;
}

static int huge_regions(struct uks_damon_target *t, void *arg)
{
	struct hp *h = arg;
	struct uks_damon_region_info r[4];
	int nr = uks_damon_target_regions(t, r, 4);

	for (int i = 0; i < nr && i < 4; i++)
		for (int k = 0; k < 2; k++)
			if (r[i].start == (unsigned long)h->buf + (unsigned long)k * 2 * MB)
				h->acc[k] += r[i].nr_accesses;
	return 0;
}

static int huge_after_aggregation(struct uks_damon_ctx *ctx)
{
	struct hp *h = uks_damon_callback_private(ctx);

	uks_damon_for_each_target(ctx, huge_regions, h);
	return ++h->aggregations >= 40;
}

/* kB of AnonHugePages in the mappings inside [p, p + len) */
static unsigned long anon_huge_kb(const char *p, unsigned long len)
{
	FILE *f = fopen("/proc/self/smaps", "re");
	char line[256];
	unsigned long kb = 0, v;
	bool in = false;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
			in = s >= (unsigned long)p && e <= (unsigned long)p + len;
		else if (in && sscanf(line, "AnonHugePages: %lu kB", &v) == 1)
			kb += v;
	}
	fclose(f);
	return kb;
}

TEST_TIMEOUT(self_takes_huge_pages_whole, 60)
{
	struct hp h = { 0 };
	struct uks_damon_callback cb = { .priv = &h, .after_aggregation = huge_after_aggregation };
	struct uks_damon_self_stats st;
	struct uks_damon_ctx *ctx;
	struct damon_target *t;
	unsigned long id = (unsigned long)getpid(), len = 4 * MB;
	char why[300], *p;
	pthread_t th;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	if (strcmp(uks_damon_self_mode(), "move"))
		SKIP(return, "huge pages are taken whole in the UFFDIO_MOVE mode only");
	unsetenv("UKS_DAMON_SELF_HUGE");	/* the default: huge pages whole */
	p = mmap(NULL, len + 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	h.buf = (char *)(((uintptr_t)p + 2 * MB - 1) & ~(2 * MB - 1));
	if (h.buf > p)
		munmap(p, (size_t)(h.buf - p));
	munmap(h.buf + len, 2 * MB - (size_t)(h.buf - p));
	madvise(h.buf, len, MADV_HUGEPAGE);
	for (unsigned long i = 0; i < len; i += 8)
		*(uint64_t *)(h.buf + i) = i ^ 0x7a7a7a;
	if (anon_huge_kb(h.buf, len) < 4096) {
		munmap(h.buf, len);
		SKIP(return, "no transparent huge pages here (THP off, or none free)");
	}
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "self"));
	/* 2 ms sampling, 20 ms aggregation, no update: the two regions stay */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 2000, 20000, 1000000000, 3, 3));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	uks_damon_set_callback(ctx, &cb);
	t = list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
	for (int k = 0; k < 2; k++)
		__uks_damon_add_region(__uks_damon_new_region((unsigned long)h.buf + k * 2 * MB,
							      (unsigned long)h.buf + (k + 1) * 2 * MB),
				       t);
	ASSERT_EQ(0, pthread_create(&th, NULL, huge_writer, &h));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 800 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	atomic_store(&h.stop, 1);
	pthread_join(th, NULL);
	uks_damon_self_stats(&st);
	TH_LOG("%d aggregations, accesses %lu (written page's huge page) and %lu (untouched); "
	       "%lu samples, %lu taken, %lu huge, %lu faults, %lu refused; %lu kB AnonHugePages",
	       h.aggregations, h.acc[0], h.acc[1], st.samples, st.taken, st.huge, st.faults,
	       st.refused, anon_huge_kb(h.buf, len));
	EXPECT_GE(h.aggregations, 40);
	EXPECT_GT(st.huge, 100);
	/*
	 * The written one is seen in most samples.  Up to 10 fit an
	 * aggregation, but aggregations go by the clock (as in 5.15), and a
	 * slow monitor (a sanitizer build on a loaded box: 179 samples in 40
	 * aggregations once) takes fewer: count against the samples taken.
	 * Natively nearly all (355 of 357); in an emulated guest (TCG), where
	 * the writer and the monitor share one host thread, 29-55% (34 of
	 * 116 once: fewer than one per aggregation, so no bound by those).
	 */
	EXPECT_GE(h.acc[0], st.samples / 4);
	EXPECT_LE(h.acc[1], (unsigned long)h.aggregations / 2);
	for (unsigned long i = 0; i < len; i += 8)
		if (i != 300 * PG + 24 && *(uint64_t *)(h.buf + i) != (i ^ 0x7a7a7a)) {
			TH_LOG("byte %lu changed", i);
			ASSERT_TRUE(false);
		}
	EXPECT_EQ(4096, anon_huge_kb(h.buf, len));
	munmap(h.buf, len);
	uks_damon_ctx_destroy(ctx);
}

/*
 * Under an address-space limit that leaves no room for the padded slot
 * area (its 2 GiB of huge slots at 1000 regions), the agent must still
 * start, with fewer or no huge slots, and take pages.  A child process
 * sets RLIMIT_AS to 512 MiB above what it already maps.
 */
static int self_under_rlimit_as(void)
{
	struct uks_damon_self_stats st;
	struct uks_damon_ctx *ctx;
	unsigned long id = (unsigned long)getpid(), vm_kb = 0;
	char line[128], *buf;
	struct rlimit rl;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "VmSize: %lu kB", &vm_kb) == 1)
			break;
	if (f)
		fclose(f);
	if (!vm_kb)
		return 10;
	rl.rlim_cur = rl.rlim_max = (vm_kb << 10) + 512 * MB;
	if (setrlimit(RLIMIT_AS, &rl))
		return 11;
	buf = mmap(NULL, 8 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 12;
	memset(buf, 1, 8 * MB);
	if (uks_damon_ctx_create(&ctx) || uks_damon_set_primitive(ctx, "self") ||
	    uks_damon_set_attrs(ctx, 2000, 50000, 1000000000, 10, 1000) ||
	    uks_damon_set_targets(ctx, &id, 1))
		return 13;
	if (uks_damon_start(&ctx, 1))
		return 14;
	for (int i = 0; i < 300; i++) {
		for (unsigned long o = 0; o < 8 * MB; o += PG)
			((volatile char *)buf)[o]++;
		usleep(1000);
	}
	uks_damon_stop(&ctx, 1);
	uks_damon_self_stats(&st);
	uks_damon_ctx_destroy(ctx);
	return st.taken > 0 && st.samples > 10 ? 0 : 15;
}

TEST_TIMEOUT(self_starts_under_a_tight_address_space_limit, 60)
{
	char why[300];
	int status;
	pid_t pid;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
#if defined(__SANITIZE_ADDRESS__)
	SKIP(return, "ASan maps its shadow on demand, past any RLIMIT_AS set afterwards");
#endif
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0)
		_exit(self_under_rlimit_as());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	/* 10-12: the setup; 13/14: the context would not start; 15: took nothing */
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * A program mremap()s the middle of a huge page away while the agent
 * holds it (taken whole), with a raw system call, as glibc's realloc()
 * makes it, which the agent's mremap() wrapper does not see.  The move
 * cuts the taken page in three.  Every byte must be where the program now
 * looks, the moved part at its new address and the rest in place; the
 * agent's count of cut huge pages shows the case was met.  (Where a 4 KiB
 * sample's registration split the range, the call fails with EFAULT and
 * nothing moves: glibc's realloc() then copies.)
 *
 * The rounds in which both huge pages were seen taken right before a move
 * that went through are sure chances of a cut; the agent must count at
 * least one cut for every two of them, and 5 cuts in all.  300 rounds
 * give hundreds of cuts here; in an emulated guest (TCG) most moves fail
 * with EFAULT and 300 rounds gave 8, so the rounds go on, for 75 s at
 * most, until there have been 20 sure chances (12-17 cuts there).
 */
static void cut_fill(char *p, unsigned long len, unsigned long tag)
{
	for (unsigned long i = 0; i < len; i += 8)
		*(uint64_t *)(p + i) = (i + tag) * 0x9e3779b97f4a7c15ULL;
}

/* Is the page at @p away (taken by the agent)?  mincore() does not fault. */
static bool taken_now(char *p)
{
	unsigned char v = 1;

	return !mincore(p, PG, &v) && !(v & 1);
}

/* Words of [p, p + len) that differ from cut_fill()'s at offset @off. */
static unsigned long cut_check(const char *p, unsigned long len, unsigned long off,
			       unsigned long tag)
{
	unsigned long bad = 0;

	for (unsigned long i = 0; i < len; i += 8)
		bad += *(const volatile uint64_t *)(p + i) != (i + off + tag) * 0x9e3779b97f4a7c15ULL;
	return bad;
}

TEST_TIMEOUT(self_follows_an_mremap_that_cuts_taken_huge_pages, 120)
{
	struct uks_damon_self_stats st;
	struct uks_damon_ctx *ctx;
	struct damon_target *t;
	unsigned long id = (unsigned long)getpid(), len = 4 * MB, bad = 0, efaults = 0, round;
	unsigned long chances = 0;
	struct timespec t0, t1;
	char why[300], *p, *buf;

	if (uks_damon_primitive_available("self", why, sizeof(why)))
		SKIP(return, "self: %.200s", why);
	if (strcmp(uks_damon_self_mode(), "move"))
		SKIP(return, "huge pages are taken whole in the UFFDIO_MOVE mode only");
	unsetenv("UKS_DAMON_SELF_HUGE");
	p = mmap(NULL, len + 2 * MB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, p);
	buf = (char *)(((uintptr_t)p + 2 * MB - 1) & ~(2 * MB - 1));
	if (buf > p)
		munmap(p, (size_t)(buf - p));
	munmap(buf + len, 2 * MB - (size_t)(buf - p));
	madvise(buf, len, MADV_HUGEPAGE);
	cut_fill(buf, len, 0);
	if (anon_huge_kb(buf, len) < 4096) {
		munmap(buf, len);
		SKIP(return, "no transparent huge pages here (THP off, or none free)");
	}
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "self"));
	/* 1 ms sampling, no update: the two regions stay the two huge pages */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 1000, 20000, 1000000000, 3, 3));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	t = list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
	for (int k = 0; k < 2; k++)
		__uks_damon_add_region(__uks_damon_new_region((unsigned long)buf + k * 2 * MB,
							      (unsigned long)buf + (k + 1) * 2 * MB),
				       t);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (round = 0; !bad; round++) {
		bool both_taken = false;

		clock_gettime(CLOCK_MONOTONIC, &t1);
		if ((round >= 300 && chances >= 20) || t1.tv_sec - t0.tv_sec >= 75)
			break;
		/* until the agent holds both huge pages (mincore: not resident) */
		for (int w = 0; w < 200 && !both_taken; w++) {
			both_taken = taken_now(buf) && taken_now(buf + 2 * MB);
			if (!both_taken)
				usleep(250);
		}
		for (int k = 0; k < 2; k++) {
			char *from = buf + k * 2 * MB + MB / 2, *to;

			/* one page longer: it cannot grow in place, so it moves */
			to = (char *)syscall(SYS_mremap, from, MB, MB + PG, MREMAP_MAYMOVE);
			if (to == MAP_FAILED) {
				ASSERT_EQ(EFAULT, errno);
				efaults++;
				bad += cut_check(from, MB, k * 2 * MB + MB / 2, round);
				continue;
			}
			chances += both_taken && k == 0;
			bad += cut_check(buf + k * 2 * MB, MB / 2, k * 2 * MB, round);
			bad += cut_check(to, MB, k * 2 * MB + MB / 2, round);
			bad += cut_check(from + MB, MB / 2, k * 2 * MB + 3 * MB / 2, round);
			munmap(to, MB + PG);
		}
		/* fresh huge pages for the next round, at the same place */
		ASSERT_EQ(buf, mmap(buf, len, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
		madvise(buf, len, MADV_HUGEPAGE);
		cut_fill(buf, len, round + 1);
	}
	uks_damon_stop(&ctx, 1);
	uks_damon_self_stats(&st);
	TH_LOG("%lu rounds, %lu words wrong, %lu EFAULT, %lu chances of a cut; %lu samples, "
	       "%lu taken, %lu huge, %lu cut, %lu lost, %lu faults", round, bad, efaults, chances,
	       st.samples, st.taken, st.huge, st.cut, st.lost, st.faults);
	EXPECT_EQ(0, bad);
	EXPECT_EQ(0, st.lost);
	EXPECT_GE(st.cut, 5);
	EXPECT_GE(st.cut * 2, chances);
	munmap(buf, len);
	uks_damon_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
