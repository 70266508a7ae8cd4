// SPDX-License-Identifier: MIT
/*
 * libuks-malloc.so: the C allocation API over uks kmalloc, for LD_PRELOAD.
 *
 * Every call maps onto this build's kmalloc size classes (16 B ... 8 KiB,
 * two per doubling above 128 B: kmalloc.c) and above them onto whole
 * pages or a mapping of their own; UKS_SLUB_DEBUG applies
 * slub_debug to them, so red zones, poisoning and tracking work on any
 * program.  This build aligns every class to 16 bytes (the x86-64 malloc
 * ABI), where kernel kmalloc uses 8.
 *
 * Thread exit needs nothing: caches are per CPU, not per thread.  fork()
 * is made safe by the allocator's atfork handlers (slub.c).  Pointers we
 * did not hand out are ignored by free() rather than reported, as they
 * can only come from the dynamic loader's start-up allocator.
 */
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "slab/slub.h"

#define SHIM_EXPORT __attribute__((visibility("default")))

SHIM_EXPORT void *malloc(size_t size)
{
	void *p = __uks_malloc(size);

	if (!p)
		errno = ENOMEM;
	return p;
}

SHIM_EXPORT void free(void *p)
{
	/* One lookup both tells our pointers apart and finds the slab. */
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
	p = uks_kzalloc(bytes ? bytes : 1);
	if (!p)
		errno = ENOMEM;
	return p;
}

SHIM_EXPORT void *realloc(void *p, size_t size)
{
	bool ours;
	void *q;

	if (!p)
		return malloc(size);
	if (!size) {
		free(p);
		return NULL;
	}
	q = __uks_krealloc_if_ours(p, size, &ours);
	if (!q)
		errno = ours ? ENOMEM : EINVAL;
	return q;
}

SHIM_EXPORT void *reallocarray(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes)) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, bytes);
}

static void *aligned(size_t align, size_t size)
{
	void *p = uks_kmalloc_aligned(size ? size : 1, align);

	if (!p)
		errno = ENOMEM;
	return p;
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = uks_kmalloc_aligned(size ? size : 1, align);
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
	return aligned(align, size);
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
	return aligned(a, size);
}

SHIM_EXPORT void *valloc(size_t size)
{
	return aligned((size_t)sysconf(_SC_PAGESIZE), size);
}

SHIM_EXPORT void *pvalloc(size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (size > SIZE_MAX - page) {
		errno = ENOMEM;
		return NULL;
	}
	return aligned(page, (size + page - 1) & ~(page - 1));
}

SHIM_EXPORT size_t malloc_usable_size(void *p)
{
	return uks_ksize(p);	/* 0 for NULL and for pointers not ours */
}
