// SPDX-License-Identifier: MIT
/*
 * kmalloc: size classes over kmem caches, as 5.15's SLUB sets them up.
 *
 * Classes are 8, 16, 32, 64, 96, 128, 192, 256, 512, 1k, 2k, 4k and 8k
 * (kmalloc_caches[] indices 3..13 plus 1 = 96 and 2 = 192).  Larger
 * requests skip the caches: up to a 2 MiB chunk they take pages from the
 * buddy allocator (kmalloc_large()), beyond that a mapping of their own.
 * kmalloc(0) returns ZERO_SIZE_PTR, like the kernel.
 *
 * Those are the kernel policy's classes; the malloc policy has its own
 * (lib/slab/policy.c).  Either way a request takes the smallest class it
 * fits in, looked up in a table built at init.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/log.h"
#include "slab/kmem_events.h"
#include "slab/hot.h"
#include "slab/slub.h"

#define KMALLOC_SHIFT_HIGH	13	/* PAGE_SHIFT + 1 */
#define KMALLOC_MAX_CACHE_SIZE	(1UL << KMALLOC_SHIFT_HIGH)
#define KMALLOC_NR_CLASSES	SLAB_POLICY_MAX_CLASSES	/* index 0 unused */
#define KMALLOC_STEP_SHIFT	3	/* every class of both policies is a multiple of 8 */
#define ZERO_SIZE_PTR		((void *)16)
#define ZERO_OR_NULL_PTR(x)	((uintptr_t)(x) <= (uintptr_t)ZERO_SIZE_PTR)

/*
 * The class of each 8-byte step to the largest class, from the policy at
 * init: malloc()'s fast path takes one load, not the branches and bit
 * count of the kernel's kmalloc_index(), which larson (8..1000-byte
 * requests) spent 2.5% of its time in.  Until init every entry is 0, an
 * index that never has a cache, so a request takes the slow path, which
 * initialises the allocator.
 */
static uint8_t kmalloc_size_index[KMALLOC_MAX_CACHE_SIZE >> KMALLOC_STEP_SHIFT];

/* @size is 1..KMALLOC_MAX_CACHE_SIZE. */
static __attribute__((always_inline)) inline unsigned int kmalloc_index(size_t size)
{
	return __atomic_load_n(&kmalloc_size_index[(size - 1) >> KMALLOC_STEP_SHIFT],
			       __ATOMIC_RELAXED);
}

/* Slot size of class @idx; 0 for an index the policy has no class at. */
static unsigned int kmalloc_class_size(unsigned int idx)
{
	const struct slab_policy *policy = __uks_slab_policy;

	return idx < policy->nr_classes ? policy->class_size[idx] : 0;
}

static unsigned int kmalloc_minalign(void)
{
	return __uks_slab_policy->kmalloc_minalign;
}

/* Fill kmalloc_size_index[]: each step takes the smallest class it fits. */
static void kmalloc_index_init(void)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(kmalloc_size_index); i++) {
		unsigned int size = (i + 1) << KMALLOC_STEP_SHIFT, best = 0;

		for (unsigned int idx = 1; idx < KMALLOC_NR_CLASSES; idx++) {
			unsigned int cs = kmalloc_class_size(idx);

			if (cs >= size && (!best || cs < kmalloc_class_size(best)))
				best = idx;
		}
		__atomic_store_n(&kmalloc_size_index[i], (uint8_t)best, __ATOMIC_RELAXED);
	}
}

static struct uks_kmem_cache *kmalloc_caches[KMALLOC_NR_CLASSES];

/*
 * Serialises the creation of classes on first use (the malloc policy); taken
 * before __uks_slab_mutex, and held across fork() by slub.c.
 */
pthread_mutex_t __uks_kmalloc_lock = PTHREAD_MUTEX_INITIALIZER;

/* "%u" into @p; returns the end.  No printf: see kmalloc_name(). */
static char *put_uint(char *p, unsigned int v)
{
	char digits[10];
	int n = 0;

	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n)
		*p++ = digits[--n];
	return p;
}

/*
 * The kernel's spelling: kmalloc-96, kmalloc-2k; the malloc policy's kmalloc-1536.
 * Formatted by hand because printf's code is a few pages of libc that a
 * program using the preloaded malloc would otherwise have resident.
 */
static const char *kmalloc_name(unsigned int size, char buf[static 24])
{
	char *p = buf;

	memcpy(p, "kmalloc-", 8);
	p += 8;
	if (size >= 1024 && !(size & 1023)) {
		p = put_uint(p, size >> 10);
		*p++ = 'k';
	} else {
		p = put_uint(p, size);
	}
	*p = '\0';
	return buf;
}

static struct uks_kmem_cache *create_kmalloc_class(unsigned int idx)
{
	unsigned int size = kmalloc_class_size(idx);
	/* Power-of-two classes are naturally aligned, debug or not (5.15). */
	unsigned int align = (size & (size - 1)) ? kmalloc_minalign() : size;
	char name[24];

	if (align < kmalloc_minalign())
		align = kmalloc_minalign();
	return __uks_kmem_cache_create(kmalloc_name(size, name), size, align,
				       __uks_kmalloc_sheaves ? UKS_SLAB_SHEAVES : 0, NULL, true);
}

/**
 * __uks_kmalloc_init - create the kmalloc caches (from __uks_slab_init)
 *
 * As the kernel does, the kernel policy creates every class at once.
 * The malloc policy creates each on its first use instead: a class costs
 * a few KiB of resident metadata, and most programs use half of its 27.
 */
int __uks_kmalloc_init(void)
{
	kmalloc_index_init();
	if (__uks_slab_policy->kmalloc_on_demand)
		return 0;
	for (unsigned int idx = 1; idx < KMALLOC_NR_CLASSES; idx++) {
		if (!kmalloc_class_size(idx))
			continue;
		kmalloc_caches[idx] = create_kmalloc_class(idx);
		if (!kmalloc_caches[idx])
			return -ENOMEM;
	}
	return 0;
}

/* The class of @size made, and the allocator initialised, if need be. */
static __attribute__((noinline)) struct uks_kmem_cache *kmalloc_slab_slow(size_t size)
{
	struct uks_kmem_cache *s;
	unsigned int idx;

	__uks_slab_init();
	idx = kmalloc_index(size);
	pthread_mutex_lock(&__uks_kmalloc_lock);
	s = kmalloc_caches[idx];
	if (!s) {
		s = create_kmalloc_class(idx);
		__atomic_store_n(&kmalloc_caches[idx], s, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&__uks_kmalloc_lock);
	return s;
}

/** __uks_kmalloc_slab - Return: the kmalloc cache for @size (1..8192) */
__attribute__((noinline)) struct uks_kmem_cache *__uks_kmalloc_slab(size_t size)
{
	unsigned int idx = kmalloc_index(size);
	struct uks_kmem_cache *s = __atomic_load_n(&kmalloc_caches[idx], __ATOMIC_ACQUIRE);

	if (unlikely(!s))
		s = kmalloc_slab_slow(size);
	return s;
}

/* Smallest buddy order holding @size; past __uks_max_page_order() if none does. */
static unsigned int size_order(size_t size)
{
	unsigned int order = 0, max = __uks_max_page_order();

	/* bounded: near SIZE_MAX the shifted page size would wrap to 0 */
	while (order <= max && ((size_t)__uks_page_size << order) < size)
		order++;
	return order;
}

/*
 * A kmalloc_large() block of the kernel's kmalloc() is a whole 2^order
 * buddy block, and the kernel policy's is too (ksize() is the block).
 * The malloc policy's is a page run: only the pages the request needs,
 * the rest of the block given back (alloc_pages_exact()), since git log
 * -p's 8-64 KiB delta and inflate buffers took a third more memory in
 * whole blocks.
 */
static bool large_runs(void)
{
	return __uks_slab_policy->large_runs;
}

static unsigned long pages_for(size_t size)
{
	return (unsigned long)DIV_ROUND_UP(size, (size_t)__uks_page_size);
}

/* Pages of a kmalloc_large() block of @size bytes in an order-@order block. */
static unsigned long large_run_pages(size_t size, unsigned int order)
{
	return large_runs() ? pages_for(size) : 1UL << order;
}

/* More than a buddy block (a chunk) holds: a mapping of its own. */
static bool needs_own_mapping(size_t size)
{
	return size_order(size) > __uks_max_page_order();
}

/*
 * Above the largest cache: whole pages (kmalloc_large()), or a mapping.
 * *@fresh, if given, says whether the memory is a new mapping, which
 * reads zeroes: kzalloc() then leaves it untouched (and not resident).
 * A mapping taken back from the cache of freed ones is not.
 */
static void *kmalloc_large(size_t size, size_t align, bool *fresh)
{
	size_t block = size > align ? size : align;
	struct uks_page *page;
	bool new_mapping;

	__uks_slab_init();
	if (!needs_own_mapping(block)) {
		/* Buddy blocks are aligned to their size. */
		unsigned int order = size_order(block);
		unsigned long nr_pages = large_run_pages(size, order);

		page = __uks_alloc_page_run(order, nr_pages);
		if (!page)
			return NULL;
		page->large_size = size;
		page->map_size = nr_pages << __uks_page_shift;
		/* last: uks_slab_usage() sizes a PAGE_LARGE block by map_size */
		__atomic_store_n(&page->kind, PAGE_LARGE, __ATOMIC_RELEASE);
		return page->addr;
	}
	page = __uks_alloc_huge(size, align, &new_mapping);
	if (page && fresh)
		*fresh = new_mapping;
	return page ? page->addr : NULL;
}

static __attribute__((always_inline)) inline void *__kmalloc(size_t size, unsigned long addr)
{
	if (unlikely(size > KMALLOC_MAX_CACHE_SIZE))
		return kmalloc_large(size, __uks_page_size, NULL);
	if (unlikely(!size))
		return ZERO_SIZE_PTR;
	return slab_alloc(__uks_kmalloc_slab(size), addr);
}

#define CALLER ((unsigned long)__builtin_return_address(0))

/**
 * uks_kmalloc - allocate @size bytes
 * @size: bytes; 0 gives ZERO_SIZE_PTR, which uks_kfree() accepts
 *
 * Return: memory aligned to at least 8 bytes (naturally aligned for
 * power-of-two sizes without debugging), or NULL.
 */
static __attribute__((noinline)) void *kmalloc_full(size_t size, unsigned long caller)
{
	void *p = __kmalloc(size, caller);

	/* Only an enabled event pays for ksize(). */
	if (unlikely(uks_trace_kmem_kmalloc_enabled()))
		__uks_tp_emit_kmem_kmalloc(caller, p, size, uks_ksize(p), 0);
	return p;
}

UKS_EXPORT void *uks_kmalloc(size_t size)
{
	/* A class made already and no event enabled: one rseq section, no frame. */
	if (likely(size - 1 < KMALLOC_MAX_CACHE_SIZE)) {
		struct uks_kmem_cache *s =
			__atomic_load_n(&kmalloc_caches[kmalloc_index(size)], __ATOMIC_ACQUIRE);
		void *p = s ? slab_entry_alloc(s) : NULL;

		if (likely(p))
			return p;
	}
	return kmalloc_full(size, CALLER);
}

/**
 * __uks_malloc - the preload shim's malloc()
 * @size: bytes (0 is taken as 1)
 * @caller: the program's call site, for slub_debug's alloc track
 *
 * The common case in a few instructions and no stack frame: a class that
 * exists, with sheaves and its rseq entry (so no kmem event is enabled),
 * and an object on this CPU's sheaf.  Everything else is kmalloc_full()'s.
 * Return: the memory, or NULL.
 */
void *__uks_malloc(size_t size, unsigned long caller)
{
#if UKS_HAVE_RSEQ_ASM
	if (likely(size - 1 < KMALLOC_MAX_CACHE_SIZE)) {
		struct uks_kmem_cache *s =
			__atomic_load_n(&kmalloc_caches[kmalloc_index(size)], __ATOMIC_ACQUIRE);

		if (likely(s && cache_entry(s) == ENTRY_RSEQ_SHEAF)) {
			void *p = rseq_sheaf_pop(s, uks_rseq_off(), false);

			if (likely(p))
				return p;
		}
	}
#endif
	return kmalloc_full(size ? size : 1, caller);	/* its fast path just failed */
}

/**
 * __uks_free - the preload shim's free()
 * @p: any pointer, or NULL
 *
 * The cache map names the slab's cache without touching the page
 * descriptor; a slot start (obj_start_fast(), a multiply) goes onto this
 * CPU's sheaf.  Anything else (no slab, a full sheaf, an event enabled, a
 * double free or a pointer that is no allocation to report) is
 * __uks_free_slow()'s.  A small object of another CPU's slab goes to the
 * outbox (sheaf.c).
 */
#if UKS_HAVE_RSEQ_ASM
/* __uks_free() of an object of a sheaf_home_only cache: own sheaf or outbox. */
static __attribute__((noinline)) void free_homed(struct uks_kmem_cache *s, void *p,
						 uintptr_t entry)
{
	if (likely(rseq_sheaf_push(s, uks_rseq_off(), p, sheaf_for(s, entry), false) == 1))
		return;
	__uks_free_slow(p);
}
#endif

void __uks_free(void *p)
{
#if UKS_HAVE_RSEQ_ASM
	uintptr_t entry = __uks_virt_to_cache_entry(p);
	struct uks_kmem_cache *s = (struct uks_kmem_cache *)(entry & ~UKS_SLAB_HOME_MASK);

	if (likely(s && cache_entry(s) == ENTRY_RSEQ_SHEAF && obj_start_fast(s, p))) {
		/* A frameless tail for the rest: the home test needs a call. */
		if (unlikely(entry & UKS_SLAB_HOME_TAGGED)) {
			free_homed(s, p, entry);
			return;
		}
		if (likely(rseq_sheaf_push(s, uks_rseq_off(), p, SHEAF_OWN, false) == 1))
			return;
	}
#endif
	__uks_free_slow(p);
}

static __attribute__((always_inline)) inline void *kzalloc_at(size_t size, unsigned long addr)
{
	bool fresh = false;
	void *p;

	if (unlikely(size > KMALLOC_MAX_CACHE_SIZE))
		p = kmalloc_large(size, __uks_page_size, &fresh);
	else
		p = __kmalloc(size, addr);
	if (!ZERO_OR_NULL_PTR(p) && !fresh)
		memset(p, 0, size);
	return p;
}

/** uks_kzalloc - uks_kmalloc() and zero the memory */
UKS_EXPORT void *uks_kzalloc(size_t size)
{
	return kzalloc_at(size, CALLER);
}

/** __uks_kzalloc - uks_kzalloc() for the preload shim, with the program's call site */
void *__uks_kzalloc(size_t size, unsigned long caller)
{
	return kzalloc_at(size, caller);
}

/** uks_kcalloc - zeroed array of @n elements of @size; NULL on overflow */
UKS_EXPORT void *uks_kcalloc(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return kzalloc_at(bytes, CALLER);
}

/**
 * uks_kmalloc_aligned - allocate @size bytes aligned to @align
 * @size: bytes
 * @align: a power of two
 *
 * Power-of-two kmalloc classes are naturally aligned (with debugging
 * too, as in 5.15); bigger requests get whole, size-aligned pages.
 * Return: the memory, or NULL (also for a bad @align).
 */
UKS_EXPORT void *uks_kmalloc_aligned(size_t size, size_t align)
{
	return __uks_kmalloc_aligned(size, align, CALLER);
}

/** __uks_kmalloc_aligned - uks_kmalloc_aligned() with the call site to track */
void *__uks_kmalloc_aligned(size_t size, size_t align, unsigned long caller)
{
	struct uks_kmem_cache *s;
	size_t want;

	if (!align || (align & (align - 1)))
		return NULL;
	if (align <= kmalloc_minalign())
		return __kmalloc(size ? size : 1, caller);
	want = size > align ? size : align;
	if (want <= KMALLOC_MAX_CACHE_SIZE) {
		/*
		 * A power-of-two class at least @align big is aligned to its
		 * size.  Round up by hand: kmalloc_index() gives 1 and 2 for
		 * the 96 and 192 classes, which are neither.
		 */
		want = want <= 8 ? 8 : 1UL << (64 - __builtin_clzl(want - 1));
		s = __uks_kmalloc_slab(want);
		if (s)
			return slab_alloc(s, caller);
	}
	return kmalloc_large(size ? size : 1, align > __uks_page_size ? align : __uks_page_size,
			     NULL);
}

/* kfree() of a pointer that is not ours: report, never touch it. */
static void bad_free(const void *p)
{
	pr_err("SLUB <none>: no slab for object %p.", p);
}

/*
 * Free @x given its head page (already looked up, non-NULL).  Shared by
 * kfree() and the preload shim, which must look the page up anyway to
 * tell its own pointers from foreign ones: one lookup per free.
 */
static __attribute__((always_inline)) inline void kfree_page(struct uks_page *page, const void *x,
							      unsigned long addr)
{
	void *object = (void *)x;

	if (likely(page->kind == PAGE_SLAB)) {
		slab_free(page->slab_cache, page, object, addr);
		return;
	}
	if (page->kind == PAGE_LARGE && object == page->addr)
		__uks_free_page_run(page, page->map_size >> __uks_page_shift);
	else if (page->kind == PAGE_HUGE && object == page->addr)
		__uks_free_huge(page);
	else
		bad_free(x);
}

/*
 * Free @x given the descriptor of the page it is in (non-NULL).  A later
 * page of a slab names the cache itself, which saves kfree() a cache miss
 * on the head's descriptor for most objects of multi-page slabs.
 */
static __attribute__((always_inline)) inline void kfree_in_page(struct uks_page *page,
								 const void *x, unsigned long addr)
{
	if (page->kind == PAGE_TAIL) {
		if (likely(page->slab_cache)) {
			slab_free(page->slab_cache, page->head, (void *)x, addr);
			return;
		}
		page = page->head;
	}
	kfree_page(page, x, addr);
}

static __attribute__((always_inline)) inline void __kfree(const void *x, unsigned long addr)
{
	struct uks_page *page;

	if (unlikely(ZERO_OR_NULL_PTR(x)))
		return;
	page = __uks_virt_to_page(x);
	if (likely(page))
		kfree_in_page(page, x, addr);
	else
		bad_free(x);
}

/** uks_kfree - free memory from uks_kmalloc() and friends (NULL is a no-op) */
static __attribute__((noinline)) void kfree_full(const void *p, unsigned long caller)
{
	uks_trace_kmem_kfree(caller, p);
	__kfree(p, caller);
}

UKS_EXPORT void uks_kfree(const void *p)
{
	/* The cache map names the slab's cache without the page descriptor. */
	struct uks_kmem_cache *s = __uks_virt_to_cache(p);

	if (likely(s && slab_entry_free(s, cache_entry(s), (void *)p)))
		return;
	kfree_full(p, CALLER);
}

/**
 * __uks_free_slow - the preload shim's free() past its fast path
 * @p: any pointer, or NULL
 *
 * Frees @p if it is the start of a live allocation; anything else is
 * reported and aborts the process, as glibc's free() does
 * (__uks_malloc_check()).  The shim hands out no ZERO_SIZE_PTR, so only
 * NULL is a no-op.
 */
void __uks_free_slow(const void *p)
{
	struct uks_page *page;

	if (unlikely(!p))
		return;
	page = __uks_virt_to_page(p);
	__uks_malloc_check(page, p, "free");
	uks_trace_kmem_kfree(CALLER, p);
	kfree_in_page(page, p, CALLER);
}

/* ksize() given the head page of @p. */
static size_t ksize_page(const struct uks_page *page, const void *p)
{
	const struct uks_kmem_cache *s;

	switch (page->kind) {
	case PAGE_SLAB:
		s = page->slab_cache;
		if (s->flags & (UKS_SLAB_RED_ZONE | UKS_SLAB_POISON))
			return s->object_size;
		if (s->flags & UKS_SLAB_STORE_USER)
			return s->inuse;
		return s->size;
	case PAGE_LARGE:
		return page->map_size;
	case PAGE_HUGE:
		return page->map_size - (size_t)((const char *)p - page->addr);
	default:
		return 0;
	}
}

/**
 * uks_ksize - usable size of an allocation
 * @p: memory from uks_kmalloc() (or a kmem cache)
 *
 * Return: bytes the caller may use, as the kernel's ksize(): the object
 * size with red zones or poisoning, the whole slot otherwise; 0 for NULL,
 * ZERO_SIZE_PTR and foreign pointers.
 */
UKS_EXPORT size_t uks_ksize(const void *p)
{
	struct uks_page *page;

	if (ZERO_OR_NULL_PTR(p))
		return 0;
	page = __uks_virt_to_head_page(p);
	return page ? ksize_page(page, p) : 0;
}

/*
 * Does a slot of @ks bytes keep a krealloc() to @new_size?  With @shrink
 * (malloc's realloc()) only if the new size needs at least half of it.
 */
static bool krealloc_keeps(size_t ks, size_t new_size, bool shrink)
{
	return ks >= new_size && (!shrink || new_size >= ks / 2);
}

/*
 * The end of a krealloc() that moves: @p's bytes (a slot of @ks) copied
 * to @q, the new memory for @new_size.  Return: @q; without it @p, which
 * the caller keeps, when the call was a shrink (which cannot fail), else
 * NULL.  The caller frees @p when @q comes back.
 */
static void *krealloc_copy(void *p, void *q, size_t ks, size_t new_size)
{
	if (!q)
		return ks >= new_size ? p : NULL;
	memcpy(q, p, ks < new_size ? ks : new_size);
	return q;
}

/*
 * Resize the malloc policy's page run @page (a kmalloc_large() block) where it is,
 * for a @new_size that stays above the caches: grow into the free pages
 * after it, or give back pages past a shrunk end.  Return: done?
 */
static bool resize_large_run(struct uks_page *page, size_t new_size)
{
	unsigned long nr_pages = page->map_size >> __uks_page_shift, want = pages_for(new_size);

	if (new_size <= KMALLOC_MAX_CACHE_SIZE || needs_own_mapping(new_size) ||
	    __uks_resize_page_run(page, nr_pages, want))
		return false;
	page->large_size = new_size;
	page->map_size = want << __uks_page_shift;
	return true;
}

/*
 * krealloc() of @p (not ZERO_OR_NULL) whose head page is @page.  @shrink:
 * move to a smaller slot when @new_size needs less than half of this one,
 * as malloc's realloc() should (mimalloc's rule); the kernel's krealloc()
 * keeps any slot with room, which left the preload malloc's heap full of
 * 4 KiB slots holding 100-byte objects after a program shrank them.
 */
static void *krealloc_page(struct uks_page *page, void *p, size_t new_size, bool shrink,
			   unsigned long addr)
{
	size_t ks = ksize_page(page, p);
	void *ret;

	/* The malloc policy's page runs grow and shrink in place when they can. */
	if (large_runs() && page->kind == PAGE_LARGE && p == page->addr &&
	    (shrink || ks < new_size) && resize_large_run(page, new_size))
		return p;

	/*
	 * A mapping of its own that stays one is resized where it is; malloc's
	 * realloc() trims it on any shrink, as glibc's does.  If the kernel
	 * refuses (a mapping split by someone's mprotect() or userfaultfd
	 * registration cannot be moved whole), copy as for any block.
	 */
	if (page->kind == PAGE_HUGE && p == page->addr && needs_own_mapping(new_size) &&
	    (shrink || ks < new_size)) {
		ret = __uks_resize_huge(page, new_size);
		if (ret)
			return ret;
	}
	if (krealloc_keeps(ks, new_size, shrink))
		return p;
	ret = krealloc_copy(p, __kmalloc(new_size, addr), ks, new_size);
	if (ret && ret != p)
		kfree_page(page, p, addr);
	return ret;
}

/**
 * __uks_krealloc_if_ours - krealloc() for the preload shim
 * @p: memory to resize (not NULL)
 * @new_size: bytes, not 0
 * @ours: set to false if @p did not come from this allocator
 * @caller: the program's call site, for slub_debug's tracks
 *
 * Under the malloc policy a @p that is not the start of an allocation
 * aborts the process, as glibc's realloc() does (__uks_malloc_check()).
 * Return: the memory, or NULL (no memory, or not ours) with @p untouched.
 */
void *__uks_krealloc_if_ours(void *p, size_t new_size, bool *ours, unsigned long caller)
{
	bool in_malloc = slub_in_malloc();
	struct uks_page *page;

#if UKS_HAVE_RSEQ_ASM
	/*
	 * An object of a sheaf cache (never a debug cache, and no kmem event
	 * enabled): its slot size comes from the cache map, as free()'s does,
	 * without the page descriptor, a cache miss in a big heap.
	 */
	struct uks_kmem_cache *s = in_malloc ? __uks_virt_to_cache(p) : NULL;

	if (likely(s && cache_entry(s) == ENTRY_RSEQ_SHEAF && obj_start_fast(s, p))) {
		void *q;

		*ours = true;
		if (krealloc_keeps(s->size, new_size, true))
			return p;
		q = krealloc_copy(p, __uks_malloc(new_size, caller), s->size, new_size);
		if (q && q != p)
			__uks_free(p);
		return q;
	}
#endif
	page = __uks_virt_to_head_page(p);
	if (in_malloc)
		__uks_malloc_check(page, p, "realloc");	/* aborts unless @p is an allocation */
	*ours = page != NULL;
	return page ? krealloc_page(page, p, new_size, true, caller) : NULL;
}

/**
 * uks_krealloc - resize an allocation
 * @p: memory from uks_kmalloc(), or NULL
 * @new_size: bytes; 0 frees @p and returns ZERO_SIZE_PTR
 *
 * Keeps @p when it already has room (ksize()); otherwise copies.
 * Return: the memory, or NULL with @p untouched (no memory, or @p is not
 * ours, which is reported).
 */
UKS_EXPORT void *uks_krealloc(void *p, size_t new_size)
{
	struct uks_page *page;

	if (unlikely(!new_size)) {
		__kfree(p, CALLER);
		return ZERO_SIZE_PTR;
	}
	if (ZERO_OR_NULL_PTR(p))
		return __kmalloc(new_size, CALLER);
	page = __uks_virt_to_head_page(p);
	if (unlikely(!page)) {
		bad_free(p);
		return NULL;
	}
	return krealloc_page(page, p, new_size, false, CALLER);
}
