/* SPDX-License-Identifier: MIT */
/*
 * slab_alloc() and slab_free(): the per-object entry points, inlined into
 * uks_kmem_cache_alloc()/free() and uks_kmalloc()/kfree().  They try the
 * cache's lockless fast path and fall back to the slow paths in alloc.c
 * and free.c (5.15's slab_alloc_node() and do_slab_free()).
 */
#ifndef UKS_LIB_SLAB_HOT_H
#define UKS_LIB_SLAB_HOT_H

#include <stdlib.h>

#include "core/log.h"
#include "slab/fastpath.h"
#include "slab/slub.h"

/*
 * cmpxchg_double_slab - update a slab's {freelist, counters} atomically
 *
 * LOCK cmpxchg16b, inlined into the slow paths (one runs per remote
 * free), or slab_lock() for caches without __CMPXCHG_DOUBLE.
 * Return: true on success.
 */
static inline bool cmpxchg_double_slab(struct uks_kmem_cache *s, struct uks_page *page,
				       void *freelist_old, unsigned long counters_old,
				       void *freelist_new, unsigned long counters_new)
{
	if (unlikely(!s->cmpxchg_double))
		return __uks_slab_lock_cmpxchg(s, page, freelist_old, counters_old,
					       freelist_new, counters_new);
	if (likely(cmpxchg16(&page->freelist, (uintptr_t)freelist_old, counters_old,
			     (uintptr_t)freelist_new, counters_new)))
		return true;
	stat(s, CMPXCHG_DOUBLE_FAIL);
	return false;
}

/* 5.15's tid + this_cpu_cmpxchg_double() pop, with a LOCKed cmpxchg16b. */
static inline void *cmpxchg_pop(struct uks_kmem_cache *s)
{
	for (;;) {
		struct kmem_cache_cpu *c = cpu_slab(s, this_cpu_index(s));
		/* tid first: an older (object, page) pair never meets a newer tid. */
		unsigned long tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		void *object = READ_ONCE(c->freelist);
		struct uks_page *page = READ_ONCE(c->page);
		void *next;

		if (unlikely((tid & TID_LOCKED) || !object || !page))
			return NULL;
		/* May read a reused object: harmless, the cmpxchg then fails. */
		next = get_freepointer(s, object);
		if (likely(cmpxchg16(&c->freelist, (uintptr_t)object, tid, (uintptr_t)next,
				     tid + s->tid_step))) {
			c->nr_alloc_fast += s->count_fast;
			return object;
		}
		c->stat[CMPXCHG_DOUBLE_CPU_FAIL]++;
	}
}

#if UKS_HAVE_RSEQ_ASM
/*
 * PREEMPT_RT: this CPU's slot, locked, if one rseq section could take its
 * local lock at once (the thread is on that CPU and nobody holds it).
 * Only with rseq locking.  Return: the locked slot, or NULL.
 */
static __attribute__((always_inline)) inline struct kmem_cache_cpu *
rt_trylock_here(struct uks_kmem_cache *s)
{
	int here = uks_rseq_cpu_id();

	if (likely(here >= 0 && (unsigned int)here < s->nr_cpus)) {
		struct kmem_cache_cpu *c = cpu_slab(s, (unsigned int)here);

		if (likely(rseq_trylock(s, c, (unsigned int)here, uks_rseq_off()) > 0))
			return c;
	}
	return NULL;
}
#endif

/* PREEMPT_RT: take this CPU's local lock (rseq when free; else the general lock). */
static inline struct kmem_cache_cpu *rt_lock(struct uks_kmem_cache *s)
{
	unsigned int cpu;
#if UKS_HAVE_RSEQ_ASM
	if (likely(__uks_slab_rseq_locking())) {
		struct kmem_cache_cpu *c = rt_trylock_here(s);

		if (likely(c))
			return c;
	}
#endif
	return __uks_cpu_slab_lock(s, &cpu);
}

/*
 * rt_pop_locked - what ___slab_alloc() does first, under the local lock,
 * when the CPU slab has objects (counted as the kernel's RT counts it, a
 * slow-path allocation).  Return: the object, or NULL.
 */
static __attribute__((always_inline)) inline void *rt_pop_locked(struct uks_kmem_cache *s,
								 struct kmem_cache_cpu *c)
{
	void *object = c->page ? c->freelist : NULL;

	if (likely(object)) {
		c->freelist = get_freepointer(s, object);
		c->stat[ALLOC_SLOWPATH]++;
	}
	return object;
}

/* The RT allocation: rt_pop_locked(), else the full slow path. */
static inline void *rt_alloc(struct uks_kmem_cache *s, unsigned long addr)
{
	struct kmem_cache_cpu *c = rt_lock(s);
	void *object = rt_pop_locked(s, c);

	__uks_cpu_slab_unlock(s, c);
	return likely(object) ? object : __uks_slab_alloc(s, addr);
}

static __attribute__((always_inline)) inline void *slab_alloc(struct uks_kmem_cache *s,
							       unsigned long addr)
{
	void *object = NULL;

#if UKS_HAVE_RSEQ_ASM
	if (likely(s->fastpath == FASTPATH_RSEQ)) {
		/* Sheaf first: its objects are the most recently freed ones. */
		if (s->sheaf_capacity)
			object = rseq_sheaf_pop(s, uks_rseq_off(), s->count_fast);
		else
			object = rseq_pop(s, uks_rseq_off(), s->count_fast);
		if (likely(object))
			return object;
	} else
#endif
	if (s->fastpath == FASTPATH_CMPXCHG) {
		object = cmpxchg_pop(s);
		if (likely(object))
			return object;
	}
	else if (s->fastpath == FASTPATH_RT)
		return rt_alloc(s, addr);
	/* The fast path failed: the slow path, under the lock. */
	return __uks_slab_alloc(s, addr);
}

/*
 * slab_entry_alloc - the exported allocators' fast path (no stack frame)
 *
 * One rseq section on this CPU's freelist or sheaf, for caches whose entry
 * mode allows it (none while a kmem event is enabled).
 * Return: the object, or NULL to take the full path.
 */
static __attribute__((always_inline)) inline void *slab_entry_alloc(struct uks_kmem_cache *s)
{
#if UKS_HAVE_RSEQ_ASM
	enum slub_entry entry = cache_entry(s);

	if (likely(entry == ENTRY_RSEQ_FREELIST))
		return rseq_pop(s, uks_rseq_off(), false);
	if (likely(entry == ENTRY_RSEQ_SHEAF))
		return rseq_sheaf_pop(s, uks_rseq_off(), false);
	if (entry == ENTRY_RT) {
		struct kmem_cache_cpu *c = rt_trylock_here(s);
		void *object;

		if (unlikely(!c))
			return NULL;
		object = rt_pop_locked(s, c);
		__uks_cpu_slab_unlock(s, c);
		return object;
	}
#endif
	return NULL;
}

/*
 * slab_entry_free - the exported frees' fast path: @x onto the CPU
 * freelist if it lies in the CPU slab (an address-range test, so @x may
 * be any pointer), or onto the sheaf (@x must be one of @s's objects:
 * the caller asks the cache map; another CPU's goes to the outbox of a
 * sheaf_home_only cache).  @entry is cache_entry(@s), read once
 * by the caller.  Return: true if done; false to take the full path
 * (which also reports a double free).
 */
static __attribute__((always_inline)) inline bool slab_entry_free(struct uks_kmem_cache *s,
								   enum slub_entry entry, void *x)
{
#if UKS_HAVE_RSEQ_ASM
	if (likely(entry == ENTRY_RSEQ_FREELIST))
		return rseq_free_cpu_slab(s, uks_rseq_off(), x, false) == 1;
	if (likely(entry == ENTRY_RSEQ_SHEAF))
		return rseq_sheaf_push(s, uks_rseq_off(), x, sheaf_for_object(s, x), false) == 1;
	if (entry == ENTRY_RT) {
		/* 5.15's locked do_slab_free() push, when @x is in the CPU slab. */
		struct kmem_cache_cpu *c = rt_trylock_here(s);
		bool pushed = false;

		if (unlikely(!c))
			return false;
		if (likely((uintptr_t)x - c->slab_start < c->slab_bytes && x != c->freelist)) {
			set_freepointer(s, x, c->freelist);
			c->freelist = x;
			c->nr_free_fast += s->count_fast;
			pushed = true;
		}
		__uks_cpu_slab_unlock(s, c);
		return pushed;
	}
#endif
	return false;
}

/* 5.15's do_slab_free() on the cmpxchg16b fast path. */
static inline bool cmpxchg_push(struct uks_kmem_cache *s, struct uks_page *page, void *head,
				void *tail)
{
	for (;;) {
		struct kmem_cache_cpu *c = cpu_slab(s, this_cpu_index(s));
		unsigned long tid = __atomic_load_n(&c->tid, __ATOMIC_ACQUIRE);
		void *freelist;

		if (unlikely((tid & TID_LOCKED) || page != READ_ONCE(c->page)))
			return false;
		freelist = READ_ONCE(c->freelist);
		if (unlikely(freelist == head))
			__uks_slab_double_free(s, head);
		set_freepointer(s, tail, freelist);
		if (likely(cmpxchg16(&c->freelist, (uintptr_t)freelist, tid, (uintptr_t)head,
				     tid + s->tid_step))) {
			c->nr_free_fast += s->count_fast;
			return true;
		}
		c->stat[CMPXCHG_DOUBLE_CPU_FAIL]++;
	}
}

/*
 * Free head..tail (cnt objects of @page, already linked): onto the CPU
 * freelist when @page is the CPU slab, else to the slab (__slab_free).
 * Sheaves are not used: this is also how full sheaves are emptied.
 */
static __attribute__((always_inline)) inline void
do_slab_free(struct uks_kmem_cache *s, struct uks_page *page, void *head, void *tail, int cnt,
	     unsigned long addr)
{
	void *tail_obj = tail ? tail : head;

	if (unlikely(kmem_cache_debug(s))) {
		__uks_slab_free(s, page, head, tail_obj, cnt, addr);
		return;
	}
#if UKS_HAVE_RSEQ_ASM
	if (likely(s->fastpath == FASTPATH_RSEQ)) {
		int ret = rseq_push(s, uks_rseq_off(), page, head, tail_obj, s->count_fast);

		if (likely(ret == 1))
			return;
		if (ret == 2)
			__uks_slab_double_free(s, head);
	} else
#endif
	if (s->fastpath == FASTPATH_CMPXCHG) {
		if (likely(cmpxchg_push(s, page, head, tail_obj)))
			return;
	} else {
		/* PREEMPT_RT: the locked push of 5.15's do_slab_free(). */
		struct kmem_cache_cpu *c = rt_lock(s);

		if (likely(page == c->page)) {
			if (unlikely(c->freelist == head))
				__uks_slab_double_free(s, head);
			set_freepointer(s, tail_obj, c->freelist);
			c->freelist = head;
			c->nr_free_fast += s->count_fast;
			__uks_cpu_slab_unlock(s, c);
			return;
		}
		__uks_cpu_slab_unlock(s, c);
	}
	__uks_slab_free(s, page, head, tail_obj, cnt, addr);
}

/* Free one object: onto one of this CPU's sheaves if the cache has them. */
static __attribute__((always_inline)) inline void
slab_free(struct uks_kmem_cache *s, struct uks_page *page, void *object, unsigned long addr)
{
#if UKS_HAVE_RSEQ_ASM
	if (s->sheaf_capacity) {
		size_t which = sheaf_for_object(s, object);
		int ret = rseq_sheaf_push(s, uks_rseq_off(), object, which, s->count_fast);

		if (likely(ret == 1))
			return;
		if (ret == 2)
			__uks_slab_double_free(s, object);
		__uks_sheaf_push_slow(s, object, which);
		return;
	}
#endif
	do_slab_free(s, page, object, NULL, 1, addr);
}

#endif
