// SPDX-License-Identifier: MIT
/*
 * Fast paths under preemption and migration: more threads than CPUs
 * allocate and free (locally and remotely) while a signal storm and
 * affinity changes interrupt them between reading the CPU slot and
 * committing.  Every object is tagged by its owner while allocated; a lost
 * or duplicated object (two owners at once, or a leak at the end) fails.
 * The abort/retry counter (cmpxchg_double_cpu_fail) proves that
 * interruptions inside the window were detected and retried.  The same
 * storm runs over each fast path, sheaves included (with outboxes too).
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "slab/slub.h"
#include <uks/slab.h>

#define NR_THREADS	8
#define OBJ_SIZE	64	/* whole lines; SMALL_SIZE shares them (outboxes) */
#define SMALL_SIZE	48
#define RING		256

struct stress {
	struct uks_kmem_cache *s;
	unsigned int words;		/* object size / 8 */
	atomic_bool stop;
	atomic_long errors;
	atomic_long ops;
	/* Objects handed from thread i to thread (i + 1) % NR_THREADS. */
	_Atomic(void *) ring[NR_THREADS][RING];
};

struct worker {
	struct stress *st;
	int id;
	pthread_t thread;
};

static void on_signal(int sig)
{
	(void)sig;	/* only interrupts: an rseq section in flight aborts */
}

static void tag(const struct stress *st, void *p, long owner)
{
	long *w = p;

	for (unsigned int i = 0; i < st->words; i++)
		w[i] = owner;
}

static bool tagged(const struct stress *st, void *p, long owner)
{
	long *w = p;

	for (unsigned int i = 0; i < st->words; i++)
		if (w[i] != owner)
			return false;
	return true;
}

static void *work(void *arg)
{
	struct worker *w = arg;
	struct stress *st = w->st;
	void *mine[64] = { 0 };
	unsigned int seed = (unsigned int)w->id * 7919u + 1;
	long owner = w->id + 1, n = 0;

	while (!atomic_load_explicit(&st->stop, memory_order_relaxed)) {
		int slot = (int)(rand_r(&seed) % 64);
		void *p = mine[slot];

		if (p) {
			if (!tagged(st, p, owner))
				atomic_fetch_add(&st->errors, 1);
			if (rand_r(&seed) & 1) {
				/* Remote free: the next thread frees it. */
				void *expected = NULL;
				int r = (int)(rand_r(&seed) % RING);

				tag(st, p, -1);
				if (!atomic_compare_exchange_strong(&st->ring[(w->id + 1) % NR_THREADS][r],
								    &expected, p))
					uks_kmem_cache_free(st->s, p);
			} else {
				tag(st, p, 0);
				uks_kmem_cache_free(st->s, p);
			}
			mine[slot] = NULL;
		} else {
			p = uks_kmem_cache_alloc(st->s);
			if (!p) {
				atomic_fetch_add(&st->errors, 1);
				break;
			}
			tag(st, p, owner);
			mine[slot] = p;
		}
		/* Free what others handed us. */
		if ((n & 15) == 0) {
			for (int r = 0; r < RING; r++) {
				void *q = atomic_exchange(&st->ring[w->id][r], NULL);

				if (q) {
					if (!tagged(st, q, -1))
						atomic_fetch_add(&st->errors, 1);
					uks_kmem_cache_free(st->s, q);
				}
			}
		}
		/* counted as it goes: the storm runs until enough were done */
		if (!(++n & 4095))
			atomic_fetch_add(&st->ops, 4096);
	}
	for (int i = 0; i < 64; i++)
		uks_kmem_cache_free(st->s, mine[i]);
	atomic_fetch_add(&st->ops, n & 4095);
	return NULL;
}

static unsigned long stat_sum(struct uks_kmem_cache *s, const char *attr)
{
	char buf[256];

	if (uks_kmem_cache_attr_show(s, attr, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoul(buf, NULL, 10);
}

/* The sum of a stat file's " C<cpu>=<n>" parts, which must make its total. */
static unsigned long stat_parts(struct uks_kmem_cache *s, const char *attr)
{
	unsigned long parts = 0;
	char buf[4096];
	const char *p = buf;

	if (uks_kmem_cache_attr_show(s, attr, buf, sizeof(buf)) <= 0)
		return 0;
	while ((p = strstr(p, " C")) && strchr(p, '='))
		parts += strtoul(strchr(p, '=') + 1, (char **)&p, 10);
	return parts;
}

static void run(struct th_result *_th_r, unsigned long flags, const char *name, bool expect_retries,
		unsigned int size)
{
	static struct stress st;
	struct worker w[NR_THREADS];
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct timespec end, now;
	unsigned long retries;
	long nr_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int round = 0;

	memset(&st, 0, sizeof(st));
	sigaction(SIGUSR1, &sa, NULL);
	st.words = size / 8;
	st.s = uks_kmem_cache_create(name, size, 0, flags, NULL);
	ASSERT_NONNULL(st.s);
	ASSERT_GT(NR_THREADS, nr_cpus);
	for (int i = 0; i < NR_THREADS; i++) {
		w[i].st = &st;
		w[i].id = i;
		ASSERT_EQ(0, pthread_create(&w[i].thread, NULL, work, &w[i]));
	}
	/*
	 * Two seconds of storm, and on until it has done what is asserted
	 * below (100000 operations; a fast-path retry where one is expected):
	 * a loaded machine gives the workers less of those two seconds.  60 s
	 * at most.
	 */
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += 2;
	do {
		/* The storm: signals, and forced migrations every few rounds. */
		for (int i = 0; i < NR_THREADS; i++)
			pthread_kill(w[i].thread, SIGUSR1);
		if (++round % 8 == 0 && nr_cpus > 1) {
			cpu_set_t set;

			CPU_ZERO(&set);
			CPU_SET(round / 8 % nr_cpus, &set);
			pthread_setaffinity_np(w[round % NR_THREADS].thread, sizeof(set), &set);
			CPU_ZERO(&set);
			for (int c = 0; c < nr_cpus; c++)
				CPU_SET(c, &set);
			pthread_setaffinity_np(w[(round + 3) % NR_THREADS].thread, sizeof(set), &set);
		}
		usleep(50);
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (!(now.tv_sec < end.tv_sec ||
		      (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec)) &&
		    ((atomic_load(&st.ops) > 100000 &&
		      (!expect_retries || stat_sum(st.s, "cmpxchg_double_cpu_fail"))) ||
		     now.tv_sec >= end.tv_sec + 58))
			break;
	} while (true);
	atomic_store(&st.stop, true);
	for (int i = 0; i < NR_THREADS; i++)
		pthread_join(w[i].thread, NULL);
	for (int t = 0; t < NR_THREADS; t++)
		for (int r = 0; r < RING; r++)
			uks_kmem_cache_free(st.s, st.ring[t][r]);

	retries = stat_sum(st.s, "cmpxchg_double_cpu_fail");
	TH_LOG("%s: %ld ops, %lu fast-path retries, %d signal rounds", name,
	       atomic_load(&st.ops), retries, round);
	EXPECT_EQ(0, atomic_load(&st.errors));
	EXPECT_GT(atomic_load(&st.ops), 100000);
	if (expect_retries)
		EXPECT_GT(retries, 0);
	/* Aborts are counted on a CPU, as every stat is: "1234 C0=600 C1=634". */
	EXPECT_EQ(retries, stat_parts(st.s, "cmpxchg_double_cpu_fail"));
	if (st.s->count_fast) {
		EXPECT_GT(stat_sum(st.s, "alloc_fastpath"), 0);
		EXPECT_GT(stat_sum(st.s, "free_fastpath"), 0);
		EXPECT_EQ(stat_sum(st.s, "free_fastpath"), stat_parts(st.s, "free_fastpath"));
	} else {
		EXPECT_EQ(0, stat_sum(st.s, "alloc_fastpath"));
	}
	/* Every object came back: nothing lost, so destroy succeeds. */
	EXPECT_EQ(0, uks_kmem_cache_destroy(st.s));
}

TEST_TIMEOUT(default_fastpath, 90)
{
	if (strcmp(uks_slab_fastpath(), "rseq"))
		SKIP(return, "rseq fast path not in use here (%s)", uks_slab_fastpath());
	run(_th_r, 0, "stress_rseq", true, OBJ_SIZE);
}

TEST_TIMEOUT(sheaves, 90)
{
	if (strcmp(uks_slab_fastpath(), "rseq"))
		SKIP(return, "rseq fast path not in use here (%s)", uks_slab_fastpath());
	run(_th_r, UKS_SLAB_SHEAVES, "stress_sheaves", true, OBJ_SIZE);
}

/* Objects smaller than a line: other threads' frees go through outboxes. */
TEST_TIMEOUT(sheaves_small_objects, 90)
{
	if (strcmp(uks_slab_fastpath(), "rseq"))
		SKIP(return, "rseq fast path not in use here (%s)", uks_slab_fastpath());
	run(_th_r, UKS_SLAB_SHEAVES, "stress_sheaves_small", true, SMALL_SIZE);
}

/* UKS_SLUB_STATS=1: the counting variants of the sections, in the storm. */
TEST_TIMEOUT(counting_fastpaths, 150)
{
	if (strcmp(uks_slab_fastpath(), "rseq"))
		SKIP(return, "rseq fast path not in use here (%s)", uks_slab_fastpath());
	__uks_slub_count_fast_paths(true);
	run(_th_r, 0, "stress_rseq_counted", true, OBJ_SIZE);
	run(_th_r, UKS_SLAB_SHEAVES, "stress_sheaves_counted", true, OBJ_SIZE);
}

TEST_TIMEOUT(cmpxchg16b_fastpath, 90)
{
	run(_th_r, UKS_SLAB_CMPXCHG_FASTPATH, "stress_cmpxchg", true, OBJ_SIZE);
}

TEST_TIMEOUT(rt_fastpath, 90)
{
	run(_th_r, UKS_SLAB_RT, "stress_rt", false, OBJ_SIZE);
}

TEST_TIMEOUT(debug_cache, 90)
{
	run(_th_r, UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | UKS_SLAB_CONSISTENCY_CHECKS,
	    "stress_debug", false, OBJ_SIZE);
}

/*
 * Huge mappings resized while other threads map and unmap theirs: a
 * growth the kernel refuses (more than RAM and swap) fails its move after
 * the kernel already freed the reserved range, which another thread may
 * have mapped since; the resize must not unmap it.  The other thread's
 * mappings must stay whole.
 */
struct resize_race {
	atomic_bool stop;
	atomic_long grows, lost;
	size_t refused;
};

static void *refused_grower(void *arg)
{
	struct resize_race *rr = arg;
	char *p = uks_kmalloc(4 << 20);

	if (!p)
		return NULL;
	memset(p, 7, 4 << 20);
	while (!atomic_load(&rr->stop)) {
		char *q = uks_krealloc(p, rr->refused);

		if (q) {	/* the kernel granted it after all: start again */
			uks_kfree(q);
			p = uks_kmalloc(4 << 20);
			if (!p)
				return NULL;
		} else if (p[(4 << 20) - 1] != 7) {
			atomic_fetch_add(&rr->lost, 1);
		}
		atomic_fetch_add(&rr->grows, 1);
	}
	uks_kfree(p);
	return NULL;
}

static void *mapping_user(void *arg)
{
	struct resize_race *rr = arg;

	while (!atomic_load(&rr->stop)) {
		char *m = uks_kmalloc(3 << 20);
		unsigned char v;

		if (!m)
			continue;
		memset(m, 0x5a, 3 << 20);
		for (int i = 0; i < 200; i++)
			if (mincore(m, 4096, &v) || m[(3 << 20) - 1] != 0x5a) {
				atomic_fetch_add(&rr->lost, 1);
				atomic_store(&rr->stop, true);
				return NULL;
			}
		uks_kfree(m);
	}
	return NULL;
}

TEST_TIMEOUT(huge_resize_races_other_mappings, 60)
{
	struct resize_race rr = { .stop = false };
	pthread_t a, b;
	struct sysinfo si;
	FILE *f = fopen("/proc/sys/vm/overcommit_memory", "re");
	int mode = 0;

	if (f) {
		if (fscanf(f, "%d", &mode) != 1)
			mode = 0;
		fclose(f);
	}
	if (mode == 1)
		SKIP(return, "vm.overcommit_memory=1 grants any growth");
	ASSERT_EQ(0, sysinfo(&si));
	rr.refused = ((size_t)si.totalram + si.totalswap) * si.mem_unit * 2 + (1UL << 30);
	ASSERT_EQ(0, pthread_create(&a, NULL, refused_grower, &rr));
	ASSERT_EQ(0, pthread_create(&b, NULL, mapping_user, &rr));
	for (int i = 0; i < 30 && !atomic_load(&rr.stop); i++)
		usleep(50000);
	atomic_store(&rr.stop, true);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	EXPECT_GT(atomic_load(&rr.grows), 100);
	EXPECT_EQ(0, atomic_load(&rr.lost));
}

TEST_HARNESS_MAIN
