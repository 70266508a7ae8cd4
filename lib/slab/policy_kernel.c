// SPDX-License-Identifier: MIT
/*
 * The kernel policy: lib/slab as 5.15's SLUB (policy.h), libuks's own.
 * Not built into libuks-malloc.so, which must not link libgcc's unwinder.
 */
#include <unwind.h>

#include "slab/policy.h"

/*
 * 5.15's kmalloc_caches[] indices: 3..13 are 8 bytes to 8 KiB (PAGE_SIZE
 * * 2), 1 and 2 the 96- and 192-byte classes.
 */
static const uint16_t kernel_classes[] = {
	0, 96, 192, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192,
};

struct unwind_state {
	unsigned long *addrs;
	unsigned int nr, max, skip;
};

static _Unwind_Reason_Code unwind_one(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_state *st = arg;
	unsigned long ip = (unsigned long)_Unwind_GetIP(ctx);

	if (!ip)
		return _URC_END_OF_STACK;
	if (st->skip) {
		st->skip--;
		return _URC_NO_REASON;
	}
	st->addrs[st->nr++] = ip;
	return st->nr == st->max ? _URC_END_OF_STACK : _URC_NO_REASON;
}

static void unwind_prepare(void)
{
}

/*
 * libgcc's unwinder is called directly (not glibc's backtrace(), which
 * dlopen()s it and would recurse into the allocator).
 */
static __attribute__((noinline)) unsigned int unwind_stack(unsigned long *addrs, unsigned int max,
							    unsigned int skip)
{
	struct unwind_state st = { addrs, 0, max, skip };

	if (max)
		_Unwind_Backtrace(unwind_one, &st);
	return st.nr;
}

const struct slab_policy __uks_slab_kernel_policy = {
	.name = "kernel",
	.class_size = kernel_classes,
	.nr_classes = sizeof(kernel_classes) / sizeof(kernel_classes[0]),
	.kmalloc_minalign = 8,		/* ARCH_KMALLOC_MINALIGN on x86-64 */
	.stack_trace_prepare = unwind_prepare,
	.stack_trace = unwind_stack,
};

/* libuks starts with the kernel policy; the preload defines its own. */
const struct slab_policy *__uks_slab_policy = &__uks_slab_kernel_policy;
