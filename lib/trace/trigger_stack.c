// SPDX-License-Identifier: MIT
/*
 * The stacktrace trigger and the ftrace:kernel_stack event it writes (ID
 * 4, the kernel's TRACE_STACK), printed as the kernel prints it:
 *
 *	bash-1234  [001] .....  100.000001: <stack trace>
 *	 => handle_request
 *	 => main
 *
 * The stack is the one of the thread that hit the event, taken with
 * glibc's backtrace() and named with dladdr() when printed: exported
 * (dynamic) symbols only, "0x%08lx" for an address without one.  The
 * record is the kernel's: the number of entries, then the addresses.
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <string.h>

#include "trace/trigger.h"

#define UKS_TRACE_STACK_ID	4
#define STACK_MAX		32	/* entries kept */
/* Frames of the trigger machinery itself: stack_fire, fire, post_call. */
#define STACK_SKIP		3

struct stack_entry {
	struct uks_trace_entry ent;
	int size;			/* entries in caller[] */
	unsigned long caller[];
};

static const struct uks_event_field stack_fields[] = {
	{ "int", "size", 8, 4, true, UKS_FILTER_OTHER },
	{ "unsigned long[8]", "caller", 16, 64, false, UKS_FILTER_OTHER },
};

static struct uks_event_call *stack_call;

static void print_sym(struct uks_seq *s, unsigned long ip)
{
	const ElfW(Sym) *sym = NULL;
	Dl_info info;

	if (!ip) {
		seq_putc(s, '0');
		return;
	}
	if (dladdr1((void *)ip, &info, (void **)&sym, RTLD_DL_SYMENT) && info.dli_sname &&
	    *info.dli_sname)
		seq_puts(s, info.dli_sname);
	else
		seq_printf(s, "0x%08lx", ip);
}

static void stack_print(struct uks_seq *s, const struct uks_event_call *call, const void *rec,
			size_t len)
{
	const struct stack_entry *e = rec;
	size_t n = len > sizeof(*e) ? (len - sizeof(*e)) / sizeof(e->caller[0]) : 0;

	if (e->size >= 0 && (size_t)e->size < n)
		n = (size_t)e->size;
	seq_puts(s, "<stack trace>");
	for (size_t i = 0; i < n && e->caller[i] != (unsigned long)-1; i++) {
		seq_puts(s, "\n => ");
		print_sym(s, e->caller[i]);
	}
}

static void stack_print_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	seq_puts(s, "\"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\" \"\\t=> %ps\\n\\t=> %ps\\n\\t=> %ps\\n\" "
		    "\"\\t=> %ps\\n\\t=> %ps\\n\", (void *)REC->caller[0], (void *)REC->caller[1], "
		    "(void *)REC->caller[2], (void *)REC->caller[3], (void *)REC->caller[4], "
		    "(void *)REC->caller[5], (void *)REC->caller[6], (void *)REC->caller[7]");
}

/**
 * __uks_trace_stack_init - add the ftrace:kernel_stack call
 * Caller holds event_mutex.  Returns 0 or -ENOMEM.
 */
int __uks_trace_stack_init(void)
{
	struct uks_event_call *call;

	if (stack_call)
		return 0;
	call = __uks_trace_call_alloc("ftrace", "kernel_stack", stack_fields, 2);
	if (!call)
		return -ENOMEM;
	call->id = UKS_TRACE_STACK_ID;
	call->flags = UKS_CALL_IGNORE_ENABLE;
	call->print = stack_print;
	call->print_fmt = stack_print_fmt;
	if (__uks_trace_call_add(call)) {
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	stack_call = call;
	return 0;
}

/* The kernel's __trace_stack(): a kernel_stack record in the event's instance. */
static __attribute__((noinline)) void stack_fire(struct uks_trigger *t)
{
	struct uks_trace *tr = t->file->tr;
	void *frames[STACK_MAX + STACK_SKIP];
	struct stack_entry *e;
	unsigned int cpu;
	int n = backtrace(frames, STACK_MAX + STACK_SKIP) - STACK_SKIP;

	if (n <= 0)
		return;
	e = __uks_trace_rb_reserve(tr->rb, sizeof(*e) + (size_t)n * sizeof(e->caller[0]), &cpu);
	if (!e)
		return;
	__uks_trace_fill_entry(tr, &e->ent, UKS_TRACE_STACK_ID);
	e->size = n;
	for (int i = 0; i < n; i++)
		e->caller[i] = (unsigned long)frames[i + STACK_SKIP];
	__uks_trace_rb_commit(tr->rb, e);
}

/* backtrace() loads the unwinder on its first call: not on the hit path. */
static int stack_init(struct uks_trigger *t)
{
	void *frame;

	(void)t;
	backtrace(&frame, 1);
	return 0;
}

const struct uks_trigger_cmd __uks_trigger_stacktrace_cmd = {
	.name = "stacktrace", .type = UKS_TRIGGER_STACKTRACE, .post = true,
	.init = stack_init, .fire = stack_fire,
};
