/* SPDX-License-Identifier: MIT */
/*
 * The page allocator under the slab allocator: a buddy allocator over
 * 2 MiB chunks of anonymous memory, with one struct uks_page per page kept
 * outside the memory it describes (the kernel's mem_map).  Any address
 * the allocator handed out maps back to its descriptor in two loads
 * (__uks_virt_to_page()), which is how kfree() finds an object's slab.
 *
 * Chunks are never unmapped: a free block is only madvise()d away, so a
 * stale read of a freed slab (the lockless fast path's speculative
 * get_freepointer()) reads zeroes instead of faulting, as the kernel's
 * direct map does.  Allocations above a chunk go to their own mmap()
 * (huge_map.c).
 */
#ifndef UKS_LIB_SLAB_PAGE_ALLOC_H
#define UKS_LIB_SLAB_PAGE_ALLOC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "core/list.h"

enum uks_page_kind {
	PAGE_UNUSED,	/* inside a free buddy block, or not ours */
	PAGE_BUDDY,	/* head of a free buddy block */
	PAGE_SLAB,	/* head of a slab */
	PAGE_LARGE,	/* head of a kmalloc_large() block */
	PAGE_TAIL,	/* later page of a slab or large block */
	PAGE_HUGE,	/* an allocation with its own mapping */
};

struct uks_kmem_cache;

/* The slab fields of 5.15's struct page, plus what the buddy needs. */
struct uks_page {
	void *freelist __attribute__((aligned(16)));	/* with counters: cmpxchg16b */
	union {
		unsigned long counters;
		struct {
			unsigned int inuse:16;
			unsigned int objects:15;
			unsigned int frozen:1;
		};
	};
	union {
		struct list_head slab_list;	/* node partial or full list */
		struct {			/* per-CPU partial chain */
			struct uks_page *next;
			int slabs;		/* slabs in the chain from here */
			int pobjects;		/* approximate free objects */
		};
		struct list_head buddy;		/* free block */
		struct uks_page *head;		/* PAGE_TAIL: the block's first page */
	};
	union {
		/*
		 * PAGE_SLAB, and every PAGE_TAIL of a slab (NULL in the tails
		 * of other blocks): kfree() of an object in a later page of a
		 * slab then needs no second descriptor.
		 */
		struct uks_kmem_cache *slab_cache;
		size_t large_size;			/* PAGE_LARGE, PAGE_HUGE */
	};
	char *addr;			/* first byte of the block */
	uint8_t kind;			/* enum uks_page_kind */
	uint8_t order;
	atomic_uchar locked;		/* slab_lock() bit */
	uint8_t thp_chunk;		/* head of a block: its chunk is MADV_HUGEPAGE */
	union {
		uint32_t nr_dirty;	/* free block: pages maybe resident */
		/*
		 * PAGE_SLAB frozen as a CPU slab: byte offset of the first
		 * object never yet linked into a freelist, 0 when there is
		 * none (see allocate_slab()).
		 */
		uint32_t fresh_offset;
	};
	union {
		size_t map_size;	/* PAGE_HUGE: bytes mapped; PAGE_LARGE: of the run; PAGE_SLAB: slab bytes */
		uint64_t dirty_since_ms; /* PAGE_BUDDY with nr_dirty: when it was freed */
	};
} __attribute__((aligned(64)));

#define UKS_CHUNK_SHIFT		21
#define UKS_CHUNK_SIZE		(1UL << UKS_CHUNK_SHIFT)
#define UKS_MAX_PAGE_ORDER	9	/* a whole chunk of 4 KiB pages */

extern unsigned int __uks_page_size;
extern unsigned int __uks_page_shift;

/* The largest buddy order: a whole chunk (5 with 64 KiB pages), at most UKS_MAX_PAGE_ORDER. */
static inline unsigned int __uks_max_page_order(void)
{
	unsigned int order = UKS_CHUNK_SHIFT - __uks_page_shift;

	return order < UKS_MAX_PAGE_ORDER ? order : UKS_MAX_PAGE_ORDER;
}

/* How long freed memory stays resident for reuse (page_purge.c, huge_cache.c). */
#define UKS_PURGE_DELAY_MS	10

struct uks_page *__uks_alloc_pages(unsigned int order);
void __uks_free_pages(struct uks_page *page);
struct uks_page *__uks_alloc_page_run(unsigned int order, unsigned long nr_pages);
void __uks_free_page_run(struct uks_page *page, unsigned long nr_pages);
int __uks_resize_page_run(struct uks_page *page, unsigned long nr_pages,
			  unsigned long new_nr_pages);
struct uks_page *__uks_alloc_huge(size_t size, size_t align, bool *fresh);
void __uks_free_huge(struct uks_page *page);
void *__uks_resize_huge(struct uks_page *page, size_t new_size);
void __uks_page_alloc_init(void);
void __uks_page_alloc_set_huge_chunks(bool on);
void __uks_for_each_page(void (*fn)(struct uks_page *page, void *arg), void *arg);
void __uks_page_alloc_lock(void);
void __uks_page_alloc_unlock(void);
void __uks_page_alloc_child_reset(void);
size_t __uks_page_trim(size_t keep);
void __uks_page_usage(size_t *heap_bytes, size_t *free_blocks, size_t *resident_free_bytes);

/* Shared by page_alloc.c, huge_map.c and huge_cache.c. */
void *__uks_map_anon(size_t size);
void *__uks_map_aligned(size_t size, size_t align, int prot, int flags);
_Atomic(uintptr_t) *__uks_chunk_slot(uintptr_t addr, bool create);
void __uks_huge_cache_expire(uint64_t now);
void __uks_huge_cache_drain(void);
void __uks_huge_cache_stats(size_t *bytes, uint64_t *delay_ms);
void __uks_huge_usage(size_t *in_use, size_t *peak, size_t *nr, size_t *peak_nr);
extern _Atomic uint64_t __uks_huge_cache_expiry_ms;

/* A coarse clock is enough for the purge delay and costs no syscall (vDSO). */
static inline uint64_t __uks_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/*
 * Has memory freed at @since waited out the purge delay by @now?  @now is
 * often read before the zone lock, so a block another thread freed since
 * is younger than it: signed, that is not due (unsigned, it wrapped and
 * was purged at once).
 */
static inline bool __uks_purge_due(uint64_t now, uint64_t since)
{
	return (int64_t)(now - since) >= UKS_PURGE_DELAY_MS;
}

/* Unmap the cached huge extents once the oldest has expired. */
static inline void __uks_huge_cache_tick(uint64_t now)
{
	uint64_t expiry = atomic_load_explicit(&__uks_huge_cache_expiry_ms, memory_order_relaxed);

	if (__builtin_expect(expiry && now >= expiry, 0))
		__uks_huge_cache_expire(now);
}

/* The same from a slab slow path: no clock read while nothing is cached. */
static inline void __uks_huge_cache_poll(void)
{
	if (__builtin_expect(atomic_load_explicit(&__uks_huge_cache_expiry_ms,
						  memory_order_relaxed) != 0, 0))
		__uks_huge_cache_tick(__uks_now_ms());
}

/* Linux hands out 47-bit user addresses unless a mapping asks for more. */
#define UKS_TABLE_LEAF_BITS	13
#define UKS_TABLE_TOP_BITS	(48 - UKS_CHUNK_SHIFT - UKS_TABLE_LEAF_BITS)

extern _Atomic(uintptr_t *) __uks_chunk_table[1UL << UKS_TABLE_TOP_BITS];
extern unsigned int __uks_chunk_pages_mask;

/*
 * Each chunk's descriptor array is preceded by a cache map: for every page
 * of the chunk the kmem cache whose slab holds it, or NULL.  The preload
 * malloc's free() reads it instead of the descriptor: 8 bytes per page
 * instead of a cache line, so the frees of a heap of a few MiB find their
 * caches in L1 rather than missing on one descriptor per page.  It has an
 * entry per 4 KiB whatever the page size (those of a bigger page repeat
 * its cache), so free() indexes it with constants: the page shift and
 * mask cost two loads and a shift by %cl, more than the test of a slot
 * start free() makes (obj_start_fast()).
 *
 * Caches are cache-line aligned, so an entry's low six bits are free.  In
 * the caches whose sheaves take only their own CPU's objects (sheaf.c,
 * sheaf_home_only) they hold UKS_SLAB_HOME_TAGGED and the slab's home: the
 * CPU slot, modulo 32, whose CPU slab it last became.
 */
#define UKS_CACHE_MAP_SHIFT		12	/* an entry per 4 KiB */
#define UKS_PAGE_CACHE_MAP_BYTES	((UKS_CHUNK_SIZE >> UKS_CACHE_MAP_SHIFT) * sizeof(uintptr_t))
#define UKS_SLAB_HOME_MASK		63UL	/* the bits below */
#define UKS_SLAB_HOME_TAGGED		32UL
#define UKS_SLAB_HOME_CPU_MASK		31UL

/* The chunk table's entry for @addr: 0 if never handed out, bit 0 for a huge mapping. */
static inline uintptr_t __uks_chunk_entry(const void *addr)
{
	uintptr_t idx = (uintptr_t)addr >> UKS_CHUNK_SHIFT;
	uintptr_t *leaf;

	if (__builtin_expect(idx >> UKS_TABLE_LEAF_BITS >= (1UL << UKS_TABLE_TOP_BITS), 0))
		return 0;
	leaf = atomic_load_explicit(&__uks_chunk_table[idx >> UKS_TABLE_LEAF_BITS],
				    memory_order_acquire);
	if (__builtin_expect(!leaf, 0))
		return 0;
	return __atomic_load_n(&leaf[idx & ((1UL << UKS_TABLE_LEAF_BITS) - 1)], __ATOMIC_ACQUIRE);
}

static inline uintptr_t __uks_chunk_page_index(const void *addr)
{
	return ((uintptr_t)addr >> __uks_page_shift) & __uks_chunk_pages_mask;
}

/* @addr's entry in its chunk's cache map (see above). */
static inline uintptr_t __uks_cache_map_index(const void *addr)
{
	return ((uintptr_t)addr >> UKS_CACHE_MAP_SHIFT) &
	       ((UKS_CHUNK_SIZE >> UKS_CACHE_MAP_SHIFT) - 1);
}

/**
 * __uks_virt_to_page - the descriptor of the page holding @addr
 * @addr: any address
 *
 * Return: the page descriptor (PAGE_TAIL for a later page of a block), or
 * NULL if the address was never handed out by this allocator.
 */
static inline struct uks_page *__uks_virt_to_page(const void *addr)
{
	uintptr_t e = __uks_chunk_entry(addr);

	if (__builtin_expect(e & 1, 0))
		return (struct uks_page *)(e & ~1UL);	/* a huge mapping */
	if (__builtin_expect(!e, 0))
		return NULL;
	return &((struct uks_page *)e)[__uks_chunk_page_index(addr)];
}

/* @addr's cache map entry: its cache and the slab's home, or 0 (see below). */
static inline uintptr_t __uks_virt_to_cache_entry(const void *addr)
{
	uintptr_t e = __uks_chunk_entry(addr);

	if (__builtin_expect(!e || (e & 1), 0))
		return 0;
	return __atomic_load_n(&((uintptr_t *)(e - UKS_PAGE_CACHE_MAP_BYTES))
					[__uks_cache_map_index(addr)], __ATOMIC_RELAXED);
}

/**
 * __uks_virt_to_cache - the cache of the slab holding @addr, from the cache map
 * @addr: any address
 *
 * Return: the cache, or NULL if @addr is in no slab (a large block, a huge
 * mapping, a free page, or memory that is not ours).
 */
static inline struct uks_kmem_cache *__uks_virt_to_cache(const void *addr)
{
	return (struct uks_kmem_cache *)(__uks_virt_to_cache_entry(addr) & ~UKS_SLAB_HOME_MASK);
}

void __uks_set_page_cache(struct uks_page *page, struct uks_kmem_cache *s);
void __uks_set_slab_home(struct uks_page *page, struct uks_kmem_cache *s, uintptr_t home);

/* The descriptor of the first page of the slab or block holding @addr. */
static inline struct uks_page *__uks_virt_to_head_page(const void *addr)
{
	struct uks_page *page = __uks_virt_to_page(addr);

	if (page && page->kind == PAGE_TAIL)
		page = page->head;
	return page;
}

#endif
