// SPDX-License-Identifier: MIT
/*
 * Event files: the per-instance state of each call (enable, soft mode,
 * filter) and the probe that writes the call's records into the
 * instance's ring buffer.
 */
#include <ctype.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/origin.h"
#include "trace/trace.h"
#include "trace/scratch.h"
#include "trace/trigger.h"

/* Writes in progress on this thread: a nested one comes from a signal handler. */
static __thread int write_depth __attribute__((tls_model("initial-exec")));

void __uks_trace_fill_entry(struct uks_trace *tr, struct uks_trace_entry *ent, int type)
{
	ent->type = (uint16_t)type;
	/* Signal handlers are user space's interrupt context. */
	ent->flags = write_depth > 1 ? UKS_TRACE_FLAG_HARDIRQ : 0;
	ent->preempt_count = 0;
	ent->pid = __uks_trace_current_tid();
}

/**
 * __uks_trace_hit_ts - the timestamp of a tracepoint hit in @rb's clock
 *
 * Every record one hit writes (the event in several instances, its
 * eprobes) carries the same time: one clock reading per clock and hit.
 * The counter clock is read each time, so that its values stay unique.
 */
uint64_t __uks_trace_hit_ts(struct uks_tp_iter *hit, struct uks_rb *rb)
{
	uint64_t clock = (uint64_t)__uks_trace_rb_clock(rb) + 1;

	if (hit->shared[1] == clock)
		return hit->shared[0];
	hit->shared[0] = __builtin_expect(__uks_trace_origin_cpu1 != 0, 0) ?
			 __uks_trace_origin_ts(rb) : __uks_trace_rb_now(rb);
	if (clock != (uint64_t)UKS_CLOCK_COUNTER + 1)
		hit->shared[1] = clock;
	return hit->shared[0];
}

/**
 * __uks_trace_file_skip_hit - before a record is built: does the hit end here?
 *
 * The kernel's trace_trigger_soft_disabled(), for a file with triggers or
 * soft-disabled (the caller tests those flags first): when no trigger
 * needs the record they all fire now, and a soft-disabled event then
 * writes nothing.  With a trigger that needs the record, the record is
 * built (in scratch memory when soft-disabled) and the triggers fire at
 * commit.
 */
bool __uks_trace_file_skip_hit(struct uks_event_file *file, unsigned int flags)
{
	if (flags & UKS_FILE_TRIGGER_COND)
		return false;
	if (flags & UKS_FILE_TRIGGER_MODE)
		__uks_trace_triggers_call(file, NULL, 0, -1);
	return flags & UKS_FILE_SOFT_DISABLED;
}

/**
 * __uks_trace_file_reserve - room for @file's record in @tr's buffer
 *
 * A record that triggers need but the buffer does not take (the event is
 * soft-disabled, or tracing is off, as the kernel's temp buffer) is built
 * in per-thread scratch memory; __uks_trace_commit_filtered() knows it.
 */
void *__uks_trace_file_reserve(struct uks_trace *tr, struct uks_event_file *file, size_t len,
			       uint64_t ts, unsigned int *cpu)
{
	unsigned int flags = __atomic_load_n(&file->flags, __ATOMIC_RELAXED);
	void *rec = NULL;

	if (__builtin_expect(!(flags & UKS_FILE_SOFT_DISABLED), 1))
		rec = __uks_trace_rb_reserve_at(tr->rb, len, ts, cpu);
	if (__builtin_expect(!rec, 0) && (flags & UKS_FILE_TRIGGER_COND))
		rec = __uks_trace_scratch_get(len);
	return rec;
}

static void *file_reserve(void *data, struct uks_tp_iter *hit, size_t len)
{
	struct uks_event_file *file = data;
	struct uks_trace *tr = file->tr;
	unsigned int flags = __atomic_load_n(&file->flags, __ATOMIC_RELAXED);
	struct uks_trace_entry *ent;
	unsigned int cpu;

	if (__builtin_expect(flags & (UKS_FILE_TRIGGER_MODE | UKS_FILE_SOFT_DISABLED), 0) &&
	    __uks_trace_file_skip_hit(file, flags))
		return NULL;
	if (__builtin_expect(tr->event_pids || tr->notrace_pids, 0) &&
	    __uks_trace_ignore_pid(tr, __uks_trace_current_tid()))
		return NULL;
	write_depth++;
	if (trace_opt(tr, UKS_OPT_RECORD_CMD) || trace_opt(tr, UKS_OPT_RECORD_TGID))
		__uks_trace_note_current(tr);
	ent = __uks_trace_file_reserve(tr, file, len, __uks_trace_hit_ts(hit, tr->rb), &cpu);
	if (!ent) {
		write_depth--;
		return NULL;
	}
	__uks_trace_fill_entry(tr, ent, file->call->id);
	return ent;
}

/*
 * Commit with triggers that need the record (the kernel's
 * event_trigger_unlock_commit()): they see the record before the event's
 * filter does; the post-commit ones (stacktrace) run after it, whether
 * the record was kept or not.
 */
static void commit_triggered(struct uks_trace *tr, struct uks_event_file *file, void *rec,
			     size_t len, unsigned int flags)
{
	bool scratch = __uks_trace_scratch_owns(rec);
	int cpu = scratch ? sched_getcpu() : (int)__uks_trace_rb_event_cpu(rec);
	unsigned int post = 0;
	struct uks_filter *filter;

	if (flags & UKS_FILE_TRIGGER_COND)
		post = __uks_trace_triggers_call(file, rec, len, cpu < 0 ? 0 : cpu);
	if (scratch) {
		__uks_trace_scratch_put();
	} else {
		struct uks_filter_ctx ctx = { cpu, NULL };

		filter = __atomic_load_n(&file->filter, __ATOMIC_ACQUIRE);
		if (filter)
			ctx.comm = __uks_trace_current_comm();
		if (filter && !__uks_trace_filter_match(filter, rec, len, &ctx))
			__uks_trace_rb_discard(tr->rb, rec);
		else
			__uks_trace_rb_commit(tr->rb, rec);
	}
	if (post)
		__uks_trace_triggers_post_call(file, post);
}

/**
 * __uks_trace_commit_filtered - commit a reserved record unless filtered out
 *
 * @rec comes from __uks_trace_file_reserve(); triggers that need it run
 * first.
 */
void __uks_trace_commit_filtered(struct uks_trace *tr, struct uks_event_file *file,
				 void *rec, size_t len, unsigned int cpu)
{
	unsigned int flags = __atomic_load_n(&file->flags, __ATOMIC_RELAXED);
	struct uks_filter *filter;

	if (__builtin_expect((flags & UKS_FILE_TRIGGER_COND) || __uks_trace_scratch_nest, 0)) {
		commit_triggered(tr, file, rec, len, flags);
		return;
	}
	filter = __atomic_load_n(&file->filter, __ATOMIC_ACQUIRE);
	if (filter) {
		struct uks_filter_ctx ctx = { (int)cpu, __uks_trace_current_comm() };

		if (!__uks_trace_filter_match(filter, rec, len, &ctx)) {
			__uks_trace_rb_discard(tr->rb, rec);
			return;
		}
	}
	__uks_trace_rb_commit(tr->rb, rec);
}

static void file_commit(void *data, struct uks_tp_iter *hit, void *rec, size_t len)
{
	struct uks_event_file *file = data;

	__uks_trace_commit_filtered(file->tr, file, rec, len, __uks_trace_rb_event_cpu(rec));
	write_depth--;
}

static int file_reg(struct uks_event_file *file, bool enable)
{
	struct uks_tp_probe probe = { file_reserve, file_commit, file };
	int ret;

	if (!file->call->tp)
		return 0;	/* written directly (ftrace:print) */
	if (enable == file->attached)
		return 0;
	ret = enable ? uks_tracepoint_attach(file->call->tp, &probe)
		     : uks_tracepoint_detach(file->call->tp, &probe);
	if (!ret)
		file->attached = enable;
	return ret;
}

/**
 * __uks_trace_file_enable - the kernel's __ftrace_event_enable_disable()
 * @file:	the event file
 * @enable:	on or off
 * @soft:	a soft-mode reference (held by an eprobe) rather than the
 *		user's enable
 *
 * Caller holds event_mutex.  Returns 0 or -errno from the call's reg().
 */
int __uks_trace_file_enable(struct uks_event_file *file, bool enable, bool soft)
{
	int (*reg)(struct uks_event_file *, bool) = file->call->reg ? file->call->reg : file_reg;
	unsigned int *flags = &file->flags;
	bool disable;
	int ret = 0;

	if (file->call->flags & UKS_CALL_IGNORE_ENABLE)
		return 0;
	if (enable) {
		if (!soft)
			__atomic_fetch_and(flags, ~UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
		else if (file->sm_ref++)
			return 0;
		else
			__atomic_fetch_or(flags, UKS_FILE_SOFT_MODE, __ATOMIC_RELEASE);
		if (*flags & UKS_FILE_ENABLED)
			return 0;
		/* A soft enable writes nothing until a trigger or a write of 1 says so. */
		if (soft)
			__atomic_fetch_or(flags, UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
		ret = reg(file, true);
		if (!ret) {
			__atomic_fetch_or(flags, UKS_FILE_ENABLED, __ATOMIC_RELEASE);
		} else if (soft) {
			file->sm_ref--;
			__atomic_fetch_and(flags, ~(UKS_FILE_SOFT_MODE | UKS_FILE_SOFT_DISABLED),
					   __ATOMIC_RELEASE);
		}
		return ret;
	}
	if (soft) {
		if (!file->sm_ref || --file->sm_ref)
			return 0;
		/* The last soft user leaves the event as it is shown: on if "1*". */
		disable = *flags & UKS_FILE_SOFT_DISABLED;
		__atomic_fetch_and(flags, ~UKS_FILE_SOFT_MODE, __ATOMIC_RELEASE);
	} else {
		/* While in soft mode, a write of 0 only stops the records. */
		disable = !(*flags & UKS_FILE_SOFT_MODE);
	}
	if (disable && (*flags & UKS_FILE_ENABLED)) {
		ret = reg(file, false);
		if (!ret)
			__atomic_fetch_and(flags, ~UKS_FILE_ENABLED, __ATOMIC_RELEASE);
	}
	if (*flags & UKS_FILE_SOFT_MODE)
		__atomic_fetch_or(flags, UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
	else
		__atomic_fetch_and(flags, ~UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
	return ret;
}

/* The enable file: "0", "1", "0*" or "1*". */
void __uks_trace_file_enable_str(struct uks_event_file *file, struct uks_seq *s)
{
	unsigned int flags = __atomic_load_n(&file->flags, __ATOMIC_RELAXED);

	seq_puts(s, (flags & UKS_FILE_ENABLED) && !(flags & UKS_FILE_SOFT_DISABLED) ? "1" : "0");
	if (flags & (UKS_FILE_SOFT_MODE | UKS_FILE_SOFT_DISABLED))
		seq_putc(s, '*');
	seq_putc(s, '\n');
}

static char *strip(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

static void swap_filter(struct uks_event_file *file, struct uks_filter *filter, char *str)
{
	struct uks_filter *old = file->filter;

	__atomic_store_n(&file->filter, filter, __ATOMIC_RELEASE);
	if (old && file->call->tp)
		uks_tracepoint_synchronize(file->call->tp);
	__uks_trace_filter_free(old);
	uks_kfree(file->filter_str);
	file->filter_str = str;
}

/**
 * __uks_trace_file_replace_filter - install @filter and the text @str shows
 * Either may be NULL; the old ones are freed once no hit uses them.
 * Caller holds event_mutex.
 */
void __uks_trace_file_replace_filter(struct uks_event_file *file, struct uks_filter *filter,
				     char *str)
{
	swap_filter(file, filter, str);
}

/**
 * __uks_trace_file_set_filter - the filter file's write: "0" clears
 *
 * As in 5.15, a filter that fails to parse replaces the old one with no
 * filtering and the filter file then shows the text, a caret and the
 * error; the error also goes to error_log.  Caller holds event_mutex.
 * Returns 0, -EINVAL, -ENOSPC or -ENOMEM.
 */
int __uks_trace_file_set_filter(struct uks_event_file *file, const char *text)
{
	struct uks_filter_error err = { 0 };
	struct uks_filter *filter = NULL;
	struct uks_seq msg = UKS_SEQ_INIT;
	char *copy, *str, *shown;
	size_t n = strlen(text);
	int ret;

	copy = uks_kmalloc(n + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, text, n + 1);
	/* The kernel cuts trailing white space only; leading stays in the text. */
	str = copy;
	if (!strcmp(strip(copy), "0")) {
		swap_filter(file, NULL, NULL);
		uks_kfree(copy);
		return 0;
	}
	ret = __uks_trace_filter_compile(str, file->call->all_fields, file->call->nr_all_fields,
					 &filter, &err);
	if (ret == -ENOMEM) {
		uks_kfree(copy);
		return ret;
	}
	seq_puts(&msg, str);
	if (ret) {
		/* The kernel right-aligns the caret in a field of width pos here. */
		seq_printf(&msg, "\n%*s", err.pos, "^");
		seq_printf(&msg, "\nparse_error: %s\n", err.msg ? err.msg : "Error");
		__uks_trace_log_err(file->tr, "event filter parse error", str,
				    err.msg ? err.msg : "Error", (unsigned int)err.pos);
	}
	uks_kfree(copy);
	/* The file keeps the text in slab memory; a seq buffer is libc's. */
	shown = msg.len && !msg.overflow ? uks_kmalloc(msg.len + 1) : NULL;
	if (shown)
		memcpy(shown, msg.buf, msg.len + 1);
	if (!shown && (msg.len || msg.overflow)) {
		seq_free(&msg);
		__uks_trace_filter_free(filter);
		return -ENOMEM;
	}
	seq_free(&msg);
	swap_filter(file, filter, shown);
	return ret;
}

static struct uks_event_file *file_alloc(struct uks_trace *tr, struct uks_event_call *call)
{
	struct uks_event_file *file = uks_kzalloc(sizeof(*file));

	if (!file)
		return NULL;
	file->tr = tr;
	file->call = call;
	file->ref = 1;
	if (call == __uks_trace_ftrace_print_call)
		__atomic_store_n(&tr->marker_file, file, __ATOMIC_RELEASE);
	list_add_tail(&file->list, &tr->files);
	list_add_tail(&file->call_list, &call->files);
	return file;
}

/* An unused file, undone on a failed creation. */
static void file_unalloc(struct uks_event_file *file)
{
	if (file->tr->marker_file == file)
		__atomic_store_n(&file->tr->marker_file, NULL, __ATOMIC_RELEASE);
	list_del(&file->list);
	list_del(&file->call_list);
	uks_kfree(file);
}

/**
 * __uks_trace_call_files_alloc - a file for a new call in every instance
 * Caller holds event_mutex.  Returns 0 or -ENOMEM (then none was made).
 */
int __uks_trace_call_files_alloc(struct uks_event_call *call)
{
	struct uks_event_file *file, *tmp;
	struct uks_trace *tr;

	list_for_each_entry(tr, &__uks_trace_traces, list) {
		if (!file_alloc(tr, call)) {
			list_for_each_entry_safe(file, tmp, &call->files, call_list)
				file_unalloc(file);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * __uks_trace_files_alloc - a file of every call for a new instance
 * Caller holds event_mutex.  Returns 0 or -ENOMEM (then none was made).
 */
int __uks_trace_files_alloc(struct uks_trace *tr)
{
	struct uks_event_file *file, *tmp;
	struct uks_event_call *call;

	list_for_each_entry(call, &__uks_trace_calls, list) {
		if (!file_alloc(tr, call)) {
			list_for_each_entry_safe(file, tmp, &tr->files, list)
				file_unalloc(file);
			return -ENOMEM;
		}
	}
	return 0;
}

/**
 * __uks_trace_sync_files - give @tr a file for every call
 *
 * Calls get their files in every instance when they are added; what is
 * left is turning newly registered tracepoints into calls.  Caller holds
 * event_mutex.  Returns 0 or -ENOMEM.
 */
int __uks_trace_sync_files(struct uks_trace *tr)
{
	(void)tr;
	return __uks_trace_sync_calls();
}

/* Caller holds event_mutex.  Costs the number of instances. */
struct uks_event_file *__uks_trace_file_of_call(struct uks_trace *tr, struct uks_event_call *call)
{
	struct uks_event_file *file;

	list_for_each_entry(file, &call->files, call_list)
		if (file->tr == tr)
			return file;
	return NULL;
}

struct uks_event_file *__uks_trace_find_file(struct uks_trace *tr, const char *system,
					     const char *name)
{
	struct uks_event_call *call;

	if (__uks_trace_sync_files(tr))
		return NULL;
	call = __uks_trace_find_call(system, name);
	return call ? __uks_trace_file_of_call(tr, call) : NULL;
}

/*
 * Remove an instance's file: disabled, off the lists, its filter freed.
 * Files of events/SYS/EVENT/ still open keep its memory and answer
 * -ENODEV, as the kernel's do once their event is gone (5.15 and 6.12
 * alike: removing an event whose files are open is allowed).  Caller
 * holds event_mutex.
 */
void __uks_trace_file_free(struct uks_event_file *file)
{
	__uks_trace_file_triggers_clear(file);
	if (file->tr->marker_file == file)
		__atomic_store_n(&file->tr->marker_file, NULL, __ATOMIC_RELEASE);
	if (file->flags & UKS_FILE_ENABLED)
		__uks_trace_file_enable(file, false, false);
	list_del(&file->list);
	list_del(&file->call_list);
	swap_filter(file, NULL, NULL);
	__atomic_or_fetch(&file->flags, UKS_FILE_FREED, __ATOMIC_RELAXED);
	file->call = NULL;
	__uks_trace_file_put(file);
}

void __uks_trace_file_get(struct uks_event_file *file)
{
	__atomic_add_fetch(&file->ref, 1, __ATOMIC_RELAXED);
}

void __uks_trace_file_put(struct uks_event_file *file)
{
	if (!__atomic_sub_fetch(&file->ref, 1, __ATOMIC_ACQ_REL))
		uks_kfree(file);
}
