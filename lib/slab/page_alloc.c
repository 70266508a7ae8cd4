// SPDX-License-Identifier: MIT
/*
 * Buddy page allocator over 2 MiB chunks (see page_alloc.h).
 *
 * Blocks of 2^order pages, order 0..UKS_MAX_PAGE_ORDER, are split from and
 * merged back into chunks exactly as the kernel's buddy allocator does.
 * One mutex (the "zone lock") protects the free areas; callers reach here
 * once per slab, not per object.
 *
 * A run (__uks_alloc_page_run(), the preload malloc's blocks past
 * kmalloc-8k) keeps only the pages it asks for: the rest of its block goes
 * back as the blocks it is made of, as the kernel's alloc_pages_exact()
 * does, but onto tail lists that allocations take last (find_block()).
 * The run then finds them free to grow into (__uks_resize_page_run()) and
 * to merge with when it is freed.
 *
 * Free blocks stay resident for a while before they go back to the
 * system, and chunks past the first two are huge pages: page_purge.c.
 *
 * The chunk table maps (addr >> 21) to the chunk's descriptor array with
 * two loads; entries for huge mappings are tagged with bit 0 and point at
 * a single descriptor.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "core/compiler.h"
#include "slab/page_alloc.h"
#include "slab/page_zone.h"

unsigned int __uks_page_size = 4096;
unsigned int __uks_page_shift = 12;

struct page_zone __uks_zone = {
	.lock = PTHREAD_MUTEX_INITIALIZER, .huge_chunks = true, .thp_usable = -1,
};

_Atomic(uintptr_t *) __uks_chunk_table[1UL << UKS_TABLE_TOP_BITS];
unsigned int __uks_chunk_pages_mask;

void *__uks_map_anon(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/*
 * @size bytes aligned to @align (a power of two >= the page size), mapped
 * with @prot and MAP_PRIVATE | MAP_ANONYMOUS | @flags.  Heap chunks are
 * MAP_NORESERVE; an allocation's own mapping is charged as glibc's are,
 * so that the kernel's overcommit heuristic refuses a request beyond RAM
 * and swap (malloc() returns NULL, ENOMEM) instead of granting it and
 * killing the process at the first touch.
 */
void *__uks_map_aligned(size_t size, size_t align, int prot, int flags)
{
	size_t span = size + align;
	char *p, *start;

	if (span < size)
		return NULL;
	p = mmap(NULL, span, prot, MAP_PRIVATE | MAP_ANONYMOUS | flags, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	start = (char *)ALIGN_UP((uintptr_t)p, align);
	if (start > p)
		munmap(p, (size_t)(start - p));
	if (start + size < p + span)
		munmap(start + size, (size_t)(p + span - (start + size)));
	return start;
}

void __uks_page_alloc_init(void)
{
	long ps;

	pthread_mutex_lock(&zone->lock);
	if (zone->ready)
		goto out;
	/*
	 * getpagesize(), not sysconf(): sysconf's jump table would pull 64 KiB
	 * of glibc's read-only data into every process that preloads us.
	 */
	ps = getpagesize();
	/* below 4 KiB a chunk's pages would not fit its cache map */
	if (ps >= 4096 && (ps & (ps - 1)) == 0 && (unsigned long)ps <= UKS_CHUNK_SIZE / 2) {
		__uks_page_size = (unsigned int)ps;
		__uks_page_shift = (unsigned int)__builtin_ctzl((unsigned long)ps);
	}
	zone->chunk_pages = (unsigned int)(UKS_CHUNK_SIZE >> __uks_page_shift);
	zone->max_order = __uks_max_page_order();
	__uks_chunk_pages_mask = zone->chunk_pages - 1;
	for (unsigned int o = 0; o <= UKS_MAX_PAGE_ORDER; o++) {
		INIT_LIST_HEAD(&zone->area[o].free_list);
		INIT_LIST_HEAD(&zone->area[o].tail_list);
	}
	zone->ready = true;
out:
	pthread_mutex_unlock(&zone->lock);
}

/**
 * __uks_page_alloc_set_huge_chunks - advise huge pages for later chunks?
 * @on: true (the default): chunks past the first SMALL_PAGE_CHUNKS get
 *	MADV_HUGEPAGE
 *
 * Applies to chunks mapped from now on.
 */
void __uks_page_alloc_set_huge_chunks(bool on)
{
	pthread_mutex_lock(&zone->lock);
	zone->huge_chunks = on;
	pthread_mutex_unlock(&zone->lock);
}

_Atomic(uintptr_t) *__uks_chunk_slot(uintptr_t addr, bool create)
{
	uintptr_t idx = addr >> UKS_CHUNK_SHIFT;
	uintptr_t top = idx >> UKS_TABLE_LEAF_BITS;
	uintptr_t *leaf;

	if (top >= ARRAY_SIZE(__uks_chunk_table))
		return NULL;
	leaf = atomic_load_explicit(&__uks_chunk_table[top], memory_order_acquire);
	if (!leaf) {
		uintptr_t *fresh, *expected = NULL;

		if (!create)
			return NULL;
		fresh = __uks_map_anon(sizeof(uintptr_t) << UKS_TABLE_LEAF_BITS);
		if (!fresh)
			return NULL;
		if (atomic_compare_exchange_strong(&__uks_chunk_table[top], &expected, fresh)) {
			leaf = fresh;
		} else {
			munmap(fresh, sizeof(uintptr_t) << UKS_TABLE_LEAF_BITS);
			leaf = expected;
		}
	}
	return (_Atomic(uintptr_t) *)&leaf[idx & ((1UL << UKS_TABLE_LEAF_BITS) - 1)];
}

/* Every chunk's descriptor array (see page_zone.h). */
struct uks_page **_Atomic __uks_chunk_list;
_Atomic size_t __uks_nr_chunks;
static size_t chunk_list_cap;

static int remember_chunk(struct uks_page *descs)
{
	struct uks_page **list = atomic_load(&__uks_chunk_list);

	if (__uks_nr_chunks == chunk_list_cap) {
		size_t cap = chunk_list_cap ? chunk_list_cap * 2 : 512;
		struct uks_page **bigger = __uks_map_anon(cap * sizeof(*bigger));

		if (!bigger)
			return -ENOMEM;
		if (list)
			memcpy(bigger, list, __uks_nr_chunks * sizeof(*bigger));
		atomic_store(&__uks_chunk_list, bigger);
		list = bigger;
		chunk_list_cap = cap;
	}
	list[__uks_nr_chunks] = descs;
	atomic_store(&__uks_nr_chunks, __uks_nr_chunks + 1);
	return 0;
}

/**
 * __uks_for_each_page - call @fn on the head descriptor of every block
 * @fn: callback; may take any lock (the zone lock is not held)
 * @arg: passed to @fn
 *
 * Blocks may change while the walk runs; callers check kinds themselves.
 */
void __uks_for_each_page(void (*fn)(struct uks_page *page, void *arg), void *arg)
{
	size_t n = atomic_load(&__uks_nr_chunks);
	struct uks_page **list = atomic_load(&__uks_chunk_list);

	for (size_t i = 0; i < n; i++)
		for (unsigned int j = 0; j < zone->chunk_pages; j++)
			if (list[i][j].kind != PAGE_TAIL && list[i][j].kind != PAGE_UNUSED)
				fn(&list[i][j], arg);
}

/*
 * Does the kernel back MADV_HUGEPAGE memory with huge pages?  Its THP mode
 * is read once; without the file (THP not built) the answer is no.
 */
static bool thp_usable(void)
{
	if (zone->thp_usable < 0) {
		char mode[64] = "";
		int fd = open("/sys/kernel/mm/transparent_hugepage/enabled", O_RDONLY | O_CLOEXEC);
		ssize_t n = fd >= 0 ? read(fd, mode, sizeof(mode) - 1) : -1;

		if (fd >= 0)
			close(fd);
		zone->thp_usable = n > 0 && !strstr(mode, "[never]");
	}
	return zone->thp_usable;
}

static int grow_zone(void)
{
	struct uks_page *descs;
	char *base, *meta;
	bool thp;
	size_t meta_bytes = UKS_PAGE_CACHE_MAP_BYTES +
			    (size_t)zone->chunk_pages * sizeof(struct uks_page);
	_Atomic(uintptr_t) *slot;

	base = __uks_map_aligned(UKS_CHUNK_SIZE, UKS_CHUNK_SIZE, PROT_READ | PROT_WRITE, MAP_NORESERVE);
	if (!base)
		return -ENOMEM;
	thp = zone->huge_chunks && __uks_nr_chunks >= SMALL_PAGE_CHUNKS && thp_usable() &&
	      madvise(base, UKS_CHUNK_SIZE, MADV_HUGEPAGE) == 0;
	/* the cache map, then the descriptors (see page_alloc.h) */
	meta = __uks_map_anon(meta_bytes);
	descs = meta ? (struct uks_page *)(meta + UKS_PAGE_CACHE_MAP_BYTES) : NULL;
	slot = descs ? __uks_chunk_slot((uintptr_t)base, true) : NULL;
	if (!slot || remember_chunk(descs)) {
		if (meta)
			munmap(meta, meta_bytes);
		munmap(base, UKS_CHUNK_SIZE);
		return -ENOMEM;
	}
	/*
	 * Only the first descriptor is set up: a split sets up the head of
	 * the half it makes, so a descriptor is written (and its page of
	 * the array made resident) when its page is first used.  Writing all
	 * 512 kept 32 KiB resident per chunk, most of it for pages never used.
	 */
	descs[0].addr = base;
	descs[0].thp_chunk = thp;
	if (thp && zone->small_promoted != (1u << SMALL_PAGE_CHUNKS) - 1)
		zone->promote_due = true;
	atomic_store_explicit(slot, (uintptr_t)descs, memory_order_release);
	add_free_block(&descs[0], zone->max_order, 0, 0);
	return 0;
}

/*
 * The block to split for an allocation whose smallest fitting order is
 * @order: the newest dirty block of that order, resident already.  With
 * none dirty, a block of a small-page chunk, of that order or up to
 * PICK_SCAN blocks further on: a clean block of an advised chunk costs a
 * whole 2 MiB page at the first touch, so a heap trimmed or purged down
 * (malloc_trim(), then fopen()) would get one back for its first slab.
 */
#define PICK_SCAN	8

static struct uks_page *pick_block(unsigned int order)
{
	struct uks_page *first = list_first_entry(&zone->area[order].free_list, struct uks_page, buddy);
	int budget = PICK_SCAN;

	if (first->nr_dirty || !first->thp_chunk)
		return first;
	for (unsigned int o = order; o <= zone->max_order; o++) {
		struct uks_page *page;

		list_for_each_entry(page, &zone->area[o].free_list, buddy) {
			if (!page->thp_chunk)
				return page;
			if (--budget <= 0)
				return first;
		}
	}
	return first;
}

/*
 * The free block to split for an order-@order allocation, or NULL: one
 * from the free lists (pick_block()), else the smallest a page run gave
 * back.  Those come last so that the run, when freed, finds them free
 * and merges back into its whole block: taken by slabs at once, they
 * left bench/malloc-peers' mixed heap ever more fragmented (a chunk more
 * and 17% more time).  Zone lock held.
 */
static struct uks_page *find_block(unsigned int order)
{
	for (unsigned int o = order; o <= zone->max_order; o++)
		if (!list_empty(&zone->area[o].free_list))
			return pick_block(o);
	for (unsigned int o = order; o <= zone->max_order; o++)
		if (!list_empty(&zone->area[o].tail_list))
			return list_first_entry(&zone->area[o].tail_list, struct uks_page, buddy);
	return NULL;
}

/*
 * Give back the pages of a block of 2^@order pages at @page past its first
 * @nr_pages, as the free blocks they make (the kernel's alloc_pages_exact()).
 * Each such block's buddy lies before it, inside the pages kept, so none
 * merges.  @dirty (pages of the block maybe resident) is shared out by
 * size.  Zone lock held.
 */
static void trim_block_tail(struct uks_page *page, unsigned int order, unsigned long nr_pages,
			    uint32_t dirty, uint64_t since)
{
	for (unsigned long pos = nr_pages; pos < (1UL << order);) {
		unsigned int o = (unsigned int)__builtin_ctzl(pos);
		struct uks_page *free = page_at(page, (long)pos);
		uint32_t share = (uint32_t)(((uint64_t)dirty << o) >> order);

		free->addr = page->addr + (pos << __uks_page_shift);
		free->thp_chunk = page->thp_chunk;
		add_free_block_to(&zone->area[o].tail_list, free, o, share, since);
		zone->resident_free_pages += share;
		pos += 1UL << o;
	}
}

/* Pages [@from, @to) of the run at @page are its tails now. */
static void set_run_tails(struct uks_page *page, unsigned long from, unsigned long to)
{
	for (unsigned long i = from; i < to; i++) {
		struct uks_page *tail = page_at(page, (long)i);

		tail->kind = PAGE_TAIL;
		tail->head = page;
		tail->slab_cache = NULL;
	}
}

/**
 * __uks_alloc_page_run - allocate @nr_pages contiguous pages
 * @order: the smallest order whose block holds @nr_pages, or more for an
 *	   alignment: the run starts on a 2^@order page boundary
 * @nr_pages: 1..2^@order; the block's pages past them go back at once
 *
 * A 9 KiB request then costs three pages, not the four of an order-2 block.
 * Return: the head page (kind PAGE_UNUSED, for the caller to set;
 * later pages of the run are PAGE_TAIL pointing at it), or NULL without
 * memory.  Free it with __uks_free_page_run(), @nr_pages given again.
 */
struct uks_page *__uks_alloc_page_run(unsigned int order, unsigned long nr_pages)
{
	struct uks_page *page = NULL;
	unsigned int o;
	uint32_t dirty;
	uint64_t since, now = __uks_now_ms();
	bool promote;

	if (order > zone->max_order || !nr_pages || nr_pages > (1UL << order))
		return NULL;
	pthread_mutex_lock(&zone->lock);
	while (!(page = find_block(order))) {
		if (grow_zone()) {
			pthread_mutex_unlock(&zone->lock);
			return NULL;
		}
	}
	o = page->order;
	dirty = page->nr_dirty;
	since = page->dirty_since_ms;
	del_free_block(page);
	zone->used_pages += nr_pages;
	uncount_resident_free(dirty);
	/* Split: the upper halves go back, each with half the dirty estimate. */
	while (o > order) {
		struct uks_page *half;

		o--;
		dirty /= 2;
		half = page_at(page, 1L << o);
		half->addr = page->addr + ((size_t)__uks_page_size << o);
		half->thp_chunk = page->thp_chunk;
		add_free_block(half, o, dirty, since);
		zone->resident_free_pages += dirty;
	}
	if (nr_pages < (1UL << order))
		trim_block_tail(page, order, nr_pages, dirty, since);
	__uks_purge_old_blocks(now);
	promote = zone->promote_due;
	zone->promote_due = false;
	pthread_mutex_unlock(&zone->lock);
	__uks_huge_cache_tick(now);
	if (unlikely(promote))
		__uks_promote_small_chunks();

	page->order = (uint8_t)order;
	page->kind = PAGE_UNUSED;
	set_run_tails(page, 1, nr_pages);
	return page;
}

/**
 * __uks_alloc_pages - allocate 2^@order contiguous, naturally aligned pages
 * @order: 0..UKS_MAX_PAGE_ORDER
 *
 * Return: the head page (kind PAGE_UNUSED, for the caller to set; later
 * pages are PAGE_TAIL pointing at it), or NULL without memory.
 */
struct uks_page *__uks_alloc_pages(unsigned int order)
{
	return __uks_alloc_page_run(order, 1UL << order);
}

/**
 * __uks_set_page_cache - name @s as the cache of every page of block @page
 * @page: head of a block from __uks_alloc_pages()
 * @s: the cache whose slab the block becomes, or NULL when it stops being one
 */
void __uks_set_page_cache(struct uks_page *page, struct uks_kmem_cache *s)
{
	__uks_set_slab_home(page, s, 0);
}

/**
 * __uks_set_slab_home - name @s as the cache of block @page, with its home
 * @page: head of a block from __uks_alloc_pages()
 * @s: the cache whose slab the block is (cache-line aligned), or NULL
 * @home: 0, or UKS_SLAB_HOME_TAGGED | the home CPU slot modulo 32
 */
void __uks_set_slab_home(struct uks_page *page, struct uks_kmem_cache *s, uintptr_t home)
{
	uintptr_t e = __uks_chunk_entry(page->addr);
	uintptr_t *map = (uintptr_t *)(e - UKS_PAGE_CACHE_MAP_BYTES);
	uintptr_t first = __uks_cache_map_index(page->addr);
	uintptr_t n = (1UL << page->order) << (__uks_page_shift - UKS_CACHE_MAP_SHIFT);
	uintptr_t entry = s ? (uintptr_t)s | (home & UKS_SLAB_HOME_MASK) : 0;

	/* Unchanged entries are not written: every free reads these lines. */
	for (uintptr_t i = 0; i < n; i++)
		if (__atomic_load_n(&map[first + i], __ATOMIC_RELAXED) != entry)
			__atomic_store_n(&map[first + i], entry, __ATOMIC_RELAXED);
}

/*
 * Put the block of 2^@order pages at @page (its addr and thp_chunk set)
 * on the free lists, merged with its free buddies; @dirty of its pages
 * maybe resident.  Zone lock held.
 */
static void free_block(struct uks_page *page, unsigned int order, uint32_t dirty, uint64_t now)
{
	unsigned long idx = page_index(page);

	while (order < zone->max_order) {
		unsigned long buddy_idx = idx ^ (1UL << order);
		struct uks_page *buddy = page_at(page, (long)buddy_idx - (long)idx);

		if (buddy->kind != PAGE_BUDDY || buddy->order != order)
			break;
		dirty += buddy->nr_dirty;
		zone->resident_free_pages -= buddy->nr_dirty;
		del_free_block(buddy);
		if (buddy_idx < idx) {
			page->kind = PAGE_UNUSED;
			page = buddy;
			idx = buddy_idx;
		} else {
			buddy->kind = PAGE_UNUSED;
		}
		order++;
	}
	zone->resident_free_pages += dirty;
	add_free_block(page, order, dirty, now);
}

/*
 * Free pages [@from, @to) of the run at @page, as the naturally aligned
 * blocks they are made of, each merged with its free buddies: the last
 * one freed merges what the others could not.  Zone lock held.
 */
static void free_run_pages(struct uks_page *page, unsigned long from, unsigned long to,
			   uint64_t now)
{
	unsigned long head_idx = page_index(page);

	for (unsigned long pos = from; pos < to;) {
		/* the largest block aligned here, in the chunk, that fits */
		unsigned int o = (unsigned int)__builtin_ctzl((head_idx + pos) | (1UL << zone->max_order));
		struct uks_page *block = page_at(page, (long)pos);

		while ((1UL << o) > to - pos)
			o--;
		block->addr = page->addr + (pos << __uks_page_shift);
		block->thp_chunk = page->thp_chunk;
		free_block(block, o, 1U << o, now);
		pos += 1UL << o;
	}
}

/*
 * Give back pages [@from, @to) of the run at @page (all of it from 0):
 * the zone-locked part of a free or a shrink.
 */
static void release_run_pages(struct uks_page *page, unsigned long from, unsigned long to)
{
	uint64_t now = __uks_now_ms();

	for (unsigned long i = from ? from : 1; i < to; i++)
		page_at(page, (long)i)->kind = PAGE_UNUSED;

	pthread_mutex_lock(&zone->lock);
	zone->used_pages -= to - from;
	free_run_pages(page, from, to, now);
	__uks_purge_old_blocks(now);
	pthread_mutex_unlock(&zone->lock);
	__uks_huge_cache_tick(now);
}

/**
 * __uks_free_page_run - return a run from __uks_alloc_page_run()
 * @page: its head page
 * @nr_pages: its length now
 */
void __uks_free_page_run(struct uks_page *page, unsigned long nr_pages)
{
	release_run_pages(page, 0, nr_pages);
}

/*
 * Are pages [@from, @to) of @page's run all in free blocks, each starting
 * where the one before ends?  Zone lock held.
 */
static bool run_extension_free(struct uks_page *page, unsigned long from, unsigned long to)
{
	if (page_index(page) + to > zone->chunk_pages)
		return false;
	for (unsigned long pos = from; pos < to;) {
		const struct uks_page *block = page_at(page, (long)pos);

		if (block->kind != PAGE_BUDDY)
			return false;
		pos += 1UL << block->order;
	}
	return true;
}

/**
 * __uks_resize_page_run - grow or shrink a run where it is
 * @page: head of a run from __uks_alloc_page_run()
 * @nr_pages: its length now
 * @new_nr_pages: the length wanted, at least 1
 *
 * A shrink gives the pages past @new_nr_pages back.  A growth takes the
 * pages after the run if they are free, as glibc's realloc() takes the
 * chunk after: a buffer grown a page at a time would otherwise be copied
 * at every step.  The pages a run gave back when it was allocated are
 * taken last by others (find_block()), so they are usually still there.
 * Return: 0, or -ENOMEM if the pages after the run are not free.
 */
int __uks_resize_page_run(struct uks_page *page, unsigned long nr_pages,
			  unsigned long new_nr_pages)
{
	if (new_nr_pages <= nr_pages) {
		if (new_nr_pages < nr_pages)
			release_run_pages(page, new_nr_pages, nr_pages);
		return 0;
	}
	pthread_mutex_lock(&zone->lock);
	if (!run_extension_free(page, nr_pages, new_nr_pages)) {
		pthread_mutex_unlock(&zone->lock);
		return -ENOMEM;
	}
	for (unsigned long pos = nr_pages; pos < new_nr_pages;) {
		struct uks_page *block = page_at(page, (long)pos);
		unsigned int o = block->order;
		uint32_t dirty = block->nr_dirty;

		del_free_block(block);
		uncount_resident_free(dirty);
		/* a block reaching past the new end gives that part back */
		if (pos + (1UL << o) > new_nr_pages)
			trim_block_tail(block, o, new_nr_pages - pos, dirty, block->dirty_since_ms);
		pos += 1UL << o;
	}
	zone->used_pages += new_nr_pages - nr_pages;
	pthread_mutex_unlock(&zone->lock);
	set_run_tails(page, nr_pages, new_nr_pages);
	return 0;
}

/**
 * __uks_free_pages - return a block from __uks_alloc_pages()
 * @page: its head page
 */
void __uks_free_pages(struct uks_page *page)
{
	__uks_free_page_run(page, 1UL << page->order);
}

/* fork(): hold the zone lock across it so the child sees consistent lists. */
void __uks_page_alloc_lock(void)
{
	pthread_mutex_lock(&zone->lock);
}

void __uks_page_alloc_unlock(void)
{
	pthread_mutex_unlock(&zone->lock);
}

void __uks_page_alloc_child_reset(void)
{
	pthread_mutex_init(&zone->lock, NULL);
}
