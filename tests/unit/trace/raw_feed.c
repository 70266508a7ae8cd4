// SPDX-License-Identifier: MIT
/*
 * trace_pipe_raw's pages for splice (kfs ->read_pages, which uksfs stores
 * in the page cache): only complete pages come out, the page being filled
 * stays with the open file, and a read(2) after that starts with it.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/trace.h>

#include "harness.h"
#include "unit/tracefs_io.h"
#include "trace/ring_buffer_raw.h"
#include "trace/tracefs.h"

FIXTURE(feed) {
	struct uks_trace *tr;
	struct kfs_root root;
	struct kfs_open_file *of;
	cpu_set_t saved;
};

FIXTURE_SETUP(feed)
{
	char path[64];
	cpu_set_t one;
	int cpu = 0;

	/* Markers go to the writer's CPU: stay on the first one allowed. */
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(self->saved), &self->saved));
	while (!CPU_ISSET(cpu, &self->saved))
		cpu++;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	ASSERT_EQ(0, sched_setaffinity(0, sizeof(one), &one));
	ASSERT_EQ(0, uks_trace_create("raw_feed", &self->tr));
	__uks_tracefs_root(self->tr, &self->root);
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	ASSERT_EQ(0, __uks_kfs_open(&self->root, path, O_RDONLY | O_NONBLOCK, NULL, &self->of));
}

FIXTURE_TEARDOWN(feed)
{
	__uks_kfs_close(self->of);
	uks_trace_destroy(self->tr);
	sched_setaffinity(0, sizeof(self->saved), &self->saved);
}

static void marker(struct uks_trace *tr, int i)
{
	char text[32];

	snprintf(text, sizeof(text), "feed-%04d\n", i);
	wr(tr, "trace_marker", text);
}

/* The markers' numbers in @page, in order, into @nums; how many. */
static int numbers(const unsigned char *page, size_t size, int *nums, int max)
{
	struct uks_rb_page_reader r;
	const void *data;
	uint64_t ts;
	uint32_t len;
	int n = 0;

	if (__uks_trace_rb_page_open(&r, page, (uint32_t)size))
		return -1;
	while (n < max && __uks_trace_rb_page_next(&r, &ts, &data, &len) == 1) {
		const char *s = memmem(data, len, "feed-", 5);

		if (s)
			nums[n++] = atoi(s + 5);
	}
	return n;
}

TEST_F(feed, only_complete_pages_come_out_in_order)
{
	static unsigned char page[4096];
	int nums[400], n, i = 0;

	EXPECT_EQ(-EMSGSIZE, __uks_kfs_read_pages(self->of, page, 100));
	marker(self->tr, i++);
	ASSERT_EQ(0, __uks_kfs_read_pages(self->of, page, sizeof(page)));
	/* Markers until a page is complete: the one that does not fit starts the next. */
	while (i < 1000) {
		ssize_t got;

		marker(self->tr, i++);
		got = __uks_kfs_read_pages(self->of, page, sizeof(page));
		ASSERT_TRUE(got == 0 || got == (ssize_t)sizeof(page));
		if (got)
			break;
	}
	ASSERT_LT(i, 1000);
	n = numbers(page, sizeof(page), nums, 400);
	ASSERT_GT(n, 10);
	for (int k = 0; k < n; k++)
		EXPECT_EQ(k, nums[k]);
	/* The page is as full as the events make it: the next one did not fit. */
	EXPECT_EQ(n, i - 1);
}

TEST_F(feed, a_read_after_feeding_starts_with_the_page_being_filled)
{
	static unsigned char page[4096];
	int nums[400], n;

	for (int i = 0; i < 5; i++)
		marker(self->tr, i);
	ASSERT_EQ(0, __uks_kfs_read_pages(self->of, page, sizeof(page)));	/* took 0..4 */
	marker(self->tr, 5);
	ASSERT_EQ((ssize_t)sizeof(page), __uks_kfs_read(self->of, page, sizeof(page), -1));
	n = numbers(page, sizeof(page), nums, 400);
	ASSERT_EQ(5, n);
	for (int k = 0; k < n; k++)
		EXPECT_EQ(k, nums[k]);
	ASSERT_EQ((ssize_t)sizeof(page), __uks_kfs_read(self->of, page, sizeof(page), -1));
	ASSERT_EQ(1, numbers(page, sizeof(page), nums, 400));
	EXPECT_EQ(5, nums[0]);
	EXPECT_EQ(-EAGAIN, __uks_kfs_read(self->of, page, sizeof(page), -1));
}

TEST_F(feed, other_files_hand_out_no_pages)
{
	struct kfs_open_file *of;
	char buf[4096];

	ASSERT_EQ(0, __uks_kfs_open(&self->root, "trace", O_RDONLY, NULL, &of));
	EXPECT_EQ(-EOPNOTSUPP, __uks_kfs_read_pages(of, buf, sizeof(buf)));
	__uks_kfs_close(of);
}

TEST_HARNESS_MAIN
