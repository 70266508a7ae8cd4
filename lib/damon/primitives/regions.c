// SPDX-License-Identifier: MIT
/*
 * DAMON address-space helpers: 5.15's vaddr.c rules for the initial
 * regions and their updates, on a list of mappings, so every primitive
 * with an address space (the vaddr ones, the synthetic one) shares them.
 *
 * - Three regions: the mappings minus the two biggest gaps between them
 *   (the gaps around the heap and the stack in a typical process), so the
 *   huge unmapped holes are never monitored.  Ties keep the earlier gap.
 *   Fewer than two non-empty gaps: -EINVAL, the target gets no regions.
 * - Initial regions: each of the three, evenly split into pieces of
 *   (total size / min_nr_regions), the last piece taking the remainder.
 * - Update: regions intersecting none of the new three go; for each of the
 *   three, the first and last intersecting regions are stretched to its
 *   bounds, or a new region covers it if none intersects.
 *
 * The caller owns the target (see damon.h); nothing here locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/log.h"
#include "core/mem_avail.h"
#include "damon/damon.h"

/**
 * __uks_damon_three_regions_of - 5.15's __damon_va_three_regions
 * @maps:	the mappings, sorted by address, not overlapping
 * @nr:		their number
 * @min:	DAMON_MIN_REGION: bounds are rounded up to it
 * @regions:	the three regions
 * Return: 0, or -EINVAL without two non-empty gaps.
 */
int __uks_damon_three_regions_of(const struct damon_addr_range *maps, unsigned int nr,
				 unsigned long min, struct damon_addr_range regions[3])
{
	struct damon_addr_range first = { 0, 0 }, second = { 0, 0 }, tmp;
	unsigned long start = 0, last_end = 0;

	for (unsigned int i = 0; i < nr; i++) {
		unsigned long gap;

		if (i == 0) {
			start = maps[i].start;
			last_end = maps[i].end;
			continue;
		}
		gap = maps[i].start - last_end;
		if (gap > first.end - first.start) {
			second = first;
			first.start = last_end;
			first.end = maps[i].start;
		} else if (gap > second.end - second.start) {
			second.start = last_end;
			second.end = maps[i].start;
		}
		last_end = maps[i].end;
	}
	if (first.end == first.start || second.end == second.start)
		return -EINVAL;
	if (first.start > second.start) {
		tmp = first;
		first = second;
		second = tmp;
	}
	regions[0].start = DAMON_ALIGN(start, min);
	regions[0].end = DAMON_ALIGN(first.start, min);
	regions[1].start = DAMON_ALIGN(first.end, min);
	regions[1].end = DAMON_ALIGN(second.start, min);
	regions[2].start = DAMON_ALIGN(second.end, min);
	regions[2].end = DAMON_ALIGN(last_end, min);
	return 0;
}

/**
 * __uks_damon_evenly_split_region - 5.15's damon_va_evenly_split_region
 * @ctx:	the context (for DAMON_MIN_REGION)
 * @t:		the target of @r
 * @r:		the region
 * @nr_pieces:	how many pieces
 *
 * Pieces are ALIGN_DOWN(size / @nr_pieces) long, the last one extended to
 * the original end.  Return: 0, -EINVAL (no region, no pieces, or pieces
 * below DAMON_MIN_REGION: @r unchanged), or -ENOMEM: before any piece is
 * made when they cannot all be allocated (__uks_mem_may_allocate(); @r
 * unchanged), or when an allocation fails midway.
 */
int __uks_damon_evenly_split_region(struct uks_damon_ctx *ctx, struct damon_target *t,
				    struct damon_region *r, unsigned int nr_pieces)
{
	unsigned long sz_orig, sz_piece, orig_end, start;
	struct damon_region *n = NULL, *next;

	if (!r || !nr_pieces)
		return -EINVAL;
	orig_end = r->ar.end;
	sz_orig = damon_sz_region(r);
	sz_piece = DAMON_ALIGN_DOWN(sz_orig / nr_pieces, ctx->min_region);
	if (!sz_piece)
		return -EINVAL;
	/* min_nr_regions is the user's number: its pieces must fit first */
	if (__uks_mem_may_allocate_array(sz_orig / sz_piece - 1, sizeof(*r)))
		return -ENOMEM;
	r->ar.end = r->ar.start + sz_piece;
	next = damon_next_region(r);
	for (start = r->ar.end; start + sz_piece <= orig_end; start += sz_piece) {
		n = __uks_damon_new_region(start, start + sz_piece);
		if (!n)
			return -ENOMEM;
		__uks_damon_insert_region(n, r, next, t);
		r = n;
	}
	/* the last piece takes the rounding remainder */
	if (n)
		n->ar.end = orig_end;
	return 0;
}

/**
 * __uks_damon_init_regions_of - 5.15's __damon_va_init_regions after the
 * three regions are known
 * @ctx:	the context
 * @t:		a target without regions
 * @regions:	its three regions
 */
void __uks_damon_init_regions_of(struct uks_damon_ctx *ctx, struct damon_target *t,
				 const struct damon_addr_range regions[3])
{
	unsigned long min = ctx->min_region, sz = 0;

	for (int i = 0; i < 3; i++)
		sz += regions[i].end - regions[i].start;
	if (ctx->min_nr_regions)
		sz /= ctx->min_nr_regions;
	if (sz < min)
		sz = min;
	for (int i = 0; i < 3; i++) {
		unsigned long s = regions[i].start, e = regions[i].end;
		struct damon_region *r = __uks_damon_new_region(s, e);

		if (!r)
			return;
		__uks_damon_add_region(r, t);
		/* 5.15 passes an unsigned int too; past it the memory check refuses */
		__uks_damon_evenly_split_region(ctx, t, r, (e - s) / sz > UINT_MAX ? UINT_MAX :
						(unsigned int)((e - s) / sz));
	}
}

static bool damon_intersect(const struct damon_region *r, const struct damon_addr_range *re)
{
	return !(r->ar.end <= re->start || re->end <= r->ar.start);
}

/**
 * __uks_damon_apply_three_regions - 5.15's damon_va_apply_three_regions
 * @ctx:	the context (for DAMON_MIN_REGION)
 * @t:		the target
 * @bregions:	the three big regions as they are now
 */
void __uks_damon_apply_three_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
				     const struct damon_addr_range bregions[3])
{
	unsigned long min = ctx->min_region;
	struct damon_region *r, *next;
	int i;

	/* Regions that are in none of the three big regions go away. */
	damon_for_each_region_safe(r, next, t) {
		for (i = 0; i < 3; i++)
			if (damon_intersect(r, &bregions[i]))
				break;
		if (i == 3)
			__uks_damon_destroy_region(r, t);
	}

	/* Stretch the intersecting regions to the big regions' bounds. */
	for (i = 0; i < 3; i++) {
		const struct damon_addr_range *br = &bregions[i];
		struct damon_region *first = NULL, *last = NULL;
		struct list_head *pos = &t->regions_list;	/* insert before */

		damon_for_each_region(r, t) {
			if (damon_intersect(r, br)) {
				if (!first)
					first = r;
				last = r;
			}
			if (r->ar.start >= br->end) {
				pos = &r->list;
				break;
			}
		}
		if (!first) {
			struct damon_region *n = __uks_damon_new_region(
				DAMON_ALIGN_DOWN(br->start, min), DAMON_ALIGN(br->end, min));

			if (!n)
				continue;
			__list_add(&n->list, pos->prev, pos);
			t->nr_regions++;
		} else {
			first->ar.start = DAMON_ALIGN_DOWN(br->start, min);
			last->ar.end = DAMON_ALIGN(br->end, min);
		}
	}
}

/**
 * __uks_damon_read_maps - the mappings of @pid from /proc/PID/maps
 * @pid:	the process
 * @out:	an array from uks_kmalloc(), sorted; the caller frees it
 * @nr:		its length
 *
 * [vsyscall] is left out: it is not a mapping of the process's mm.
 * Return: 0 or -errno (-ESRCH when the process is gone).
 */
int __uks_damon_read_maps(pid_t pid, struct damon_addr_range **out, unsigned int *nr)
{
	char path[64], line[512];
	struct damon_addr_range *maps = NULL;
	unsigned int n = 0, cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (!strchr(line, '\n')) {	/* a long path: skip the rest */
			int c;

			while ((c = fgetc(f)) != EOF && c != '\n')
				;
		}
		if (sscanf(line, "%lx-%lx", &s, &e) != 2 || e <= s)
			continue;
		if (strstr(line, "[vsyscall]"))
			continue;
		if (n == cap) {
			unsigned int ncap = cap ? 2 * cap : 64;
			void *p = uks_krealloc(maps, ncap * sizeof(*maps));

			if (!p) {
				uks_kfree(maps);
				fclose(f);
				return -ENOMEM;
			}
			maps = p;
			cap = ncap;
		}
		maps[n].start = s;
		maps[n].end = e;
		n++;
	}
	fclose(f);
	if (!n) {
		uks_kfree(maps);
		return -ESRCH;	/* a zombie has no mappings */
	}
	*out = maps;
	*nr = n;
	return 0;
}
