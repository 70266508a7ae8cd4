// SPDX-License-Identifier: MIT
/*
 * Freeing: 5.15's __slab_free() (objects whose slab is not this CPU's),
 * the PREEMPT_RT locked free fast path, deactivate_slab() (returning a CPU
 * slab to the node), and the slab-level {freelist, counters} update.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/log.h"
#include "slab/hot.h"
#include "slab/slub.h"

/**
 * __uks_slab_lock_cmpxchg - the {freelist, counters} update under slab_lock()
 * @s: cache, one without __CMPXCHG_DOUBLE (debug caches with F, U or T)
 * @page: slab
 * @freelist_old: expected freelist
 * @counters_old: expected counters
 * @freelist_new: new freelist
 * @counters_new: new counters
 *
 * Return: true on success; a failure is counted (CMPXCHG_DOUBLE_FAIL).
 */
bool __uks_slab_lock_cmpxchg(struct uks_kmem_cache *s, struct uks_page *page,
			     void *freelist_old, unsigned long counters_old,
			     void *freelist_new, unsigned long counters_new)
{
	slab_lock(page);
	if (page->freelist == freelist_old && page->counters == counters_old) {
		page->freelist = freelist_new;
		page->counters = counters_new;
		slab_unlock(page);
		return true;
	}
	slab_unlock(page);
	stat(s, CMPXCHG_DOUBLE_FAIL);
	return false;
}

/**
 * __uks_slab_double_free - report an object freed while it is free, and stop
 * @s: its cache
 * @object: the object, found at the head of the freelist it was pushed on
 *
 * 5.15's BUG_ON(object == fp): going on would hand the object out twice.
 */
void __uks_slab_double_free(const struct uks_kmem_cache *s, const void *object)
{
	if (slub_in_malloc()) {
		char why[96];

		snprintf(why, sizeof(why), "the %s object freed last", s->name);
		__uks_malloc_abort("free", "double free", object, why);
	}
	pr_err("SLUB %s: double free of object %p (it is already the first free object)",
	       s->name, object);
	abort();
}

/* Node list management; list_lock held. */
void __uks_add_partial(struct kmem_cache_node *n, struct uks_page *page, int tail)
{
	n->nr_partial++;
	if (tail == DEACTIVATE_TO_TAIL)
		list_add_tail(&page->slab_list, &n->partial);
	else
		list_add(&page->slab_list, &n->partial);
}

void __uks_remove_partial(struct kmem_cache_node *n, struct uks_page *page)
{
	list_del(&page->slab_list);
	n->nr_partial--;
}

static void add_full(struct uks_kmem_cache *s, struct kmem_cache_node *n, struct uks_page *page)
{
	if (s->flags & UKS_SLAB_STORE_USER)
		list_add(&page->slab_list, &n->full);
}

static void remove_full(struct uks_kmem_cache *s, struct uks_page *page)
{
	if (s->flags & UKS_SLAB_STORE_USER)
		list_del(&page->slab_list);
}

/**
 * __uks_discard_slab - give an empty slab back to the page allocator
 * @s: cache
 * @page: slab, on no list
 */
void __uks_discard_slab(struct uks_kmem_cache *s, struct uks_page *page)
{
	struct kmem_cache_node *n = get_node(s, 0);

	atomic_fetch_sub_explicit(&n->nr_slabs, 1, memory_order_relaxed);
	atomic_fetch_sub_explicit(&n->total_objects, page->objects, memory_order_relaxed);
	if (kmem_cache_debug(s))
		__uks_slab_check_pad_on_free(s, page);
	page->kind = PAGE_UNUSED;
	page->slab_cache = NULL;
	__uks_set_page_cache(page, NULL);
	page->freelist = NULL;
	page->counters = 0;
	__uks_free_pages(page);
}

/**
 * __uks_slab_free - free objects to a slab that is not this CPU's
 * @s: cache
 * @page: their slab
 * @head: first object
 * @tail: last object (@head for one)
 * @cnt: number of objects
 * @addr: caller, for debug tracking
 *
 * Pushes onto the slab's own freelist with the slab cmpxchg.  A slab that
 * was full is frozen onto this CPU's partial list; one that becomes empty
 * is discarded once the node holds min_partial partial slabs.
 */
void __uks_slab_free(struct uks_kmem_cache *s, struct uks_page *page, void *head, void *tail,
		     int cnt, unsigned long addr)
{
	struct kmem_cache_node *n = NULL;
	unsigned long counters;
	union slab_counters new;
	bool was_frozen, bad_pointer;
	void *prior;

	stat(s, FREE_SLOWPATH);

	if (kmem_cache_debug(s) &&
	    !__uks_free_debug_processing(s, page, head, tail, cnt, addr, &bad_pointer)) {
		/*
		 * The kernel leaks the object and goes on.  So does the malloc
		 * policy for an overwritten red zone or poison (the report is
		 * what slub_debug is for), but a pointer that is no live
		 * object aborts, as glibc's free() does.
		 */
		if (bad_pointer && slub_in_malloc())
			__uks_malloc_abort("free", "object not freed", head,
					   "slub_debug found it bad: see the report above");
		return;
	}

	do {
		if (unlikely(n)) {
			pthread_mutex_unlock(&n->list_lock);
			n = NULL;
		}
		prior = page->freelist;
		counters = page->counters;
		set_freepointer(s, tail, prior);
		new.counters = counters;
		was_frozen = new.frozen;
		new.inuse -= (unsigned int)cnt;
		if ((!new.inuse || !prior) && !was_frozen) {
			if (kmem_cache_has_cpu_partial(s) && !prior) {
				/* Was full: freeze it onto our partial list instead. */
				new.frozen = 1;
			} else {
				/* Needs list management: take the lock speculatively. */
				n = get_node(s, 0);
				pthread_mutex_lock(&n->list_lock);
			}
		}
	} while (!cmpxchg_double_slab(s, page, prior, counters, head, new.counters));

	if (likely(!n)) {
		if (likely(was_frozen)) {
			stat(s, FREE_FROZEN);
		} else if (new.frozen) {
			__uks_put_cpu_partial(s, page, 1);
			stat(s, CPU_PARTIAL_FREE);
		}
		return;
	}

	if (unlikely(!new.inuse && n->nr_partial >= s->min_partial))
		goto slab_empty;

	/* Objects left in a slab that was full: it joins the partial list. */
	if (!kmem_cache_has_cpu_partial(s) && unlikely(!prior)) {
		remove_full(s, page);
		__uks_add_partial(n, page, DEACTIVATE_TO_TAIL);
		stat(s, FREE_ADD_PARTIAL);
	}
	pthread_mutex_unlock(&n->list_lock);
	return;

slab_empty:
	if (prior) {
		__uks_remove_partial(n, page);
		stat(s, FREE_REMOVE_PARTIAL);
	} else {
		remove_full(s, page);
	}
	pthread_mutex_unlock(&n->list_lock);
	stat(s, FREE_SLAB);
	__uks_discard_slab(s, page);
}

/**
 * __uks_deactivate_slab - return a CPU slab and its CPU freelist to the node
 * @s: cache
 * @page: the slab, frozen, already detached from its kmem_cache_cpu
 * @freelist: the CPU freelist that went with it
 *
 * Splices the CPU freelist in front of the slab's own, unfreezes it, and
 * puts it on the partial list, the full list (debug only), or frees it.
 * Runs without the local lock: the slab is no longer reachable from it.
 */
void __uks_deactivate_slab(struct uks_kmem_cache *s, struct uks_page *page, void *freelist)
{
	enum slab_modes { M_NONE, M_PARTIAL, M_FULL, M_FREE };
	struct kmem_cache_node *n = get_node(s, 0);
	enum slab_modes l = M_NONE, m = M_NONE;
	int tail = DEACTIVATE_TO_HEAD, free_delta = 0;
	void *nextfree, *freelist_iter, *freelist_tail;
	unsigned long old_counters;
	union slab_counters new;
	void *old_freelist, *new_freelist;
	bool lock = false;

	/* Objects allocate_slab() left unlinked go back with the CPU freelist. */
	if (page->fresh_offset)
		freelist = __uks_link_fresh_objects(s, page, UINT_MAX, freelist);

	if (page->freelist) {
		stat(s, DEACTIVATE_REMOTE_FREES);
		tail = DEACTIVATE_TO_TAIL;
	}

	/* Stage one: count the CPU freelist and find its tail. */
	freelist_tail = NULL;
	freelist_iter = freelist;
	while (freelist_iter) {
		nextfree = get_freepointer(s, freelist_iter);
		/* A bad pointer: isolate the rest of the chain. */
		if (__uks_freelist_corrupted(s, page, &freelist_iter, nextfree))
			break;
		freelist_tail = freelist_iter;
		free_delta++;
		freelist_iter = nextfree;
	}

	/* Stage two: splice, unfreeze, and pick the slab's list. */
redo:
	old_freelist = READ_ONCE(page->freelist);
	old_counters = READ_ONCE(page->counters);
	new.counters = old_counters;
	if (freelist_tail) {
		new.inuse -= (unsigned int)free_delta;
		set_freepointer(s, freelist_tail, old_freelist);
		new_freelist = freelist;
	} else {
		new_freelist = old_freelist;
	}
	new.frozen = 0;

	if (!new.inuse && n->nr_partial >= s->min_partial) {
		m = M_FREE;
	} else if (new_freelist) {
		m = M_PARTIAL;
		if (!lock) {
			lock = true;
			pthread_mutex_lock(&n->list_lock);
		}
	} else {
		m = M_FULL;
		if ((s->flags & UKS_SLAB_STORE_USER) && !lock) {
			lock = true;
			pthread_mutex_lock(&n->list_lock);
		}
	}

	if (l != m) {
		if (l == M_PARTIAL)
			__uks_remove_partial(n, page);
		else if (l == M_FULL)
			remove_full(s, page);
		if (m == M_PARTIAL)
			__uks_add_partial(n, page, tail);
		else if (m == M_FULL)
			add_full(s, n, page);
	}
	l = m;
	if (!cmpxchg_double_slab(s, page, old_freelist, old_counters, new_freelist,
				       new.counters))
		goto redo;

	if (lock)
		pthread_mutex_unlock(&n->list_lock);

	if (m == M_PARTIAL) {
		stat(s, (enum stat_item)tail);
	} else if (m == M_FULL) {
		stat(s, DEACTIVATE_FULL);
	} else if (m == M_FREE) {
		stat(s, DEACTIVATE_EMPTY);
		__uks_discard_slab(s, page);
		stat(s, FREE_SLAB);
	}
}
