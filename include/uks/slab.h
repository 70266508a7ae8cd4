/* SPDX-License-Identifier: MIT */
/*
 * uks slab: the SLUB allocator of Linux 5.15 in user space.
 *
 * Typed object caches (uks_kmem_cache_*) and general-purpose allocation by
 * size class (uks_kmalloc and friends), with per-CPU lockless fast paths,
 * bulk calls, slub_debug-style red zones, poisoning, alloc/free tracking and
 * consistency checks, per-CPU statistics, and the text of the kernel's
 * /sys/kernel/slab/<cache>/ attributes.
 *
 * Allocation functions return NULL on failure; int functions return 0 or a
 * count on success and a negative errno on failure.  Reports (corruption,
 * leaks at destroy) go to the uks log callback (uks_set_log_fn()).
 *
 * Debugging is configured like the kernel's slub_debug= boot parameter,
 * through the UKS_SLUB_DEBUG environment variable read at first use, or per
 * cache with the UKS_SLAB_* debug flags below.
 */
#ifndef UKS_SLAB_H
#define UKS_SLAB_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Cache flags; the values are the kernel's SLAB_* bits of 5.15. */
#define UKS_SLAB_CONSISTENCY_CHECKS	0x00000100UL	/* slub_debug F */
#define UKS_SLAB_RED_ZONE		0x00000400UL	/* slub_debug Z */
#define UKS_SLAB_POISON			0x00000800UL	/* slub_debug P */
#define UKS_SLAB_HWCACHE_ALIGN		0x00002000UL	/* align objects to cache lines */
#define UKS_SLAB_STORE_USER		0x00010000UL	/* slub_debug U */
#define UKS_SLAB_PANIC			0x00040000UL	/* abort() if creation fails */
#define UKS_SLAB_TRACE			0x00200000UL	/* slub_debug T */
#define UKS_SLAB_NOLEAKTRACE		0x00800000UL	/* accepted, no effect */
#define UKS_SLAB_FAILSLAB		0x02000000UL	/* slub_debug A */
#define UKS_SLAB_ACCOUNT		0x04000000UL	/* accepted, no effect */
#define UKS_SLAB_RECLAIM_ACCOUNT	0x00020000UL	/* reported in sysfs only */
/* uks-only: this cache uses the PREEMPT_RT fast paths (local lock taken). */
#define UKS_SLAB_RT			0x80000000UL
/* uks-only: use the 5.15 tid + cmpxchg16b fast path instead of rseq commits. */
#define UKS_SLAB_CMPXCHG_FASTPATH	0x40000000UL
/* uks-only: store free pointers in the clear (no FREELIST_HARDENED mangling). */
#define UKS_SLAB_NO_HARDENING		0x20000000UL
/*
 * uks-only: a per-CPU array of freed objects in front of the slabs (the
 * "sheaves" Linux added after 5.15): free() pushes, alloc() pops, with no
 * freelist write; full arrays go back to their slabs half at a time.
 * Ignored by debug caches and off the rseq fast path.
 */
#define UKS_SLAB_SHEAVES		0x10000000UL

struct uks_kmem_cache;

struct uks_kmem_cache *uks_kmem_cache_create(const char *name, size_t size, size_t align,
					     unsigned long flags, void (*ctor)(void *));
int uks_kmem_cache_destroy(struct uks_kmem_cache *s);
void *uks_kmem_cache_alloc(struct uks_kmem_cache *s);
void *uks_kmem_cache_zalloc(struct uks_kmem_cache *s);
void uks_kmem_cache_free(struct uks_kmem_cache *s, void *obj);
int uks_kmem_cache_alloc_bulk(struct uks_kmem_cache *s, size_t nr, void **p);
void uks_kmem_cache_free_bulk(struct uks_kmem_cache *s, size_t nr, void **p);
int uks_kmem_cache_shrink(struct uks_kmem_cache *s);
int uks_kmem_cache_validate(struct uks_kmem_cache *s);
const char *uks_kmem_cache_name(const struct uks_kmem_cache *s);
size_t uks_kmem_cache_size(const struct uks_kmem_cache *s);

void *uks_kmalloc(size_t size);
void *uks_kzalloc(size_t size);
void *uks_kcalloc(size_t n, size_t size);
void *uks_krealloc(void *p, size_t new_size);
void *uks_kmalloc_aligned(size_t size, size_t align);
void uks_kfree(const void *p);
size_t uks_ksize(const void *p);
void uks_kfree_bulk(size_t nr, void **p);

/*
 * Introspection: the kernel's /sys/kernel/slab/<cache>/<attr> files.
 * uks_kmem_cache_attr_show() writes the file's text (with its newline) to
 * @buf and returns its length, -ENOENT for an unknown attribute, -ENOSPC if
 * @size is too small.  uks_kmem_cache_attr_store() accepts what the kernel
 * accepts for the writable files and returns 0 or the kernel's errno.
 */
ssize_t uks_kmem_cache_attr_show(struct uks_kmem_cache *s, const char *attr, char *buf,
				 size_t size);
int uks_kmem_cache_attr_store(struct uks_kmem_cache *s, const char *attr, const char *buf,
			      size_t len);
const char *const *uks_kmem_cache_attr_names(void);
bool uks_kmem_cache_attr_writable(const char *attr);

/* Visit every cache (kmalloc ones included) under the cache-list mutex. */
int uks_kmem_cache_for_each(int (*fn)(struct uks_kmem_cache *s, void *arg), void *arg);
struct uks_kmem_cache *uks_kmem_cache_find(const char *name);

/* Which fast path this build and process use: "rseq", "cmpxchg16b" or "rt". */
const char *uks_slab_fastpath(void);

/*
 * The whole heap, as mallinfo2() reports it for glibc.  Objects in per-CPU
 * freelists and sheaves count as allocated (as in the "objects" file).
 */
struct uks_slab_usage {
	size_t heap_bytes;		/* address space of the heap's 2 MiB chunks */
	size_t slab_bytes;		/* of it, in slabs of every cache */
	size_t object_bytes;		/* in allocated objects (object_size each) */
	size_t large_bytes;		/* in page blocks of kmalloc_large() */
	size_t free_bytes;		/* in free page blocks */
	size_t free_resident_bytes;	/* of those, maybe resident: for uks_slab_trim() */
	size_t free_blocks;		/* free page blocks */
	size_t huge_bytes;		/* mapped for allocations with a mapping of their own */
	size_t nr_huge;			/* such allocations */
	size_t peak_huge_bytes;		/* the most huge_bytes has been */
	size_t peak_nr_huge;		/* the most nr_huge has been */
	size_t cached_huge_bytes;	/* freed such mappings kept for reuse */
};

void uks_slab_usage(struct uks_slab_usage *u);
size_t uks_slab_trim(size_t keep);

#ifdef __cplusplus
}
#endif

#endif
