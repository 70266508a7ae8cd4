// SPDX-License-Identifier: MIT
/*
 * The cache and kmalloc APIs: objects, constructors, bulk calls, size
 * classes, ksize/krealloc/aligned allocation, shrink and destroy, the
 * sysfs attribute text and writes, and the stat counters.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "unit/slab/helper.h"
#include <uks/core.h>
#include <uks/slab.h>
#include "slab/page_alloc.h"
#include "slab/slub.h"

static void quiet(enum uks_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(*(int *)arg)++;
}

static int ctor_calls;

static void ctor(void *p)
{
	ctor_calls++;
	memset(p, 0x42, 24);
}

TEST(alloc_free_and_ctor)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_ctor", 24, 0, 0, ctor);
	unsigned char *p;

	ASSERT_NONNULL(s);
	EXPECT_STREQ("t_ctor", uks_kmem_cache_name(s));
	EXPECT_EQ(24u, uks_kmem_cache_size(s));
	p = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(p);
	EXPECT_GT(ctor_calls, 1);	/* the whole slab was constructed */
	for (int i = 0; i < 24; i++)
		ASSERT_EQ(0x42, p[i]);
	uks_kmem_cache_free(s, p);
	/* The constructed state survives a free: the free pointer is outside. */
	p = uks_kmem_cache_alloc(s);
	for (int i = 0; i < 24; i++)
		ASSERT_EQ(0x42, p[i]);
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(create_rejects_bad_arguments)
{
	int logged = 0;

	uks_kfree(uks_kmalloc(64));	/* the malloc policy makes a class on first use */
	uks_set_log_fn(quiet, &logged);
	EXPECT_NULL(uks_kmem_cache_create(NULL, 8, 0, 0, NULL));
	EXPECT_NULL(uks_kmem_cache_create("t_zero", 0, 0, 0, NULL));
	EXPECT_NULL(uks_kmem_cache_create("t_align", 8, 3, 0, NULL));
	EXPECT_NULL(uks_kmem_cache_create("t_flags", 8, 0, 0x1, NULL));
	EXPECT_NULL(uks_kmem_cache_create("t_huge", (size_t)1 << 40, 0, 0, NULL));
	EXPECT_NULL(uks_kmem_cache_create("kmalloc-64", 8, 0, 0, NULL));	/* -EEXIST */
	EXPECT_EQ(6, logged);
	EXPECT_EQ(-EPERM, uks_kmem_cache_destroy(uks_kmem_cache_find("kmalloc-64")));
	EXPECT_EQ(0, uks_kmem_cache_destroy(NULL));
}

TEST(objects_are_distinct_and_aligned)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_align64", 40, 64, 0, NULL);
	enum { N = 5000 };
	char **p = calloc(N, sizeof(*p));

	ASSERT_NONNULL(s);
	for (int i = 0; i < N; i++) {
		p[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(p[i]);
		ASSERT_EQ(0, (uintptr_t)p[i] % 64);
		memset(p[i], i & 0xff, 40);
	}
	for (int i = 0; i < N; i++)
		for (int j = 0; j < 40; j++)
			ASSERT_EQ((char)(i & 0xff), p[i][j]);
	FREE_ALL_AND_DESTROY(s, p, N);
	free(p);
}

TEST(bulk_alloc_and_free)
{
	static const unsigned long flag_sets[] = {
		0, UKS_SLAB_CMPXCHG_FASTPATH, UKS_SLAB_RT, UKS_SLAB_RED_ZONE | UKS_SLAB_POISON,
		UKS_SLAB_SHEAVES, UKS_SLAB_NO_HARDENING,
	};

	for (size_t f = 0; f < sizeof(flag_sets) / sizeof(flag_sets[0]); f++) {
		char name[32];
		struct uks_kmem_cache *s;
		void *p[250];

		snprintf(name, sizeof(name), "t_bulk%zu", f);
		s = uks_kmem_cache_create(name, 256, 0, flag_sets[f], NULL);
		ASSERT_NONNULL(s);
		for (size_t n = 1; n <= 250; n = n * 2 + 1) {
			ASSERT_EQ((int)n, uks_kmem_cache_alloc_bulk(s, n, p));
			for (size_t i = 0; i < n; i++) {
				ASSERT_NONNULL(p[i]);
				memset(p[i], (int)i, 256);
			}
			for (size_t i = 0; i < n; i++)
				for (size_t j = i + 1; j < n; j++)
					ASSERT_NE(p[i], p[j]);
			uks_kmem_cache_free_bulk(s, n, p);
			for (size_t i = 0; i < n; i++)
				ASSERT_NULL(p[i]);	/* the kernel clears freed slots */
		}
		EXPECT_EQ(0, uks_kmem_cache_destroy(s));
	}
}

TEST(kmalloc_classes_and_ksize)
{
	static const struct { size_t req, ksize; } cases[] = {
		{ 1, 8 }, { 8, 8 }, { 9, 16 }, { 17, 32 }, { 33, 64 }, { 65, 96 }, { 96, 96 },
		{ 97, 128 }, { 129, 192 }, { 193, 256 }, { 257, 512 }, { 1000, 1024 },
		{ 2048, 2048 }, { 4097, 8192 }, { 8192, 8192 }, { 8193, 16384 }, { 100000, 131072 },
	};

	KERNEL_POLICY_ONLY();	/* the malloc policy's: tests/unit/slab/policy.c */

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *p = uks_kmalloc(cases[i].req);

		ASSERT_NONNULL(p);
		if (uks_ksize(p) != cases[i].ksize)
			TH_LOG("kmalloc(%zu): ksize %zu, want %zu", cases[i].req, uks_ksize(p),
			       cases[i].ksize);
		EXPECT_EQ(cases[i].ksize, uks_ksize(p));
		memset(p, 1, cases[i].req);
		uks_kfree(p);
	}
	EXPECT_EQ((void *)16, uks_kmalloc(0));	/* ZERO_SIZE_PTR */
	uks_kfree((void *)16);
	uks_kfree(NULL);
	EXPECT_EQ(0, uks_ksize(NULL));
}

TEST(kmalloc_large_and_huge)
{
	size_t sizes[] = { 8193, 1 << 20, (2 << 20) - 1, 2 << 20, (5 << 20) + 3 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *p = uks_kzalloc(sizes[i]);

		ASSERT_NONNULL(p);
		ASSERT_EQ(0, (uintptr_t)p % 4096);
		EXPECT_GE(uks_ksize(p), sizes[i]);
		EXPECT_EQ(0, p[sizes[i] - 1]);
		memset(p, 0xee, sizes[i]);
		uks_kfree(p);
	}
}

enum { BLOCK = 256 << 10 };	/* a kmalloc_large() block of 64 pages */

/* @nr resident blocks of BLOCK bytes in @blocks; false without memory. */
static bool alloc_blocks(char **blocks, int nr)
{
	for (int i = 0; i < nr; i++) {
		blocks[i] = uks_kmalloc(BLOCK);
		if (!blocks[i])
			return false;
		memset(blocks[i], 0x5a, BLOCK);
	}
	return true;
}

/* Free blocks [from, to). */
static void free_blocks(char **blocks, int from, int to)
{
	for (int i = from; i < to; i++)
		uks_kfree(blocks[i]);
}

/* Run the purge (a page-level call) once the delay has passed. */
static void purge_later(void)
{
	usleep(50 * 1000);
	uks_kfree(uks_kmalloc(BLOCK));
}

/* Resident pages of blocks [from, to). */
static unsigned long resident_blocks(char **blocks, int from, int to)
{
	unsigned long n = 0;

	for (int i = from; i < to; i++)
		n += resident_pages(blocks[i], BLOCK);
	return n;
}

/*
 * Freed pages stay resident for the purge delay (so a heap rebuilt right
 * away costs no page faults), then go back to the system on a later
 * page-level call, down to the small reserve.
 */
TEST(freed_pages_are_purged_after_a_delay)
{
	enum { NR = 32 };
	char *blocks[NR];

	bool in_time = false;

	/*
	 * Kept for reuse when the frees ran within the purge delay; a test
	 * preempted longer than that may see the first ones purged by the
	 * last, so it tries until a round fits in the delay.
	 */
	for (int round = 0; round < 50 && !in_time; round++) {
		uint64_t start;

		ASSERT_TRUE(alloc_blocks(blocks, NR));
		start = __uks_now_ms();
		free_blocks(blocks, 0, NR);
		in_time = __uks_now_ms() - start < UKS_PURGE_DELAY_MS;
	}
	if (!in_time)
		SKIP(return, "no round of frees ran within the %d ms purge delay here",
		     UKS_PURGE_DELAY_MS);
	EXPECT_GE(resident_blocks(blocks, 0, NR), NR * (BLOCK / 4096) * 9 / 10);
	purge_later();
	/* All but the reserve (256 KiB) and the block just reused. */
	EXPECT_LE(resident_blocks(blocks, 0, NR), 2 * (BLOCK / 4096));
}

/*
 * The resident reserve of free pages grows with the heap (an eighth of
 * the pages in use): a heap that keeps freeing and taking back whole
 * blocks does not fault them in again after every purge.
 */
TEST(the_free_reserve_grows_with_the_heap)
{
	enum { NR = 64, FREED = 6 };
	char *blocks[NR];

	ASSERT_TRUE(alloc_blocks(blocks, NR));
	/* 1.5 MiB freed of 16 MiB: under the reserve of an eighth */
	free_blocks(blocks, 0, FREED);
	purge_later();
	EXPECT_GE(resident_blocks(blocks, 0, FREED), FREED * (BLOCK / 4096) * 9 / 10);
	/* all of it freed: the heap is gone, and so is the reserve */
	free_blocks(blocks, FREED, NR);
	purge_later();
	EXPECT_LE(resident_blocks(blocks, 0, NR), 2 * (BLOCK / 4096));
}

TEST(krealloc_keeps_contents)
{
	char *p = uks_kmalloc(10), *q;

	ASSERT_NONNULL(p);
	memcpy(p, "0123456789", 10);
	q = uks_krealloc(p, 12);	/* fits kmalloc-16: same object */
	EXPECT_EQ(p, q);
	q = uks_krealloc(q, 5000);
	ASSERT_NONNULL(q);
	EXPECT_EQ(0, memcmp(q, "0123456789", 10));
	q = uks_krealloc(q, 3 << 20);
	ASSERT_NONNULL(q);
	EXPECT_EQ(0, memcmp(q, "0123456789", 10));
	EXPECT_EQ((void *)16, uks_krealloc(q, 0));
	p = uks_kcalloc(10, 10);
	for (int i = 0; i < 100; i++)
		ASSERT_EQ(0, p[i]);
	uks_kfree(p);
	EXPECT_NULL(uks_kcalloc(SIZE_MAX / 2, 3));
}

static size_t resident_bytes(const void *p, size_t len)
{
	size_t pages = len / 4096, n = 0;
	unsigned char *vec = malloc(pages);

	if (!vec || mincore((void *)p, len, vec)) {
		free(vec);
		return SIZE_MAX;
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n * 4096;
}

/*
 * A mapping of its own grows by mremap(): the pages move, the bytes are
 * not copied, so the pages never touched stay out of RSS.  (A copy would
 * read and write every one of them.)
 */
TEST(krealloc_grows_a_mapping_without_copying)
{
	size_t size = 3 << 20;
	char *p;

	__uks_huge_cache_drain();	/* a cached mapping is not fresh */
	p = uks_kzalloc(size);
	ASSERT_NONNULL(p);
	/* where THP is "always", the first touch would fault in 2 MiB (the
	 * whole mapping: advising part of it would split it, and mremap()
	 * moves single mappings only) */
	ASSERT_EQ(0, madvise(p, uks_ksize(p), MADV_NOHUGEPAGE));
	memcpy(p, "head", 5);
	while (size < (256UL << 20)) {
		size += 3 << 20;
		p = uks_krealloc(p, size);
		ASSERT_NONNULL(p);
		ASSERT_EQ(0, (uintptr_t)p & ((2 << 20) - 1));
		ASSERT_EQ(0, strcmp(p, "head"));
		ASSERT_GE(uks_ksize(p), size);
		/* every chunk of the mapping is found again */
		ASSERT_EQ(1, uks_ksize(p + uks_ksize(p) - 1));
	}
	EXPECT_EQ(4096, resident_bytes(p, uks_ksize(p)));
	p[size - 1] = 'x';
	uks_kfree(p);
}

/*
 * A mapping split in two (by mprotect() here; the DAMON self agent's
 * userfaultfd registrations do it too) cannot be moved or grown whole by
 * mremap(): krealloc copies instead, and fails nothing.
 */
TEST(krealloc_copies_a_mapping_it_cannot_move)
{
	size_t size = 4 << 20;
	char *p = uks_kmalloc(size), *q;

	ASSERT_NONNULL(p);
	memset(p, 0x3c, size);
	ASSERT_EQ(0, mprotect(p + (1 << 20), 4096, PROT_READ));
	q = uks_krealloc(p, 64 << 20);
	ASSERT_NONNULL(q);
	ASSERT_GE(uks_ksize(q), 64 << 20);
	for (size_t i = 0; i < size; i += 512)
		ASSERT_EQ(0x3c, (unsigned char)q[i]);
	q[(64 << 20) - 1] = 1;
	if (q != p)
		EXPECT_EQ(0, uks_ksize(p));	/* the old mapping is gone */
	uks_kfree(q);
}

static size_t vm_mib(void)
{
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	return pages * (size_t)getpagesize() >> 20;
}

/* Under an address-space limit: a growth the move cannot make copies, and nothing stays mapped. */
static int grow_under_rlimit_as(void)
{
	size_t base = vm_mib();
	struct rlimit rl = { (base + 200) << 20, (base + 200) << 20 };
	char *p, *q;

	if (setrlimit(RLIMIT_AS, &rl))
		return 1;
	p = uks_kmalloc(50 << 20);
	if (!p)
		return 2;
	memset(p, 1, 50 << 20);
	q = uks_krealloc(p, 100 << 20);	/* a move would need 52 + 104 + 100 MiB */
	if (!q || q[(50 << 20) - 1] != 1)
		return 3;
	p = q;
	q = uks_krealloc(p, 160 << 20);	/* in place or not at all */
	if (q)
		p = q;
	else if (p[(50 << 20) - 1] != 1)
		return 4;
	uks_kfree(p);
	return vm_mib() <= base + 4 ? 0 : 5;	/* no reservation left behind */
}

TEST(krealloc_under_an_address_space_limit)
{
	int status;
	pid_t pid;

#if defined(__SANITIZE_ADDRESS__)
	SKIP(return, "ASan maps shadow memory as it goes");
#endif
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(grow_under_rlimit_as());
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* An interior pointer is not the allocation: reported, and the block left alone. */
TEST(krealloc_of_an_interior_pointer_leaves_the_mapping)
{
	bool ours = false;
	int reports = 0;
	char *p, *q;

	KERNEL_POLICY_ONLY();	/* malloc's realloc() aborts: tests/slab/bad-free.sh */
	p = uks_kmalloc(8 << 20);

	ASSERT_NONNULL(p);
	p[(6 << 20) - 1] = 0x11;
	uks_set_log_fn(quiet, &reports);
	q = uks_krealloc(p + 4096, 64 << 20);
	uks_kfree(q);
	q = __uks_krealloc_if_ours(p + 4096, 3 << 20, &ours, 0);
	uks_kfree(q);
	uks_set_log_fn(NULL, NULL);
	EXPECT_EQ(2, reports);
	EXPECT_EQ(8 << 20, uks_ksize(p));
	EXPECT_EQ(0x11, p[(6 << 20) - 1]);
	uks_kfree(p);
}

/* malloc's realloc() trims such a mapping; the kernel's krealloc() keeps it. */
TEST(realloc_shrinks_a_mapping_in_place)
{
	bool ours = false;
	char *p = uks_kmalloc(64 << 20), *q;

	ASSERT_NONNULL(p);
	memset(p, 0x5a, 64 << 20);
	q = uks_krealloc(p, 5 << 20);
	EXPECT_EQ(p, q);
	EXPECT_EQ(64 << 20, uks_ksize(q));
	q = __uks_krealloc_if_ours(p, 5 << 20, &ours, 0);
	EXPECT_TRUE(ours);
	EXPECT_EQ(p, q);
	EXPECT_EQ(6 << 20, uks_ksize(q));
	EXPECT_EQ(0, uks_ksize(p + (6 << 20)));	/* no longer ours */
	EXPECT_EQ(0x5a, (unsigned char)q[(5 << 20) - 1]);
	/* down to a buddy block: a copy */
	q = __uks_krealloc_if_ours(q, 1 << 20, &ours, 0);
	ASSERT_NONNULL(q);
	EXPECT_EQ(1 << 20, uks_ksize(q));
	EXPECT_EQ(0x5a, (unsigned char)q[(1 << 20) - 1]);
	uks_kfree(q);
}

/* kzalloc of a new mapping leaves it alone: it reads zeroes, and stays out of RSS. */
TEST(kzalloc_of_a_fresh_mapping_touches_nothing)
{
	size_t size = 64 << 20, pages = size / 4096;
	unsigned char *vec = malloc(pages);
	char *p = uks_kzalloc(size);
	size_t resident = 0;

	ASSERT_NONNULL(vec);
	ASSERT_NONNULL(p);
	ASSERT_EQ(0, mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), size, vec));
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	EXPECT_EQ(0, resident);
	for (size_t i = 0; i < size; i += 4096)
		ASSERT_EQ(0, p[i]);
	memset(p, 0x5a, size);
	uks_kfree(p);
	/* so does kcalloc */
	p = uks_kcalloc(16, size / 16);
	ASSERT_NONNULL(p);
	ASSERT_EQ(0, mincore((void *)((uintptr_t)p & ~(uintptr_t)4095), size, vec));
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	EXPECT_EQ(0, resident);
	uks_kfree(p);
	/* recycled pages (a buddy block) are still zeroed */
	p = uks_kzalloc(64 << 10);
	ASSERT_NONNULL(p);
	memset(p, 0x5a, 64 << 10);
	uks_kfree(p);
	p = uks_kzalloc(64 << 10);
	ASSERT_NONNULL(p);
	for (size_t i = 0; i < (64 << 10); i++)
		ASSERT_EQ(0, p[i]);
	uks_kfree(p);
	free(vec);
}

/* Sizes near SIZE_MAX fail, at once: the page order search used to wrap. */
TEST(huge_sizes_fail)
{
	static const size_t sizes[] = { SIZE_MAX, SIZE_MAX - 4096, (size_t)1 << 63,
					((size_t)1 << 63) + 1 };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		EXPECT_NULL(uks_kmalloc(sizes[i]));
		EXPECT_NULL(uks_kzalloc(sizes[i]));
		EXPECT_NULL(uks_kmalloc_aligned(sizes[i], 16));
		EXPECT_NULL(uks_kmalloc_aligned(sizes[i], 4096));
		EXPECT_NULL(uks_kmalloc_aligned(sizes[i], 1 << 21));
	}
}

TEST(aligned_allocations)
{
	for (size_t align = 1; align <= (4 << 20); align <<= 1) {
		for (size_t size = 1; size <= 3 * align + 1 && size < (8 << 20); size = size * 3 + 1) {
			void *p = uks_kmalloc_aligned(size, align);

			ASSERT_NONNULL(p);
			if ((uintptr_t)p % align)
				TH_LOG("size %zu align %zu: %p", size, align, p);
			ASSERT_EQ(0, (uintptr_t)p % align);
			ASSERT_GE(uks_ksize(p), size);
			memset(p, 0, size);
			uks_kfree(p);
		}
	}
	/* Sizes of the 96 and 192 classes, which are not powers of two. */
	for (size_t size = 65; size <= 192; size++) {
		void *p = uks_kmalloc_aligned(size, 32);

		ASSERT_NONNULL(p);
		ASSERT_EQ(0, (uintptr_t)p % 32);
		ASSERT_GE(uks_ksize(p), size);
		uks_kfree(p);
	}
	EXPECT_NULL(uks_kmalloc_aligned(8, 3));
}

TEST(sysfs_geometry_of_kmalloc_caches)
{
	static const struct { const char *name; unsigned long size, objs; } rows[] = {
		{ "kmalloc-8", 8, 512 }, { "kmalloc-64", 64, 64 }, { "kmalloc-96", 96, 42 },
		{ "kmalloc-192", 192, 21 }, { "kmalloc-1k", 1024, 0 }, { "kmalloc-8k", 8192, 4 },
	};

	KERNEL_POLICY_ONLY();

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct uks_kmem_cache *s = uks_kmem_cache_find(rows[i].name);

		ASSERT_NONNULL(s);
		EXPECT_EQ(rows[i].size, attr_ulong(s, "object_size"));
		EXPECT_EQ(rows[i].size, attr_ulong(s, "slab_size"));
		EXPECT_EQ(rows[i].size, attr_ulong(s, "usersize"));	/* whitelisted whole */
		if (rows[i].objs)
			EXPECT_EQ(rows[i].objs, attr_ulong(s, "objs_per_slab"));
	}
}

TEST(sysfs_files_and_writes)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_sysfs", 100, 0,
							 UKS_SLAB_HWCACHE_ALIGN, NULL);
	const char *const *names = uks_kmem_cache_attr_names();
	char buf[512];
	int n = 0;

	ASSERT_NONNULL(s);
	for (; names[n]; n++) {
		ssize_t len = uks_kmem_cache_attr_show(s, names[n], buf, sizeof(buf));

		ASSERT_GE(len, 0);
		if (len)
			ASSERT_EQ('\n', buf[len - 1]);
	}
	EXPECT_EQ(56, n);	/* 30 attributes + 26 stat files */
	EXPECT_EQ(-ENOENT, uks_kmem_cache_attr_show(s, "nope", buf, sizeof(buf)));
	EXPECT_EQ(-ENOSPC, uks_kmem_cache_attr_show(s, "object_size", buf, 2));
	uks_kmem_cache_attr_show(s, "align", buf, sizeof(buf));
	EXPECT_STREQ("64\n", buf);
	uks_kmem_cache_attr_show(s, "hwcache_align", buf, sizeof(buf));
	EXPECT_STREQ("1\n", buf);
	uks_kmem_cache_attr_show(s, "ctor", buf, sizeof(buf));
	EXPECT_STREQ("", buf);
	EXPECT_EQ(0, attr_ulong(s, "usersize"));

	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "min_partial", "7\n", 2));
	EXPECT_EQ(7, attr_ulong(s, "min_partial"));
	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "min_partial", "99", 2));
	EXPECT_EQ(10, attr_ulong(s, "min_partial"));
	EXPECT_EQ(-EINVAL, uks_kmem_cache_attr_store(s, "min_partial", "x", 1));
	EXPECT_EQ(-ERANGE, uks_kmem_cache_attr_store(s, "min_partial",
						     "99999999999999999999999", 23));
	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "cpu_partial", "3", 1));
	EXPECT_EQ(3, attr_ulong(s, "cpu_partial"));
	EXPECT_EQ(-ERANGE, uks_kmem_cache_attr_store(s, "remote_node_defrag_ratio", "101", 3));
	EXPECT_EQ(100, attr_ulong(s, "remote_node_defrag_ratio"));
	EXPECT_EQ(-EINVAL, uks_kmem_cache_attr_store(s, "shrink", "2", 1));
	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "shrink", "1", 1));
	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "validate", "1", 1));
	EXPECT_EQ(-EACCES, uks_kmem_cache_attr_store(s, "order", "1", 1));
	EXPECT_EQ(-ENOENT, uks_kmem_cache_attr_store(s, "nope", "1", 1));
	EXPECT_TRUE(uks_kmem_cache_attr_writable("alloc_fastpath"));
	EXPECT_FALSE(uks_kmem_cache_attr_writable("order"));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(fast_paths_are_not_counted_by_default)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_nostats", 64, 0, 0, NULL);
	const int n = 1000;

	ASSERT_NONNULL(s);
	for (int i = 0; i < n; i++)
		uks_kmem_cache_free(s, uks_kmem_cache_alloc(s));
	/* as without CONFIG_SLUB_STATS, but the slow paths' items still count */
	EXPECT_EQ(0, attr_ulong(s, "alloc_fastpath"));
	EXPECT_EQ(0, attr_ulong(s, "free_fastpath"));
	EXPECT_GE(attr_ulong(s, "alloc_slowpath"), 1);
	EXPECT_EQ(1, attr_ulong(s, "alloc_slab"));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(stats_count_the_fast_path)
{
	struct uks_kmem_cache *s;
	char buf[256];
	const int n = 1000;

	__uks_slub_count_fast_paths(true);	/* UKS_SLUB_STATS=1 */
	s = uks_kmem_cache_create("t_stats", 64, 0, 0, NULL);
	ASSERT_NONNULL(s);
	for (int i = 0; i < n; i++)
		uks_kmem_cache_free(s, uks_kmem_cache_alloc(s));
	/* One slow path installs the CPU slab; the rest are fast (one thread). */
	EXPECT_GE(attr_ulong(s, "alloc_slowpath"), 1);
	EXPECT_EQ(n, attr_ulong(s, "alloc_fastpath") + attr_ulong(s, "alloc_slowpath"));
	EXPECT_GE(attr_ulong(s, "alloc_fastpath"), n - 20);
	EXPECT_GE(attr_ulong(s, "free_fastpath"), n - 20);
	EXPECT_EQ(1, attr_ulong(s, "alloc_slab"));
	uks_kmem_cache_attr_show(s, "alloc_slab", buf, sizeof(buf));
	EXPECT_EQ(0, strncmp(buf, "1 C", 3));	/* per-CPU breakdown */
	EXPECT_EQ(-EINVAL, uks_kmem_cache_attr_store(s, "alloc_fastpath", "1", 1));
	EXPECT_EQ(0, uks_kmem_cache_attr_store(s, "alloc_fastpath", "0", 1));
	EXPECT_EQ(0, attr_ulong(s, "alloc_fastpath"));
	uks_kmem_cache_attr_show(s, "cpu_slabs", buf, sizeof(buf));
	EXPECT_STREQ("1 N0=1\n", buf);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(sheaves_reuse_freed_objects_and_flush)
{
	struct uks_kmem_cache *s;
	void *p[300];

	__uks_slub_count_fast_paths(true);
	s = uks_kmem_cache_create("t_sheaves", 200, 0, UKS_SLAB_SHEAVES, NULL);
	ASSERT_NONNULL(s);
	if (strcmp(uks_slab_fastpath(), "rseq"))
		SKIP(goto out, "sheaves need the rseq fast path (%s here)", uks_slab_fastpath());
	for (int i = 0; i < 300; i++) {
		p[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(p[i]);
		memset(p[i], i, 200);
	}
	/* Last in, first out, as on the CPU freelist. */
	uks_kmem_cache_free(s, p[7]);
	p[7] = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p[9]);
	EXPECT_EQ(p[9], uks_kmem_cache_alloc(s));
	/* More frees than a sheaf holds: the overflow goes back to the slabs. */
	for (int i = 0; i < 300; i++)
		uks_kmem_cache_free(s, p[i]);
	EXPECT_GE(attr_ulong(s, "free_fastpath"), 300u);
	/* Shrinking flushes the sheaves too: no slab may stay. */
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));
	EXPECT_EQ(0u, attr_ulong(s, "slabs"));
	EXPECT_EQ(0, uks_kmem_cache_validate(s));
out:
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(destroy_refuses_a_cache_in_use)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_busy", 32, 0, 0, NULL);
	int logged = 0;
	void *p;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	uks_set_log_fn(quiet, &logged);
	EXPECT_EQ(-EBUSY, uks_kmem_cache_destroy(s));
	EXPECT_GT(logged, 2);
	/* Still usable, and destroyable once empty. */
	uks_kmem_cache_free(s, uks_kmem_cache_alloc(s));
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(foreign_pointers_are_reported_not_followed)
{
	int logged = 0, local;
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_foreign", 32, 0, 0, NULL);
	struct uks_kmem_cache *other = uks_kmem_cache_create("t_other", 32, 0, 0, NULL);
	void *p = uks_kmem_cache_alloc(other);

	uks_set_log_fn(quiet, &logged);
	uks_kfree(&local);
	uks_kmem_cache_free(s, &local);
	EXPECT_EQ(2, logged);
	uks_kmem_cache_free(s, p);	/* wrong cache: warned, freed to the right one */
	EXPECT_GT(logged, 2);
	EXPECT_EQ(0, uks_kmem_cache_destroy(other));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_HARNESS_MAIN
