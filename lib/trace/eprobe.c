// SPDX-License-Identifier: MIT
/*
 * Event probes (5.15's trace_eprobe.c): a dynamic event that fires when
 * another event fires and records values fetched from that event's
 * record.
 *
 * Enabling an eprobe in an instance soft-enables the attached event there
 * (its enable file shows "0*") and attaches a probe to the attached
 * event's tracepoint.  That probe builds the attached record in a
 * per-thread scratch area (it is never written to the ring buffer), and on
 * commit fetches the eprobe's arguments from it, dereferencing into the
 * writer's process with process_vm_readv, and writes the eprobe's own
 * record, which the eprobe's filter then sees.
 *
 * 5.15 record layout (later kernels dropped __probe_type): the common
 * header, u32 __probe_type (the attached event's type), then the fetched
 * arguments packed, strings as __data_loc with their bytes after.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <uks/core.h>
#include <uks/slab.h>

#include "trace/eprobe.h"
#include "trace/probe_arg.h"
#include "trace/scratch.h"
#include "trace/writer_sync.h"

#define EPROBE_ARGS_BASE	12

struct eprobe_entry {
	struct uks_trace_entry ent;
	uint32_t probe_type;
	unsigned char args[];
};

static const struct uks_event_field probe_type_field = {
	"unsigned int", "__probe_type", 8, 4, false, UKS_FILTER_OTHER
};

static void *eprobe_reserve(void *data, struct uks_tp_iter *hit, size_t len)
{
	struct uks_event_file *file = data;
	struct uks_eprobe *ep = file->call->priv;
	unsigned int flags = __atomic_load_n(&file->flags, __ATOMIC_RELAXED);
	unsigned char *buf;

	if (__builtin_expect(flags & (UKS_FILE_TRIGGER_MODE | UKS_FILE_SOFT_DISABLED), 0) &&
	    __uks_trace_file_skip_hit(file, flags))
		return NULL;
	if (__builtin_expect(__uks_trace_writer_is_running(), 0) &&
	    __uks_trace_probe_args_read_memory(ep->args))
		return NULL;
	if ((file->tr->event_pids || file->tr->notrace_pids) &&
	    __uks_trace_ignore_pid(file->tr, __uks_trace_current_tid()))
		return NULL;
	buf = __uks_trace_scratch_get(len);
	if (!buf)
		return NULL;
	__uks_trace_fill_entry(file->tr, (struct uks_trace_entry *)buf, ep->attached->id);
	return buf;
}

static void eprobe_commit(void *data, struct uks_tp_iter *hit, void *src, size_t src_len)
{
	struct uks_event_file *file = data;
	struct uks_eprobe *ep = file->call->priv;
	struct uks_trace *tr = file->tr;
	const struct uks_trace_entry *ent = src;
	struct eprobe_entry *rec;
	size_t len;
	unsigned int cpu;

	if (ep->filter) {
		struct uks_filter_ctx ctx = { uks_cpu_current(), __uks_trace_current_comm() };

		if (!__uks_trace_filter_match(ep->filter, src, src_len, &ctx)) {
			__uks_trace_scratch_put();
			return;
		}
	}
	len = __uks_trace_probe_args_fixed_size(ep->args) +
	      __uks_trace_probe_args_dynamic_size(ep->args, src, src_len, ent->pid);
	if (trace_opt(tr, UKS_OPT_RECORD_CMD) || trace_opt(tr, UKS_OPT_RECORD_TGID))
		__uks_trace_note_current(tr);
	rec = __uks_trace_file_reserve(tr, file, len, __uks_trace_hit_ts(hit, tr->rb), &cpu);
	if (rec) {
		rec->ent = *ent;	/* the attached record's header, our type */
		rec->ent.type = (uint16_t)file->call->id;
		rec->probe_type = (uint32_t)ep->attached->id;
		__uks_trace_probe_args_store(ep->args, src, src_len, ent->pid, rec, len);
		__uks_trace_commit_filtered(tr, file, rec, len, cpu);
	}
	__uks_trace_scratch_put();
}

/* The call's reg(): enable in @file's instance.  Caller holds event_mutex. */
static int eprobe_reg(struct uks_event_file *file, bool enable)
{
	struct uks_eprobe *ep = file->call->priv;
	struct uks_event_file *target = __uks_trace_file_of_call(file->tr, ep->attached);
	struct uks_tp_probe probe = { eprobe_reserve, eprobe_commit, file };
	bool reads = __uks_trace_probe_args_read_memory(ep->args);
	int ret;

	if (!target || !ep->attached->tp)
		return -ENODEV;
	if (enable) {
		ret = reads ? __uks_trace_sync_tp_add(ep->attached->tp) : 0;
		if (ret)
			return ret;
		ret = uks_tracepoint_attach(ep->attached->tp, &probe);
		if (ret) {
			if (reads)
				__uks_trace_sync_tp_del(ep->attached->tp);
			return ret;
		}
		__uks_trace_file_enable(target, true, true);
	} else {
		ret = uks_tracepoint_detach(ep->attached->tp, &probe);
		if (ret)
			return ret;
		if (reads)
			__uks_trace_sync_tp_del(ep->attached->tp);
		__uks_trace_file_enable(target, false, true);
	}
	return 0;
}

static void eprobe_print(struct uks_seq *s, const struct uks_event_call *call,
			 const void *rec, size_t len)
{
	const struct uks_eprobe *ep = call->priv;

	seq_printf(s, "%s: (%s.%s)", call->name, ep->attached->system, ep->attached->name);
	__uks_trace_probe_args_print(ep->args, rec, len, s);
}

static void eprobe_print_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	const struct uks_eprobe *ep = call->priv;

	__uks_trace_probe_args_print_fmt(ep->args, s);
}

/**
 * __uks_trace_eprobe_create - build an eprobe call (not yet added)
 * @group, @event: its name
 * @attached:	the event it attaches to
 * @argc, @argv: fetch arguments
 * @out:	the call
 * @err:	the argument error, when -EINVAL/-ENOENT/-E2BIG
 *
 * Caller holds event_mutex.
 */
int __uks_trace_eprobe_create(const char *group, const char *event, struct uks_event_call *attached,
			      int argc, const char *const *argv, struct uks_event_call **out,
			      struct uks_probe_error *err)
{
	struct uks_event_field *fields = NULL;
	const struct uks_event_field *arg_fields;
	struct uks_event_call *call = NULL;
	struct uks_eprobe *ep;
	size_t nr_args = 0;
	int ret;

	ep = uks_kzalloc(sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->attached = attached;
	ret = __uks_trace_probe_args_parse(argc, argv, attached->all_fields,
					   attached->nr_all_fields, EPROBE_ARGS_BASE, &ep->args,
					   err);
	if (ret)
		goto fail;
	arg_fields = __uks_trace_probe_args_fields(ep->args, &nr_args);
	fields = uks_kcalloc(nr_args + 1, sizeof(*fields));
	ret = -ENOMEM;
	if (!fields)
		goto fail;
	fields[0] = probe_type_field;
	if (nr_args)
		memcpy(fields + 1, arg_fields, nr_args * sizeof(*fields));
	call = __uks_trace_call_alloc(group, event, fields, nr_args + 1);
	uks_kfree(fields);
	if (!call)
		goto fail;
	call->flags = UKS_CALL_DYNAMIC | UKS_CALL_EPROBE;
	call->reg = eprobe_reg;
	call->print = eprobe_print;
	call->print_fmt = eprobe_print_fmt;
	call->priv = ep;
	*out = call;
	return 0;
fail:
	__uks_trace_probe_args_free(ep->args);
	uks_kfree(ep);
	return ret;
}

void __uks_trace_eprobe_free(struct uks_event_call *call)
{
	struct uks_eprobe *ep = call->priv;

	if (ep) {
		__uks_trace_filter_free(ep->filter);
		__uks_trace_probe_args_free(ep->args);
		uks_kfree(ep);
	}
	__uks_trace_call_free(call);
}

/* "e:GRP/NAME SYS.EVENT name=arg ..." as dynamic_events lists it. */
void __uks_trace_eprobe_show(struct uks_seq *s, const struct uks_event_call *call)
{
	const struct uks_eprobe *ep = call->priv;
	int n = __uks_trace_probe_args_count(ep->args);

	seq_printf(s, "e:%s/%s %s.%s", call->system, call->name, ep->attached->system,
		   ep->attached->name);
	for (int i = 0; i < n; i++)
		seq_printf(s, " %s", __uks_trace_probe_args_text(ep->args, i));
	seq_putc(s, '\n');
}
