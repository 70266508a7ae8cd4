// SPDX-License-Identifier: MIT
/*
 * The object API: kmem_cache_alloc/free and the bulk calls (5.15's
 * kmem_cache_alloc_bulk() and build_detached_freelist()).
 *
 * Bulk allocation on the rseq fast path pops a run of objects in one rseq
 * section, the user-space analogue of the kernel popping them with
 * interrupts disabled; the other fast paths pop under the local lock, as
 * the kernel's bulk call does.
 */
#include <string.h>

#include "core/log.h"
#include "slab/debug.h"
#include "slab/kmem_events.h"
#include "slab/hot.h"
#include "slab/slub.h"

#define CALLER ((unsigned long)__builtin_return_address(0))

/* Everything but the entry fast path: slab_alloc(), then the event. */
static __attribute__((noinline)) void *kmem_cache_alloc_full(struct uks_kmem_cache *s,
							     unsigned long caller)
{
	void *p = slab_alloc(s, caller);

	uks_trace_kmem_kmem_cache_alloc(caller, p, s->object_size, s->size, 0);
	return p;
}

/**
 * uks_kmem_cache_alloc - allocate an object
 * @s: cache
 *
 * The common case is one rseq section and no stack frame: the cache's
 * entry allows it (no kmem event is enabled then), and this CPU's sheaf
 * or freelist has an object.  Anything else tail-calls the full path.
 * Return: the object (constructed by the cache's ctor when its slab was
 * made), or NULL without memory.
 */
UKS_EXPORT void *uks_kmem_cache_alloc(struct uks_kmem_cache *s)
{
	void *p = slab_entry_alloc(s);

	if (likely(p))
		return p;
	return kmem_cache_alloc_full(s, CALLER);
}

/** uks_kmem_cache_zalloc - allocate a zeroed object (Return: it, or NULL) */
UKS_EXPORT void *uks_kmem_cache_zalloc(struct uks_kmem_cache *s)
{
	void *p = slab_alloc(s, CALLER);

	if (p)
		memset(p, 0, s->object_size);
	return p;
}

/*
 * The cache an object really belongs to.  Freeing to the wrong cache is
 * reported as the kernel's cache_from_obj() does and the right one used.
 */
static struct uks_kmem_cache *cache_from_obj(struct uks_kmem_cache *s, struct uks_page *page,
					     const void *x)
{
	if (unlikely(!page || page->kind != PAGE_SLAB)) {
		pr_err("SLUB %s: no slab for object %p.", s ? s->name : "<none>", x);
		return NULL;
	}
	if (unlikely(s && page->slab_cache != s)) {
		pr_warn("%s: Wrong slab cache. %s but object is from %s", __func__, s->name,
			page->slab_cache->name);
		__uks_dump_stack(UKS_LOG_WARN);
		/* Who allocated (and last freed) it, if its cache tracks: 5.15 prints it too. */
		__uks_print_tracking(page->slab_cache, (void *)x);
	}
	return page->slab_cache;
}

/* Everything but the entry fast path: the event, the page, slab_free(). */
static __attribute__((noinline)) void kmem_cache_free_full(struct uks_kmem_cache *s, void *x,
							   unsigned long caller)
{
	struct uks_page *page;

	if (unlikely(!x))
		return;
	uks_trace_kmem_kmem_cache_free(caller, x, s->name);
#if UKS_HAVE_RSEQ_ASM
	if (s->fast_entry == ENTRY_RSEQ_FREELIST) {
		int ret = rseq_free_cpu_slab(s, uks_rseq_off(), x, s->count_fast);

		if (likely(ret == 1))
			return;
		if (ret == 2)
			__uks_slab_double_free(s, x);
	}
#endif
	page = __uks_virt_to_head_page(x);
	if (likely(page && page->kind == PAGE_SLAB && page->slab_cache == s)) {
		slab_free(s, page, x, caller);
		return;
	}
	s = cache_from_obj(s, page, x);
	if (s)
		slab_free(s, page, x, caller);
}

/**
 * uks_kmem_cache_free - free an object to its cache
 * @s: the cache it came from
 * @x: the object (NULL is a no-op)
 *
 * The common case is one rseq section and no stack frame: an object of the
 * CPU slab goes onto the CPU freelist (5.15's slab == c->slab test, as an
 * address range), or, for a cache with sheaves, an object the cache map
 * says is @s's goes onto the sheaf.  NULL, a full sheaf, another slab, a
 * double free to report, a wrong cache, an enabled kmem event (the entry
 * is ENTRY_FULL then) or a debug cache tail-call the full path.
 */
UKS_EXPORT void uks_kmem_cache_free(struct uks_kmem_cache *s, void *x)
{
	enum slub_entry entry = cache_entry(s);

	/* An address range test: NULL and other slabs fail it. */
	if (likely(entry == ENTRY_RSEQ_FREELIST)) {
		if (likely(slab_entry_free(s, entry, x)))
			return;
	/* A sheaf takes only what the cache map says is @s's. */
	} else if (entry != ENTRY_RSEQ_SHEAF || __uks_virt_to_cache(x) == s) {
		if (likely(slab_entry_free(s, entry, x)))
			return;
	}
	kmem_cache_free_full(s, x, CALLER);
}

/* Pop under the local lock until @nr are taken or the freelist runs dry. */
static size_t locked_pop_many(struct uks_kmem_cache *s, void **p, size_t nr)
{
	unsigned int cpu;
	struct kmem_cache_cpu *c = __uks_cpu_slab_lock(s, &cpu);
	size_t i = 0;

	if (c->page) {
		for (; i < nr && c->freelist; i++) {
			p[i] = c->freelist;
			c->freelist = get_freepointer(s, p[i]);
		}
	}
	__uks_cpu_slab_unlock(s, c);
	return i;
}

/* Objects p[done..nr) of a bulk allocation, the first @done being taken. */
static __attribute__((noinline)) int kmem_cache_alloc_bulk_full(struct uks_kmem_cache *s,
								size_t nr, void **p, size_t done,
								unsigned long caller)
{
	size_t i = done;

	if (nr > INT32_MAX)
		return 0;
	while (i < nr) {
		size_t got = 0;

		if (!kmem_cache_debug(s)) {
#if UKS_HAVE_RSEQ_ASM
			if (s->fast_entry == ENTRY_RSEQ_FREELIST || s->fast_entry == ENTRY_RSEQ_SHEAF) {
				got = rseq_pop_many(s, uks_rseq_off(), p + i, nr - i);
			} else
#endif
				got = locked_pop_many(s, p + i, nr - i);
		}
		i += got;
		if (i < nr && !got) {
			/* Freelist empty: one object from the slow path refills it. */
			p[i] = __uks_slab_alloc(s, caller);
			if (unlikely(!p[i])) {
				uks_kmem_cache_free_bulk(s, i, p);
				return 0;
			}
			i++;
		}
	}
	return (int)nr;
}

/**
 * uks_kmem_cache_alloc_bulk - allocate @nr objects into @p
 * @s: cache
 * @nr: how many
 * @p: array of at least @nr pointers
 *
 * The common case, a CPU freelist holding all @nr, is one rseq section
 * with no stack frame; the rest continues where it stopped.
 * Return: @nr, or 0 if memory ran out (nothing is then left allocated).
 */
UKS_EXPORT int uks_kmem_cache_alloc_bulk(struct uks_kmem_cache *s, size_t nr, void **p)
{
	size_t done = 0;

#if UKS_HAVE_RSEQ_ASM
	if (likely(nr - 1 < INT32_MAX &&
		   (s->fast_entry == ENTRY_RSEQ_FREELIST || s->fast_entry == ENTRY_RSEQ_SHEAF))) {
		done = rseq_pop_many(s, uks_rseq_off(), p, nr);
		if (likely(done == nr))
			return (int)nr;
	}
#endif
	return kmem_cache_alloc_bulk_full(s, nr, p, done, CALLER);
}

struct detached_freelist {
	struct uks_page *page;
	void *tail;
	void *freelist;
	int cnt;
	struct uks_kmem_cache *s;
};

/*
 * Chain the objects of p[]'s last slab into one freelist, looking up to
 * three objects past ones of other slabs.  Freed entries become NULL.
 * Return: how much of p[] is left to scan.
 */
static size_t build_detached_freelist(struct uks_kmem_cache *s, size_t size, void **p,
				      struct detached_freelist *df)
{
	size_t first_skipped_index = 0;
	int lookahead = 3;
	struct uks_page *page;
	void *object;

	df->page = NULL;
	do {
		object = p[--size];
	} while (!object && size);
	if (!object)
		return 0;

	page = __uks_virt_to_head_page(object);
	if (!s) {
		/* kfree_bulk(): large blocks and foreign pointers go one by one. */
		if (unlikely(!page || page->kind != PAGE_SLAB)) {
			uks_kfree(object);
			p[size] = NULL;
			return size;
		}
		df->s = page->slab_cache;
	} else {
		df->s = cache_from_obj(s, page, object);
		if (!df->s) {
			p[size] = NULL;
			return size;
		}
	}

	df->page = page;
	set_freepointer(df->s, object, NULL);
	df->tail = object;
	df->freelist = object;
	p[size] = NULL;
	df->cnt = 1;

	while (size) {
		object = p[--size];
		if (!object)
			continue;
		/* In df->page's address range: no page lookup needed. */
		if ((uintptr_t)object - (uintptr_t)df->page->addr < df->page->map_size) {
			set_freepointer(df->s, object, df->freelist);
			df->freelist = object;
			df->cnt++;
			p[size] = NULL;
			continue;
		}
		if (!--lookahead)
			break;
		if (!first_skipped_index)
			first_skipped_index = size + 1;
	}
	return first_skipped_index;
}

/* The detached-freelist loop of 5.15's kmem_cache_free_bulk(). */
static __attribute__((noinline)) void kmem_cache_free_bulk_full(struct uks_kmem_cache *s,
								size_t nr, void **p,
								unsigned long caller)
{
	while (nr) {
		struct detached_freelist df;

		nr = build_detached_freelist(s, nr, p, &df);
		if (!df.page)
			continue;
		do_slab_free(df.s, df.page, df.freelist, df.tail, df.cnt, caller);
	}
}

/**
 * uks_kmem_cache_free_bulk - free @nr objects of @p
 * @s: their cache (NULL: each object's own, as kfree_bulk())
 * @nr: how many
 * @p: the objects; entries are set to NULL as they are freed
 *
 * The objects of the CPU slab at the end of p[] go onto the CPU freelist
 * in one rseq section; the rest is 5.15's detached-freelist loop.
 */
UKS_EXPORT void uks_kmem_cache_free_bulk(struct uks_kmem_cache *s, size_t nr, void **p)
{
#if UKS_HAVE_RSEQ_ASM
	if (s && s->fast_entry == ENTRY_RSEQ_FREELIST && nr) {
		void *bad = NULL;
		long done = rseq_free_many_cpu_slab(s, uks_rseq_off(), p, nr, &bad);

		if (unlikely(done < 0))
			__uks_slab_double_free(s, bad);
		nr -= (size_t)done;
		memset(p + nr, 0, (size_t)done * sizeof(*p));
		if (likely(!nr))
			return;
	}
#endif
	kmem_cache_free_bulk_full(s, nr, p, CALLER);
}

/** uks_kfree_bulk - uks_kfree() each of @nr pointers in @p */
UKS_EXPORT void uks_kfree_bulk(size_t nr, void **p)
{
	uks_kmem_cache_free_bulk(NULL, nr, p);
}
