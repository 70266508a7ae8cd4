// SPDX-License-Identifier: MIT
/*
 * DAMON "vaddr-sd" primitive: accesses of a real process from its
 * soft-dirty bits.
 *
 * 5.15's vaddr primitive clears the accessed bit of each sampled page
 * (mkold) and reads it back (young).  User space has no such per-page
 * control over another process, but soft-dirty comes close for writes:
 * prepare writes "4" to /proc/PID/clear_refs (which clears the soft-dirty
 * bit of every page of the process and write-protects them), check reads
 * each sampling address's pagemap entry and counts the page as accessed
 * if bit 55 (soft-dirty) is set again.  What it sees: writes only, per
 * 4 KiB page; reads are invisible.  The clear costs the target one minor
 * fault on the first write to each page per sampling interval.
 *
 * The clear walks every page table of the process, so prepare first reads
 * the sampled pages' entries and clears only if one of them is dirty
 * already.  If none is, each will read dirty at check exactly when it was
 * written since prepare, the answer a clear would have given, and the
 * walk is saved: a process that wrote none of its sampled pages costs a
 * pagemap read per region instead of a walk per sample.  A busy process
 * still gets a clear nearly every sample.  A new mapping reads dirty
 * (VM_SOFTDIRTY) until a clear, so it triggers one.
 *
 * As in 5.15, a sampling address on the same page as the one checked just
 * before reuses that answer.
 *
 * Kernels built without CONFIG_MEM_SOFT_DIRTY accept the clear_refs write
 * but never set bit 55: available() finds that out on a fresh page of our
 * own (new anonymous pages start soft-dirty) and says so.
 *
 * Lock order: none (monitor thread only; the probe runs once).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "damon/damon.h"

#define PM_SOFT_DIRTY	(1ULL << 55)
/* pagemap has one entry per kernel page. */
#define PAGE_SZ		((unsigned long)getpagesize())

static int sd_probe_result;
static char sd_probe_why[160];
static pthread_once_t sd_probe_once = PTHREAD_ONCE_INIT;

static void sd_probe(void)
{
	volatile char *p;
	uint64_t e = 0;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		sd_probe_result = -EOPNOTSUPP;
		snprintf(sd_probe_why, sizeof(sd_probe_why),
			 "no /proc/PID/pagemap (CONFIG_PROC_PAGE_MONITOR)");
		return;
	}
	p = mmap(NULL, PAGE_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) {
		sd_probe_result = -errno;
		close(fd);
		return;
	}
	p[0] = 1;
	if (pread(fd, &e, sizeof(e), (off_t)((uintptr_t)p / PAGE_SZ * sizeof(e))) !=
	    (ssize_t)sizeof(e))
		e = 0;
	munmap((void *)p, PAGE_SZ);
	close(fd);
	if (!(e & PM_SOFT_DIRTY)) {
		sd_probe_result = -EOPNOTSUPP;
		snprintf(sd_probe_why, sizeof(sd_probe_why),
			 "the running kernel has no soft-dirty bits (CONFIG_MEM_SOFT_DIRTY is not set)");
	}
}

static int sd_available(char *why, size_t len)
{
	pthread_once(&sd_probe_once, sd_probe);
	if (sd_probe_result && why && len)
		snprintf(why, len, "%s", sd_probe_why);
	return sd_probe_result;
}

/* Is page number @page soft-dirty?  -1 if its pagemap entry cannot be read. */
static int sd_page_dirty(const struct vaddr_target *vt, unsigned long page)
{
	uint64_t e;

	if (vt->pagemap_fd < 0 ||
	    pread(vt->pagemap_fd, &e, sizeof(e), (off_t)(page * sizeof(e))) != (ssize_t)sizeof(e))
		return -1;
	return (e & PM_SOFT_DIRTY) != 0;
}

/* Is any sampling page of @t soft-dirty now (or unreadable: then clear)? */
static bool sd_any_sample_dirty(const struct vaddr_target *vt, struct damon_target *t)
{
	struct damon_region *r;

	damon_for_each_region(r, t)
		if (sd_page_dirty(vt, r->sampling_addr / PAGE_SZ))
			return true;
	return false;
}

static void sd_prepare(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		struct vaddr_target *vt = t->pstate;

		if (!vt)
			continue;
		__uks_damon_va_pick_sampling_addrs(ctx, t);
		if (sd_any_sample_dirty(vt, t)) {
			__uks_damon_va_clear_refs(vt, "4");
			vt->nr_clears++;
		} else {
			vt->nr_clears_skipped++;
		}
		vt->have_last = false;
	}
}

static bool sd_young(struct vaddr_target *vt, unsigned long addr)
{
	unsigned long page = addr / PAGE_SZ;

	if (vt->have_last && vt->last_page == page)
		return vt->last_accessed;
	vt->last_page = page;
	vt->last_accessed = sd_page_dirty(vt, page) == 1;	/* unreadable: not accessed */
	vt->have_last = true;
	return vt->last_accessed;
}

static unsigned int sd_check(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;
	unsigned int max = 0;

	damon_for_each_target(t, ctx) {
		struct vaddr_target *vt = t->pstate;

		if (!vt)
			continue;
		damon_for_each_region(r, t) {
			if (sd_young(vt, r->sampling_addr))
				r->nr_accesses++;
			if (r->nr_accesses > max)
				max = r->nr_accesses;
		}
	}
	return max;
}

const struct damon_primitive __uks_damon_vaddr_sd = {
	.name = "vaddr-sd",
	.available = sd_available,
	.init = __uks_damon_va_init,
	.update = __uks_damon_va_update,
	.prepare_access_checks = sd_prepare,
	.check_accesses = sd_check,
	.target_valid = __uks_damon_va_target_valid,
	.cleanup = __uks_damon_va_cleanup,
	.init_again = true,
	.apply_scheme = __uks_damos_va_apply,
};

/* fvaddr: the same checks on fixed ranges (the kernel's fvaddr ops) */
const struct damon_primitive __uks_damon_fvaddr_sd = {
	.name = "fvaddr-sd",
	.available = sd_available,
	.init = __uks_damon_fva_init,
	.prepare_access_checks = sd_prepare,
	.check_accesses = sd_check,
	.target_valid = __uks_damon_va_target_valid,
	.cleanup = __uks_damon_va_cleanup,
	.init_again = true,
	.apply_scheme = __uks_damos_va_apply,
};
