// SPDX-License-Identifier: MIT
/*
 * __uks_mem_may_allocate(): a size past MemAvailable, past what RLIMIT_AS
 * leaves above VmSize or RLIMIT_DATA above VmData, or past SIZE_MAX is
 * -ENOMEM; sizes that fit are 0.  Nothing is allocated either way.
 */
#include <errno.h>
#include <stdint.h>

#include "harness.h"
#include "core/mem_avail.h"
#include "unit/mem_limit.h"

TEST(small_sizes_fit)
{
	ASSERT_EQ(0, __uks_mem_may_allocate(0));
	ASSERT_EQ(0, __uks_mem_may_allocate(4096));
	ASSERT_EQ(0, __uks_mem_may_allocate_array(1024, 4096));
}

TEST(past_mem_available)
{
	uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable");

	if (!avail)
		SKIP(return, "no MemAvailable in /proc/meminfo");
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate((size_t)(avail + 1024 * MIB)));
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate(SIZE_MAX));
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate_array(SIZE_MAX / 2, 3));
	if (avail > 64 * MIB)
		ASSERT_EQ(0, __uks_mem_may_allocate(16 * MIB));
}

TEST(past_rlimit_as)
{
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_AS, 64 * MIB));
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate(128 * MIB));
	ASSERT_EQ(0, __uks_mem_may_allocate(8 * MIB));
	ASSERT_EQ(0, unlimit(RLIMIT_AS));
	if (proc_kb("/proc/meminfo", "MemAvailable") > 256 * MIB)
		ASSERT_EQ(0, __uks_mem_may_allocate(128 * MIB));
}

TEST(past_rlimit_data)
{
	ASSERT_EQ(0, limit_to_now_plus(RLIMIT_DATA, 64 * MIB));
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate(128 * MIB));
	ASSERT_EQ(0, __uks_mem_may_allocate(8 * MIB));
}

TEST(a_limit_already_passed)
{
	struct rlimit rl;

	ASSERT_EQ(0, getrlimit(RLIMIT_AS, &rl));
	rl.rlim_cur = self_kb("VmSize") / 2;	/* nothing more fits */
	ASSERT_EQ(0, setrlimit(RLIMIT_AS, &rl));
	ASSERT_EQ(-ENOMEM, __uks_mem_may_allocate(4096));
}

TEST_HARNESS_MAIN
