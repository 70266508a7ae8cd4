// SPDX-License-Identifier: MIT
/*
 * The huge cache: freed huge mappings (huge_map.c) kept mapped as free
 * extents for a while, and carved up for the next big allocations.
 *
 * An extent is a chunk-aligned range of pages a block of ours used to
 * own.  Extents that touch are merged, and an allocation takes the
 * smallest one it fits in and leaves the rest cached, so blocks of any
 * size between 2 and 32 MiB reuse each other's pages.  A same-size cache
 * served cc1's 4 MiB block per function, but a Python program building
 * bytes objects of 3-20 MiB took 1.9 M page faults where glibc took
 * 0.5 M: glibc's heap splits and coalesces those blocks once its dynamic
 * mmap threshold has risen past them, and jemalloc's extents and
 * mimalloc's spans do the same.
 *
 * Extents stay cached for a delay after their last free: the page
 * allocator's purge delay (UKS_PURGE_DELAY_MS) until an allocation misses
 * soon after an expiry unmapped an extent it would have fitted in, and
 * HUGE_CACHE_MAX_DELAY_MS from then on, as glibc raises its mmap
 * threshold for good once a program frees an mmapped block.  That Python
 * program spends 40-50 ms per round: at 10 ms it took 1.7 M faults.
 *
 * The cache never takes the footprint of huge blocks (in use plus cached)
 * past its peak so far, or past HUGE_CACHE_MIN_BYTES when that is more;
 * a miss, or a growth by mremap(), evicts extents to make room for its
 * new pages too.  glibc's heap, too, keeps what its peak needed.  numpy
 * temporaries of 2-24 MB took 1.29x glibc's peak RSS when the cache could
 * add 64 MiB to what was in use, 0.98x now, in the same time.  The cache
 * never holds more than HUGE_CACHE_MAX_BYTES either (that Python program
 * took 1.15x glibc's time with 64 MiB, 1.03x with 128), and at most
 * HUGE_CACHE_SLOTS extents; the smallest go first, as they serve the
 * fewest requests (a 2 MiB one none on its own; evicting the oldest
 * instead cost that program 10% more time).
 *
 * Expired extents are unmapped by the next page-level call or slab slow
 * path (a fast path reads no clock): a program that frees its big blocks
 * and then makes only fast-path calls keeps up to HUGE_CACHE_MAX_BYTES
 * mapped, as glibc keeps the free holes of its heap (it trims only the
 * top, past twice its mmap threshold) and jemalloc and mimalloc their
 * dirty pages until their next call.
 *
 * Extents merged from separate mappings are separate VMAs, and a block
 * carved across that seam cannot be moved by mremap() (EFAULT): realloc()
 * then copies it, as for a mapping its owner split.
 *
 * Locking: every function here but the unmap helpers runs under the zone
 * lock (__uks_page_alloc_lock()) and collects what it evicts in a
 * struct huge_unmaps, which the caller unmaps after unlocking.
 */
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "core/compiler.h"
#include "slab/huge_cache.h"

struct free_extent {
	char *addr;
	size_t size;
	uint64_t freed_ms;
	uint64_t age;		/* order of frees, finer than the clock */
};

static struct {
	struct free_extent ext[HUGE_CACHE_SLOTS];	/* by address, none touching */
	unsigned int nr;
	size_t bytes;
	uint64_t frees;
	uint64_t delay_ms;		/* how long a freed extent stays */
	uint64_t last_expiry_ms;	/* when take_expired() last unmapped one */
	size_t last_expired_max;	/* the biggest it unmapped then */
} cache = { .delay_ms = UKS_PURGE_DELAY_MS };

/* When the oldest extent expires; 0 when none is cached. */
_Atomic uint64_t __uks_huge_cache_expiry_ms;

static void note_unmap(struct huge_unmaps *out, char *addr, size_t size)
{
	out->range[out->nr].addr = addr;
	out->range[out->nr].size = size;
	out->nr++;
}

/** __uks_huge_unmap - unmap what a huge-cache call evicted; no lock held */
void __uks_huge_unmap(const struct huge_unmaps *out)
{
	for (unsigned int i = 0; i < out->nr; i++)
		munmap(out->range[i].addr, out->range[i].size);
}

static void remove_extent(unsigned int i)
{
	cache.bytes -= cache.ext[i].size;
	memmove(&cache.ext[i], &cache.ext[i + 1], (cache.nr - i - 1) * sizeof(cache.ext[0]));
	cache.nr--;
}

/* Insert @e at index @i (address order); a slot must be free. */
static void insert_extent(unsigned int i, struct free_extent e)
{
	memmove(&cache.ext[i + 1], &cache.ext[i], (cache.nr - i) * sizeof(cache.ext[0]));
	cache.ext[i] = e;
	cache.nr++;
	cache.bytes += e.size;
}

static unsigned int oldest_extent(void)
{
	unsigned int oldest = 0;

	for (unsigned int i = 1; i < cache.nr; i++)
		if (cache.ext[i].age < cache.ext[oldest].age)
			oldest = i;
	return oldest;
}

/* The smallest extent, the oldest of those: the first to evict. */
static unsigned int least_useful_extent(void)
{
	unsigned int victim = 0;

	for (unsigned int i = 1; i < cache.nr; i++) {
		const struct free_extent *e = &cache.ext[i], *v = &cache.ext[victim];

		if (e->size < v->size || (e->size == v->size && e->age < v->age))
			victim = i;
	}
	return victim;
}

static void update_expiry(void)
{
	uint64_t expiry = cache.nr ? cache.ext[oldest_extent()].freed_ms + cache.delay_ms : 0;

	atomic_store_explicit(&__uks_huge_cache_expiry_ms, expiry, memory_order_relaxed);
}

static void evict_extent(unsigned int i, struct huge_unmaps *out)
{
	note_unmap(out, cache.ext[i].addr, cache.ext[i].size);
	remove_extent(i);
}

/*
 * Evict the least useful extents (the tail of the last one, if that is
 * enough) until the cache holds at most @budget bytes.
 */
static void trim_to_budget(size_t budget, struct huge_unmaps *out)
{
	while (cache.bytes > budget) {
		unsigned int i = least_useful_extent();
		struct free_extent *e = &cache.ext[i];
		size_t excess = cache.bytes - budget;

		if (e->size <= excess) {
			evict_extent(i, out);
		} else {
			e->size -= excess;
			cache.bytes -= excess;
			note_unmap(out, e->addr + e->size, excess);
		}
	}
}

/**
 * __uks_huge_cache_trim - evict extents until the cache holds @budget bytes
 * @budget: huge_cache_budget()
 * @out: collects what was evicted
 *
 * For an allocation the cache could not serve: its new mapping must not
 * take the footprint past the budget either.  Zone lock held.
 */
void __uks_huge_cache_trim(size_t budget, struct huge_unmaps *out)
{
	trim_to_budget(budget, out);
	update_expiry();
}

/* Signed: @now may be older than a free made since it was read. */
static void take_expired(uint64_t now, struct huge_unmaps *out)
{
	bool expired = false;

	for (unsigned int i = 0; i < cache.nr;) {
		struct free_extent *e = &cache.ext[i];

		if ((int64_t)(now - e->freed_ms) < (int64_t)cache.delay_ms) {
			i++;
			continue;
		}
		if (!expired || e->size > cache.last_expired_max)
			cache.last_expired_max = e->size;
		expired = true;
		evict_extent(i, out);
	}
	if (expired)
		cache.last_expiry_ms = now;
}

/*
 * An allocation of @size bytes found no extent at @now: if an expiry just
 * unmapped one it would have fitted in, that was too soon.  Going up one
 * step at a time (doubling) cost that Python program 20% more time than
 * this single step.
 */
static void learn_from_miss(size_t size, uint64_t now)
{
	if (cache.last_expired_max >= size &&
	    (int64_t)(now - cache.last_expiry_ms) < (int64_t)cache.delay_ms)
		cache.delay_ms = HUGE_CACHE_MAX_DELAY_MS;
}

/**
 * __uks_huge_cache_put - cache a freed range
 * @addr: chunk-aligned start
 * @size: bytes, a multiple of the chunk size
 * @now: __uks_now_ms(), read under the zone lock so times only grow
 * @budget: the most bytes the cache may hold, huge_cache_budget()
 * @out: collects what expired or was evicted for room
 *
 * The range merges with the cached extents it touches; the merged extent
 * counts as freed at @now.  Zone lock held.
 */
void __uks_huge_cache_put(char *addr, size_t size, uint64_t now, size_t budget,
			  struct huge_unmaps *out)
{
	struct free_extent e = { addr, size, now, ++cache.frees };
	unsigned int i = 0;

	take_expired(now, out);
	while (i < cache.nr && cache.ext[i].addr < addr)
		i++;
	if (i > 0 && cache.ext[i - 1].addr + cache.ext[i - 1].size == addr) {
		i--;
		e.addr = cache.ext[i].addr;
		e.size += cache.ext[i].size;
		remove_extent(i);
	}
	if (i < cache.nr && e.addr + e.size == cache.ext[i].addr) {
		e.size += cache.ext[i].size;
		remove_extent(i);
	}
	if (cache.nr == HUGE_CACHE_SLOTS) {
		unsigned int victim = least_useful_extent();

		evict_extent(victim, out);
		if (victim < i)
			i--;
	}
	insert_extent(i, e);
	trim_to_budget(budget, out);
	update_expiry();
}

/**
 * __uks_huge_cache_take - carve a block out of the cached extents
 * @size: bytes, a multiple of the chunk size
 * @align: alignment, a power of two, at least the chunk size
 * @now: __uks_now_ms()
 * @out: collects what expired, or a remainder there was no slot for
 *
 * Takes the smallest extent that holds @size bytes at @align; what is
 * left of it before and after the block stays cached.  Zone lock held.
 *
 * Return: the block's address, or NULL if no extent holds it.
 */
char *__uks_huge_cache_take(size_t size, size_t align, uint64_t now, struct huge_unmaps *out)
{
	unsigned int best = HUGE_CACHE_SLOTS;
	struct free_extent e, head, tail;
	char *start;

	take_expired(now, out);
	for (unsigned int i = 0; i < cache.nr; i++) {
		const struct free_extent *c = &cache.ext[i];
		uintptr_t at = ALIGN_UP((uintptr_t)c->addr, align);

		if (at - (uintptr_t)c->addr > c->size || c->size - (at - (uintptr_t)c->addr) < size)
			continue;
		if (best == HUGE_CACHE_SLOTS || c->size < cache.ext[best].size)
			best = i;
	}
	if (best == HUGE_CACHE_SLOTS) {
		learn_from_miss(size, now);
		update_expiry();
		return NULL;
	}
	e = cache.ext[best];
	start = (char *)ALIGN_UP((uintptr_t)e.addr, align);
	head = (struct free_extent){ e.addr, (size_t)(start - e.addr), e.freed_ms, e.age };
	tail = (struct free_extent){ start + size, e.size - head.size - size, e.freed_ms, e.age };
	remove_extent(best);
	if (tail.size) {
		if (cache.nr == HUGE_CACHE_SLOTS - 1 && head.size)
			note_unmap(out, tail.addr, tail.size);	/* no slot for both */
		else
			insert_extent(best, tail);
	}
	if (head.size)
		insert_extent(best, head);
	update_expiry();
	return start;
}

/**
 * __uks_huge_cache_take_at - take the cached range at @addr, if there is one
 * @addr: chunk-aligned start, the end of a block growing in place
 * @size: bytes, a multiple of the chunk size
 *
 * Zone lock held.  Return: true if [@addr, @addr + @size) was cached and
 * is now the caller's.
 */
bool __uks_huge_cache_take_at(char *addr, size_t size)
{
	for (unsigned int i = 0; i < cache.nr; i++) {
		struct free_extent *e = &cache.ext[i];

		if (e->addr != addr)
			continue;
		if (e->size < size)
			return false;
		if (e->size == size) {
			remove_extent(i);
		} else {
			e->addr += size;
			e->size -= size;
			cache.bytes -= size;
		}
		update_expiry();
		return true;
	}
	return false;
}

/**
 * __uks_huge_cache_expire - unmap the extents that expired by @now
 * @now: __uks_now_ms()
 *
 * Page-level calls make it through __uks_huge_cache_tick().
 */
void __uks_huge_cache_expire(uint64_t now)
{
	struct huge_unmaps out = { 0 };

	__uks_page_alloc_lock();
	take_expired(now, &out);
	update_expiry();
	__uks_page_alloc_unlock();
	__uks_huge_unmap(&out);
}

/**
 * __uks_huge_cache_drain - unmap every cached extent, expired or not
 *
 * For uks_slab_trim() and tests.  The delay starts again from
 * UKS_PURGE_DELAY_MS too: a program that asked for its memory back has
 * no use for a delay grown on its earlier reuse.
 */
void __uks_huge_cache_drain(void)
{
	struct huge_unmaps out = { 0 };

	__uks_page_alloc_lock();
	while (cache.nr)
		evict_extent(0, &out);
	cache.delay_ms = UKS_PURGE_DELAY_MS;
	cache.last_expired_max = 0;
	update_expiry();
	__uks_page_alloc_unlock();
	__uks_huge_unmap(&out);
}

/**
 * __uks_huge_cache_stats - the cache's state now (for tests)
 * @bytes: set to the bytes cached
 * @delay_ms: set to how long freed extents stay cached
 */
void __uks_huge_cache_stats(size_t *bytes, uint64_t *delay_ms)
{
	__uks_page_alloc_lock();
	*bytes = cache.bytes;
	*delay_ms = cache.delay_ms;
	__uks_page_alloc_unlock();
}
