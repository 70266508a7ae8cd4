// SPDX-License-Identifier: MIT
/*
 * Per-CPU partial slabs and flushing: 5.15's put_cpu_partial(),
 * __unfreeze_partials(), flush_slab() and flush_all() (which empties the
 * sheaves of sheaf.c first).
 *
 * put_cpu_partial() holds the local lock for the list push only (5.15
 * replaced its cmpxchg loop with this short locked section); draining the
 * list to the node runs after the lock is dropped.  flush_all() has no
 * IPIs or workqueues here: the flusher takes each CPU's local lock itself
 * (a remote lock, see cpu_lock.c) and detaches that CPU's slabs.
 */
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
		if (drain && (cpu_partial_in_slabs() ?
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
 * __uks_flush_all - flush every sheaf and CPU slab of @s to the node lists
 * @s: cache
 *
 * Sheaves go first, all of them: freeing their objects may freeze slabs
 * onto the flusher's CPU partial list, which the second pass then empties.
 */
void __uks_flush_all(struct uks_kmem_cache *s)
{
	if (s->sheaf_capacity)
		__uks_sheaf_flush_all(s);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		__uks_flush_cpu(s, cpu);
}
