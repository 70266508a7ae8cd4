// SPDX-License-Identifier: MIT
/*
 * The addresses of a taken huge page that mremap() cut (lib/damon/self/
 * self_pieces.c): which page is where after one or more moves, the
 * entry's extent, and the limit of SELF_MAX_PIECES pieces.
 */
#include <errno.h>
#include <string.h>

#include "harness.h"
#include "damon/self/self.h"

#define BASE	0x40000000UL	/* a 2 MiB aligned huge page */

static struct self_entry huge_entry(void)
{
	struct self_entry e;

	memset(&e, 0, sizeof(e));
	e.page = BASE;
	e.len = HPG;
	return e;
}

TEST(uncut_entry_is_one_piece)
{
	struct self_entry e = huge_entry();
	unsigned long a = 0;

	EXPECT_EQ(BASE + 7 * PG, __uks_damon_self_page_addr(&e, 7));
	EXPECT_EQ(7, __uks_damon_self_page_index(&e, BASE + 7 * PG + 5));
	EXPECT_EQ(-1, __uks_damon_self_page_index(&e, BASE + HPG));
	EXPECT_EQ(HPG, __uks_damon_self_piece_range(&e, 0, &a));
	EXPECT_EQ(BASE, a);
	EXPECT_EQ(0, __uks_damon_self_piece_range(&e, 1, &a));
	EXPECT_TRUE(__uks_damon_self_meets(&e, BASE + HPG - 1, BASE + HPG + PG));
	EXPECT_FALSE(__uks_damon_self_meets(&e, BASE + HPG, BASE + 2 * HPG));
}

TEST(a_cut_in_the_middle_makes_three_pieces)
{
	struct self_entry e = huge_entry();
	const unsigned long to = 0x7000000000UL;
	unsigned long a = 0;

	/* pages 128..383 move to `to` */
	ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE + 128 * PG, to, 256 * PG));
	ASSERT_EQ(3, e.nr_pieces);
	EXPECT_EQ(BASE + 127 * PG, __uks_damon_self_page_addr(&e, 127));
	EXPECT_EQ(to, __uks_damon_self_page_addr(&e, 128));
	EXPECT_EQ(to + 255 * PG, __uks_damon_self_page_addr(&e, 383));
	EXPECT_EQ(BASE + 384 * PG, __uks_damon_self_page_addr(&e, 384));
	EXPECT_EQ(200, __uks_damon_self_page_index(&e, to + 72 * PG));
	EXPECT_EQ(-1, __uks_damon_self_page_index(&e, BASE + 200 * PG));	/* moved away */
	EXPECT_FALSE(__uks_damon_self_meets(&e, BASE + 128 * PG, BASE + 384 * PG));
	EXPECT_TRUE(__uks_damon_self_meets(&e, to + 255 * PG, to + 256 * PG));
	EXPECT_EQ(256 * PG, __uks_damon_self_piece_range(&e, 1, &a));
	EXPECT_EQ(to, a);

	/* the moved part goes back: one piece again, at the old base */
	ASSERT_EQ(0, __uks_damon_self_remap(&e, to, BASE + 128 * PG, 256 * PG));
	EXPECT_EQ(0, e.nr_pieces);
	EXPECT_EQ(BASE, e.page);
}

TEST(a_move_of_all_of_it_moves_the_base)
{
	struct self_entry e = huge_entry();

	/* a larger range around the whole page */
	ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE - HPG, 0x9000000000UL, 3 * HPG));
	EXPECT_EQ(0, e.nr_pieces);
	EXPECT_EQ(0x9000000000UL + HPG, e.page);
	/* a 4 KiB entry moves whole too */
	e.page = BASE;
	e.len = PG;
	ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE, BASE + HPG, PG));
	EXPECT_EQ(BASE + HPG, e.page);
	/* a range elsewhere changes nothing */
	ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE, BASE + 4 * HPG, PG));
	EXPECT_EQ(BASE + HPG, e.page);
}

TEST(cuts_of_pieces_and_the_limit)
{
	struct self_entry e = huge_entry(), before;
	unsigned long to = 0x7000000000UL;
	int i;

	/* pages 16..31, 48..63, 80..95 and the last 16 move, each elsewhere */
	for (i = 0; i < 3; i++)
		ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE + (unsigned long)(32 * i + 16) * PG,
						    to + (unsigned long)i * HPG, 16 * PG));
	ASSERT_EQ(0, __uks_damon_self_remap(&e, BASE + 496 * PG, to + 3 * HPG, 16 * PG));
	EXPECT_EQ(8, e.nr_pieces);
	for (i = 0; i < 3; i++) {
		EXPECT_EQ(BASE + (unsigned long)(32 * i) * PG,
			  __uks_damon_self_page_addr(&e, (unsigned long)(32 * i)));
		EXPECT_EQ(to + (unsigned long)i * HPG + 3 * PG,
			  __uks_damon_self_page_addr(&e, (unsigned long)(32 * i + 19)));
	}
	EXPECT_EQ(to + 3 * HPG + 15 * PG, __uks_damon_self_page_addr(&e, 511));
	/* a ninth piece does not fit: refused, the entry unchanged */
	before = e;
	EXPECT_EQ(-ENOSPC, __uks_damon_self_remap(&e, BASE + 200 * PG, to + 8 * HPG, PG));
	EXPECT_EQ(0, memcmp(&before, &e, sizeof(e)));
	/* a move of one whole piece still fits */
	EXPECT_EQ(0, __uks_damon_self_remap(&e, to, to + 16 * HPG, 16 * PG));
	EXPECT_EQ(to + 16 * HPG + 5 * PG, __uks_damon_self_page_addr(&e, 21));
	EXPECT_EQ(8, e.nr_pieces);
}

TEST_HARNESS_MAIN
