// SPDX-License-Identifier: MIT
/*
 * The text of /sys/kernel/slab/<cache>/<attr> in 5.15 (slab_attrs[] with
 * CONFIG_SLUB_DEBUG, CONFIG_SLUB_STATS and CONFIG_NUMA), for uksfs to
 * serve and for tools to read directly.  Formats, writable files and
 * their errnos follow the kernel's show/store functions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "slab/debug.h"
#include "slab/slub.h"

struct attr_buf {
	char *buf;
	size_t size, len;
	bool overflow;
};

static void emit(struct attr_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void emit(struct attr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->overflow)
		return;
	va_start(ap, fmt);
	n = vsnprintf(b->buf + b->len, b->size - b->len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= b->size - b->len)
		b->overflow = true;
	else
		b->len += (size_t)n;
}

static const char *const stat_names[NR_SLUB_STAT_ITEMS] = {
	"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
	"free_add_partial", "free_remove_partial", "alloc_from_partial", "alloc_slab",
	"alloc_refill", "alloc_node_mismatch", "free_slab", "cpuslab_flush", "deactivate_full",
	"deactivate_empty", "deactivate_to_head", "deactivate_to_tail",
	"deactivate_remote_frees", "deactivate_bypass", "order_fallback",
	"cmpxchg_double_cpu_fail", "cmpxchg_double_fail", "cpu_partial_alloc",
	"cpu_partial_free", "cpu_partial_node", "cpu_partial_drain",
};

static unsigned long stat_read(const struct kmem_cache_cpu *c, enum stat_item si)
{
	if (si == ALLOC_FASTPATH)
		return c->nr_alloc_fast;
	if (si == FREE_FASTPATH)
		return c->nr_free_fast;
	return c->stat[si];
}

static void stat_clear(struct kmem_cache_cpu *c, enum stat_item si)
{
	if (si == ALLOC_FASTPATH)
		c->nr_alloc_fast = 0;
	else if (si == FREE_FASTPATH)
		c->nr_free_fast = 0;
	else
		c->stat[si] = 0;
}

static void show_stat(struct uks_kmem_cache *s, struct attr_buf *b, enum stat_item si)
{
	unsigned long sum = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
		sum += stat_read(cpu_slab(s, cpu), si);
	emit(b, "%lu", sum);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		unsigned long x = stat_read(cpu_slab(s, cpu), si);

		if (x)
			emit(b, " C%u=%lu", cpu, x);
	}
	emit(b, "\n");
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
static void show_slab_objects(struct uks_kmem_cache *s, struct attr_buf *b, int flags)
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
	emit(b, "%lu", total);
	if (total)
		emit(b, " N0=%lu", total);
	emit(b, "\n");
}

static void show_cpu_partial_slabs(struct uks_kmem_cache *s, struct attr_buf *b)
{
	int objects = 0, slabs = 0;

	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct uks_page *page = READ_ONCE(cpu_slab(s, cpu)->partial);

		if (page) {
			slabs += page->slabs;
			objects += page->pobjects;
		}
	}
	emit(b, "%d(%d)", objects, slabs);
	for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct uks_page *page = READ_ONCE(cpu_slab(s, cpu)->partial);

		if (page)
			emit(b, " C%u=%d(%d)", cpu, page->pobjects, page->slabs);
	}
	emit(b, "\n");
}

static const char *const attr_names[] = {
	"slab_size", "object_size", "objs_per_slab", "order", "min_partial", "cpu_partial",
	"objects", "objects_partial", "partial", "cpu_slabs", "ctor", "aliases", "align",
	"hwcache_align", "reclaim_account", "destroy_by_rcu", "shrink", "slabs_cpu_partial",
	"total_objects", "slabs", "sanity_checks", "trace", "red_zone", "poison", "store_user",
	"validate", "cache_dma", "usersize", "remote_node_defrag_ratio", "failslab",
	"alloc_fastpath", "alloc_slowpath", "free_fastpath", "free_slowpath", "free_frozen",
	"free_add_partial", "free_remove_partial", "alloc_from_partial", "alloc_slab",
	"alloc_refill", "alloc_node_mismatch", "free_slab", "cpuslab_flush", "deactivate_full",
	"deactivate_empty", "deactivate_to_head", "deactivate_to_tail",
	"deactivate_remote_frees", "deactivate_bypass", "order_fallback",
	"cmpxchg_double_cpu_fail", "cmpxchg_double_fail", "cpu_partial_alloc",
	"cpu_partial_free", "cpu_partial_node", "cpu_partial_drain", NULL,
};

static const char *const writable[] = {
	"min_partial", "cpu_partial", "shrink", "validate", "remote_node_defrag_ratio", NULL,
};

/** uks_kmem_cache_attr_names - Return: NULL-terminated list of attribute files */
UKS_EXPORT const char *const *uks_kmem_cache_attr_names(void)
{
	return attr_names;
}

static int stat_index(const char *attr)
{
	for (int i = 0; i < NR_SLUB_STAT_ITEMS; i++)
		if (!strcmp(stat_names[i], attr))
			return i;
	return -1;
}

/** uks_kmem_cache_attr_writable - Return: true if @attr accepts writes (mode 0600) */
UKS_EXPORT bool uks_kmem_cache_attr_writable(const char *attr)
{
	for (int i = 0; writable[i]; i++)
		if (!strcmp(writable[i], attr))
			return true;
	return stat_index(attr) >= 0;
}

static bool flag_attr(const struct uks_kmem_cache *s, const char *attr, int *value)
{
	static const struct { const char *name; unsigned long flag; } flags[] = {
		{ "hwcache_align", UKS_SLAB_HWCACHE_ALIGN },
		{ "reclaim_account", UKS_SLAB_RECLAIM_ACCOUNT },
		{ "sanity_checks", UKS_SLAB_CONSISTENCY_CHECKS },
		{ "trace", UKS_SLAB_TRACE },
		{ "red_zone", UKS_SLAB_RED_ZONE },
		{ "poison", UKS_SLAB_POISON },
		{ "store_user", UKS_SLAB_STORE_USER },
		{ "failslab", UKS_SLAB_FAILSLAB },
		{ "destroy_by_rcu", 0 },
		{ "cache_dma", 0 },
	};

	for (size_t i = 0; i < ARRAY_SIZE(flags); i++) {
		if (!strcmp(flags[i].name, attr)) {
			*value = !!(s->flags & flags[i].flag);
			return true;
		}
	}
	return false;
}

/**
 * uks_kmem_cache_attr_show - read /sys/kernel/slab/<cache>/<attr>
 * @s: cache
 * @attr: attribute file name (see uks_kmem_cache_attr_names())
 * @buf: output
 * @size: its size
 *
 * Return: bytes written (the text ends in a newline; write-only files and
 * a cache without ctor read empty), -ENOENT, or -ENOSPC.
 */
UKS_EXPORT ssize_t uks_kmem_cache_attr_show(struct uks_kmem_cache *s, const char *attr, char *buf,
					    size_t size)
{
	struct attr_buf b = { buf, size, 0, false };
	int si = stat_index(attr), flag;
	char sym[256];

	if (!size)
		return -ENOSPC;
	buf[0] = 0;
	if (si >= 0)
		show_stat(s, &b, (enum stat_item)si);
	else if (flag_attr(s, attr, &flag))
		emit(&b, "%d\n", flag);
	else if (!strcmp(attr, "slab_size"))
		emit(&b, "%u\n", s->size);
	else if (!strcmp(attr, "object_size"))
		emit(&b, "%u\n", s->object_size);
	else if (!strcmp(attr, "objs_per_slab"))
		emit(&b, "%u\n", oo_objects(s->oo));
	else if (!strcmp(attr, "order"))
		emit(&b, "%u\n", oo_order(s->oo));
	else if (!strcmp(attr, "align"))
		emit(&b, "%u\n", s->align);
	else if (!strcmp(attr, "min_partial"))
		emit(&b, "%lu\n", s->min_partial);
	else if (!strcmp(attr, "cpu_partial"))
		emit(&b, "%u\n", s->cpu_partial);
	else if (!strcmp(attr, "aliases"))
		emit(&b, "%d\n", s->refcount < 1 ? 0 : s->refcount - 1);
	else if (!strcmp(attr, "usersize"))	/* kmalloc caches are whitelisted whole (5.15) */
		emit(&b, "%u\n", s->is_kmalloc ? s->object_size : 0);
	else if (!strcmp(attr, "remote_node_defrag_ratio"))
		emit(&b, "%u\n", s->remote_node_defrag_ratio / 10);
	else if (!strcmp(attr, "ctor")) {
		if (s->ctor) {
			__uks_format_symbol(sym, sizeof(sym), (unsigned long)(uintptr_t)s->ctor);
			emit(&b, "%s\n", sym);
		}
	} else if (!strcmp(attr, "objects"))
		show_slab_objects(s, &b, SO_ALL | SO_OBJECTS);
	else if (!strcmp(attr, "objects_partial"))
		show_slab_objects(s, &b, SO_PARTIAL | SO_OBJECTS);
	else if (!strcmp(attr, "partial"))
		show_slab_objects(s, &b, SO_PARTIAL);
	else if (!strcmp(attr, "cpu_slabs"))
		show_slab_objects(s, &b, SO_CPU);
	else if (!strcmp(attr, "total_objects"))
		show_slab_objects(s, &b, SO_ALL | SO_TOTAL);
	else if (!strcmp(attr, "slabs"))
		show_slab_objects(s, &b, SO_ALL);
	else if (!strcmp(attr, "slabs_cpu_partial"))
		show_cpu_partial_slabs(s, &b);
	else if (strcmp(attr, "shrink") && strcmp(attr, "validate"))
		return -ENOENT;
	if (b.overflow)
		return -ENOSPC;
	return (ssize_t)b.len;
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
	int si = stat_index(attr), err;
	unsigned long v;

	if (si >= 0) {
		if (!len || buf[0] != '0')
			return -EINVAL;
		for (unsigned int cpu = 0; cpu < s->nr_cpus; cpu++)
			stat_clear(cpu_slab(s, cpu), (enum stat_item)si);
		return 0;
	}
	if (!strcmp(attr, "shrink")) {
		if (!len || buf[0] != '1')
			return -EINVAL;
		uks_kmem_cache_shrink(s);
		return 0;
	}
	if (!strcmp(attr, "validate")) {
		if (!len || buf[0] != '1')
			return -EINVAL;
		__uks_validate_slab_cache(s);
		return 0;
	}
	if (!strcmp(attr, "min_partial")) {
		err = parse_ulong(buf, len, &v);
		if (err)
			return err;
		s->min_partial = v < 5 ? 5 : v > 10 ? 10 : v;
		return 0;
	}
	if (!strcmp(attr, "cpu_partial")) {
		err = parse_ulong(buf, len, &v);
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
	if (!strcmp(attr, "remote_node_defrag_ratio")) {
		err = parse_ulong(buf, len, &v);
		if (err)
			return err;
		if (v > 100)
			return -ERANGE;
		s->remote_node_defrag_ratio = (unsigned int)v * 10;
		return 0;
	}
	for (int i = 0; attr_names[i]; i++)
		if (!strcmp(attr_names[i], attr))
			return -EACCES;
	return -ENOENT;
}
