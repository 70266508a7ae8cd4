// SPDX-License-Identifier: MIT
/*
 * Per-CPU partial slabs and flushing: 5.15's put_cpu_partial(),
 * __unfreeze_partials(), flush_slab() and flush_all(); and the per-CPU
 * sheaves of UKS_SLAB_SHEAVES caches, which flushing empties too.
 *
 * put_cpu_partial() holds the local lock for the list push only (5.15
 * replaced its cmpxchg loop with this short locked section); draining the
 * list to the node runs after the lock is dropped.  flush_all() has no
 * IPIs or workqueues here: the flusher takes each CPU's local lock itself
 * (a remote lock, see cpu_lock.c) and detaches that CPU's slabs.
 */
#include <errno.h>
#include <string.h>

#include "slab/hot.h"
#include "slab/slub.h"

/**
 * __uks_unfreeze_partials - move a chain of frozen partial slabs to the node
 * @s: cache
 * @partial_page: first slab of the chain (linked by ->next), detached
 *
 * Empty slabs beyond min_partial are discarded after list_lock is dropped.
 */
void __uks_unfreeze_partials(struct uks_kmem_cache *s, struct uks_page *partial_page)
{
	struct kmem_cache_node *n = NULL;
	struct uks_page *page, *discard_page = NULL;

	while (partial_page) {
		unsigned long old_counters;
		union slab_counters new;
		void *old_freelist;

		page = partial_page;
		partial_page = page->next;

		if (!n) {
			n = get_node(s, 0);
			pthread_mutex_lock(&n->list_lock);
		}
		do {
			old_freelist = page->freelist;
			old_counters = page->counters;
			new.counters = old_counters;
			new.frozen = 0;
		} while (!cmpxchg_double_slab(s, page, old_freelist, old_counters,
						    old_freelist, new.counters));

		if (unlikely(!new.inuse && n->nr_partial >= s->min_partial)) {
			page->next = discard_page;
			discard_page = page;
		} else {
			__uks_add_partial(n, page, DEACTIVATE_TO_TAIL);
			stat(s, FREE_ADD_PARTIAL);
		}
	}
	if (n)
		pthread_mutex_unlock(&n->list_lock);

	while (discard_page) {
		page = discard_page;
		discard_page = discard_page->next;
		stat(s, DEACTIVATE_EMPTY);
		__uks_discard_slab(s, page);
		stat(s, FREE_SLAB);
	}
}

/**
 * __uks_set_cpu_partial - set the per-CPU partial limit (cpu_partial)
 * @s: cache
 * @nr_objects: free objects to keep per CPU; 0 for none
 *
 * Also sets the limit in slabs (5.16's slub_set_cpu_partial()), assuming
 * half-full slabs, which the preload malloc's build uses.
 */
void __uks_set_cpu_partial(struct uks_kmem_cache *s, unsigned int nr_objects)
{
	unsigned int objs = oo_objects(s->oo) ? oo_objects(s->oo) : 1;

	WRITE_ONCE(s->cpu_partial_slabs, (nr_objects * 2 + objs - 1) / objs);
	WRITE_ONCE(s->cpu_partial, nr_objects);
}

/**
 * __uks_put_cpu_partial - put a frozen slab on this CPU's partial list
 * @s: cache
 * @page: the slab (frozen by the caller)
 * @drain: if the list already holds more than cpu_partial objects, move it
 *	to the node first (from __slab_free; get_partial_node passes 0)
 */
void __uks_put_cpu_partial(struct uks_kmem_cache *s, struct uks_page *page, int drain)
{
	struct uks_page *oldpage, *page_to_unfreeze = NULL;
	struct kmem_cache_cpu *c;
	unsigned int cpu;
	int slabs = 0, pobjects = 0;

	c = __uks_cpu_slab_lock(s, &cpu);
	oldpage = c->partial;
	if (oldpage) {
		if (drain && (CPU_PARTIAL_IN_SLABS ?
			      oldpage->slabs >= (int)s->cpu_partial_slabs :
			      oldpage->pobjects > (int)s->cpu_partial)) {
			/* Full: the whole list goes to the node, after unlocking. */
			page_to_unfreeze = oldpage;
			oldpage = NULL;
		} else {
			pobjects = oldpage->pobjects;
			slabs = oldpage->slabs;
		}
	}
	slabs++;
	pobjects += (int)page->objects - (int)page->inuse;
	page->slabs = slabs;
	page->pobjects = pobjects;
	page->next = oldpage;
	c->partial = page;
	__uks_cpu_slab_unlock(s, c);

	if (page_to_unfreeze) {
		__uks_unfreeze_partials(s, page_to_unfreeze);
		stat(s, CPU_PARTIAL_DRAIN);
	}
}

/*
 * Sheaves: per-CPU arrays of free objects in front of the slabs, for
 * UKS_SLAB_SHEAVES caches (the preload malloc's kmalloc caches).
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
 *   pop    rseq section; falls through to the CPU freelist when empty
 *   full   under the CPU slot's local lock, the older half is taken out,
 *          then freed with the bulk free (build_detached_freelist()),
 *          after the lock is dropped (the lock never spans slab work)
 *   flush  __uks_flush_all() empties the sheaves under the remote lock, so
 *          shrink, destroy and validate see every object back in a slab
 *
 * Everything below the sheaf is unchanged SLUB.  Debug caches never get
 * sheaves (every object must pass the checks on each free), and neither
 * do caches off the rseq fast path.
 */
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

/**
 * __uks_sheaf_init - give every CPU slot of @s a sheaf, if @s wants them
 * @s: cache being opened (flags, size, fastpath and CPU slots set)
 *
 * Return: 0 (also when @s gets no sheaves), or -ENOMEM.
 */
int __uks_sheaf_init(struct uks_kmem_cache *s)
{
	size_t stride;

	s->sheaf_capacity = 0;
	if (!(s->flags & UKS_SLAB_SHEAVES) || kmem_cache_debug(s) || !UKS_HAVE_RSEQ_ASM ||
	    s->fastpath != FASTPATH_RSEQ)
		return 0;
	stride = ALIGN_UP(sizeof(struct slub_sheaf) + sheaf_capacity(s) * sizeof(void *),
			  (size_t)UKS_CACHELINE);
	s->sheaf_bytes = stride * s->nr_cpus;
	s->sheaf_base = __uks_meta_alloc(s->sheaf_bytes);
	if (!s->sheaf_base)
		return -ENOMEM;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct slub_sheaf *sh = (struct slub_sheaf *)(s->sheaf_base + cpu * stride);

		sh->capacity = sheaf_capacity(s);
		cpu_slab(s, cpu)->sheaf = sh;
	}
	s->sheaf_capacity = sheaf_capacity(s);
	return 0;
}

/** __uks_sheaf_destroy - release the sheaves of @s (flushed, unused) */
void __uks_sheaf_destroy(struct uks_kmem_cache *s)
{
	__uks_meta_free(s->sheaf_base, s->sheaf_bytes);
	s->sheaf_base = NULL;
}

/**
 * __uks_sheaf_push_slow - free @object when the fast push could not
 * @s: cache with sheaves
 * @object: the object
 *
 * The sheaf was full, or the slot locked.  Under the local lock, a full
 * sheaf gives up its older half (the objects least likely to be in the
 * cache), then @object is pushed; the older half goes back to its slabs
 * after unlocking.
 */
void __uks_sheaf_push_slow(struct uks_kmem_cache *s, void *object)
{
	void *out[SHEAF_MAX_CAPACITY];
	struct kmem_cache_cpu *c;
	struct slub_sheaf *sh;
	unsigned int cpu;
	size_t n = 0;

	c = __uks_cpu_slab_lock(s, &cpu);
	sh = c->sheaf;
	if (sh->size == sh->capacity) {
		n = sh->capacity / 2;
		memcpy(out, sh->objects, n * sizeof(void *));
		memmove(sh->objects, sh->objects + n, (sh->size - n) * sizeof(void *));
		sh->size -= n;
	}
	if (unlikely(sh->size && sh->objects[sh->size - 1] == object)) {
		__uks_cpu_slab_unlock(s, c);
		slab_double_free(s, object);
	}
	sh->objects[sh->size++] = object;
	c->nr_free_fast++;
	__uks_cpu_slab_unlock(s, c);
	if (n)
		uks_kmem_cache_free_bulk(s, n, out);
}

/**
 * __uks_sheaf_flush_locked - empty a locked slot's sheaf into @out
 * @s: cache
 * @c: its CPU slot, local lock held
 * @out: room for SHEAF_MAX_CAPACITY objects
 * @nr: set to the number of objects moved to @out
 *
 * The caller frees @out (uks_kmem_cache_free_bulk()) after unlocking.
 */
void __uks_sheaf_flush_locked(struct uks_kmem_cache *s, struct kmem_cache_cpu *c, void **out,
			      size_t *nr)
{
	struct slub_sheaf *sh = c->sheaf;

	(void)s;
	*nr = 0;
	if (!sh || !sh->size)
		return;
	*nr = sh->size;
	memcpy(out, sh->objects, sh->size * sizeof(void *));
	sh->size = 0;
}

/* Empty CPU @cpu's sheaf back into the slabs (the remote lock, then bulk free). */
static void flush_sheaf(struct uks_kmem_cache *s, unsigned int cpu)
{
	struct kmem_cache_cpu *c = cpu_slab(s, cpu);
	void *objects[SHEAF_MAX_CAPACITY];
	size_t nr;

	if (!c->sheaf || !READ_ONCE(c->sheaf->size))
		return;
	__uks_cpu_slab_lock_remote(s, cpu);
	__uks_sheaf_flush_locked(s, c, objects, &nr);
	__uks_cpu_slab_unlock(s, c);
	if (nr)
		uks_kmem_cache_free_bulk(s, nr, objects);
}

/**
 * __uks_flush_cpu - detach CPU @cpu's slab and partial list, return them
 * @s: cache
 * @cpu: any possible CPU
 */
void __uks_flush_cpu(struct uks_kmem_cache *s, unsigned int cpu)
{
	struct kmem_cache_cpu *c = cpu_slab(s, cpu);
	struct uks_page *page, *partial;
	void *freelist;

	if (!READ_ONCE(c->page) && !READ_ONCE(c->partial))
		return;
	__uks_cpu_slab_lock_remote(s, cpu);
	page = c->page;
	freelist = c->freelist;
	partial = c->partial;
	set_cpu_slab(c, NULL);
	c->freelist = NULL;
	c->partial = NULL;
	__uks_cpu_slab_unlock(s, c);

	if (page) {
		__uks_deactivate_slab(s, page, freelist);
		stat(s, CPUSLAB_FLUSH);
	}
	if (partial)
		__uks_unfreeze_partials(s, partial);
}

/**
 * __uks_flush_all - flush every CPU's sheaf and slabs of @s to the node lists
 * @s: cache
 *
 * Sheaves go first, all of them: freeing their objects may freeze slabs
 * onto the flusher's CPU partial list, which the second pass then empties.
 */
void __uks_flush_all(struct uks_kmem_cache *s)
{
	if (s->sheaf_capacity)
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			flush_sheaf(s, cpu);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		__uks_flush_cpu(s, cpu);
}
