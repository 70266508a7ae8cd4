// SPDX-License-Identifier: MIT
/* The growing hash of name_index.h. */
#include <errno.h>
#include <stdint.h>

#include <uks/slab.h>

#include "trace/name_index.h"

#define INDEX_MIN_BUCKETS	16

/* FNV-1a: names are short and this spreads "e0".."e9999" well. */
size_t __uks_trace_hash_name(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*name) {
		h ^= (unsigned char)*name++;
		h *= 0x100000001b3ull;
	}
	return (size_t)(h ^ (h >> 32));
}

static void rehash(struct uks_index *idx, size_t nr_buckets)
{
	struct hlist_head *fresh = uks_kcalloc(nr_buckets, sizeof(*fresh));

	if (!fresh)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < idx->nr_buckets; i++) {
		struct uks_index_node *pos;
		struct hlist_node *tmp;

		hlist_for_each_entry_safe(pos, tmp, &idx->buckets[i], link)
			hlist_add_head(&pos->link, &fresh[pos->hash & (nr_buckets - 1)]);
	}
	uks_kfree(idx->buckets);
	idx->buckets = fresh;
	idx->nr_buckets = nr_buckets;
}

int __uks_trace_index_add(struct uks_index *idx, struct uks_index_node *node, size_t hash)
{
	if (!idx->nr_buckets) {
		rehash(idx, INDEX_MIN_BUCKETS);
		if (!idx->nr_buckets)
			return -ENOMEM;
	} else if (idx->nr >= idx->nr_buckets) {
		rehash(idx, 2 * idx->nr_buckets);
	}
	node->hash = hash;
	hlist_add_head(&node->link, uks_index_bucket(idx, hash));
	idx->nr++;
	return 0;
}

void __uks_trace_index_del(struct uks_index *idx, struct uks_index_node *node)
{
	hlist_del_init(&node->link);
	idx->nr--;
}

void __uks_trace_index_free(struct uks_index *idx)
{
	uks_kfree(idx->buckets);
	idx->buckets = NULL;
	idx->nr_buckets = idx->nr = 0;
}
