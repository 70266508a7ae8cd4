// SPDX-License-Identifier: MIT
/*
 * slub_debug: the slub_debug= syntax, and reports in the 5.15 format for
 * corruptions the kernel reports (red zones, poison, double free, invalid
 * pointers, leaks at destroy), checked line by line from the log sink.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "unit/slab/helper.h"
#include <uks/core.h>
#include <uks/slab.h>
#include "slab/debug.h"
#include "slab/slub.h"

#define ALL_DEBUG (UKS_SLAB_CONSISTENCY_CHECKS | UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | \
		   UKS_SLAB_STORE_USER)

static char logbuf[65536];
static size_t loglen;
static unsigned int levels_seen;	/* bit per enum uks_log_level */

static void capture(enum uks_log_level level, const char *msg, void *arg)
{
	int n = snprintf(logbuf + loglen, sizeof(logbuf) - loglen, "%s\n", msg);

	levels_seen |= 1u << level;
	(void)arg;
	if (n > 0 && (size_t)n < sizeof(logbuf) - loglen)
		loglen += (size_t)n;
}

static void log_reset(void)
{
	loglen = 0;
	logbuf[0] = 0;
	levels_seen = 0;
	uks_set_log_fn(capture, NULL);
}

static bool logged(const char *text)
{
	return strstr(logbuf, text) != NULL;
}

TEST(parse_global_and_per_cache)
{
	static const struct { const char *opt, *cache; unsigned long want; } rows[] = {
		{ "", "any", ALL_DEBUG },
		{ "FZ", "any", UKS_SLAB_CONSISTENCY_CHECKS | UKS_SLAB_RED_ZONE },
		{ "fzput", "any", ALL_DEBUG | UKS_SLAB_TRACE },
		{ "P,kmalloc-64", "kmalloc-64", UKS_SLAB_POISON },
		{ "P,kmalloc-64", "kmalloc-640", 0 },
		{ "P,kmalloc-64", "kmalloc-6", 0 },
		{ "P,kmalloc-*", "kmalloc-4k", UKS_SLAB_POISON },
		{ ",dentry", "dentry", ALL_DEBUG },
		{ ",dentry", "inode", 0 },
		{ "U,a,b;Z,c", "b", UKS_SLAB_STORE_USER },
		{ "U,a,b;Z,c", "c", UKS_SLAB_RED_ZONE },
		{ "U,a,b;Z,c", "d", 0 },
		{ "U,a;F", "d", UKS_SLAB_CONSISTENCY_CHECKS },
		{ "U,a;F", "a", UKS_SLAB_STORE_USER },
		{ "FZ-P", "x", UKS_SLAB_POISON },
		{ ";;;P;;", "x", UKS_SLAB_POISON },
		{ "A", "x", UKS_SLAB_FAILSLAB },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		unsigned long got;

		ASSERT_EQ(0, __uks_slub_debug_parse(rows[i].opt));
		got = __uks_slub_debug_flags(rows[i].cache, 0);
		if (got != rows[i].want)
			TH_LOG("slub_debug=%s on %s: %#lx, want %#lx", rows[i].opt, rows[i].cache,
			       got, rows[i].want);
		EXPECT_EQ(rows[i].want, got);
	}
	/* NOLEAKTRACE caches don't get U from the global options. */
	__uks_slub_debug_parse("U");
	EXPECT_EQ(UKS_SLAB_NOLEAKTRACE, __uks_slub_debug_flags("x", UKS_SLAB_NOLEAKTRACE));
	__uks_slub_debug_parse("-");
}

TEST(parse_garbage)
{
	char junk[4096];

	log_reset();
	__uks_slub_debug_parse("FQ");
	EXPECT_TRUE(logged("slub_debug option 'Q' unknown. skipped"));
	EXPECT_EQ(UKS_SLAB_CONSISTENCY_CHECKS, __uks_slub_debug_flags("x", 0));
	/* Found by fuzzing: a list followed by a block that starts with ','. */
	EXPECT_EQ(0, __uks_slub_debug_parse("avvvv,bb;,bb;\x90;-\x90;-"));
	EXPECT_EQ(UKS_SLAB_FAILSLAB, __uks_slub_debug_flags("bb", 0));
	EXPECT_EQ(0, __uks_slub_debug_flags("kmalloc-64", 0));
	memset(junk, 'F', sizeof(junk) - 1);
	junk[sizeof(junk) - 1] = 0;
	EXPECT_EQ(-E2BIG, __uks_slub_debug_parse(junk));
	/* A long cache list, as a kernel command line may hold (up to 2047 bytes). */
	strcpy(junk, "P");
	while (strlen(junk) < 1990)
		strcat(junk, ",cache-with-a-long-name");
	strcat(junk, ",last");
	EXPECT_EQ(0, __uks_slub_debug_parse(junk));
	EXPECT_EQ(UKS_SLAB_POISON, __uks_slub_debug_flags("last", 0));
	/* Random bytes never crash the parser or the matcher. */
	srand(1);
	for (int i = 0; i < 2000; i++) {
		char s[64];
		int n = rand() % 63;

		for (int j = 0; j < n; j++)
			s[j] = (char)(1 + rand() % 255);
		s[n] = 0;
		__uks_slub_debug_parse(s);
		__uks_slub_debug_flags("kmalloc-64", 0);
	}
	__uks_slub_debug_parse("-");
}

static void ctor_nop(void *p)
{
	(void)p;
}

/* 1 if @attr of cache @name reads "1", 0 if "0", -1 otherwise. */
static int attr_bool(struct uks_kmem_cache *s, const char *attr)
{
	char buf[16];

	if (uks_kmem_cache_attr_show(s, attr, buf, sizeof(buf)) != 2)
		return -1;
	return buf[0] == '1' ? 1 : buf[0] == '0' ? 0 : -1;
}

/*
 * slub_debug=O drops the metadata flags where they raise get_order() of
 * one object above the bare object's, constructor or not (5.15).
 */
TEST(option_o_compares_with_the_bare_object)
{
	static const struct { const char *name; unsigned int size; bool ctor; int red_zone; } rows[] = {
		{ "t_o_4090_ctor", 4090, true, 0 },
		{ "t_o_4096_ctor", 4096, true, 0 },
		{ "t_o_4096", 4096, false, 0 },
		{ "t_o_100_ctor", 100, true, 1 },
		{ "t_o_5000", 5000, false, 1 },	/* order 1 either way */
	};

	ASSERT_EQ(0, __uks_slub_debug_parse("ZO"));
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct uks_kmem_cache *s = uks_kmem_cache_create(rows[i].name, rows[i].size, 0, 0,
								 rows[i].ctor ? ctor_nop : NULL);

		ASSERT_NONNULL(s);
		if (attr_bool(s, "red_zone") != rows[i].red_zone)
			TH_LOG("%s: red_zone %d, want %d", rows[i].name, attr_bool(s, "red_zone"),
			       rows[i].red_zone);
		EXPECT_EQ(rows[i].red_zone, attr_bool(s, "red_zone"));
		EXPECT_EQ(0, uks_kmem_cache_destroy(s));
	}
	__uks_slub_debug_parse("-");
}

/*
 * The buddy allocator's largest block is 2 MiB: a cache whose one object
 * with its debug metadata needs more is refused at creation (5.15 would
 * use order 10), not created to fail every allocation.
 */
TEST(a_slab_past_the_largest_block_is_refused)
{
	struct uks_kmem_cache *s;
	void *p;

	log_reset();
	EXPECT_EQ(NULL, uks_kmem_cache_create("t_2m_rz", 2 << 20, 0, UKS_SLAB_RED_ZONE, NULL));
	EXPECT_TRUE(logged("exceed the largest slab"));
	EXPECT_EQ(NULL, uks_kmem_cache_create("t_2m_su", (2 << 20) - 52, 0, UKS_SLAB_STORE_USER,
					      NULL));
	s = uks_kmem_cache_create("t_2m", 2 << 20, 0, 0, NULL);
	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	EXPECT_NONNULL(p);
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
	s = uks_kmem_cache_create("t_1m_rz", 1 << 20, 0, UKS_SLAB_RED_ZONE, NULL);
	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	EXPECT_NONNULL(p);
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(report_right_redzone_in_kernel_format)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_rz", 64, 0, ALL_DEBUG, NULL);
	unsigned char *p;

	ASSERT_NONNULL(s);
	EXPECT_EQ(400u, s->size);	/* 5.15 FZPU layout of 64-byte objects, align 8 */
	p = uks_kmem_cache_alloc(s);
	for (int i = 0; i < 64; i++)
		ASSERT_EQ(i == 63 ? 0xa5 : 0x6b, p[i]);	/* allocated objects stay poisoned */
	log_reset();
	p[64] = 0x12;
	EXPECT_GT(uks_kmem_cache_validate(s), 0);
	EXPECT_TRUE(logged("=============================================================================\n"
			   "BUG t_rz (Not tainted): Right Redzone overwritten\n"
			   "-----------------------------------------------------------------------------\n\n"));
	EXPECT_TRUE(logged(". First byte 0x12 instead of 0xcc\n"));
	EXPECT_TRUE(logged("Allocated in "));
	EXPECT_TRUE(logged(" age="));
	EXPECT_TRUE(logged("Slab 0x"));
	EXPECT_TRUE(logged("Redzone  "));
	EXPECT_TRUE(logged(": 12 cc cc cc cc cc cc cc"));
	EXPECT_TRUE(logged("Object   "));
	EXPECT_TRUE(logged("6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b 6b a5  kkkkkkkkkkkkkkk."));
	EXPECT_TRUE(logged("FIX t_rz: Restoring Right Redzone 0x"));
	/* Restored: clean now, and every later report says Tainted. */
	EXPECT_EQ(0, uks_kmem_cache_validate(s));
	p[-1] = 0;
	log_reset();
	uks_kmem_cache_free(s, p);
	EXPECT_TRUE(logged("BUG t_rz (Tainted: G    B            ): Left Redzone overwritten"));
	EXPECT_TRUE(logged("not freed"));
	uks_kmem_cache_free(s, p);	/* now it frees */
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/* The checks' scan: the first byte that differs, at every length and offset. */
TEST(memchr_inv_finds_the_first_other_byte)
{
	uint8_t buf[160];

	for (size_t off = 0; off < 8; off++) {
		for (size_t len = 0; len + off <= 140; len++) {
			memset(buf, 0xcc, sizeof(buf));
			ASSERT_NULL(__uks_memchr_inv(buf + off, 0xcc, len));
			for (size_t at = 0; at < len; at++) {
				buf[off + at] = 0xcd;
				if (at + 1 < len)
					buf[off + len - 1] = 0;	/* a later one too */
				ASSERT_EQ(buf + off + at, __uks_memchr_inv(buf + off, 0xcc, len));
				memset(buf, 0xcc, sizeof(buf));
			}
			buf[off + len] = 0;	/* past the end: not looked at */
			ASSERT_NULL(__uks_memchr_inv(buf + off, 0xcc, len));
		}
	}
}

/* Red zone of a fresh object of @s overwritten; the report names pid=@pid. */
static bool report_names_pid(struct uks_kmem_cache *s, pid_t pid)
{
	unsigned char *p = uks_kmem_cache_alloc(s);
	char want[32];

	if (!p)
		return false;
	log_reset();
	p[64] = 0x12;
	uks_kmem_cache_validate(s);
	uks_kmem_cache_free(s, p);
	snprintf(want, sizeof(want), " pid=%d\n", (int)pid);
	return logged(want);
}

static void *report_from_thread(void *arg)
{
	return (void *)(uintptr_t)report_names_pid(arg, gettid());
}

/* Tracks name the thread that allocated, in threads and in fork's child. */
TEST(tracks_name_the_thread)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_tid", 64, 0, ALL_DEBUG, NULL);
	pthread_t th;
	void *ok = NULL;
	int status;
	pid_t pid;

	ASSERT_NONNULL(s);
	EXPECT_TRUE(report_names_pid(s, gettid()));
	ASSERT_EQ(0, pthread_create(&th, NULL, report_from_thread, s));
	ASSERT_EQ(0, pthread_join(th, &ok));
	EXPECT_TRUE(ok != NULL);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		_exit(report_names_pid(s, getpid()) ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	uks_set_log_fn(NULL, NULL);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(report_use_after_free_and_double_free)
{
	struct uks_kmem_cache *s;
	unsigned char *p, *q;

	KERNEL_POLICY_ONLY();	/* malloc's free() aborts: tests/slab/bad-free.sh */
	s = uks_kmem_cache_create("t_uaf", 48, 0, ALL_DEBUG, NULL);
	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	q = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	log_reset();
	p[10] = 0;	/* write after free */
	EXPECT_EQ(2, uks_kmem_cache_validate(s));
	EXPECT_TRUE(logged("): Poison overwritten"));
	EXPECT_TRUE(logged("First byte 0x0 instead of 0x6b"));
	EXPECT_TRUE(logged("Freed in "));

	log_reset();
	uks_kmem_cache_free(s, p);	/* double free */
	EXPECT_TRUE(logged("): Object already free"));
	EXPECT_TRUE(logged("FIX t_uaf: Object at 0x"));

	log_reset();
	uks_kmem_cache_free(s, q + 1);	/* not an object start */
	EXPECT_TRUE(logged("Invalid object pointer 0x"));
	uks_kmem_cache_free(s, q);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(destroy_lists_remaining_objects)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_leak", 32, 0, UKS_SLAB_STORE_USER, NULL);
	void *p, *q;

	ASSERT_NONNULL(s);
	p = uks_kmem_cache_alloc(s);
	q = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, q);
	log_reset();
	EXPECT_EQ(-EBUSY, uks_kmem_cache_destroy(s));
	EXPECT_TRUE(logged("Objects remaining in t_leak on __kmem_cache_shutdown()"));
	EXPECT_TRUE(logged("Object 0x"));
	EXPECT_TRUE(logged("Allocated in "));
	EXPECT_TRUE(logged("kmem_cache_destroy t_leak: Slab cache still has objects"));
	uks_kmem_cache_free(s, p);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(trace_option_logs_each_operation)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_trace", 16, 0, UKS_SLAB_TRACE, NULL);
	void *p;

	ASSERT_NONNULL(s);
	log_reset();
	p = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, p);
	EXPECT_TRUE(logged("TRACE t_trace alloc 0x"));
	EXPECT_TRUE(logged("TRACE t_trace free 0x"));
	EXPECT_TRUE(logged("Call Trace:"));
	/* the line, the object and the stack at one level, which the default sink shows */
	EXPECT_EQ(1u << UKS_LOG_WARN, levels_seen);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST(hardened_freelist_is_mangled)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_hard", 64, 0, 0, NULL);
	struct uks_kmem_cache *plain = uks_kmem_cache_create("t_plain", 64, 0,
							     UKS_SLAB_NO_HARDENING, NULL);
	char *a, *b;

	ASSERT_NONNULL(s);
	ASSERT_NONNULL(plain);
	EXPECT_NE(0, s->random);
	EXPECT_EQ(0, plain->random);
	a = uks_kmem_cache_alloc(plain);
	b = uks_kmem_cache_alloc(plain);
	uks_kmem_cache_free(plain, b);
	uks_kmem_cache_free(plain, a);
	/* In the clear, a's free pointer (mid-object) is b. */
	EXPECT_EQ((void *)b, *(void **)(a + plain->offset));
	a = uks_kmem_cache_alloc(s);
	b = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, b);
	uks_kmem_cache_free(s, a);
	EXPECT_NE((void *)b, *(void **)(a + s->offset));
	EXPECT_EQ((void *)b, get_freepointer(s, a));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
	EXPECT_EQ(0, uks_kmem_cache_destroy(plain));
}

/*
 * Without F an a, b, a double free goes unchecked (as in the kernel) and
 * leaves a cyclic freelist; reporting at destroy must still terminate.
 */
TEST_TIMEOUT(destroy_survives_a_cyclic_freelist, 20)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_cycle", 64, 0, UKS_SLAB_RED_ZONE, NULL);
	void *a, *b;

	ASSERT_NONNULL(s);
	a = uks_kmem_cache_alloc(s);
	b = uks_kmem_cache_alloc(s);
	uks_kmem_cache_free(s, a);
	uks_kmem_cache_free(s, b);
	uks_kmem_cache_free(s, a);
	log_reset();
	EXPECT_EQ(-EBUSY, uks_kmem_cache_destroy(s));
	EXPECT_TRUE(logged("Objects remaining in t_cycle"));
}

static void double_free_child(unsigned long flags)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_df", 64, 0, flags, NULL);
	void *p = uks_kmem_cache_alloc(s);

	uks_set_log_fn(NULL, NULL);
	uks_kmem_cache_free(s, p);
	uks_kmem_cache_free(s, p);	/* BUG_ON(object == fp): abort() */
	exit(0);
}

/*
 * An object of a full slab that is no longer the CPU slab: both frees go
 * through __slab_free(), the second links the object to itself.
 */
static void slow_path_double_free_child(unsigned long flags)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_df_slow", 64, 0, flags, NULL);
	void *first = uks_kmem_cache_alloc(s);

	for (int i = 0; i < 1000; i++)
		uks_kmem_cache_alloc(s);
	uks_set_log_fn(NULL, NULL);
	uks_kmem_cache_free(s, first);
	uks_kmem_cache_free(s, first);	/* set_freepointer(first, first): abort() */
	exit(0);
}

/* The bulk free's section checks each link as set_freepointer() does. */
static void bulk_double_free_child(unsigned long flags)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_df_bulk", 64, 0, flags, NULL);
	void *p[3];

	p[0] = uks_kmem_cache_alloc(s);
	p[1] = uks_kmem_cache_alloc(s);
	p[2] = p[1];
	uks_set_log_fn(NULL, NULL);
	uks_kmem_cache_free_bulk(s, 3, p);	/* p[1] twice in a row: abort() */
	exit(0);
}

static void expect_double_free_aborts(struct th_result *_th_r, void (*child)(unsigned long),
				      unsigned long flags)
{
	pid_t pid = fork();
	int status;

	ASSERT_GE(pid, 0);
	if (!pid) {
		alarm(10);	/* a hang is a failure too (SIGALRM) */
		child(flags);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGABRT, WTERMSIG(status));
}

TEST(naive_double_free_aborts)
{
	expect_double_free_aborts(_th_r, double_free_child, 0);
}

TEST(naive_double_free_in_a_bulk_free_aborts)
{
	expect_double_free_aborts(_th_r, bulk_double_free_child, 0);
}

/* The sheaf's top, checked on the exported fast path too. */
TEST(naive_double_free_aborts_with_sheaves)
{
	expect_double_free_aborts(_th_r, double_free_child, UKS_SLAB_SHEAVES);
}

/* Off the CPU freelist: the remote-slab path, and debug caches without F. */
TEST(naive_double_free_aborts_on_the_slow_path)
{
	expect_double_free_aborts(_th_r, slow_path_double_free_child, 0);
	expect_double_free_aborts(_th_r, slow_path_double_free_child, UKS_SLAB_RED_ZONE);
	expect_double_free_aborts(_th_r, slow_path_double_free_child, UKS_SLAB_POISON);
	expect_double_free_aborts(_th_r, double_free_child, UKS_SLAB_RED_ZONE);
	expect_double_free_aborts(_th_r, double_free_child, UKS_SLAB_POISON);
	expect_double_free_aborts(_th_r, bulk_double_free_child, UKS_SLAB_RED_ZONE);
}

/*
 * kmem_cache_free() to a cache the object is not from: reported as the
 * kernel's cache_from_obj() does, and the object goes back to its own
 * cache, on the exported fast paths as on the full ones.
 */
static void check_wrong_cache(struct th_result *_th_r, unsigned long flags)
{
	struct uks_kmem_cache *a = uks_kmem_cache_create("t_wrong_a", 64, 0, flags, NULL);
	struct uks_kmem_cache *b = uks_kmem_cache_create("t_wrong_b", 64, 0, flags, NULL);
	void *pa, *pb;

	ASSERT_NONNULL(a);
	ASSERT_NONNULL(b);
	pa = uks_kmem_cache_alloc(a);
	pb = uks_kmem_cache_alloc(b);	/* b's CPU slab exists: the fast path runs */
	ASSERT_NONNULL(pa);
	ASSERT_NONNULL(pb);
	log_reset();
	uks_kmem_cache_free(b, pa);
	EXPECT_TRUE(logged("Wrong slab cache. t_wrong_b but object is from t_wrong_a"));
	/* with U, who allocated it from the other cache */
	EXPECT_EQ(!!(flags & UKS_SLAB_STORE_USER), logged("Allocated in "));
	uks_kmem_cache_free(b, pb);
	EXPECT_EQ(0, uks_kmem_cache_validate(a));
	EXPECT_EQ(0, uks_kmem_cache_destroy(a));	/* pa was returned to a */
	EXPECT_EQ(0, uks_kmem_cache_destroy(b));
}

TEST(free_to_the_wrong_cache_is_reported)
{
	check_wrong_cache(_th_r, 0);
}

TEST(free_to_the_wrong_cache_is_reported_with_sheaves)
{
	check_wrong_cache(_th_r, UKS_SLAB_SHEAVES);
}

TEST(free_to_the_wrong_cache_is_reported_with_the_tracks)
{
	check_wrong_cache(_th_r, UKS_SLAB_STORE_USER);
}

TEST_HARNESS_MAIN
