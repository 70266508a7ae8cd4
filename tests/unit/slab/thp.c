// SPDX-License-Identifier: MIT
/*
 * Huge pages for the heap: the page allocator's 2 MiB chunks past the
 * first four (8 MiB of heap) are advised MADV_HUGEPAGE (the "hg" of their
 * VmFlags in smaps), the first four are not, and UKS_SLUB_THP=0 leaves
 * them all alone.  Each test runs in a fresh child of the harness, so its
 * first allocation maps the process's first chunk.  Whether the kernel
 * then backs a chunk with a huge page depends on its THP mode and free
 * memory, so only the advice is checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

TEST_HARNESS_MAIN
