// SPDX-License-Identifier: MIT
/*
 * The cache of freed huge mappings (lib/slab/huge_map.c): blocks above
 * 2 MiB are kept mapped for the purge delay and taken back by allocations
 * of about their size, zeroed for kzalloc, with what their last owner
 * did to them undone, bounded in number and bytes, and unmapped once they
 * expire.
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

/* Start from an empty cache: earlier tests leave mappings in it. */
static void drain(void)
{
	__uks_huge_cache_drain();
}

TEST(a_freed_mapping_is_taken_back)
{
	size_t size = 3 * MiB;
	char *p, *q;

	drain();
	p = uks_kmalloc(size);
	ASSERT_NONNULL(p);
	memset(p, 0xa5, size);
	uks_kfree(p);
	EXPECT_TRUE(mapped(p, size));

	q = uks_kmalloc(size + 4096);
	ASSERT_EQ(p, q);
	EXPECT_GE(uks_ksize(q), size + 4096);
	EXPECT_EQ((unsigned char)0xa5, (unsigned char)q[size - 1]);	/* not faulted in again */
	uks_kfree(q);

	/* kzalloc clears it: it is not a new mapping */
	q = uks_kzalloc(size);
	ASSERT_EQ(p, q);
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

/*
 * A cached mapping up to twice the size asked for is taken and its tail
 * unmapped; a bigger one is left for an allocation of its size.
 */
TEST(a_bigger_mapping_is_trimmed_or_left)
{
	char *p, *q;

	drain();
	p = uks_kmalloc(8 * MiB);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	q = uks_kmalloc(5 * MiB);	/* a 6 MiB mapping */
	ASSERT_EQ(p, q);
	EXPECT_TRUE(mapped(q, 6 * MiB));
	EXPECT_FALSE(mapped(q + 6 * MiB, 2 * MiB));
	uks_kfree(q);
	drain();

	p = uks_kmalloc(16 * MiB);
	ASSERT_NONNULL(p);
	uks_kfree(p);
	q = uks_kmalloc(3 * MiB);	/* 4 MiB: less than half of it */
	ASSERT_NONNULL(q);
	EXPECT_NE(p, q);
	EXPECT_TRUE(mapped(p, 16 * MiB));
	uks_kfree(q);
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

/* At most 8 mappings and 64 MiB stay cached; the oldest go first. */
TEST(the_cache_is_bounded)
{
	char *blocks[12];
	int kept = 0;

	drain();
	for (int i = 0; i < 12; i++) {
		blocks[i] = uks_kmalloc(3 * MiB);
		ASSERT_NONNULL(blocks[i]);
	}
	for (int i = 0; i < 12; i++)
		uks_kfree(blocks[i]);
	for (int i = 0; i < 12; i++)
		kept += mapped(blocks[i], 3 * MiB);
	EXPECT_EQ(8, kept);
	EXPECT_FALSE(mapped(blocks[0], 3 * MiB));
	EXPECT_TRUE(mapped(blocks[11], 3 * MiB));
	drain();

	for (int i = 0; i < 4; i++) {
		blocks[i] = uks_kmalloc(24 * MiB);
		ASSERT_NONNULL(blocks[i]);
	}
	for (int i = 0; i < 4; i++)
		uks_kfree(blocks[i]);
	kept = 0;
	for (int i = 0; i < 4; i++)
		kept += mapped(blocks[i], 24 * MiB);
	EXPECT_EQ(2, kept);
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
