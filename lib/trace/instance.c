// SPDX-License-Identifier: MIT
/*
 * Trace instances: creation, options (trace_options and options/), buffer
 * size, clock, tracing_on and set_event_pid.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uks/core.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "core/mem_avail.h"
#include "trace/instance.h"
#include "trace/trigger.h"
#include "trace/snapshot.h"
#include "trace/trace.h"

LIST_HEAD(__uks_trace_traces);

static bool good_instance_name(const char *name)
{
	if (!*name || strlen(name) > 255 || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	return true;
}

/* A new instance, not yet listed: no event files, nobody sees it. */
static int trace_alloc(const char *name, uint64_t opts, struct uks_trace **out)
{
	struct uks_trace *tr;

	__uks_trace_clock_init();
	tr = uks_kzalloc(sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	pthread_mutex_init(&tr->lock, NULL);
	INIT_LIST_HEAD(&tr->files);
	INIT_LIST_HEAD(&tr->instances);
	INIT_LIST_HEAD(&tr->instance_list);
	tr->opts = opts;
	tr->ref = 1;
	tr->max_instances = UKS_TRACE_MAX_INSTANCES;
	tr->buffer_kb = uks_kmalloc(uks_nr_cpu_ids() * sizeof(*tr->buffer_kb));
	for (unsigned int cpu = 0; tr->buffer_kb && cpu < uks_nr_cpu_ids(); cpu++)
		tr->buffer_kb[cpu] = UKS_TRACE_DEFAULT_BUF_KB;
	tr->rb = __uks_trace_rb_alloc(uks_nr_cpu_ids(), UKS_TRACE_DEFAULT_BUF_KB * 1024);
	if (name) {
		size_t n = strlen(name) + 1;

		tr->name = uks_kmalloc(n);
		if (tr->name)
			memcpy(tr->name, name, n);
	}
	if (!tr->rb || !tr->buffer_kb || (name && !tr->name)) {
		__uks_trace_rb_free(tr->rb);
		uks_kfree(tr->buffer_kb);
		uks_kfree(tr->name);
		pthread_mutex_destroy(&tr->lock);
		uks_kfree(tr);
		return -ENOMEM;
	}
	if (!(opts & (1ull << UKS_OPT_OVERWRITE)))
		__uks_trace_rb_set_overwrite(tr->rb, false);
	*out = tr;
	return 0;
}

static void trace_free(struct uks_trace *tr)
{
	__uks_trace_clear_error_log(tr);
	__uks_trace_snapshot_destroy(tr);
	__uks_trace_rb_free(tr->rb);
	uks_kfree(tr->buffer_kb);
	__uks_trace_free_event_pids(tr);
	uks_kfree(tr->name);
	pthread_mutex_destroy(&tr->lock);
	uks_kfree(tr);
}

void __uks_trace_get(struct uks_trace *tr)
{
	__atomic_add_fetch(&tr->ref, 1, __ATOMIC_RELAXED);
}

/* The last reference frees it; it was unlinked already (trace_unlink()). */
void __uks_trace_put(struct uks_trace *tr)
{
	if (!__atomic_sub_fetch(&tr->ref, 1, __ATOMIC_ACQ_REL))
		trace_free(tr);
}

/* Give @tr its event files and list it.  Caller holds event_mutex. */
static int trace_link(struct uks_trace *tr)
{
	if (__uks_trace_files_alloc(tr))
		return -ENOMEM;
	list_add_tail(&tr->list, &__uks_trace_traces);
	return 0;
}

/*
 * Take @tr out of sight: its event files go (disabled: on return no hit
 * writes to its buffer), it leaves the list.  Caller holds event_mutex.
 */
static void trace_unlink(struct uks_trace *tr)
{
	struct uks_event_file *file, *tmp;

	/* Triggers first: enable_event ones hold soft-mode references on others. */
	__uks_trace_triggers_clear(tr);
	/* Eprobe files next: they hold soft-mode references on others. */
	list_for_each_entry_safe(file, tmp, &tr->files, list)
		if (file->call->flags & UKS_CALL_EPROBE)
			__uks_trace_file_free(file);
	list_for_each_entry_safe(file, tmp, &tr->files, list)
		__uks_trace_file_free(file);
	list_del(&tr->list);
}

/**
 * uks_trace_create - see <uks/trace.h>
 */
UKS_EXPORT int uks_trace_create(const char *name, struct uks_trace **out)
{
	struct uks_trace *tr;
	int ret;

	if (name && !good_instance_name(name))
		return -EINVAL;
	ret = trace_alloc(name, UKS_TRACE_DEFAULT_OPTS, &tr);
	if (ret)
		return ret;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = trace_link(tr);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	if (ret) {
		trace_free(tr);
		return ret;
	}
	*out = tr;
	return 0;
}

/**
 * uks_trace_destroy - see <uks/trace.h>; the instances made in its
 * instances/ go with it
 */
UKS_EXPORT void uks_trace_destroy(struct uks_trace *tr)
{
	struct uks_trace *child, *tmp;
	LIST_HEAD(gone);

	if (!tr)
		return;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	list_for_each_entry_safe(child, tmp, &tr->instances, instance_list) {
		trace_unlink(child);
		list_move_tail(&child->instance_list, &gone);
	}
	tr->nr_instances = 0;
	trace_unlink(tr);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	list_for_each_entry_safe(child, tmp, &gone, instance_list)
		__uks_trace_put(child);
	__uks_trace_put(tr);
}

/* --------------------------------------------------------- instances/ */

/* @top's instance @name, or NULL.  Caller holds event_mutex. */
struct uks_trace *__uks_trace_instance_find(struct uks_trace *top, const char *name)
{
	struct uks_trace *tr;

	list_for_each_entry(tr, &top->instances, instance_list)
		if (!strcmp(tr->name, name))
			return tr;
	return NULL;
}

/*
 * What an instance costs before it is made: its ring buffer (every CPU at
 * the default size, the kernel's trace_buf_size) and an event file per
 * event.  The kernel's ring buffer asks si_mem_available() the same way.
 */
static int instance_may_allocate(void)
{
	size_t pages = (UKS_TRACE_DEFAULT_BUF_KB * 1024 + UKS_RB_PAGE_SIZE - 1) / UKS_RB_PAGE_SIZE;
	size_t nr_calls = 0, bytes;
	struct list_head *pos;

	list_for_each(pos, &__uks_trace_calls)
		nr_calls++;
	if (__builtin_mul_overflow(pages * uks_nr_cpu_ids(), UKS_RB_PAGE_SIZE + sizeof(void *),
				   &bytes))
		return -ENOMEM;
	return __uks_mem_may_allocate(bytes + nr_calls * sizeof(struct uks_event_file));
}

/**
 * __uks_trace_instance_mkdir - mkdir instances/@name below @top
 *
 * A full instance, the kernel's trace_array_create(): its own ring buffer
 * at the default size, an event file per event (all disabled), the top
 * level's options but event-fork (the kernel's ZEROED_TRACE_FLAGS), the
 * default clock, tracing on.  Made under event_mutex, as the kernel holds
 * it across instance_mkdir(), so a racing mkdir of the same name sees it.
 *
 * Returns 0, -EEXIST, -ENOMEM (the memory is not there: checked before
 * any is taken), -ENOSPC (@top has UKS_TRACE_MAX_INSTANCES) or -EINVAL
 * (not a name).
 */
int __uks_trace_instance_mkdir(struct uks_trace *top, const char *name)
{
	struct uks_trace *tr;
	int ret;

	if (!good_instance_name(name))
		return -EINVAL;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	if (__uks_trace_instance_find(top, name))
		ret = -EEXIST;
	else if (top->nr_instances >= top->max_instances)
		ret = -ENOSPC;
	else
		ret = instance_may_allocate();
	if (!ret)
		ret = trace_alloc(name, __atomic_load_n(&top->opts, __ATOMIC_RELAXED) &
					~(1ull << UKS_OPT_EVENT_FORK), &tr);
	if (!ret) {
		ret = trace_link(tr);
		if (ret)
			trace_free(tr);
	}
	if (!ret) {
		tr->parent = top;
		list_add_tail(&tr->instance_list, &top->instances);
		top->nr_instances++;
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}

/**
 * __uks_trace_instance_rmdir - rmdir instances/@name below @top
 *
 * The kernel's __remove_instance(): -EBUSY while any file of the
 * instance is in use (its tr->ref > 1), else its events are disabled, it
 * is gone from the tree, and it is freed with its buffer once the last
 * file is released (over FUSE a closed file is released after close(2)
 * has returned: it stopped being in use at the close, kfs.h ->in_use).
 * Returns 0, -ENOENT or -EBUSY.
 */
int __uks_trace_instance_rmdir(struct uks_trace *top, const char *name)
{
	struct uks_trace *tr;
	int ret = 0;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	tr = __uks_trace_instance_find(top, name);
	if (!tr)
		ret = -ENOENT;
	else if (__atomic_load_n(&tr->opens, __ATOMIC_ACQUIRE))
		ret = -EBUSY;
	if (!ret) {
		trace_unlink(tr);
		list_del(&tr->instance_list);
		top->nr_instances--;
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	if (!ret)
		__uks_trace_put(tr);
	return ret;
}

/* Caller holds event_mutex. */
bool __uks_trace_call_files_busy(struct uks_event_call *call)
{
	struct uks_event_file *file;

	list_for_each_entry(file, &call->files, call_list)
		if (file->flags & (UKS_FILE_ENABLED | UKS_FILE_SOFT_MODE))
			return true;
	return false;
}

void __uks_trace_call_files_free(struct uks_event_call *call)
{
	struct uks_event_file *file, *tmp;

	list_for_each_entry_safe(file, tmp, &call->files, call_list)
		__uks_trace_file_free(file);
}

/* ------------------------------------------------------- buffer and clock */

/*
 * buffer_size_kb: one CPU's size (per_cpu/cpuN), or for the top-level file
 * (@cpu < 0) the size all CPUs share, "X" when they differ.  Caller holds
 * event_mutex.
 */
void __uks_trace_show_buffer_size(struct uks_trace *tr, int cpu, struct uks_seq *s)
{
	unsigned int nr = __uks_trace_rb_nr_cpus(tr->rb);

	if (cpu < 0) {
		for (unsigned int i = 1; i < nr; i++) {
			if (tr->buffer_kb[i] != tr->buffer_kb[0]) {
				seq_printf(s, "X\n");
				return;
			}
		}
		cpu = 0;
	}
	seq_printf(s, "%zu\n", tr->buffer_kb[cpu]);
}

/* buffer_total_size_kb.  Caller holds event_mutex. */
void __uks_trace_show_buffer_total(struct uks_trace *tr, struct uks_seq *s)
{
	size_t total = 0;

	for (unsigned int i = 0; i < __uks_trace_rb_nr_cpus(tr->rb); i++)
		total += tr->buffer_kb[i];
	seq_printf(s, "%zu\n", total);
}

/*
 * buffer_size_kb write, of the top-level file (@cpu < 0: every CPU) or of
 * per_cpu/cpuN.  Like the kernel, 0 is -EINVAL, and a size the process
 * cannot get is -ENOMEM before a page is allocated (the kernel asks
 * si_mem_available(), here MemAvailable and the rlimits); then the buffer,
 * its events and the file's value stay as they were, and no event was
 * lost.  Unlike the kernel, a resize discards the resized buffers'
 * contents.  Enabled events are detached around the swap so no writer is
 * inside the old pages.
 */
int __uks_trace_set_buffer_size(struct uks_trace *tr, int cpu, unsigned long kb)
{
	struct uks_event_file *file;
	size_t bytes;
	bool was_on;
	int ret;

	if (!kb)
		return -EINVAL;
	if (__builtin_mul_overflow(kb, 1024, &bytes))
		return -ENOMEM;		/* the kernel's answer for any size it cannot have */
	ret = __uks_trace_resize_check(tr, cpu, bytes);
	if (ret)
		return ret;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	was_on = __uks_trace_rb_recording(tr->rb);
	__uks_trace_rb_record_on(tr->rb, false);
	/* Writers that passed the recording check before it went off finish. */
	list_for_each_entry(file, &tr->files, list)
		if (file->call->tp)
			uks_tracepoint_synchronize(file->call->tp);
	pthread_mutex_lock(&tr->lock);	/* and trace_marker writers */
	ret = __uks_trace_resize_buffers(tr, cpu, bytes);	/* and the snapshot's */
	pthread_mutex_unlock(&tr->lock);
	for (unsigned int i = 0; !ret && i < __uks_trace_rb_nr_cpus(tr->rb); i++)
		if (cpu < 0 || i == (unsigned int)cpu)
			tr->buffer_kb[i] = kb;
	__uks_trace_rb_record_on(tr->rb, was_on);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}

void __uks_trace_show_clock(struct uks_trace *tr, struct uks_seq *s)
{
	enum uks_trace_clock cur = __uks_trace_rb_clock(tr->rb);

	for (int i = 0; i < UKS_NR_CLOCKS; i++)
		seq_printf(s, i == (int)cur ? "[%s]%s" : "%s%s", __uks_trace_clock_names[i],
			   i + 1 < UKS_NR_CLOCKS ? " " : "\n");
}

/* trace_clock write: the kernel resets the buffer when the clock changes. */
int __uks_trace_set_clock(struct uks_trace *tr, const char *name)
{
	for (int i = 0; i < UKS_NR_CLOCKS; i++) {
		if (!strcmp(__uks_trace_clock_names[i], name)) {
			__uks_trace_rb_set_clock(tr->rb, (enum uks_trace_clock)i);
			__uks_trace_rb_reset(tr->rb);
			__uks_trace_snapshot_set_clock(tr);
			return 0;
		}
	}
	return -EINVAL;
}
