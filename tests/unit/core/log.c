// SPDX-License-Identifier: MIT
/* The log callback: routing, silencing, truncation of long messages. */
#include "harness.h"
#include <uks/core.h>
#include "core/log.h"

struct capture {
	int calls;
	enum uks_log_level level;
	char msg[2048];
};

static void capture_fn(enum uks_log_level level, const char *msg, void *arg)
{
	struct capture *c = arg;

	c->calls++;
	c->level = level;
	snprintf(c->msg, sizeof(c->msg), "%s", msg);
}

TEST(routes_to_callback)
{
	struct capture c = { 0 };

	uks_set_log_fn(capture_fn, &c);
	pr_warn("cache %s: %d objects remain", "kmalloc-64", 3);
	EXPECT_EQ(c.calls, 1);
	EXPECT_EQ(c.level, UKS_LOG_WARN);
	EXPECT_STREQ(c.msg, "cache kmalloc-64: 3 objects remain");
	pr_debug("x");
	EXPECT_EQ(c.calls, 2);
	EXPECT_EQ(c.level, UKS_LOG_DEBUG);
}

TEST(null_silences)
{
	struct capture c = { 0 };

	uks_set_log_fn(capture_fn, &c);
	uks_set_log_fn(NULL, NULL);
	pr_err("dropped");
	EXPECT_EQ(c.calls, 0);
}

TEST(long_message_truncated_not_overflowed)
{
	struct capture c = { 0 };
	char big[3000];

	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	uks_set_log_fn(capture_fn, &c);
	pr_info("%s", big);
	EXPECT_EQ(strlen(c.msg), 1023);
}

TEST(default_sink_prints_warnings_only)
{
	int fds[2];
	char buf[256] = "";

	ASSERT_EQ(pipe(fds), 0);
	dup2(fds[1], 2);
	close(fds[1]);
	uks_log_stderr(UKS_LOG_INFO, "quiet", NULL);
	uks_log_stderr(UKS_LOG_ERR, "loud", NULL);
	close(2);
	ssize_t n = read(fds[0], buf, sizeof(buf) - 1);

	ASSERT_GT(n, 0);
	buf[n] = '\0';
	EXPECT_STREQ(buf, "uks: error: loud\n");
}

TEST(clocks_advance)
{
	uint64_t a = uks_clock_mono_ns();

	usleep(2000);
	uint64_t b = uks_clock_mono_ns();

	EXPECT_GE(b - a, 2000000);
	EXPECT_LT(b - a, 2000000000);
	EXPECT_GT(uks_clock_real_ns(), 1600000000ull * 1000000000ull);
	EXPECT_STREQ(uks_version(), "0.1.0");
}

TEST_HARNESS_MAIN
