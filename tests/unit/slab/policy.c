// SPDX-License-Identifier: MIT
/*
 * The two slab policies (lib/slab/policy.h): each test runs once under
 * the kernel policy, libuks's, and once under the malloc policy, which
 * libuks-malloc.so runs, both selected before the allocator starts.
 */
#include <errno.h>
#include <signal.h>
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

static const unsigned int kernel_classes[] = {
	8, 16, 32, 64, 96, 128, 192, 256, 512, 1024, 2048, 4096, 8192,
};

static const unsigned int malloc_classes[] = {
	16, 32, 48, 64, 80, 96, 112, 128, 192, 256, 384, 512, 768, 1024,
	1280, 1536, 1792, 2048, 2336, 2720, 3264, 3632, 4096, 4672, 5456, 6544, 8192,
};

FIXTURE(policy) {
	int unused;
};

FIXTURE_VARIANT(policy) {
	const struct slab_policy *policy;
	bool in_malloc;
	const unsigned int *classes;
	size_t nr_classes;
};

FIXTURE_VARIANT_ADD(policy, kernel) {
	.policy = &__uks_slab_kernel_policy,
	.classes = kernel_classes,
	.nr_classes = sizeof(kernel_classes) / sizeof(kernel_classes[0]),
};

FIXTURE_VARIANT_ADD(policy, malloc) {
	.policy = &__uks_slab_malloc_policy,
	.in_malloc = true,
	.classes = malloc_classes,
	.nr_classes = sizeof(malloc_classes) / sizeof(malloc_classes[0]),
};

FIXTURE_SETUP(policy)
{
	/* Each test is a fresh process: the allocator has not started. */
	unsetenv("UKS_SLUB_DEBUG");
	unsetenv("UKS_SLUB_SHEAVES");
	unsetenv("UKS_SLUB_MIN_ORDER");
	unsetenv("UKS_SLUB_MIN_OBJECTS");
	ASSERT_EQ(0, __uks_slab_select_policy(variant->policy));
	(void)self;
}

FIXTURE_TEARDOWN(policy)
{
	(void)self;
	(void)variant;
}

/* Is @name one of the caches? */
static bool have_cache(const char *name)
{
	struct uks_kmem_cache *s;
	bool found = false;

	pthread_mutex_lock(&__uks_slab_mutex);
	list_for_each_entry(s, &__uks_slab_caches, list)
		found |= !strcmp(s->name, name);
	pthread_mutex_unlock(&__uks_slab_mutex);
	return found;
}

/* Every size to 8 KiB takes the smallest class of the policy it fits in. */
TEST_F(policy, kmalloc_takes_the_smallest_class_that_fits)
{
	size_t c = 0;

	for (unsigned int size = 1; size <= 8192; size++) {
		void *p = uks_kmalloc(size);

		while (variant->classes[c] < size)
			c++;
		ASSERT_NONNULL(p);
		if (uks_ksize(p) != variant->classes[c])
			TH_LOG("%u bytes: a slot of %zu", size, uks_ksize(p));
		ASSERT_EQ(variant->classes[c], uks_ksize(p));
		uks_kfree(p);
	}
	/* Past the caches: the pages needed, or a whole buddy block. */
	{
		void *p = uks_kmalloc(9000);

		ASSERT_NONNULL(p);
		EXPECT_EQ(variant->in_malloc ? 12288 : 16384, uks_ksize(p));
		uks_kfree(p);
	}
}

/* The kernel makes every class at boot; malloc makes each on first use. */
TEST_F(policy, kmalloc_classes_made_at_init_or_on_first_use)
{
	void *p = uks_kmalloc(64);

	ASSERT_NONNULL(p);
	EXPECT_TRUE(have_cache("kmalloc-64"));
	EXPECT_EQ(!variant->in_malloc, have_cache("kmalloc-8k"));
	uks_kfree(p);
	p = uks_kmalloc(8000);
	ASSERT_NONNULL(p);
	EXPECT_TRUE(have_cache("kmalloc-8k"));
	EXPECT_EQ(!variant->in_malloc, have_cache("kmalloc-4k"));
	uks_kfree(p);
}

/* Alignment to 16 is the malloc policy's minimum: 100 bytes stay in 112. */
TEST_F(policy, kmalloc_minimum_alignment)
{
	void *p = uks_kmalloc_aligned(100, 16);

	ASSERT_NONNULL(p);
	EXPECT_EQ(0, (uintptr_t)p % 16);
	EXPECT_EQ(variant->in_malloc ? 112 : 128, uks_ksize(p));
	uks_kfree(p);
	p = uks_kmalloc(24);
	ASSERT_NONNULL(p);
	EXPECT_EQ(0, (uintptr_t)p % (variant->in_malloc ? 16 : 8));
	uks_kfree(p);
}

TEST_F(policy, kmalloc_sheaves_by_default_in_malloc_only)
{
	struct uks_kmem_cache *s = __uks_kmalloc_slab(64);

	ASSERT_NONNULL(s);
	EXPECT_EQ(variant->in_malloc, !!(s->flags & UKS_SLAB_SHEAVES));
}

/* The free pointer: 5.15's middle of the object, or malloc's first word. */
TEST_F(policy, free_pointer_offset)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("policy_fp", 64, 8, 0, NULL);
	struct uks_kmem_cache *c;

	ASSERT_NONNULL(s);
	EXPECT_EQ(variant->in_malloc ? 0 : 32, s->offset);
	/* A constructor's state must survive: after the object either way. */
	c = uks_kmem_cache_create("policy_fp_ctor", 64, 8, 0, (void (*)(void *))abort);
	ASSERT_NONNULL(c);
	EXPECT_EQ(64, c->offset);
	EXPECT_EQ(0, uks_kmem_cache_destroy(c));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/*
 * A CPU that frees one object of each of many full slabs: 5.15 keeps
 * them on its partial list until they hold cpu_partial free objects; the
 * malloc policy (5.16) keeps cpu_partial_slabs slabs.
 */
TEST_F(policy, cpu_partial_limit_in_objects_or_slabs)
{
	enum { N = 16 * 24 };
	struct uks_kmem_cache *s;
	void **objs = calloc(N, sizeof(*objs));
	uintptr_t last_page;
	int objects = -1, slabs = -1;
	char buf[512];

	ASSERT_NONNULL(objs);
	if (!pin_to_cpu(sched_getcpu()))
		SKIP(return, "cannot pin to a CPU");
	s = uks_kmem_cache_create("policy_partial", 256, 8, 0, NULL);
	ASSERT_NONNULL(s);
	ASSERT_EQ(0, s->oo.x >> 16);	/* order 0: a slab is a page */
	ASSERT_EQ(13, s->cpu_partial);
	for (int i = 0; i < N; i++) {
		objs[i] = uks_kmem_cache_alloc(s);
		ASSERT_NONNULL(objs[i]);
	}
	/* One object of each full slab; the CPU slab's own page is left. */
	last_page = (uintptr_t)objs[N - 1] >> 12;
	for (int i = 0; i < N; i++) {
		uintptr_t page = (uintptr_t)objs[i] >> 12;
		bool seen = page == last_page;

		for (int j = 0; j < i && !seen; j++)
			seen = objs[j] && (uintptr_t)objs[j] >> 12 == page;
		if (!seen) {
			uks_kmem_cache_free(s, objs[i]);
			objs[i] = NULL;
		}
	}
	ASSERT_GT(uks_kmem_cache_attr_show(s, "slabs_cpu_partial", buf, sizeof(buf)), 0);
	ASSERT_EQ(2, sscanf(buf, "%d(%d)", &objects, &slabs));
	TH_LOG("slabs_cpu_partial %s", strtok(buf, "\n"));
	if (variant->in_malloc)
		EXPECT_LE(slabs, (int)s->cpu_partial_slabs);
	else
		EXPECT_GT(slabs, (int)s->cpu_partial_slabs + 1);
	for (int i = 0; i < N; i++)
		if (objs[i])
			uks_kmem_cache_free(s, objs[i]);
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
	free(objs);
}

/*
 * Both unwinders record the same frames: with nothing skipped the first
 * is in __uks_stack_trace(), the next in its caller.
 */
static __attribute__((noinline)) unsigned int trace_here(unsigned long *addrs)
{
	unsigned int n = __uks_stack_trace(addrs, 4, 0);

	__asm__ __volatile__("" ::: "memory");	/* no tail call */
	return n;
}

static bool in_function(unsigned long addr, const void *fn)
{
	return addr > (unsigned long)fn && addr < (unsigned long)fn + 256;
}

TEST_F(policy, stack_trace_starts_at_its_caller)
{
	unsigned long addrs[4] = { 0 };

#if defined(__SANITIZE_ADDRESS__)
	/* Its interceptor of backtrace() records itself as the first frame. */
	if (variant->in_malloc)
		SKIP(return, "ASan intercepts backtrace()");
#endif
	__uks_stack_trace_prepare();
	ASSERT_GE(trace_here(addrs), 2);
	EXPECT_TRUE(in_function(addrs[0], (const void *)__uks_stack_trace));
	EXPECT_TRUE(in_function(addrs[1], (const void *)trace_here));
}

/*
 * The naive double free check stops the process either way: the kernel
 * policy with 5.15's report, the malloc policy with glibc's message.
 */
TEST_F(policy, double_free_aborts)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("policy_df", 64, 8, 0, NULL);
	char out[512] = "";
	int fd[2], status;
	ssize_t len;
	pid_t pid;

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, pipe(fd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		void *p = uks_kmem_cache_alloc(s);

		dup2(fd[1], STDERR_FILENO);
		uks_kmem_cache_free(s, p);
		uks_kmem_cache_free(s, p);
		_exit(0);
	}
	close(fd[1]);
	len = read(fd[0], out, sizeof(out) - 1);
	out[len > 0 ? len : 0] = '\0';
	close(fd[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	if (variant->in_malloc)
		EXPECT_NONNULL(strstr(out, "uks-malloc: free(): double free"));
	else
		EXPECT_NONNULL(strstr(out, "SLUB policy_df: double free of object"));
}

TEST_F(policy, fixed_once_the_allocator_runs)
{
	void *p = uks_kmalloc(8);

	ASSERT_NONNULL(p);
	EXPECT_EQ(0, __uks_slab_select_policy(variant->policy));
	EXPECT_EQ(-EBUSY, __uks_slab_select_policy(variant->in_malloc ? &__uks_slab_kernel_policy :
						    &__uks_slab_malloc_policy));
	uks_kfree(p);
}

TEST_HARNESS_MAIN
