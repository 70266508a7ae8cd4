// SPDX-License-Identifier: MIT
/*
 * Huge pages for the heap: every 2 MiB chunk of the page allocator after
 * the first is advised MADV_HUGEPAGE (the "hg" of its VmFlags in smaps),
 * the first is not, and UKS_SLUB_THP=0 leaves them all alone.  Each test
 * runs in a fresh child of the harness, so its first allocation maps the
 * process's first chunk.  Whether the kernel then backs a chunk with a
 * huge page depends on its THP mode and free memory, so only the advice
 * is checked.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include <uks/slab.h>

enum { BLOCK = 256 << 10, CHUNK_SHIFT = 21, MAX_BLOCKS = 64 };

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
 * Allocate kmalloc_large() blocks until one lies in a chunk other than
 * the first block's.  Return: how many (the last is the other chunk's),
 * 0 if none did.
 */
static int blocks_over_two_chunks(char **blocks)
{
	for (int i = 0; i < MAX_BLOCKS; i++) {
		blocks[i] = uks_kmalloc(BLOCK);
		if (!blocks[i])
			return 0;
		memset(blocks[i], 0x5a, BLOCK);
		if ((uintptr_t)blocks[i] >> CHUNK_SHIFT != (uintptr_t)blocks[0] >> CHUNK_SHIFT)
			return i + 1;
	}
	return 0;
}

TEST(chunks_after_the_first_are_advised_huge)
{
	char *blocks[MAX_BLOCKS];
	int n = blocks_over_two_chunks(blocks);

	ASSERT_GT(n, 1);
	EXPECT_EQ(0, advised_huge(blocks[0]));	/* the first chunk */
	EXPECT_EQ(1, advised_huge(blocks[n - 1]));
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
}

TEST(uks_slub_thp_0_advises_nothing)
{
	char *blocks[MAX_BLOCKS];
	int n;

	setenv("UKS_SLUB_THP", "0", 1);	/* read when the allocator starts */
	n = blocks_over_two_chunks(blocks);
	ASSERT_GT(n, 1);
	EXPECT_EQ(0, advised_huge(blocks[0]));
	EXPECT_EQ(0, advised_huge(blocks[n - 1]));
	for (int i = 0; i < n; i++)
		uks_kfree(blocks[i]);
}

TEST_HARNESS_MAIN
