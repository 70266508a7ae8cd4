// SPDX-License-Identifier: MIT
/*
 * Allocations with a mapping of their own: more than a chunk (2 MiB) of
 * pages, which the buddy allocator (page_alloc.c) cannot hold.
 *
 * Each mapping is chunk-aligned, so its chunk-table slots belong to it
 * alone and point at its one descriptor, tagged with bit 0.  realloc()
 * resizes a mapping with mremap() instead of copying it.
 *
 * Freed mappings of up to HUGE_CACHE_MAX_MAP bytes, and the tails that
 * shrinking ones give up, go to the huge cache (huge_cache.c) once what
 * their owner did to them is undone, and new ones are carved from it
 * first.
 *
 * Locking: the zone lock (__uks_page_alloc_lock()) protects the slots,
 * the descriptor pool and the cache.  System calls are made without it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/compiler.h"
#include "slab/huge_cache.h"

#ifndef MADV_GUARD_REMOVE
#define MADV_GUARD_REMOVE	103	/* Linux 6.13; older kernels: EINVAL */
#endif

static struct {
	struct uks_page *spare_descs;
	size_t in_use;		/* bytes mapped for live blocks */
	size_t peak;		/* the most in_use has been */
	size_t nr, peak_nr;	/* live blocks, and the most there have been */
} huge;

/* Descriptors for huge mappings come from a small pool under the zone lock. */
static struct uks_page *get_spare_desc(void)
{
	struct uks_page *d;

	if (!huge.spare_descs) {
		size_t bytes = 64 * 1024;
		struct uks_page *arr = __uks_map_anon(bytes);

		if (!arr)
			return NULL;
		for (size_t i = 0; i < bytes / sizeof(*arr); i++) {
			arr[i].head = huge.spare_descs;
			huge.spare_descs = &arr[i];
		}
	}
	d = huge.spare_descs;
	huge.spare_descs = d->head;
	memset(d, 0, sizeof(*d));
	return d;
}

static void put_spare_desc(struct uks_page *d)
{
	d->kind = PAGE_UNUSED;
	d->head = huge.spare_descs;
	huge.spare_descs = d;
}

/**
 * __uks_huge_usage - what huge blocks hold now and held at most
 * @in_use: set to the bytes mapped for live blocks
 * @peak: set to the most that has been
 * @nr: set to the number of live blocks (may be NULL)
 * @peak_nr: set to the most there have been (may be NULL)
 */
void __uks_huge_usage(size_t *in_use, size_t *peak, size_t *nr, size_t *peak_nr)
{
	__uks_page_alloc_lock();
	*in_use = huge.in_use;
	*peak = huge.peak;
	if (nr)
		*nr = huge.nr;
	if (peak_nr)
		*peak_nr = huge.peak_nr;
	__uks_page_alloc_unlock();
}

/*
 * Evict cached extents so that a new mapping of @bytes keeps the cache
 * within its budget too.  Zone lock held.
 */
static void make_room(size_t bytes, struct huge_unmaps *evicted)
{
	/* a new peak leaves the same room as the old one: none past the floor */
	__uks_huge_cache_trim(huge_cache_budget(huge.in_use + bytes, huge.peak), evicted);
}

/* Live blocks took @bytes more.  Zone lock held. */
static void note_growth(size_t bytes)
{
	huge.in_use += bytes;
	if (huge.in_use > huge.peak)
		huge.peak = huge.in_use;
}

/* Point the chunk-table slots of [from, to) of @page's mapping at @value. */
static void set_huge_slot_range(const struct uks_page *page, size_t from, size_t to,
				uintptr_t value)
{
	for (size_t off = from; off < to; off += UKS_CHUNK_SIZE) {
		_Atomic(uintptr_t) *slot = __uks_chunk_slot((uintptr_t)page->addr + off, true);

		if (slot)
			atomic_store_explicit(slot, value, memory_order_release);
	}
}

static void set_huge_slots(const struct uks_page *page, uintptr_t value)
{
	set_huge_slot_range(page, 0, page->map_size, value);
}

/**
 * __uks_alloc_huge - an allocation with a mapping of its own
 * @size: bytes
 * @align: alignment, a power of two
 * @fresh: set to true when the memory is a new mapping (it reads zeroes),
 *	false when it is a freed one taken back from the cache
 *
 * Return: a PAGE_HUGE descriptor with addr and large_size set, or NULL.
 */
struct uks_page *__uks_alloc_huge(size_t size, size_t align, bool *fresh)
{
	size_t map_size = ALIGN_UP(size, UKS_CHUNK_SIZE);
	struct huge_unmaps evicted = { 0 };
	struct uks_page *page;
	char *addr;
	int saved_errno = errno;

	if (map_size < size)
		return NULL;
	if (align < UKS_CHUNK_SIZE)
		align = UKS_CHUNK_SIZE;
	__uks_page_alloc_lock();
	addr = __uks_huge_cache_take(map_size, align, __uks_now_ms(), &evicted);
	if (!addr)
		make_room(map_size, &evicted);
	__uks_page_alloc_unlock();
	__uks_huge_unmap(&evicted);

	*fresh = !addr;
	if (!addr) {
		addr = __uks_map_aligned(map_size, align, PROT_READ | PROT_WRITE, 0);
		if (!addr)
			return NULL;
	}
	__uks_page_alloc_lock();
	page = get_spare_desc();
	if (page) {
		page->kind = PAGE_HUGE;
		page->addr = addr;
		page->large_size = size;
		page->map_size = map_size;
		set_huge_slots(page, (uintptr_t)page | 1);
		note_growth(map_size);
		if (++huge.nr > huge.peak_nr)
			huge.peak_nr = huge.nr;
	}
	__uks_page_alloc_unlock();
	if (!page) {
		munmap(addr, map_size);
		return NULL;
	}
	errno = saved_errno;	/* a probe that failed on the way is no error */
	return page;
}

/*
 * Give @addr back the protection and protection key it was handed out
 * with.  Without protection keys (EINVAL, ENOSYS: none can have been
 * set) that is mprotect(), and pkey_mprotect() is not tried again.
 */
static bool restore_protection(char *addr, size_t size)
{
	static atomic_bool no_pkeys;

	if (!atomic_load_explicit(&no_pkeys, memory_order_relaxed)) {
		if (!pkey_mprotect(addr, size, PROT_READ | PROT_WRITE, 0))
			return true;
		if (errno != EINVAL && errno != ENOSYS)
			return false;
		atomic_store_explicit(&no_pkeys, true, memory_order_relaxed);
	}
	return !mprotect(addr, size, PROT_READ | PROT_WRITE);
}

/*
 * Undo what the last owner may have done to its mapping that would hurt
 * the next one: protections and protection keys (a guard page would
 * fault), guard regions, mlock() (the next owner's mlock() would pass
 * RLIMIT_MEMLOCK), MADV_DONTFORK (a fork child would miss the pages),
 * MADV_WIPEONFORK (it would see zeroes) and MADV_DONTDUMP (core dumps
 * would miss them).  On an unchanged mapping each call only walks its one
 * VMA.  False if any fails (part of the mapping was unmapped: ENOMEM),
 * and then it is not reused.  MADV_HUGEPAGE and MADV_NOHUGEPAGE have no
 * undo back to the default, and stay, as in glibc's heap; so does KSM's
 * MADV_MERGEABLE, which changes nothing the next owner can see.
 */
static bool reset_for_reuse(char *addr, size_t size)
{
	if (!restore_protection(addr, size))
		return false;
	if (madvise(addr, size, MADV_GUARD_REMOVE) && errno != EINVAL)
		return false;
	return !munlock(addr, size) && !madvise(addr, size, MADV_DOFORK) &&
	       !madvise(addr, size, MADV_KEEPONFORK) && !madvise(addr, size, MADV_DODUMP);
}

/*
 * Give [@addr, @addr + @size), which a block of @block_size bytes no
 * longer covers, to the cache, or unmap it.  Its slots are cleared.  As
 * for whole blocks, none of a block above HUGE_CACHE_MAX_MAP is kept:
 * a 512 MiB buffer shrunk in 30 MiB steps left all its tails cached.
 */
static void release_range(char *addr, size_t size, size_t block_size)
{
	bool keep = block_size <= HUGE_CACHE_MAX_MAP && reset_for_reuse(addr, size);
	struct huge_unmaps evicted = { 0 };

	__uks_page_alloc_lock();
	if (keep)
		__uks_huge_cache_put(addr, size, __uks_now_ms(),
				     huge_cache_budget(huge.in_use, huge.peak), &evicted);
	__uks_page_alloc_unlock();
	if (!keep)
		munmap(addr, size);
	__uks_huge_unmap(&evicted);
}

/**
 * __uks_free_huge - free a __uks_alloc_huge() allocation
 * @page: its descriptor
 *
 * The mapping goes to the cache when it is small enough and
 * reset_for_reuse() succeeds; else it is unmapped.  What a reset cannot
 * undo stays with the pages, as it would in glibc's heap: a program's own
 * userfaultfd registration, and a mapping placed over part of the block.
 */
void __uks_free_huge(struct uks_page *page)
{
	char *addr = page->addr;
	size_t size = page->map_size;
	int saved_errno = errno;	/* free() keeps errno (POSIX 2024, glibc) */

	__uks_page_alloc_lock();
	set_huge_slots(page, 0);
	put_spare_desc(page);
	huge.in_use -= size;
	huge.nr--;
	__uks_page_alloc_unlock();
	release_range(addr, size, size);
	errno = saved_errno;
}

/*
 * Is [@start, @start + @len) exactly one private anonymous PROT_NONE
 * mapping, as our reservations are?  From /proc/self/maps, sorted by
 * address; false when unsure.
 */
static bool is_reservation(uintptr_t start, size_t len)
{
	char buf[4096], *line, *nl, *p;
	size_t have = 0;
	bool found = false, done = false;
	ssize_t n;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	while (!done && (n = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0) {
		have += (size_t)n;
		buf[have] = '\0';
		for (line = buf; !done && (nl = strchr(line, '\n')); line = nl + 1) {
			uintptr_t lo = strtoul(line, &p, 16), hi;

			if (lo < start)
				continue;
			done = true;
			if (lo > start || *p != '-')
				break;
			hi = strtoul(p + 1, &p, 16);
			/* "---p 00000000 00:00 0" and no name */
			found = hi == start + len && !strncmp(p, " ---p ", 6) &&
				strtoul(p + 6, &p, 16) == 0 && *p == ' ' &&
				strtoul(p + 1, &p, 16) == 0 && *p == ':' &&
				strtoul(p + 1, &p, 16) == 0 && *p == ' ' &&
				strtoul(p + 1, &p, 10) == 0 && p[strspn(p, " ")] == '\n';
		}
		if (done || line == buf)	/* found, or a line longer than the buffer */
			break;
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
	}
	close(fd);
	return found;
}

/*
 * Move @page's mapping, grown to @new_map bytes, to a chunk-aligned range:
 * a PROT_NONE reservation (charged to nothing) that the kernel replaces.
 * The slots are cleared first: once the pages are out, anyone may map the
 * old range.  Return: the new address, or NULL with the slots cleared.
 *
 * A failed move may or may not have unmapped the reservation: 5.15
 * unmaps the target before it checks the source and the charge, 6.18
 * checks first.  In the first case another thread may have mapped into
 * the hole since, so the reservation is unmapped only if the range is
 * free (then it is mapped again and dropped, to find out without a race)
 * or still exactly our PROT_NONE mapping.
 */
static char *move_mapping(struct uks_page *page, size_t map_size, size_t new_map)
{
	char *to = __uks_map_aligned(new_map, UKS_CHUNK_SIZE, PROT_NONE, MAP_NORESERVE), *probe;

	if (!to)
		return NULL;
	__uks_page_alloc_lock();
	set_huge_slots(page, 0);
	__uks_page_alloc_unlock();
	if (mremap(page->addr, map_size, new_map, MREMAP_MAYMOVE | MREMAP_FIXED, to) != MAP_FAILED)
		return to;
	probe = mmap(to, new_map, PROT_NONE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
	if (probe == to || (probe == MAP_FAILED && is_reservation((uintptr_t)to, new_map)))
		munmap(to, new_map);
	else if (probe != MAP_FAILED)
		munmap(probe, new_map);	/* a kernel without MAP_FIXED_NOREPLACE put it elsewhere */
	return NULL;
}

/**
 * __uks_resize_huge - resize a __uks_alloc_huge() allocation in its mapping
 * @page: its descriptor
 * @new_size: bytes, more than a chunk's worth of pages would hold
 *
 * glibc's realloc() of an mmapped chunk does the same with mremap(): the
 * bytes never move, so growing a buffer step by step costs page-table
 * updates instead of a copy of everything per step (256 MiB grown in
 * 64 KiB steps took 61 s when each chunk of growth was a new mapping and
 * a copy).  A shrink gives the tail to the huge cache.  A growth takes
 * the cached extent right after the mapping if it is big enough, or
 * happens in place when the address space after the mapping is free, else
 * the kernel moves the pages to a chunk-aligned range reserved for them;
 * not when the block spans several VMAs (an mprotect() or userfaultfd
 * registration split it, or it was carved across two cached extents:
 * EFAULT), which the caller copies instead.
 *
 * The system calls are made without the zone lock, as in
 * __uks_free_huge(): moving a big mapping takes a while, and an mremap()
 * wrapper (the DAMON self agent's) may wait for a thread that allocates.
 * The slots of a range are cleared before it is unmapped or moved out of,
 * so no lookup finds a range anyone may map again; meanwhile only the
 * caller, which owns the allocation, has a reason to look it up.  So
 * fork() may copy the block in between (slots cleared, or the tail not
 * yet released); the child has no thread to use it, as with any call
 * another thread had in flight.
 *
 * Return: the allocation's address, moved or not, or NULL (no address
 * space or memory, or the kernel refused) with the allocation as it was.
 */
void *__uks_resize_huge(struct uks_page *page, size_t new_size)
{
	size_t new_map = ALIGN_UP(new_size, UKS_CHUNK_SIZE);
	size_t map_size = page->map_size;
	struct huge_unmaps evicted = { 0 };
	char *addr = page->addr, *to;
	int saved_errno = errno;	/* a success keeps it: a failed in-place try is ours */
	bool took_next;

	if (new_map < new_size)
		return NULL;
	if (new_map < map_size) {
		__uks_page_alloc_lock();
		set_huge_slot_range(page, new_map, map_size, 0);
		page->map_size = new_map;
		huge.in_use -= map_size - new_map;
		__uks_page_alloc_unlock();
		release_range(addr + new_map, map_size - new_map, map_size);
	} else if (new_map > map_size) {
		__uks_page_alloc_lock();
		took_next = __uks_huge_cache_take_at(addr + map_size, new_map - map_size);
		if (took_next) {
			page->map_size = new_map;
			set_huge_slots(page, (uintptr_t)page | 1);
			note_growth(new_map - map_size);
		} else {
			make_room(new_map - map_size, &evicted);
		}
		__uks_page_alloc_unlock();
		__uks_huge_unmap(&evicted);
		if (took_next)
			goto done;
		to = mremap(addr, map_size, new_map, 0);
		if (to == MAP_FAILED)
			to = errno == EFAULT ? NULL : move_mapping(page, map_size, new_map);
		__uks_page_alloc_lock();
		if (to) {
			page->addr = to;
			page->map_size = new_map;
			note_growth(new_map - map_size);
		}
		set_huge_slots(page, (uintptr_t)page | 1);
		__uks_page_alloc_unlock();
		if (!to)
			return NULL;
	}
done:
	page->large_size = new_size;
	errno = saved_errno;
	return page->addr;
}
