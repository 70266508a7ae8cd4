/* SPDX-License-Identifier: MIT */
/*
 * Kernel spellings of the uks slab API, for code ported from the kernel:
 * kmem_cache_alloc(s, GFP_KERNEL), kmalloc(size, GFP_ATOMIC), SLAB_POISON...
 *
 * GFP flags are accepted and documented, and all but __GFP_ZERO are
 * ignored: user-space allocation never sleeps on reclaim, has no atomic
 * context and no DMA or highmem zones.  __GFP_ZERO zeroes, as kzalloc()
 * does.  Include this header only where the short names cannot clash.
 */
#ifndef UKS_SLAB_COMPAT_H
#define UKS_SLAB_COMPAT_H

#include <string.h>

#include <uks/slab.h>

typedef unsigned int gfp_t;

/* The bit values of 5.15's include/linux/gfp.h (without lockdep). */
#define __GFP_DMA		0x01u
#define __GFP_HIGHMEM		0x02u
#define __GFP_DMA32		0x04u
#define __GFP_MOVABLE		0x08u
#define __GFP_RECLAIMABLE	0x10u
#define __GFP_HIGH		0x20u
#define __GFP_IO		0x40u
#define __GFP_FS		0x80u
#define __GFP_ZERO		0x100u
#define __GFP_ATOMIC		0x200u
#define __GFP_DIRECT_RECLAIM	0x400u
#define __GFP_KSWAPD_RECLAIM	0x800u
#define __GFP_WRITE		0x1000u
#define __GFP_NOWARN		0x2000u
#define __GFP_RETRY_MAYFAIL	0x4000u
#define __GFP_NOFAIL		0x8000u
#define __GFP_NORETRY		0x10000u
#define __GFP_MEMALLOC		0x20000u
#define __GFP_COMP		0x40000u
#define __GFP_NOMEMALLOC	0x80000u
#define __GFP_HARDWALL		0x100000u
#define __GFP_THISNODE		0x200000u
#define __GFP_ACCOUNT		0x400000u
#define __GFP_RECLAIM		(__GFP_DIRECT_RECLAIM | __GFP_KSWAPD_RECLAIM)
#define GFP_ATOMIC		(__GFP_HIGH | __GFP_ATOMIC | __GFP_KSWAPD_RECLAIM)
#define GFP_KERNEL		(__GFP_RECLAIM | __GFP_IO | __GFP_FS)
#define GFP_KERNEL_ACCOUNT	(GFP_KERNEL | __GFP_ACCOUNT)
#define GFP_NOWAIT		__GFP_KSWAPD_RECLAIM
#define GFP_NOIO		__GFP_RECLAIM
#define GFP_NOFS		(__GFP_RECLAIM | __GFP_IO)
#define GFP_USER		(__GFP_RECLAIM | __GFP_IO | __GFP_FS | __GFP_HARDWALL)
#define GFP_DMA			__GFP_DMA
#define GFP_DMA32		__GFP_DMA32

#define SLAB_CONSISTENCY_CHECKS	UKS_SLAB_CONSISTENCY_CHECKS
#define SLAB_RED_ZONE		UKS_SLAB_RED_ZONE
#define SLAB_POISON		UKS_SLAB_POISON
#define SLAB_HWCACHE_ALIGN	UKS_SLAB_HWCACHE_ALIGN
#define SLAB_STORE_USER		UKS_SLAB_STORE_USER
#define SLAB_PANIC		UKS_SLAB_PANIC
#define SLAB_TRACE		UKS_SLAB_TRACE
#define SLAB_NOLEAKTRACE	UKS_SLAB_NOLEAKTRACE
#define SLAB_FAILSLAB		UKS_SLAB_FAILSLAB
#define SLAB_ACCOUNT		UKS_SLAB_ACCOUNT
#define SLAB_RECLAIM_ACCOUNT	UKS_SLAB_RECLAIM_ACCOUNT

#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((unsigned long)(x) <= (unsigned long)ZERO_SIZE_PTR)

#define kmem_cache		uks_kmem_cache

static inline struct uks_kmem_cache *kmem_cache_create(const char *name, unsigned int size,
						       unsigned int align, unsigned long flags,
						       void (*ctor)(void *))
{
	return uks_kmem_cache_create(name, size, align, flags, ctor);
}

static inline void kmem_cache_destroy(struct uks_kmem_cache *s)
{
	uks_kmem_cache_destroy(s);	/* the kernel's returns void too */
}

static inline void *kmem_cache_alloc(struct uks_kmem_cache *s, gfp_t flags)
{
	return (flags & __GFP_ZERO) ? uks_kmem_cache_zalloc(s) : uks_kmem_cache_alloc(s);
}

static inline void *kmem_cache_zalloc(struct uks_kmem_cache *s, gfp_t flags)
{
	(void)flags;
	return uks_kmem_cache_zalloc(s);
}

static inline void kmem_cache_free(struct uks_kmem_cache *s, void *p)
{
	uks_kmem_cache_free(s, p);
}

static inline int kmem_cache_alloc_bulk(struct uks_kmem_cache *s, gfp_t flags, size_t nr, void **p)
{
	int n = uks_kmem_cache_alloc_bulk(s, nr, p);

	if (n && (flags & __GFP_ZERO))
		for (size_t i = 0; i < nr; i++)
			memset(p[i], 0, uks_kmem_cache_size(s));
	return n;
}

static inline void kmem_cache_free_bulk(struct uks_kmem_cache *s, size_t nr, void **p)
{
	uks_kmem_cache_free_bulk(s, nr, p);
}

static inline int kmem_cache_shrink(struct uks_kmem_cache *s)
{
	return uks_kmem_cache_shrink(s);
}

static inline void *kmalloc(size_t size, gfp_t flags)
{
	return (flags & __GFP_ZERO) ? uks_kzalloc(size) : uks_kmalloc(size);
}

static inline void *kzalloc(size_t size, gfp_t flags)
{
	(void)flags;
	return uks_kzalloc(size);
}

static inline void *kcalloc(size_t n, size_t size, gfp_t flags)
{
	(void)flags;
	return uks_kcalloc(n, size);
}

static inline void *kmalloc_array(size_t n, size_t size, gfp_t flags)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kmalloc(bytes, flags);
}

static inline void *krealloc(const void *p, size_t new_size, gfp_t flags)
{
	(void)flags;
	return uks_krealloc((void *)p, new_size);
}

static inline void kfree(const void *p)
{
	uks_kfree(p);
}

static inline size_t ksize(const void *p)
{
	return uks_ksize(p);
}

static inline void kfree_bulk(size_t nr, void **p)
{
	uks_kfree_bulk(nr, p);
}

#endif
