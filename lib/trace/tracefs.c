// SPDX-License-Identifier: MIT
/*
 * The tracefs file tree of an instance: path lookup, directory listing and
 * the open/read/write/close entry points that uksfs maps onto FUSE.
 *
 * Most files are "show" files: the content is generated into a buffer on
 * the first read after open and then served by offset, as seq_file does,
 * so a reader sees one consistent state.  trace generates its lines lazily
 * from a ring-buffer snapshot; trace_pipe consumes events as it is read.
 * A write is one command, parsed on its own (files.c has the handlers).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "trace/tracefs.h"

static int split(const char *path, char parts[][UKS_TRACEFS_NAME_MAX], int max)
{
	int n = 0;

	while (*path) {
		size_t len;

		while (*path == '/')
			path++;
		if (!*path)
			break;
		len = strcspn(path, "/");
		if (n == max || len >= UKS_TRACEFS_NAME_MAX)
			return -ENOENT;
		memcpy(parts[n], path, len);
		parts[n][len] = '\0';
		n++;
		path += len;
	}
	return n;
}

static const struct tracefs_node *find_in(const struct tracefs_node *table, const char *name)
{
	for (; table->name; table++)
		if (!strcmp(table->name, name))
			return table;
	return NULL;
}

static int parse_cpu(const char *name, struct uks_trace *tr)
{
	char *end;
	long cpu;

	if (strncmp(name, "cpu", 3) || !name[3])
		return -1;
	cpu = strtol(name + 3, &end, 10);
	if (*end || cpu < 0 || cpu >= (long)uks_rb_nr_cpus(tr->rb))
		return -1;
	return (int)cpu;
}

/*
 * Resolve @path to a node and its parameters.  Caller holds event_mutex
 * (event directories depend on the call list).  Each component is found
 * by name in its directory (a table or a hash index), so the cost is the
 * path's depth whatever the number of events.
 */
int uks_tracefs_resolve(struct uks_trace *tr, const char *path, struct tracefs_loc *loc)
{
	char parts[4][UKS_TRACEFS_NAME_MAX];
	int n = split(path, parts, 4);
	const struct tracefs_node *node;

	memset(loc, 0, sizeof(*loc));
	if (n < 0)
		return n;
	if (uks_trace_sync_files(tr))
		return -ENOMEM;
	if (n == 0) {
		loc->node = &uks_tracefs_root_dir;
		return 0;
	}
	node = find_in(uks_tracefs_root, parts[0]);
	if (!node)
		return -ENOENT;
	if (n == 1) {
		loc->node = node;
		return 0;
	}
	switch (node->kind) {
	case TFS_DIR_EVENTS:
		if (n == 2 && (node = find_in(uks_tracefs_events_files, parts[1]))) {
			loc->node = node;
			return 0;
		}
		if (!uks_find_system(parts[1]))
			return -ENOENT;
		strcpy(loc->sys, parts[1]);
		if (n == 2) {
			loc->node = &uks_tracefs_sys_dir;
			return 0;
		}
		if (n == 3 && (node = find_in(uks_tracefs_sys_files, parts[2]))) {
			loc->node = node;
			return 0;
		}
		loc->file = uks_find_file(tr, parts[1], parts[2]);
		if (!loc->file)
			return -ENOENT;
		strcpy(loc->event, parts[2]);
		if (n == 3) {
			loc->node = &uks_tracefs_event_dir;
			return 0;
		}
		node = find_in(uks_tracefs_event_files, parts[3]);
		if (!node)
			return -ENOENT;
		loc->node = node;
		return 0;
	case TFS_DIR_OPTIONS:
		if (n != 2 || uks_trace_option_index(parts[1]) < 0)
			return -ENOENT;
		loc->node = &uks_tracefs_option_file;
		loc->opt = uks_trace_option_index(parts[1]);
		return 0;
	case TFS_DIR_PER_CPU:
		loc->cpu = parse_cpu(parts[1], tr);
		if (loc->cpu < 0)
			return -ENOENT;
		if (n == 2) {
			loc->node = &uks_tracefs_cpu_dir;
			return 0;
		}
		if (n != 3 || !(node = find_in(uks_tracefs_cpu_files, parts[2])))
			return -ENOENT;
		loc->node = node;
		return 0;
	default:
		return -ENOTDIR;
	}
}

/**
 * uks_tracefs_stat - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_stat(struct uks_trace *tr, const char *path, unsigned int *mode)
{
	struct tracefs_loc loc;
	int ret;

	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_tracefs_resolve(tr, path, &loc);
	pthread_mutex_unlock(&uks_event_mutex);
	if (ret)
		return ret == -ENOTDIR ? -ENOENT : ret;
	if (mode)
		*mode = loc.node->mode;
	return loc.node->kind >= TFS_FIRST_FILE ? UKS_TRACEFS_REG : UKS_TRACEFS_DIR;
}

static int list_table(const struct tracefs_node *t, int (*fn)(const char *, enum uks_tracefs_type, void *),
		      void *arg)
{
	int ret = 0;

	for (; t->name && !ret; t++)
		ret = fn(t->name, t->kind >= TFS_FIRST_FILE ? UKS_TRACEFS_REG : UKS_TRACEFS_DIR, arg);
	return ret;
}

/*
 * Names are collected under the lock, then reported without it.  Every
 * directory's names are unique already (tables, the system and call
 * indexes), so they are appended as they come.
 */
struct name_list {
	char (*names)[UKS_TRACEFS_NAME_MAX];
	size_t nr, cap;
};

static int name_add(struct name_list *l, const char *name)
{
	if (l->nr == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		void *bigger = uks_krealloc(l->names, cap * sizeof(*l->names));

		if (!bigger)
			return -ENOMEM;
		l->names = bigger;
		l->cap = cap;
	}
	snprintf(l->names[l->nr++], UKS_TRACEFS_NAME_MAX, "%s", name);
	return 0;
}

/**
 * uks_tracefs_list - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_list(struct uks_trace *tr, const char *path,
				int (*fn)(const char *name, enum uks_tracefs_type type, void *arg),
				void *arg)
{
	struct name_list names = { 0 };
	enum uks_tracefs_type type = UKS_TRACEFS_DIR;
	const struct tracefs_node *files = NULL;
	struct uks_event_system *sys;
	struct uks_event_call *call;
	struct tracefs_loc loc;
	int ret;

	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_tracefs_resolve(tr, path, &loc);
	if (ret)
		goto unlock;
	switch (loc.node->kind) {
	case TFS_DIR_ROOT:
		files = uks_tracefs_root;
		break;
	case TFS_DIR_EVENTS:
		files = uks_tracefs_events_files;
		list_for_each_entry(sys, &uks_systems, list)
			if (!ret)
				ret = name_add(&names, sys->name);
		break;
	case TFS_DIR_SYS:
		files = uks_tracefs_sys_files;
		sys = uks_find_system(loc.sys);
		list_for_each_entry(call, &sys->calls, sys_list)
			if (!ret)
				ret = name_add(&names, call->name);
		break;
	case TFS_DIR_EVENT:
		files = uks_tracefs_event_files;
		break;
	case TFS_DIR_OPTIONS:
		type = UKS_TRACEFS_REG;
		for (size_t i = 0; uks_trace_option_name(i) && !ret; i++)
			ret = name_add(&names, uks_trace_option_name(i));
		break;
	case TFS_DIR_PER_CPU:
		for (unsigned int cpu = 0; cpu < uks_rb_nr_cpus(tr->rb) && !ret; cpu++) {
			char name[16];

			snprintf(name, sizeof(name), "cpu%u", cpu);
			ret = name_add(&names, name);
		}
		break;
	case TFS_DIR_CPU:
		files = uks_tracefs_cpu_files;
		break;
	case TFS_DIR_INSTANCES:
		break;
	default:
		ret = -ENOTDIR;
	}
unlock:
	pthread_mutex_unlock(&uks_event_mutex);
	if (!ret && files)
		ret = list_table(files, fn, arg);
	for (size_t i = 0; !ret && i < names.nr; i++)
		ret = fn(names.names[i], type, arg);
	uks_kfree(names.names);
	return ret;
}

/**
 * uks_tracefs_open - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_open(struct uks_trace *tr, const char *path, int flags,
				struct uks_tracefs_file **out)
{
	struct uks_tracefs_file *f;
	int acc = flags & O_ACCMODE, ret;

	f = uks_kzalloc(sizeof(*f));
	if (!f)
		return -ENOMEM;
	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_tracefs_resolve(tr, path, &f->loc);
	if (!ret && f->loc.node->kind < TFS_FIRST_FILE)
		ret = -EISDIR;
	if (!ret && acc != O_RDONLY && !(f->loc.node->mode & 0200))
		ret = -EACCES;
	if (!ret && acc != O_WRONLY && !(f->loc.node->mode & 0444))
		ret = -EACCES;
	pthread_mutex_unlock(&uks_event_mutex);
	if (ret) {
		uks_kfree(f);
		return ret;
	}
	f->tr = tr;
	f->flags = flags;
	if (f->loc.node->open) {
		ret = f->loc.node->open(f);
		if (ret) {
			uks_kfree(f);
			return ret;
		}
	}
	__atomic_add_fetch(&tr->opens, 1, __ATOMIC_RELAXED);
	*out = f;
	return 0;
}

UKS_EXPORT ssize_t uks_tracefs_read(struct uks_tracefs_file *f, void *buf, size_t len)
{
	size_t avail;

	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return -EBADF;
	if (f->loc.node->read)
		return f->loc.node->read(f, buf, len);
	if (!f->shown) {
		if (f->loc.node->show) {
			pthread_mutex_lock(&uks_event_mutex);
			f->loc.node->show(f, &f->content);
			pthread_mutex_unlock(&uks_event_mutex);
		}
		f->shown = true;
		if (f->content.overflow)
			return -ENOMEM;
	}
	avail = f->content.len > f->pos ? f->content.len - f->pos : 0;
	if (len > avail)
		len = avail;
	if (!len)
		return 0;	/* content.buf may be NULL when nothing was shown */
	memcpy(buf, f->content.buf + f->pos, len);
	f->pos += len;
	return (ssize_t)len;
}

UKS_EXPORT ssize_t uks_tracefs_write(struct uks_tracefs_file *f, const void *buf, size_t len)
{
	return uks_tracefs_write_as(f, buf, len, NULL);
}

UKS_EXPORT ssize_t uks_tracefs_write_as(struct uks_tracefs_file *f, const void *buf, size_t len,
					const struct uks_trace_task *task)
{
	char *text;
	ssize_t ret;

	if ((f->flags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	if (!f->loc.node->write)
		return -EINVAL;
	/* The kernel takes at most a page per command write. */
	if (len >= UKS_TRACEFS_WRITE_MAX && !(f->loc.node->flags & TFS_RAW_WRITE))
		return -EINVAL;
	text = uks_kmalloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf, len);
	text[len] = '\0';
	f->writer = task;
	ret = f->loc.node->write(f, text, len);
	f->writer = NULL;
	uks_kfree(text);
	return ret < 0 ? ret : (ssize_t)len;
}

UKS_EXPORT void uks_tracefs_set_nonblock(struct uks_tracefs_file *f, bool nonblock)
{
	if (nonblock)
		f->flags |= O_NONBLOCK;
	else
		f->flags &= ~O_NONBLOCK;
}

UKS_EXPORT int uks_tracefs_poll(struct uks_tracefs_file *f)
{
	if (f->loc.node->poll)
		return f->loc.node->poll(f);
	return 1;
}

UKS_EXPORT void uks_tracefs_interrupt(struct uks_tracefs_file *f)
{
	__atomic_store_n(&f->interrupted, 1, __ATOMIC_RELEASE);
	uks_rb_wake_all(f->tr->rb);
}

UKS_EXPORT void uks_tracefs_close(struct uks_tracefs_file *f)
{
	if (!f)
		return;
	if (f->loc.node->release)
		f->loc.node->release(f);
	__atomic_sub_fetch(&f->tr->opens, 1, __ATOMIC_RELAXED);
	uks_seq_free(&f->content);
	uks_kfree(f);
}

UKS_EXPORT ssize_t uks_tracefs_read_all(struct uks_trace *tr, const char *path, char *buf,
					size_t len)
{
	struct uks_tracefs_file *f;
	size_t total = 0;
	ssize_t n = 0;
	int ret;

	if (!len)
		return -EINVAL;
	ret = uks_tracefs_open(tr, path, O_RDONLY | O_NONBLOCK, &f);
	if (ret)
		return ret;
	while (total + 1 < len && (n = uks_tracefs_read(f, buf + total, len - 1 - total)) > 0)
		total += n;
	uks_tracefs_close(f);
	buf[total] = '\0';
	if (n < 0 && n != -EAGAIN)
		return n;
	return (ssize_t)total;
}

UKS_EXPORT int uks_tracefs_write_str(struct uks_trace *tr, const char *path, const char *str,
				     int how)
{
	struct uks_tracefs_file *f;
	int flags = O_WRONLY, ret;
	ssize_t n;

	if (how & UKS_TRACEFS_APPEND)
		flags |= O_APPEND;
	if (how & UKS_TRACEFS_TRUNC)
		flags |= O_TRUNC;
	ret = uks_tracefs_open(tr, path, flags, &f);
	if (ret)
		return ret;
	n = *str ? uks_tracefs_write(f, str, strlen(str)) : 0;
	uks_tracefs_close(f);
	return n < 0 ? (int)n : 0;
}
