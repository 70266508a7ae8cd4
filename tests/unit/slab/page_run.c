// SPDX-License-Identifier: MIT
/*
 * Page runs (lib/slab/page_alloc.c): a run keeps only the pages it asks
 * for and gives the rest of its buddy block back, merges whole again when
 * freed, and grows or shrinks where it is.  The preload malloc's blocks
 * above kmalloc-8k are such runs.  Each test runs in a process of its
 * own (the harness forks), so the heap is its alone.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "slab/page_alloc.h"
#include "slab/slub.h"

static struct uks_page *desc(struct uks_page *head, unsigned long i)
{
	return head + i;
}

static bool is_free_block(struct uks_page *head, unsigned long i, unsigned int order)
{
	return desc(head, i)->kind == PAGE_BUDDY && desc(head, i)->order == order;
}

static bool is_tail_of(struct uks_page *head, unsigned long i)
{
	return desc(head, i)->kind == PAGE_TAIL && desc(head, i)->head == head;
}

TEST(a_run_gives_back_the_pages_of_its_block_it_does_not_use)
{
	struct uks_page *run;

	__uks_slab_init();
	run = __uks_alloc_page_run(3, 5);
	ASSERT_NONNULL(run);
	EXPECT_EQ(0, ((uintptr_t)run->addr >> __uks_page_shift) % 8);
	for (unsigned long i = 1; i < 5; i++)
		EXPECT_TRUE(is_tail_of(run, i));
	/* pages 5 and 6-7: the blocks of the tail */
	EXPECT_TRUE(is_free_block(run, 5, 0));
	EXPECT_TRUE(is_free_block(run, 6, 1));
	EXPECT_EQ(PAGE_UNUSED, desc(run, 7)->kind);
	memset(run->addr, 0xa5, 5UL << __uks_page_shift);

	/* freed, it merges with them into one block (or a bigger one) */
	__uks_free_page_run(run, 5);
	for (unsigned long i = 1; i < 8; i++)
		EXPECT_EQ(PAGE_UNUSED, desc(run, i)->kind);
	EXPECT_TRUE(desc(run, 0)->kind == PAGE_UNUSED ||
		    (desc(run, 0)->kind == PAGE_BUDDY && desc(run, 0)->order >= 3));
}

TEST(invalid_runs_are_refused)
{
	__uks_slab_init();
	EXPECT_NULL(__uks_alloc_page_run(2, 0));
	EXPECT_NULL(__uks_alloc_page_run(2, 5));
	EXPECT_NULL(__uks_alloc_page_run(__uks_max_page_order() + 1, 1));
}

TEST(a_run_grows_into_the_free_pages_after_it_and_shrinks_in_place)
{
	struct uks_page *run;
	unsigned long ps;

	__uks_slab_init();
	ps = __uks_page_size;
	run = __uks_alloc_page_run(2, 3);
	ASSERT_NONNULL(run);
	memset(run->addr, 0x11, 3 * ps);

	/* into its own tail, then into its buddy block [4, 8) */
	ASSERT_EQ(0, __uks_resize_page_run(run, 3, 4));
	EXPECT_TRUE(is_tail_of(run, 3));
	ASSERT_EQ(0, __uks_resize_page_run(run, 4, 6));
	for (unsigned long i = 1; i < 6; i++)
		EXPECT_TRUE(is_tail_of(run, i));
	EXPECT_TRUE(is_free_block(run, 6, 1));	/* the rest of [4, 8) */
	memset(run->addr + 3 * ps, 0x22, 3 * ps);
	EXPECT_EQ(0x11, (unsigned char)run->addr[3 * ps - 1]);

	/* a shrink frees the pages past the new end, and they merge */
	ASSERT_EQ(0, __uks_resize_page_run(run, 6, 2));
	EXPECT_TRUE(is_tail_of(run, 1));
	EXPECT_TRUE(is_free_block(run, 2, 1));
	EXPECT_TRUE(is_free_block(run, 4, 2));
	EXPECT_EQ(0x11, (unsigned char)run->addr[2 * ps - 1]);
	__uks_free_page_run(run, 2);
}

TEST(a_run_does_not_grow_over_pages_in_use_or_past_its_chunk)
{
	unsigned int order;
	unsigned long n;
	struct uks_page *whole, *next;

	__uks_slab_init();
	order = __uks_max_page_order();
	n = 1UL << order;
	whole = __uks_alloc_page_run(order, n);	/* a whole chunk */
	ASSERT_NONNULL(whole);
	EXPECT_EQ(-ENOMEM, __uks_resize_page_run(whole, n, n + 1));

	/*
	 * Its upper half given back is the newest free block of its order,
	 * so the next such allocation takes it: the pages after the run are
	 * then in use, and the run cannot grow over them.
	 */
	ASSERT_EQ(0, __uks_resize_page_run(whole, n, n / 2));
	next = __uks_alloc_page_run(order - 1, n / 2);
	ASSERT_NONNULL(next);
	ASSERT_EQ(whole->addr + (n / 2) * __uks_page_size, next->addr);
	EXPECT_EQ(-ENOMEM, __uks_resize_page_run(whole, n / 2, n / 2 + 1));
	EXPECT_TRUE(is_tail_of(whole, n / 2 - 1));

	/* freed, the two halves are one free chunk again */
	__uks_free_page_run(next, n / 2);
	__uks_free_page_run(whole, n / 2);
	EXPECT_TRUE(is_free_block(whole, 0, order));
}

TEST_HARNESS_MAIN
