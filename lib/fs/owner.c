// SPDX-License-Identifier: MIT
/*
 * Owners of the tracing tree's files (owner.h): a small hash of the paths
 * chown(2) gave an owner of their own, keyed by the tree and the path
 * inside it, so sys/kernel/tracing and sys/kernel/debug/tracing, one
 * tracefs, share them.  Kept for the life of the mount, dropped with the
 * directory or event they belonged to.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uks/fs.h>
#include <uks/slab.h>

#include "fs/owner.h"

#define NO_UID	((uid_t)-1)
#define NO_GID	((gid_t)-1)

struct fs_owner {
	struct fs_owner *next;
	const void *tree;
	uid_t uid;			/* NO_UID: not its own */
	gid_t gid;			/* NO_GID: not its own */
	size_t rel;			/* where the tree's path starts in @path */
	char path[];			/* the VFS path chown(2) was given */
};

static unsigned int hash(const void *tree, const char *rel, size_t len)
{
	unsigned int h = 2166136261u ^ (unsigned int)(uintptr_t)tree;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)rel[i]) * 16777619u;
	return h & (FS_OWNERS_BUCKETS - 1);
}

static struct fs_owner **find(struct fs_owners *o, const void *tree, const char *rel, size_t len)
{
	struct fs_owner **pp = &o->buckets[hash(tree, rel, len)];

	for (; *pp; pp = &(*pp)->next) {
		const char *r = (*pp)->path + (*pp)->rel;

		if ((*pp)->tree == tree && !strncmp(r, rel, len) && !r[len])
			break;
	}
	return pp;
}

/* The directory holding the events directory @rel is strictly below, or -1. */
static ssize_t events_holder(const char *rel)
{
	const char *p = rel;

	if (!strncmp(p, "instances/", 10)) {
		p = strchr(p + 10, '/');
		if (!p)
			return -1;
		p++;
	}
	if (strncmp(p, "events/", 7) || !p[7])
		return -1;
	return p == rel ? 0 : p - 1 - rel;
}

/* @rel's (first @len bytes) owner, as owner.h says; the lock is held. */
static void owner_of(struct fs_owners *o, const void *tree, const char *rel, size_t len,
		     uid_t *uid, gid_t *gid)
{
	struct fs_owner *e = *find(o, tree, rel, len);
	uid_t u = e ? e->uid : NO_UID;
	gid_t g = e ? e->gid : NO_GID;
	char buf[VFS_PATH_MAX];
	ssize_t holder;

	if (u != NO_UID && g != NO_GID)
		goto out;
	if (!len) {
		u = u == NO_UID ? o->uid : u;
		g = g == NO_GID ? o->gid : g;
		goto out;
	}
	snprintf(buf, sizeof(buf), "%.*s", (int)len, rel);
	holder = events_holder(buf);
	if (holder >= 0) {
		uid_t hu;
		gid_t hg;

		owner_of(o, tree, rel, (size_t)holder, &hu, &hg);
		u = u == NO_UID ? hu : u;
		g = g == NO_GID ? hg : g;
		goto out;
	}
	if (!strncmp(buf, "instances/", 10)) {
		e = *find(o, tree, "instances", 9);
		if (e && u == NO_UID)
			u = e->uid;
		if (e && g == NO_GID)
			g = e->gid;
	}
	if (u == NO_UID || g == NO_GID) {
		uid_t tu;
		gid_t tg;

		owner_of(o, tree, "", 0, &tu, &tg);
		u = u == NO_UID ? tu : u;
		g = g == NO_GID ? tg : g;
	}
out:
	*uid = u;
	*gid = g;
}

void __uks_fs_owners_init(struct fs_owners *o, uid_t uid, gid_t gid, gid_t tracing_gid)
{
	memset(o, 0, sizeof(*o));
	pthread_mutex_init(&o->lock, NULL);
	o->uid = uid;
	o->gid = tracing_gid;
	o->other_gid = gid;
}

void __uks_fs_owners_free(struct fs_owners *o)
{
	for (unsigned int i = 0; i < FS_OWNERS_BUCKETS; i++) {
		while (o->buckets[i]) {
			struct fs_owner *e = o->buckets[i];

			o->buckets[i] = e->next;
			uks_kfree(e);
		}
	}
	pthread_mutex_destroy(&o->lock);
}

void __uks_fs_owner_of(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
		       uid_t *uid, gid_t *gid)
{
	const void *tree;
	const char *rel;

	*uid = o->uid;
	if (!__uks_vfs_tracefs_path(vfs, path, &tree, &rel)) {
		*gid = o->other_gid;
		return;
	}
	pthread_mutex_lock(&o->lock);
	if (!o->nr)
		*gid = o->gid;
	else
		owner_of(o, tree, rel, strlen(rel), uid, gid);
	pthread_mutex_unlock(&o->lock);
}

int __uks_fs_owner_set(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
		       uid_t uid, gid_t gid)
{
	struct fs_owner **pp, *e;
	const void *tree;
	const char *rel;
	size_t len;
	int ret = 0;

	if (!__uks_vfs_tracefs_path(vfs, path, &tree, &rel))
		return -EPERM;
	len = strlen(rel);
	pthread_mutex_lock(&o->lock);
	pp = find(o, tree, rel, len);
	e = *pp;
	if (!e) {
		if (o->nr >= FS_OWNERS_MAX) {
			ret = -ENOMEM;
			goto out;
		}
		e = uks_kzalloc(sizeof(*e) + strlen(path) + 1);
		if (!e) {
			ret = -ENOMEM;
			goto out;
		}
		strcpy(e->path, path);
		e->rel = strlen(path) - len;	/* @rel may be a "" of its own */
		e->tree = tree;
		e->uid = NO_UID;
		e->gid = NO_GID;
		*pp = e;
		o->nr++;
	}
	if (uid != NO_UID)
		e->uid = uid;
	if (gid != NO_GID)
		e->gid = gid;
out:
	pthread_mutex_unlock(&o->lock);
	return ret;
}

bool __uks_fs_owner_inherited(struct uks_vfs *vfs, const char *path)
{
	const void *tree;
	const char *rel;

	if (!__uks_vfs_tracefs_path(vfs, path, &tree, &rel))
		return false;
	if (!*rel || !strcmp(rel, "instances"))
		return true;
	return !strncmp(rel, "instances/", 10) && rel[10] && !strchr(rel + 10, '/');
}

/* Does task @pid have CAP_CHOWN in its effective set? */
static bool has_cap_chown(pid_t pid)
{
	char path[64], line[256];
	unsigned long long caps;
	bool ret = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "CapEff: %llx", &caps) == 1) {
			ret = caps & 1;		/* CAP_CHOWN is bit 0 */
			break;
		}
	}
	fclose(f);
	return ret;
}

static bool in_groups(const struct fs_chown_caller *c, gid_t gid)
{
	if (gid == c->gid)
		return true;
	for (unsigned int i = 0; i < c->nr_groups; i++) {
		if (c->groups[i] == gid)
			return true;
	}
	return false;
}

int __uks_fs_owner_chown(struct fs_owners *o, struct uks_vfs *vfs, const char *path,
			 const struct fs_chown_caller *c, uid_t uid, gid_t gid)
{
	uid_t cur_uid;
	gid_t cur_gid;
	bool ok;

	__uks_fs_owner_of(o, vfs, path, &cur_uid, &cur_gid);
	ok = c->uid == cur_uid && (uid == NO_UID || uid == cur_uid) &&
	     (gid == NO_GID || gid == cur_gid || in_groups(c, gid));
	if (!ok && c->uid && !has_cap_chown(c->pid))
		return -EPERM;
	return __uks_fs_owner_set(o, vfs, path, uid, gid);
}

/* Drop the entries @drop picks; the lock is held. */
static void drop_if(struct fs_owners *o, bool (*drop)(const struct fs_owner *e, void *arg),
		    void *arg)
{
	for (unsigned int i = 0; i < FS_OWNERS_BUCKETS; i++) {
		for (struct fs_owner **pp = &o->buckets[i], *e; (e = *pp);) {
			if (drop(e, arg)) {
				*pp = e->next;
				uks_kfree(e);
				o->nr--;
			} else {
				pp = &e->next;
			}
		}
	}
}

struct below {
	const void *tree;
	const char *rel;
	size_t len;
};

static bool is_below(const struct fs_owner *e, void *arg)
{
	const struct below *b = arg;
	const char *r = e->path + e->rel;

	return e->tree == b->tree && !strncmp(r, b->rel, b->len) &&
	       (!r[b->len] || r[b->len] == '/');
}

void __uks_fs_owner_forget(struct fs_owners *o, struct uks_vfs *vfs, const char *path)
{
	struct below b;

	if (!__uks_vfs_tracefs_path(vfs, path, &b.tree, &b.rel))
		return;
	b.len = strlen(b.rel);
	pthread_mutex_lock(&o->lock);
	if (o->nr)
		drop_if(o, is_below, &b);
	pthread_mutex_unlock(&o->lock);
}

static bool is_gone(const struct fs_owner *e, void *arg)
{
	struct uks_vfs_stat st;

	return uks_vfs_stat(arg, e->path, &st) == -ENOENT;
}

bool __uks_fs_owner_prune(struct fs_owners *o, struct uks_vfs *vfs)
{
	size_t nr;

	pthread_mutex_lock(&o->lock);
	nr = o->nr;
	if (nr)
		drop_if(o, is_gone, vfs);
	nr -= o->nr;
	pthread_mutex_unlock(&o->lock);
	return nr;
}

bool __uks_fs_owner_written(struct fs_owners *o, struct uks_vfs *vfs, const char *path)
{
	size_t len = strlen(path);

	return len >= 7 && !strcmp(path + len - 7, "_events") && __uks_fs_owner_prune(o, vfs);
}
