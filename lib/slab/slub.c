// SPDX-License-Identifier: MIT
/*
 * Cache lifecycle: initialisation, kmem_cache_create/destroy/shrink, the
 * list of caches, and fork safety.  The design and lock order are in
 * slub.h.
 *
 * The allocator initialises itself on first use (a kmalloc or a cache
 * creation), not from a constructor, because as a preloaded malloc it
 * may be called before any constructor of ours has run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <unistd.h>

#include "core/log.h"
#include "slab/geometry.h"
#include "slab/hot.h"
#include "slab/slub.h"

pthread_mutex_t __uks_slab_mutex = PTHREAD_MUTEX_INITIALIZER;
struct list_head __uks_slab_caches = LIST_HEAD_INIT(__uks_slab_caches);

static pthread_once_t slab_once = PTHREAD_ONCE_INIT;
static struct slub_tunables tunables;
static bool count_fast_paths;		/* UKS_SLUB_STATS=1 */

/*
 * kmalloc caches get sheaves (UKS_SLAB_SHEAVES) by default under the
 * malloc policy, where frees of other threads' objects are the common
 * case; the kernel policy keeps plain 5.15 SLUB unless UKS_SLUB_SHEAVES=1.
 */
bool __uks_kmalloc_sheaves;
static atomic_bool slab_started;	/* the policy is fixed from then on */

/*
 * Metadata smaller than a page (a cache, its CPU slots, its sheaves) is
 * carved from shared pages in power-of-two classes, each naturally
 * aligned: a page per object made every kmalloc cache cost three resident
 * pages before its first object, which is most of a small program's
 * allocator overhead.  Freed pieces are zeroed and kept per class.
 */
#define META_MIN_SHIFT	6			/* 64 bytes: a cache line */
#define META_CLASSES	(12 - META_MIN_SHIFT)	/* 64 .. 2048 */
#define META_ARENA	(64 * 1024)

/* Metadata is cache-line aligned, which must do for what lives in it. */
_Static_assert(_Alignof(struct uks_kmem_cache) <= UKS_CACHELINE &&
	       _Alignof(struct kmem_cache_cpu) <= UKS_CACHELINE &&
	       _Alignof(struct slub_sheaf) <= UKS_CACHELINE, "meta alignment");
/* So a cache's address leaves the cache map room for a slab's home. */
_Static_assert(UKS_SLAB_HOME_MASK < UKS_CACHELINE, "cache map home bits");

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static void *meta_free_list[META_CLASSES];
static char *meta_next, *meta_end;

static void *map_meta(size_t size)
{
	void *p = mmap(NULL, ALIGN_UP(size, (size_t)__uks_page_size), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static int meta_class(size_t size)
{
	int cls = 0;

	while (((size_t)1 << (cls + META_MIN_SHIFT)) < size)
		cls++;
	return cls < META_CLASSES ? cls : -1;
}

/**
 * __uks_meta_alloc - memory for allocator metadata (caches, per-CPU slots)
 * @size: bytes
 *
 * Never from the slab allocator itself, so that it never recurses into a
 * preloaded malloc.  Pieces below 4 KiB take their size rounded up to a
 * power of two (at least a cache line) and are cache-line aligned, no
 * more: aligning a cache's 2 KiB of sheaves to 2 KiB left a 1 KiB hole
 * after its struct and CPU slots, a quarter of every cache's page.
 * Return: zeroed memory or NULL.
 */
void *__uks_meta_alloc(size_t size)
{
	int cls = meta_class(size);
	size_t bytes;
	void *p;

	if (cls < 0)
		return map_meta(size);
	bytes = (size_t)1 << (cls + META_MIN_SHIFT);
	pthread_mutex_lock(&meta_lock);
	p = meta_free_list[cls];
	if (p) {
		meta_free_list[cls] = *(void **)p;
		*(void **)p = NULL;
		goto out;
	}
	meta_next = (char *)ALIGN_UP((uintptr_t)meta_next, (uintptr_t)UKS_CACHELINE);
	if (!meta_next || meta_next + bytes > meta_end) {
		/* The rest of the old arena is dropped: at most 2 KiB. */
		meta_next = map_meta(META_ARENA);
		meta_end = meta_next ? meta_next + META_ARENA : NULL;
		if (!meta_next)
			goto out;
	}
	p = meta_next;
	meta_next += bytes;
out:
	pthread_mutex_unlock(&meta_lock);
	return p;
}

/** __uks_meta_free - release __uks_meta_alloc(@size) memory @p (NULL: no-op) */
void __uks_meta_free(void *p, size_t size)
{
	int cls = meta_class(size);

	if (!p)
		return;
	if (cls < 0) {
		munmap(p, ALIGN_UP(size, (size_t)__uks_page_size));
		return;
	}
	memset(p, 0, (size_t)1 << (cls + META_MIN_SHIFT));
	pthread_mutex_lock(&meta_lock);
	*(void **)p = meta_free_list[cls];
	meta_free_list[cls] = p;
	pthread_mutex_unlock(&meta_lock);
}

static unsigned int env_uint(const char *name, unsigned int dflt, unsigned int max)
{
	const char *v = secure_getenv(name);
	char *end;
	unsigned long n;

	if (!v || !*v)
		return dflt;
	n = strtoul(v, &end, 0);
	if (*end || n > max) {
		pr_warn("%s=%s ignored: expected a number up to %u", name, v, max);
		return dflt;
	}
	return (unsigned int)n;
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void slab_init_once(void)
{
	const char *debug = secure_getenv("UKS_SLUB_DEBUG");
	const struct slab_policy *policy = __uks_slab_policy;

	atomic_store(&slab_started, true);
	__uks_percpu_detect_rseq();
	__uks_page_alloc_init();
	__uks_slab_fastpath_init();
	/* The kernel's boot parameters slub_min_order= etc., as variables. */
	tunables.page_size = __uks_page_size;
	tunables.nr_cpus = __uks_nr_present_cpus();	/* 5.15 sizes slabs by it */
	tunables.min_order = env_uint("UKS_SLUB_MIN_ORDER", 0, UKS_MAX_PAGE_ORDER);
	tunables.max_order = env_uint("UKS_SLUB_MAX_ORDER", 3, UKS_MAX_PAGE_ORDER);
	tunables.min_objects = env_uint("UKS_SLUB_MIN_OBJECTS", 0, SLUB_MAX_OBJS_PER_PAGE);
	count_fast_paths = env_uint("UKS_SLUB_STATS", 0, 1);
	tunables.freeptr_first = policy->freeptr_first;
	__uks_kmalloc_sheaves = env_uint("UKS_SLUB_SHEAVES", policy->kmalloc_sheaves, 1);
	__uks_page_alloc_set_huge_chunks(env_uint("UKS_SLUB_THP", 1, 1));
	if (tunables.min_order > tunables.max_order)
		tunables.max_order = tunables.min_order;
	if (debug)
		__uks_slub_debug_parse(debug);
	__uks_kmalloc_init();
}

/**
 * __uks_slab_select_policy - run the allocator under @policy
 * @policy: &__uks_slab_kernel_policy or &__uks_slab_malloc_policy
 *
 * Return: 0, or -EBUSY once the allocator is initialised (its caches
 * were made under the policy it had).
 */
int __uks_slab_select_policy(const struct slab_policy *policy)
{
	if (atomic_load(&slab_started))
		return policy == __uks_slab_policy ? 0 : -EBUSY;
	__uks_slab_policy = policy;
	return 0;
}

/** __uks_slab_init - initialise the allocator once (idempotent, thread-safe) */
void __uks_slab_init(void)
{
	static atomic_bool atfork_registered;

	pthread_once(&slab_once, slab_init_once);
	/*
	 * After the once: registering may itself malloc(), which must find
	 * the allocator ready when we are the preloaded malloc.
	 */
	if (!atomic_load_explicit(&atfork_registered, memory_order_acquire) &&
	    !atomic_exchange(&atfork_registered, true))
		pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/*
 * kmem:* events enabled, under __uks_slab_mutex.  While there are any,
 * every cache's entry is ENTRY_FULL: the exported fast paths then need no
 * test of their own for the events, which cost them 7% of a pair.
 */
static unsigned int kmem_events_on;

/*
 * Caches that count their fast paths (UKS_SLUB_STATS=1) take ENTRY_FULL
 * too: the exported fast paths then carry no count and no test for one,
 * and the full paths run the counting sections.  That count was the only
 * store of a kmem_cache pair's sections not needed for the operation, and
 * took the pair from 1.39x to 1.47x the plain per-thread freelist's time,
 * so, as CONFIG_SLUB_STATS in the kernel, it is off by default.
 */
static void set_entry(struct uks_kmem_cache *s)
{
	__atomic_store_n(&s->entry, kmem_events_on || s->count_fast ? ENTRY_FULL : s->fast_entry,
			 __ATOMIC_RELAXED);
}

/**
 * __uks_slub_count_fast_paths - count the fast paths of caches made from now on
 * @on: as UKS_SLUB_STATS=1 (true) or its default (false)
 */
void __uks_slub_count_fast_paths(bool on)
{
	__uks_slab_init();
	count_fast_paths = on;
}

static void set_all_entries(void)
{
	struct uks_kmem_cache *s;

	list_for_each_entry(s, &__uks_slab_caches, list)
		set_entry(s);
}

/* regfunc of the kmem:* events (kmem_events.h): before the first probe. */
void __uks_kmem_event_reg(void)
{
	pthread_mutex_lock(&__uks_slab_mutex);
	if (!kmem_events_on++)
		set_all_entries();
	pthread_mutex_unlock(&__uks_slab_mutex);
}

/* unregfunc of the kmem:* events: after the last probe is gone. */
void __uks_kmem_event_unreg(void)
{
	pthread_mutex_lock(&__uks_slab_mutex);
	if (!--kmem_events_on)
		set_all_entries();
	pthread_mutex_unlock(&__uks_slab_mutex);
}

static struct uks_kmem_cache *find_cache_locked(const char *name)
{
	struct uks_kmem_cache *s;

	list_for_each_entry(s, &__uks_slab_caches, list)
		if (!strcmp(s->name, name))
			return s;
	return NULL;
}

static unsigned long random_key(void)
{
	unsigned long key = 0;

	while (!key)
		if (getrandom(&key, sizeof(key), 0) != (ssize_t)sizeof(key))
			key = (unsigned long)uks_clock_mono_ns() * 0x9e3779b97f4a7c15UL;
	return key;
}

/* In the line every free reads: obj_start_fast() costs no second one. */
_Static_assert(offsetof(struct uks_kmem_cache, obj_check) + sizeof(uint64_t) <= UKS_CACHELINE,
	       "the slot-start test's word");

/**
 * __uks_slab_set_obj_check - set up obj_start_fast() for @s
 * @s: a cache whose size and oo are set
 */
void __uks_slab_set_obj_check(struct uks_kmem_cache *s)
{
	uint64_t slab = (uint64_t)__uks_page_size << oo_order(s->oo);
	uint64_t magic = (UINT64_C(1) << 32) / s->size + 1;	/* ceil(2^32 / size), size not 2^k */
	uint64_t objects = oo_objects(s->oo), bound = 0, e;
	bool pow2 = !(s->size & (s->size - 1));

	/* 2^t: offset * 2^(32 - t) mod 2^32 is 0 iff 2^t divides it; a full slab has no tail */
	if (pow2)
		magic = (UINT64_C(1) << 32) / s->size;
	e = (magic * s->size) & UINT32_MAX;
	/* the bound is below a slab's bytes, so below magic: no offset off a slot passes */
	if (objects && slab <= 0x10000 && magic <= UINT32_MAX &&
	    (pow2 ? objects * s->size == slab : slab + e < magic))
		bound = (objects - 1) * e + 1;
	s->obj_check = (magic & UINT32_MAX) | bound << 32 | ((slab - 1) & 0xffff) << 48;
}

static int open_cache(struct uks_kmem_cache *s, unsigned int size, unsigned int align,
		      unsigned long flags, void (*ctor)(void *))
{
	struct slub_geometry g;
	unsigned int nr_cpus = uks_nr_cpu_ids(), tid_step = 1;
	int err;

	align = __uks_slub_calc_align(flags, align, size);
	err = __uks_slub_geometry(size, align, flags, ctor != NULL, &tunables, &g);
	if (err)
		return err;
	/*
	 * slub_debug=O: no debug metadata where it raises the order of one
	 * object, get_order(s->size) against get_order(object_size) as 5.15
	 * compares (the bare object's, not a layout with a constructor's
	 * free pointer after it).
	 */
	if ((flags & (UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | UKS_SLAB_STORE_USER)) &&
	    __uks_slub_debug_disable_higher_order() &&
	    g.min_order > __uks_get_order(size, __uks_page_size)) {
		flags &= ~(UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | UKS_SLAB_STORE_USER);
		err = __uks_slub_geometry(size, align, flags, ctor != NULL, &tunables, &g);
		if (err)
			return err;
	}
	/*
	 * 5.15 serves orders up to MAX_ORDER - 1 (10); the buddy here stops at
	 * a 2 MiB chunk.  A slab past it (debug metadata on an object near 2
	 * MiB) could never be allocated: refuse the cache, and say why.
	 */
	if (g.min_order > __uks_max_page_order()) {
		pr_err("SLUB: %u-byte objects with their metadata (%u bytes) exceed the largest "
		       "slab, %lu bytes", size, g.size,
		       (unsigned long)__uks_page_size << __uks_max_page_order());
		return -EINVAL;
	}
	if (g.order > __uks_max_page_order()) {
		g.order = g.min_order;
		g.objects = g.min_objects;
	}

	s->flags = flags;
	s->object_size = g.object_size;
	s->size = g.size;
	s->align = g.align;
	s->inuse = g.inuse;
	s->offset = g.offset;
	s->red_left_pad = g.red_left_pad;
	s->oo.x = g.order << 16 | g.objects;
	s->min.x = g.min_order << 16 | g.min_objects;
	s->max = s->oo;
	__uks_slab_set_obj_check(s);
	s->min_partial = g.min_partial;
	__uks_set_cpu_partial(s, g.cpu_partial);
	s->ctor = ctor;
	s->poison_objects = (flags & UKS_SLAB_POISON) && !ctor;
	s->cmpxchg_double = !(flags & SLUB_NO_CMPXCHG_FLAGS);
	s->random = (flags & UKS_SLAB_NO_HARDENING) ? 0 : random_key();
	s->refcount = 1;
	s->remote_node_defrag_ratio = 1000;

	if (flags & UKS_SLAB_RT)
		s->fastpath = FASTPATH_RT;
	else if (flags & UKS_SLAB_CMPXCHG_FASTPATH)
		s->fastpath = FASTPATH_CMPXCHG;
	else
		s->fastpath = __uks_slab_default_fastpath;

	while (tid_step < nr_cpus)
		tid_step <<= 1;
	s->tid_step = (unsigned long)tid_step << TID_SHIFT;
	s->nr_cpus = nr_cpus;
	s->cpu_stride = ALIGN_UP(sizeof(struct kmem_cache_cpu), (size_t)UKS_CACHELINE);
	s->cpu_base = __uks_meta_alloc(s->cpu_stride * nr_cpus);
	if (!s->cpu_base)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < nr_cpus; cpu++)
		cpu_slab(s, cpu)->tid = (unsigned long)cpu << TID_SHIFT;
	err = __uks_sheaf_init(s);
	if (err) {
		__uks_meta_free(s->cpu_base, s->cpu_stride * nr_cpus);
		return err;
	}
	s->count_fast = count_fast_paths;
	if (kmem_cache_debug(s))
		s->fast_entry = ENTRY_FULL;
	else if (s->fastpath == FASTPATH_RSEQ)
		s->fast_entry = s->sheaf_capacity ? ENTRY_RSEQ_SHEAF : ENTRY_RSEQ_FREELIST;
	else if (s->fastpath == FASTPATH_RT && UKS_HAVE_RSEQ_ASM && __uks_slab_rseq_locking())
		s->fast_entry = ENTRY_RT;
	else
		s->fast_entry = ENTRY_FULL;
	set_entry(s);

	pthread_mutex_init(&s->node[0].list_lock, NULL);
	INIT_LIST_HEAD(&s->node[0].partial);
	INIT_LIST_HEAD(&s->node[0].full);
	return 0;
}

/**
 * __uks_kmem_cache_create - create a cache (kmalloc caches included)
 * @name: cache name, unique, up to 63 bytes
 * @size: object size
 * @align: requested alignment (0 or a power of two)
 * @flags: UKS_SLAB_* flags
 * @ctor: constructor run on every object when its slab is created
 * @is_kmalloc: a kmalloc-<n> cache
 *
 * Return: the cache, or NULL (the reason logged, as the kernel does).
 */
struct uks_kmem_cache *__uks_kmem_cache_create(const char *name, unsigned int size,
					       unsigned int align, unsigned long flags,
					       void (*ctor)(void *), bool is_kmalloc)
{
	struct uks_kmem_cache *s = NULL;
	int err = -EINVAL;

	pthread_mutex_lock(&__uks_slab_mutex);
	if (!name || !*name || strlen(name) >= sizeof(s->name) || !size ||
	    size > (__uks_page_size << UKS_MAX_PAGE_ORDER) || (align & (align - 1)) ||
	    (flags & ~SLUB_FLAGS_PERMITTED))
		goto out;
	err = -EEXIST;
	if (find_cache_locked(name))
		goto out;
	err = -ENOMEM;
	s = __uks_meta_alloc(sizeof(*s));
	if (!s)
		goto out;
	memcpy(s->name, name, strlen(name) + 1);	/* strcpy() is one libc window more */
	s->is_kmalloc = is_kmalloc;
	err = open_cache(s, size, align ? align : SLUB_MINALIGN,
			 __uks_slub_debug_flags(name, flags), ctor);
	if (err) {
		__uks_meta_free(s, sizeof(*s));
		s = NULL;
		goto out;
	}
	list_add_tail(&s->list, &__uks_slab_caches);
out:
	pthread_mutex_unlock(&__uks_slab_mutex);
	if (!s) {
		if (flags & UKS_SLAB_PANIC) {
			pr_err("kmem_cache_create: Failed to create slab '%s'. Error %d",
			       name ? name : "(null)", err);
			abort();
		}
		pr_warn("kmem_cache_create(%s) failed with error %d", name ? name : "(null)", err);
	}
	return s;
}

/**
 * uks_kmem_cache_create - create a cache of fixed-size objects
 * @name: unique name (shown in reports and as /sys/kernel/slab/<name>)
 * @size: object size in bytes (up to 2 MiB)
 * @align: required alignment, 0 or a power of two
 * @flags: UKS_SLAB_* flags; UKS_SLUB_DEBUG may add debug flags by name
 * @ctor: optional constructor, run once per object when its slab is made
 *
 * Return: the cache, or NULL on bad arguments (-EINVAL), a duplicate name
 * (-EEXIST) or no memory; the reason is logged.
 */
UKS_EXPORT struct uks_kmem_cache *uks_kmem_cache_create(const char *name, size_t size,
							size_t align, unsigned long flags,
							void (*ctor)(void *))
{
	__uks_slab_init();
	if (size > UINT32_MAX || align > UINT32_MAX)
		size = 0;	/* rejected below */
	return __uks_kmem_cache_create(name, (unsigned int)size, (unsigned int)align,
				       flags, ctor, false);
}

/* Free empty partial slabs; report the objects of the others. */
static void free_partial(struct uks_kmem_cache *s, struct kmem_cache_node *n)
{
	struct uks_page *page, *h;
	LIST_HEAD(discard);

	pthread_mutex_lock(&n->list_lock);
	list_for_each_entry_safe(page, h, &n->partial, slab_list) {
		if (!page->inuse) {
			__uks_remove_partial(n, page);
			list_add(&page->slab_list, &discard);
		} else {
			__uks_list_slab_objects(s, page,
				"Objects remaining in %s on __kmem_cache_shutdown()");
		}
	}
	pthread_mutex_unlock(&n->list_lock);
	list_for_each_entry_safe(page, h, &discard, slab_list)
		__uks_discard_slab(s, page);
}

/**
 * uks_kmem_cache_destroy - destroy a cache whose objects are all freed
 * @s: the cache (NULL is a no-op)
 *
 * As the kernel's: objects still allocated are reported ("Objects
 * remaining in ... on __kmem_cache_shutdown()", "kmem_cache_destroy ...:
 * Slab cache still has objects"), and then the cache is kept rather than
 * freed under them.
 *
 * Return: 0, or -EBUSY if objects remain (the cache stays usable).
 */
UKS_EXPORT int uks_kmem_cache_destroy(struct uks_kmem_cache *s)
{
	struct kmem_cache_node *n;

	if (!s)
		return 0;
	if (s->is_kmalloc)
		return -EPERM;
	pthread_mutex_lock(&__uks_slab_mutex);
	if (--s->refcount) {
		pthread_mutex_unlock(&__uks_slab_mutex);
		return 0;
	}
	__uks_flush_all(s);
	n = get_node(s, 0);
	free_partial(s, n);
	if (n->nr_partial || atomic_load(&n->nr_slabs)) {
		s->refcount = 1;
		pthread_mutex_unlock(&__uks_slab_mutex);
		pr_err("kmem_cache_destroy %s: Slab cache still has objects", s->name);
		__uks_dump_stack(UKS_LOG_ERR);
		return -EBUSY;
	}
	list_del(&s->list);
	pthread_mutex_unlock(&__uks_slab_mutex);
	pthread_mutex_destroy(&n->list_lock);
	__uks_sheaf_destroy(s);
	__uks_meta_free(s->cpu_base, s->cpu_stride * s->nr_cpus);
	__uks_meta_free(s, sizeof(*s));
	return 0;
}

#define SHRINK_PROMOTE_MAX 32

/**
 * uks_kmem_cache_shrink - release the cache's empty slabs to the system
 * @s: cache
 *
 * Flushes every CPU's slabs, frees empty partial slabs and sorts the
 * partial list so the fullest slabs are used first (5.15's
 * __kmem_cache_do_shrink()).
 *
 * Return: 0 if the cache now holds no slab at all, 1 if slabs remain (the
 * kernel's convention).
 */
UKS_EXPORT int uks_kmem_cache_shrink(struct uks_kmem_cache *s)
{
	struct kmem_cache_node *n = get_node(s, 0);
	struct list_head promote[SHRINK_PROMOTE_MAX];
	struct uks_page *page, *t;
	LIST_HEAD(discard);

	__uks_flush_all(s);
	for (int i = 0; i < SHRINK_PROMOTE_MAX; i++)
		INIT_LIST_HEAD(promote + i);

	pthread_mutex_lock(&n->list_lock);
	list_for_each_entry_safe(page, t, &n->partial, slab_list) {
		int free = (int)page->objects - (int)page->inuse;

		if (free == (int)page->objects) {
			list_move(&page->slab_list, &discard);
			n->nr_partial--;
		} else if (free <= SHRINK_PROMOTE_MAX) {
			list_move(&page->slab_list, promote + free - 1);
		}
	}
	/* Fullest first: slabs with 1 free object end up at the head. */
	for (int i = SHRINK_PROMOTE_MAX - 1; i >= 0; i--)
		list_splice(promote + i, &n->partial);
	pthread_mutex_unlock(&n->list_lock);

	list_for_each_entry_safe(page, t, &discard, slab_list)
		__uks_discard_slab(s, page);
	return atomic_load(&n->nr_slabs) ? 1 : 0;
}

/**
 * uks_kmem_cache_for_each - call @fn on every cache until it returns non-zero
 * @fn: callback; must not create or destroy caches
 * @arg: passed to @fn
 *
 * Return: the first non-zero value of @fn, or 0.
 */
UKS_EXPORT int uks_kmem_cache_for_each(int (*fn)(struct uks_kmem_cache *s, void *arg), void *arg)
{
	struct uks_kmem_cache *s;
	int ret = 0;

	__uks_slab_init();
	pthread_mutex_lock(&__uks_slab_mutex);
	list_for_each_entry(s, &__uks_slab_caches, list) {
		ret = fn(s, arg);
		if (ret)
			break;
	}
	pthread_mutex_unlock(&__uks_slab_mutex);
	return ret;
}

/** uks_kmem_cache_find - Return: the cache called @name, or NULL */
UKS_EXPORT struct uks_kmem_cache *uks_kmem_cache_find(const char *name)
{
	struct uks_kmem_cache *s;

	__uks_slab_init();
	pthread_mutex_lock(&__uks_slab_mutex);
	s = name ? find_cache_locked(name) : NULL;
	pthread_mutex_unlock(&__uks_slab_mutex);
	return s;
}

/** uks_kmem_cache_name - Return: the cache's name */
UKS_EXPORT const char *uks_kmem_cache_name(const struct uks_kmem_cache *s)
{
	return s->name;
}

/** uks_kmem_cache_size - Return: the object size the cache was created with */
UKS_EXPORT size_t uks_kmem_cache_size(const struct uks_kmem_cache *s)
{
	return s->object_size;
}

/** uks_slab_fastpath - Return: "rseq", "cmpxchg16b" or "rt" (the default) */
UKS_EXPORT const char *uks_slab_fastpath(void)
{
	static const char *const names[] = { "rseq", "cmpxchg16b", "rt" };

	__uks_slab_init();
	return names[__uks_slab_default_fastpath];
}

/*
 * fork(): the child has only the forking thread, so every lock another
 * thread might hold is taken first, in lock order, and released on both
 * sides.
 */
static void atfork_prepare(void)
{
	struct uks_kmem_cache *s;

	pthread_mutex_lock(&__uks_kmalloc_lock);
	pthread_mutex_lock(&__uks_slab_mutex);
	list_for_each_entry(s, &__uks_slab_caches, list) {
		pthread_mutex_lock(&s->node[0].list_lock);
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			__uks_cpu_slab_lock_remote(s, cpu);
	}
	pthread_mutex_lock(&meta_lock);
	__uks_page_alloc_lock();
}

static void atfork_release(bool child)
{
	struct uks_kmem_cache *s;

	if (child) {
		__uks_page_alloc_child_reset();
		__uks_debug_fork_child();
	} else
		__uks_page_alloc_unlock();
	if (child)
		pthread_mutex_init(&meta_lock, NULL);
	else
		pthread_mutex_unlock(&meta_lock);
	list_for_each_entry_reverse(s, &__uks_slab_caches, list) {
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			__uks_cpu_slab_unlock(s, cpu_slab(s, cpu));
		pthread_mutex_unlock(&s->node[0].list_lock);
	}
	pthread_mutex_unlock(&__uks_slab_mutex);
	if (child)
		pthread_mutex_init(&__uks_kmalloc_lock, NULL);
	else
		pthread_mutex_unlock(&__uks_kmalloc_lock);
}

static void atfork_parent(void)
{
	atfork_release(false);
}

static void atfork_child(void)
{
	atfork_release(true);
	__uks_slab_fastpath_init();	/* membarrier registration is per process */
}
