// SPDX-License-Identifier: MIT
/*
 * The cache of freed huge mappings (lib/slab/huge_cache.c): blocks above
 * 2 MiB are kept mapped as extents for the purge delay, split and merged
 * for allocations of any size, zeroed for kzalloc, with what their last
 * owner did to them undone, bounded in number and bytes, and unmapped
 * once they expire.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include <uks/slab.h>
#include "slab/slub.h"

#define MiB (1UL << 20)

/* Is any page of [p, p + len) mapped?  mincore() fails on a hole. */
static bool mapped(const void *p, size_t len)
{
	static unsigned char vec[(64 << 20) / 4096];

	return len <= sizeof(vec) * 4096 && mincore((void *)p, len, vec) == 0;
}

/* Bytes cached now. */
static size_t cached_bytes(void)
{
	size_t bytes;
	uint64_t ms;

	__uks_huge_cache_stats(&bytes, &ms);
	return bytes;
}

/* How long freed extents stay cached now. */
static uint64_t delay_ms(void)
{
	size_t bytes;
	uint64_t ms;

	__uks_huge_cache_stats(&bytes, &ms);
	return ms;
}

/* A block of @size bytes, every byte @byte (resident); NULL if none. */
static char *filled_block(size_t size, int byte)
{
	char *p = uks_kmalloc(size);

	if (p)
		memset(p, byte, size);
	return p;
}

/* Allocate @n blocks of @size bytes; false if any allocation fails. */
static bool alloc_blocks(char **blocks, int n, size_t size)
{
	for (int i = 0; i < n; i++) {
		blocks[i] = uks_kmalloc(size);
		if (!blocks[i])
			return false;
	}
	return true;
}

/* Is the footprint of huge blocks within what the cache may add to it? */
static bool within_budget(void)
{
	size_t in_use, peak, cached = cached_bytes();

	__uks_huge_usage(&in_use, &peak, NULL, NULL);
	return cached <= 128 * MiB && in_use + cached <= (peak > 64 * MiB ? peak : 64 * MiB);
}

/* Start from an empty cache: earlier tests leave mappings in it. */
static void drain(void)
{
	__uks_huge_cache_drain();
}

/*
 * Free @p and allocate @size again (zeroed with @zero); sets *@in_time when
 * the allocation came within the purge delay of the free, by clocks read
 * outside both, so the extent must still have been cached.
 */
static char *free_and_take(char *p, size_t size, bool zero, bool *in_time)
{
	uint64_t freed = __uks_now_ms();
	char *q;

	uks_kfree(p);
	q = zero ? uks_kzalloc(size) : uks_kmalloc(size);
	*in_time = __uks_now_ms() - freed < delay_ms();
	return q;
}

TEST(a_freed_mapping_is_taken_back)
{
	size_t size = 3 * MiB;
	bool in_time = false;
	char *p = NULL, *q = NULL;

	/* A preempted test may outlive the delay: try until a round fits in it. */
	for (int round = 0; round < 50 && !in_time; round++) {
		drain();
		p = filled_block(size, 0xa5);
		ASSERT_NONNULL(p);
		q = free_and_take(p, size + 4096, false, &in_time);
		ASSERT_NONNULL(q);
		if (in_time)
			break;
		uks_kfree(q);
	}
	if (!in_time) {
		uks_kfree(q);
		SKIP(return, "no free and allocation ran within the %llu ms delay here",
		     (unsigned long long)delay_ms());
	}
	ASSERT_EQ(p, q);
	EXPECT_GE(uks_ksize(q), size + 4096);
	EXPECT_EQ((unsigned char)0xa5, (unsigned char)q[size - 1]);	/* not faulted in again */

	/* kzalloc clears it: it is not a new mapping */
	q = free_and_take(q, size, true, &in_time);
	ASSERT_NONNULL(q);
	if (in_time) {
		ASSERT_EQ(p, q);
	}
	for (size_t i = 0; i < size; i++)
		ASSERT_EQ(0, q[i]);
	uks_kfree(q);
	drain();
	EXPECT_FALSE(mapped(p, size));
}

TEST(a_cached_mapping_expires_at_a_page_level_call)
{
	char *p;

	drain();
	p = uks_kmalloc(3 * MiB);
	ASSERT_NONNULL(p);
	memset(p, 1, 3 * MiB);
	uks_kfree(p);
	ASSERT_TRUE(mapped(p, 3 * MiB));
	usleep(50 * 1000);
	EXPECT_TRUE(mapped(p, 3 * MiB));	/* nothing runs in the background */
	uks_kfree(uks_kmalloc(64 << 10));	/* whole pages: a page-level call */
	EXPECT_FALSE(mapped(p, 3 * MiB));
}

TEST(mappings_above_32_mib_are_unmapped_at_once)
{
	char *p;

	drain();
	p = uks_kmalloc(40 * MiB);
	ASSERT_NONNULL(p);
	p[0] = 1;
	uks_kfree(p);
	EXPECT_FALSE(mapped(p, 40 * MiB));
}

/* An allocation takes the front of a bigger extent and leaves the rest cached. */
TEST(a_bigger_extent_is_split)
{
	char *p, *q, *r;

	drain();
	p = filled_block(16 * MiB, 0x5a);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	q = uks_kmalloc(5 * MiB);	/* a 6 MiB block */
	ASSERT_EQ(p, q);
	EXPECT_EQ(10 * MiB, cached_bytes());
	r = uks_kmalloc(3 * MiB);	/* 4 MiB more */
	ASSERT_EQ(p + 6 * MiB, r);
	EXPECT_EQ((unsigned char)0x5a, (unsigned char)r[4 * MiB - 1]);	/* not faulted in again */
	EXPECT_EQ(6 * MiB, cached_bytes());
	EXPECT_TRUE(mapped(p, 16 * MiB));

	/* freed, the pieces merge back into one extent */
	uks_kfree(q);
	uks_kfree(r);
	EXPECT_EQ(16 * MiB, cached_bytes());
	q = uks_kmalloc(15 * MiB);
	EXPECT_EQ(p, q);
	uks_kfree(q);
	drain();
	EXPECT_FALSE(mapped(p, 16 * MiB));
}

/* A shrinking block gives its tail to the cache, and a growing one takes it back. */
TEST(realloc_trades_tails_with_the_cache)
{
	bool ours;
	char *p, *q;

	drain();
	p = filled_block(16 * MiB, 0x77);
	ASSERT_NONNULL(p);
	q = __uks_krealloc_if_ours(p, 5 * MiB, &ours, 0);	/* malloc's realloc() */
	ASSERT_TRUE(ours);
	ASSERT_EQ(p, q);
	EXPECT_EQ(10 * MiB, cached_bytes());
	EXPECT_TRUE(mapped(p, 16 * MiB));

	q = uks_krealloc(p, 12 * MiB);	/* the cached extent right after it */
	ASSERT_EQ(p, q);
	EXPECT_EQ(4 * MiB, cached_bytes());
	EXPECT_GE(uks_ksize(q), 12 * MiB);
	for (size_t off = 0; off < 12 * MiB; off += 4096)
		ASSERT_EQ((unsigned char)0x77, (unsigned char)q[off]);
	memset(q, 0x12, 12 * MiB);

	/* more than the cache holds there: mremap() moves or grows it */
	q = uks_krealloc(q, 24 * MiB);
	ASSERT_NONNULL(q);
	for (size_t off = 0; off < 12 * MiB; off += 4096)
		ASSERT_EQ((unsigned char)0x12, (unsigned char)q[off]);
	memset(q, 0x13, 24 * MiB);
	uks_kfree(q);
	drain();
}

/* Blocks of assorted sizes reuse each other's pages. */
/* 2.3 GB of memset: on a loaded machine far more than the default 30 s */
TEST_TIMEOUT(assorted_sizes_share_pages, 180)
{
	unsigned int seed = 42;
	unsigned long fresh = 0;
	char *live[6] = { 0 };

	drain();
	for (int i = 0; i < 200; i++) {
		size_t size = 3 * MiB + (size_t)(rand_r(&seed) % (17 * MiB));
		unsigned int slot = (unsigned int)rand_r(&seed) % 6;
		char *p;

		uks_kfree(live[slot]);
		p = uks_kmalloc(size);
		ASSERT_NONNULL(p);
		/* a block carved from the cache keeps the last owner's bytes */
		fresh += p[0] == 0 && p[size - 1] == 0;
		memset(p, i + 1, size);
		live[slot] = p;
		ASSERT_TRUE(within_budget());
	}
	for (int i = 0; i < 6; i++)
		uks_kfree(live[i]);
	/* 6 are new; the rest mostly come from the cache */
	EXPECT_LT(fresh, 60);
	drain();
}

/*
 * Free @p (@size bytes) and allocate @size again: true if that is the
 * same mapping and every byte of it takes a write (a page that kept a
 * guard would SIGSEGV the test).
 */
static bool reused_and_writable(char *p, size_t size)
{
	char *q;

	uks_kfree(p);
	q = uks_kmalloc(size);
	if (q)
		memset(q, 0x11, size);
	uks_kfree(q);
	drain();
	return q == p;
}

/* A guard page the last owner made is lifted before the next one writes. */
TEST(a_protected_page_is_writable_again)
{
	char *p;

	drain();
	p = uks_kmalloc(4 * MiB);
	ASSERT_NONNULL(p);
	ASSERT_EQ(0, mprotect(p + MiB, 4096, PROT_NONE));
	ASSERT_EQ(0, mprotect(p + 2 * MiB, 8192, PROT_READ));
	EXPECT_TRUE(reused_and_writable(p, 4 * MiB));
}

/* So is a guard region (Linux 6.13), which mprotect() does not remove. */
TEST(a_guard_region_is_removed)
{
	char *p;

	drain();
	p = uks_kmalloc(4 * MiB);
	ASSERT_NONNULL(p);
	if (madvise(p + MiB, 4096, 102 /* MADV_GUARD_INSTALL */)) {
		uks_kfree(p);
		SKIP(return, "no MADV_GUARD_INSTALL on this kernel");
	}
	EXPECT_TRUE(reused_and_writable(p, 4 * MiB));
}

static unsigned long status_kb(const char *field)
{
	char line[256];
	unsigned long kb = ~0UL;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, strlen(field)))
			kb = strtoul(line + strlen(field), NULL, 10);
	if (f)
		fclose(f);
	return kb;
}

/* A block its owner locked is unlocked: locked memory counts against RLIMIT_MEMLOCK. */
TEST(a_locked_block_is_unlocked)
{
	size_t size = 3 * MiB;
	unsigned long before = status_kb("VmLck:");
	char *p;

	drain();
	p = uks_kmalloc(size);
	ASSERT_NONNULL(p);
	if (mlock(p, size) || status_kb("VmLck:") == before) {
		/* ASan's mlock() does nothing */
		uks_kfree(p);
		SKIP(return, "mlock: no effect (%s)", strerror(errno));
	}
	EXPECT_EQ(before + size / 1024, status_kb("VmLck:"));
	uks_kfree(p);
	EXPECT_TRUE(mapped(p, size));
	EXPECT_EQ(before, status_kb("VmLck:"));
	drain();
}

/*
 * Fork children get a reused block whole, whatever the last owner asked:
 * MADV_DONTFORK would leave the range unmapped in the child, and
 * MADV_WIPEONFORK would give it zeroes.
 */
TEST(fork_children_see_a_reused_block)
{
	static const int advice[] = { MADV_DONTFORK, MADV_WIPEONFORK };
	size_t size = 3 * MiB;

	for (unsigned int i = 0; i < sizeof(advice) / sizeof(advice[0]); i++) {
		char *p, *q;
		int status;
		pid_t pid;

		drain();
		p = uks_kmalloc(size);
		ASSERT_NONNULL(p);
		ASSERT_EQ(0, madvise(p, size, advice[i]));
		uks_kfree(p);
		q = uks_kmalloc(size);
		ASSERT_EQ(p, q);
		memset(q, 0x33, size);
		pid = fork();
		ASSERT_GE(pid, 0);
		if (pid == 0) {
			for (size_t off = 0; off < size; off += 4096)
				if (q[off] != 0x33)
					_exit(1);
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		uks_kfree(q);
	}
	drain();
}

/* A slab slow path expires the cache too, not only page-level calls. */
TEST(a_slab_slow_path_expires_the_cache)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("huge_cache_poll", 64, 0, 0, NULL);
	void *obj;
	char *p;

	ASSERT_NONNULL(s);
	obj = uks_kmem_cache_alloc(s);	/* the slab page comes now */
	ASSERT_NONNULL(obj);
	uks_kmem_cache_free(s, obj);
	drain();
	p = uks_kmalloc(3 * MiB);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	usleep(50 * 1000);
	ASSERT_TRUE(mapped(p, 3 * MiB));
	uks_kmem_cache_shrink(s);	/* its CPU slab goes: the next alloc is slow */
	obj = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(obj);
	EXPECT_FALSE(mapped(p, 3 * MiB));
	uks_kmem_cache_free(s, obj);
	uks_kmem_cache_destroy(s);
}

/* An expiry with a time read before a later free leaves that free's mapping. */
TEST(an_older_clock_reading_expires_nothing_newer)
{
	uint64_t before = __uks_now_ms();
	char *p;

	drain();
	usleep(20 * 1000);
	p = uks_kmalloc(3 * MiB);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	__uks_huge_cache_expire(before);
	EXPECT_TRUE(mapped(p, 3 * MiB));
	drain();
}

/* At most 16 extents stay cached; of equal ones, the oldest go first. */
TEST(the_cache_holds_16_extents)
{
	char *blocks[34];
	int kept = 0;

	drain();
	ASSERT_TRUE(alloc_blocks(blocks, 34, 3 * MiB));
	/* every other one: 17 extents that do not touch */
	for (int i = 0; i < 34; i += 2)
		uks_kfree(blocks[i]);
	for (int i = 0; i < 34; i += 2)
		kept += mapped(blocks[i], 3 * MiB);
	EXPECT_EQ(16, kept);
	EXPECT_FALSE(mapped(blocks[0], 3 * MiB));
	EXPECT_TRUE(mapped(blocks[32], 3 * MiB));
	EXPECT_EQ(64 * MiB, cached_bytes());
	for (int i = 1; i < 34; i += 2)
		uks_kfree(blocks[i]);
	EXPECT_TRUE(within_budget());
	drain();
}

/*
 * The cache keeps the footprint of huge blocks (in use plus cached) within
 * their peak, or within 64 MiB.  Each test runs in a new process: the peak
 * starts at 0.
 */
/*
 * What the cache holds is exact only while no extent freed since @t has
 * outlived the purge delay: a test preempted past it cannot tell.
 */
#define NOT_PURGED_SINCE(t)							\
	do {									\
		if (__uks_now_ms() - (t) >= delay_ms())				\
			SKIP(return, "preempted past the %llu ms purge delay",	\
			     (unsigned long long)delay_ms());			\
	} while (0)

TEST(the_cache_stays_within_the_peak)
{
	char *small[24], *big[6];
	size_t in_use, peak, cached;
	uint64_t freed;

	drain();
	ASSERT_TRUE(alloc_blocks(small, 24, 3 * MiB));	/* 4 MiB each */
	freed = __uks_now_ms();
	for (int i = 0; i < 24; i += 2)
		uks_kfree(small[i]);
	cached = cached_bytes();
	NOT_PURGED_SINCE(freed);
	EXPECT_EQ(48 * MiB, cached);

	/*
	 * No 4 MiB extent holds them: new mappings, back to the 96 MiB peak,
	 * and each evicts an extent to stay within it.
	 */
	for (int i = 0; i < 6; i++) {
		big[i] = uks_kmalloc(7 * MiB);
		ASSERT_NONNULL(big[i]);
		ASSERT_TRUE(within_budget());
	}
	__uks_huge_usage(&in_use, &peak, NULL, NULL);
	EXPECT_EQ(96 * MiB, in_use);
	EXPECT_EQ(96 * MiB, peak);
	EXPECT_EQ(0, cached_bytes());

	freed = __uks_now_ms();
	for (int i = 1; i < 24; i += 2) {
		uks_kfree(small[i]);
		ASSERT_TRUE(within_budget());
	}
	cached = cached_bytes();
	NOT_PURGED_SINCE(freed);
	EXPECT_EQ(48 * MiB, cached);	/* all of it: 96 in all */
	for (int i = 0; i < 6; i++) {
		uks_kfree(big[i]);
		ASSERT_TRUE(within_budget());
	}
	/* 96 MiB, less two 4 MiB extents if more than 16 did not touch */
	cached = cached_bytes();
	NOT_PURGED_SINCE(freed);
	EXPECT_GE(cached, 88 * MiB);
	EXPECT_LE(cached, 96 * MiB);

	/* a new peak: the cache gives way as the blocks grow past the old one */
	for (int i = 0; i < 6; i++) {
		big[i] = uks_kmalloc(17 * MiB);	/* 18 MiB each, 108 in all */
		ASSERT_NONNULL(big[i]);
		ASSERT_TRUE(within_budget());
	}
	__uks_huge_usage(&in_use, &peak, NULL, NULL);
	EXPECT_EQ(108 * MiB, in_use);
	EXPECT_EQ(0, cached_bytes());
	for (int i = 0; i < 6; i++)
		uks_kfree(big[i]);
	drain();
}

/* Growing a block by mremap() makes room in the cache for its new pages too. */
TEST(growth_keeps_the_cache_within_the_peak)
{
	char *blocks[10], *p;

	drain();
	ASSERT_TRUE(alloc_blocks(blocks, 10, 20 * MiB));
	for (int i = 1; i < 10; i += 2)
		uks_kfree(blocks[i]);
	EXPECT_EQ(100 * MiB, cached_bytes());
	p = uks_krealloc(blocks[0], 120 * MiB);
	ASSERT_NONNULL(p);
	EXPECT_TRUE(within_budget());
	uks_kfree(p);
	for (int i = 2; i < 10; i += 2)
		uks_kfree(blocks[i]);
	drain();
}

/* At most 128 MiB stay cached, whatever the peak. */
TEST(the_cache_holds_at_most_128_mib)
{
	char *blocks[10];

	drain();
	ASSERT_TRUE(alloc_blocks(blocks, 10, 20 * MiB));
	for (int i = 0; i < 10; i++)
		uks_kfree(blocks[i]);
	EXPECT_EQ(128 * MiB, cached_bytes());
	drain();
}

/*
 * Nothing of a block above 32 MiB is cached, its tails included: a big
 * buffer shrunk step by step would otherwise stay resident whole.
 */
TEST(tails_of_big_blocks_are_unmapped)
{
	bool ours;
	char *p, *q;

	drain();
	p = filled_block(64 * MiB, 1);
	ASSERT_NONNULL(p);
	q = __uks_krealloc_if_ours(p, 34 * MiB, &ours, 0);
	ASSERT_EQ(p, q);
	EXPECT_EQ(0, cached_bytes());
	EXPECT_FALSE(mapped(p + 34 * MiB, 2 * MiB));
	q = __uks_krealloc_if_ours(p, 20 * MiB, &ours, 0);	/* from 34 MiB: still big */
	ASSERT_EQ(p, q);
	EXPECT_EQ(0, cached_bytes());
	q = __uks_krealloc_if_ours(p, 10 * MiB, &ours, 0);	/* from 20 MiB: cached */
	ASSERT_EQ(p, q);
	EXPECT_EQ(10 * MiB, cached_bytes());
	uks_kfree(q);
	drain();
}

/* Does the VMA holding @p carry the VmFlags mnemonic @flag? */
static bool vma_has_flag(const void *p, const char *flag)
{
	char line[512], want[8];
	bool in_vma = false, found = false;
	FILE *f = fopen("/proc/self/smaps", "re");

	snprintf(want, sizeof(want), " %s", flag);
	while (f && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, '-') < strchr(line, ' '))
			in_vma = (uintptr_t)p >= lo && (uintptr_t)p < hi;
		else if (in_vma && !strncmp(line, "VmFlags:", 8))
			found = strstr(line + 8, want) != NULL;
	}
	if (f)
		fclose(f);
	return found;
}

/* A block its owner left out of core dumps is dumped again for the next one. */
TEST(a_dontdump_block_is_dumped_again)
{
	char *p, *q;

	drain();
	p = uks_kmalloc(8 * MiB);
	ASSERT_NONNULL(p);
	ASSERT_EQ(0, madvise(p, 8 * MiB, MADV_DONTDUMP));
	ASSERT_TRUE(vma_has_flag(p, "dd"));
	uks_kfree(p);
	q = uks_kmalloc(8 * MiB);
	ASSERT_EQ(p, q);
	EXPECT_FALSE(vma_has_flag(q, "dd"));
	uks_kfree(q);
	drain();
}

/*
 * An allocation that misses just after an expiry unmapped an extent it
 * would have fitted in makes the cache keep extents for 1 s from then on.
 */
TEST(a_premature_expiry_lengthens_the_delay)
{
	char *p, *q;

	drain();
	EXPECT_EQ(10, delay_ms());
	p = uks_kmalloc(6 * MiB);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	usleep(30 * 1000);
	uks_kfree(uks_kmalloc(64 << 10));	/* expires it */
	ASSERT_FALSE(mapped(p, 6 * MiB));
	EXPECT_EQ(10, delay_ms());

	q = uks_kmalloc(3 * MiB);	/* it would have fitted */
	ASSERT_NONNULL(q);
	EXPECT_EQ(1000, delay_ms());
	uks_kfree(q);
	usleep(30 * 1000);
	uks_kfree(uks_kmalloc(64 << 10));
	EXPECT_TRUE(mapped(q, 3 * MiB));	/* still cached */

	/* a miss with nothing recently expired changes nothing */
	drain();
	q = uks_kmalloc(3 * MiB);
	ASSERT_NONNULL(q);
	EXPECT_EQ(10, delay_ms());
	uks_kfree(q);
	drain();
}

/* Aligned requests take only a cached mapping at their alignment. */
TEST(alignment_is_kept)
{
	for (int i = 0; i < 8; i++) {
		char *p = uks_kmalloc(3 * MiB);

		ASSERT_NONNULL(p);
		uks_kfree(p);
		p = uks_kmalloc_aligned(3 * MiB, 8 * MiB);
		ASSERT_NONNULL(p);
		ASSERT_EQ(0, (uintptr_t)p & (8 * MiB - 1));
		uks_kfree(p);
	}
	drain();
}

struct churn {
	atomic_int errors;
	int id;
};

/* Take and free mappings of 2-7 MiB; each owner's bytes stay its own. */
static void *churn(void *arg)
{
	struct churn *c = arg;
	unsigned int seed = (unsigned int)c->id * 7919u + 1;

	for (int i = 0; i < 400; i++) {
		size_t size = (2 * MiB + 1) + (size_t)(rand_r(&seed) % (5 * MiB));
		unsigned char *p = uks_kmalloc(size);

		if (!p) {
			atomic_fetch_add(&c->errors, 1);
			continue;
		}
		for (size_t off = 0; off < size; off += 64 << 10)
			p[off] = (unsigned char)(c->id + i);
		p[size - 1] = (unsigned char)(c->id + i);
		sched_yield();
		for (size_t off = 0; off < size; off += 64 << 10)
			if (p[off] != (unsigned char)(c->id + i))
				atomic_fetch_add(&c->errors, 1);
		if (p[size - 1] != (unsigned char)(c->id + i))
			atomic_fetch_add(&c->errors, 1);
		uks_kfree(p);
	}
	return NULL;
}

/* More threads than CPUs share the cache. */
TEST_TIMEOUT(threads_share_the_cache, 120)
{
	enum { NR = 6 };
	pthread_t tids[NR];
	struct churn c[NR];

	for (int i = 0; i < NR; i++) {
		c[i] = (struct churn){ .id = i * 31 };
		ASSERT_EQ(0, pthread_create(&tids[i], NULL, churn, &c[i]));
	}
	for (int i = 0; i < NR; i++) {
		pthread_join(tids[i], NULL);
		EXPECT_EQ(0, atomic_load(&c[i].errors));
	}
	drain();
}

TEST_HARNESS_MAIN
