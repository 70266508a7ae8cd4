// SPDX-License-Identifier: MIT
/*
 * Garbage input for the vduse ring parser: the fuzz target's own function
 * (fuzz/vduse_ring.c, which aborts on any broken invariant) fed with
 * pseudo-random descriptor tables, rings and guest memory, plus inputs
 * that are all zeroes, all ones and truncated.  Seeded: reproducible.
 */
#include "harness.h"

#include "../../../fuzz/vduse_ring.c"

TEST_TIMEOUT(random_rings, 120)
{
	static uint8_t buf[4096];
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int iter = 0; iter < 20000; iter++) {
		size_t len = 2 + (size_t)(x % (sizeof(buf) - 2));

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		/*
		 * Every other input is biased towards chains that get far:
		 * request-sized lengths, flags without garbage bits, addresses
		 * inside memory, and guest memory mostly zero (IN headers).
		 */
		if (iter & 1) {
			static const uint32_t lens[] = { 16, 1, 512, 513, 4096, 8, 32 };

			for (size_t i = 18; i + 16 <= len && i < 18 + 16 * FZ_NUM; i += 16) {
				uint32_t l = lens[buf[i + 8] % 7];

				memcpy(&buf[i + 8], &l, 4);
				buf[i + 12] &= 7;
				buf[i + 13] = 0;
				buf[i + 7] &= 0x7f;
			}
			for (size_t i = 18 + 16 * FZ_NUM; i < len; i++)
				if (buf[i] > 8)
					buf[i] = 0;
		}
		ASSERT_EQ(0, LLVMFuzzerTestOneInput(buf, len));
	}
	{
		struct uks_vduse_blk_stats st;

		/* The inputs reach every outcome: good requests, errors, malformed chains. */
		uks_vduse_blk_get_stats(fz_get()->blk, &st);
		TH_LOG("%llu requests: %llu IOERR, %llu UNSUPP, %llu malformed",
		       (unsigned long long)st.requests, (unsigned long long)st.errors,
		       (unsigned long long)st.unsupported, (unsigned long long)st.malformed);
		EXPECT_GT(st.requests, 20000u);
		EXPECT_GT(st.malformed, 1000u);
		EXPECT_GT(st.requests - st.errors - st.unsupported, 50u);
		EXPECT_GT(st.unsupported, 10u);
	}
	memset(buf, 0, sizeof(buf));
	ASSERT_EQ(0, LLVMFuzzerTestOneInput(buf, sizeof(buf)));
	memset(buf, 0xff, sizeof(buf));
	ASSERT_EQ(0, LLVMFuzzerTestOneInput(buf, sizeof(buf)));
	for (size_t l = 0; l < 64; l++)
		ASSERT_EQ(0, LLVMFuzzerTestOneInput(buf, l));
}

TEST_HARNESS_MAIN
