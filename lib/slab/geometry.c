// SPDX-License-Identifier: MIT
/*
 * Slab geometry: where each part of an object lives, how big a slab is and
 * how many objects it holds.  The rules are 5.15's calculate_sizes(),
 * calculate_order() and slab_order(), so `objs_per_slab` and `order` in
 * sysfs read the same as on a kernel with the same CPU count.
 *
 * Layout of one object slot (s->size bytes), debug parts in brackets:
 *
 *   [left red zone: red_left_pad] object_size bytes [right red zone up to
 *   inuse] [free pointer, if it cannot live inside the object]
 *   [2 x struct track] [8 bytes of red-zone padding] [alignment padding]
 *
 * Without debugging the free pointer sits mid-object (offset = object_size
 * / 2 rounded down to a word) so that small overflows from the previous
 * object do not hit it.  The preload malloc puts it first instead, as
 * malloc implementations do: a program reads and writes the start of its
 * objects, so freeing and allocating then touch no other cache line
 * (bench/malloc-peers' mixed pattern: 3-7% faster).
 */
#include <errno.h>

#include "core/compiler.h"
#include "slab/geometry.h"
#include "slab/slub.h"

#define WORD		((unsigned int)sizeof(void *))
#define MAX_ORDER	11u
#define MIN_PARTIAL	5u
#define MAX_PARTIAL	10u

static unsigned int fls_uint(unsigned int x)
{
	return x ? 32u - (unsigned int)__builtin_clz(x) : 0;
}

static unsigned int ilog2_uint(unsigned int x)
{
	return fls_uint(x) - 1;
}

/** __uks_get_order - Return: the smallest order whose slab holds @bytes (the kernel's get_order()) */
unsigned int __uks_get_order(unsigned long bytes, unsigned int page_size)
{
	unsigned int order = 0;

	while (((unsigned long)page_size << order) < bytes)
		order++;
	return order;
}

static unsigned int order_objects(unsigned int order, unsigned int size, unsigned int page_size)
{
	return (unsigned int)(((unsigned long)page_size << order) / size);
}

/* Smallest order >= what min_objects need whose leftover is <= 1/fract. */
static unsigned int slab_order(unsigned int size, unsigned int min_objects, unsigned int max_order,
			       unsigned int fract_leftover, const struct slub_tunables *t)
{
	unsigned int order;

	if (order_objects(t->min_order, size, t->page_size) > SLUB_MAX_OBJS_PER_PAGE)
		return __uks_get_order((unsigned long)size * SLUB_MAX_OBJS_PER_PAGE, t->page_size) - 1;

	order = __uks_get_order((unsigned long)min_objects * size, t->page_size);
	if (order < t->min_order)
		order = t->min_order;
	for (; order <= max_order; order++) {
		unsigned long slab_size = (unsigned long)t->page_size << order;

		if (slab_size % size <= slab_size / fract_leftover)
			break;
	}
	return order;
}

/*
 * Prefer at least min_objects per slab with at most 1/16 of the slab
 * wasted; relax the waste to 1/8 and 1/4, then ask for fewer objects, then
 * accept one object per slab.  Returns -EINVAL when nothing fits.
 */
static int calculate_order(unsigned int size, const struct slub_tunables *t)
{
	unsigned int min_objects = t->min_objects, max_objects, order;

	if (!min_objects)
		min_objects = 4 * (fls_uint(t->nr_cpus ? t->nr_cpus : 1) + 1);
	max_objects = order_objects(t->max_order, size, t->page_size);
	if (min_objects > max_objects)
		min_objects = max_objects;

	for (; min_objects > 1; min_objects--) {
		for (unsigned int fraction = 16; fraction >= 4; fraction /= 2) {
			order = slab_order(size, min_objects, t->max_order, fraction, t);
			if (order <= t->max_order)
				return (int)order;
		}
	}
	order = slab_order(size, 1, t->max_order, 1, t);
	if (order <= t->max_order)
		return (int)order;
	order = slab_order(size, 1, MAX_ORDER, 1, t);
	if (order < MAX_ORDER)
		return (int)order;
	return -EINVAL;
}

/**
 * __uks_slub_calc_align - object alignment, as calculate_alignment() does
 * @flags: cache flags (SLAB_HWCACHE_ALIGN matters)
 * @align: alignment the caller asked for
 * @size: object size
 *
 * A cache-line-aligned cache of small objects gets half (quarter, ...) a
 * line so that several objects still share one line.
 */
unsigned int __uks_slub_calc_align(unsigned long flags, unsigned int align, unsigned int size)
{
	if (flags & UKS_SLAB_HWCACHE_ALIGN) {
		unsigned int ralign = UKS_CACHELINE;

		while (size <= ralign / 2)
			ralign /= 2;
		if (align < ralign)
			align = ralign;
	}
	if (align < SLUB_MINALIGN)
		align = SLUB_MINALIGN;
	return ALIGN_UP(align, WORD);
}

/**
 * __uks_slub_geometry - compute a cache's layout and slab order
 * @object_size: bytes the user asked for
 * @align: final alignment (from __uks_slub_calc_align())
 * @flags: cache flags after slub_debug was applied
 * @has_ctor: the cache has a constructor (the free pointer moves out)
 * @t: tunables (min/max order, min objects, CPUs, page size)
 * @g: result
 *
 * Return: 0, or -EINVAL if no slab order up to MAX_ORDER fits one object.
 */
int __uks_slub_geometry(unsigned int object_size, unsigned int align, unsigned long flags,
			bool has_ctor, const struct slub_tunables *t, struct slub_geometry *g)
{
	unsigned int size = ALIGN_UP(object_size, WORD);
	int order;

	if (!object_size || !align || (align & (align - 1)) || object_size > (1u << 30))
		return -EINVAL;

	g->object_size = object_size;
	g->align = align;
	g->red_left_pad = 0;

	/* Room for a right red zone when the object has no slack of its own. */
	if ((flags & UKS_SLAB_RED_ZONE) && size == object_size)
		size += WORD;
	g->inuse = size;

	/*
	 * Poisoning fills the whole free object and a constructor's state
	 * must survive being free, so the pointer goes after the object.
	 */
	if ((flags & UKS_SLAB_POISON) || has_ctor ||
	    ((flags & UKS_SLAB_RED_ZONE) && object_size < WORD)) {
		g->offset = size;
		size += WORD;
	} else if (t->freeptr_first) {
		g->offset = 0;
	} else {
		g->offset = (object_size / 2) & ~(WORD - 1);
	}

	if (flags & UKS_SLAB_STORE_USER)
		size += 2 * SLUB_TRACK_SIZE;

	if (flags & UKS_SLAB_RED_ZONE) {
		size += WORD;
		g->red_left_pad = ALIGN_UP(WORD, align);
		size += g->red_left_pad;
	}
	size = ALIGN_UP(size, align);
	g->size = size;

	order = calculate_order(size, t);
	if (order < 0)
		return order;
	g->order = (unsigned int)order;
	g->objects = order_objects(g->order, size, t->page_size);
	g->min_order = __uks_get_order(size, t->page_size);
	g->min_objects = order_objects(g->min_order, size, t->page_size);
	if (!g->objects)
		return -EINVAL;

	g->min_partial = ilog2_uint(size) / 2;
	if (g->min_partial < MIN_PARTIAL)
		g->min_partial = MIN_PARTIAL;
	if (g->min_partial > MAX_PARTIAL)
		g->min_partial = MAX_PARTIAL;

	if (flags & SLUB_DEBUG_FLAGS)
		g->cpu_partial = 0;	/* debug caches keep no per-CPU partials */
	else if (size >= t->page_size)
		g->cpu_partial = 2;
	else if (size >= 1024)
		g->cpu_partial = 6;
	else if (size >= 256)
		g->cpu_partial = 13;
	else
		g->cpu_partial = 30;
	return 0;
}
