/* SPDX-License-Identifier: MIT */
/*
 * SLUB, the 5.15 design, in user space.
 *
 * What: object caches carved out of "slabs" (runs of 2^order pages from
 * the page allocator in page_alloc.c).  Each CPU owns one frozen slab and
 * a lockless freelist of it (kmem_cache_cpu), plus a short list of frozen
 * partial slabs; each node keeps a locked list of partial slabs.  Objects
 * freed on another CPU go straight back to their slab's own freelist with
 * a 16-byte compare-and-swap of {freelist, counters}.
 *
 * Mapping of kernel mechanisms (see also docs/SLAB.md):
 *
 *   CPU                 the CPU a thread runs on (glibc's rseq cpu_id)
 *   this_cpu_cmpxchg_double(freelist, tid)
 *                       fast path "cmpxchg16b": LOCK cmpxchg16b on the
 *                       kmem_cache_cpu {freelist, tid} pair.  LOCK is needed
 *                       because a thread that migrated may still commit to
 *                       the CPU slot it read, concurrently with the threads
 *                       now on that CPU.  tid starts at the CPU number and
 *                       steps by TID_STEP, as in the kernel.
 *   (rseq variant)      fast path "rseq": the pop/push is an rseq critical
 *                       section whose last instruction is the committing
 *                       store of c->freelist; preemption, migration or a
 *                       signal aborts and restarts it.  This is the default
 *                       where it is faster (bench/slab-fastpath).
 *   local_lock          bit 0 of kmem_cache_cpu.tid, with PREEMPT_RT
 *                       semantics: the holder may be preempted and keeps
 *                       working on the slot it locked; others wait.  The
 *                       lockless fast paths see the bit and divert to the
 *                       slow path instead of racing with the holder.  In
 *                       rseq mode the bit is set by an rseq section running
 *                       on that CPU (so no fast path there is half-way), or,
 *                       for another CPU's slot, by a CAS followed by a
 *                       membarrier(RSEQ) fence of that CPU (cpu_lock.c).
 *   irqs off in slow paths
 *                       nothing: only the local lock, held exactly around
 *                       kmem_cache_cpu updates (the 5.15 scope), never across
 *                       the page allocator or deactivate_slab().
 *   PREEMPT_RT          UKS_SLAB_RT caches: fast paths take the local lock.
 *   preempt_disable     none: a slow path that migrates simply keeps using
 *                       the slot it locked, and rechecks c->page after every
 *                       relock, as ___slab_alloc() already does.
 *   flush_all() IPI/work
 *                       the flusher locks each CPU's slot in turn.
 *   struct page         struct uks_page descriptors kept outside the slab
 *                       memory (mem_map), found from an address through the
 *                       page allocator's chunk table.
 *   slab_lock(page)     a bit spinlock in uks_page, used for debug caches
 *                       (F/U/T disable cmpxchg16b, as in the kernel).
 *   interrupts          signal handlers: they abort rseq sections, but must
 *                       not allocate (a handler could deadlock on a local
 *                       lock its thread holds), like glibc's malloc.
 *
 * Lock order:
 *   0. kmalloc_lock (the shim's creation of a kmalloc class on first use)
 *   1. slab_mutex (cache list, create/destroy; taken under the tracepoint
 *      registry lock by the kmem events' reg/unreg hooks)
 *   2. kmem_cache_node.list_lock
 *   3. kmem_cache_cpu local lock (tid bit 0)
 *   4. slab_lock(page) (debug caches only)
 *   5. the page allocator's zone lock (leaf: never held while taking others)
 *   6. meta_lock of the metadata allocator (a leaf as well; fork() takes
 *      it just before the zone lock)
 *
 * Frozen slabs are exempt from list management: only the CPU slot that
 * froze one takes objects from its freelist; anyone may push onto it.
 */
#ifndef UKS_LIB_SLAB_SLUB_H
#define UKS_LIB_SLAB_SLUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <uks/core.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "core/list.h"
#include "core/percpu.h"
#include "slab/page_alloc.h"
#include "slab/policy.h"

#define SLUB_MINALIGN		8u	/* ARCH_SLAB_MINALIGN */
#define SLUB_MAX_OBJS_PER_PAGE	32767u

/* Internal flag bits (the kernel's __OBJECT_POISON, __CMPXCHG_DOUBLE). */
#define SLUB_DEBUG_FLAGS	(UKS_SLAB_RED_ZONE | UKS_SLAB_POISON | UKS_SLAB_STORE_USER | \
				 UKS_SLAB_TRACE | UKS_SLAB_CONSISTENCY_CHECKS)
#define SLUB_NO_CMPXCHG_FLAGS	(UKS_SLAB_CONSISTENCY_CHECKS | UKS_SLAB_STORE_USER | UKS_SLAB_TRACE)
#define SLUB_FLAGS_PERMITTED	(SLUB_DEBUG_FLAGS | UKS_SLAB_HWCACHE_ALIGN | UKS_SLAB_PANIC | \
				 UKS_SLAB_NOLEAKTRACE | UKS_SLAB_FAILSLAB | UKS_SLAB_ACCOUNT | \
				 UKS_SLAB_RECLAIM_ACCOUNT | UKS_SLAB_RT | \
				 UKS_SLAB_CMPXCHG_FASTPATH | UKS_SLAB_NO_HARDENING | \
				 UKS_SLAB_SHEAVES)

/* The 26 stat items of 5.15, in the kernel's order. */
enum stat_item {
	ALLOC_FASTPATH, ALLOC_SLOWPATH, FREE_FASTPATH, FREE_SLOWPATH, FREE_FROZEN,
	FREE_ADD_PARTIAL, FREE_REMOVE_PARTIAL, ALLOC_FROM_PARTIAL, ALLOC_SLAB, ALLOC_REFILL,
	ALLOC_NODE_MISMATCH, FREE_SLAB, CPUSLAB_FLUSH, DEACTIVATE_FULL, DEACTIVATE_EMPTY,
	DEACTIVATE_TO_HEAD, DEACTIVATE_TO_TAIL, DEACTIVATE_REMOTE_FREES, DEACTIVATE_BYPASS,
	ORDER_FALLBACK, CMPXCHG_DOUBLE_CPU_FAIL, CMPXCHG_DOUBLE_FAIL, CPU_PARTIAL_ALLOC,
	CPU_PARTIAL_FREE, CPU_PARTIAL_NODE, CPU_PARTIAL_DRAIN, NR_SLUB_STAT_ITEMS
};

enum slub_fastpath { FASTPATH_RSEQ, FASTPATH_CMPXCHG, FASTPATH_RT };

/*
 * What uks_kmem_cache_alloc()/free() and kmalloc()/kfree() may do before
 * calling anything: one load and compare instead of testing the fast path,
 * debug flags, sheaves and the kmem events on every call.  ENTRY_RT caches
 * (PREEMPT_RT mode with rseq locking) take the local lock there;
 * ENTRY_FULL caches (debug, cmpxchg16b, RT without rseq) always take the
 * full functions.  A cache's fast_entry is set when it is made; its entry
 * is fast_entry, or ENTRY_FULL while a kmem:* event is enabled (the full
 * functions fire the events), switched by the events' reg/unreg hooks.
 */
enum slub_entry { ENTRY_FULL, ENTRY_RSEQ_FREELIST, ENTRY_RSEQ_SHEAF, ENTRY_RT };

/* tid: bit 0 = local lock held, bit 1 = taken remotely, CPU from bit 2. */
#define TID_LOCKED	1UL
#define TID_REMOTE	2UL
#define TID_LOCK_MASK	3UL
#define TID_SHIFT	2

/*
 * A sheaf: one CPU's stack of freed objects of a UKS_SLAB_SHEAVES cache
 * (partial.c).  The rseq fast paths push and pop it, committing with the
 * store of size (a full word, so that a pop from either the sheaf or the
 * CPU freelist ends in the same one-store commit); everything else holds
 * the CPU slot's local lock.
 */
struct slub_sheaf {
	unsigned long size;		/* objects[0..size) are free objects */
	unsigned long capacity;
	void *objects[];
};

/*
 * 62 objects: a sheaf is then 512 bytes, and the four sheaves of a cache
 * on two CPUs (two of theirs, two spares) one 2 KiB metadata block.
 */
#define SHEAF_MAX_CAPACITY	62u
#define SHEAF_BARN_MAX		8u

/*
 * The barn: spare sheaves, full or empty, that the CPUs of a cache trade
 * their own for (sheaf.c).  Each slot holds one spare sheaf, tagged
 * BARN_FULL when full (0 only while a flush empties it); a trade is one
 * compare-and-swap of a slot, so the barn always holds all the spares.
 * nr_full is a hint for the fast paths, kept after each trade.
 */
#define BARN_FULL		1UL
struct slub_barn {
	_Atomic(uintptr_t) slot[SHEAF_BARN_MAX];
	atomic_uint nr_full;
	unsigned int nr_slots;
	atomic_ulong nr_put, nr_get;	/* trades of a full / for a full sheaf */
} __attribute__((aligned(UKS_CACHELINE)));	/* written by every CPU */

/*
 * Per-CPU state.  The first line is all the fast paths touch: the
 * {freelist, tid} pair (16-byte aligned for cmpxchg16b), the CPU slab, the
 * two fast-path stat counters and the sheaf (NULL without sheaves).
 */
struct kmem_cache_cpu {
	/*
	 * First free object of page.  NULL whenever page is, at every moment
	 * the lock is free (they are cleared together, under the lock), so an
	 * rseq pop that finds the lock free needs to test only the freelist.
	 */
	void **freelist;
	unsigned long tid;		/* transaction id; bit 0 = local lock held */
	struct uks_page *page;		/* the frozen CPU slab */
	/*
	 * page's object area, {0, 0} without one (set_cpu_slab()): the free
	 * fast paths test "object in the CPU slab" without loading page.
	 */
	uintptr_t slab_start;
	unsigned long nr_alloc_fast;	/* ALLOC_FASTPATH */
	unsigned long nr_free_fast;	/* FREE_FASTPATH */
	struct slub_sheaf *sheaf;	/* UKS_SLAB_SHEAVES caches, else NULL */
	size_t slab_bytes;
	struct slub_sheaf *outbox;	/* sheaf_home_only: other CPUs' objects */
	/* The slow paths' fields; the local lock is bit 0 of tid (cpu_lock.c). */
	struct uks_page *partial;	/* frozen partial slabs, via page->next */
	unsigned int stat[NR_SLUB_STAT_ITEMS];	/* other items */
} __attribute__((aligned(UKS_CACHELINE)));

/* Make @page (or none) the CPU slab of @c, which the caller holds locked. */
static inline void set_cpu_slab(struct kmem_cache_cpu *c, struct uks_page *page)
{
	c->page = page;
	c->slab_start = page ? (uintptr_t)page->addr : 0;
	c->slab_bytes = page ? page->map_size : 0;
}

/*
 * A slab's counters word on its own.  The slow paths compute the new
 * {freelist, counters} pair in locals of this type, as the kernel does
 * in a struct page: a struct uks_page is 64-byte aligned with atomic
 * members and so lives on the stack, where a 16-bit bit-field store
 * followed by a 64-bit load of the same word misses store forwarding.
 */
union slab_counters {
	unsigned long counters;
	struct {
		unsigned int inuse:16;
		unsigned int objects:15;
		unsigned int frozen:1;
	};
};
_Static_assert(sizeof(union slab_counters) == sizeof(((struct uks_page *)0)->counters),
	       "counters word");

struct kmem_cache_node {
	pthread_mutex_t list_lock;
	unsigned long nr_partial;
	struct list_head partial;
	atomic_long nr_slabs;
	atomic_long total_objects;
	struct list_head full;		/* kept only with SLAB_STORE_USER */
};

struct kmem_cache_order_objects {
	unsigned int x;			/* order << 16 | objects */
};

struct uks_kmem_cache {
	/* Read by every fast path: keep together. */
	char *cpu_base;			/* kmem_cache_cpu of CPU 0 */
	size_t cpu_stride;
	unsigned long random;		/* FREELIST_HARDENED key, 0 if off */
	unsigned int offset;		/* free pointer offset in the object */
	unsigned int nr_cpus;
	unsigned long flags;
	enum slub_fastpath fastpath;
	enum slub_entry entry;		/* what the exported fast paths may do now */
	/* The preload free()'s test of a slot start (obj_start_fast()). */
	uint64_t obj_check;
	enum slub_entry fast_entry;	/* ... and without kmem events */
	unsigned int cpu_partial;	/* objects kept in per-CPU partials */
	unsigned int cpu_partial_slabs;	/* the same as slabs (5.16), for the shim */
	unsigned int sheaf_capacity;	/* objects per sheaf, 0 without sheaves */
	unsigned int size;		/* object slot, metadata included */
	unsigned int object_size;
	unsigned int inuse;		/* offset of the metadata */
	unsigned int align;
	unsigned int red_left_pad;
	unsigned long min_partial;
	unsigned int remote_node_defrag_ratio;	/* sysfs only: one node */
	unsigned long tid_step;
	struct kmem_cache_order_objects oo, min, max;
	bool poison_objects;		/* __OBJECT_POISON */
	bool cmpxchg_double;		/* __CMPXCHG_DOUBLE */
	bool is_kmalloc;
	bool sheaf_home_only;		/* other CPUs' objects go to the outbox (sheaf.c) */
	bool count_fast;		/* UKS_SLUB_STATS=1: alloc/free_fastpath counted */
	void (*ctor)(void *);
	char *sheaf_base;		/* the sheaves of all CPUs and the barn */
	size_t sheaf_bytes;
	struct slub_barn barn;
	int refcount;
	struct list_head list;		/* on slab_caches */
	char name[64];
	struct kmem_cache_node node[1];
};

/* slub.c */
extern pthread_mutex_t __uks_slab_mutex;
extern pthread_mutex_t __uks_kmalloc_lock;	/* kmalloc.c; before __uks_slab_mutex */
extern struct list_head __uks_slab_caches;

/* Count alloc_fastpath/free_fastpath in caches made from now on (UKS_SLUB_STATS). */
void __uks_slub_count_fast_paths(bool on);

/* The kmem:* events' reg/unreg hooks: caches take ENTRY_FULL while any is on. */
void __uks_kmem_event_reg(void);
void __uks_kmem_event_unreg(void);

/* s->entry: the kmem events' hooks change it under the fast paths' feet. */
static inline enum slub_entry cache_entry(const struct uks_kmem_cache *s)
{
	return __atomic_load_n(&s->entry, __ATOMIC_RELAXED);
}

static inline struct kmem_cache_cpu *cpu_slab(const struct uks_kmem_cache *s, unsigned int cpu)
{
	return (struct kmem_cache_cpu *)(s->cpu_base + (size_t)cpu * s->cpu_stride);
}

static inline struct kmem_cache_node *get_node(struct uks_kmem_cache *s, int node)
{
	(void)node;
	return &s->node[0];
}

static inline unsigned int oo_order(struct kmem_cache_order_objects x)
{
	return x.x >> 16;
}

static inline unsigned int oo_objects(struct kmem_cache_order_objects x)
{
	return x.x & 0xffff;
}

static inline bool kmem_cache_debug(const struct uks_kmem_cache *s)
{
	return s->flags & SLUB_DEBUG_FLAGS;
}

/*
 * 5.15 limits a CPU partial list by the free objects its slabs had when
 * they were frozen.  A CPU that only frees (a consumer thread) freezes
 * full slabs with one free object each and keeps ~30 of them, which the
 * rest of the frees then empty: RSS nobody can allocate from.  5.16
 * counts slabs instead (cpu_partial_slabs, sized for half-full slabs);
 * the malloc policy does that, the kernel policy keeps 5.15.
 */
static inline bool cpu_partial_in_slabs(void)
{
	return __uks_slab_policy->cpu_partial_in_slabs;
}

/*
 * Under the malloc policy a bad free() is reported and aborts the
 * process, as glibc's does (malloc_check.c).  The kernel policy reports
 * and goes on where the kernel WARNs.
 */
static inline bool slub_in_malloc(void)
{
	return __uks_slab_policy->in_malloc;
}

static inline bool kmem_cache_has_cpu_partial(const struct uks_kmem_cache *s)
{
	return !kmem_cache_debug(s);
}

/* This thread's CPU as a slot index (CPU ids are below nr_cpu_ids). */
static inline unsigned int this_cpu_index(const struct uks_kmem_cache *s)
{
	unsigned int cpu = (unsigned int)uks_this_cpu();

	return likely(cpu < s->nr_cpus) ? cpu : cpu % s->nr_cpus;
}

/* Which of a CPU's sheaves a free goes to (an offset into kmem_cache_cpu). */
#define SHEAF_OWN	offsetof(struct kmem_cache_cpu, sheaf)
#define SHEAF_OUTBOX	offsetof(struct kmem_cache_cpu, outbox)

/*
 * The sheaf for an object whose cache map entry is @entry: this CPU's own,
 * unless the cache is sheaf_home_only (sheaf.c) and the object's slab is
 * another CPU's home; then the outbox, which goes to the barn whole.  A
 * stale home only sends an object the longer way.
 */
static inline size_t sheaf_for(const struct uks_kmem_cache *s, uintptr_t entry)
{
	if (likely(!(entry & UKS_SLAB_HOME_TAGGED)) ||
	    (entry & UKS_SLAB_HOME_CPU_MASK) == (this_cpu_index(s) & UKS_SLAB_HOME_CPU_MASK))
		return SHEAF_OWN;
	return SHEAF_OUTBOX;
}

/* sheaf_for() of @object, looking its entry up only where homes are kept. */
static inline size_t sheaf_for_object(const struct uks_kmem_cache *s, const void *object)
{
	return s->sheaf_home_only ? sheaf_for(s, __uks_virt_to_cache_entry(object)) : SHEAF_OWN;
}

/* @c's sheaf that sheaf_for() named (the rseq push finds it the same way). */
static inline struct slub_sheaf **cpu_sheaf(struct kmem_cache_cpu *c, size_t which)
{
	return (struct slub_sheaf **)((char *)c + which);
}

/* Name this CPU the home of @page, which it is taking as its CPU slab. */
static inline void set_slab_home(struct uks_kmem_cache *s, struct uks_page *page)
{
	if (s->sheaf_home_only)
		__uks_set_slab_home(page, s, UKS_SLAB_HOME_TAGGED |
					     (this_cpu_index(s) & UKS_SLAB_HOME_CPU_MASK));
}

/* Racy per-CPU counter bump, like raw_cpu_inc(): a lost count is harmless. */
static inline void stat(const struct uks_kmem_cache *s, enum stat_item si)
{
	struct kmem_cache_cpu *c = cpu_slab(s, this_cpu_index(s));

	c->stat[si]++;
}

/* slab_lock(page): a bit spinlock, for caches without __CMPXCHG_DOUBLE. */
static inline void slab_lock(struct uks_page *page)
{
	while (atomic_exchange_explicit(&page->locked, 1, memory_order_acquire))
		while (atomic_load_explicit(&page->locked, memory_order_relaxed))
			cpu_relax();
}

static inline void slab_unlock(struct uks_page *page)
{
	atomic_store_explicit(&page->locked, 0, memory_order_release);
}

/* Free pointers, mangled as CONFIG_SLAB_FREELIST_HARDENED does. */
static inline void *freelist_ptr(const struct uks_kmem_cache *s, void *ptr, uintptr_t ptr_addr)
{
	if (!s->random)
		return ptr;
	return (void *)((uintptr_t)ptr ^ s->random ^ __builtin_bswap64(ptr_addr));
}

static inline void *get_freepointer(const struct uks_kmem_cache *s, void *object)
{
	uintptr_t addr = (uintptr_t)object + s->offset;

	return freelist_ptr(s, *(void **)addr, addr);
}

void __uks_slab_double_free(const struct uks_kmem_cache *s, const void *object)
	__attribute__((noreturn, cold));

/*
 * As in 5.15 (CONFIG_SLAB_FREELIST_HARDENED), every path that links an
 * object into a freelist checks it is not linking it to itself: a double
 * free on a slow path (a remote slab, a bulk free, a debug cache) would
 * otherwise make a freelist that hands the same object out forever.
 */
static inline void set_freepointer(const struct uks_kmem_cache *s, void *object, void *fp)
{
	uintptr_t addr = (uintptr_t)object + s->offset;

	if (unlikely(object == fp))
		__uks_slab_double_free(s, object);
	*(void **)addr = freelist_ptr(s, fp, addr);
}

static inline void *fixup_red_left(const struct uks_kmem_cache *s, void *p)
{
	return (char *)p + s->red_left_pad;
}

static inline void *slab_address(const struct uks_page *page)
{
	return page->addr;
}

static inline size_t slab_bytes(const struct uks_page *page)
{
	return (size_t)__uks_page_size << page->order;
}

/*
 * Is @p, taken to lie in a slab of @s of order oo, the start of an object
 * slot?  Slabs are aligned to their size, so @p's offset in its slab is
 * its low bits, and one 32-bit multiply tells the slot starts from the
 * rest: with magic = ceil(2^32 / size), offset * magic mod 2^32 is k * e
 * for the k-th slot start (e = magic * size mod 2^32, below size) and at
 * least magic for any offset that is not a multiple of size, as long as
 * offset + e < magic (Lemire, Kaser and Kurz, "Faster remainder by direct
 * computation", 2019).  So one compare with (objects - 1) * e also
 * refuses the slots past the last object.
 *
 * s->obj_check holds magic, that bound plus one (bits 32-47) and the slab
 * size less one (bits 48-63), for one load: a load each made the test
 * cost twice as much (bench/malloc-peers free64).  A cache whose slabs
 * are past 64 KiB has a bound of 0, and its frees take the slow path.
 * Set by __uks_slab_set_obj_check(); the caller must know @p is in one
 * of @s's slabs (the cache map) of order oo, and @s has no left red zone.
 */
static inline bool obj_start_fast(const struct uks_kmem_cache *s, const void *p)
{
	uint64_t w = s->obj_check;
	uint32_t off = (uint32_t)(uintptr_t)p & (uint32_t)(w >> 48);

	return off * (uint32_t)w < (uint32_t)(w >> 32 & 0xffff);
}

void __uks_slab_set_obj_check(struct uks_kmem_cache *s);

/* Index of @obj in its slab. */
static inline unsigned int obj_index(const struct uks_kmem_cache *s, const struct uks_page *page,
				     const void *obj)
{
	return (unsigned int)(((const char *)obj - page->addr) / s->size);
}

#define for_each_object(p, s, addr, objects)					\
	for ((p) = fixup_red_left((s), (addr));					\
	     (char *)(p) < (char *)(addr) + (size_t)(objects) * (s)->size;	\
	     (p) = (char *)(p) + (s)->size)

/* alloc.c / free.c / partial.c */
void *__uks_slab_alloc(struct uks_kmem_cache *s, unsigned long addr);
void __uks_slab_free(struct uks_kmem_cache *s, struct uks_page *page, void *head, void *tail,
		     int cnt, unsigned long addr);
void __uks_deactivate_slab(struct uks_kmem_cache *s, struct uks_page *page, void *freelist);
void *__uks_link_fresh_objects(struct uks_kmem_cache *s, struct uks_page *page, unsigned int max,
			       void *tail);
void __uks_put_cpu_partial(struct uks_kmem_cache *s, struct uks_page *page, int drain);
void __uks_set_cpu_partial(struct uks_kmem_cache *s, unsigned int nr_objects);
void __uks_unfreeze_partials(struct uks_kmem_cache *s, struct uks_page *partial_page);
void __uks_add_partial(struct kmem_cache_node *n, struct uks_page *page, int tail);
void __uks_remove_partial(struct kmem_cache_node *n, struct uks_page *page);
void __uks_discard_slab(struct uks_kmem_cache *s, struct uks_page *page);
bool __uks_slab_lock_cmpxchg(struct uks_kmem_cache *s, struct uks_page *page,
			     void *freelist_old, unsigned long counters_old,
			     void *freelist_new, unsigned long counters_new);
void __uks_flush_all(struct uks_kmem_cache *s);
void __uks_flush_cpu(struct uks_kmem_cache *s, unsigned int cpu);
int __uks_free_partial_all(struct uks_kmem_cache *s);

/* sheaf.c */
int __uks_sheaf_init(struct uks_kmem_cache *s);
void __uks_sheaf_destroy(struct uks_kmem_cache *s);
void *__uks_sheaf_alloc_slow(struct uks_kmem_cache *s);
void __uks_sheaf_push_slow(struct uks_kmem_cache *s, void *object, size_t which);
void __uks_sheaf_flush_all(struct uks_kmem_cache *s);

/* local lock of a kmem_cache_cpu (cpu_lock.c) */
struct kmem_cache_cpu *__uks_cpu_slab_lock(struct uks_kmem_cache *s, unsigned int *cpu);
void __uks_cpu_slab_lock_remote(struct uks_kmem_cache *s, unsigned int cpu);
extern bool __uks_slab_rseq_locking_flag;

static inline bool __uks_slab_rseq_locking(void)
{
	return __uks_slab_rseq_locking_flag;
}

/* Release a slot's local lock, bumping its tid (one release store). */
static inline void __uks_cpu_slab_unlock(struct uks_kmem_cache *s, struct kmem_cache_cpu *c)
{
	unsigned long tid = c->tid & ~TID_LOCK_MASK;

	__atomic_store_n(&c->tid, tid + s->tid_step, __ATOMIC_RELEASE);
}
int __uks_slab_fastpath_init(void);
extern enum slub_fastpath __uks_slab_default_fastpath;

/* debug.c (no-ops for non-debug caches) */
int __uks_slub_debug_parse(const char *text);
bool __uks_slub_debug_disable_higher_order(void);
void __uks_dump_stack(enum uks_log_level level);
unsigned long __uks_slub_debug_flags(const char *name, unsigned long flags);
void __uks_setup_slab_debug(struct uks_kmem_cache *s, struct uks_page *page, void *addr);
void __uks_setup_object_debug(struct uks_kmem_cache *s, void *object);
bool __uks_alloc_debug_processing(struct uks_kmem_cache *s, struct uks_page *page, void *object,
				  unsigned long addr);
bool __uks_free_debug_processing(struct uks_kmem_cache *s, struct uks_page *page, void *head,
				 void *tail, int bulk_cnt, unsigned long addr, bool *bad_pointer);
void __uks_init_tracking(struct uks_kmem_cache *s, void *object);
void __uks_debug_fork_child(void);
void __uks_trace(struct uks_kmem_cache *s, struct uks_page *page, void *object, int alloc);
void __uks_slab_check_pad_on_free(struct uks_kmem_cache *s, struct uks_page *page);
int __uks_validate_slab_cache(struct uks_kmem_cache *s);
void __uks_list_slab_objects(struct uks_kmem_cache *s, struct uks_page *page, const char *text);
bool __uks_check_valid_pointer(struct uks_kmem_cache *s, struct uks_page *page, void *object);
void __uks_slab_err(struct uks_kmem_cache *s, struct uks_page *page, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void __uks_object_err(struct uks_kmem_cache *s, struct uks_page *page, void *object,
		      const char *reason);
bool __uks_freelist_corrupted(struct uks_kmem_cache *s, struct uks_page *page, void **freelist,
			      void *nextfree);
/* kunit-style error counting: while set, reports are counted, not printed. */
extern __thread int *__uks_slab_kunit_errors;
/* While set, every report and fix is also counted here (validate's result). */
extern __thread int *__uks_slab_error_tally;

/* kmalloc.c */
extern bool __uks_kmalloc_sheaves;
int __uks_kmalloc_init(void);
struct uks_kmem_cache *__uks_kmalloc_slab(size_t size);
void __uks_free_slow(const void *p);
void *__uks_malloc(size_t size, unsigned long caller);
void *__uks_kzalloc(size_t size, unsigned long caller);
void *__uks_kmalloc_aligned(size_t size, size_t align, unsigned long caller);
void __uks_free(void *p);
void *__uks_krealloc_if_ours(void *p, size_t new_size, bool *ours, unsigned long caller);
void __uks_slab_init(void);

/* malloc_check.c: the malloc policy's checks */
void __uks_malloc_abort(const char *fn, const char *what, const void *p, const char *why)
	__attribute__((noreturn, cold));
void __uks_malloc_check(struct uks_page *page, const void *p, const char *fn);

/* slub.c */
struct uks_kmem_cache *__uks_kmem_cache_create(const char *name, unsigned int size,
					       unsigned int align, unsigned long flags,
					       void (*ctor)(void *), bool is_kmalloc);
void *__uks_meta_alloc(size_t size);
void __uks_meta_free(void *p, size_t size);

#endif
