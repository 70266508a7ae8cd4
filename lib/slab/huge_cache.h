/* SPDX-License-Identifier: MIT */
/* The cache of freed huge mappings (huge_cache.c), for huge_map.c. */
#ifndef UKS_SLAB_HUGE_CACHE_H
#define UKS_SLAB_HUGE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slab/page_alloc.h"

#define HUGE_CACHE_SLOTS	16
#define HUGE_CACHE_MAX_MAP	(32UL << 20)	/* glibc's largest mmap threshold */
#define HUGE_CACHE_MAX_DELAY_MS	1000
#define HUGE_CACHE_MIN_BYTES	(64UL << 20)	/* glibc's trim threshold at that size */
#define HUGE_CACHE_MAX_BYTES	(128UL << 20)

/* Ranges a huge-cache call evicted, to unmap once the zone lock is dropped. */
struct huge_unmaps {
	unsigned int nr;
	struct {
		char *addr;
		size_t size;
	} range[HUGE_CACHE_SLOTS + 2];
};

/*
 * How many bytes the cache may hold while huge blocks hold @in_use bytes
 * and held at most @peak: what keeps their footprint (in use plus cached)
 * within the peak, or within HUGE_CACHE_MIN_BYTES when that is more, and
 * never more than HUGE_CACHE_MAX_BYTES.
 */
static inline size_t huge_cache_budget(size_t in_use, size_t peak)
{
	size_t limit = peak > HUGE_CACHE_MIN_BYTES ? peak : HUGE_CACHE_MIN_BYTES;
	size_t room = limit > in_use ? limit - in_use : 0;

	return room < HUGE_CACHE_MAX_BYTES ? room : HUGE_CACHE_MAX_BYTES;
}

void __uks_huge_cache_put(char *addr, size_t size, uint64_t now, size_t budget,
			  struct huge_unmaps *out);
char *__uks_huge_cache_take(size_t size, size_t align, uint64_t now, struct huge_unmaps *out);
bool __uks_huge_cache_take_at(char *addr, size_t size);
void __uks_huge_cache_trim(size_t budget, struct huge_unmaps *out);
void __uks_huge_unmap(const struct huge_unmaps *out);

#endif
