// SPDX-License-Identifier: MIT
/*
 * /sys/kernel/slab/<cache>/<attr> of 5.15 (slab_attrs[] with
 * CONFIG_SLUB_DEBUG, CONFIG_SLUB_STATS and CONFIG_NUMA): a kfs tree for
 * uksfs (core/kfs.h), and the same text and stores for tools that hold a
 * cache (uks_kmem_cache_attr_show()).  Formats, modes, writable files and
 * their errnos follow the kernel's show/store functions.
 *
 * Adding an attribute is one entry in slab_attrs[] (with its show and/or
 * store function): the tree, its listing order and the
 * uks_kmem_cache_attr_*() API all come from that table.
 *
 * The tree shows the caches of this process (the kernel shows every cache
 * of the machine; a uks process can only show its own), one directory per
 * cache named as kobject_set_name() names it ('/' becomes '!').  The tree's
 * lock is slab_mutex: the walk finds a cache by name under it, so a cache
 * destroyed before the open is -ENOENT, and a read or write of an open file
 * first checks under it that the cache is still there, so one destroyed
 * after the open is -ENODEV, as kernfs answers for a removed node.
 */
/*
 * slub.h has the kernel's stat() (a counter bump); kfs.h brings POSIX's
 * <sys/stat.h>, whose stat(2) is not used here: it is declared under
 * another name.
 */
#define stat posix_stat
#include <sys/stat.h>
#undef stat

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/kfs.h"
#include "slab/debug.h"
#include "slab/slub.h"
#include "slab/sysfs.h"

/*
 * struct slab_attribute - what an attribute file does
 * @ops:	the node's ops (attr_show, attr_write): they find the rest
 * @show:	write the text for @s (a file without it reads empty)
 * @store:	take one write; 0 or -errno (a file without it is read-only)
 *
 * @arg is the node's ->data: the stat item, the flag, what to count.
 */
struct slab_attribute {
	struct kfs_ops ops;
	void (*show)(struct uks_kmem_cache *s, struct uks_seq *m, long arg);
	int (*store)(struct uks_kmem_cache *s, const char *buf, size_t len, long arg);
};

static int attr_show(struct kfs_open_file *of, struct uks_seq *m);
static ssize_t attr_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			  const struct kfs_caller *caller);

/* SLUB's SLAB_ATTR_RO (0400) and SLAB_ATTR (0600): root-only files. */
#define __SLAB_ATTR(_name, _mode, _write, _show, _store, _arg) {			\
	.name = (_name),								\
	.mode = S_IFREG | (_mode),							\
	.ops = &(const struct slab_attribute){						\
		.ops = { .show = attr_show, .write = (_write) },			\
		.show = (_show),							\
		.store = (_store),							\
	}.ops,										\
	.data = (_arg),									\
}
#define SLAB_ATTR_RO(name, show, arg)	__SLAB_ATTR(name, 0400, NULL, show, NULL, arg)
#define SLAB_ATTR(name, show, store, arg) __SLAB_ATTR(name, 0600, attr_write, show, store, arg)
#define STAT_ATTR(name, si)		SLAB_ATTR(name, show_stat, clear_stat, si)

static const struct slab_attribute *attr_of(const struct kfs_node *node)
{
	return (const struct slab_attribute *)((const char *)node->ops -
						offsetof(struct slab_attribute, ops));
}

/* ------------------------------------------------------------ show and store */

static unsigned long stat_read(const struct kmem_cache_cpu *c, enum stat_item si)
{
	if (si == ALLOC_FASTPATH)
		return c->nr_alloc_fast;
	if (si == FREE_FASTPATH)
		return c->nr_free_fast;
	return c->stat[si];
}

static void show_stat(struct uks_kmem_cache *s, struct uks_seq *m, long si)
{
	unsigned long sum = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		sum += stat_read(cpu_slab(s, cpu), (enum stat_item)si);
	seq_printf(m, "%lu", sum);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		unsigned long x = stat_read(cpu_slab(s, cpu), (enum stat_item)si);

		if (x)
			seq_printf(m, " C%u=%lu", cpu, x);
	}
	seq_putc(m, '\n');
}

/* Only "0" clears a stat file (CONFIG_SLUB_STATS). */
static int clear_stat(struct uks_kmem_cache *s, const char *buf, size_t len, long si)
{
	if (!len || buf[0] != '0')
		return -EINVAL;
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct kmem_cache_cpu *c = cpu_slab(s, cpu);

		if (si == ALLOC_FASTPATH)
			c->nr_alloc_fast = 0;
		else if (si == FREE_FASTPATH)
			c->nr_free_fast = 0;
		else
			c->stat[si] = 0;
	}
	return 0;
}

enum { SO_ALL = 1, SO_PARTIAL = 2, SO_CPU = 4, SO_OBJECTS = 8, SO_TOTAL = 16 };

static unsigned long count_partial(struct kmem_cache_node *n, int what)
{
	unsigned long x = 0;
	struct uks_page *page;

	pthread_mutex_lock(&n->list_lock);
	list_for_each_entry(page, &n->partial, slab_list)
		x += what == SO_TOTAL ? page->objects :
		     what == SO_OBJECTS ? page->inuse : (unsigned long)(page->objects - page->inuse);
	pthread_mutex_unlock(&n->list_lock);
	return x;
}

/* show_slab_objects(): "<total> N0=<n>" (the node part only when non-zero). */
static void show_slab_objects(struct uks_kmem_cache *s, struct uks_seq *m, long flags)
{
	struct kmem_cache_node *n = get_node(s, 0);
	unsigned long total = 0;

	if (flags & SO_CPU) {
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
			struct kmem_cache_cpu *c = cpu_slab(s, cpu);
			struct uks_page *page = READ_ONCE(c->page);

			if (!page)
				continue;
			total += (flags & SO_TOTAL) ? page->objects :
				 (flags & SO_OBJECTS) ? page->inuse : 1;
			page = READ_ONCE(c->partial);
			if (page && !(flags & (SO_TOTAL | SO_OBJECTS)))
				total += (unsigned long)page->slabs;
		}
	}
	if (flags & SO_ALL) {
		if (flags & SO_TOTAL)
			total += (unsigned long)atomic_load(&n->total_objects);
		else if (flags & SO_OBJECTS)
			total += (unsigned long)atomic_load(&n->total_objects) - count_partial(n, 0);
		else
			total += (unsigned long)atomic_load(&n->nr_slabs);
	} else if (flags & SO_PARTIAL) {
		if (flags & SO_TOTAL)
			total += count_partial(n, SO_TOTAL);
		else if (flags & SO_OBJECTS)
			total += count_partial(n, SO_OBJECTS);
		else
			total += READ_ONCE(n->nr_partial);
	}
	seq_printf(m, "%lu", total);
	if (total)
		seq_printf(m, " N0=%lu", total);
	seq_putc(m, '\n');
}

static void show_cpu_partial_slabs(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	int objects = 0, slabs = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct uks_page *page = READ_ONCE(cpu_slab(s, cpu)->partial);

		if (page) {
			slabs += page->slabs;
			objects += page->pobjects;
		}
	}
	seq_printf(m, "%d(%d)", objects, slabs);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct uks_page *page = READ_ONCE(cpu_slab(s, cpu)->partial);

		if (page)
			seq_printf(m, " C%u=%d(%d)", cpu, page->pobjects, page->slabs);
	}
	seq_putc(m, '\n');
}

/* A flag attribute: 1 or 0 (@flag 0: a flag uks never sets). */
static void show_flag(struct uks_kmem_cache *s, struct uks_seq *m, long flag)
{
	seq_printf(m, "%d\n", !!(s->flags & (unsigned long)flag));
}

static void show_slab_size(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->size);
}

static void show_object_size(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->object_size);
}

static void show_objs_per_slab(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", oo_objects(s->oo));
}

static void show_order(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", oo_order(s->oo));
}

static void show_align(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->align);
}

static void show_aliases(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%d\n", s->refcount < 1 ? 0 : s->refcount - 1);
}

/* kmalloc caches are whitelisted whole (5.15). */
static void show_usersize(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->is_kmalloc ? s->object_size : 0);
}

/*
 * Empty without a constructor.  Through the tree this runs under
 * slab_mutex, and dladdr() takes the loader's lock: the order is
 * slab_mutex -> loader lock, so a library constructor must not create a
 * cache while a process serves this tree.
 */
static void show_ctor(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	char sym[256];

	if (!s->ctor)
		return;
	__uks_format_symbol(sym, sizeof(sym), (unsigned long)(uintptr_t)s->ctor);
	seq_printf(m, "%s\n", sym);
}

/* kstrtoul(): decimal, optional '+', one optional trailing newline. */
static int parse_ulong(const char *buf, size_t len, unsigned long *out)
{
	unsigned long v = 0;
	size_t i = 0;

	if (len && buf[len - 1] == '\n')
		len--;
	if (i < len && buf[i] == '+')
		i++;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		unsigned int d = (unsigned int)(buf[i] - '0');

		if (d > 9)
			return -EINVAL;
		if (v > (~0UL - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static void show_min_partial(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%lu\n", s->min_partial);
}

/* Clamped to MIN_PARTIAL..MAX_PARTIAL (5..10). */
static int store_min_partial(struct uks_kmem_cache *s, const char *buf, size_t len, long arg)
{
	unsigned long v;
	int err = parse_ulong(buf, len, &v);

	if (err)
		return err;
	s->min_partial = v < 5 ? 5 : v > 10 ? 10 : v;
	return 0;
}

static void show_cpu_partial(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->cpu_partial);
}

/* kstrtouint(); only 0 on a debug cache, which has no CPU partial lists. */
static int store_cpu_partial(struct uks_kmem_cache *s, const char *buf, size_t len, long arg)
{
	unsigned long v;
	int err = parse_ulong(buf, len, &v);

	if (err)
		return err;
	if (v > UINT32_MAX)
		return -ERANGE;
	if (v && !kmem_cache_has_cpu_partial(s))
		return -EINVAL;
	__uks_set_cpu_partial(s, (unsigned int)v);
	__uks_flush_all(s);
	return 0;
}

static int store_shrink(struct uks_kmem_cache *s, const char *buf, size_t len, long arg)
{
	if (!len || buf[0] != '1')
		return -EINVAL;
	uks_kmem_cache_shrink(s);
	return 0;
}

static int store_validate(struct uks_kmem_cache *s, const char *buf, size_t len, long arg)
{
	if (!len || buf[0] != '1')
		return -EINVAL;
	__uks_validate_slab_cache(s);
	return 0;
}

/* Shown and taken in percent, kept in tenths of a percent. */
static void show_remote_node_defrag_ratio(struct uks_kmem_cache *s, struct uks_seq *m, long arg)
{
	seq_printf(m, "%u\n", s->remote_node_defrag_ratio / 10);
}

static int store_remote_node_defrag_ratio(struct uks_kmem_cache *s, const char *buf, size_t len,
					  long arg)
{
	unsigned long v;
	int err = parse_ulong(buf, len, &v);

	if (err)
		return err;
	if (v > 100)
		return -ERANGE;
	s->remote_node_defrag_ratio = (unsigned int)v * 10;
	return 0;
}

/* ------------------------------------------------------------ the table */

/* A cache's directory, in the order of 5.15's slab_attrs[]. */
static const struct kfs_node slab_attrs[] = {
	SLAB_ATTR_RO("slab_size", show_slab_size, 0),
	SLAB_ATTR_RO("object_size", show_object_size, 0),
	SLAB_ATTR_RO("objs_per_slab", show_objs_per_slab, 0),
	SLAB_ATTR_RO("order", show_order, 0),
	SLAB_ATTR("min_partial", show_min_partial, store_min_partial, 0),
	SLAB_ATTR("cpu_partial", show_cpu_partial, store_cpu_partial, 0),
	SLAB_ATTR_RO("objects", show_slab_objects, SO_ALL | SO_OBJECTS),
	SLAB_ATTR_RO("objects_partial", show_slab_objects, SO_PARTIAL | SO_OBJECTS),
	SLAB_ATTR_RO("partial", show_slab_objects, SO_PARTIAL),
	SLAB_ATTR_RO("cpu_slabs", show_slab_objects, SO_CPU),
	SLAB_ATTR_RO("ctor", show_ctor, 0),
	SLAB_ATTR_RO("aliases", show_aliases, 0),
	SLAB_ATTR_RO("align", show_align, 0),
	SLAB_ATTR_RO("hwcache_align", show_flag, UKS_SLAB_HWCACHE_ALIGN),
	SLAB_ATTR_RO("reclaim_account", show_flag, UKS_SLAB_RECLAIM_ACCOUNT),
	SLAB_ATTR_RO("destroy_by_rcu", show_flag, 0),
	SLAB_ATTR("shrink", NULL, store_shrink, 0),
	SLAB_ATTR_RO("slabs_cpu_partial", show_cpu_partial_slabs, 0),
	SLAB_ATTR_RO("total_objects", show_slab_objects, SO_ALL | SO_TOTAL),
	SLAB_ATTR_RO("slabs", show_slab_objects, SO_ALL),
	SLAB_ATTR_RO("sanity_checks", show_flag, UKS_SLAB_CONSISTENCY_CHECKS),
	SLAB_ATTR_RO("trace", show_flag, UKS_SLAB_TRACE),
	SLAB_ATTR_RO("red_zone", show_flag, UKS_SLAB_RED_ZONE),
	SLAB_ATTR_RO("poison", show_flag, UKS_SLAB_POISON),
	SLAB_ATTR_RO("store_user", show_flag, UKS_SLAB_STORE_USER),
	SLAB_ATTR("validate", NULL, store_validate, 0),
	SLAB_ATTR_RO("cache_dma", show_flag, 0),
	SLAB_ATTR_RO("usersize", show_usersize, 0),
	SLAB_ATTR("remote_node_defrag_ratio", show_remote_node_defrag_ratio,
		  store_remote_node_defrag_ratio, 0),
	SLAB_ATTR_RO("failslab", show_flag, UKS_SLAB_FAILSLAB),
	STAT_ATTR("alloc_fastpath", ALLOC_FASTPATH),
	STAT_ATTR("alloc_slowpath", ALLOC_SLOWPATH),
	STAT_ATTR("free_fastpath", FREE_FASTPATH),
	STAT_ATTR("free_slowpath", FREE_SLOWPATH),
	STAT_ATTR("free_frozen", FREE_FROZEN),
	STAT_ATTR("free_add_partial", FREE_ADD_PARTIAL),
	STAT_ATTR("free_remove_partial", FREE_REMOVE_PARTIAL),
	STAT_ATTR("alloc_from_partial", ALLOC_FROM_PARTIAL),
	STAT_ATTR("alloc_slab", ALLOC_SLAB),
	STAT_ATTR("alloc_refill", ALLOC_REFILL),
	STAT_ATTR("alloc_node_mismatch", ALLOC_NODE_MISMATCH),
	STAT_ATTR("free_slab", FREE_SLAB),
	STAT_ATTR("cpuslab_flush", CPUSLAB_FLUSH),
	STAT_ATTR("deactivate_full", DEACTIVATE_FULL),
	STAT_ATTR("deactivate_empty", DEACTIVATE_EMPTY),
	STAT_ATTR("deactivate_to_head", DEACTIVATE_TO_HEAD),
	STAT_ATTR("deactivate_to_tail", DEACTIVATE_TO_TAIL),
	STAT_ATTR("deactivate_remote_frees", DEACTIVATE_REMOTE_FREES),
	STAT_ATTR("deactivate_bypass", DEACTIVATE_BYPASS),
	STAT_ATTR("order_fallback", ORDER_FALLBACK),
	STAT_ATTR("cmpxchg_double_cpu_fail", CMPXCHG_DOUBLE_CPU_FAIL),
	STAT_ATTR("cmpxchg_double_fail", CMPXCHG_DOUBLE_FAIL),
	STAT_ATTR("cpu_partial_alloc", CPU_PARTIAL_ALLOC),
	STAT_ATTR("cpu_partial_free", CPU_PARTIAL_FREE),
	STAT_ATTR("cpu_partial_node", CPU_PARTIAL_NODE),
	STAT_ATTR("cpu_partial_drain", CPU_PARTIAL_DRAIN),
	{ .name = NULL },
};

/* ------------------------------------------------------------ the tree */

/* Is @s still a cache?  Under slab_mutex. */
static bool cache_listed(const struct uks_kmem_cache *s)
{
	const struct uks_kmem_cache *c;

	list_for_each_entry(c, &__uks_slab_caches, list)
		if (c == s)
			return true;
	return false;
}

/* Under the tree's lock (the read is kfs's, as of the first read of an open). */
static int attr_show(struct kfs_open_file *of, struct uks_seq *m)
{
	const struct slab_attribute *a = attr_of(of->ref.node);

	if (!cache_listed(of->ref.obj))
		return -ENODEV;
	if (a->show)
		a->show(of->ref.obj, m, of->ref.node->data);
	return 0;
}

/*
 * One value per write(2), wherever it lands, as the kernel's store
 * functions take it; under slab_mutex, as destroy runs, so the cache
 * stays until the store is done.
 */
static ssize_t attr_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			  const struct kfs_caller *caller)
{
	const struct slab_attribute *a = attr_of(of->ref.node);
	int ret;

	pthread_mutex_lock(&__uks_slab_mutex);
	ret = cache_listed(of->ref.obj) ? a->store(of->ref.obj, buf, len, of->ref.node->data)
					: -ENODEV;
	pthread_mutex_unlock(&__uks_slab_mutex);
	return ret ? ret : (ssize_t)len;
}

static const struct kfs_node cache_dir = KFS_DIR("", 0755, NULL, slab_attrs);

/* A cache's directory name: '/' becomes '!', as kobject_set_name() does. */
static void dir_name(char *dst, const char *name)
{
	strcpy(dst, name);
	for (char *p = strchr(dst, '/'); p; p = strchr(p + 1, '/'))
		*p = '!';
}

/* The first cache called @name (with '!' for '/'), as the listing shows it. */
static int caches_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct uks_kmem_cache *s;

	list_for_each_entry(s, &__uks_slab_caches, list) {
		char dname[sizeof(s->name)];

		dir_name(dname, s->name);
		if (!strcmp(dname, name)) {
			child->node = &cache_dir;
			child->obj = s;
			return 0;
		}
	}
	return -ENOENT;
}

/* In the order the caches were made. */
static int caches_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct uks_kmem_cache *s;

	list_for_each_entry(s, &__uks_slab_caches, list) {
		struct kfs_ref child = { .node = &cache_dir, .obj = s };
		char dname[sizeof(s->name)];
		int ret;

		dir_name(dname, s->name);
		ret = fill(dname, &child, arg);
		if (ret)
			return ret;
	}
	return 0;
}

static const struct kfs_dir_ops caches_ops = {
	.lookup = caches_lookup,
	.iterate = caches_iterate,
};

static const struct kfs_node slab_dir = KFS_DIR("", 0755, &caches_ops, NULL);

static void slab_tree_lock(void *obj)
{
	pthread_mutex_lock(&__uks_slab_mutex);
}

static void slab_tree_unlock(void *obj)
{
	pthread_mutex_unlock(&__uks_slab_mutex);
}

int __uks_slab_sysfs_root(struct kfs_root *root)
{
	__uks_slab_init();	/* the kmalloc caches are listed from the start */
	*root = (struct kfs_root){
		.node = &slab_dir,
		.lock = slab_tree_lock,
		.unlock = slab_tree_unlock,
		.kernfs = true,
	};
	return 0;
}

/* ------------------------------------------------------------ the library API */

static const struct kfs_node *find_attr(const char *attr)
{
	for (const struct kfs_node *n = slab_attrs; n->name; n++)
		if (!strcmp(n->name, attr))
			return n;
	return NULL;
}

static const char *attr_names[ARRAY_SIZE(slab_attrs)];	/* the last stays NULL */
static pthread_once_t attr_names_once = PTHREAD_ONCE_INIT;

static void attr_names_init(void)
{
	for (size_t i = 0; slab_attrs[i].name; i++)
		attr_names[i] = slab_attrs[i].name;
}

/** uks_kmem_cache_attr_names - Return: NULL-terminated list of attribute files */
UKS_EXPORT const char *const *uks_kmem_cache_attr_names(void)
{
	pthread_once(&attr_names_once, attr_names_init);
	return attr_names;
}

/** uks_kmem_cache_attr_writable - Return: true if @attr accepts writes (mode 0600) */
UKS_EXPORT bool uks_kmem_cache_attr_writable(const char *attr)
{
	const struct kfs_node *n = find_attr(attr);

	return n && attr_of(n)->store;
}

/**
 * uks_kmem_cache_attr_show - read /sys/kernel/slab/<cache>/<attr>
 * @s: cache
 * @attr: attribute file name (see uks_kmem_cache_attr_names())
 * @buf: output
 * @size: its size
 *
 * Return: bytes written (the text ends in a newline; write-only files and
 * a cache without ctor read empty), -ENOENT, -ENOSPC, or -ENOMEM.
 */
UKS_EXPORT ssize_t uks_kmem_cache_attr_show(struct uks_kmem_cache *s, const char *attr, char *buf,
					    size_t size)
{
	const struct kfs_node *n = find_attr(attr);
	struct uks_seq m = UKS_SEQ_INIT;
	ssize_t ret;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	if (!n)
		return -ENOENT;
	if (attr_of(n)->show)
		attr_of(n)->show(s, &m, n->data);
	if (m.overflow)
		ret = -ENOMEM;
	else if (m.len >= size)
		ret = -ENOSPC;
	else {
		memcpy(buf, m.buf ? m.buf : "", m.len + 1);
		ret = (ssize_t)m.len;
	}
	seq_free(&m);
	return ret;
}

/**
 * uks_kmem_cache_attr_store - write /sys/kernel/slab/<cache>/<attr>
 * @s: cache
 * @attr: a writable attribute
 * @buf: the text written
 * @len: its length
 *
 * "1" to shrink or validate, a number to min_partial (clamped to 5..10),
 * cpu_partial (-EINVAL on debug caches unless 0), remote_node_defrag_ratio
 * (0..100, else -ERANGE), "0" to a stat file to clear it.
 * Return: 0, -EINVAL/-ERANGE for bad input, -EACCES for a read-only file,
 * -ENOENT for an unknown one.
 */
UKS_EXPORT int uks_kmem_cache_attr_store(struct uks_kmem_cache *s, const char *attr,
					 const char *buf, size_t len)
{
	const struct kfs_node *n = find_attr(attr);

	if (!n)
		return -ENOENT;
	if (!attr_of(n)->store)
		return -EACCES;
	return attr_of(n)->store(s, buf, len, n->data);
}
