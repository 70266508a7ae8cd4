// SPDX-License-Identifier: MIT
/*
 * The malloc policy: lib/slab as libuks-malloc.so runs it (policy.h).
 * Built into libuks too, where the unit tests select it.
 */
#include <execinfo.h>
#include <stdatomic.h>

#include "slab/policy.h"

/*
 * The malloc policy's classes: 16-byte steps to 128, then two per
 * doubling to 1 KiB (192, 256, 384, 512, 768, 1024), four per doubling
 * to 2 KiB (1280, 1536, 1792, 2048), and above that sizes fitted to the
 * 32 KiB slab (order 3) that calculate_order() gives them: each is the
 * largest 16-byte multiple that still packs 14, 12, 10, 9, 8, 7, 6, 5 or
 * 4 objects (2336, 2720, 3264, 3632, 4096, 4672, 5456, 6544, 8192).
 *
 * Power-of-two classes waste a third of a uniform 257..4096-byte request
 * mix, and a heap that much sparser touches more pages: on
 * bench/malloc-peers' mixed pattern the program's own first touches of
 * its objects are most of the time.  Four per doubling below 1 KiB
 * (jemalloc's spacing) wasted less, but every class keeps its own CPU
 * slabs, partial slabs and sheaves on each CPU: prodcons (16..512-byte
 * objects across two threads) had 16 classes in use and a peak RSS 160
 * KiB higher, larson 300 KiB, while mixed's RSS was 1% lower and its time
 * the same.  Above 1 KiB that overhead is small beside the waste.
 * Evenly spaced classes there packed badly: 5120, 6144 and 7168-byte
 * slots left 2, 2 and 4 KiB of each 32 KiB slab unused, and 7168 held no
 * more objects per slab than 8192.  sqlite's 4368-byte page blocks went
 * to 5120-byte slots, 1.23x glibc's peak RSS; the fitted 4672 holds them.
 * Power-of-two classes stay among them, naturally aligned, for
 * uks_kmalloc_aligned().
 */
static const uint16_t malloc_classes[SLAB_POLICY_MAX_CLASSES] = {
	0, 16, 32, 48, 64, 80, 96, 112, 128,
	192, 256, 384, 512, 768, 1024,
	1280, 1536, 1792, 2048,
	2336, 2720, 3264, 3632, 4096, 4672, 5456, 6544, 8192,
};

/*
 * The preload has no unwinder of its own: libgcc's, linked in, was 20 KiB
 * of text resident in every process.  glibc's backtrace() loads libgcc_s
 * on its first call, and that dlopen() allocates, so the first call is
 * made by __uks_stack_trace_prepare(), which a track's capture calls
 * before it takes any lock; allocations it makes meanwhile get empty
 * stacks.  Until then (with no U in slub_debug, at all), reports print no
 * stack either.
 */
static atomic_int backtrace_state;	/* 0 cold, 1 loading, 2 ready */

static void backtrace_prepare(void)
{
	int cold = 0;
	void *frame;

	if (atomic_load_explicit(&backtrace_state, memory_order_acquire) == 2 ||
	    !atomic_compare_exchange_strong(&backtrace_state, &cold, 1))
		return;
	backtrace(&frame, 1);
	atomic_store_explicit(&backtrace_state, 2, memory_order_release);
}

static __attribute__((noinline)) unsigned int backtrace_stack(unsigned long *addrs,
							       unsigned int max, unsigned int skip)
{
	void *frames[64];
	int n;
	unsigned int nr = 0;

	if (atomic_load_explicit(&backtrace_state, memory_order_acquire) != 2)
		return 0;
	n = backtrace(frames, (int)(max + skip < 64 ? max + skip : 64));
	for (int i = (int)skip; i < n && nr < max; i++)
		addrs[nr++] = (unsigned long)frames[i];
	return nr;
}

const struct slab_policy __uks_slab_malloc_policy = {
	.name = "malloc",
	.class_size = malloc_classes,
	.nr_classes = SLAB_POLICY_MAX_CLASSES,
	.kmalloc_minalign = 16,		/* the x86-64 malloc ABI */
	/* a class costs a few KiB resident; most programs use half of them */
	.kmalloc_on_demand = true,
	.kmalloc_sheaves = true,
	.cpu_partial_in_slabs = true,
	.freeptr_first = true,
	.large_runs = true,
	.in_malloc = true,
	.stack_trace_prepare = backtrace_prepare,
	.stack_trace = backtrace_stack,
};
