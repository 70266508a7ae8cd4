// SPDX-License-Identifier: MIT
/*
 * Event calls: the global list of every event tracers can enable, with
 * their numeric IDs and formats.  Static tracepoints become calls lazily
 * (__uks_trace_sync_calls() compares the tracepoint registry's generation);
 * dynamic events add and remove themselves.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/trace.h"
#include "trace/trigger.h"

pthread_mutex_t __uks_trace_event_mutex = PTHREAD_MUTEX_INITIALIZER;
LIST_HEAD(__uks_trace_calls);
LIST_HEAD(__uks_trace_systems);
static struct uks_index systems_by_name;
static struct uks_index calls_by_id;

/* IDs 1..16 belong to ftrace's own entry types (TRACE_PRINT is 5). */
static int next_call_id = 17;
static unsigned long synced_generation = ~0ul;

static const struct uks_event_field generic_fields[UKS_NR_GENERIC_FIELDS] = {
	{ "int", "CPU", 0, 4, true, UKS_FILTER_CPU },
	{ "int", "cpu", 0, 4, true, UKS_FILTER_CPU },
	{ "char *", "COMM", 0, 16, true, UKS_FILTER_COMM },
	{ "char *", "comm", 0, 16, true, UKS_FILTER_COMM },
};

static const struct uks_event_field common_fields[UKS_NR_COMMON_FIELDS] = {
	{ "unsigned short", "common_type", 0, 2, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_flags", 2, 1, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_preempt_count", 3, 1, false, UKS_FILTER_OTHER },
	{ "int", "common_pid", 4, 4, true, UKS_FILTER_OTHER },
};

static char *kstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = uks_kmalloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

/**
 * __uks_trace_call_alloc - a new call with its field table (not yet listed)
 * The field descriptors are copied; their strings are not and must stay.
 */
struct uks_event_call *__uks_trace_call_alloc(const char *system, const char *name,
					      const struct uks_event_field *fields,
					      size_t nr_fields)
{
	struct uks_event_call *call = uks_kzalloc(sizeof(*call));
	size_t nr_all = nr_fields + UKS_NR_GENERIC_FIELDS + UKS_NR_COMMON_FIELDS;

	if (!call)
		return NULL;
	INIT_LIST_HEAD(&call->list);
	INIT_LIST_HEAD(&call->sys_list);
	INIT_LIST_HEAD(&call->files);
	call->system = kstrdup(system);
	call->name = kstrdup(name);
	call->all_fields = uks_kcalloc(nr_all, sizeof(*call->all_fields));
	if (!call->system || !call->name || !call->all_fields) {
		__uks_trace_call_free(call);
		return NULL;
	}
	if (nr_fields)
		memcpy(call->all_fields, fields, nr_fields * sizeof(*fields));
	memcpy(call->all_fields + nr_fields, generic_fields, sizeof(generic_fields));
	memcpy(call->all_fields + nr_fields + UKS_NR_GENERIC_FIELDS, common_fields,
	       sizeof(common_fields));
	call->nr_fields = nr_fields;
	call->nr_all_fields = nr_all;
	return call;
}

void __uks_trace_call_free(struct uks_event_call *call)
{
	if (!call)
		return;
	uks_kfree(call->system);
	uks_kfree(call->name);
	uks_kfree(call->all_fields);
	uks_kfree(call);
}

/* Caller holds event_mutex. */
struct uks_event_system *__uks_trace_find_system(const char *name)
{
	size_t hash = __uks_trace_hash_name(name);
	struct uks_event_system *sys;
	struct uks_index_node *pos;

	uks_index_for_each_possible(pos, &systems_by_name, hash) {
		sys = container_of(pos, struct uks_event_system, node);
		if (!strcmp(sys->name, name))
			return sys;
	}
	return NULL;
}

static struct uks_event_system *system_get(const char *name)
{
	struct uks_event_system *sys = __uks_trace_find_system(name);

	if (sys)
		return sys;
	sys = uks_kzalloc(sizeof(*sys));
	if (!sys)
		return NULL;
	sys->name = kstrdup(name);
	if (!sys->name || __uks_trace_index_add(&systems_by_name, &sys->node,
						 __uks_trace_hash_name(name))) {
		uks_kfree(sys->name);
		uks_kfree(sys);
		return NULL;
	}
	INIT_LIST_HEAD(&sys->calls);
	list_add_tail(&sys->list, &__uks_trace_systems);
	return sys;
}

/* The directory goes with its last event, as the kernel's subsystem_dir does. */
static void system_put(struct uks_event_system *sys)
{
	if (!list_empty(&sys->calls))
		return;
	__uks_trace_index_del(&systems_by_name, &sys->node);
	__uks_trace_index_free(&sys->by_name);
	list_del(&sys->list);
	uks_kfree(sys->name);
	uks_kfree(sys);
}

/* The call leaves its system's index and the ID index. */
static void call_unindex(struct uks_event_call *call)
{
	struct uks_event_system *sys = call->sys;

	__uks_trace_index_del(&calls_by_id, &call->id_node);
	__uks_trace_index_del(&sys->by_name, &call->name_node);
	list_del_init(&call->sys_list);
	call->sys = NULL;
	system_put(sys);
}

/*
 * Caller holds event_mutex.  The call gets its file in every instance, as
 * the kernel's trace_add_event_call() does.  Returns 0, -EEXIST or -ENOMEM.
 */
int __uks_trace_call_add(struct uks_event_call *call)
{
	struct uks_event_system *sys;
	int ret;

	if (__uks_trace_find_call(call->system, call->name))
		return -EEXIST;
	sys = system_get(call->system);
	if (!sys)
		return -ENOMEM;
	/* ftrace's own types keep the kernel's ids (raw_data is 18): skip them */
	while (!call->id && __uks_trace_find_call_by_id(next_call_id))
		next_call_id++;
	if (!call->id)
		call->id = next_call_id++;
	call->sys = sys;
	list_add_tail(&call->sys_list, &sys->calls);
	ret = __uks_trace_index_add(&sys->by_name, &call->name_node,
				    __uks_trace_hash_name(call->name));
	if (ret) {
		list_del_init(&call->sys_list);
		call->sys = NULL;
		system_put(sys);
		return ret;
	}
	ret = __uks_trace_index_add(&calls_by_id, &call->id_node, (size_t)call->id);
	if (ret) {
		__uks_trace_index_del(&sys->by_name, &call->name_node);
		list_del_init(&call->sys_list);
		call->sys = NULL;
		system_put(sys);
		return ret;
	}
	ret = __uks_trace_call_files_alloc(call);
	if (ret) {
		call_unindex(call);
		return ret;
	}
	list_add_tail(&call->list, &__uks_trace_calls);
	return 0;
}

/* Caller holds event_mutex; instance files must be gone already. */
void __uks_trace_call_remove(struct uks_event_call *call)
{
	list_del_init(&call->list);
	if (call->sys)
		call_unindex(call);
}

/* @system NULL: the first call of that name in any system. */
struct uks_event_call *__uks_trace_find_call(const char *system, const char *name)
{
	size_t hash = __uks_trace_hash_name(name);
	struct uks_event_system *sys;
	struct uks_index_node *pos;

	if (!system) {
		struct uks_event_call *call;

		list_for_each_entry(call, &__uks_trace_calls, list)
			if (!strcmp(call->name, name))
				return call;
		return NULL;
	}
	sys = __uks_trace_find_system(system);
	if (!sys)
		return NULL;
	uks_index_for_each_possible(pos, &sys->by_name, hash) {
		struct uks_event_call *call = container_of(pos, struct uks_event_call, name_node);

		if (!strcmp(call->name, name))
			return call;
	}
	return NULL;
}

/* The call whose records carry @id (the trace readers' lookup). */
struct uks_event_call *__uks_trace_find_call_by_id(int id)
{
	struct uks_index_node *pos;

	uks_index_for_each_possible(pos, &calls_by_id, (size_t)id)
		return container_of(pos, struct uks_event_call, id_node);
	return NULL;
}

static void tp_print(struct uks_seq *s, const struct uks_event_call *call,
		     const void *rec, size_t len)
{
	char small[256];
	int n = call->tp->print(small, sizeof(small), rec);

	if (n < 0)
		return;
	if ((size_t)n < sizeof(small)) {
		seq_putmem(s, small, n);
	} else {
		char *big = uks_kmalloc(n + 1);

		if (!big)
			return;
		call->tp->print(big, n + 1, rec);
		seq_putmem(s, big, n);
		uks_kfree(big);
	}
}

static void tp_print_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	size_t len;
	const char *fmt = uks_tracepoint_print_fmt(call->tp, &len);

	seq_putmem(s, fmt, len);
}

static int add_tracepoint(struct uks_tracepoint *tp, void *arg)
{
	struct uks_event_call *call;

	if (__uks_trace_find_call(tp->system, tp->name))
		return 0;
	call = __uks_trace_call_alloc(tp->system, tp->name, tp->fields, tp->nr_fields);
	if (!call)
		return -ENOMEM;
	call->tp = tp;
	if (tp->flags & UKS_TP_OWN_LINE)
		call->flags |= UKS_CALL_OWN_LINE;
	call->print = tp_print;
	call->print_fmt = tp_print_fmt;
	if (__uks_trace_call_add(call)) {
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	return 0;
}

/**
 * __uks_trace_sync_calls - make a call of every registered tracepoint
 * Caller holds event_mutex.  Returns 0 or -ENOMEM.
 */
int __uks_trace_sync_calls(void)
{
	unsigned long gen = uks_tracepoint_generation();
	int ret;

	if (gen == synced_generation)
		return 0;
	ret = __uks_trace_marker_init();
	if (!ret)
		ret = __uks_trace_stack_init();
	if (!ret)
		ret = uks_tracepoint_for_each(add_tracepoint, NULL);
	if (!ret)
		synced_generation = gen;
	return ret;
}

/* One "\tfield:TYPE NAME;\toffset:N;\tsize:N;\tsigned:N;" line. */
static void print_field(struct uks_seq *s, const struct uks_event_field *f)
{
	const char *bracket = strchr(f->type, '[');

	/* Arrays print as "char comm[16]": the dimension follows the name. */
	if (bracket && strncmp(f->type, "__data_loc", 10))
		seq_printf(s, "\tfield:%.*s %s%s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			   (int)(bracket - f->type), f->type, f->name, bracket,
			   f->offset, f->size, f->is_signed);
	else
		seq_printf(s, "\tfield:%s %s;\toffset:%u;\tsize:%u;\tsigned:%d;\n",
			   f->type, f->name, f->offset, f->size, f->is_signed);
}

/** __uks_trace_call_print_format - the events/SYS/EVENT/format file */
void __uks_trace_call_print_format(struct uks_seq *s, const struct uks_event_call *call)
{
	const struct uks_event_field *common = call_common_fields(call);

	seq_printf(s, "name: %s\nID: %d\nformat:\n", call->name, call->id);
	for (int i = 0; i < UKS_NR_COMMON_FIELDS; i++)
		print_field(s, &common[i]);
	seq_putc(s, '\n');
	for (size_t i = 0; i < call->nr_fields; i++)
		print_field(s, &call->all_fields[i]);
	seq_puts(s, "\nprint fmt: ");
	call->print_fmt(s, call);
	seq_putc(s, '\n');
}
