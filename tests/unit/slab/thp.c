// SPDX-License-Identifier: MIT
/*
 * Huge pages for the heap: the page allocator's 2 MiB chunks past the
 * first two (4 MiB of heap) are advised MADV_HUGEPAGE (the "hg" of their
 * VmFlags in smaps); the first two are not, until a third is mapped: then
 * each of them with few pages that are free and not resident is advised
 * and collapsed into a huge page (MADV_COLLAPSE).  UKS_SLUB_THP=0 leaves
 * them all alone.  Each test runs in a fresh child of the harness, so its
 * first allocation maps the process's first chunk.  Whether the kernel
 * backs an advised chunk with a huge page at its first touch depends on
 * its THP mode and free memory, so there only the advice is checked; a
 * collapse either makes the huge page or fails.  Also checked: what the
 * purge does to the free blocks of an advised chunk: they stay resident
 * (a partial MADV_DONTNEED would split its huge page) until the heap has
 * shrunk.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include <uks/slab.h>

enum {
	BLOCK = 256 << 10,
	CHUNK_SHIFT = 21,
	PER_CHUNK = (1 << CHUNK_SHIFT) / BLOCK,
	SMALL_CHUNKS = 2,	/* lib/slab/page_zone.h's SMALL_PAGE_CHUNKS */
	MAX_BLOCKS = 64,
};

/*
 * Call @fn on every line of /proc/self/smaps after a mapping's first, with
 * that mapping's range, until it returns false.
 * Return: 0, or -1 if smaps cannot be read.
 */
static int walk_smaps(bool (*fn)(uintptr_t start, uintptr_t end, const char *line, void *arg),
		      void *arg)
{
	unsigned long start = 0, end = 0, s, e;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ')) {
			start = s;
			end = e;
		} else if (!fn(start, end, line, arg)) {
			break;
		}
	}
	fclose(f);
	return 0;
}

struct advice {
	uintptr_t addr;
	int huge;	/* 1 yes, 0 no, -1 no such mapping */
};

static bool advice_of(uintptr_t start, uintptr_t end, const char *line, void *arg)
{
	struct advice *a = arg;

	if (a->addr < start || a->addr >= end || strncmp(line, "VmFlags:", 8))
		return true;
	a->huge = strstr(line, " hg") != NULL;
	return false;
}

/*
 * Does the mapping holding @addr carry MADV_HUGEPAGE?
 * Return: 1 yes, 0 no, -1 if smaps has no such mapping.
 */
static int advised_huge(const void *addr)
{
	struct advice a = { (uintptr_t)addr, -1 };

	walk_smaps(advice_of, &a);
	return a.huge;
}

/*
 * Allocate kmalloc_large() blocks of @size (nothing is freed, so each
 * chunk fills before the next is mapped) until one lies in the @upto-th
 * chunk; first[i] is the first block seen in chunk i, *chunks how many
 * chunks have been seen.  Return: true when there.
 */
static bool blocks_into_chunk(char **blocks, int *nr, char **first, int *chunks, size_t size,
			      int upto)
{
	while (*nr < MAX_BLOCKS) {
		char *p = uks_kmalloc(size);
		bool seen = false;

		if (!p)
			return false;
		memset(p, 0x5a, size);
		blocks[(*nr)++] = p;
		for (int i = 0; i < *chunks; i++)
			seen |= (uintptr_t)first[i] >> CHUNK_SHIFT == (uintptr_t)p >> CHUNK_SHIFT;
		if (!seen) {
			first[(*chunks)++] = p;
			if (*chunks == upto)
				return true;
		}
	}
	return false;
}

static bool blocks_into_a_later_chunk(char **blocks, int *nr, char **first)
{
	int chunks = 0;

	*nr = 0;
	return blocks_into_chunk(blocks, nr, first, &chunks, BLOCK, SMALL_CHUNKS + 1);
}

struct huge_sum {
	char *const *first;
	int nr;
	long kib;
};

static bool add_huge_kib(uintptr_t start, uintptr_t end, const char *line, void *arg)
{
	struct huge_sum *sum = arg;
	long kib;

	if (sscanf(line, "AnonHugePages: %ld kB", &kib) != 1)
		return true;
	for (int i = 0; i < sum->nr; i++) {
		uintptr_t c = (uintptr_t)sum->first[i] >> CHUNK_SHIFT << CHUNK_SHIFT;

		if (c < end && c + (1UL << CHUNK_SHIFT) > start) {
			sum->kib += kib;
			break;
		}
	}
	return true;
}

/*
 * Sum of AnonHugePages over the mappings that overlap the chunks holding
 * first[0..nr-1], in KiB; the mappings of adjacent chunks may be merged.
 */
static long huge_kib_of_chunks(char *const *first, int nr)
{
	struct huge_sum sum = { first, nr, 0 };

	return walk_smaps(add_huge_kib, &sum) ? -1 : sum.kib;
}

/* Can this kernel collapse memory into huge pages on request (Linux 6.1)? */
static bool collapse_supported(void)
{
	size_t huge = 1UL << CHUNK_SHIFT;
	char *map = mmap(NULL, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p = (char *)(((uintptr_t)map + huge - 1) & ~(huge - 1));
	bool ok;

	if (map == MAP_FAILED)
		return false;
	memset(p, 1, huge);
	ok = madvise(p, huge, 25 /* MADV_COLLAPSE */) == 0 || errno != EINVAL;
	munmap(map, 2 * huge);
	return ok;
}

/* Resident bytes of [p, p + len). */
static long resident_bytes(const void *p, size_t len)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec[(2 << 20) / 4096];
	long n = 0;

	if (len / page > sizeof(vec) || mincore((void *)p, len, vec))
		return -1;
	for (size_t i = 0; i < len / page; i++)
		n += vec[i] & 1;
	return n * (long)page;
}

static bool thp_mode_never(void)
{
	char mode[64] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (f) {
		if (!fgets(mode, sizeof(mode), f))
			mode[0] = 0;
		fclose(f);
	}
	return !f || strstr(mode, "[never]");
}

static int chunk_of(const char *p, char *const *first, int nr)
{
	for (int i = 0; i < nr; i++)
		if ((uintptr_t)first[i] >> CHUNK_SHIFT == (uintptr_t)p >> CHUNK_SHIFT)
			return i;
	return -1;
}

TEST(the_small_chunks_turn_huge_when_the_next_is_mapped)
{
	enum { FREED = 4 };	/* 1 MiB: past the reserve, under half the heap */
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1], *spared[FREED], *extra;
	int n = 0, chunks = 0;

	ASSERT_TRUE(blocks_into_chunk(blocks, &n, first, &chunks, BLOCK, SMALL_CHUNKS));
	for (int i = 0; i < SMALL_CHUNKS; i++)
		EXPECT_EQ(0, advised_huge(first[i]));
	ASSERT_TRUE(blocks_into_chunk(blocks, &n, first, &chunks, BLOCK, SMALL_CHUNKS + 1));
	EXPECT_EQ(1, advised_huge(first[SMALL_CHUNKS]));
	if (thp_mode_never() || !collapse_supported()) {
		for (int i = 0; i < SMALL_CHUNKS; i++)
			EXPECT_EQ(0, advised_huge(first[i]));
		SKIP(goto out, "no THP or no MADV_COLLAPSE: the first chunks stay small");
	}
	/* Full of blocks written: nothing a collapse would add to the RSS. */
	for (int i = 0; i < SMALL_CHUNKS; i++)
		EXPECT_EQ(1, advised_huge(first[i]));
	EXPECT_GE(huge_kib_of_chunks(first, SMALL_CHUNKS), SMALL_CHUNKS * 2048L);

	/* Their free blocks are now spared by the purge as an advised chunk's. */
	extra = uks_kmalloc(BLOCK);
	ASSERT_NONNULL(extra);
	for (int i = 0, freed = 0; i < n && freed < FREED; i++) {
		if (chunk_of(blocks[i], first, 2) != 1)
			continue;
		spared[freed++] = blocks[i];
		uks_kfree(blocks[i]);
		blocks[i] = NULL;
	}
	usleep(30000);				/* older than the purge delay */
	uks_kfree(extra);			/* a page-level call purges */
	for (int i = 0; i < FREED; i++)
		EXPECT_EQ(BLOCK, resident_bytes(spared[i], BLOCK));
out:
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
}

TEST(uks_slub_thp_0_advises_nothing)
{
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1];
	int n;

	setenv("UKS_SLUB_THP", "0", 1);	/* read when the allocator starts */
	ASSERT_TRUE(blocks_into_a_later_chunk(blocks, &n, first));
	for (int i = 0; i <= SMALL_CHUNKS; i++)
		EXPECT_EQ(0, advised_huge(first[i]));
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
}

/*
 * The small chunks, the first with half its pages free and handed back
 * (every other block, so that none merge), then the next chunk, reached with
 * blocks too big for those holes.  holes[] gets the freed blocks, kept[]
 * the first chunk's others.  Return: true when there.
 */
static bool next_chunk_over_a_sparse_first(char **blocks, int *nr, char **first, char **holes,
					      char **kept)
{
	int nr_holes = 0, nr_kept = 0, chunks = 0;

	*nr = 0;
	if (!blocks_into_chunk(blocks, nr, first, &chunks, BLOCK, SMALL_CHUNKS))
		return false;
	for (int i = 1; i < PER_CHUNK; i++) {	/* fill the last small one */
		blocks[*nr] = uks_kmalloc(BLOCK);
		if (!blocks[*nr] || chunk_of(blocks[*nr], first, SMALL_CHUNKS) != SMALL_CHUNKS - 1)
			return false;
		memset(blocks[(*nr)++], 0x5a, BLOCK);
	}
	for (int i = 0; i < *nr; i++) {
		if (chunk_of(blocks[i], first, 1) != 0)
			continue;
		if (((uintptr_t)blocks[i] / BLOCK) % 2 == 0 && nr_holes < PER_CHUNK / 2) {
			holes[nr_holes++] = blocks[i];
			uks_kfree(blocks[i]);
			blocks[i] = NULL;
		} else if (nr_kept < PER_CHUNK / 2) {
			kept[nr_kept++] = blocks[i];
		}
	}
	if (nr_holes != PER_CHUNK / 2 || nr_kept != PER_CHUNK / 2)
		return false;
	uks_slab_trim(0);
	return blocks_into_chunk(blocks, nr, first, &chunks, 2 * BLOCK, SMALL_CHUNKS + 1);
}

TEST(a_first_chunk_mostly_free_and_not_resident_stays_small)
{
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1], *holes[PER_CHUNK / 2], *kept[PER_CHUNK / 2];
	int n;

	if (thp_mode_never() || !collapse_supported())
		SKIP(return, "no THP or no MADV_COLLAPSE: nothing is collapsed");
	ASSERT_TRUE(next_chunk_over_a_sparse_first(blocks, &n, first, holes, kept));
	EXPECT_EQ(0, advised_huge(first[0]));
	for (int i = 0; i < PER_CHUNK / 2; i++)
		EXPECT_EQ(0, resident_bytes(holes[i], BLOCK));
	for (int i = 1; i <= SMALL_CHUNKS; i++)
		EXPECT_EQ(1, advised_huge(first[i]));
	EXPECT_GE(huge_kib_of_chunks(first + 1, SMALL_CHUNKS - 1), (SMALL_CHUNKS - 1) * 2048L);
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
}

TEST(an_advised_chunk_keeps_its_free_blocks_until_the_heap_shrinks)
{
	enum { FREED = 2 };
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1], *holes[PER_CHUNK / 2], *kept[PER_CHUNK / 2];
	char *thp[FREED], *huge_base;
	int n, nr_thp = 0;

	if (thp_mode_never())
		SKIP(return, "the kernel's THP mode is never (or THP is not built): nothing is advised");
	/* The first chunk stays small (with or without MADV_COLLAPSE). */
	ASSERT_TRUE(next_chunk_over_a_sparse_first(blocks, &n, first, holes, kept));
	while (n < MAX_BLOCKS && chunk_of(blocks[n - 1], first, SMALL_CHUNKS + 1) == SMALL_CHUNKS) {
		blocks[n] = uks_kmalloc(2 * BLOCK);	/* fill the advised chunk */
		ASSERT_NONNULL(blocks[n]);
		memset(blocks[n++], 0x5a, 2 * BLOCK);
	}
	huge_base = (char *)((uintptr_t)first[SMALL_CHUNKS] >> CHUNK_SHIFT << CHUNK_SHIFT);

	/* 2 MiB free and resident: past the reserve, under half the heap in use */
	for (int i = 0; i < n; i++) {
		if (!blocks[i])
			continue;
		if (chunk_of(blocks[i], first, 1) == 0) {
			uks_kfree(blocks[i]);
		} else if (chunk_of(blocks[i], first, SMALL_CHUNKS + 1) == SMALL_CHUNKS &&
			   nr_thp < FREED) {
			thp[nr_thp++] = blocks[i];
			uks_kfree(blocks[i]);
		} else {
			continue;
		}
		blocks[i] = NULL;
	}
	ASSERT_EQ(FREED, nr_thp);
	usleep(30000);				/* older than the purge delay */
	uks_kfree(uks_kmalloc(BLOCK));		/* a page-level call purges */
	for (int i = 0; i < PER_CHUNK / 2; i++)
		EXPECT_EQ(0, resident_bytes(kept[i], BLOCK));
	for (int i = 0; i < FREED; i++)
		EXPECT_EQ(2 * BLOCK, resident_bytes(thp[i], 2 * BLOCK));

	/* The heap shrinks: now the advised chunk goes back too. */
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
	usleep(30000);
	uks_kfree(uks_kmalloc(BLOCK));
	EXPECT_LE(resident_bytes(huge_base, 1 << CHUNK_SHIFT), (1 << CHUNK_SHIFT) / 2);
}

TEST_HARNESS_MAIN
