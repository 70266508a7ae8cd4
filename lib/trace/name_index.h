/* SPDX-License-Identifier: MIT */
/*
 * A growing hash of named nodes: the per-directory index that finds an
 * event's system, an event in its system or a call by its ID in constant
 * time, so a path lookup costs its depth and not the number of events.
 *
 * Nodes are embedded (struct uks_index_node) and keyed by a hash the
 * caller computes (__uks_trace_hash_name() for names); lookups walk one
 * bucket and compare keys themselves.  The table doubles when it holds
 * more nodes than buckets; if growing fails it keeps working, only slower.
 * No locking: callers hold the lock of what they index (event_mutex).
 */
#ifndef UKS_LIB_TRACE_NAME_INDEX_H
#define UKS_LIB_TRACE_NAME_INDEX_H

#include <stddef.h>

#include "core/list.h"

struct uks_index_node {
	struct hlist_node link;
	size_t hash;
};

struct uks_index {
	struct hlist_head *buckets;	/* NULL until the first node */
	size_t nr_buckets;		/* a power of two */
	size_t nr;
};

size_t __uks_trace_hash_name(const char *name);
/* Returns 0, or -ENOMEM when the first bucket array cannot be allocated. */
int __uks_trace_index_add(struct uks_index *idx, struct uks_index_node *node, size_t hash);
void __uks_trace_index_del(struct uks_index *idx, struct uks_index_node *node);
void __uks_trace_index_free(struct uks_index *idx);

/* The bucket @hash falls in (NULL for an empty index). */
static inline struct hlist_head *uks_index_bucket(const struct uks_index *idx, size_t hash)
{
	return idx->nr_buckets ? &idx->buckets[hash & (idx->nr_buckets - 1)] : NULL;
}

/* Each node of @idx that may match @hash_: @pos is the node, compare the key. */
#define uks_index_for_each_possible(pos, idx, hash_)					\
	for (struct hlist_head *__uks_ib = uks_index_bucket(idx, hash_); __uks_ib;	\
	     __uks_ib = NULL)								\
		hlist_for_each_entry(pos, __uks_ib, link)				\
			if (pos->hash == (hash_))

#endif
