// SPDX-License-Identifier: MIT
/*
 * The user stack of a tracee stopped at a system call, for the stacktrace
 * triggers of its events (lib/trace/trigger_stack.c, through origin.h).
 *
 * Unwound with elfutils' libdw, from the call's instruction, stack and
 * frame pointers, by the CFI (.eh_frame, or debug info where installed)
 * of the modules mapped in the process, its memory read with
 * process_vm_readv(): Debian's programs have no frame pointers, so a
 * frame-pointer walk would stop at the first frame.  A process's module
 * list (one Dwfl) is kept for the next stacks of the same process, for
 * USTACK_CACHE processes, and forgotten at its exec and exit.  Without
 * libdw the stack is the calling instruction alone.
 *
 * Lock order: none (the session's thread only).
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <sys/user.h>

#include <uks/slab.h>

#include "config.h"
#include "tracee/internal.h"

#if UKS_HAVE_LIBDW
#include <elfutils/libdwfl.h>

#define USTACK_CACHE	8
#define DWARF_REG_RBP	6
#define DWARF_REG_RSP	7

/* One process's modules, and the stop being unwound (the Dwfl's argument). */
struct ustack_proc {
	Dwfl *dwfl;
	pid_t tgid;
	pid_t tid;
	unsigned long ip, sp, bp;
	bool have_bp;
	unsigned long used;	/* for replacement: the least recently used goes */
};

struct uks_tracee_ustack {
	struct ustack_proc procs[USTACK_CACHE];
	unsigned long clock;
};

static pid_t next_thread(Dwfl *dwfl, void *arg, void **thread_arg)
{
	struct ustack_proc *p = arg;

	(void)dwfl;
	if (*thread_arg)
		return 0;		/* one thread: the stopped one */
	*thread_arg = p;
	return p->tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *arg, void **thread_arg)
{
	struct ustack_proc *p = arg;

	(void)dwfl;
	if (tid != p->tid)
		return false;
	*thread_arg = p;
	return true;
}

static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *arg)
{
	struct ustack_proc *p = arg;
	struct iovec local = { result, sizeof(*result) };
	struct iovec remote = { (void *)(uintptr_t)addr, sizeof(*result) };

	(void)dwfl;
	return process_vm_readv(p->tid, &local, 1, &remote, 1, 0) == sizeof(*result);
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	struct ustack_proc *p = thread_arg;
	Dwarf_Word sp = p->sp, bp = p->bp;

	if (p->have_bp && !dwfl_thread_state_registers(thread, DWARF_REG_RBP, 1, &bp))
		return false;
	if (!dwfl_thread_state_registers(thread, DWARF_REG_RSP, 1, &sp))
		return false;
	dwfl_thread_state_register_pc(thread, p->ip);
	return true;
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
	.next_thread = next_thread,
	.get_thread = get_thread,
	.memory_read = memory_read,
	.set_initial_registers = set_initial_registers,
};

static const Dwfl_Callbacks proc_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

static void proc_drop(struct ustack_proc *p)
{
	if (p->dwfl)
		dwfl_end(p->dwfl);
	memset(p, 0, sizeof(*p));
}

/* @tgid's modules, reported now if they are not kept; NULL if that fails. */
static struct ustack_proc *proc_get(struct uks_tracee_ustack *u, pid_t tgid)
{
	struct ustack_proc *p = &u->procs[0];

	for (int i = 0; i < USTACK_CACHE; i++) {
		if (u->procs[i].dwfl && u->procs[i].tgid == tgid) {
			p = &u->procs[i];
			p->used = ++u->clock;
			return p;
		}
		if (u->procs[i].used < p->used)
			p = &u->procs[i];
	}
	proc_drop(p);
	p->dwfl = dwfl_begin(&proc_callbacks);
	if (!p->dwfl)
		return NULL;
	p->tgid = tgid;
	if (dwfl_linux_proc_report(p->dwfl, tgid) || dwfl_report_end(p->dwfl, NULL, NULL) ||
	    !dwfl_attach_state(p->dwfl, NULL, tgid, &thread_callbacks, p)) {
		proc_drop(p);
		return NULL;
	}
	p->used = ++u->clock;
	return p;
}

struct walk {
	unsigned long *ips;
	int max, n;
};

static int frame_cb(Dwfl_Frame *frame, void *arg)
{
	struct walk *w = arg;
	Dwarf_Addr pc;

	if (!dwfl_frame_pc(frame, &pc, NULL) || !pc)
		return DWARF_CB_ABORT;
	w->ips[w->n++] = (unsigned long)pc;
	return w->n < w->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

static int unwind(struct uks_tracee_session *s, const struct uks_tracee_ustack_req *r,
		  unsigned long *ips, int max)
{
	struct uks_tracee_ustack *u = s->ustack;
	struct user_regs_struct regs;
	struct walk w = { ips, max, 0 };
	struct ustack_proc *p;

	if (!u) {
		u = s->ustack = uks_kzalloc(sizeof(*u));
		if (!u)
			return -ENOMEM;
	}
	p = proc_get(u, r->tgid);
	if (!p)
		return -ESRCH;
	p->tid = r->tid;
	p->ip = r->ip;
	p->sp = r->sp;
	/* The frame pointer, for frames whose CFI uses it (a keeper sends it with the stop). */
	p->have_bp = !__uks_tracee_ptrace(s, PTRACE_GETREGS, r->tid, 0, &regs) && regs.rbp;
	p->bp = p->have_bp ? regs.rbp : 0;
	dwfl_getthread_frames(p->dwfl, r->tid, frame_cb, &w);
	if (!w.n) {
		ips[0] = r->ip;		/* at least where it called from */
		w.n = 1;
	}
	return w.n;
}

void __uks_tracee_ustack_forget(struct uks_tracee_session *s, pid_t tgid)
{
	struct uks_tracee_ustack *u = s->ustack;

	for (int i = 0; u && i < USTACK_CACHE; i++)
		if (u->procs[i].dwfl && u->procs[i].tgid == tgid)
			proc_drop(&u->procs[i]);
}

void __uks_tracee_ustack_free(struct uks_tracee_session *s)
{
	struct uks_tracee_ustack *u = s->ustack;

	for (int i = 0; u && i < USTACK_CACHE; i++)
		proc_drop(&u->procs[i]);
	uks_kfree(u);
	s->ustack = NULL;
}

#else /* !UKS_HAVE_LIBDW */

static int unwind(struct uks_tracee_session *s, const struct uks_tracee_ustack_req *r,
		  unsigned long *ips, int max)
{
	(void)s;
	(void)max;
	ips[0] = r->ip;
	return 1;
}

void __uks_tracee_ustack_forget(struct uks_tracee_session *s, pid_t tgid)
{
	(void)s;
	(void)tgid;
}

void __uks_tracee_ustack_free(struct uks_tracee_session *s)
{
	(void)s;
}

#endif

/**
 * __uks_tracee_ustack - the stack source of a stopped tracee (origin.h)
 * @arg:	its struct uks_tracee_ustack_req
 */
int __uks_tracee_ustack(void *arg, unsigned long *ips, int max)
{
	const struct uks_tracee_ustack_req *r = arg;

	if (max <= 0 || !r->ip)
		return 0;
	return unwind(r->s, r, ips, max);
}
