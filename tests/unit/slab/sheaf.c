// SPDX-License-Identifier: MIT
/*
 * Sheaves and the barn (lib/slab/sheaf.c): a full sheaf is traded in the
 * barn for an empty one, an empty one for a full one before any slab is
 * touched, and with no spare left a full sheaf gives half back to the
 * slabs; objects freed on one CPU reach the allocations of another
 * through the barn.  White-box: the test reads the barn's slots.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "slab/slub.h"
#include "unit/slab/helper.h"
#include <uks/slab.h>

static unsigned int barn_full(struct uks_kmem_cache *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < s->barn.nr_slots; i++)
		n += (atomic_load(&s->barn.slot[i]) & BARN_FULL) != 0;
	return n;
}

static bool in(void *const *set, size_t n, const void *p)
{
	for (size_t i = 0; i < n; i++)
		if (set[i] == p)
			return true;
	return false;
}

TEST(a_full_sheaf_is_traded_in_the_barn_and_comes_back_before_the_slabs)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_barn", 256, 0, UKS_SLAB_SHEAVES, NULL);
	struct kmem_cache_cpu *c;
	unsigned int cap, spares;
	size_t n, freed = 0, nr_again = 0;
	unsigned long slabs;
	void **p, **again;

	ASSERT_NONNULL(s);
	if (!s->sheaf_capacity)
		SKIP(goto out, "no sheaves without the rseq fast path (%s here)",
		     uks_slab_fastpath());
	ASSERT_TRUE(pin_to_cpu(sched_getcpu()));
	c = cpu_slab(s, (unsigned int)sched_getcpu());
	cap = s->sheaf_capacity;
	spares = s->barn.nr_slots;
	EXPECT_GE(spares, 2u);
	n = (size_t)(spares + 2) * cap;
	p = calloc(n, sizeof(*p));
	again = calloc(n, sizeof(*again));
	ASSERT_NONNULL(p);
	ASSERT_NONNULL(again);
	for (size_t i = 0; i < n; i++)
		ASSERT_NONNULL(p[i] = uks_kmem_cache_alloc(s));

	/* Each time the sheaf is full, the next free trades it for a spare. */
	for (unsigned int k = 0; k < spares; k++) {
		struct slub_sheaf *before;

		while (freed < (size_t)(k + 1) * cap)
			uks_kmem_cache_free(s, p[freed++]);
		EXPECT_EQ(cap, c->sheaf->size);
		before = c->sheaf;
		uks_kmem_cache_free(s, p[freed++]);
		EXPECT_TRUE(c->sheaf != before);
		EXPECT_EQ(1u, c->sheaf->size);
		EXPECT_EQ(k + 1, barn_full(s));
		EXPECT_EQ(k + 1, atomic_load(&s->barn.nr_full));
	}
	/* No empty spare left: a full sheaf gives its older half to the slabs. */
	while (c->sheaf->size < cap)
		uks_kmem_cache_free(s, p[freed++]);
	uks_kmem_cache_free(s, p[freed++]);
	EXPECT_EQ(cap / 2 + 1, c->sheaf->size);
	EXPECT_EQ(spares, barn_full(s));

	/* Allocation: the CPU's sheaf, newest first ... */
	slabs = attr_ulong(s, "alloc_slab");
	for (size_t i = freed; c->sheaf->size; i--) {
		again[nr_again] = uks_kmem_cache_alloc(s);
		EXPECT_EQ(p[i - 1], again[nr_again++]);
	}
	/* ... then a full sheaf of the barn, not the CPU slab's freelist. */
	for (unsigned int k = 0; k < spares; k++) {
		void *q = uks_kmem_cache_alloc(s);

		EXPECT_TRUE(in(p, freed, q));
		again[nr_again++] = q;
		EXPECT_EQ(spares - k - 1, barn_full(s));
		EXPECT_EQ(cap - 1, c->sheaf->size);
		while (c->sheaf->size) {
			q = uks_kmem_cache_alloc(s);
			EXPECT_TRUE(in(p, freed, q));
			again[nr_again++] = q;
		}
	}
	EXPECT_EQ(slabs, attr_ulong(s, "alloc_slab"));
	EXPECT_EQ((unsigned long)spares, atomic_load(&s->barn.nr_put));
	EXPECT_EQ((unsigned long)spares, atomic_load(&s->barn.nr_get));
	/* Every object once more (the ones that went back to slabs are free). */
	for (size_t i = 0; i < nr_again; i++)
		uks_kmem_cache_free(s, again[i]);
	for (size_t i = freed; i < n; i++)
		uks_kmem_cache_free(s, p[i]);
	free(p);
	free(again);
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));
	EXPECT_EQ(0u, attr_ulong(s, "slabs"));
out:
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

/* One producer and one consumer CPU, objects passed through a ring. */
#define RING 256
#define NR_OBJECTS 200000

struct ring {
	struct uks_kmem_cache *s;
	int cpu;
	_Atomic size_t head, tail;
	void *slot[RING];
	atomic_int bad;
	bool pinned;
};

static void *consumer(void *arg)
{
	struct ring *r = arg;
	size_t tail = 0;

	r->pinned = pin_to_cpu(r->cpu);
	while (tail < NR_OBJECTS) {
		uint64_t *o;

		while (atomic_load_explicit(&r->head, memory_order_acquire) == tail)
			sched_yield();
		o = r->slot[tail % RING];
		if (o[0] != tail || o[31] != ~(uint64_t)tail)
			atomic_fetch_add(&r->bad, 1);
		uks_kmem_cache_free(r->s, o);
		atomic_store_explicit(&r->tail, ++tail, memory_order_release);
	}
	return NULL;
}

/* The first two CPUs this thread may run on; false if it has one. */
static bool two_cpus(int cpus[2])
{
	cpu_set_t allowed;
	int nr = 0;

	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int i = 0; i < CPU_SETSIZE && nr < 2; i++)
		if (CPU_ISSET(i, &allowed))
			cpus[nr++] = i;
	return nr == 2;
}

/*
 * 200000 hand-overs by yielding: beside two CPU hogs a yield gives the CPU
 * back a time slice later, past the default 30 s.  (Sleeping instead of
 * yielding changed the interleaving this test measures: 99138 of the
 * 100000 objects from the barn in one loaded run.)
 */
TEST_TIMEOUT(objects_freed_on_one_cpu_feed_the_allocations_of_another, 300)
{
	struct ring *r = calloc(1, sizeof(*r));
	int cpus[2];
	pthread_t th;
	unsigned long got;

	ASSERT_NONNULL(r);
	r->s = uks_kmem_cache_create("t_barn_flow", 256, 0, UKS_SLAB_SHEAVES, NULL);
	ASSERT_NONNULL(r->s);
	if (!r->s->sheaf_capacity)
		SKIP(goto out, "no sheaves without the rseq fast path (%s here)",
		     uks_slab_fastpath());
	if (!two_cpus(cpus))
		SKIP(goto out, "needs two CPUs");
	r->cpu = cpus[1];
	ASSERT_TRUE(pin_to_cpu(cpus[0]));
	ASSERT_EQ(0, pthread_create(&th, NULL, consumer, r));
	for (size_t head = 0; head < NR_OBJECTS; head++) {
		uint64_t *o = uks_kmem_cache_alloc(r->s);

		ASSERT_NONNULL(o);
		o[0] = head;
		o[31] = ~(uint64_t)head;
		while (head - atomic_load_explicit(&r->tail, memory_order_acquire) == RING)
			sched_yield();
		r->slot[head % RING] = o;
		atomic_store_explicit(&r->head, head + 1, memory_order_release);
	}
	pthread_join(th, NULL);
	EXPECT_EQ(0, atomic_load(&r->bad));
	if (!r->pinned)
		SKIP(goto out, "the consumer could not be pinned to CPU %d", r->cpu);
	/*
	 * Most allocations were objects the other CPU freed, handed over a
	 * sheaf at a time; without the barn none would be.
	 */
	got = atomic_load(&r->s->barn.nr_get) * r->s->sheaf_capacity;
	EXPECT_GE(got, NR_OBJECTS / 2);
	EXPECT_EQ(0, uks_kmem_cache_shrink(r->s));
	EXPECT_EQ(0u, attr_ulong(r->s, "slabs"));
	EXPECT_EQ(0, uks_kmem_cache_validate(r->s));
out:
	EXPECT_EQ(0, uks_kmem_cache_destroy(r->s));
	free(r);
}

/*
 * Objects smaller than a cache line that another CPU frees go to its
 * outbox, not its sheaf, so that CPU's next allocations come from a slab
 * of its own and two threads never write neighbours from two CPUs
 * (passive false sharing).  A full outbox goes to the barn, where the
 * objects' home CPU takes it.  Objects of whole lines ride the sheaves.
 */
TEST(small_objects_freed_on_another_cpu_go_home_through_the_barn)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_home", 24, 0, UKS_SLAB_SHEAVES, NULL);
	struct uks_kmem_cache *whole = uks_kmem_cache_create("t_home_64", 64, 0,
							     UKS_SLAB_SHEAVES, NULL);
	void **theirs = NULL, **drained = NULL, *a, *b, *back;
	unsigned int nr_drained = 0;
	struct kmem_cache_cpu *c;
	uintptr_t entry, home;
	unsigned int before, cap;
	unsigned long got;
	cpu_set_t saved;
	int cpus[2];

	ASSERT_NONNULL(s);
	ASSERT_NONNULL(whole);
	if (!s->sheaf_capacity)
		SKIP(goto out, "no sheaves without the rseq fast path (%s here)",
		     uks_slab_fastpath());
	EXPECT_TRUE(s->sheaf_home_only);
	EXPECT_FALSE(whole->sheaf_home_only);
	if (!two_cpus(cpus))
		SKIP(goto out, "needs two CPUs");
	cap = s->sheaf_capacity;
	theirs = calloc(cap, sizeof(*theirs));
	drained = calloc(cap + 1, sizeof(*drained));
	ASSERT_NONNULL(theirs);
	ASSERT_NONNULL(drained);
	sched_getaffinity(0, sizeof(saved), &saved);

	ASSERT_TRUE(pin_to_cpu(cpus[0]));
	a = uks_kmem_cache_alloc(s);
	ASSERT_NONNULL(a);
	for (unsigned int i = 0; i < cap; i++)
		ASSERT_NONNULL(theirs[i] = uks_kmem_cache_alloc(s));
	entry = __uks_virt_to_cache_entry(a);
	home = entry & UKS_SLAB_HOME_CPU_MASK;
	EXPECT_EQ((uintptr_t)s, entry & ~UKS_SLAB_HOME_MASK);
	EXPECT_TRUE(entry & UKS_SLAB_HOME_TAGGED);
	EXPECT_EQ(this_cpu_index(s) & UKS_SLAB_HOME_CPU_MASK, home);

	ASSERT_TRUE(pin_to_cpu(cpus[1]));
	c = cpu_slab(s, this_cpu_index(s));
	before = (unsigned int)c->sheaf->size;
	uks_kmem_cache_free(s, a);		/* another CPU's: to the outbox */
	EXPECT_EQ(before, c->sheaf->size);
	EXPECT_EQ(1u, c->outbox->size);
	EXPECT_EQ(a, c->outbox->objects[0]);
	b = uks_kmem_cache_alloc(s);		/* so this CPU takes a slab of its own */
	ASSERT_NONNULL(b);
	EXPECT_NE(a, b);
	EXPECT_NE(home, __uks_virt_to_cache_entry(b) & UKS_SLAB_HOME_CPU_MASK);
	uks_kfree(b);				/* its own: onto the sheaf */
	EXPECT_EQ(before + 1, c->sheaf->size);

	/* cap more fill the outbox, which is traded in the barn, full. */
	for (unsigned int i = 0; i < cap; i++)
		uks_kmem_cache_free(s, theirs[i]);
	EXPECT_EQ(1u, barn_full(s));
	EXPECT_EQ(1u, c->outbox->size);
	/* Their home takes them back a sheaf at a time. */
	ASSERT_TRUE(pin_to_cpu(cpus[0]));
	got = atomic_load(&s->barn.nr_get);
	c = cpu_slab(s, this_cpu_index(s));
	while (c->sheaf->size && nr_drained < cap)	/* its own sheaf first */
		ASSERT_NONNULL(drained[nr_drained++] = uks_kmem_cache_alloc(s));
	EXPECT_EQ(0u, c->sheaf->size);
	back = uks_kmem_cache_alloc(s);
	EXPECT_TRUE(in(theirs, cap, back));
	EXPECT_EQ(got + 1, atomic_load(&s->barn.nr_get));
	drained[nr_drained++] = back;
	sched_setaffinity(0, sizeof(saved), &saved);

	for (unsigned int i = 0; i < nr_drained; i++)
		uks_kmem_cache_free(s, drained[i]);
	EXPECT_EQ(0, uks_kmem_cache_shrink(s));
	EXPECT_EQ(0u, attr_ulong(s, "slabs"));
	EXPECT_EQ(0, uks_kmem_cache_validate(s));
out:
	free(drained);
	free(theirs);
	EXPECT_EQ(0, uks_kmem_cache_destroy(whole));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_HARNESS_MAIN
