// SPDX-License-Identifier: MIT
/*
 * Sheaves: per-CPU arrays of free objects in front of the slabs, for
 * UKS_SLAB_SHEAVES caches (the preload malloc's kmalloc caches), and the
 * barn of spare sheaves the CPUs trade with.
 *
 * SLUB frees an object of a slab other than the CPU slab with a 16-byte
 * cmpxchg on that slab, and an allocation that empties the CPU freelist
 * goes through the slow path.  Under a random replacement workload
 * (larson) most objects are of other slabs, so nearly every free and
 * every other allocation was slow.  Linux answered this after 5.15 with
 * "sheaves": free() pushes the pointer onto a per-CPU array, alloc() pops
 * it, and only a full array goes back to the slabs, in bulk.  Here:
 *
 *   push   rseq section (fastpath.h), no write to the object itself
 *   pop    rseq section; falls through to the CPU freelist when the sheaf
 *          is empty and the barn has no full sheaf
 *   full   under the CPU slot's local lock: traded in the barn for an
 *          empty sheaf if there is one, else the older half is taken out
 *          and freed with the bulk free (build_detached_freelist()) after
 *          the lock is dropped (the lock never spans slab work)
 *   empty  the allocation slow path first trades the empty sheaf for a
 *          full one of the barn
 *   flush  __uks_sheaf_flush_all() empties every CPU's sheaf (under the
 *          remote lock) and the barn's full ones, so shrink, destroy and
 *          validate see every object back in a slab
 *
 * The barn (Linux 6.18's name) is what lets objects freed on one CPU be
 * allocated on another without a trip through their slabs: a consumer
 * thread's full sheaves become a producer's next allocations.  Before it,
 * a CPU that only freed flushed its objects to their slabs, which 5.15
 * then froze onto that CPU's partial list, out of reach of the CPU that
 * allocates: bench/malloc-peers' prodcons kept a few hundred KiB of free
 * objects there.  The barn holds a fixed number of spare sheaves, full or
 * empty; every trade is one for one, so its arrays never overflow.
 *
 * A sheaf hands a CPU the objects it freed, whichever CPU's slab they
 * came from.  For objects smaller than a cache line that gave two threads
 * neighbours in one line, each written from its own CPU (passive false
 * sharing, Hoard's cache-scratch: bench/malloc-peers' scratch took 2.4x
 * mimalloc's time, as glibc's tcache does).  So caches of such objects are
 * sheaf_home_only: a slab's cache map entry names its home, the CPU that
 * last took it as its CPU slab (set_slab_home()), and a free on another
 * CPU goes to that CPU's outbox, a second sheaf that is never allocated
 * from (sheaf_for()).  A full outbox is traded in the barn like a full
 * sheaf, so a producer thread still gets its objects back a sheaf at a
 * time, and a thread that frees a few of another's objects allocates from
 * a slab of its own.  Returning them to their slabs instead, as 5.15
 * does, made prodcons 1.2-1.4x slower; the outbox costs it 2-8%.
 *
 * The barn has no lock: a trade is one compare-and-swap of a slot (see
 * barn_trade()), made under the trading CPU slot's local lock.  A fork()
 * while another thread flushes the barn leaves that slot empty in the
 * child, which then has one spare fewer.  Everything below the sheaves is
 * unchanged SLUB.  Debug caches never get sheaves (every object must pass
 * the checks on each free), and neither do caches off the rseq fast path.
 */
#include <errno.h>
#include <string.h>

#include "slab/hot.h"
#include "slab/slub.h"

/* Bytes of objects one sheaf may hold: the RSS a CPU may keep per cache. */
#define SHEAF_BYTES		16384u
#define SHEAF_MIN_CAPACITY	4u

static unsigned int sheaf_capacity(const struct uks_kmem_cache *s)
{
	unsigned int cap = SHEAF_BYTES / s->size;

	if (cap < SHEAF_MIN_CAPACITY)
		cap = SHEAF_MIN_CAPACITY;
	return cap > SHEAF_MAX_CAPACITY ? SHEAF_MAX_CAPACITY : cap;
}

/* Spare sheaves in the barn: one per CPU, at least two, at most the arrays. */
static unsigned int barn_spares(const struct uks_kmem_cache *s)
{
	unsigned int n = s->nr_cpus < 2 ? 2 : s->nr_cpus;

	return n > SHEAF_BARN_MAX ? SHEAF_BARN_MAX : n;
}

/**
 * __uks_sheaf_init - give every CPU slot of @s a sheaf, if @s wants them
 * @s: cache being opened (flags, size, fastpath and CPU slots set)
 *
 * The sheaves of all CPUs and the barn's spares are one allocation.
 * Return: 0 (also when @s gets no sheaves), or -ENOMEM.
 */
int __uks_sheaf_init(struct uks_kmem_cache *s)
{
	unsigned int cap = sheaf_capacity(s), spares = barn_spares(s), outboxes;
	size_t stride;

	s->sheaf_capacity = 0;
	s->sheaf_home_only = false;
	if (!(s->flags & UKS_SLAB_SHEAVES) || kmem_cache_debug(s) || !UKS_HAVE_RSEQ_ASM ||
	    s->fastpath != FASTPATH_RSEQ)
		return 0;
	/*
	 * Objects smaller than a line share one with a neighbour.  So do 80 to
	 * 112 bytes, less often; taking them too cost prodcons 3-10% more.
	 */
	s->sheaf_home_only = s->size < UKS_CACHELINE;
	outboxes = s->sheaf_home_only ? s->nr_cpus : 0;
	stride = ALIGN_UP(sizeof(struct slub_sheaf) + cap * sizeof(void *), (size_t)UKS_CACHELINE);
	s->sheaf_bytes = stride * (s->nr_cpus + outboxes + spares);
	s->sheaf_base = __uks_meta_alloc(s->sheaf_bytes);
	if (!s->sheaf_base) {
		s->sheaf_home_only = false;
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < s->nr_cpus + outboxes + spares; i++) {
		struct slub_sheaf *sh = (struct slub_sheaf *)(s->sheaf_base + i * stride);

		sh->capacity = cap;
		if (i < s->nr_cpus)
			cpu_slab(s, i)->sheaf = sh;
		else if (i < s->nr_cpus + outboxes)
			cpu_slab(s, i - s->nr_cpus)->outbox = sh;
		else
			atomic_init(&s->barn.slot[i - s->nr_cpus - outboxes], (uintptr_t)sh);
	}
	s->barn.nr_slots = spares;
	atomic_init(&s->barn.nr_full, 0);
	atomic_init(&s->barn.nr_put, 0);
	atomic_init(&s->barn.nr_get, 0);
	s->sheaf_capacity = cap;
	return 0;
}

/** __uks_sheaf_destroy - release the sheaves of @s (flushed, unused) */
void __uks_sheaf_destroy(struct uks_kmem_cache *s)
{
	__uks_meta_free(s->sheaf_base, s->sheaf_bytes);
	s->sheaf_base = NULL;
}

/*
 * Trade the locked slot's sheaf *@mine (its own or its outbox; full if
 * @give_full, else empty) for a spare of the other kind.  Compare-and-swap
 * makes the trade atomic; ABA is harmless, as a slot's value says all
 * there is to know (this sheaf, this kind), and the release/acquire pair
 * hands the sheaf's contents over.  Return: true if done.
 */
static bool barn_trade(struct uks_kmem_cache *s, struct slub_sheaf **mine, bool give_full)
{
	struct slub_barn *barn = &s->barn;
	uintptr_t want = give_full ? 0 : BARN_FULL;
	unsigned int nr_full = atomic_load_explicit(&barn->nr_full, memory_order_relaxed);

	/* The usual answer, from the hint: nothing of the wanted kind. */
	if (give_full ? nr_full >= barn->nr_slots : !nr_full)
		return false;
	for (unsigned int i = 0; i < barn->nr_slots; i++) {
		uintptr_t v = atomic_load_explicit(&barn->slot[i], memory_order_relaxed);

		if (!v || (v & BARN_FULL) != want)
			continue;
		if (atomic_compare_exchange_strong_explicit(&barn->slot[i], &v,
							    (uintptr_t)*mine | (want ^ BARN_FULL),
							    memory_order_acq_rel,
							    memory_order_relaxed)) {
			*mine = (struct slub_sheaf *)(v & ~BARN_FULL);
			if (give_full) {
				atomic_fetch_add_explicit(&barn->nr_full, 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&barn->nr_put, 1, memory_order_relaxed);
			} else {
				atomic_fetch_sub_explicit(&barn->nr_full, 1, memory_order_relaxed);
				atomic_fetch_add_explicit(&barn->nr_get, 1, memory_order_relaxed);
			}
			return true;
		}
	}
	return false;
}

/**
 * __uks_sheaf_alloc_slow - allocate from a full sheaf of the barn
 * @s: cache with sheaves
 *
 * The fast pop found this CPU's sheaf empty and either its freelist empty
 * too or a full sheaf waiting in the barn.  Under the local lock, an
 * empty sheaf is traded for that full one and its top object taken.
 * Return: the object, or NULL for the slab slow path.
 */
void *__uks_sheaf_alloc_slow(struct uks_kmem_cache *s)
{
	struct kmem_cache_cpu *c;
	struct slub_sheaf *sh;
	unsigned int cpu;
	void *object = NULL;

	if (!atomic_load_explicit(&s->barn.nr_full, memory_order_relaxed))
		return NULL;
	c = __uks_cpu_slab_lock(s, &cpu);
	sh = c->sheaf;
	if (!sh->size && barn_trade(s, &c->sheaf, false))
		sh = c->sheaf;
	if (sh->size)
		object = sh->objects[--sh->size];
	__uks_cpu_slab_unlock(s, c);
	return object;
}

/**
 * __uks_sheaf_push_slow - free @object when the fast push could not
 * @s: cache with sheaves
 * @object: the object
 * @which: SHEAF_OWN, or SHEAF_OUTBOX (sheaf_for())
 *
 * The sheaf was full, or the slot locked.  Under the local lock, a full
 * sheaf goes to the barn for an empty one; if the barn has none, it gives
 * up its older half (the objects least likely to be in the cache), which
 * goes back to its slabs after unlocking.  Then @object is pushed.
 */
void __uks_sheaf_push_slow(struct uks_kmem_cache *s, void *object, size_t which)
{
	void *out[SHEAF_MAX_CAPACITY];
	struct kmem_cache_cpu *c;
	struct slub_sheaf **mine, *sh;
	unsigned int cpu;
	size_t n = 0;

	c = __uks_cpu_slab_lock(s, &cpu);
	mine = cpu_sheaf(c, which);
	sh = *mine;
	if (unlikely(sh->size && sh->objects[sh->size - 1] == object)) {
		__uks_cpu_slab_unlock(s, c);
		__uks_slab_double_free(s, object);
	}
	if (sh->size == sh->capacity) {
		if (barn_trade(s, mine, true)) {
			sh = *mine;
		} else {
			n = sh->capacity / 2;
			memcpy(out, sh->objects, n * sizeof(void *));
			memmove(sh->objects, sh->objects + n, (sh->size - n) * sizeof(void *));
			sh->size -= n;
		}
	}
	sh->objects[sh->size++] = object;
	c->nr_free_fast += s->count_fast;
	__uks_cpu_slab_unlock(s, c);
	if (n)
		uks_kmem_cache_free_bulk(s, n, out);
}

/* Empty CPU @cpu's sheaf back into the slabs (the remote lock, then bulk free). */
static void flush_cpu_sheaf(struct uks_kmem_cache *s, unsigned int cpu, size_t which)
{
	struct kmem_cache_cpu *c = cpu_slab(s, cpu);
	struct slub_sheaf **mine = cpu_sheaf(c, which);
	void *objects[SHEAF_MAX_CAPACITY];
	size_t nr;

	if (!READ_ONCE((*mine)->size))
		return;
	__uks_cpu_slab_lock_remote(s, cpu);
	nr = (*mine)->size;
	memcpy(objects, (*mine)->objects, nr * sizeof(void *));
	(*mine)->size = 0;
	__uks_cpu_slab_unlock(s, c);
	if (nr)
		uks_kmem_cache_free_bulk(s, nr, objects);
}

/*
 * Empty the barn's full sheaves into the slabs.  A slot is taken (0)
 * while its sheaf is emptied, so no CPU trades for it meanwhile.
 */
static void flush_barn(struct uks_kmem_cache *s)
{
	struct slub_barn *barn = &s->barn;
	void *objects[SHEAF_MAX_CAPACITY];

	for (unsigned int i = 0; i < barn->nr_slots; i++) {
		uintptr_t v = atomic_load_explicit(&barn->slot[i], memory_order_relaxed);
		struct slub_sheaf *sh;
		size_t nr;

		if (!(v & BARN_FULL) ||
		    !atomic_compare_exchange_strong_explicit(&barn->slot[i], &v, 0,
							     memory_order_acquire,
							     memory_order_relaxed))
			continue;
		sh = (struct slub_sheaf *)(v & ~BARN_FULL);
		nr = sh->size;
		memcpy(objects, sh->objects, nr * sizeof(void *));
		sh->size = 0;
		atomic_store_explicit(&barn->slot[i], (uintptr_t)sh, memory_order_release);
		atomic_fetch_sub_explicit(&barn->nr_full, 1, memory_order_relaxed);
		uks_kmem_cache_free_bulk(s, nr, objects);
	}
}

/**
 * __uks_sheaf_flush_all - every object of @s's sheaves back to its slab
 * @s: cache with sheaves
 *
 * Each CPU's sheaf and outbox, then the barn's full ones.  Objects freed
 * meanwhile may fill sheaves again: a flush is exact on a quiescent cache.
 */
void __uks_sheaf_flush_all(struct uks_kmem_cache *s)
{
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		flush_cpu_sheaf(s, cpu, SHEAF_OWN);
		if (s->sheaf_home_only)
			flush_cpu_sheaf(s, cpu, SHEAF_OUTBOX);
	}
	flush_barn(s);
}
