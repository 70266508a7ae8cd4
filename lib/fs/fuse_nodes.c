// SPDX-License-Identifier: MIT
/* The FUSE front end's inode table (fuse_nodes.h). */
#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "fs/fuse_nodes.h"

#define NODE_BUCKETS	1024	/* to start with */

static size_t hash_path(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

int __uks_fs_nodes_init(struct fs_nodes *t)
{
	memset(t, 0, sizeof(*t));
	t->buckets = uks_kcalloc(NODE_BUCKETS, sizeof(*t->buckets));
	if (!t->buckets)
		return -ENOMEM;
	t->nr_buckets = NODE_BUCKETS;
	pthread_mutex_init(&t->lock, NULL);
	return 0;
}

void __uks_fs_nodes_free(struct fs_nodes *t)
{
	if (!t->buckets)
		return;
	for (size_t i = 0; i < t->nr; i++)
		uks_kfree(t->by_ino[i]);
	uks_kfree(t->by_ino);
	uks_kfree(t->buckets);
	t->buckets = NULL;
	pthread_mutex_destroy(&t->lock);
}

static void rehash(struct fs_nodes *t, size_t nr_buckets)
{
	struct fs_node **fresh = uks_kcalloc(nr_buckets, sizeof(*fresh));

	if (!fresh)
		return;		/* longer chains, still correct */
	for (size_t i = 0; i < t->nr; i++) {
		struct fs_node *n = t->by_ino[i];
		size_t b = hash_path(n->path) & (nr_buckets - 1);

		n->hash_next = fresh[b];
		fresh[b] = n;
	}
	uks_kfree(t->buckets);
	t->buckets = fresh;
	t->nr_buckets = nr_buckets;
}

struct fs_node *__uks_fs_node_get(struct fs_nodes *t, const char *path)
{
	size_t h = hash_path(path), len = strlen(path);
	struct fs_node *n;

	pthread_mutex_lock(&t->lock);
	for (n = t->buckets[h & (t->nr_buckets - 1)]; n; n = n->hash_next)
		if (!strcmp(n->path, path))
			goto out;
	if (t->nr == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		void *p = uks_krealloc(t->by_ino, cap * sizeof(*t->by_ino));

		if (!p)
			goto out;
		t->by_ino = p;
		t->cap = cap;
	}
	n = uks_kzalloc(sizeof(*n) + len + 1);
	if (!n)
		goto out;
	memcpy(n->path, path, len + 1);
	n->ino = t->nr + 1;
	t->by_ino[t->nr++] = n;
	if (t->nr > 2 * t->nr_buckets) {
		rehash(t, 2 * t->nr_buckets);	/* places @n too */
	} else {
		n->hash_next = t->buckets[h & (t->nr_buckets - 1)];
		t->buckets[h & (t->nr_buckets - 1)] = n;
	}
out:
	pthread_mutex_unlock(&t->lock);
	return n;
}

struct fs_node *__uks_fs_node_by_ino(struct fs_nodes *t, uint64_t ino)
{
	struct fs_node *n = NULL;

	pthread_mutex_lock(&t->lock);
	if (ino >= 1 && ino <= t->nr)
		n = t->by_ino[ino - 1];
	pthread_mutex_unlock(&t->lock);
	return n;
}
