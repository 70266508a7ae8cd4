/* SPDX-License-Identifier: MIT */
/*
 * Object layout and slab order, computed as 5.15's calculate_sizes() and
 * calculate_order() do (see geometry.c).
 */
#ifndef UKS_LIB_SLAB_GEOMETRY_H
#define UKS_LIB_SLAB_GEOMETRY_H

#include <stdbool.h>
#include <stddef.h>

/* Kernel tunables that shape geometry (slub_min_order= etc.). */
struct slub_tunables {
	unsigned int min_order;		/* slub_min_order, default 0 */
	unsigned int max_order;		/* slub_max_order, default 3 */
	unsigned int min_objects;	/* slub_min_objects, default 0 = derive from CPUs */
	unsigned int nr_cpus;		/* num_present_cpus() */
	unsigned int page_size;		/* PAGE_SIZE, 4096 */
	bool freeptr_first;		/* the malloc policy's: free pointer at offset 0 */
};

struct slub_geometry {
	unsigned int object_size;	/* s->object_size */
	unsigned int size;		/* s->size: object plus metadata, aligned */
	unsigned int align;		/* s->align */
	unsigned int inuse;		/* s->inuse: offset of metadata */
	unsigned int offset;		/* s->offset: free pointer offset */
	unsigned int red_left_pad;	/* s->red_left_pad */
	unsigned int order;		/* oo_order(s->oo) */
	unsigned int objects;		/* oo_objects(s->oo): objs_per_slab */
	unsigned int min_order;		/* oo_order(s->min) */
	unsigned int min_objects;	/* oo_objects(s->min) */
	unsigned int min_partial;	/* s->min_partial */
	unsigned int cpu_partial;	/* s->cpu_partial (objects, 5.15) */
};

/* Size of struct track with CONFIG_STACKTRACE on 64-bit: 152 bytes. */
#define SLUB_TRACK_SIZE 152u

unsigned int __uks_get_order(unsigned long bytes, unsigned int page_size);
unsigned int __uks_slub_calc_align(unsigned long flags, unsigned int align, unsigned int size);
int __uks_slub_geometry(unsigned int object_size, unsigned int align, unsigned long flags,
			bool has_ctor, const struct slub_tunables *t, struct slub_geometry *g);

#endif
