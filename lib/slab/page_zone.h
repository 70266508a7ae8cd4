/* SPDX-License-Identifier: MIT */
/*
 * The buddy allocator's zone (page_alloc.c), shared with its purge and
 * huge-page policy (page_purge.c).  Everything here is under the zone
 * lock unless said otherwise.
 */
#ifndef UKS_LIB_SLAB_PAGE_ZONE_H
#define UKS_LIB_SLAB_PAGE_ZONE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/list.h"
#include "slab/page_alloc.h"

#define SMALL_PAGE_CHUNKS	2	/* the first 4 MiB of heap: no huge pages */
_Static_assert(SMALL_PAGE_CHUNKS <= 8, "zone->small_promoted has a bit per small chunk");

struct free_area {
	struct list_head free_list;
	struct list_head tail_list;	/* pages runs gave back: taken last */
	unsigned long nr_free;
	unsigned long nr_dirty_small;	/* dirty blocks of small-page chunks */
};

struct page_zone {
	pthread_mutex_t lock;
	struct free_area area[UKS_MAX_PAGE_ORDER + 1];
	unsigned int chunk_pages;
	unsigned int max_order;
	unsigned long resident_free_pages;	/* estimate, for the reserve */
	unsigned long used_pages;		/* handed out, for the reserve */
	uint64_t next_purge_ms;
	bool huge_chunks;			/* MADV_HUGEPAGE past SMALL_PAGE_CHUNKS */
	bool promote_due;			/* an advised chunk was mapped */
	uint8_t small_promoted;			/* bit i: small chunk i is huge now */
	int8_t thp_usable;			/* kernel THP mode: 1 not "never", 0, -1 unread */
	bool ready;
};

extern struct page_zone __uks_zone;
static struct page_zone *const zone = &__uks_zone;

/*
 * Every chunk's descriptor array, in the order mapped, for walks.  Arrays
 * replaced on growth are not freed, so a walker that read the pointer may
 * keep using it without the zone lock.
 */
extern struct uks_page **_Atomic __uks_chunk_list;
extern _Atomic size_t __uks_nr_chunks;

static inline struct uks_page *page_at(struct uks_page *page, long delta)
{
	return page + delta;
}

static inline unsigned long page_index(const struct uks_page *page)
{
	return ((uintptr_t)page->addr >> __uks_page_shift) & (zone->chunk_pages - 1);
}

/*
 * Put @page, head of a free block of 2^@order pages with @nr_dirty maybe
 * resident, on @list (its order's free list or tail list): dirty blocks
 * first, newest first, so a purge walk ends at the first clean one.
 */
static inline void add_free_block_to(struct list_head *list, struct uks_page *page,
				     unsigned int order, uint32_t nr_dirty, uint64_t since_ms)
{
	page->kind = PAGE_BUDDY;
	page->order = (uint8_t)order;
	page->nr_dirty = nr_dirty;
	if (nr_dirty && !page->thp_chunk)
		zone->area[order].nr_dirty_small++;
	if (nr_dirty) {
		page->dirty_since_ms = since_ms;
		list_add(&page->buddy, list);
	} else {
		list_add_tail(&page->buddy, list);
	}
	zone->area[order].nr_free++;
}

static inline void add_free_block(struct uks_page *page, unsigned int order, uint32_t nr_dirty,
				  uint64_t since_ms)
{
	add_free_block_to(&zone->area[order].free_list, page, order, nr_dirty, since_ms);
}

/* @pages of the free pages maybe resident are no longer free (or resident). */
static inline void uncount_resident_free(unsigned long pages)
{
	zone->resident_free_pages -= pages < zone->resident_free_pages ?
				     pages : zone->resident_free_pages;
}

static inline void del_free_block(struct uks_page *page)
{
	list_del(&page->buddy);
	zone->area[page->order].nr_free--;
	if (page->nr_dirty && !page->thp_chunk)
		zone->area[page->order].nr_dirty_small--;
	page->kind = PAGE_UNUSED;
}

void __uks_purge_old_blocks(uint64_t now);
void __uks_promote_small_chunks(void);

#endif
