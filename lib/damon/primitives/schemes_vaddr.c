// SPDX-License-Identifier: MIT
/*
 * DAMOS actions on another process: 6.12's vaddr apply_scheme, through
 * process_madvise(2) on the pidfd the vaddr primitives hold for each
 * target from the start of monitoring (so a reused pid is never advised).
 *
 * willneed, cold and pageout are MADV_WILLNEED, MADV_COLD and
 * MADV_PAGEOUT; hugepage is MADV_COLLAPSE (the kernel's vaddr uses
 * MADV_HUGEPAGE, which process_madvise() does not take; a collapse is what
 * that hint asks khugepaged for); nohugepage is MADV_NOHUGEPAGE, which
 * process_madvise() takes on no kernel up to 6.18 for another process.
 * Which behaviours the running kernel takes is probed once, with an empty
 * range of another process: the behaviour check comes before any work in
 * process_madvise(), so an unsupported one fails with EINVAL there and the
 * scheme is refused with -EINVAL, the errno the kernel gives for an
 * unsupported advice.
 *
 * As the kernel's damos_madvise(), the region's pages are advised as one
 * range and the action counts as applied (the whole region) only when the
 * call succeeded for all of it; a range over a hole fails with ENOMEM
 * after advising the mapped parts, as madvise() in the target would.
 *
 * The synthetic primitive "applies" every action (its space is
 * simulated), so quotas and stats can be tested deterministically; self
 * applies none (its pages are taken away while sampled).
 *
 * Lock order: none; called by the monitor thread under ctx->schemes_lock.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/compiler.h"
#include "core/ptrace_access.h"
#include "damon/damon.h"

#ifndef SYS_process_madvise
#define SYS_process_madvise 440
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef MADV_COLD
#define MADV_COLD 20
#endif
#ifndef MADV_PAGEOUT
#define MADV_PAGEOUT 21
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

static int action_behavior(unsigned int action)
{
	switch (action) {
	case UKS_DAMOS_WILLNEED:
		return MADV_WILLNEED;
	case UKS_DAMOS_COLD:
		return MADV_COLD;
	case UKS_DAMOS_PAGEOUT:
		return MADV_PAGEOUT;
	case UKS_DAMOS_HUGEPAGE:
		return MADV_COLLAPSE;
	case UKS_DAMOS_NOHUGEPAGE:
		return MADV_NOHUGEPAGE;
	default:
		return -1;
	}
}

/* Per action: 0 not probed, 1 taken, else the negated errno + 1000. */
static _Atomic int probed[UKS_DAMOS_NR_ACTIONS];

/*
 * Whether process_madvise() takes @behavior for another process: an empty
 * range of our parent.  The behaviour is checked before the caller's
 * rights and the range (so EPERM or success both mean "taken"); on our
 * own process 6.13+ takes every madvise() behaviour, hence another one.
 */
static int probe_behavior(int behavior)
{
	struct iovec iov = { .iov_base = NULL, .iov_len = 0 };
	pid_t other = getppid() > 0 ? getppid() : 1;
	int pidfd = (int)syscall(SYS_pidfd_open, other, 0);
	long ret;
	int err;

	if (pidfd < 0)
		return -errno;
	ret = syscall(SYS_process_madvise, pidfd, &iov, 1UL, behavior, 0U);
	err = ret < 0 ? -errno : 0;
	close(pidfd);
	return err == -EINVAL || err == -ENOSYS ? err : 0;
}

int __uks_damos_action_supported(unsigned int action, char *why, size_t len)
{
	int v, err;

	if (action >= UKS_DAMOS_NR_ACTIONS) {
		if (why && len)
			snprintf(why, len, "no action %u", action);
		return -EINVAL;
	}
	if (action >= UKS_DAMOS_LRU_PRIO && action <= UKS_DAMOS_MIGRATE_COLD) {
		if (why && len)
			snprintf(why, len, "%s is an action of physical addresses (paddr); "
				 "DAMON here monitors virtual addresses", uks_damos_action_name(action));
		return -EINVAL;
	}
	if (action == UKS_DAMOS_STAT)
		return 0;
	v = atomic_load(&probed[action]);
	if (!v) {
		err = probe_behavior(action_behavior(action));
		v = err ? err - 1000 : 1;
		atomic_store(&probed[action], v);
	}
	if (v == 1)
		return 0;
	err = v + 1000;
	if (why && len)
		snprintf(why, len, "the running kernel's process_madvise() does not take %s (%s)",
			 action == UKS_DAMOS_HUGEPAGE ? "MADV_COLLAPSE" :
			 action == UKS_DAMOS_NOHUGEPAGE ? "MADV_NOHUGEPAGE" :
			 uks_damos_action_name(action), strerror(-err));
	return -EINVAL;
}

unsigned long __uks_damos_va_apply(struct uks_damon_ctx *ctx, struct damon_target *t,
				   struct damon_region *r, unsigned int action)
{
	struct vaddr_target *vt = t->pstate;
	unsigned long page = (unsigned long)getpagesize();
	unsigned long start = DAMON_ALIGN(r->ar.start, page);
	unsigned long len = DAMON_ALIGN(damon_sz_region(r), page);
	struct iovec iov = { .iov_base = (void *)start, .iov_len = len };
	int behavior = action_behavior(action);
	long ret;

	(void)ctx;
	if (!vt || vt->pidfd < 0 || behavior < 0 || !len)
		return 0;
	ret = syscall(SYS_process_madvise, vt->pidfd, &iov, 1UL, behavior, 0U);
	return ret == (long)len ? len : 0;
}

/**
 * uks_damon_may_act_on - may this process monitor @pid and advise its memory?
 * @pid:	the process
 *
 * The kernel's ptrace access rule (what /proc/PID/pagemap and
 * process_madvise() ask) with this process's credentials, checked before
 * monitoring starts so that a refusal is told at once, not as a scheme
 * that never applies.  process_madvise() also wants CAP_SYS_NICE for
 * another process; without it the actions fail (the stats show tried
 * bytes, none applied).
 * Return: 0, -EPERM, -ESRCH.
 */
UKS_EXPORT int uks_damon_may_act_on(pid_t pid)
{
	struct uks_peer self = { .pid = getpid(), .uid = geteuid(), .gid = getegid() };

	if (pid <= 0)
		return -ESRCH;
	return __uks_ptrace_may_access(&self, pid);
}
