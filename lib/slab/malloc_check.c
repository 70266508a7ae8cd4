// SPDX-License-Identifier: MIT
/*
 * The preload malloc's check of the pointers free() and realloc() are
 * given.  A pointer that is not the start of a live allocation is
 * reported on stderr and the process aborts, as glibc's malloc does
 * ("free(): invalid pointer"): freed anyway, an interior pointer would
 * be handed out again over a live object.  The check reads what the free
 * needs anyway: the chunk table says whether the pointer is in the heap
 * at all, the page descriptor what it is in.  The free fast path tests
 * a slot start before that (obj_start_fast()) and comes here when the
 * test fails.
 *
 * libuks' kfree() keeps the kernel's behaviour instead: a pointer that is
 * no allocation is reported ("no slab for object") and left alone, and
 * only slub_debug's F checks slot starts (check_valid_pointer() in
 * debug.c).  Only the malloc policy (policy.h) calls in here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "slab/slub.h"

/**
 * __uks_malloc_abort - report a bad pointer given to the malloc API, and abort
 * @fn: the function that was given it ("free", "realloc")
 * @what: what is wrong, "invalid pointer" or "double free"
 * @p: the pointer
 * @why: what it points at
 *
 * Formatted on the stack and written with one write(2), as glibc's
 * malloc_printerr() does: the heap may be in any state, and stdio may
 * allocate.
 */
void __uks_malloc_abort(const char *fn, const char *what, const void *p, const char *why)
{
	char msg[320];
	int n = snprintf(msg, sizeof(msg), "uks-malloc: %s(): %s %p (%s)\n", fn, what, p, why);
	ssize_t written;

	if (n > 0) {
		written = write(STDERR_FILENO, msg, (size_t)n < sizeof(msg) ? (size_t)n : sizeof(msg) - 1);
		(void)written;	/* nothing more to do if stderr is gone */
	}
	abort();
}

/* A pointer into slab @page of @s that is no slot start: where it points. */
static void slab_interior(struct uks_kmem_cache *s, struct uks_page *page, const char *p,
			  char *why, size_t len)
{
	size_t rel = (size_t)(p - page->addr), end = (size_t)page->objects * s->size;
	const char *obj;

	if (rel >= end) {
		snprintf(why, len, "past the last object of a %s slab", s->name);
		return;
	}
	obj = page->addr + rel / s->size * s->size + s->red_left_pad;
	if (p < obj)
		snprintf(why, len, "in the left red zone of the %s object at %p", s->name,
			 (const void *)obj);
	else
		snprintf(why, len, "%zu bytes into the %s object at %p", (size_t)(p - obj),
			 s->name, (const void *)obj);
}

/**
 * __uks_malloc_check - abort unless @p is the start of a live allocation
 * @page: __uks_virt_to_page(@p) (NULL: not in the heap)
 * @p: the pointer, not NULL
 * @fn: the caller's name for the report
 *
 * Objects of caches with slub_debug's F are left to its checks, which
 * report in the kernel's format ("Invalid object pointer", "Object
 * already free"); __uks_slab_free() then aborts.
 */
void __uks_malloc_check(struct uks_page *page, const void *p, const char *fn)
{
	char why[160];

	if (unlikely(!page))
		__uks_malloc_abort(fn, "invalid pointer", p, "not in this malloc's heap");
	if (page->kind == PAGE_TAIL)
		page = page->head;
	switch (page->kind) {
	case PAGE_SLAB:
		if (likely((page->slab_cache->flags & UKS_SLAB_CONSISTENCY_CHECKS) ||
			   __uks_check_valid_pointer(page->slab_cache, page, (void *)p)))
			return;
		slab_interior(page->slab_cache, page, p, why, sizeof(why));
		break;
	case PAGE_LARGE:
	case PAGE_HUGE:
		if (likely(p == page->addr))
			return;
		snprintf(why, sizeof(why), "%zu bytes into the %zu-byte block at %p",
			 (size_t)((const char *)p - page->addr), page->large_size,
			 (const void *)page->addr);
		break;
	default:
		snprintf(why, sizeof(why), "in free pages: freed already?");
		break;
	}
	__uks_malloc_abort(fn, "invalid pointer", p, why);
}
