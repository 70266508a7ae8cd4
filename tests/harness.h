/* SPDX-License-Identifier: MIT */
/*
 * uks test harness: a kselftest-like API in one header, written for uks.
 *
 *   TEST(name) { ASSERT_EQ(1, 1); }
 *   FIXTURE(f) { int fd; };
 *   FIXTURE_VARIANT(f) { int mode; };          (optional)
 *   FIXTURE_VARIANT_ADD(f, fast) { .mode = 1 };
 *   FIXTURE_SETUP(f) { self->fd = ...; }       (self, variant in scope)
 *   FIXTURE_TEARDOWN(f) { close(self->fd); }
 *   TEST_F(f, name) { EXPECT_GT(self->fd, 0); }
 *   TEST_HARNESS_MAIN
 *
 * ASSERT_* stop the test, EXPECT_* record a failure and continue, SKIP()
 * ends it as skipped, TH_LOG() prints a diagnostic.  Each test runs in a
 * forked child in its own process group, killed after UKS_TEST_TIMEOUT
 * seconds (default 30; TEST_TIMEOUT(name, s) per test).  Output is TAP 13.
 * Options: -l list, -t NAME run only NAME (repeatable; "fixture.name" or
 * "fixture.variant.name" for fixture tests), -h help.
 * Exit: 0 all passed, 1 something failed, 77 everything was skipped.
 */
#ifndef UKS_TESTS_HARNESS_H
#define UKS_TESTS_HARNESS_H

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct th_result {
	int failed;
	int skipped;
	char skip_reason[256];
};

struct th_test {
	const char *fixture;	/* NULL for plain TEST() */
	const char *name;
	void (*fn)(struct th_result *r, const void *variant);
	int timeout;
	struct th_test *next;
};

struct th_variant {
	const char *fixture;
	const char *name;
	const void *data;
	struct th_variant *next;
};

static struct th_test *th_tests, **th_tests_tail = &th_tests;
static struct th_variant *th_variants, **th_variants_tail = &th_variants;
static struct th_result *th_cur;

static inline void th_register(struct th_test *t)
{
	*th_tests_tail = t;
	th_tests_tail = &t->next;
}

static inline void th_register_variant(struct th_variant *v)
{
	*th_variants_tail = v;
	th_variants_tail = &v->next;
}

#define TH_LOG(fmt, ...) \
	fprintf(stderr, "# %s:%d: " fmt "\n", __FILE__, __LINE__, ##__VA_ARGS__)

#define __TH_DEFINE(tname, fixture_name, test_name, to)			\
	static void tname(struct th_result *, const void *);		\
	static struct th_test tname##_desc = {				\
		fixture_name, test_name, tname, to, NULL };		\
	__attribute__((constructor)) static void tname##_reg(void)	\
	{ th_register(&tname##_desc); }

#define TEST_TIMEOUT(name, seconds)					\
	__TH_DEFINE(th_test_##name, NULL, #name, seconds)		\
	static void th_test_##name(struct th_result *_th_r,		\
				   const void *_th_variant)

#define TEST(name) TEST_TIMEOUT(name, 0)

#define FIXTURE_DATA(f) struct th_fixture_##f
#define FIXTURE_VARIANT(f) struct th_fixture_variant_##f
#define FIXTURE(f)							\
	FIXTURE_VARIANT(f);						\
	FIXTURE_DATA(f)

#define FIXTURE_SETUP(f)						\
	static void th_setup_##f(struct th_result *_th_r,		\
				 FIXTURE_DATA(f) *self,			\
				 const FIXTURE_VARIANT(f) *variant)
#define FIXTURE_TEARDOWN(f)						\
	static void th_teardown_##f(struct th_result *_th_r,		\
				    FIXTURE_DATA(f) *self,		\
				    const FIXTURE_VARIANT(f) *variant)

#define FIXTURE_VARIANT_ADD(f, vname)					\
	static const FIXTURE_VARIANT(f) th_variant_##f##_##vname;	\
	static struct th_variant th_variant_##f##_##vname##_desc = {	\
		#f, #vname, &th_variant_##f##_##vname, NULL };		\
	__attribute__((constructor)) static void			\
	th_variant_##f##_##vname##_reg(void)				\
	{ th_register_variant(&th_variant_##f##_##vname##_desc); }	\
	static const FIXTURE_VARIANT(f) th_variant_##f##_##vname =

/* Teardown runs even when the body fails an ASSERT (it longjmps out). */
#include <setjmp.h>
static sigjmp_buf th_assert_jmp;

#define TEST_F(f, name)							\
	static void th_body_##f##_##name(struct th_result *,		\
		FIXTURE_DATA(f) *, const FIXTURE_VARIANT(f) *);		\
	__TH_DEFINE(th_test_##f##_##name, #f, #name, 0)			\
	static void th_test_##f##_##name(struct th_result *_th_r,	\
					 const void *_th_v)		\
	{								\
		FIXTURE_DATA(f) self;					\
		memset(&self, 0, sizeof(self));				\
		if (sigsetjmp(th_assert_jmp, 0) == 0) {			\
			th_setup_##f(_th_r, &self, _th_v);		\
			if (!_th_r->failed && !_th_r->skipped)		\
				th_body_##f##_##name(_th_r, &self, _th_v); \
		}							\
		th_teardown_##f(_th_r, &self, _th_v);			\
	}								\
	static void th_body_##f##_##name(struct th_result *_th_r,	\
		FIXTURE_DATA(f) *self, const FIXTURE_VARIANT(f) *variant)

static inline void th_fail_stop(void)
{
	th_cur->failed = 1;
	siglongjmp(th_assert_jmp, 1);
}

#define SKIP(statement, fmt, ...) do {					\
	_th_r->skipped = 1;						\
	snprintf(_th_r->skip_reason, sizeof(_th_r->skip_reason),	\
		 fmt, ##__VA_ARGS__);					\
	statement;							\
} while (0)

/* Mixed signedness is the caller's intent here (EXPECT_EQ(size, 64)). */
#define __TH_CMP(stop, a, op, b) do {					\
	__typeof__(a) _th_a = (a);					\
	__typeof__(b) _th_b = (b);					\
	_Pragma("GCC diagnostic push")					\
	_Pragma("GCC diagnostic ignored \"-Wsign-compare\"")		\
	bool _th_ok = _th_a op _th_b;					\
	_Pragma("GCC diagnostic pop")					\
	if (!_th_ok) {							\
		TH_LOG("expected %s (%lld) %s %s (%lld)", #a,		\
		       (long long)_th_a, #op, #b, (long long)_th_b);	\
		_th_r->failed = 1;					\
		if (stop)						\
			th_fail_stop();					\
	}								\
} while (0)

#define ASSERT_EQ(a, b) __TH_CMP(1, a, ==, b)
#define ASSERT_NE(a, b) __TH_CMP(1, a, !=, b)
#define ASSERT_LT(a, b) __TH_CMP(1, a, <, b)
#define ASSERT_LE(a, b) __TH_CMP(1, a, <=, b)
#define ASSERT_GT(a, b) __TH_CMP(1, a, >, b)
#define ASSERT_GE(a, b) __TH_CMP(1, a, >=, b)
#define EXPECT_EQ(a, b) __TH_CMP(0, a, ==, b)
#define EXPECT_NE(a, b) __TH_CMP(0, a, !=, b)
#define EXPECT_LT(a, b) __TH_CMP(0, a, <, b)
#define EXPECT_LE(a, b) __TH_CMP(0, a, <=, b)
#define EXPECT_GT(a, b) __TH_CMP(0, a, >, b)
#define EXPECT_GE(a, b) __TH_CMP(0, a, >=, b)

#define __TH_BOOL(stop, expr, want) do {				\
	if ((!!(expr)) != (want)) {					\
		TH_LOG("expected %s to be %s", #expr,			\
		       (want) ? "true" : "false");			\
		_th_r->failed = 1;					\
		if (stop)						\
			th_fail_stop();					\
	}								\
} while (0)

#define ASSERT_TRUE(e)  __TH_BOOL(1, e, 1)
#define ASSERT_FALSE(e) __TH_BOOL(1, e, 0)
#define EXPECT_TRUE(e)  __TH_BOOL(0, e, 1)
#define EXPECT_FALSE(e) __TH_BOOL(0, e, 0)
#define ASSERT_NULL(p)  __TH_BOOL(1, (p) == NULL, 1)
#define ASSERT_NONNULL(p) __TH_BOOL(1, (p) != NULL, 1)
#define EXPECT_NULL(p)  __TH_BOOL(0, (p) == NULL, 1)
#define EXPECT_NONNULL(p) __TH_BOOL(0, (p) != NULL, 1)

#define __TH_STR(stop, a, b, want_eq) do {				\
	const char *_th_sa = (a), *_th_sb = (b);			\
	if ((strcmp(_th_sa, _th_sb) == 0) != (want_eq)) {		\
		TH_LOG("expected %s (\"%s\") %s %s (\"%s\")", #a,	\
		       _th_sa, (want_eq) ? "==" : "!=", #b, _th_sb);	\
		_th_r->failed = 1;					\
		if (stop)						\
			th_fail_stop();					\
	}								\
} while (0)

#define ASSERT_STREQ(a, b) __TH_STR(1, a, b, 1)
#define EXPECT_STREQ(a, b) __TH_STR(0, a, b, 1)
#define ASSERT_STRNE(a, b) __TH_STR(1, a, b, 0)
#define EXPECT_STRNE(a, b) __TH_STR(0, a, b, 0)

/* ---- runner ---------------------------------------------------------- */

struct th_case {
	struct th_test *test;
	const struct th_variant *variant;
	char full_name[256];
};

static int th_wait(pid_t pid, int timeout_s, int *status)
{
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	int ret;

	if (pidfd >= 0) {
		struct pollfd p = { .fd = pidfd, .events = POLLIN };

		do
			ret = poll(&p, 1, timeout_s * 1000);
		while (ret < 0 && errno == EINTR);
		close(pidfd);
		if (ret == 0)
			return -ETIMEDOUT;
	} else {	/* no pidfd_open: poll waitpid */
		for (long ms = 0; ms < timeout_s * 1000L; ms += 10) {
			if (waitpid(pid, status, WNOHANG) == pid)
				return 0;
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
		}
		return -ETIMEDOUT;
	}
	while (waitpid(pid, status, 0) < 0 && errno == EINTR)
		;
	return 0;
}

static int th_run_case(struct th_case *c, int index, int *skipped)
{
	struct th_result *r = mmap(NULL, sizeof(*r), PROT_READ | PROT_WRITE,
				   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	const char *env = getenv("UKS_TEST_TIMEOUT");
	int timeout = c->test->timeout ? c->test->timeout : (env ? atoi(env) : 30);
	int status = 0, ok;
	const char *why = "";
	char detail[320] = "";

	if (r == MAP_FAILED) {
		printf("not ok %d %s # harness: mmap failed\n", index, c->full_name);
		return 0;
	}
	memset(r, 0, sizeof(*r));
	fflush(stdout);
	pid_t pid = fork();

	if (pid == 0) {
		setpgid(0, 0);
		th_cur = r;
		if (sigsetjmp(th_assert_jmp, 0) == 0)
			c->test->fn(r, c->variant ? c->variant->data : NULL);
		fflush(NULL);
		_exit(0);
	}
	if (pid < 0 || th_wait(pid, timeout, &status) == -ETIMEDOUT) {
		if (pid > 0) {
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
		}
		snprintf(detail, sizeof(detail), " # TIMEOUT after %d s", timeout);
		ok = 0;
	} else if (WIFSIGNALED(status)) {
		snprintf(detail, sizeof(detail), " # killed by signal %d (%s)",
			 WTERMSIG(status), strsignal(WTERMSIG(status)));
		ok = 0;
	} else if (WEXITSTATUS(status) != 0) {
		snprintf(detail, sizeof(detail), " # exit status %d", WEXITSTATUS(status));
		ok = 0;
	} else {
		ok = !r->failed;
		if (ok && r->skipped) {
			why = r->skip_reason;
			snprintf(detail, sizeof(detail), " # SKIP %s", why);
			*skipped = 1;
		}
	}
	printf("%s %d %s%s\n", ok ? "ok" : "not ok", index, c->full_name, detail);
	munmap(r, sizeof(*r));
	return ok;
}

static bool th_selected(const char *name, char **filters, int nfilters)
{
	if (!nfilters)
		return true;
	for (int i = 0; i < nfilters; i++)
		if (!strcmp(filters[i], name))
			return true;
	return false;
}

static int th_main(int argc, char **argv)
{
	static struct th_case cases[4096];
	char *filters[64];
	int ncases = 0, nfilters = 0, list = 0, opt;

	while ((opt = getopt(argc, argv, "lt:h")) != -1) {
		if (opt == 'l')
			list = 1;
		else if (opt == 't' && nfilters < 64)
			filters[nfilters++] = optarg;
		else {
			fprintf(opt == 'h' ? stdout : stderr,
				"usage: %s [-l] [-t NAME]...\n", argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	for (struct th_test *t = th_tests; t; t = t->next) {
		bool any_variant = false;

		for (struct th_variant *v = th_variants; t->fixture && v; v = v->next) {
			if (strcmp(v->fixture, t->fixture) || ncases >= 4096)
				continue;
			any_variant = true;
			cases[ncases] = (struct th_case){ t, v, "" };
			snprintf(cases[ncases].full_name, 256, "%s.%s.%s",
				 t->fixture, v->name, t->name);
			ncases++;
		}
		if (!any_variant && ncases < 4096) {
			cases[ncases] = (struct th_case){ t, NULL, "" };
			snprintf(cases[ncases].full_name, 256, "%s%s%s",
				 t->fixture ? t->fixture : "", t->fixture ? "." : "",
				 t->name);
			ncases++;
		}
	}
	if (list) {
		for (int i = 0; i < ncases; i++)
			puts(cases[i].full_name);
		return 0;
	}
	int selected = 0, passed = 0, skipped = 0;

	for (int i = 0; i < ncases; i++)
		selected += th_selected(cases[i].full_name, filters, nfilters);
	printf("TAP version 13\n1..%d\n", selected);
	for (int i = 0, n = 0; i < ncases; i++) {
		int skip = 0;

		if (!th_selected(cases[i].full_name, filters, nfilters))
			continue;
		passed += th_run_case(&cases[i], ++n, &skip);
		skipped += skip;
	}
	printf("# %d passed, %d failed, %d skipped\n", passed - skipped,
	       selected - passed, skipped);
	if (passed != selected)
		return 1;
	return (selected && skipped == selected) ? 77 : 0;
}

#define TEST_HARNESS_MAIN \
	int main(int argc, char **argv) { return th_main(argc, argv); }

#endif
