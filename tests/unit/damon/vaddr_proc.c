// SPDX-License-Identifier: MIT
/*
 * The vaddr primitives on a real child process that writes to a known
 * buffer: the hot buffer must be found (vaddr-sd where the kernel has
 * soft-dirty bits, vaddr-refs everywhere), and monitoring must stop when
 * the child exits.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "harness.h"
#include "unit/damon/helper.h"

/* damo's defaults: 5 ms, 100 ms, 1 s, 10..1000 regions */
static const unsigned long damo_attrs[5] = { 5000, 100000, 1000000, 10, 1000 };

#define MB	(1UL << 20)
#define HOT_SZ	(4 * MB)
#define COLD_SZ	(64 * MB)

struct child {
	pid_t pid;
	unsigned long hot, cold;
	volatile unsigned long *pages;	/* shared: pages of the hot buffer written */
};

/*
 * The hot and the cold buffer are separate mappings (vaddr-refs' granularity):
 * a PROT_NONE guard page after the hot one keeps the kernel from merging them.
 * With @idle_first the child touches both once, then writes nothing until
 * it gets SIGUSR1; spawn_child() returns once the touching is done (in the
 * emulated guest it outlasted the first aggregations).
 */
static int spawn_child(struct child *c, bool idle_first)
{
	sigset_t go, old;
	char *hot = mmap(NULL, HOT_SZ + 4096, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *cold = mmap(NULL, COLD_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	void *pages = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int ready[2];
	char byte = 0;

	if (hot == MAP_FAILED || cold == MAP_FAILED || pages == MAP_FAILED || pipe(ready))
		return -1;
	c->pages = pages;
	mprotect(hot + HOT_SZ, 4096, PROT_NONE);
	madvise(hot, HOT_SZ, MADV_NOHUGEPAGE);
	madvise(cold, COLD_SZ, MADV_NOHUGEPAGE);
	c->hot = (unsigned long)hot;
	c->cold = (unsigned long)cold;
	sigemptyset(&go);
	sigaddset(&go, SIGUSR1);
	sigprocmask(SIG_BLOCK, &go, &old);	/* the child waits for it blocked */
	c->pid = fork();
	if (c->pid != 0)
		sigprocmask(SIG_SETMASK, &old, NULL);
	if (c->pid < 0) {
		close(ready[0]);
		close(ready[1]);
		return -1;
	}
	if (c->pid == 0) {
		int sig;

		prctl(PR_SET_PDEATHSIG, SIGKILL);	/* a failed ASSERT must not leak us */
		/*
		 * No khugepaged collapses of the child's other mappings (the
		 * copy of our heap): a collapsed huge page is new, young and
		 * soft-dirty, an access nobody made.
		 */
		prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
		memset(cold, 1, COLD_SZ);	/* present, then never again */
		if (idle_first) {
			memset(hot, 1, HOT_SZ);
			if (write(ready[1], &byte, 1) != 1)
				_exit(1);
			sigwait(&go, &sig);
		}
		/*
		 * Four passes between sleeps: on a loaded machine each sleep
		 * costs a wake-up latency, and a sample is judged only when a
		 * whole pass fell inside it.
		 */
		for (unsigned char v = 0;; v++) {
			for (unsigned long i = 0; i < HOT_SZ; i += 4096) {
				((volatile char *)hot)[i] = (char)v;
				__atomic_add_fetch(c->pages, 1, __ATOMIC_RELEASE);
			}
			if (!(v & 3))
				usleep(500);
		}
	}
	close(ready[1]);
	if (idle_first && read(ready[0], &byte, 1) != 1) {
		close(ready[0]);
		return -1;	/* the child died before it was idle */
	}
	close(ready[0]);
	munmap(hot, HOT_SZ + 4096);
	munmap(cold, COLD_SZ);
	return 0;
}

static int spawn(struct child *c)
{
	return spawn_child(c, false);
}

static void reap_child(struct child *c)
{
	kill(c->pid, SIGKILL);
	waitpid(c->pid, NULL, 0);
	munmap((void *)c->pages, 4096);
}

static unsigned long overlap(unsigned long s, unsigned long e, unsigned long bs, unsigned long sz)
{
	unsigned long is = s > bs ? s : bs, ie = e < bs + sz ? e : bs + sz;

	return ie > is ? ie - is : 0;
}

/*
 * After WARMUP aggregations (the regions adapt), aggregations are judged
 * against the samples the child ran through (struct toucher_samples):
 * with R of them, the hot buffer's sampled pages were written in at least
 * about R / 2 windows, so >= 90% of its bytes in regions mostly of it
 * must lie in regions seen accessed at least (R + 1) / 2 times, and <= 10%
 * of the cold buffer's (never written again) may.  Those regions must
 * hold half the buffer or more (the core's adaptation, slower with fewer
 * samples, is not what is judged).  An aggregation in which the child ran
 * through fewer than 2 samples (a loaded machine, a stalled vCPU) has too
 * little to see and is not judged; monitoring goes on until JUDGED were,
 * or MAX_AGGRS.  Most judged ones must pass: a region that still
 * straddles the buffers' edges, and a VM's accessed bits, are not exact.
 */
#define WARMUP		30
#define JUDGED		10
#define MAX_AGGRS	300

struct seen {
	struct child *c;
	struct toucher_samples ts;
	int aggregations, judged, passed, unresolved;
	unsigned int samples, ran;			/* the last judged aggregation's */
	unsigned long hot_bytes_seen;			/* in regions mostly hot buffer */
	unsigned long hot_bytes_hot, cold_bytes_hot;	/* in regions seen (R + 1) / 2 */
};

static int judge(struct uks_damon_target *t, void *arg)
{
	struct seen *s = arg;
	struct uks_damon_region_info r[1024];
	int nr = uks_damon_target_regions(t, r, 1024);
	unsigned int thr = (s->ts.ran + 1) / 2;

	s->hot_bytes_seen = s->hot_bytes_hot = s->cold_bytes_hot = 0;
	for (int i = 0; i < nr && i < 1024; i++) {
		unsigned long in_hot = overlap(r[i].start, r[i].end, s->c->hot, HOT_SZ);
		bool mostly_hot = in_hot * 2 >= r[i].end - r[i].start;

		s->hot_bytes_seen += mostly_hot ? in_hot : 0;
		if (r[i].nr_accesses < thr)
			continue;
		s->hot_bytes_hot += mostly_hot ? in_hot : 0;
		s->cold_bytes_hot += overlap(r[i].start, r[i].end, s->c->cold, COLD_SZ);
	}
	return 0;
}

static int sample_taken(struct uks_damon_ctx *ctx)
{
	toucher_after_sampling(&((struct seen *)uks_damon_callback_private(ctx))->ts);
	return 0;
}

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct seen *s = uks_damon_callback_private(ctx);

	toucher_after_aggregation(&s->ts);
	if (++s->aggregations > WARMUP && s->ts.ran >= 2) {
		uks_damon_for_each_target(ctx, judge, s);
		s->samples = s->ts.samples;
		s->ran = s->ts.ran;
		if (s->hot_bytes_seen * 2 >= HOT_SZ) {
			s->judged++;
			s->passed += s->hot_bytes_hot * 10 >= s->hot_bytes_seen * 9 &&
				     s->cold_bytes_hot * 10 <= COLD_SZ;
		} else {
			s->unresolved++;
		}
	}
	toucher_next(&s->ts);
	return s->judged >= JUDGED || s->aggregations >= MAX_AGGRS;
}

/*
 * Do this machine's accessed bits follow accesses?  vaddr-refs can see no
 * more than they say.  A child writes one mapping and leaves another
 * alone; of 40 samples of 5 ms, cleared as vaddr-refs clears ("1", then
 * "4" for the TLB flush), those in which the child made a whole pass must
 * nearly all see the first, and at most a tenth the second.  Both mappings have PROT_NONE guards on both sides: an
 * untouched mapping that merged with a neighbour the child uses (its
 * stack, libc's data) once made this probe report it referenced in 40 of
 * 40 samples.
 */
static bool accessed_bits_work(char *why, size_t len)
{
	const size_t sz = 1UL << 20;
	char *g = mmap(NULL, 5 * sz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *w = g + sz, *u = g + 3 * sz, path[64], line[256];
	volatile unsigned long *pages = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int seen_w = 0, seen_u = 0, ran = 0, ran_seen = 0, fd;
	pid_t pid;

	if (g == MAP_FAILED || pages == MAP_FAILED)
		return true;	/* cannot tell: let the test run */
	/* guard, w, guard, u, guard */
	if (mprotect(w, sz, PROT_READ | PROT_WRITE) || mprotect(u, sz, PROT_READ | PROT_WRITE)) {
		munmap(g, 5 * sz);
		return true;
	}
	memset(w, 1, sz);
	memset(u, 1, sz);
	pid = fork();
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (unsigned char v = 0;; v++) {
			for (size_t o = 0; o < sz; o += 4096) {
				((volatile char *)w)[o] = (char)v;
				__atomic_add_fetch(pages, 1, __ATOMIC_RELEASE);
			}
			usleep(200);
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	for (int i = 0; pid > 0 && fd >= 0 && i < 40; i++) {
		unsigned long before, after;
		int was_w = seen_w;
		FILE *f;
		int in = 0;

		if (pwrite(fd, "1", 1, 0) != 1 || pwrite(fd, "4", 1, 0) != 1)
			break;
		before = __atomic_load_n(pages, __ATOMIC_ACQUIRE);
		usleep(5000);
		after = __atomic_load_n(pages, __ATOMIC_ACQUIRE);
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f)) {
			unsigned long s, e, kb;

			if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' '))
				in = s == (unsigned long)w ? 1 : s == (unsigned long)u ? 2 : 0;
			else if (in && sscanf(line, "Referenced: %lu kB", &kb) == 1)
				*(in == 1 ? &seen_w : &seen_u) += kb > 0;
		}
		if (f)
			fclose(f);
		/* a whole pass between the clear and the read: the bits must say so */
		if (after - before >= sz / 4096) {
			ran++;
			ran_seen += seen_w > was_w;
		}
	}
	if (fd >= 0)
		close(fd);
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
	munmap(g, 5 * sz);
	munmap((void *)pages, 4096);
	snprintf(why, len, "accessed bits do not follow accesses here: a written mapping seen "
		 "in %d of %d samples with a whole pass (%d of 40), an untouched one in %d",
		 ran_seen, ran, seen_w, seen_u);
	/*
	 * Judged on the samples in which the writer made a whole pass, not on
	 * how many it got the CPU for: a loaded machine is no reason to skip.
	 */
	return pid < 0 || fd < 0 || (ran >= 10 && ran_seen * 10 >= ran * 9 && seen_u <= 4);
}

static void find_hot(struct th_result *_th_r, const char *prim)
{
	struct child c;
	struct seen s = { .c = &c };
	struct uks_damon_callback cb = { .priv = &s, .after_sampling = sample_taken,
					 .after_aggregation = after_aggregation };
	struct uks_damon_ctx *ctx;
	unsigned long id;
	char why[200];

	if (uks_damon_primitive_available(prim, why, sizeof(why)))
		SKIP(return, "%s: %s", prim, why);
	if (!strcmp(prim, "vaddr-refs") && !accessed_bits_work(why, sizeof(why)))
		SKIP(return, "%s: %s", prim, why);
#if defined(__SANITIZE_ADDRESS__)
	/*
	 * ASan's shadow mappings make the child's address space terabytes
	 * wide: the regions then start that wide and need far more than the
	 * 40 aggregations here to narrow down to a 4 MiB buffer.
	 */
	SKIP(return, "%s: ASan's terabytes of shadow mappings (the regular build runs it)", prim);
#endif
	ASSERT_EQ(0, spawn(&c));
	s.ts.pages = c.pages;
	s.ts.per_pass = HOT_SZ / 4096;
	id = (unsigned long)c.pid;
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, prim));
	toucher_watch_checks(ctx, &s.ts);
	/* 5 ms / 100 ms as the kernel's defaults; 40 aggregations = 4 s */
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	/* aggregations come every 100 ms whatever the load: MAX_AGGRS bounds this */
	for (int i = 0; i < 1200 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	reap_child(&c);
	TH_LOG("%s: %d aggregations, %d judged, %d right, %d not resolved; the last: %u "
	       "samples, the child ran through %u, %lu of %lu hot bytes (%lu in regions mostly "
	       "of it) and %lu of %lu cold bytes seen at least %u times", prim, s.aggregations,
	       s.judged, s.passed, s.unresolved, s.samples, s.ran, s.hot_bytes_hot, HOT_SZ,
	       s.hot_bytes_seen, s.cold_bytes_hot, COLD_SZ, (s.ran + 1) / 2);
	ASSERT_GT(s.aggregations, WARMUP);
	/* the regions resolve the buffer sooner or later: not 100 times in a row */
	ASSERT_TRUE(s.judged >= JUDGED || s.unresolved < 100);
	if (s.judged < JUDGED)
		SKIP(goto out, "the child ran through 2 or more samples in only %d of %d "
		     "aggregations: the machine is too loaded to judge", s.judged,
		     s.aggregations - WARMUP);
	ASSERT_GE(s.passed * 10, s.judged * 8);
out:
	uks_damon_ctx_destroy(ctx);
}

TEST_TIMEOUT(vaddr_sd_finds_the_hot_buffer, 90)
{
	find_hot(_th_r, "vaddr-sd");
}

TEST_TIMEOUT(vaddr_refs_finds_the_hot_buffer, 90)
{
	find_hot(_th_r, "vaddr-refs");
}

/*
 * vaddr-refs sees whole mappings, so its regions must not straddle two:
 * 16 mappings of 1 MiB (guard pages between them), every other one hot.
 * After 20 aggregations no region may hold both a hot and a cold stripe,
 * and the regions seen accessed must hold the hot stripes and next to
 * nothing of the cold ones.
 */
#define NR_STRIPES	16
#define STRIPE		(1 * MB)

struct stripes {
	unsigned long base;	/* stripe i at base + i * (STRIPE + 4096) */
	volatile unsigned long *loops;	/* the child's, shared */
	unsigned long last_loops;
	int aggregations, judged, passed;
	unsigned long hot_in_hot, cold_in_hot, mixed;	/* of the last judged */
};

static int stripe_of(const struct stripes *st, unsigned long addr)
{
	unsigned long off = addr - st->base;

	if (addr < st->base || off >= NR_STRIPES * (STRIPE + 4096UL))
		return -1;
	return off % (STRIPE + 4096) < STRIPE ? (int)(off / (STRIPE + 4096)) : -1;
}

static int judge_stripes(struct uks_damon_target *t, void *arg)
{
	struct stripes *st = arg;
	struct uks_damon_region_info r[1024];
	int nr = uks_damon_target_regions(t, r, 1024);

	/*
	 * "Hot" is "seen accessed in 2 of the 20 samples" here: the stripes
	 * compete with the child's stack for the top rank, and on a loaded
	 * machine the child runs in only some of the samples; but a VM may
	 * set accessed bits of pages nobody touches now and then (an idle
	 * process's mapping showed Referenced in about 1 sample of 80), so
	 * one sample is not enough.
	 */
	for (int i = 0; i < nr && i < 1024; i++) {
		bool hot = r[i].nr_accesses >= 2;
		int kinds = 0;

		for (unsigned long a = r[i].start; a < r[i].end; a += 4096) {
			int sidx = stripe_of(st, a);

			if (sidx < 0)
				continue;
			kinds |= sidx % 2 ? 2 : 1;
			if (hot && sidx % 2 == 0)
				st->hot_in_hot += 4096;
			else if (hot)
				st->cold_in_hot += 4096;
		}
		st->mixed += kinds == 3;
	}
	return 0;
}

static int stripes_after_aggregation(struct uks_damon_ctx *ctx)
{
	struct stripes *st = uks_damon_callback_private(ctx);

	unsigned long loops = *st->loops;

	/*
	 * An aggregation in which the child hardly ran (its vCPU stalled,
	 * on a loaded VM) says nothing about the primitive: not judged.
	 */
	if (++st->aggregations > 20 - JUDGED && loops - st->last_loops >= 10) {
		st->hot_in_hot = st->cold_in_hot = st->mixed = 0;
		uks_damon_for_each_target(ctx, judge_stripes, st);
		st->judged++;
		st->passed += !st->mixed && st->hot_in_hot * 10 >= NR_STRIPES / 2 * STRIPE * 9UL &&
			      st->cold_in_hot * 10 <= NR_STRIPES / 2 * STRIPE * 1UL;
	}
	st->last_loops = loops;
	return (st->aggregations >= 20 && st->judged >= JUDGED / 2) || st->aggregations >= 100;
}

TEST_TIMEOUT(vaddr_refs_clips_regions_to_mappings, 60)
{
	size_t span = NR_STRIPES * (STRIPE + 4096UL);
	char *base = mmap(NULL, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct stripes st = { .base = (unsigned long)base };
	struct uks_damon_callback cb = { .priv = &st, .after_aggregation = stripes_after_aggregation };
	struct uks_damon_ctx *ctx;
	unsigned long id;
	char why[200];
	pid_t pid;

	if (uks_damon_primitive_available("vaddr-refs", why, sizeof(why)))
		SKIP(return, "vaddr-refs: %s", why);
	if (!accessed_bits_work(why, sizeof(why)))
		SKIP(return, "vaddr-refs: %s", why);
#if defined(__SANITIZE_ADDRESS__)
	SKIP(return, "ASan's terabytes of shadow mappings (the regular build runs it)");
#endif
	ASSERT_NE(MAP_FAILED, base);
	st.loops = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)st.loops);
	for (int i = 0; i < NR_STRIPES; i++) {
		char *s = base + i * (STRIPE + 4096UL);

		mprotect(s + STRIPE, 4096, PROT_NONE);	/* separate mappings */
		madvise(s, STRIPE, MADV_NOHUGEPAGE);
		memset(s, 1, STRIPE);
	}
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (unsigned char v = 0;; v++) {
			for (int i = 0; i < NR_STRIPES; i += 2)
				for (unsigned long o = 0; o < STRIPE; o += 4096)
					((volatile char *)base)[i * (STRIPE + 4096UL) + o] = (char)v;
			(*st.loops)++;
			if (!(v & 3))	/* as the hot-buffer child: fewer wake-ups to wait for */
				usleep(500);
		}
	}
	id = (unsigned long)pid;
	ASSERT_EQ(0, start_monitor(&ctx, "vaddr-refs", damo_attrs, id, &cb));
	for (int i = 0; i < 900 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	TH_LOG("%d aggregations, %d judged (the child ran 10+ rounds), %d right; the last: seen "
	       "accessed %lu hot bytes, %lu cold bytes; %lu mixed regions", st.aggregations, st.judged,
	       st.passed, st.hot_in_hot, st.cold_in_hot, st.mixed);
	ASSERT_GE(st.aggregations, 20);
	if (st.judged < JUDGED / 2)
		SKIP(goto out, "the child ran in only %d of %d aggregations: the machine is too "
		     "loaded to judge", st.judged, st.aggregations - (20 - JUDGED));
	EXPECT_GE(st.passed * 10, st.judged * 6);	/* A bits in a VM are not exact */
out:
	munmap((void *)st.loops, 4096);
	uks_damon_ctx_destroy(ctx);
	munmap(base, span);
}

/*
 * The clipping keeps the context's bound: two children of 128 mappings
 * each, every other one written, max_nr_regions 30, and never more than
 * 30 regions in all at an aggregation (each target alone was capped
 * before: up to 58 in all).
 */
struct region_count {
	int aggregations;
	unsigned long total, most;
};

static int count_regions(struct uks_damon_target *t, void *arg)
{
	((struct region_count *)arg)->total += uks_damon_target_nr_regions(t);
	return 0;
}

static int count_after_aggregation(struct uks_damon_ctx *ctx)
{
	struct region_count *rc = uks_damon_callback_private(ctx);

	rc->total = 0;
	uks_damon_for_each_target(ctx, count_regions, rc);
	if (rc->total > rc->most)
		rc->most = rc->total;
	return ++rc->aggregations >= 20;
}

static pid_t child_of_many_mappings(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		char *m = mmap(NULL, 128 * 4096UL, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (m == MAP_FAILED)
			_exit(1);
		for (int i = 0; i < 128; i += 2)
			mprotect(m + (i + 1) * 4096UL, 4096, PROT_READ);
		/* Every other mapping busy: merging cannot undo the clipping. */
		for (;;) {
			for (int i = 0; i < 128; i += 2)
				((volatile char *)m)[i * 4096UL] = 1;
			usleep(1000);
		}
	}
	return pid;
}

TEST_TIMEOUT(vaddr_refs_clipping_keeps_max_nr_regions_for_the_context, 60)
{
	struct region_count rc = { 0 };
	struct uks_damon_callback cb = { .priv = &rc, .after_aggregation = count_after_aggregation };
	struct uks_damon_ctx *ctx;
	unsigned long ids[2];
	char why[200];

	if (uks_damon_primitive_available("vaddr-refs", why, sizeof(why)))
		SKIP(return, "vaddr-refs: %s", why);
	ids[0] = (unsigned long)child_of_many_mappings();
	ids[1] = (unsigned long)child_of_many_mappings();
	ASSERT_GT((pid_t)ids[0], 0);
	ASSERT_GT((pid_t)ids[1], 0);
	usleep(100000);	/* both have their mappings */
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "vaddr-refs"));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 50000, 1000000, 10, 30));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, ids, 2));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 900 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	for (int i = 0; i < 2; i++) {
		kill((pid_t)ids[i], SIGKILL);
		waitpid((pid_t)ids[i], NULL, 0);
	}
	TH_LOG("%d aggregations, at most %lu regions", rc.aggregations, rc.most);
	ASSERT_GE(rc.aggregations, 20);
	EXPECT_GE(rc.most, 21);	/* clipping did split: the two started with 10 each */
	EXPECT_LE(rc.most, 30);
	uks_damon_ctx_destroy(ctx);
}

/*
 * The vaddr primitives skip their clear_refs walks while they are
 * needless: vaddr-sd while no sampled page is dirty, vaddr-refs after a
 * check that read no Referenced: at all.  The child touches its 68 MiB
 * once and then writes nothing; woken (SIGUSR1) after IDLE_AGGRS, it
 * writes its 4 MiB buffer continuously.
 *
 * What the code guarantees, and so what is asserted:
 *  - vaddr-refs: every prepare skips exactly when the check before it
 *    read no Referenced: (seen from after_sampling, which runs right after
 *    prepare: refs_clean is still the one prepare used).  How often that
 *    is while the child is idle is the machine's business: Referenced:
 *    also counts PG_referenced of the child's file pages (libc), which
 *    any other process reading those files sets, so a busy machine walks
 *    more.  It is logged, not judged.
 *  - vaddr-sd: a sampled page is dirty only if written; the idle child
 *    writes none, so nearly every idle sample skips; and a prepare after a
 *    window the woken child ran through (struct toucher_samples: its whole
 *    buffer written since the last clear) walks whenever one of the pages
 *    it samples lies in that buffer, as one of them then reads dirty.
 *  - Either: while idle, next to no access in the child's buffers (its
 *    own anonymous memory, nobody else's to touch); once woken, in the
 *    aggregations the child ran through 2 samples or more, the buffer is
 *    seen in about half of those (see find_hot()).
 */
#define IDLE_AGGRS	10
#define BUSY_AGGRS	15

struct idle_busy {
	struct child *c;
	const char *prim;
	struct toucher_samples ts;
	int aggregations;
	unsigned long last_clears, last_skipped;	/* at the last after_sampling */
	unsigned long idle_samples, idle_skipped;	/* idle aggregations 4.. */
	unsigned long rule_broken;		/* vaddr-refs: skip != the last check clean */
	unsigned long busy_due, busy_walked;	/* vaddr-sd: prepares due to walk */
	unsigned int idle_accesses;		/* in the buffers, idle aggregations 4.. */
	unsigned long idle_region_samples;	/* their regions x samples */
	unsigned int hot_max;			/* the hot buffer's, this aggregation */
	int busy_judged, busy_seen;		/* busy aggregations 6.. */
};

static int sum_accesses(struct uks_damon_target *t, void *arg)
{
	struct idle_busy *ib = arg;
	struct uks_damon_region_info r[1024];
	int nr = uks_damon_target_regions(t, r, 1024);
	bool idle = ib->aggregations > 3 && ib->aggregations <= IDLE_AGGRS;

	ib->hot_max = 0;
	for (int i = 0; i < nr && i < 1024; i++) {
		bool in_bufs = overlap(r[i].start, r[i].end, ib->c->hot, HOT_SZ) ||
			       overlap(r[i].start, r[i].end, ib->c->cold, COLD_SZ);

		if (idle && in_bufs) {
			ib->idle_accesses += r[i].nr_accesses;
			ib->idle_region_samples += ib->ts.samples;
		}
		if (overlap(r[i].start, r[i].end, ib->c->hot, HOT_SZ) &&
		    r[i].nr_accesses > ib->hot_max)
			ib->hot_max = r[i].nr_accesses;
	}
	return 0;
}

static int idle_busy_after_sampling(struct uks_damon_ctx *ctx)
{
	struct idle_busy *ib = uks_damon_callback_private(ctx);
	struct damon_target *t;

	toucher_after_sampling(&ib->ts);
	damon_for_each_target(t, ctx) {
		const struct vaddr_target *vt = t->pstate;
		bool skipped, hot_sampled = false;
		struct damon_region *r;

		if (!vt)
			continue;
		skipped = vt->nr_clears_skipped != ib->last_skipped;
		/* this prepare's sampled pages: one in the buffer the child wrote? */
		damon_for_each_region(r, t)
			hot_sampled |= overlap(r->sampling_addr, r->sampling_addr + 1, ib->c->hot,
					       HOT_SZ) != 0;
		if (!strcmp(ib->prim, "vaddr-refs") && skipped != vt->refs_clean)
			ib->rule_broken++;
		/* the window that closed before this prepare was run through */
		if (ib->aggregations > IDLE_AGGRS && ib->ts.last_ran && hot_sampled) {
			ib->busy_due++;
			ib->busy_walked += !skipped;
		}
		if (ib->aggregations > 3 && ib->aggregations < IDLE_AGGRS) {
			ib->idle_samples++;
			ib->idle_skipped += skipped;
		}
		ib->last_clears = vt->nr_clears;
		ib->last_skipped = vt->nr_clears_skipped;
	}
	return 0;
}

static int idle_busy_after_aggregation(struct uks_damon_ctx *ctx)
{
	struct idle_busy *ib = uks_damon_callback_private(ctx);
	int n = ++ib->aggregations;

	toucher_after_aggregation(&ib->ts);
	uks_damon_for_each_target(ctx, sum_accesses, ib);
	if (n > IDLE_AGGRS + 5 && ib->ts.ran >= 2) {
		ib->busy_judged++;
		ib->busy_seen += ib->hot_max >= (ib->ts.ran + 1) / 2;
	}
	toucher_next(&ib->ts);
	if (n == IDLE_AGGRS)
		kill(ib->c->pid, SIGUSR1);
	/* on until 20 busy aggregations could be judged, or 20 s of them */
	return n >= IDLE_AGGRS + BUSY_AGGRS && (ib->busy_judged >= 20 || n >= IDLE_AGGRS + 200);
}

static void skips_the_walk_while_idle(struct th_result *_th_r, const char *prim)
{
	struct child c;
	struct idle_busy ib = { .c = &c, .prim = prim };
	struct uks_damon_callback cb = { .priv = &ib,
					 .after_sampling = idle_busy_after_sampling,
					 .after_aggregation = idle_busy_after_aggregation };
	struct uks_damon_ctx *ctx;
	unsigned long id;
	char why[200];

	if (uks_damon_primitive_available(prim, why, sizeof(why)))
		SKIP(return, "%s: %s", prim, why);
#if defined(__SANITIZE_ADDRESS__)
	/* as find_hot(): regions too wide to sample the 4 MiB buffer in time */
	SKIP(return, "ASan's terabytes of shadow mappings (the regular build runs it)");
#endif
	ASSERT_EQ(0, spawn_child(&c, true));
	ib.ts.pages = c.pages;
	ib.ts.per_pass = HOT_SZ / 4096;
	id = (unsigned long)c.pid;
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, prim));
	toucher_watch_checks(ctx, &ib.ts);
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	uks_damon_set_callback(ctx, &cb);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	/* aggregations come every 100 ms whatever the load: the callback bounds this */
	for (int i = 0; i < 1200 && uks_damon_is_running(ctx); i++)
		usleep(50000);
	uks_damon_stop(&ctx, 1);
	reap_child(&c);
	TH_LOG("%s idle: %lu of %lu samples skipped the walk, %u accesses in the buffers' %lu "
	       "region samples; %lu prepares against the rule; busy: %lu of %lu prepares after "
	       "a run-through, sampling the buffer, walked; the buffer seen in %d of %d aggregations judged",
	       prim, ib.idle_skipped, ib.idle_samples, ib.idle_accesses, ib.idle_region_samples,
	       ib.rule_broken, ib.busy_walked, ib.busy_due, ib.busy_seen, ib.busy_judged);
	ASSERT_GE(ib.aggregations, IDLE_AGGRS + BUSY_AGGRS);
	ASSERT_GT(ib.idle_samples, 0);
	ASSERT_EQ(0UL, ib.rule_broken);
	if (!strcmp(prim, "vaddr-sd")) {
		ASSERT_GE(ib.idle_skipped * 10, ib.idle_samples * 9);
		/* a sampled page in the written buffer reads dirty: the prepare walks */
		ASSERT_EQ(ib.busy_walked, ib.busy_due);
	}
	/*
	 * Next to no access in the idle child's buffers: at most one region
	 * sample in a hundred, room for the kernel setting a bit by itself
	 * (khugepaged's collapses did until the child turned THP off).
	 */
	ASSERT_GT(ib.idle_region_samples, 0);
	ASSERT_LE(ib.idle_accesses * 100UL, ib.idle_region_samples);
	if (ib.busy_judged < 5)
		SKIP(goto out, "the woken child ran through 2 or more samples in only %d "
		     "aggregations: too loaded to judge what was seen", ib.busy_judged);
	/*
	 * Most of them: a region drawn at random may straddle the buffer and
	 * sample outside it (7 of 10 once in the loaded emulated guest, 10 of
	 * 10 in three runs beside it), while the idle phase sees next to none.
	 */
	ASSERT_GE(ib.busy_seen * 10, ib.busy_judged * 7);
out:
	uks_damon_ctx_destroy(ctx);
}

TEST_TIMEOUT(vaddr_sd_skips_the_walk_while_no_sample_is_written, 60)
{
	skips_the_walk_while_idle(_th_r, "vaddr-sd");
}

TEST_TIMEOUT(vaddr_refs_skips_the_walks_while_nothing_is_referenced, 60)
{
	skips_the_walk_while_idle(_th_r, "vaddr-refs");
}

TEST(soft_dirty_probe_says_why)
{
	char why[200];
	int ret = uks_damon_primitive_available("vaddr-sd", why, sizeof(why));

	if (ret) {
		ASSERT_EQ(-EOPNOTSUPP, ret);
		ASSERT_NONNULL(strstr(why, "CONFIG_"));
		TH_LOG("vaddr-sd: %s", why);
	}
	ASSERT_EQ(-ENOENT, uks_damon_primitive_available("nosuch", why, sizeof(why)));
	ASSERT_EQ(-ENOENT, uks_damon_set_primitive(NULL, "nosuch"));
}

TEST_TIMEOUT(monitoring_stops_when_the_target_exits, 30)
{
	struct uks_damon_ctx *ctx;
	struct child c;
	unsigned long id;

	ASSERT_EQ(0, spawn(&c));
	id = (unsigned long)c.pid;
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, NULL));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	usleep(300000);
	ASSERT_TRUE(uks_damon_is_running(ctx));
	reap_child(&c);
	for (int i = 0; i < 1000 && uks_damon_is_running(ctx); i++)
		usleep(20000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	ASSERT_EQ(-EPERM, uks_damon_stop(&ctx, 1));
	uks_damon_ctx_destroy(ctx);
}

TEST(a_dead_pid_is_an_invalid_target)
{
	struct uks_damon_ctx *ctx;
	unsigned long id = 0x3fffffff;

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 2000 && uks_damon_is_running(ctx); i++)
		usleep(10000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	uks_damon_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
