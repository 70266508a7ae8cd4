// SPDX-License-Identifier: MIT
/*
 * The allocation slow path: 5.15's ___slab_alloc() and what it calls
 * (get_freelist, get_partial_node/acquire_slab, allocate_slab).
 *
 * The local lock is held only around reads and writes of kmem_cache_cpu
 * fields, exactly the 5.15 scope: never across the node lists (except
 * where put_cpu_partial() nests inside list_lock, as in the kernel), the
 * page allocator, or deactivate_slab().  Because a user thread can migrate
 * between two locked sections, every section re-reads "this CPU" and
 * rechecks c->page, which ___slab_alloc() does anyway after relocking.
 */
#include <string.h>

#include "slab/hot.h"
#include "slab/slub.h"

/*
 * Take the whole freelist of the frozen CPU slab @page; inuse becomes
 * objects.  If it was empty and no object is left fresh, the slab is
 * unfrozen (it is full).
 */
static void *get_freelist(struct uks_kmem_cache *s, struct uks_page *page)
{
	union slab_counters new;
	unsigned long counters;
	void *freelist;

	do {
		freelist = page->freelist;
		counters = page->counters;
		new.counters = counters;
		new.inuse = page->objects;
		new.frozen = freelist != NULL || page->fresh_offset;
	} while (!cmpxchg_double_slab(s, page, freelist, counters, NULL, new.counters));
	return freelist;
}

/*
 * Remove a slab from the node partial list and freeze it.  @mode: take
 * all its objects (for the CPU slab) rather than leaving them on it (for
 * the CPU partial list).  Called with list_lock held.
 */
static void *acquire_slab(struct uks_kmem_cache *s, struct kmem_cache_node *n,
			  struct uks_page *page, bool mode, int *objects)
{
	unsigned long counters = page->counters;
	void *freelist = page->freelist;
	union slab_counters new;
	void *new_freelist;

	new.counters = counters;
	*objects = (int)new.objects - (int)new.inuse;
	if (mode) {
		new.inuse = page->objects;
		new_freelist = NULL;
	} else {
		new_freelist = freelist;
	}
	new.frozen = 1;
	if (!cmpxchg_double_slab(s, page, freelist, counters, new_freelist, new.counters))
		return NULL;
	__uks_remove_partial(n, page);
	return freelist;
}

/*
 * Freeze slabs from the node partial list: the first becomes the caller's
 * (its objects returned), the rest go to the CPU partial list until more
 * than half of cpu_partial objects are available (half of cpu_partial_slabs
 * slabs in the shim, 5.16).
 */
static void *get_partial_node(struct uks_kmem_cache *s, struct kmem_cache_node *n,
			      struct uks_page **ret_page)
{
	struct uks_page *page, *page2;
	void *object = NULL;
	unsigned int available = 0, partial_slabs = 0;
	int objects;

	if (!n || !READ_ONCE(n->nr_partial))
		return NULL;

	pthread_mutex_lock(&n->list_lock);
	list_for_each_entry_safe(page, page2, &n->partial, slab_list) {
		void *t = acquire_slab(s, n, page, object == NULL, &objects);

		if (!t)
			break;
		available += (unsigned int)objects;
		if (!object) {
			*ret_page = page;
			stat(s, ALLOC_FROM_PARTIAL);
			object = t;
		} else {
			__uks_put_cpu_partial(s, page, 0);
			stat(s, CPU_PARTIAL_NODE);
			partial_slabs++;
		}
		if (!kmem_cache_has_cpu_partial(s) ||
		    (cpu_partial_in_slabs() ? partial_slabs > s->cpu_partial_slabs / 2 :
		     available > s->cpu_partial / 2))
			break;
	}
	pthread_mutex_unlock(&n->list_lock);
	return object;
}

static struct uks_page *alloc_slab_page(struct kmem_cache_order_objects oo)
{
	struct uks_page *page = __uks_alloc_pages(oo_order(oo));

	if (page)
		page->order = (uint8_t)oo_order(oo);
	return page;
}

/* Link @nr objects from @first in address order, the last one to @tail. */
static void link_objects(const struct uks_kmem_cache *s, char *first, unsigned int nr, void *tail)
{
	char *p = first;

	for (unsigned int i = 1; i < nr; i++, p += s->size)
		set_freepointer(s, p, p + s->size);
	set_freepointer(s, p, tail);
}

/**
 * __uks_link_fresh_objects - link objects of a CPU slab never handed out
 * @s: cache
 * @page: the slab, frozen, page->fresh_offset not 0, and the caller its
 *	  only user (the CPU slab under the local lock, or detached from it)
 * @max: link at most this many
 * @tail: what the last linked object points to
 *
 * Return: the first linked object; page->fresh_offset moves past the last.
 */
void *__uks_link_fresh_objects(struct uks_kmem_cache *s, struct uks_page *page, unsigned int max,
			       void *tail)
{
	char *first = (char *)slab_address(page) + page->fresh_offset;
	unsigned int done = page->fresh_offset / s->size;
	unsigned int nr = page->objects - done;

	if (nr > max)
		nr = max;
	link_objects(s, first, nr, tail);
	page->fresh_offset = done + nr < page->objects ? page->fresh_offset + nr * s->size : 0;
	return first;
}

/*
 * Objects linked at a time from a fresh slab: one page worth, and at least
 * FRESH_MIN_BATCH so that big objects do not take the slow path each.
 */
#define FRESH_MIN_BATCH 4u

static unsigned int fresh_batch(const struct uks_kmem_cache *s)
{
	unsigned int nr = __uks_page_size / s->size;

	return nr > FRESH_MIN_BATCH ? nr : FRESH_MIN_BATCH;
}

/*
 * A fresh slab, frozen, with objects on its freelist (allocate_slab()).
 *
 * 5.15 links every object of a new slab at once, writing the free pointer
 * of each: a 32 KiB slab of 1 KiB objects has all eight of its pages
 * touched before the first object is used, and a program that needs two
 * objects keeps eight pages resident.  Caches with neither debugging nor
 * a constructor link one page worth here (at least four objects) and
 * leave the rest "fresh" (page->fresh_offset), linked as much at a time
 * when the CPU freelist runs dry, as mimalloc extends its free lists.
 * The accounting stays 5.15's: while the slab is frozen, inuse counts
 * every object not on page->freelist, fresh ones included, so no other
 * path can tell; and deactivate_slab() links whatever is still fresh
 * before unfreezing.
 */
static struct uks_page *allocate_slab(struct uks_kmem_cache *s)
{
	struct kmem_cache_order_objects oo = s->oo;
	struct uks_page *page;
	void *start, *p, *next;
	unsigned int idx;

	page = alloc_slab_page(oo);
	if (unlikely(!page)) {
		/*
		 * Not in the preload malloc: its free() tells a slot start
		 * from the cache's slab order (obj_start_fast()), and the
		 * buddy fails an order only when it cannot map a chunk.
		 */
		if (slub_in_malloc())
			return NULL;
		oo = s->min;
		/* Fall back to the minimum order that holds one object. */
		page = alloc_slab_page(oo);
		if (unlikely(!page))
			return NULL;
		stat(s, ORDER_FALLBACK);
	}
	page->objects = oo_objects(oo);
	page->slab_cache = s;
	for (long i = 1; i < (1L << oo_order(oo)); i++)
		page[i].slab_cache = s;		/* see struct uks_page */
	__uks_set_page_cache(page, s);
	page->kind = PAGE_SLAB;
	page->map_size = slab_bytes(page);	/* for the free fast path's range check */
	page->fresh_offset = 0;
	atomic_store_explicit(&page->locked, 0, memory_order_relaxed);

	if (likely(!kmem_cache_debug(s) && !s->ctor)) {
		start = __uks_link_fresh_objects(s, page, fresh_batch(s), NULL);
	} else {
		start = slab_address(page);
		__uks_setup_slab_debug(s, page, start);
		start = fixup_red_left(s, start);
		for (idx = 0, p = start; idx + 1 < page->objects; idx++) {
			next = (char *)p + s->size;
			__uks_setup_object_debug(s, p);
			if (unlikely(s->ctor))
				s->ctor(p);
			set_freepointer(s, p, next);
			p = next;
		}
		__uks_setup_object_debug(s, p);
		if (unlikely(s->ctor))
			s->ctor(p);
		set_freepointer(s, p, NULL);
	}

	page->freelist = start;
	page->inuse = page->objects;
	page->frozen = 1;

	atomic_fetch_add_explicit(&get_node(s, 0)->nr_slabs, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&get_node(s, 0)->total_objects, page->objects,
				  memory_order_relaxed);
	return page;
}

/**
 * __uks_slab_alloc - the allocation slow path (5.15's ___slab_alloc())
 * @s: cache
 * @addr: caller address, for debug tracking
 *
 * Return: an object, or NULL when the page allocator is out of memory.
 */
void *__uks_slab_alloc(struct uks_kmem_cache *s, unsigned long addr)
{
	struct kmem_cache_cpu *c;
	struct uks_page *page;
	unsigned int cpu;
	void *freelist;

	stat(s, ALLOC_SLOWPATH);
	__uks_huge_cache_poll();
	if (s->sheaf_capacity) {
		/* A full sheaf in the barn comes before the slabs (sheaf.c). */
		void *object = __uks_sheaf_alloc_slow(s);

		if (object)
			return object;
	}

reread_page:
	c = cpu_slab(s, this_cpu_index(s));
	page = READ_ONCE(c->page);
	if (!page)
		goto new_slab;
redo:
	/* Check again under the lock: we may have been preempted or migrated. */
	c = __uks_cpu_slab_lock(s, &cpu);
	if (unlikely(page != c->page)) {
		__uks_cpu_slab_unlock(s, c);
		goto reread_page;
	}
	freelist = c->freelist;
	if (freelist)
		goto load_freelist;

	freelist = get_freelist(s, page);
	if (!freelist && page->fresh_offset) {
		freelist = __uks_link_fresh_objects(s, page, fresh_batch(s), NULL);
		stat(s, ALLOC_REFILL);
		goto load_freelist;
	}
	if (!freelist) {
		set_cpu_slab(c, NULL);
		__uks_cpu_slab_unlock(s, c);
		stat(s, DEACTIVATE_BYPASS);
		goto new_slab;
	}
	stat(s, ALLOC_REFILL);

load_freelist:
	/* Locked, and the page is frozen: the rest of its freelist is ours. */
	c->freelist = get_freepointer(s, freelist);
	__uks_cpu_slab_unlock(s, c);
	return freelist;

new_slab:
	if (READ_ONCE(c->partial)) {
		c = __uks_cpu_slab_lock(s, &cpu);
		if (unlikely(c->page)) {
			__uks_cpu_slab_unlock(s, c);
			goto reread_page;
		}
		if (unlikely(!c->partial)) {
			__uks_cpu_slab_unlock(s, c);
			goto new_objects;
		}
		page = c->partial;
		set_cpu_slab(c, page);
		c->partial = page->next;
		__uks_cpu_slab_unlock(s, c);
		set_slab_home(s, page);		/* frozen: ours, lock or not */
		stat(s, CPU_PARTIAL_ALLOC);
		goto redo;
	}

new_objects:
	freelist = get_partial_node(s, get_node(s, 0), &page);
	if (freelist)
		goto check_new_page;

	page = allocate_slab(s);
	if (unlikely(!page))
		return NULL;
	/* No other reference to the slab yet: no cmpxchg needed. */
	freelist = page->freelist;
	page->freelist = NULL;
	stat(s, ALLOC_SLAB);

check_new_page:
	if (kmem_cache_debug(s)) {
		if (!__uks_alloc_debug_processing(s, page, freelist, addr)) {
			/* Slab failed checks ("Marking all objects used"): next slab. */
			c = cpu_slab(s, this_cpu_index(s));
			goto new_slab;
		}
		/* Debug caches never load a CPU freelist: every object is checked. */
		goto return_single;
	}

	set_slab_home(s, page);
retry_load_page:
	c = __uks_cpu_slab_lock(s, &cpu);
	if (unlikely(c->page)) {
		void *flush_freelist = c->freelist;
		struct uks_page *flush_page = c->page;

		set_cpu_slab(c, NULL);
		c->freelist = NULL;
		__uks_cpu_slab_unlock(s, c);
		__uks_deactivate_slab(s, flush_page, flush_freelist);
		stat(s, CPUSLAB_FLUSH);
		goto retry_load_page;
	}
	set_cpu_slab(c, page);
	goto load_freelist;

return_single:
	__uks_deactivate_slab(s, page, get_freepointer(s, freelist));
	return freelist;
}
