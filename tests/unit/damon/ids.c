// SPDX-License-Identifier: MIT
/*
 * The KUnit cases of Linux 5.15's mm/damon/dbgfs-test.h (suite
 * "damon-dbgfs"): str_to_target_ids and set_targets + sprint_target_ids.
 */
#include "harness.h"
#include "unit/damon/helper.h"

static int parse(const char *s, unsigned long *ids)
{
	return uks_damon_parse_target_ids(s, ids, 32);
}

TEST(damon_dbgfs_test_str_to_target_ids)
{
	unsigned long ids[32];

	ASSERT_EQ(1, parse("123", ids));
	ASSERT_EQ(123UL, ids[0]);
	ASSERT_EQ(1, parse("123abc", ids));
	ASSERT_EQ(123UL, ids[0]);
	ASSERT_EQ(0, parse("a123", ids));
	ASSERT_EQ(2, parse("12 35", ids));
	ASSERT_EQ(12UL, ids[0]);
	ASSERT_EQ(35UL, ids[1]);
	ASSERT_EQ(3, parse("12 35 46", ids));
	ASSERT_EQ(12UL, ids[0]);
	ASSERT_EQ(35UL, ids[1]);
	ASSERT_EQ(46UL, ids[2]);
	ASSERT_EQ(2, parse("12 35 abc 46", ids));
	ASSERT_EQ(12UL, ids[0]);
	ASSERT_EQ(35UL, ids[1]);
	ASSERT_EQ(0, parse("", ids));
	ASSERT_EQ(0, parse("\n", ids));
}

TEST(parse_stops_at_max)
{
	unsigned long ids[2];

	ASSERT_EQ(2, uks_damon_parse_target_ids("1 2 3 4", ids, 2));
	ASSERT_EQ(2UL, ids[1]);
}

TEST(damon_dbgfs_test_set_targets)
{
	unsigned long ids[] = { 1, 2, 3 };
	struct uks_damon_ctx *ctx = kunit_ctx();
	char buf[64];

	ASSERT_EQ(0, uks_damon_set_targets(ctx, ids, 3));
	ASSERT_EQ(6, uks_damon_sprint_target_ids(ctx, buf, sizeof(buf)));
	ASSERT_STREQ("1 2 3\n", buf);
	ASSERT_EQ(0, uks_damon_set_targets(ctx, NULL, 0));
	ASSERT_EQ(1, uks_damon_sprint_target_ids(ctx, buf, sizeof(buf)));
	ASSERT_STREQ("\n", buf);
	ASSERT_EQ(0, uks_damon_set_targets(ctx, ids, 2));
	uks_damon_sprint_target_ids(ctx, buf, sizeof(buf));
	ASSERT_STREQ("1 2\n", buf);
	ASSERT_EQ(0, uks_damon_set_targets(ctx, ids + 1, 1));
	uks_damon_sprint_target_ids(ctx, buf, sizeof(buf));
	ASSERT_STREQ("2\n", buf);
	ASSERT_EQ(0, uks_damon_set_targets(ctx, NULL, 0));
	uks_damon_sprint_target_ids(ctx, buf, sizeof(buf));
	ASSERT_STREQ("\n", buf);
	uks_damon_ctx_destroy(ctx);
}

TEST(target_ids_copy)
{
	unsigned long ids[] = { 7, 8, 9 }, out[2];
	struct uks_damon_ctx *ctx = kunit_ctx();

	ASSERT_EQ(0, uks_damon_set_targets(ctx, ids, 3));
	ASSERT_EQ(3, uks_damon_target_ids(ctx, out, 2));
	ASSERT_EQ(7UL, out[0]);
	ASSERT_EQ(8UL, out[1]);
	ASSERT_EQ(0, uks_damon_destroy_targets(ctx));
	ASSERT_EQ(0, uks_damon_target_ids(ctx, out, 2));
	uks_damon_ctx_destroy(ctx);
}

TEST_HARNESS_MAIN
