// SPDX-License-Identifier: MIT
/*
 * What the DAMON primitives for real processes share (5.15's vaddr.c
 * without the page-table walks, which user space cannot do).
 *
 * A target's id is a pid, or a thread id (5.15 takes any task: its
 * threads share the mm).  At init each target gets a pidfd, its struct
 * pid reference, so a reused pid is never mistaken for it: target_valid
 * is 5.15's "the pid still has a task", i.e. a signal 0 through the pidfd
 * finds the task, which a zombie still has until it is reaped (a pidfd is
 * readable from the exit, so poll() would stop too early).  A thread id
 * needs PIDFD_THREAD (Linux 6.9); before it, the pidfd is the thread
 * group's, and the target stays valid until the whole process is gone.
 * Each target also gets its /proc/PID/pagemap and clear_refs files; its
 * regions come from
 * /proc/PID/maps by the three-region rules (regions.c), and are updated
 * from it every update interval.  A process that cannot be opened (gone,
 * or not ours to trace) is simply an invalid target, as a dead pid is in
 * 5.15; when every target is invalid the monitor stops.
 *
 * Lock order: none; only the monitor thread touches this state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/log.h"
#include "core/proc_status.h"
#include "damon/damon.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

static int open_proc(pid_t pid, const char *file, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, file);
	return open(path, flags | O_CLOEXEC);
}

static int sys_pidfd_open(pid_t pid, unsigned int flags)
{
	return (int)syscall(SYS_pidfd_open, pid, flags);
}

/* A pidfd of task @pid, a thread group leader or (5.15 allows it) not. */
static int task_pidfd(pid_t pid)
{
	int fd = sys_pidfd_open(pid, 0);
	pid_t tgid;

	if (fd >= 0 || (errno != ENOENT && errno != EINVAL))
		return fd;
	fd = sys_pidfd_open(pid, PIDFD_THREAD);
	if (fd >= 0 || errno != EINVAL)
		return fd;
	tgid = proc_status_pid(pid, "Tgid", 0);	/* before Linux 6.9: the thread's process */
	return tgid > 0 ? sys_pidfd_open(tgid, 0) : -1;
}

static struct vaddr_target *va_open(pid_t pid)
{
	struct vaddr_target *vt = uks_kzalloc(sizeof(*vt));

	if (!vt)
		return NULL;
	vt->pid = pid;
	vt->pidfd = task_pidfd(pid);
	vt->pagemap_fd = open_proc(pid, "pagemap", O_RDONLY);
	vt->clear_refs_fd = open_proc(pid, "clear_refs", O_WRONLY);
	if (vt->pidfd < 0 || vt->pagemap_fd < 0)
		pr_info("damon: cannot monitor pid %d: %s", (int)pid, strerror(errno));
	return vt;
}

static void va_close(void *pstate)
{
	struct vaddr_target *vt = pstate;

	__uks_damon_fd_close(vt->pidfd);
	__uks_damon_fd_close(vt->pagemap_fd);
	__uks_damon_fd_close(vt->clear_refs_fd);
	uks_kfree(vt);
}

static int va_three_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
			    struct damon_addr_range regions[3])
{
	struct damon_addr_range *maps;
	unsigned int nr;
	int ret = __uks_damon_read_maps((pid_t)t->id, &maps, &nr);

	if (ret)
		return ret;
	ret = __uks_damon_three_regions_of(maps, nr, ctx->min_region, regions);
	uks_kfree(maps);
	return ret;
}

static int va_init(struct uks_damon_ctx *ctx, bool fixed)
{
	struct damon_addr_range regions[3];
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		if (!t->pstate) {
			t->pstate = va_open((pid_t)t->id);
			t->pstate_free = va_close;
		}
		if (t->nr_regions || fixed)
			continue;
		if (va_three_regions(ctx, t, regions)) {
			pr_debug("Failed to get three regions of pid %lu", t->id);
			continue;
		}
		__uks_damon_init_regions_of(ctx, t, regions);
	}
	return 0;
}

int __uks_damon_va_init(struct uks_damon_ctx *ctx)
{
	return va_init(ctx, false);
}

/*
 * The fixed-range primitives (the kernel's fvaddr): the regions are the
 * ones the caller gave each target, never fitted to its mappings (no
 * update); a target given none is not monitored.
 */
int __uks_damon_fva_init(struct uks_damon_ctx *ctx)
{
	return va_init(ctx, true);
}

/*
 * The self primitive: the targets' fds live inside the program, moved high
 * in the monitor's own fd table (@only_move) or hidden in the program's
 * (fd_guard.c).
 */
void __uks_damon_va_hide_fds(struct uks_damon_ctx *ctx, bool only_move)
{
	int (*move)(int fd) = only_move ? __uks_damon_fd_move_high : __uks_damon_fd_hide;
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		struct vaddr_target *vt = t->pstate;

		if (!vt)
			continue;
		vt->pidfd = move(vt->pidfd);
		vt->pagemap_fd = move(vt->pagemap_fd);
		vt->clear_refs_fd = move(vt->clear_refs_fd);
	}
}

void __uks_damon_va_update(struct uks_damon_ctx *ctx)
{
	struct damon_addr_range regions[3];
	struct damon_target *t;

	damon_for_each_target(t, ctx)
		if (!va_three_regions(ctx, t, regions))
			__uks_damon_apply_three_regions(ctx, t, regions);
}

bool __uks_damon_va_target_valid(struct uks_damon_ctx *ctx, struct damon_target *t)
{
	struct vaddr_target *vt = t->pstate;

	if (!vt || vt->pidfd < 0)
		return false;
	/* ESRCH once reaped; EPERM: there, but not ours to signal */
	return syscall(SYS_pidfd_send_signal, vt->pidfd, 0, NULL, 0) == 0 || errno == EPERM;
}

void __uks_damon_va_cleanup(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		if (t->pstate)
			va_close(t->pstate);
		t->pstate = NULL;
	}
}

void __uks_damon_va_pick_sampling_addrs(struct uks_damon_ctx *ctx, struct damon_target *t)
{
	struct damon_region *r;

	damon_for_each_region(r, t)
		r->sampling_addr = __uks_damon_rand(ctx, r->ar.start, r->ar.end);
}

/* Write @what ("1" young bits, "4" soft-dirty) to the target's clear_refs. */
/* The monotonic clock, for the time a check holds the target's page tables. */
uint64_t __uks_damon_va_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The walk holds the target's page tables: its time is the target's stall (tune.c). */
int __uks_damon_va_clear_refs(struct vaddr_target *vt, const char *what)
{
	uint64_t t0 = __uks_damon_va_now_ns();
	int ret = 0;

	if (vt->clear_refs_fd < 0)
		return -EBADF;
	if (pwrite(vt->clear_refs_fd, what, strlen(what), 0) < 0)
		ret = -errno;
	if (__uks_damon_current)
		__uks_damon_cost_stall(__uks_damon_current, __uks_damon_va_now_ns() - t0);
	return ret;
}
