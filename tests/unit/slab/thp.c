// SPDX-License-Identifier: MIT
/*
 * Huge pages for the heap: the page allocator's 2 MiB chunks past the
 * first four (8 MiB of heap) are advised MADV_HUGEPAGE (the "hg" of their
 * VmFlags in smaps), the first four are not, and UKS_SLUB_THP=0 leaves
 * them all alone.  Each test runs in a fresh child of the harness, so its
 * first allocation maps the process's first chunk.  Whether the kernel
 * then backs a chunk with a huge page depends on its THP mode and free
 * memory, so only the advice is checked, and what the purge does to the
 * free blocks of an advised chunk: they stay resident (a partial
 * MADV_DONTNEED would split its huge page) until the heap has shrunk.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include <uks/slab.h>

enum { BLOCK = 256 << 10, CHUNK_SHIFT = 21, SMALL_CHUNKS = 4, MAX_BLOCKS = 64 };

/*
 * Does the mapping holding @addr carry MADV_HUGEPAGE?
 * Return: 1 yes, 0 no, -1 if smaps has no such mapping.
 */
static int advised_huge(const void *addr)
{
	uintptr_t a = (uintptr_t)addr;
	char line[512];
	bool inside = false;
	int ret = -1;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long start, end;

		if (sscanf(line, "%lx-%lx ", &start, &end) == 2 && strchr(line, ' ')) {
			inside = a >= start && a < end;
		} else if (inside && !strncmp(line, "VmFlags:", 8)) {
			ret = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return ret;
}

/*
 * Allocate kmalloc_large() blocks (nothing is freed, so each chunk fills
 * before the next is mapped) until one lies in the (SMALL_CHUNKS + 1)th
 * chunk; first[i] is the first block seen in chunk i.
 * Return: true when there.
 */
static bool blocks_into_a_later_chunk(char **blocks, int *nr, char **first)
{
	int chunks = 0;

	for (*nr = 0; *nr < MAX_BLOCKS;) {
		char *p = uks_kmalloc(BLOCK);
		bool seen = false;

		if (!p)
			return false;
		memset(p, 0x5a, BLOCK);
		blocks[(*nr)++] = p;
		for (int i = 0; i < chunks; i++)
			seen |= (uintptr_t)first[i] >> CHUNK_SHIFT == (uintptr_t)p >> CHUNK_SHIFT;
		if (!seen) {
			first[chunks++] = p;
			if (chunks == SMALL_CHUNKS + 1)
				return true;
		}
	}
	return false;
}

TEST(chunks_past_the_first_four_are_advised_huge)
{
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1];
	int n;

	ASSERT_TRUE(blocks_into_a_later_chunk(blocks, &n, first));
	for (int i = 0; i < SMALL_CHUNKS; i++)
		EXPECT_EQ(0, advised_huge(first[i]));
	EXPECT_EQ(1, advised_huge(first[SMALL_CHUNKS]));
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

TEST(an_advised_chunk_keeps_its_free_blocks_until_the_heap_shrinks)
{
	enum { FREED = 6, PER_CHUNK = (1 << CHUNK_SHIFT) / BLOCK };
	char *blocks[MAX_BLOCKS], *first[SMALL_CHUNKS + 1], *small[FREED], *thp[FREED];
	int n, nr_small = 0, nr_thp = 0;
	char *huge_base;

	if (thp_mode_never())
		SKIP(return, "the kernel's THP mode is never (or THP is not built): nothing is advised");
	ASSERT_TRUE(blocks_into_a_later_chunk(blocks, &n, first));
	while (n < MAX_BLOCKS && n < SMALL_CHUNKS * PER_CHUNK + PER_CHUNK) {
		blocks[n] = uks_kmalloc(BLOCK);	/* fill the advised chunk */
		ASSERT_NONNULL(blocks[n]);
		memset(blocks[n++], 0x5a, BLOCK);
	}
	huge_base = (char *)((uintptr_t)first[SMALL_CHUNKS] >> CHUNK_SHIFT << CHUNK_SHIFT);

	/* 3 MiB free and resident: past the reserve, under half the heap in use */
	for (int i = 0; i < n; i++) {
		int c = chunk_of(blocks[i], first, SMALL_CHUNKS + 1);

		if (c == 0 && nr_small < FREED)
			small[nr_small++] = blocks[i];
		else if (c == SMALL_CHUNKS && nr_thp < FREED)
			thp[nr_thp++] = blocks[i];
		else
			continue;
		uks_kfree(blocks[i]);
		blocks[i] = NULL;
	}
	ASSERT_EQ(FREED, nr_small);
	ASSERT_EQ(FREED, nr_thp);
	usleep(30000);				/* older than the purge delay */
	uks_kfree(uks_kmalloc(BLOCK));		/* a page-level call purges */
	for (int i = 0; i < FREED; i++) {
		EXPECT_EQ(0, resident_bytes(small[i], BLOCK));
		EXPECT_EQ(BLOCK, resident_bytes(thp[i], BLOCK));
	}

	/* The heap shrinks: now the advised chunk goes back too. */
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
	usleep(30000);
	uks_kfree(uks_kmalloc(BLOCK));
	EXPECT_LE(resident_bytes(huge_base, 1 << CHUNK_SHIFT), (1 << CHUNK_SHIFT) / 2);
}

TEST_HARNESS_MAIN
