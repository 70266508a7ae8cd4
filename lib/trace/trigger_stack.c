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
 *
 * An event written for another process stopped at it (a system call of a
 * traced program, lib/tracee) has that process's stack, which lib/tracee
 * unwinds (origin.h): it goes in an ftrace:user_stack record (ID 12, the
 * kernel's TRACE_USER_STACK, 8 entries), printed as the kernel prints
 * one, "<user stack trace>" then " =>  <%016lx>" per address, or with
 * options/sym-userobj and the process alive, its mapping's file and the
 * offset in the mapping, " => /usr/bin/prog[+0x1139]".  The kernel records
 * its own stack there (the system call's path in the kernel); the
 * traced program's is the one that says who made the call.  Those
 * tracepoints keep the program stopped while their events are written
 * (writer_sync.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#include "trace/origin.h"
#include "trace/trigger.h"
#include "trace/writer_sync.h"

#define UKS_TRACE_STACK_ID	4
#define UKS_TRACE_USER_STACK_ID	12
#define USER_STACK_ENTRIES	8	/* FTRACE_STACK_ENTRIES */
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

struct user_stack_entry {
	struct uks_trace_entry ent;
	unsigned int tgid;
	unsigned long caller[USER_STACK_ENTRIES];
};

static const struct uks_event_field user_stack_fields[] = {
	{ "unsigned int", "tgid", 8, 4, false, UKS_FILTER_OTHER },
	{ "unsigned long[8]", "caller", 16, 64, false, UKS_FILTER_OTHER },
};

static struct uks_event_call *stack_call, *user_stack_call;

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

/*
 * The mapping of @tgid holding @ip, as " => " follows it with
 * options/sym-userobj: "FILE[+0xOFF]", OFF from the mapping's start.
 * False when the process or a file mapping of @ip is gone.
 */
static bool print_user_obj(struct uks_seq *s, int tgid, unsigned long ip)
{
	char path[64], line[512], file[400];
	unsigned long start, end;
	bool found = false;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", tgid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		file[0] = '\0';
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %399[^\n]", &start, &end, file) < 2 ||
		    ip < start || ip >= end)
			continue;
		if (file[0] == '/') {
			seq_printf(s, "%s[+0x%lx]", file, ip - start);
			found = true;
		}
		break;
	}
	fclose(f);
	return found;
}

static void user_stack_print(struct uks_seq *s, const struct uks_event_call *call,
			     const void *rec, size_t len)
{
	const struct user_stack_entry *e = rec;
	const struct uks_trace *tr = __uks_trace_printing;
	bool obj = tr && trace_opt(tr, UKS_OPT_SYM_USEROBJ);

	(void)call;
	seq_puts(s, "<user stack trace>");
	if (len < sizeof(*e))
		return;
	for (int i = 0; i < USER_STACK_ENTRIES && e->caller[i]; i++) {
		bool named;

		seq_puts(s, "\n => ");
		named = obj && print_user_obj(s, (int)e->tgid, e->caller[i]);
		if (!named || trace_opt(tr, UKS_OPT_SYM_ADDR))
			seq_printf(s, " <%016lx>", e->caller[i]);
	}
}

static int add_call(struct uks_event_call **slot, const char *name,
		    const struct uks_event_field *fields, int id,
		    void (*print)(struct uks_seq *, const struct uks_event_call *, const void *, size_t))
{
	struct uks_event_call *call;

	if (*slot)
		return 0;
	call = __uks_trace_call_alloc("ftrace", name, fields, 2);
	if (!call)
		return -ENOMEM;
	call->id = id;
	call->flags = UKS_CALL_IGNORE_ENABLE;
	call->print = print;
	call->print_fmt = stack_print_fmt;
	if (__uks_trace_call_add(call)) {
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	*slot = call;
	return 0;
}

/**
 * __uks_trace_stack_init - add the ftrace:kernel_stack and user_stack calls
 * Caller holds event_mutex.  Returns 0 or -ENOMEM.
 */
int __uks_trace_stack_init(void)
{
	int ret = add_call(&stack_call, "kernel_stack", stack_fields, UKS_TRACE_STACK_ID,
			   stack_print);

	return ret ? ret : add_call(&user_stack_call, "user_stack", user_stack_fields,
				    UKS_TRACE_USER_STACK_ID, user_stack_print);
}

/* The stopped process's stack the event was written for; false if there is none. */
static bool user_stack_fire(struct uks_trace *tr)
{
	unsigned long ips[USER_STACK_ENTRIES];
	struct user_stack_entry *e;
	unsigned int cpu;
	int n;

	if (__uks_trace_writer_is_running())
		return true;		/* resumed already: its stack moved on */
	n = __uks_trace_origin_stack(ips, USER_STACK_ENTRIES);
	if (n == -ENOENT)
		return false;
	if (n <= 0)
		return true;
	e = __uks_trace_rb_reserve(tr->rb, sizeof(*e), &cpu);
	if (!e)
		return true;
	__uks_trace_fill_entry(tr, &e->ent, UKS_TRACE_USER_STACK_ID);
	e->tgid = (unsigned int)__uks_trace_current_tgid();
	memset(e->caller, 0, sizeof(e->caller));
	memcpy(e->caller, ips, (size_t)n * sizeof(ips[0]));
	__uks_trace_rb_commit(tr->rb, e);
	return true;
}

/* The kernel's __trace_stack(): a kernel_stack record in the event's instance. */
static __attribute__((noinline)) void stack_fire(struct uks_trigger *t)
{
	struct uks_trace *tr = t->file->tr;
	void *frames[STACK_MAX + STACK_SKIP];
	struct stack_entry *e;
	unsigned int cpu;
	int n;

	if (user_stack_fire(tr))
		return;
	n = backtrace(frames, STACK_MAX + STACK_SKIP) - STACK_SKIP;
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

/*
 * backtrace() loads the unwinder on its first call: not on the hit path.
 * A traced program stays stopped while the event's records are written,
 * so its stack can be read.
 */
static int stack_init(struct uks_trigger *t)
{
	const struct uks_tracepoint *tp = t->file->call->tp;
	void *frame;

	backtrace(&frame, 1);
	return tp ? __uks_trace_sync_tp_add(tp) : 0;
}

static void stack_release(struct uks_trigger *t)
{
	const struct uks_tracepoint *tp = t->file->call->tp;

	if (tp)
		__uks_trace_sync_tp_del(tp);
}

const struct uks_trigger_cmd __uks_trigger_stacktrace_cmd = {
	.name = "stacktrace", .type = UKS_TRIGGER_STACKTRACE, .post = true,
	.init = stack_init, .release = stack_release, .fire = stack_fire,
};
