// SPDX-License-Identifier: MIT
/*
 * When the buddy allocator's free pages go back to the system, and which
 * chunks are huge pages (page_alloc.c calls in here under its zone lock,
 * see page_zone.h).
 *
 * Memory goes back to the system with a delay, as mimalloc's purge delay
 * and jemalloc's dirty decay do: a freed (and merged) block stays resident
 * ("dirty") for the purge delay, UKS_PURGE_DELAY_MS, and allocations take
 * dirty blocks first.  Page-level calls purge the dirty blocks older than
 * that, at most every half delay and never below a resident reserve:
 * 256 KiB, or an eighth of the pages in use when that is more.  A program
 * that frees a whole heap and builds it again within the delay (a batch, a
 * request, a phase) pays neither madvise(MADV_DONTNEED) nor the page
 * faults after it; an immediate release made bench/malloc-peers' allfree
 * pattern 20x slower than glibc.  What a quiet heap keeps resident is at
 * most what was freed in the last delay, until the next page-level call.
 * Free lists hold dirty blocks before clean ones, newest first.
 * __uks_page_trim() (malloc_trim()) purges without the delay.
 *
 * Chunks after the first SMALL_PAGE_CHUNKS are madvise(MADV_HUGEPAGE)d, as
 * the kernel's slab pages live in its direct map of huge pages: one fault
 * and one TLB entry per 2 MiB instead of 512.  A 19 MiB heap under random
 * replacement (bench/malloc-peers' mixed) ran in 0.67x the time, with 4%
 * more RSS: a huge page is resident whole, so the heap's last chunk costs
 * up to 2 MiB.  Heaps up to 4 MiB keep small pages and their small RSS
 * (advising from the second chunk on made git status' RSS 30% bigger;
 * from the third, gcc's and a python script's 2-3%).  Where the kernel's
 * THP mode is "never" (or THP is not built) nothing is advised;
 * UKS_SLUB_THP=0 (slub.c) leaves it out too.
 *
 * Once the heap outgrows them, the small-page chunks are promoted: each is
 * advised and collapsed into a huge page on the spot (MADV_COLLAPSE, Linux
 * 6.1), so that a big heap is huge pages throughout (mixed: 0.92x the time
 * of huge pages past 8 MiB only; promoting at 4 MiB instead of 8 took
 * mixed's per-round ratio to glibc from 0.81 to 0.77-0.79, as 4 MiB
 * fewer small-page faults and collapses).  A chunk whose free blocks
 * hold more than PROMOTE_CLEAN_EIGHTHS/8 of its pages not resident stays
 * small (a collapse makes all of it resident) and is tried again when
 * the heap next grows.
 * Kernels without MADV_COLLAPSE keep them small.
 *
 * Purging a block smaller than its chunk from an advised chunk would
 * split the chunk's huge page (MADV_DONTNEED of part of it), and the
 * faults after it map small pages again: mixed kept 2-4 MiB of its 10
 * MiB of advised chunks in huge pages, and took 13% longer than with 10.
 * So such blocks are purged only when the resident free pages pass a
 * higher mark, half the pages in use (a heap that shrank, not one that
 * churns), and then down to the usual reserve like the rest.
 */
#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

#include "slab/page_alloc.h"
#include "slab/page_zone.h"

#define RESIDENT_FREE_RESERVE	(256UL << 10)	/* bytes of free pages never purged */
#define PROMOTE_CLEAN_EIGHTHS	1	/* at most, of a small chunk to collapse */

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE		25	/* Linux 6.1; older glibc headers lack it */
#endif

/*
 * Mark the blocks of a chunk just collapsed as blocks of an advised chunk.
 * Free blocks are walked by their order (stable under the zone lock); any
 * other descriptor that is no tail may head a block in use, whose flag
 * its free will carry into the free lists.  Zone lock held.
 */
static void mark_chunk_huge(struct uks_page *descs)
{
	for (unsigned int i = 0; i < zone->chunk_pages;) {
		struct uks_page *page = &descs[i];

		if (page->kind == PAGE_BUDDY) {
			if (page->nr_dirty && !page->thp_chunk)
				zone->area[page->order].nr_dirty_small--;
			page->thp_chunk = 1;
			i += 1u << page->order;
			continue;
		}
		if (page->kind != PAGE_TAIL)
			page->thp_chunk = 1;
		i++;
	}
}

/*
 * Pages of a chunk's free blocks that are not resident: what collapsing it
 * would add to the RSS (pages of slabs in use will be touched anyway).
 * Walked as mark_chunk_huge() walks.  Zone lock held.
 */
static unsigned int chunk_clean_free_pages(const struct uks_page *descs)
{
	unsigned int clean = 0;

	for (unsigned int i = 0; i < zone->chunk_pages;) {
		const struct uks_page *page = &descs[i];

		if (page->kind == PAGE_BUDDY) {
			unsigned int pages = 1u << page->order;

			clean += page->nr_dirty < pages ? pages - page->nr_dirty : 0;
			i += pages;
		} else {
			i++;
		}
	}
	return clean;
}

/*
 * Collapse into huge pages the small-page chunks with few free pages that
 * are not resident (see the top of the file).  Called without the zone
 * lock: a collapse copies 2 MiB, which other threads' page-level calls
 * need not wait for.  The caller's new block is not set up yet, which the
 * walks above allow for.
 */
void __uks_promote_small_chunks(void)
{
	struct uks_page **list = atomic_load(&__uks_chunk_list);

	for (unsigned int i = 0; i < SMALL_PAGE_CHUNKS; i++) {
		char *base = list[i]->addr;
		bool skip;

		pthread_mutex_lock(&zone->lock);
		skip = (zone->small_promoted & (1u << i)) ||
		       chunk_clean_free_pages(list[i]) * 8 > zone->chunk_pages * PROMOTE_CLEAN_EIGHTHS;
		pthread_mutex_unlock(&zone->lock);
		/* advised only once collapsed: an older kernel leaves it as it was */
		if (skip || madvise(base, UKS_CHUNK_SIZE, MADV_COLLAPSE))
			continue;
		madvise(base, UKS_CHUNK_SIZE, MADV_HUGEPAGE);
		pthread_mutex_lock(&zone->lock);
		if (!(zone->small_promoted & (1u << i))) {
			mark_chunk_huge(list[i]);
			zone->small_promoted |= (uint8_t)(1u << i);
		}
		pthread_mutex_unlock(&zone->lock);
	}
}

/*
 * Purge the due blocks of one order-@o list, free or tail (see
 * purge_blocks()).  Both hold their dirty blocks first (add_free_block_to()),
 * so the walk ends at the first clean one.  @small_left counts the dirty
 * small-page blocks of both lists not seen yet.
 * Return: whether the reserve was reached.
 */
static bool purge_list(struct list_head *head, unsigned int o, uint64_t now, unsigned long reserve,
		       bool small_only, unsigned long *small_left, unsigned long *purged)
{
	struct uks_page *page, *next;

	list_for_each_entry_safe(page, next, head, buddy) {
		if (zone->resident_free_pages <= reserve)
			return true;
		/*
		 * Only small-page chunks' blocks may go: once all of them were
		 * seen, the rest would be a walk over blocks kept each time
		 * (slub_debug's perl clearing a hash spent 15% of its time here).
		 */
		if (small_only && !*small_left)
			break;
		if (!page->nr_dirty)
			break;		/* the clean blocks follow */
		if (!page->thp_chunk)
			(*small_left)--;
		if (now && !__uks_purge_due(now, page->dirty_since_ms))
			continue;
		if (small_only && page->thp_chunk)
			continue;	/* it would split a huge page */
		madvise(page->addr, (size_t)__uks_page_size << o, MADV_DONTNEED);
		*purged += page->nr_dirty;
		if (!page->thp_chunk)
			zone->area[o].nr_dirty_small--;
		uncount_resident_free(page->nr_dirty);
		page->nr_dirty = 0;
		list_move_tail(&page->buddy, head);
	}
	return false;
}

/*
 * madvise(MADV_DONTNEED) dirty free blocks, largest orders first, until no
 * more than @reserve pages of them are resident.  Only blocks freed
 * UKS_PURGE_DELAY_MS ago or earlier go, unless @now is 0 (a trim: every
 * block); @spare_thp keeps blocks smaller than their advised chunk.
 * Zone lock held.  Return: pages handed back.
 */
static unsigned long purge_blocks(uint64_t now, unsigned long reserve, bool spare_thp)
{
	unsigned long purged = 0;

	for (int o = (int)zone->max_order; o >= 0; o--) {
		bool small_only = spare_thp && o < (int)zone->max_order;
		unsigned long small_left = zone->area[o].nr_dirty_small;

		if (purge_list(&zone->area[o].free_list, (unsigned int)o, now, reserve, small_only,
			       &small_left, &purged) ||
		    purge_list(&zone->area[o].tail_list, (unsigned int)o, now, reserve, small_only,
			       &small_left, &purged))
			break;
	}
	return purged;
}

/*
 * Hand back the memory of dirty free blocks freed UKS_PURGE_DELAY_MS ago or
 * earlier, at most every half delay, until only the reserve is left.
 * Called with the zone lock held.
 */
void __uks_purge_old_blocks(uint64_t now)
{
	unsigned long reserve = RESIDENT_FREE_RESERVE >> __uks_page_shift;

	/*
	 * A heap that churns whole slabs frees and takes back blocks all the
	 * time; purging them all after the delay made bench/malloc-peers'
	 * mixed pattern fault its pages in again and again.  So the reserve
	 * grows with the heap: an eighth of what is in use.
	 */
	if (reserve < zone->used_pages / 8)
		reserve = zone->used_pages / 8;

	if (zone->resident_free_pages <= reserve || now < zone->next_purge_ms)
		return;
	zone->next_purge_ms = now + UKS_PURGE_DELAY_MS / 2;
	/* Advised chunks' blocks go too once half the pages in use lie free. */
	purge_blocks(now, reserve, zone->resident_free_pages <= zone->used_pages / 2);
}

/**
 * __uks_page_trim - hand back the memory of free blocks now (malloc_trim())
 * @keep: bytes of free pages that may stay resident
 *
 * Unlike the purge on page-level calls, this waits for no delay and splits
 * huge pages: the caller asked for the memory back.
 *
 * Return: bytes handed back.
 */
size_t __uks_page_trim(size_t keep)
{
	unsigned long pages;

	pthread_mutex_lock(&zone->lock);
	pages = purge_blocks(0, keep >> __uks_page_shift, false);
	pthread_mutex_unlock(&zone->lock);
	return (size_t)pages << __uks_page_shift;
}

/**
 * __uks_page_usage - the zone's counters, for uks_slab_usage()
 * @heap_bytes: set to the bytes of every chunk mapped
 * @free_blocks: set to the number of free blocks
 * @resident_free_bytes: set to the bytes of free blocks maybe still resident
 */
void __uks_page_usage(size_t *heap_bytes, size_t *free_blocks, size_t *resident_free_bytes)
{
	size_t blocks = 0;

	pthread_mutex_lock(&zone->lock);
	for (unsigned int o = 0; o <= zone->max_order; o++)
		blocks += zone->area[o].nr_free;
	*free_blocks = blocks;
	*resident_free_bytes = (size_t)zone->resident_free_pages << __uks_page_shift;
	*heap_bytes = atomic_load(&__uks_nr_chunks) * UKS_CHUNK_SIZE;
	pthread_mutex_unlock(&zone->lock);
}
