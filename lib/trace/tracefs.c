// SPDX-License-Identifier: MIT
/*
 * An instance's tracefs tree on kfs (lib/core/kfs.h): the kfs root uksfs
 * attaches, the directories whose children come and go (events/,
 * events/SYS/, options/, per_cpu/, instances/), and the library's file
 * API, <uks/trace.h>, as thin calls into kfs.
 *
 * The tree's lock is event_mutex: systems and events change under it, so
 * each walk and each show sees one state.  Every lookup is by name in a
 * table or a hash index, so a path costs its depth whatever the number of
 * events.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "trace/tracefs.h"

/* ---------------------------------------------------------- the root */

/* Events registered since the last walk get their calls and files here. */
static void tree_lock(void *obj)
{
	pthread_mutex_lock(&__uks_trace_event_mutex);
	(void)__uks_trace_sync_files(obj);	/* retried by events/'s lookup */
}

static void tree_unlock(void *obj)
{
	pthread_mutex_unlock(&__uks_trace_event_mutex);
}

/*
 * An open file pins its instance (its memory, and rmdir says -EBUSY while
 * the file is in use: the kernel's trace_array_get()) and, under
 * events/SYS/EVENT/, the event's file, which a removed dynamic event
 * leaves behind answering -ENODEV.  Called under event_mutex at the end of
 * the walk: an instance rmdir unlinked is no longer found, one found
 * cannot be unlinked before this.
 */
static int tree_get(const struct kfs_ref *ref)
{
	struct uks_trace *tr = ref->obj;

	__uks_trace_get(tr);
	__atomic_add_fetch(&tr->opens, 1, __ATOMIC_RELAXED);
	if (__uks_tracefs_is_event_file(ref->node))
		__uks_trace_file_get(ref->sub);
	return 0;
}

/* A flushed file no longer holds rmdir off (kfs.h, ->in_use). */
static void tree_in_use(const struct kfs_ref *ref, bool on)
{
	struct uks_trace *tr = ref->obj;

	if (on)
		__atomic_add_fetch(&tr->opens, 1, __ATOMIC_RELAXED);
	else
		__atomic_sub_fetch(&tr->opens, 1, __ATOMIC_RELEASE);
}

static void tree_put(const struct kfs_ref *ref)
{
	if (__uks_tracefs_is_event_file(ref->node))
		__uks_trace_file_put(ref->sub);
	__uks_trace_put(ref->obj);
}

/**
 * __uks_tracefs_root - @tr's tracefs tree as a kfs root
 * @tr:		the instance; it must outlive the root and its open files
 * @root:	filled: the top directory (an instance's own, without the
 *		top-level files, when @tr has a name), @tr, event_mutex as the
 *		tree's lock, and the pins of open files
 *
 * For uksfs (uks_vfs_add_tracefs()) and the library's own file API.
 */
void __uks_tracefs_root(struct uks_trace *tr, struct kfs_root *root)
{
	*root = (struct kfs_root){
		.node = tr->name ? &__uks_tracefs_instance : &__uks_tracefs_top,
		.obj = tr,
		.lock = tree_lock,
		.unlock = tree_unlock,
		.get = tree_get,
		.in_use = tree_in_use,
		.put = tree_put,
	};
}

/**
 * __uks_tracefs_command - one write(2) to a command file
 * @of:		the open file
 * @buf, @len:	the bytes written
 * @fn:		the file's handler: a NUL-terminated copy of the bytes
 *
 * The kernel takes at most a page per command write (-EINVAL past it).
 * Returns @len, or what @fn or the copy failed with.
 */
ssize_t __uks_tracefs_command(struct kfs_open_file *of, const char *buf, size_t len,
			      int (*fn)(struct kfs_open_file *of, char *text, size_t len))
{
	char *text;
	int ret;

	if (len >= UKS_TRACEFS_WRITE_MAX)
		return -EINVAL;
	text = uks_kmalloc(len + 1);
	if (!text)
		return -ENOMEM;
	memcpy(text, buf, len);
	text[len] = '\0';
	ret = fn(of, text, len);
	uks_kfree(text);
	return ret < 0 ? ret : (ssize_t)len;
}

/* ------------------------------------------------- directories on demand */

/* The kernel gives the ftrace system no enable or filter file. */
static const struct kfs_node *sys_dir_node(const struct uks_event_system *sys)
{
	return strcmp(sys->name, "ftrace") ? &__uks_tracefs_sys_dir : &__uks_tracefs_ftrace_sys_dir;
}

/* events/: a directory per system (after "enable"). */
static int events_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct uks_event_system *sys;

	if (__uks_trace_sync_files(dir->obj))
		return -ENOMEM;
	sys = __uks_trace_find_system(name);
	if (!sys)
		return -ENOENT;
	child->node = sys_dir_node(sys);
	child->sub = sys;
	return 0;
}

static int events_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct uks_event_system *sys;
	int ret = 0;

	list_for_each_entry(sys, &__uks_trace_systems, list) {
		struct kfs_ref child = { sys_dir_node(sys), dir->obj, sys, 0 };

		ret = fill(sys->name, &child, arg);
		if (ret)
			break;
	}
	return ret;
}

/* The kernel's ftrace events have no enable or filter file; print has triggers. */
static const struct kfs_node *event_dir_node(const struct uks_event_call *call)
{
	if (!(call->flags & UKS_CALL_IGNORE_ENABLE))
		return &__uks_tracefs_event_dir;
	return call == __uks_trace_ftrace_print_call ? &__uks_tracefs_ftrace_print_dir
						     : &__uks_tracefs_ftrace_event_dir;
}

/* events/SYS/: a directory per event; ->sub becomes the event's file here. */
static int sys_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct uks_event_system *sys = dir->sub;
	struct uks_event_call *call = __uks_trace_find_call(sys->name, name);
	struct uks_event_file *file = call ? __uks_trace_file_of_call(dir->obj, call) : NULL;

	if (!file)
		return -ENOENT;
	child->node = event_dir_node(call);
	child->sub = file;
	return 0;
}

static int sys_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct uks_event_system *sys = dir->sub;
	struct uks_event_call *call;
	int ret = 0;

	list_for_each_entry(call, &sys->calls, sys_list) {
		struct kfs_ref child = { event_dir_node(call), dir->obj, NULL, 0 };

		ret = fill(call->name, &child, arg);
		if (ret)
			break;
	}
	return ret;
}

/* options/: a file per option, ->idx its index. */
static int options_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	int opt = __uks_trace_option_index(dir->obj, name);

	if (opt < 0 || !__uks_tracefs_has_option(dir->obj, name))
		return -ENOENT;
	child->node = &__uks_tracefs_option_file;
	child->idx = opt;
	return 0;
}

static int options_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	const char *name;
	int ret = 0, opt;

	for (size_t i = 0; !ret && (name = __uks_trace_option_at(dir->obj, i, &opt)); i++) {
		struct kfs_ref child = { &__uks_tracefs_option_file, dir->obj, NULL, opt };

		if (__uks_tracefs_has_option(dir->obj, name))
			ret = fill(name, &child, arg);
	}
	return ret;
}

/* per_cpu/: cpuN for each CPU of the ring buffer, ->idx = N. */
static int per_cpu_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct uks_trace *tr = dir->obj;
	char *end;
	long cpu;

	if (strncmp(name, "cpu", 3) || !name[3])
		return -ENOENT;
	cpu = strtol(name + 3, &end, 10);
	if (*end || cpu < 0 || cpu >= (long)__uks_trace_rb_nr_cpus(tr->rb))
		return -ENOENT;
	child->node = &__uks_tracefs_cpu_dir;
	child->idx = cpu;
	return 0;
}

static int per_cpu_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct uks_trace *tr = dir->obj;
	int ret = 0;

	for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(tr->rb) && !ret; cpu++) {
		struct kfs_ref child = { &__uks_tracefs_cpu_dir, dir->obj, NULL, cpu };
		char name[16];

		snprintf(name, sizeof(name), "cpu%u", cpu);
		ret = fill(name, &child, arg);
	}
	return ret;
}

/*
 * instances/: the instances made by mkdir here.  Each is a directory whose
 * node is __uks_tracefs_instance (the top table without the top-level
 * files) and whose ->obj is its struct uks_trace, so every file below it
 * serves that instance.
 */
static int instances_lookup(const struct kfs_ref *dir, const char *name, struct kfs_ref *child)
{
	struct uks_trace *tr = __uks_trace_instance_find(dir->obj, name);

	if (!tr)
		return -ENOENT;
	child->node = &__uks_tracefs_instance;
	child->obj = tr;
	return 0;
}

static int instances_iterate(const struct kfs_ref *dir, kfs_filldir_t fill, void *arg)
{
	struct uks_trace *top = dir->obj, *tr;
	int ret = 0;

	list_for_each_entry(tr, &top->instances, instance_list) {
		struct kfs_ref child = { &__uks_tracefs_instance, tr, NULL, 0 };

		ret = fill(tr->name, &child, arg);
		if (ret)
			break;
	}
	return ret;
}

static int instances_mkdir(const struct kfs_ref *dir, const char *name,
			   const struct uks_peer *peer)
{
	(void)peer;
	return __uks_trace_instance_mkdir(dir->obj, name);
}

static int instances_rmdir(const struct kfs_ref *dir, const char *name,
			   const struct uks_peer *peer)
{
	(void)peer;
	return __uks_trace_instance_rmdir(dir->obj, name);
}

const struct kfs_dir_ops __uks_tracefs_events_ops = {
	.lookup = events_lookup, .iterate = events_iterate,
};
const struct kfs_dir_ops __uks_tracefs_sys_ops = { .lookup = sys_lookup, .iterate = sys_iterate };
const struct kfs_dir_ops __uks_tracefs_options_ops = {
	.lookup = options_lookup, .iterate = options_iterate,
};
const struct kfs_dir_ops __uks_tracefs_per_cpu_ops = {
	.lookup = per_cpu_lookup, .iterate = per_cpu_iterate,
};
const struct kfs_dir_ops __uks_tracefs_instances_ops = {
	.lookup = instances_lookup, .iterate = instances_iterate,
	.mkdir = instances_mkdir, .rmdir = instances_rmdir,
};

/* ------------------------------------------------- the library's file API */

struct uks_tracefs_file {
	struct kfs_root root;		/* of->root points here */
	struct kfs_open_file *of;
};

/*
 * The library API has always answered -ENOENT for a name no file can
 * have; kfs says -ENAMETOOLONG, as the kernel's walk does.
 */
static int api_err(int err)
{
	return err == -ENAMETOOLONG ? -ENOENT : err;
}

/**
 * uks_tracefs_stat - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_stat(struct uks_trace *tr, const char *path, unsigned int *mode)
{
	struct kfs_root root;
	struct kfs_stat st;
	int ret;

	__uks_tracefs_root(tr, &root);
	ret = api_err(__uks_kfs_stat(&root, path, &st));
	if (ret)
		return ret == -ENOTDIR ? -ENOENT : ret;
	if (mode)
		*mode = st.mode & 07777;
	return S_ISDIR(st.mode) ? UKS_TRACEFS_DIR : UKS_TRACEFS_REG;
}

struct list_arg {
	int (*fn)(const char *name, enum uks_tracefs_type type, void *arg);
	void *arg;
};

static int list_one(const char *name, const struct kfs_stat *st, void *arg)
{
	struct list_arg *la = arg;

	return la->fn(name, S_ISDIR(st->mode) ? UKS_TRACEFS_DIR : UKS_TRACEFS_REG, la->arg);
}

/**
 * uks_tracefs_list - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_list(struct uks_trace *tr, const char *path,
				int (*fn)(const char *name, enum uks_tracefs_type type, void *arg),
				void *arg)
{
	struct list_arg la = { fn, arg };
	struct kfs_root root;

	__uks_tracefs_root(tr, &root);
	return api_err(__uks_kfs_list(&root, path, list_one, &la));
}

/**
 * uks_tracefs_open - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_open(struct uks_trace *tr, const char *path, int flags,
				struct uks_tracefs_file **out)
{
	struct uks_tracefs_file *f = uks_kzalloc(sizeof(*f));
	int ret;

	if (!f)
		return -ENOMEM;
	__uks_tracefs_root(tr, &f->root);
	ret = __uks_kfs_open(&f->root, path, flags, NULL, &f->of);
	if (ret) {
		uks_kfree(f);
		return api_err(ret);
	}
	*out = f;
	return 0;
}

/**
 * uks_tracefs_read - see <uks/trace.h>; reads go on from the last one
 */
UKS_EXPORT ssize_t uks_tracefs_read(struct uks_tracefs_file *f, void *buf, size_t len)
{
	return __uks_kfs_read(f->of, buf, len, -1);
}

/**
 * uks_tracefs_write - see <uks/trace.h>
 */
UKS_EXPORT ssize_t uks_tracefs_write(struct uks_tracefs_file *f, const void *buf, size_t len)
{
	return uks_tracefs_write_as(f, buf, len, NULL);
}

/**
 * uks_tracefs_write_as - see <uks/trace.h>
 */
UKS_EXPORT ssize_t uks_tracefs_write_as(struct uks_tracefs_file *f, const void *buf, size_t len,
					const struct uks_trace_task *task)
{
	return __uks_kfs_write(f->of, buf, len, -1, NULL, task);
}

/**
 * uks_tracefs_set_nonblock - see <uks/trace.h>
 */
UKS_EXPORT void uks_tracefs_set_nonblock(struct uks_tracefs_file *f, bool nonblock)
{
	__uks_kfs_set_nonblock(f->of, nonblock);
}

/**
 * uks_tracefs_poll - see <uks/trace.h>
 */
UKS_EXPORT int uks_tracefs_poll(struct uks_tracefs_file *f)
{
	return __uks_kfs_poll(f->of);
}

/**
 * uks_tracefs_interrupt - see <uks/trace.h>
 */
UKS_EXPORT void uks_tracefs_interrupt(struct uks_tracefs_file *f)
{
	__uks_kfs_interrupt(f->of);
}

/**
 * uks_tracefs_close - see <uks/trace.h>; NULL is ignored
 */
UKS_EXPORT void uks_tracefs_close(struct uks_tracefs_file *f)
{
	if (!f)
		return;
	__uks_kfs_close(f->of);
	uks_kfree(f);
}

/**
 * uks_tracefs_read_all - see <uks/trace.h>
 */
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

/**
 * uks_tracefs_write_str - see <uks/trace.h>
 */
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
