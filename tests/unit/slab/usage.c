// SPDX-License-Identifier: MIT
/*
 * uks_slab_usage() and uks_slab_trim() (lib/slab/usage.c): the heap's
 * figures follow allocations, frees and big blocks, and a trim hands the
 * free pages back at once, waiting for no purge delay.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include <uks/slab.h>
#include "unit/slab/helper.h"

#define MiB		(1UL << 20)
#define NR_OBJECTS	8192

TEST(objects_are_counted_while_allocated)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("usage-512", 512, 0, 0, NULL);
	static void *obj[NR_OBJECTS];
	struct uks_slab_usage before, full, empty;

	ASSERT_NE(NULL, s);
	uks_slab_usage(&before);
	for (int i = 0; i < NR_OBJECTS; i++) {
		obj[i] = uks_kmem_cache_alloc(s);
		ASSERT_NE(NULL, obj[i]);
	}
	uks_slab_usage(&full);
	EXPECT_GE(full.object_bytes - before.object_bytes, (size_t)NR_OBJECTS * 512);
	/* no more than the CPU slab's objects on top */
	EXPECT_LE(full.object_bytes - before.object_bytes, (size_t)NR_OBJECTS * 512 + 64 * 1024);
	EXPECT_GE(full.slab_bytes - before.slab_bytes, (size_t)NR_OBJECTS * 512);
	EXPECT_GE(full.heap_bytes, full.slab_bytes + full.large_bytes + full.free_bytes);

	for (int i = 0; i < NR_OBJECTS; i++)
		uks_kmem_cache_free(s, obj[i]);
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));
	uks_slab_usage(&empty);
	EXPECT_LE(empty.object_bytes, before.object_bytes);
	EXPECT_LE(empty.slab_bytes, before.slab_bytes);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(big_blocks_are_counted_apart)
{
	struct uks_slab_usage before, with, after;
	void *big, *large;

	uks_slab_usage(&before);
	big = uks_kmalloc(16 * MiB);
	large = uks_kmalloc(64 * 1024);		/* above the kmalloc classes, below 2 MiB */
	ASSERT_NE(NULL, big);
	ASSERT_NE(NULL, large);
	uks_slab_usage(&with);
	EXPECT_EQ(before.nr_huge + 1, with.nr_huge);
	EXPECT_GE(with.huge_bytes - before.huge_bytes, 16 * MiB);
	EXPECT_GE(with.peak_huge_bytes, with.huge_bytes);
	EXPECT_GE(with.peak_nr_huge, with.nr_huge);
	EXPECT_GE(with.large_bytes - before.large_bytes, 64 * 1024);
	uks_kfree(big);
	uks_kfree(large);
	uks_slab_usage(&after);
	EXPECT_EQ(before.nr_huge, after.nr_huge);
	EXPECT_EQ(before.large_bytes, after.large_bytes);
	EXPECT_GE(after.cached_huge_bytes, 16 * MiB);	/* kept for reuse, for now */
}

/* @n 1 KiB objects written and freed: a freed heap, resident for the purge delay */
static bool fill_and_free_1k(void **obj, int n)
{
	for (int i = 0; i < n; i++) {
		obj[i] = uks_kmalloc(1024);
		if (!obj[i])
			return false;
		memset(obj[i], 0x5a, 1024);
	}
	for (int i = 0; i < n; i++)
		uks_kfree(obj[i]);
	return true;
}

TEST(a_trim_gives_free_pages_back_at_once)
{
	enum { N = 16384 };
	static void *obj[N];
	struct uks_slab_usage freed, trimmed;
	unsigned long resident = 0;
	size_t released;

	ASSERT_TRUE(fill_and_free_1k(obj, N));
	/*
	 * What was freed just now mostly stays resident for the purge delay
	 * (a slow build may have purged some at later page-level calls).
	 */
	uks_slab_usage(&freed);
	released = uks_slab_trim(0);
	uks_slab_usage(&trimmed);
	EXPECT_GE(released, freed.free_resident_bytes);
	EXPECT_EQ(0, trimmed.free_resident_bytes);
	/* and the kernel agrees: the objects' pages are gone (4 per page) */
	for (int i = 0; i < N; i += 4) {
		unsigned long r = resident_pages((void *)((uintptr_t)obj[i] & ~4095UL), 4096);

		ASSERT_NE(~0UL, r);
		resident += r;
	}
	EXPECT_LE(resident * 4096, 2 * MiB);
	TH_LOG("%zu KiB free and resident; released %zu KiB; %lu KiB of the objects' pages "
	       "still resident", freed.free_resident_bytes >> 10, released >> 10, resident * 4);
}

TEST(a_trim_keeps_what_it_is_asked_to)
{
	enum { N = 8192 };
	static void *obj[N];
	struct uks_slab_usage freed, trimmed;

	ASSERT_TRUE(fill_and_free_1k(obj, N));
	uks_slab_usage(&freed);
	uks_slab_trim(4 * MiB);
	uks_slab_usage(&trimmed);
	EXPECT_LE(trimmed.free_resident_bytes, 4 * MiB);
	if (freed.free_resident_bytes < 6 * MiB)
		SKIP(return, "only %zu KiB resident before the trim (purged at page-level calls)",
		     freed.free_resident_bytes >> 10);
	/* blocks go whole, 2 MiB at most: no more than that below the pad */
	EXPECT_GE(trimmed.free_resident_bytes, 2 * MiB);
}

/* A thread that replaces stamped objects at random until told to stop. */
struct churn {
	pthread_t thread;
	atomic_bool *stop;
	unsigned long corrupted, ops;
	unsigned int seed;
};

static void *churn_main(void *arg)
{
	struct churn *c = arg;
	enum { SLOTS = 4096 };
	static _Thread_local uint64_t *slot[SLOTS];
	static _Thread_local size_t words[SLOTS];

	while (!atomic_load(c->stop)) {
		unsigned int i = (unsigned int)rand_r(&c->seed) % SLOTS;

		if (slot[i]) {
			for (size_t w = 0; w < words[i]; w++)
				if (slot[i][w] != ((uintptr_t)slot[i] ^ w))
					c->corrupted++;
			uks_kfree(slot[i]);
		}
		words[i] = 1 + (size_t)rand_r(&c->seed) % 300;
		slot[i] = uks_kmalloc(words[i] * sizeof(uint64_t));
		if (!slot[i])
			continue;
		for (size_t w = 0; w < words[i]; w++)
			slot[i][w] = (uintptr_t)slot[i] ^ w;
		c->ops++;
	}
	for (unsigned int i = 0; i < SLOTS; i++)
		uks_kfree(slot[i]);
	return NULL;
}

/* Trims and usage walks while other threads allocate lose no object. */
TEST(trims_under_allocating_threads_lose_nothing)
{
	struct churn churn[3];
	atomic_bool stop = false;
	unsigned long trims = 0, walks = 0;
	struct timespec t0, t;

	for (int i = 0; i < 3; i++) {
		churn[i] = (struct churn){ .stop = &stop, .seed = 17u + (unsigned int)i };
		ASSERT_EQ(0, pthread_create(&churn[i].thread, NULL, churn_main, &churn[i]));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		struct uks_slab_usage u;

		uks_slab_trim(0);
		trims++;
		uks_slab_usage(&u);
		walks++;
		EXPECT_GE(u.heap_bytes, u.slab_bytes + u.large_bytes + u.free_bytes);
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 1000);
	atomic_store(&stop, true);
	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, pthread_join(churn[i].thread, NULL));
		EXPECT_EQ(0, churn[i].corrupted);
		EXPECT_GT(churn[i].ops, 1000);
	}
	TH_LOG("%lu trims and %lu walks beside %lu + %lu + %lu replacements", trims, walks,
	       churn[0].ops, churn[1].ops, churn[2].ops);
}

TEST_HARNESS_MAIN
