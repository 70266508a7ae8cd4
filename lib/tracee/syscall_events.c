// SPDX-License-Identifier: MIT
/*
 * syscalls:sys_enter_<name>/sys_exit_<name> and raw_syscalls:sys_enter/
 * sys_exit: the kernel's system-call events, defined at run time from the
 * generated table (syscall_table.c) and fired for a stopped tracee.
 *
 * Layout and text follow kernel/trace/trace_syscalls.c (the same in 5.15
 * and 6.1): an enter record is the common header, "int __syscall_nr" at
 * offset 8 and each argument as an 8-byte unsigned long from offset 16,
 * with the argument's own type and name in the format file and signed:0
 * for all of them (trace_define_field(..., sizeof(unsigned long), 0, ...));
 * an exit record is __syscall_nr and "long ret" at 16.  The print fmt is
 * built the way __set_enter_print_fmt() builds it ("dfd: 0x%08lx, ...",
 * ((unsigned long)(REC->dfd)), ...) and the exit's is "0x%lx", REC->ret.
 * The trace line is print_syscall_enter()'s "sys_openat(dfd: ffffff9c,
 * ...)" and print_syscall_exit()'s "sys_openat -> 0x3".  raw_syscalls
 * follow include/trace/events/syscalls.h.
 *
 * The tracepoints are registered once per process (pthread_once) and live
 * as long as it does, like the kernel's static events; their tables come
 * from the slab allocator and are never freed.
 *
 * Lock order: none here; registration takes the tracepoint registry lock.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/writer_sync.h"
#include "tracee/events.h"
#include "tracee/syscall_table.h"

struct sys_enter_rec {
	struct uks_trace_entry ent;
	int32_t nr;
	uint32_t pad;
	unsigned long args[UKS_SYSCALL_MAXARGS];
};

struct sys_exit_rec {
	struct uks_trace_entry ent;
	int32_t nr;
	uint32_t pad;
	long ret;
};

struct raw_enter_rec {
	struct uks_trace_entry ent;
	long id;
	unsigned long args[6];
};

struct raw_exit_rec {
	struct uks_trace_entry ent;
	long id;
	long ret;
};

/* One system call's pair of events. */
struct sys_events {
	struct uks_tracepoint enter;
	struct uks_tracepoint exit;
	struct uks_event_field enter_fields[1 + UKS_SYSCALL_MAXARGS];
	char enter_name[64];
	char exit_name[64];
};

static struct sys_events *by_nr[UKS_TRACEE_NR_SYSCALLS];
static const struct uks_syscall_meta *meta_by_nr[UKS_TRACEE_NR_SYSCALLS];
static pthread_once_t init_once = PTHREAD_ONCE_INIT;
static int init_err;

static const struct uks_event_field exit_fields[] = {
	{ "int", "__syscall_nr", 8, 4, true, UKS_FILTER_OTHER },
	{ "long", "ret", 16, 8, true, UKS_FILTER_OTHER },
};

static const struct uks_event_field raw_enter_fields[] = {
	{ "long", "id", 8, 8, true, UKS_FILTER_OTHER },
	{ "unsigned long[6]", "args", 16, 48, false, UKS_FILTER_OTHER },
};

static const struct uks_event_field raw_exit_fields[] = {
	{ "long", "id", 8, 8, true, UKS_FILTER_OTHER },
	{ "long", "ret", 16, 8, true, UKS_FILTER_OTHER },
};

/* Append to a bounded buffer; @pos counts what would have been written. */
static void __attribute__((format(printf, 4, 5)))
append(char *buf, size_t len, size_t *pos, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*pos < len ? buf + *pos : NULL, *pos < len ? len - *pos : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*pos += (size_t)n;
}

static const struct uks_syscall_meta *meta_of(long nr)
{
	return nr >= 0 && nr < UKS_TRACEE_NR_SYSCALLS ? meta_by_nr[nr] : NULL;
}

/* print_syscall_enter(): "sys_NAME(arg: %lx, ...)" (verbose types: see TRACEE.md). */
static int enter_print(char *buf, size_t len, const void *rec)
{
	const struct sys_enter_rec *r = rec;
	const struct uks_syscall_meta *m = meta_of(r->nr);
	size_t pos = 0;

	if (len)
		buf[0] = '\0';
	if (!m)
		return 0;
	append(buf, len, &pos, "sys_%s(", m->name);
	for (unsigned int i = 0; i < m->nb_args; i++)
		append(buf, len, &pos, "%s: %lx%s", m->args[i], r->args[i],
		       i == m->nb_args - 1 ? "" : ", ");
	append(buf, len, &pos, ")");
	return (int)pos;
}

/* print_syscall_exit(): "sys_NAME -> 0x%lx". */
static int exit_print(char *buf, size_t len, const void *rec)
{
	const struct sys_exit_rec *r = rec;
	const struct uks_syscall_meta *m = meta_of(r->nr);

	if (!m) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	return snprintf(buf, len, "sys_%s -> 0x%lx", m->name, (unsigned long)r->ret);
}

static int raw_enter_print(char *buf, size_t len, const void *rec)
{
	const struct raw_enter_rec *r = rec;

	return snprintf(buf, len, "NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)", r->id,
			r->args[0], r->args[1], r->args[2], r->args[3], r->args[4], r->args[5]);
}

static int raw_exit_print(char *buf, size_t len, const void *rec)
{
	const struct raw_exit_rec *r = rec;

	return snprintf(buf, len, "NR %ld = %ld", r->id, r->ret);
}

static struct uks_tracepoint raw_enter_tp = {
	.system = "raw_syscalls",
	.name = "sys_enter",
	.fields = raw_enter_fields,
	.nr_fields = 2,
	.fixed_size = sizeof(struct raw_enter_rec),
	.print_fmt = "UKS_TP_PRINTK(\"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, "
		     "REC->args[0], REC->args[1], REC->args[2], REC->args[3], REC->args[4], "
		     "REC->args[5])",
	.print = raw_enter_print,
};

static struct uks_tracepoint raw_exit_tp = {
	.system = "raw_syscalls",
	.name = "sys_exit",
	.fields = raw_exit_fields,
	.nr_fields = 2,
	.fixed_size = sizeof(struct raw_exit_rec),
	.print_fmt = "UKS_TP_PRINTK(\"NR %ld = %ld\", REC->id, REC->ret)",
	.print = raw_exit_print,
};

/* __set_enter_print_fmt(), wrapped as UKS_TP_PRINTK(...) for the registry. */
static char *enter_print_fmt(const struct uks_syscall_meta *m)
{
	size_t pos = 0, len;
	char *buf = NULL;

	for (int pass = 0; pass < 2; pass++) {
		len = pass ? pos + 1 : 0;
		pos = 0;
		append(buf, len, &pos, "UKS_TP_PRINTK(\"");
		for (unsigned int i = 0; i < m->nb_args; i++)
			append(buf, len, &pos, "%s: 0x%%0%zulx%s", m->args[i], sizeof(unsigned long),
			       i == m->nb_args - 1 ? "" : ", ");
		append(buf, len, &pos, "\"");
		for (unsigned int i = 0; i < m->nb_args; i++)
			append(buf, len, &pos, ", ((unsigned long)(REC->%s))", m->args[i]);
		append(buf, len, &pos, ")");
		if (!pass && !(buf = uks_kmalloc(pos + 1)))
			return NULL;
	}
	return buf;
}

static int register_one(const struct uks_syscall_meta *m)
{
	struct sys_events *ev = uks_kzalloc(sizeof(*ev));
	char *fmt = enter_print_fmt(m);
	int ret;

	if (!ev || !fmt) {
		uks_kfree(ev);
		uks_kfree(fmt);
		return -ENOMEM;
	}
	snprintf(ev->enter_name, sizeof(ev->enter_name), "sys_enter_%s", m->name);
	snprintf(ev->exit_name, sizeof(ev->exit_name), "sys_exit_%s", m->name);
	ev->enter_fields[0] = exit_fields[0];
	for (unsigned int i = 0; i < m->nb_args; i++)
		ev->enter_fields[1 + i] = (struct uks_event_field){
			m->types[i], m->args[i], 16 + 8 * i, sizeof(unsigned long), false,
			UKS_FILTER_OTHER,
		};
	ev->enter = (struct uks_tracepoint){
		.system = "syscalls",
		.name = ev->enter_name,
		.fields = ev->enter_fields,
		.nr_fields = 1 + m->nb_args,
		.fixed_size = 16 + 8 * m->nb_args,
		.print_fmt = fmt,
		.print = enter_print,
		.flags = UKS_TP_OWN_LINE,
	};
	ev->exit = (struct uks_tracepoint){
		.system = "syscalls",
		.name = ev->exit_name,
		.fields = exit_fields,
		.nr_fields = 2,
		.fixed_size = sizeof(struct sys_exit_rec),
		.print_fmt = "UKS_TP_PRINTK(\"0x%lx\", REC->ret)",
		.print = exit_print,
		.flags = UKS_TP_OWN_LINE,
	};
	ret = uks_tracepoint_register(&ev->enter);
	if (!ret)
		ret = uks_tracepoint_register(&ev->exit);
	if (ret)
		return ret;	/* registered halves stay: the registry owns them now */
	by_nr[m->nr] = ev;
	return 0;
}

static void init_events(void)
{
	init_err = uks_tracepoint_register(&raw_enter_tp);
	if (!init_err)
		init_err = uks_tracepoint_register(&raw_exit_tp);
	for (unsigned int i = 0; !init_err && i < __uks_tracee_syscall_table_size; i++) {
		const struct uks_syscall_meta *m = &__uks_tracee_syscall_table[i];

		if (m->nr < 0 || m->nr >= UKS_TRACEE_NR_SYSCALLS)
			continue;
		meta_by_nr[m->nr] = m;
		init_err = register_one(m);
	}
}

/**
 * __uks_tracee_syscall_events_init - register the system-call events
 *
 * Once per process; later calls return the first call's result.
 * Returns 0 or -ENOMEM.
 */
int __uks_tracee_syscall_events_init(void)
{
	pthread_once(&init_once, init_events);
	return init_err;
}

static bool tp_on(const struct uks_tracepoint *tp)
{
	return __atomic_load_n(&tp->key, __ATOMIC_RELAXED) > 0;
}

/**
 * __uks_tracee_syscall_enter_on - is anything attached to @nr's entry?
 * @nr:		x86-64 system-call number
 *
 * True when raw_syscalls:sys_enter or syscalls:sys_enter_<name> has a
 * probe (an enabled event in some instance, or an eprobe on it).
 */
bool __uks_tracee_syscall_enter_on(long nr)
{
	struct sys_events *ev = nr >= 0 && nr < UKS_TRACEE_NR_SYSCALLS ? by_nr[nr] : NULL;

	return tp_on(&raw_enter_tp) || (ev && tp_on(&ev->enter));
}

/** __uks_tracee_syscall_exit_on - as __uks_tracee_syscall_enter_on(), for the exit */
bool __uks_tracee_syscall_exit_on(long nr)
{
	struct sys_events *ev = nr >= 0 && nr < UKS_TRACEE_NR_SYSCALLS ? by_nr[nr] : NULL;

	return tp_on(&raw_exit_tp) || (ev && tp_on(&ev->exit));
}

struct synced {
	uint64_t *enter, *exit;
	long nr;
};

static void mark_all(uint64_t *map, long nr)
{
	for (long i = 0; i < nr; i++)
		map[i / 64] |= 1ull << (i % 64);
}

static void mark_synced(const struct uks_tracepoint *tp, void *arg)
{
	struct synced *e = arg;

	if (tp == &raw_enter_tp)
		mark_all(e->enter, e->nr);
	if (tp == &raw_exit_tp)
		mark_all(e->exit, e->nr);
	for (long i = 0; i < e->nr && i < UKS_TRACEE_NR_SYSCALLS; i++) {
		if (!by_nr[i])
			continue;
		if (tp == &by_nr[i]->enter)
			e->enter[i / 64] |= 1ull << (i % 64);
		if (tp == &by_nr[i]->exit)
			e->exit[i / 64] |= 1ull << (i % 64);
	}
}

/**
 * __uks_tracee_syscall_read - the system calls whose events read the tracee
 * @enter:	bit per number below @nr: a probe that reads the tracee (an
 *		eprobe that dereferences, a stacktrace trigger) on its entry
 *		event (or on raw_syscalls:sys_enter)
 * @exit:	the same for the exit
 *
 * Bits are only set, never cleared.
 */
void __uks_tracee_syscall_read(uint64_t *enter, uint64_t *exit, long nr)
{
	struct synced e = { enter, exit, nr };

	__uks_trace_for_each_sync_tp(mark_synced, &e);
}

/**
 * __uks_tracee_emit_sys_enter - write the entry events of one system call
 * @nr:		number
 * @args:	the six argument registers
 *
 * Returns the number of tracepoints hit (0, 1 or 2).
 */
int __uks_tracee_emit_sys_enter(long nr, const unsigned long args[6])
{
	struct sys_events *ev = nr >= 0 && nr < UKS_TRACEE_NR_SYSCALLS ? by_nr[nr] : NULL;
	int hits = 0;

	if (tp_on(&raw_enter_tp)) {
		struct raw_enter_rec r;

		r.id = nr;
		memcpy(r.args, args, sizeof(r.args));
		uks_tracepoint_emit(&raw_enter_tp, &r.id, sizeof(r) - sizeof(r.ent));
		hits++;
	}
	if (ev && tp_on(&ev->enter)) {
		const struct uks_syscall_meta *m = meta_by_nr[nr];
		struct sys_enter_rec r = { .nr = (int32_t)nr };

		memcpy(r.args, args, sizeof(unsigned long) * m->nb_args);
		uks_tracepoint_emit(&ev->enter, &r.nr,
				    ev->enter.fixed_size - sizeof(struct uks_trace_entry));
		hits++;
	}
	return hits;
}

/**
 * __uks_tracee_emit_sys_exit - write the exit events of one system call
 * @nr:		number (from the entry)
 * @ret:	return value (-errno on failure)
 *
 * Returns the number of tracepoints hit.
 */
int __uks_tracee_emit_sys_exit(long nr, long ret)
{
	struct sys_events *ev = nr >= 0 && nr < UKS_TRACEE_NR_SYSCALLS ? by_nr[nr] : NULL;
	int hits = 0;

	if (tp_on(&raw_exit_tp)) {
		struct raw_exit_rec r = { .id = nr, .ret = ret };

		uks_tracepoint_emit(&raw_exit_tp, &r.id, sizeof(r) - sizeof(r.ent));
		hits++;
	}
	if (ev && tp_on(&ev->exit)) {
		struct sys_exit_rec r = { .nr = (int32_t)nr, .ret = ret };

		uks_tracepoint_emit(&ev->exit, &r.nr, sizeof(r) - sizeof(r.ent));
		hits++;
	}
	return hits;
}
