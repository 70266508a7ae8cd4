/* SPDX-License-Identifier: MIT */
/*
 * The FUSE front end's inode table: one node per path the kernel looked
 * up, numbered from 1 in order of creation and kept until unmount, so the
 * same path always has the same inode number and a lookup by number needs
 * no reference counting.  Paths are hashed; the table doubles as nodes
 * come, so a lookup stays O(1) with tens of thousands of event files.
 */
#ifndef UKS_LIB_FS_FUSE_NODES_H
#define UKS_LIB_FS_FUSE_NODES_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct fs_node {
	uint64_t ino;
	uint64_t nlookup;
	struct fs_node *hash_next;
	char path[];
};

struct fs_nodes {
	pthread_mutex_t lock;		/* a leaf */
	struct fs_node **buckets;
	size_t nr_buckets;		/* a power of two */
	struct fs_node **by_ino;	/* index = ino - 1 */
	size_t nr, cap;
};

/* 0 or -ENOMEM. */
int __uks_fs_nodes_init(struct fs_nodes *t);
void __uks_fs_nodes_free(struct fs_nodes *t);
/* The node of @path, created on first use; NULL on allocation failure. */
struct fs_node *__uks_fs_node_get(struct fs_nodes *t, const char *path);
/* The node numbered @ino, or NULL. */
struct fs_node *__uks_fs_node_by_ino(struct fs_nodes *t, uint64_t ino);

#endif
