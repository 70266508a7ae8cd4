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
#include "trace/instance.h"
#include "trace/trace.h"

LIST_HEAD(__uks_trace_traces);

static bool good_instance_name(const char *name)
{
	if (!*name || strlen(name) > 255 || strchr(name, '/') || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	return true;
}

/**
 * uks_trace_create - see <uks/trace.h>
 */
UKS_EXPORT int uks_trace_create(const char *name, struct uks_trace **out)
{
	struct uks_trace *tr;

	if (name && !good_instance_name(name))
		return -EINVAL;
	__uks_trace_clock_init();
	tr = uks_kzalloc(sizeof(*tr));
	if (!tr)
		return -ENOMEM;
	pthread_mutex_init(&tr->lock, NULL);
	INIT_LIST_HEAD(&tr->files);
	tr->opts = UKS_TRACE_DEFAULT_OPTS;
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
		uks_kfree(tr);
		return -ENOMEM;
	}
	pthread_mutex_lock(&__uks_trace_event_mutex);
	if (__uks_trace_files_alloc(tr)) {
		pthread_mutex_unlock(&__uks_trace_event_mutex);
		__uks_trace_rb_free(tr->rb);
		uks_kfree(tr->name);
		uks_kfree(tr);
		return -ENOMEM;
	}
	list_add_tail(&tr->list, &__uks_trace_traces);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	*out = tr;
	return 0;
}

UKS_EXPORT void uks_trace_destroy(struct uks_trace *tr)
{
	struct uks_event_file *file, *tmp;

	if (!tr)
		return;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	/* Eprobe files first: they hold soft-mode references on others. */
	list_for_each_entry_safe(file, tmp, &tr->files, list)
		if (file->call->flags & UKS_CALL_EPROBE)
			__uks_trace_file_free(file);
	list_for_each_entry_safe(file, tmp, &tr->files, list)
		__uks_trace_file_free(file);
	list_del(&tr->list);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	__uks_trace_clear_error_log(tr);
	__uks_trace_rb_free(tr->rb);
	uks_kfree(tr->buffer_kb);
	__uks_trace_free_event_pids(tr);
	uks_kfree(tr->name);
	pthread_mutex_destroy(&tr->lock);
	uks_kfree(tr);
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
	ret = __uks_trace_rb_resize_check(tr->rb, cpu, bytes);
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
	ret = __uks_trace_rb_resize(tr->rb, cpu, bytes);
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
			return 0;
		}
	}
	return -EINVAL;
}
