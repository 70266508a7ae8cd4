// SPDX-License-Identifier: MIT
/*
 * The caches' entry modes and the kmem:* events (slub.c): while any kmem
 * event has a probe, every cache, old or made meanwhile, takes its full
 * entry, which fires the events; the last probe gone, the lockless entry
 * is back.  White-box: the test reads s->entry and attaches probes
 * straight to the tracepoints, without a tracer.
 */
#include <stdlib.h>

#include "harness.h"
#include "slab/fastpath.h"
#include "slab/kmem_events.h"
#include "slab/slub.h"
#include <uks/slab.h>

struct hits {
	int n;
};

/* Counts the hit and records nothing. */
static void *count_hit(void *data, struct uks_tp_iter *hit, size_t len)
{
	((struct hits *)data)->n++;
	return NULL;
}

static void no_commit(void *data, struct uks_tp_iter *hit, void *rec, size_t len)
{
}

TEST(kmem_events_switch_every_cache_to_its_full_entry_and_back)
{
	struct uks_kmem_cache *old = uks_kmem_cache_create("t_entry_old", 48, 0, 0, NULL);
	struct uks_kmem_cache *made, *dbg;
	struct hits allocs = { 0 }, kfrees = { 0 };
	struct uks_tp_probe on_alloc = { count_hit, no_commit, &allocs };
	struct uks_tp_probe on_kfree = { count_hit, no_commit, &kfrees };
	void *p;

	ASSERT_NONNULL(old);
	dbg = uks_kmem_cache_create("t_entry_dbg", 48, 0, UKS_SLAB_RED_ZONE, NULL);
	ASSERT_NONNULL(dbg);
	ASSERT_EQ(ENTRY_FULL, dbg->fast_entry);
	if (!UKS_HAVE_RSEQ_ASM || old->fast_entry == ENTRY_FULL) {
		uks_kmem_cache_destroy(dbg);
		uks_kmem_cache_destroy(old);
		SKIP(return, "no lockless entry here (no rseq)");
	}
	ASSERT_EQ(old->fast_entry, cache_entry(old));

	ASSERT_EQ(0, uks_tracepoint_attach(&__uks_tp_kmem_kmem_cache_alloc, &on_alloc));
	ASSERT_EQ(ENTRY_FULL, cache_entry(old));
	made = uks_kmem_cache_create("t_entry_new", 48, 0, 0, NULL);
	ASSERT_NONNULL(made);
	ASSERT_EQ(old->fast_entry, made->fast_entry);
	ASSERT_EQ(ENTRY_FULL, cache_entry(made));	/* made while an event is on */
	p = uks_kmem_cache_alloc(old);
	uks_kmem_cache_free(old, p);
	p = uks_kmem_cache_alloc(made);
	uks_kmem_cache_free(made, p);
	ASSERT_EQ(2, allocs.n);

	/* Another kmem event keeps them full when the first goes. */
	ASSERT_EQ(0, uks_tracepoint_attach(&__uks_tp_kmem_kfree, &on_kfree));
	ASSERT_EQ(0, uks_tracepoint_detach(&__uks_tp_kmem_kmem_cache_alloc, &on_alloc));
	ASSERT_EQ(ENTRY_FULL, cache_entry(old));
	uks_kfree(uks_kmalloc(40));
	ASSERT_EQ(1, kfrees.n);
	ASSERT_EQ(0, uks_tracepoint_detach(&__uks_tp_kmem_kfree, &on_kfree));

	ASSERT_EQ(old->fast_entry, cache_entry(old));
	ASSERT_EQ(made->fast_entry, cache_entry(made));
	ASSERT_EQ(ENTRY_FULL, cache_entry(dbg));	/* debug caches stay full */
	p = uks_kmem_cache_alloc(old);
	uks_kmem_cache_free(old, p);
	uks_kfree(uks_kmalloc(40));
	ASSERT_EQ(2, allocs.n);
	ASSERT_EQ(1, kfrees.n);
	EXPECT_EQ(0, uks_kmem_cache_destroy(made));
	EXPECT_EQ(0, uks_kmem_cache_destroy(dbg));
	EXPECT_EQ(0, uks_kmem_cache_destroy(old));
}

TEST_HARNESS_MAIN
