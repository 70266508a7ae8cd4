// SPDX-License-Identifier: MIT
/*
 * libuks-malloc.so: the C allocation API over uks kmalloc, for LD_PRELOAD.
 *
 * Every call maps onto the malloc policy's kmalloc size classes (16 B ...
 * 8 KiB, 27 of them: lib/slab/policy.c) and above them onto whole
 * pages or a mapping of their own; UKS_SLUB_DEBUG applies
 * slub_debug to them, so red zones, poisoning and tracking work on any
 * program.  The policy aligns every class to 16 bytes (the x86-64 malloc
 * ABI), where kernel kmalloc uses 8.
 *
 * Thread exit needs nothing: caches are per CPU, not per thread.  fork()
 * is made safe by the allocator's atfork handlers (slub.c).
 *
 * free() and realloc() of a pointer that is not the start of a live
 * allocation (inside an object or a block, on the stack, in someone
 * else's mapping, in freed pages) print "uks-malloc: free(): invalid
 * pointer 0x... (why)" on stderr and abort, as glibc's do
 * (lib/slab/malloc_check.c); so does a double free that is caught (the
 * object freed last, and under UKS_SLUB_DEBUG=F any).  The dynamic
 * loader's start-up allocator hands out memory before ours is bound, but
 * ld.so never frees it with free() (glibc's free() would abort on it
 * too).  malloc_usable_size() of a foreign pointer stays 0, as it only
 * reads.
 *
 * glibc's own entry points that take or report heap memory are ours too,
 * so that a program using them gets answers about the heap it really
 * has: __libc_malloc() and friends and cfree() (a pointer from one freed
 * by the other must work; glibc's free() aborts on ours), malloc_trim()
 * (gives memory back now: uks_slab_trim()), mallinfo2(), mallinfo() and
 * malloc_stats() (uks_slab_usage()).  mallopt() and malloc_info() are
 * left to glibc: its tunables mean nothing here, and it answers for its
 * own, unused, arena.
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "slab/slub.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

/*
 * The allocator runs the malloc policy (lib/slab/policy.h) from its first
 * call, which may come before any constructor.
 */
const struct slab_policy *__uks_slab_policy = &__uks_slab_malloc_policy;
/*
 * The program's call site, which slub_debug's U tracks name ("Allocated
 * in ..."): taken in each exported function and handed down, since the
 * allocator's own return address would be inside this file.
 */
#define CALLER ((unsigned long)__builtin_return_address(0))

static __attribute__((always_inline)) inline void *malloc_at(size_t size, unsigned long caller)
{
	void *p = __uks_malloc(size, caller);

	if (!p)
		errno = ENOMEM;
	return p;
}

SHIM_EXPORT void *malloc(size_t size)
{
	return malloc_at(size, CALLER);
}

SHIM_EXPORT void free(void *p)
{
	/* One lookup both checks the pointer and finds the slab. */
	__uks_free(p);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	size_t bytes;
	void *p;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	p = __uks_kzalloc(bytes ? bytes : 1, CALLER);
	if (!p)
		errno = ENOMEM;
	return p;
}

static __attribute__((always_inline)) inline void *realloc_at(void *p, size_t size,
								unsigned long caller)
{
	bool ours;
	void *q;

	if (!p)
		return malloc_at(size, caller);
	if (!size) {
		free(p);
		return NULL;
	}
	q = __uks_krealloc_if_ours(p, size, &ours, caller);	/* aborts if not ours */
	if (!q)
		errno = ENOMEM;
	return q;
}

SHIM_EXPORT void *realloc(void *p, size_t size)
{
	return realloc_at(p, size, CALLER);
}

SHIM_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc_at(p, bytes, CALLER);
}

static __attribute__((always_inline)) inline void *aligned(size_t align, size_t size,
							     unsigned long caller)
{
	void *p = __uks_kmalloc_aligned(size ? size : 1, align, caller);

	if (!p)
		errno = ENOMEM;
	return p;
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = __uks_kmalloc_aligned(size ? size : 1, align, CALLER);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

SHIM_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	if (!align || (align & (align - 1))) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(align, size, CALLER);
}

SHIM_EXPORT void *memalign(size_t align, size_t size)
{
	size_t a = 16;

	/* glibc rounds a non-power-of-two alignment up. */
	while (a < align && a)
		a <<= 1;
	if (!a) {
		errno = EINVAL;
		return NULL;
	}
	return aligned(a, size, CALLER);
}

SHIM_EXPORT void *valloc(size_t size)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), size, CALLER);
}

SHIM_EXPORT void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (size > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, (size + page - 1) & ~(page - 1), CALLER);
}

SHIM_EXPORT size_t malloc_usable_size(void *p)
{
	return uks_ksize(p);	/* 0 for NULL and for pointers not ours */
}

/*
 * The same functions under the names glibc exports them by as well (each
 * compiles to a jump; an alias would lose the prototypes' attributes).
 */
void *__libc_malloc(size_t size);
void __libc_free(void *p);
void cfree(void *p);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void *__libc_valloc(size_t size);
void *__libc_pvalloc(size_t size);

SHIM_EXPORT void *__libc_malloc(size_t size) { return malloc(size); }
SHIM_EXPORT void __libc_free(void *p) { free(p); }
SHIM_EXPORT void cfree(void *p) { free(p); }
SHIM_EXPORT void *__libc_calloc(size_t n, size_t size) { return calloc(n, size); }
SHIM_EXPORT void *__libc_realloc(void *p, size_t size) { return realloc(p, size); }
SHIM_EXPORT void *__libc_memalign(size_t align, size_t size) { return memalign(align, size); }
SHIM_EXPORT void *__libc_valloc(size_t size) { return valloc(size); }
SHIM_EXPORT void *__libc_pvalloc(size_t size) { return pvalloc(size); }

/* Returns 1 if memory was given back to the system, as glibc's does. */
SHIM_EXPORT int malloc_trim(size_t pad)
{
	return uks_slab_trim(pad) > 0;
}

/*
 * glibc's fields for one arena: arena is the heap's address space,
 * uordblks what is allocated in it (objects and large blocks), fordblks
 * the rest, ordblks the free page blocks, hblks/hblkhd the allocations
 * with a mapping of their own, keepcost what a trim would give back.
 */
SHIM_EXPORT struct mallinfo2 mallinfo2(void)
{
	struct mallinfo2 mi = { 0 };
	struct uks_slab_usage u;

	uks_slab_usage(&u);
	mi.arena = u.heap_bytes;
	mi.ordblks = u.free_blocks;
	mi.hblks = u.nr_huge;
	mi.hblkhd = u.huge_bytes;
	mi.uordblks = u.object_bytes + u.large_bytes;
	mi.fordblks = u.heap_bytes > mi.uordblks ? u.heap_bytes - mi.uordblks : 0;
	mi.keepcost = u.free_resident_bytes;
	return mi;
}

static int clamp_int(size_t v)
{
	return v > INT_MAX ? INT_MAX : (int)v;
}

/* The old interface's int fields saturate rather than wrap. */
SHIM_EXPORT struct mallinfo mallinfo(void)
{
	struct mallinfo2 m = mallinfo2();
	struct mallinfo mi = {
		.arena = clamp_int(m.arena), .ordblks = clamp_int(m.ordblks),
		.hblks = clamp_int(m.hblks), .hblkhd = clamp_int(m.hblkhd),
		.uordblks = clamp_int(m.uordblks), .fordblks = clamp_int(m.fordblks),
		.keepcost = clamp_int(m.keepcost),
	};

	return mi;
}

/* glibc's layout, one arena, to stderr (the interface's job is to print). */
SHIM_EXPORT void malloc_stats(void)
{
	struct uks_slab_usage u;
	size_t in_use;

	uks_slab_usage(&u);
	in_use = u.object_bytes + u.large_bytes;
	fprintf(stderr, "Arena 0:\n");
	fprintf(stderr, "system bytes     = %10zu\n", u.heap_bytes);
	fprintf(stderr, "in use bytes     = %10zu\n", in_use);
	fprintf(stderr, "Total (incl. mmap):\n");
	fprintf(stderr, "system bytes     = %10zu\n", u.heap_bytes + u.huge_bytes);
	fprintf(stderr, "in use bytes     = %10zu\n", in_use + u.huge_bytes);
	fprintf(stderr, "max mmap regions = %10zu\n", u.peak_nr_huge);
	fprintf(stderr, "max mmap bytes   = %10zu\n", u.peak_huge_bytes);
}
