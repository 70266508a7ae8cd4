// SPDX-License-Identifier: MIT
/* Bitmaps, cpumasks and the cpulist text format, including bad input. */
#include "harness.h"
#include <uks/cpumask.h>
#include "core/bitmap.h"

/* Parse, print, compare: input, CPU count, normalised output. */
static const struct {
	const char *in;
	unsigned int nr;
	const char *want;
} roundtrips[] = {
	{ "0-3,8,10-11", 16, "0-3,8,10-11" },
	{ "0", 1, "0" },
	{ "", 4, "" },
	{ "\n", 4, "" },
	{ "3,2,1,0\n", 4, "0-3" },
	{ "  5-7 ", 8, "5-7" },
	{ "0-0", 4, "0" },
	{ "1,1,1", 4, "1" },
	{ "0-15:2/4", 16, "0-1,4-5,8-9,12-13" },	/* strides */
	{ "0-9:1/3", 10, "0,3,6,9" },
	{ "0-N", 6, "0-5" },				/* N = last CPU */
	{ "N", 64, "63" },
	{ "0-4095", 0, "0-4095" },			/* 0 = the maximum */
};

TEST(parse_print_roundtrip)
{
	for (size_t i = 0; i < sizeof(roundtrips) / sizeof(roundtrips[0]); i++) {
		struct uks_cpumask m;
		char buf[256];

		int ret = uks_cpumask_parse_list(&m, roundtrips[i].in, roundtrips[i].nr);

		if (ret)
			TH_LOG("input \"%s\"", roundtrips[i].in);
		ASSERT_EQ(ret, 0);
		ASSERT_GE(uks_cpumask_print_list(&m, buf, sizeof(buf)), 0);
		EXPECT_STREQ(buf, roundtrips[i].want);
	}
}

TEST(parse_rejects_malformed)
{
	static const char *const bad[] = {
		"a", "-1", "1-", "-", ",", "1,", ",1", "1,,2", "3-1", "1-2-3",
		"0x1", "1 2", "1;2", "0-7:", "0-7:1", "0-7:1/", "0-7:3/2",
		"0-7:1/0", "1/2", "0-3\n4", "\x01", "１",
	};
	struct uks_cpumask m;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uks_cpumask_set_cpu(&m, 1);
		int ret = uks_cpumask_parse_list(&m, bad[i], 8);

		if (ret != -EINVAL)
			TH_LOG("input \"%s\"", bad[i]);
		EXPECT_EQ(ret, -EINVAL);
		EXPECT_TRUE(uks_cpumask_empty(&m));	/* cleared on error */
	}
}

TEST(parse_range_errors)
{
	struct uks_cpumask m;

	EXPECT_EQ(uks_cpumask_parse_list(&m, "8", 8), -ERANGE);
	EXPECT_EQ(uks_cpumask_parse_list(&m, "0-8", 8), -ERANGE);
	EXPECT_EQ(uks_cpumask_parse_list(&m, "7", 8), 0);
	EXPECT_EQ(uks_cpumask_parse_list(&m, "4096", 0), -ERANGE);
	EXPECT_EQ(uks_cpumask_parse_list(&m, "99999999999", 8), -EOVERFLOW);
	EXPECT_EQ(uks_cpumask_parse_list(&m, "4294967295", 8), -ERANGE);
	EXPECT_TRUE(uks_cpumask_empty(&m));
}

TEST(print_needs_room)
{
	struct uks_cpumask m;
	char buf[6];

	ASSERT_EQ(uks_cpumask_parse_list(&m, "0-3,8,10-11", 16), 0);
	EXPECT_EQ(uks_cpumask_print_list(&m, buf, sizeof(buf)), -ENOSPC);
	EXPECT_EQ(buf[sizeof(buf) - 1], '\0');
	EXPECT_EQ(uks_cpumask_print_list(&m, buf, 0), -ENOSPC);
	char big[12];

	EXPECT_EQ(uks_cpumask_print_list(&m, big, sizeof(big)), 11);
}

TEST(mask_operations)
{
	struct uks_cpumask a, b, c;
	int cpu, seen = 0;

	uks_cpumask_parse_list(&a, "0-3", 0);
	uks_cpumask_parse_list(&b, "2-5", 0);
	uks_cpumask_and(&c, &a, &b);
	EXPECT_EQ(uks_cpumask_weight(&c), 2);
	EXPECT_TRUE(uks_cpumask_test_cpu(&c, 2));
	EXPECT_FALSE(uks_cpumask_test_cpu(&c, 1));
	EXPECT_TRUE(uks_cpumask_subset(&c, &a));
	EXPECT_FALSE(uks_cpumask_subset(&a, &b));
	uks_cpumask_or(&c, &a, &b);
	EXPECT_EQ(uks_cpumask_weight(&c), 6);
	EXPECT_EQ(uks_cpumask_first(&c), 0);
	uks_cpumask_clear_cpu(&c, 0);
	EXPECT_EQ(uks_cpumask_first(&c), 1);
	uks_cpumask_set_cpu(&c, 4095);
	uks_cpumask_set_cpu(&c, 4096);	/* out of range: ignored */
	uks_for_each_cpu(cpu, &c)
		seen++;
	EXPECT_EQ(seen, 6);
	EXPECT_FALSE(uks_cpumask_test_cpu(&c, 4096));
	EXPECT_FALSE(uks_cpumask_equal(&a, &b));
	b = a;
	EXPECT_TRUE(uks_cpumask_equal(&a, &b));
	uks_cpumask_clear(&a);
	EXPECT_TRUE(uks_cpumask_empty(&a));
	EXPECT_EQ(uks_cpumask_first(&a), -1);
}

TEST(bitmap_weight_and_find)
{
	unsigned long map[BITS_TO_LONGS(130)];

	bitmap_zero(map, 130);
	bitmap_set(map, 60, 10);
	set_bit(129, map);
	EXPECT_EQ(bitmap_weight(map, 130), 11);
	EXPECT_EQ(bitmap_weight(map, 65), 5);
	EXPECT_EQ(find_next_bit(map, 130, 0), 60);
	EXPECT_EQ(find_next_bit(map, 130, 70), 129);
	EXPECT_EQ(find_next_bit(map, 129, 70), 129);	/* none below nbits */
	EXPECT_EQ(find_next_bit(map, 130, 200), 130);
}

TEST_HARNESS_MAIN
