// SPDX-License-Identifier: MIT
/*
 * What the allocator holds, and giving free memory back on request: the
 * library side of mallinfo2(), malloc_stats() and malloc_trim().
 *
 * The kernel answers these questions with /proc/meminfo's Slab lines and
 * /sys/kernel/slab/<cache>/ (sysfs.c has those per cache); a program that
 * uses uks as its malloc asks glibc's questions instead, about the whole
 * heap.  The usage is a snapshot taken with the zone lock held, so no
 * slab can be freed under the walk; object counts of slabs other threads
 * are using move while it runs.  An object in a per-CPU freelist or sheaf
 * counts as allocated, as it does in the kernel's "objects" file.
 *
 * A trim does what an idle heap would do after the purge delay, at once
 * and down to the caller's pad: every cache is shrunk (5.15's
 * kmem_cache_shrink(): per-CPU slabs flushed, empty slabs freed), the
 * cache of freed huge mappings is unmapped, and free pages are purged.
 *
 * Lock order: the cache-list mutex, then a cache's locks (shrink), then
 * the zone lock; the usage walk takes the zone lock alone.
 */
#include <string.h>

#include <uks/slab.h>

#include "slab/slub.h"

static void count_block(struct uks_page *page, void *arg)
{
	struct uks_slab_usage *u = arg;
	struct uks_kmem_cache *s;
	struct uks_page snap;

	/*
	 * A new slab's order, objects and cache are stored before its kind,
	 * its map_size after: so the size comes from the order.
	 */
	switch (__atomic_load_n(&page->kind, __ATOMIC_ACQUIRE)) {
	case PAGE_SLAB:
		s = __atomic_load_n(&page->slab_cache, __ATOMIC_RELAXED);
		if (!s)
			return;		/* being discarded */
		snap.counters = __atomic_load_n(&page->counters, __ATOMIC_RELAXED);
		u->slab_bytes += (size_t)__uks_page_size << page->order;
		u->object_bytes += (size_t)snap.inuse * s->object_size;
		break;
	case PAGE_LARGE:
		u->large_bytes += page->map_size;
		break;
	case PAGE_BUDDY:
		u->free_bytes += (size_t)__uks_page_size << page->order;
		break;
	}
}

/**
 * uks_slab_usage - what the allocator holds now
 * @u: filled in (see struct uks_slab_usage)
 *
 * Walks every page descriptor of the heap: O(heap pages), for statistics,
 * not for a hot path.
 */
UKS_EXPORT void uks_slab_usage(struct uks_slab_usage *u)
{
	size_t heap, blocks, resident, cached;
	uint64_t delay;

	__uks_slab_init();
	memset(u, 0, sizeof(*u));
	__uks_page_alloc_lock();
	__uks_for_each_page(count_block, u);
	__uks_page_alloc_unlock();
	__uks_page_usage(&heap, &blocks, &resident);
	u->heap_bytes = heap;
	u->free_blocks = blocks;
	u->free_resident_bytes = resident < u->free_bytes ? resident : u->free_bytes;
	__uks_huge_usage(&u->huge_bytes, &u->peak_huge_bytes, &u->nr_huge, &u->peak_nr_huge);
	__uks_huge_cache_stats(&cached, &delay);
	u->cached_huge_bytes = cached;
}

static int shrink_one(struct uks_kmem_cache *s, void *arg)
{
	(void)arg;
	uks_kmem_cache_shrink(s);
	return 0;
}

/**
 * uks_slab_trim - give the system back the memory the heap holds free
 * @keep: bytes of free pages that may stay resident (malloc_trim()'s pad)
 *
 * Shrinks every cache, unmaps the freed huge mappings kept for reuse and
 * purges free pages down to @keep, without waiting for the purge delay.
 * Memory that live objects share a slab with stays.
 *
 * Return: bytes handed back to the system.
 */
UKS_EXPORT size_t uks_slab_trim(size_t keep)
{
	size_t cached, released;
	uint64_t delay;

	uks_kmem_cache_for_each(shrink_one, NULL);
	__uks_huge_cache_stats(&cached, &delay);
	__uks_huge_cache_drain();
	released = cached;
	released += __uks_page_trim(keep);
	return released;
}
