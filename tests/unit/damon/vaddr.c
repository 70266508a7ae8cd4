// SPDX-License-Identifier: MIT
/*
 * The KUnit cases of Linux 5.15's mm/damon/vaddr-test.h (suite
 * "damon-primitives"), same inputs and expected values: three regions of
 * a VMA list, the three-region update (1-4) and the even split.
 */
#include "harness.h"
#include "unit/damon/helper.h"

TEST(damon_test_three_regions_in_vmas)
{
	static const struct damon_addr_range vmas[] = {
		{ 10, 20 }, { 20, 25 }, { 200, 210 }, { 210, 220 }, { 300, 305 }, { 307, 330 },
	};
	struct damon_addr_range regions[3] = { { 0, 0 } };

	ASSERT_EQ(0, __uks_damon_three_regions_of(vmas, 6, 1, regions));
	ASSERT_EQ(10UL, regions[0].start);
	ASSERT_EQ(25UL, regions[0].end);
	ASSERT_EQ(200UL, regions[1].start);
	ASSERT_EQ(220UL, regions[1].end);
	ASSERT_EQ(300UL, regions[2].start);
	ASSERT_EQ(330UL, regions[2].end);
}

TEST(three_regions_need_two_gaps)
{
	static const struct damon_addr_range one_gap[] = { { 10, 20 }, { 30, 40 } };
	static const struct damon_addr_range no_gap[] = { { 10, 20 }, { 20, 40 } };
	struct damon_addr_range regions[3];

	ASSERT_EQ(-EINVAL, __uks_damon_three_regions_of(one_gap, 2, 1, regions));
	ASSERT_EQ(-EINVAL, __uks_damon_three_regions_of(no_gap, 2, 1, regions));
	ASSERT_EQ(-EINVAL, __uks_damon_three_regions_of(no_gap, 0, 1, regions));
}

TEST(three_regions_ties_keep_the_earlier_gap)
{
	static const struct damon_addr_range vmas[] = {
		{ 0, 10 }, { 20, 30 }, { 40, 50 }, { 60, 70 },
	};
	struct damon_addr_range regions[3];

	ASSERT_EQ(0, __uks_damon_three_regions_of(vmas, 4, 1, regions));
	ASSERT_EQ(10UL, regions[0].end);
	ASSERT_EQ(20UL, regions[1].start);
	ASSERT_EQ(30UL, regions[1].end);
	ASSERT_EQ(40UL, regions[2].start);
	ASSERT_EQ(70UL, regions[2].end);
}

/* 5.15's damon_do_test_apply_three_regions */
static void do_apply(struct th_result *_th_r, const unsigned long *regions, int nr_regions,
		     const struct damon_addr_range *three, const unsigned long *expected,
		     int nr_expected)
{
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r;
	int i;

	for (i = 0; i < nr_regions / 2; i++)
		__uks_damon_add_region(__uks_damon_new_region(regions[i * 2], regions[i * 2 + 1]),
				       t);
	__uks_damon_apply_three_regions(ctx, t, three);
	ASSERT_EQ((unsigned int)(nr_expected / 2), t->nr_regions);
	for (i = 0; i < nr_expected / 2; i++) {
		r = nth_region(t, (unsigned int)i);
		ASSERT_EQ(expected[i * 2], r->ar.start);
		ASSERT_EQ(expected[i * 2 + 1], r->ar.end);
	}
	__uks_damon_destroy_target(t);
	uks_damon_ctx_destroy(ctx);
}

static const unsigned long apply_regions[] = {
	10, 20, 20, 30, 50, 55, 55, 57, 57, 59, 70, 80, 80, 90, 90, 100,
};

TEST(damon_test_apply_three_regions1)
{
	static const struct damon_addr_range three[] = { { 5, 27 }, { 45, 55 }, { 73, 104 } };
	static const unsigned long expected[] = {
		5, 20, 20, 27, 45, 55, 73, 80, 80, 90, 90, 104,
	};

	do_apply(_th_r, apply_regions, 16, three, expected, 12);
}

TEST(damon_test_apply_three_regions2)
{
	static const struct damon_addr_range three[] = { { 5, 27 }, { 56, 57 }, { 65, 104 } };
	static const unsigned long expected[] = {
		5, 20, 20, 27, 56, 57, 65, 80, 80, 90, 90, 104,
	};

	do_apply(_th_r, apply_regions, 16, three, expected, 12);
}

TEST(damon_test_apply_three_regions3)
{
	static const struct damon_addr_range three[] = { { 5, 27 }, { 61, 63 }, { 65, 104 } };
	static const unsigned long expected[] = {
		5, 20, 20, 27, 61, 63, 65, 80, 80, 90, 90, 104,
	};

	do_apply(_th_r, apply_regions, 16, three, expected, 12);
}

TEST(damon_test_apply_three_regions4)
{
	static const struct damon_addr_range three[] = { { 5, 7 }, { 30, 32 }, { 65, 68 } };
	static const unsigned long expected[] = { 5, 7, 30, 32, 65, 68 };

	do_apply(_th_r, apply_regions, 16, three, expected, 6);
}

/* 5.15's damon_test_split_evenly_fail / _succ */
static void split_evenly_fail(struct th_result *_th_r, struct uks_damon_ctx *ctx,
			      unsigned long start, unsigned long end, unsigned int nr_pieces)
{
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(start, end);

	__uks_damon_add_region(r, t);
	ASSERT_EQ(-EINVAL, __uks_damon_evenly_split_region(ctx, t, r, nr_pieces));
	ASSERT_EQ(1U, t->nr_regions);
	ASSERT_EQ(start, r->ar.start);
	ASSERT_EQ(end, r->ar.end);
	__uks_damon_destroy_target(t);
}

static void split_evenly_succ(struct th_result *_th_r, struct uks_damon_ctx *ctx,
			      unsigned long start, unsigned long end, unsigned int nr_pieces)
{
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(start, end);
	unsigned long expected_width = (end - start) / nr_pieces;
	unsigned int i = 0;

	__uks_damon_add_region(r, t);
	ASSERT_EQ(0, __uks_damon_evenly_split_region(ctx, t, r, nr_pieces));
	ASSERT_EQ(nr_pieces, t->nr_regions);
	damon_for_each_region(r, t) {
		if (i == nr_pieces - 1)
			break;
		ASSERT_EQ(start + i++ * expected_width, r->ar.start);
		ASSERT_EQ(start + i * expected_width, r->ar.end);
	}
	ASSERT_EQ(start + i * expected_width, r->ar.start);
	ASSERT_EQ(end, r->ar.end);
	__uks_damon_destroy_target(t);
}

TEST(damon_test_split_evenly)
{
	struct uks_damon_ctx *ctx = kunit_ctx();

	ASSERT_EQ(-EINVAL, __uks_damon_evenly_split_region(ctx, NULL, NULL, 5));
	split_evenly_fail(_th_r, ctx, 0, 100, 0);
	split_evenly_succ(_th_r, ctx, 0, 100, 10);
	split_evenly_succ(_th_r, ctx, 5, 59, 5);
	split_evenly_fail(_th_r, ctx, 5, 6, 2);
	uks_damon_ctx_destroy(ctx);
}

TEST(split_evenly_exact_pieces)
{
	static const unsigned long expect[] = { 5, 15, 15, 25, 25, 35, 35, 45, 45, 59 };
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(42);
	struct damon_region *r = __uks_damon_new_region(5, 59);

	__uks_damon_add_region(r, t);
	ASSERT_EQ(0, __uks_damon_evenly_split_region(ctx, t, r, 5));
	for (unsigned int i = 0; i < 5; i++) {
		ASSERT_EQ(expect[2 * i], nth_region(t, i)->ar.start);
		ASSERT_EQ(expect[2 * i + 1], nth_region(t, i)->ar.end);
	}
	__uks_damon_destroy_target(t);
	uks_damon_ctx_destroy(ctx);
}

TEST(init_regions_approximate_min_nr_regions)
{
	/* 5.15: pieces of total / min_nr_regions per big region */
	static const struct damon_addr_range three[] = {
		{ 0, 1000 }, { 5000, 5500 }, { 9000, 9500 },
	};
	struct uks_damon_ctx *ctx = kunit_ctx();
	struct damon_target *t = __uks_damon_new_target(1);

	__uks_damon_add_target(ctx, t);
	__uks_damon_init_regions_of(ctx, t, three);	/* sz 200: 5 + 2 + 2 */
	ASSERT_EQ(9U, t->nr_regions);
	ASSERT_EQ(200UL, nth_region(t, 0)->ar.end);
	ASSERT_EQ(5000UL, nth_region(t, 5)->ar.start);
	ASSERT_EQ(9500UL, nth_region(t, 8)->ar.end);
	uks_damon_ctx_destroy(ctx);
}

TEST(read_maps_of_self)
{
	struct damon_addr_range *maps, regions[3];
	unsigned int nr;

	ASSERT_EQ(0, __uks_damon_read_maps(getpid(), &maps, &nr));
	ASSERT_GT(nr, 3U);
	for (unsigned int i = 1; i < nr; i++)
		ASSERT_GE(maps[i].start, maps[i - 1].end);
	ASSERT_EQ(0, __uks_damon_three_regions_of(maps, nr, 4096, regions));
	ASSERT_LT(regions[0].end, regions[1].start);
	ASSERT_LT(regions[1].end, regions[2].start);
	uks_kfree(maps);
	ASSERT_EQ(-ESRCH, __uks_damon_read_maps(0x3fffffff, &maps, &nr));
}

/* vaddr-refs reads smaps: mapping lines and Referenced:, nothing else. */
TEST(smaps_mappings_and_referenced)
{
	char path[700], text[2048];
	struct refs_map *maps;
	unsigned int nr;
	FILE *f;

	memset(path, 'p', sizeof(path) - 1);
	path[sizeof(path) - 1] = '\0';
	snprintf(text, sizeof(text),
		 "Referenced:        4 kB\n"		/* before any mapping: ignored */
		 "55d0c0000000-55d0c0021000 r--p 00000000 fd:01 1234   /usr/bin/x\n"
		 "Size:                132 kB\n"
		 "Referenced:          8 kB\n"
		 "AnonHugePages:        0 kB\n"
		 "7f0000000000-7f0000200000 rw-p 00000000 00:00 0 /%s\n"
		 "Referenced:          0 kB\n"
		 "garbage-line\n"
		 "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0  [vsyscall]\n"
		 "Referenced: 12 kB",				/* no final newline */
		 path);
	f = fmemopen(text, strlen(text), "r");
	ASSERT_NONNULL(f);
	ASSERT_EQ(0, __uks_damon_parse_smaps(f, &maps, &nr));
	fclose(f);
	ASSERT_EQ(3, nr);
	EXPECT_EQ(0x55d0c0000000UL, maps[0].start);
	EXPECT_EQ(0x55d0c0021000UL, maps[0].end);
	EXPECT_TRUE(maps[0].referenced);
	/* a path longer than the line buffer: its tail is not a line */
	EXPECT_EQ(0x7f0000000000UL, maps[1].start);
	EXPECT_EQ(0x7f0000200000UL, maps[1].end);
	EXPECT_FALSE(maps[1].referenced);
	EXPECT_EQ(0xffffffffff600000UL, maps[2].start);
	EXPECT_TRUE(maps[2].referenced);
	uks_kfree(maps);

	f = fmemopen((char *)"\x80\xff-\n-1-2 \n1-\nReferenced:\n", 26, "r");
	ASSERT_NONNULL(f);
	ASSERT_EQ(0, __uks_damon_parse_smaps(f, &maps, &nr));
	fclose(f);
	EXPECT_EQ(0, nr);
	uks_kfree(maps);
}

/* ... and finds every mapping of a real process, at its exact range. */
TEST(smaps_of_this_process)
{
	char *base = mmap(NULL, 7 * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	struct refs_map *maps;
	unsigned int nr, found = 0;
	FILE *f;

	ASSERT_NE(MAP_FAILED, base);
	/* none | rw none rw none rw | none: five mappings of a page each in the middle */
	for (int k = 0; k < 7; k += 2)
		ASSERT_EQ(0, mprotect(base + k * 4096, 4096, PROT_NONE));
	f = fopen("/proc/self/smaps", "re");
	ASSERT_NONNULL(f);
	ASSERT_EQ(0, __uks_damon_parse_smaps(f, &maps, &nr));
	fclose(f);
	for (unsigned int i = 0; i < nr; i++) {
		if (i)
			ASSERT_LE(maps[i - 1].end, maps[i].start);
		for (int k = 1; k < 6; k++)
			if (maps[i].start == (unsigned long)base + k * 4096UL &&
			    maps[i].end == maps[i].start + 4096)
				found++;
	}
	EXPECT_EQ(5, found);
	uks_kfree(maps);
	munmap(base, 7 * 4096);
}

TEST_HARNESS_MAIN
