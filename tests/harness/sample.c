// SPDX-License-Identifier: MIT
/*
 * Not a test by itself: tests/harness/harness.sh runs this program and
 * checks its TAP output, proving the harness reports passes, ASSERT and
 * EXPECT failures, skips, crashes, timeouts, fixtures and variants.
 */
#include "harness.h"

TEST(passes) { ASSERT_EQ(2 + 2, 4); EXPECT_STREQ("a", "a"); }

TEST(assert_stops)
{
	ASSERT_EQ(1, 2);
	TH_LOG("unreachable after ASSERT");
}

TEST(expect_continues)
{
	EXPECT_EQ(1, 2);
	TH_LOG("reached after EXPECT");
}

TEST(skips) { SKIP(return, "no widget here"); }

TEST(crashes) { raise(SIGSEGV); }

TEST_TIMEOUT(hangs, 1) { pause(); }

FIXTURE(fx) { int setup_ran; };
FIXTURE_VARIANT(fx) { int value; };
FIXTURE_VARIANT_ADD(fx, one) { .value = 1 };
FIXTURE_VARIANT_ADD(fx, two) { .value = 2 };
FIXTURE_SETUP(fx) { self->setup_ran = variant->value; }
FIXTURE_TEARDOWN(fx)
{
	TH_LOG("teardown %s value %d", _th_r->failed ? "after failure" : "clean",
	       self->setup_ran);
}
TEST_F(fx, sees_variant) { ASSERT_EQ(self->setup_ran, variant->value); }
TEST_F(fx, fails_on_two) { ASSERT_EQ(variant->value, 1); }

TEST_HARNESS_MAIN
