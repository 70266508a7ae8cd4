// SPDX-License-Identifier: MIT
/*
 * The seccomp filter of spawned commands: SECCOMP_RET_TRACE for the
 * system calls that have an event enabled when the command is spawned,
 * SECCOMP_RET_ALLOW for everything else, so untraced calls never stop.
 *
 * Why seccomp: stepping every system call with PTRACE_SYSCALL costs two
 * stops per call; the filter costs a few BPF instructions per call and
 * stops only where an event will be written.  A filter cannot be changed
 * or removed once installed, so the set is fixed at spawn (TRACEE.md), and
 * a command detached while alive gets ENOSYS from its traced calls (the
 * kernel's rule for SECCOMP_RET_TRACE without a tracer).
 *
 * A call stops when raw_syscalls:sys_enter/sys_exit, or its own
 * syscalls:sys_enter_X/sys_exit_X, has a probe (an enabled event or an
 * eprobe on it: tracepoint key > 0), plus execve/execveat while
 * sched_process_exec is on (the filename is read at entry) and prctl while
 * task_rename is on.  Only x86-64 calls are tracked: the i386 (int 0x80)
 * and x32 ABIs are allowed through, as the kernel's syscall events ignore
 * compat calls on x86.
 *
 * The program is built in the parent (it allocates); the child only runs
 * prctl/seccomp between fork and exec.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/slab.h>
#include <uks/tracee.h>

#include "core/compiler.h"
#include "tracee/events.h"
#include "tracee/internal.h"

#define X32_SYSCALL_BIT	0x40000000u

static bool traced_nr(long nr)
{
	if (__uks_tracee_syscall_enter_on(nr) || __uks_tracee_syscall_exit_on(nr))
		return true;
	if ((nr == SYS_execve || nr == SYS_execveat) &&
	    __uks_tracee_sched_on(UKS_TRACEE_SCHED_EXEC))
		return true;
	return nr == SYS_prctl && __uks_tracee_sched_on(UKS_TRACEE_TASK_RENAME);
}

/**
 * __uks_tracee_seccomp_build - the filter for the events enabled now
 * @prog:	filled with a program from the slab allocator
 * @every_call:	stop at every call, whatever is enabled now (the stop
 *		writes only what is enabled then)
 *
 * Returns 0 or -ENOMEM.  Free with __uks_tracee_seccomp_free().
 */
int __uks_tracee_seccomp_build(struct sock_fprog *prog, bool every_call)
{
	struct sock_filter *f;
	unsigned int n = 0, nr_traced = 0;
	/* Everything at once when the raw events want every call. */
	bool all = every_call || __uks_tracee_syscall_enter_on(-1) ||
		   __uks_tracee_syscall_exit_on(-1);

	for (long nr = 0; !all && nr < UKS_TRACEE_NR_SYSCALLS; nr++)
		nr_traced += traced_nr(nr);
	if (nr_traced > 250)	/* jump offsets are 8 bits: trace all, filter at emit */
		all = true;
	f = uks_kcalloc(8 + nr_traced, sizeof(*f));
	if (!f)
		return -ENOMEM;
	/* arch != x86-64: allow */
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	/* x32: allow */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, X32_SYSCALL_BIT, 0, 1);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	if (all) {
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
	} else {
		unsigned int left = nr_traced;

		/* One compare per traced call, jumping to the TRACE return at the end. */
		for (long nr = 0; nr < UKS_TRACEE_NR_SYSCALLS; nr++) {
			if (!traced_nr(nr))
				continue;
			left--;
			f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K,
							      (unsigned int)nr, (unsigned char)(left + 1), 0);
		}
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
		f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE);
	}
	prog->len = (unsigned short)n;
	prog->filter = f;
	return 0;
}

/** __uks_tracee_seccomp_free - free a program from __uks_tracee_seccomp_build() */
void __uks_tracee_seccomp_free(struct sock_fprog *prog)
{
	uks_kfree(prog->filter);
	prog->filter = NULL;
}

/**
 * __uks_tracee_seccomp_install - install @prog in the calling process
 *
 * For the spawned child between fork and exec: async-signal-safe.  Tries
 * without no_new_privs first (a privileged tracer's child keeps setuid
 * semantics), then sets it.  Returns 0 or -errno.
 */
int __uks_tracee_seccomp_install(const struct sock_fprog *prog)
{
	if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) == 0)
		return 0;
	if (errno != EACCES)
		return -errno;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, prog) ? -errno : 0;
}

/* Copy the program for the events enabled now (or every call) to @buf. */
static ssize_t filter_copy(void *buf, size_t len, bool every_call)
{
	struct sock_fprog prog;
	size_t bytes;
	int ret = __uks_tracee_seccomp_build(&prog, every_call);

	if (ret)
		return ret;
	bytes = (size_t)prog.len * sizeof(*prog.filter);
	if (bytes > len) {
		__uks_tracee_seccomp_free(&prog);
		return -ENOSPC;
	}
	memcpy(buf, prog.filter, bytes);
	__uks_tracee_seccomp_free(&prog);
	return (ssize_t)bytes;
}

/**
 * uks_tracee_filter - the seccomp program for the events enabled now
 * @buf:	where to write it (an array of struct sock_filter)
 * @len:	bytes at @buf
 *
 * For a process that a session will attach to with
 * uks_tracee_attach_filtered(): it installs the program itself with
 * uks_tracee_install_filter() once attached, and from then on stops only
 * at the calls whose events are enabled, like a spawned command.
 * Returns the program's size in bytes, -ENOSPC or -ENOMEM.
 */
UKS_EXPORT ssize_t uks_tracee_filter(void *buf, size_t len)
{
	return filter_copy(buf, len, false);
}

/**
 * uks_tracee_filter_every_syscall - the seccomp program that stops at every call
 * @buf:	where to write it (an array of struct sock_filter)
 * @len:	bytes at @buf
 *
 * As uks_tracee_filter(), for a process whose syscall events may be
 * enabled after it started (UKS_TRACEE_EVERY_SYSCALL): every x86-64 call
 * stops once, and the stop writes what is enabled then.
 * Returns the program's size in bytes, -ENOSPC or -ENOMEM.
 */
UKS_EXPORT ssize_t uks_tracee_filter_every_syscall(void *buf, size_t len)
{
	return filter_copy(buf, len, true);
}

/**
 * uks_tracee_install_filter - install a program from uks_tracee_filter()
 * in the calling process
 *
 * Only once a session has attached with uks_tracee_attach_filtered(): a
 * traced call without a tracer fails with ENOSYS.  Returns 0 or -errno
 * (-EINVAL for a malformed program).
 */
UKS_EXPORT int uks_tracee_install_filter(const void *prog, size_t len)
{
	struct sock_fprog fp = { (unsigned short)(len / sizeof(struct sock_filter)),
				 (struct sock_filter *)prog };

	if (!len || len % sizeof(struct sock_filter) ||
	    len / sizeof(struct sock_filter) > BPF_MAXINSNS)
		return -EINVAL;
	return __uks_tracee_seccomp_install(&fp);
}
