// SPDX-License-Identifier: MIT
/*
 * DAMON "vaddr-refs" primitive: accesses of a real process from the
 * Referenced: counts of /proc/PID/smaps.
 *
 * prepare writes "1" to /proc/PID/clear_refs, which clears the accessed
 * (young) bits and PG_referenced of every page of the process, then "4".
 * Since Linux 5.10 (commits 0758cd830494 and 912efa17e512) only "4"
 * flushes the process's TLB, and a CPU that still caches a page's
 * translation does not set its accessed bit again: on Debian's 6.12
 * under QEMU, a mapping written every 200 us showed Referenced: in 1-3 of
 * 40 samples without the flush and in all 40 with it.  "4" is a second
 * page-table walk, it clears the soft-dirty bits (the target then takes a
 * write-protect fault on its first write to a page in each interval, as
 * under vaddr-sd, and no other soft-dirty user, CRIU or a vaddr-sd
 * context, may watch the same process), and it invalidates secondary MMU
 * mappings (KVM, VFIO) of the whole address space: docs/DAMON.md.  On
 * kernels without soft-dirty it is the walk and the flush.  check reads
 * /proc/PID/smaps and counts a sampling address as accessed if the mapping
 * containing it has a non-zero Referenced: since.  What it sees: reads and
 * writes, but per mapping only: one touched page makes every region of
 * its mapping look accessed, so a region inside a big mapping is as hot as
 * the hottest page of that mapping.  Use it where soft-dirty is missing
 * or reads matter; it needs CONFIG_PROC_PAGE_MONITOR only.  Reading smaps
 * walks the whole process's page tables each sample: costly for big
 * processes at 5 ms sampling.
 *
 * The clears are walks too, and needless when the last check read no
 * Referenced: anywhere: then no page of the process is young (nor has
 * PG_referenced), and none was reached through the TLB since the last
 * flush, whose first touch would have set the bit.  So prepare skips them
 * after such a check, and a quiet process costs one smaps read per
 * sample instead of three walks.  The one difference: an access between
 * that check's read and this prepare counts in the coming interval, where
 * a clear would have dropped it (5.15's mkold drops it too).
 *
 * Lock order: none (monitor thread only).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "damon/damon.h"

static int refs_available(char *why, size_t len)
{
	if (access("/proc/self/smaps", R_OK) || access("/proc/self/clear_refs", W_OK)) {
		if (why && len)
			snprintf(why, len, "no /proc/PID/smaps or clear_refs "
				 "(CONFIG_PROC_PAGE_MONITOR)");
		return -EOPNOTSUPP;
	}
	return 0;
}

static void refs_prepare(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		struct vaddr_target *vt = t->pstate;

		if (!vt)
			continue;
		__uks_damon_va_pick_sampling_addrs(ctx, t);
		if (vt->refs_clean) {
			vt->nr_clears_skipped++;
			continue;
		}
		__uks_damon_va_clear_refs(vt, "1");
		__uks_damon_va_clear_refs(vt, "4");	/* the TLB flush */
		vt->nr_clears++;
	}
}

/*
 * A mapping's first line in smaps, "start-end perms offset ...": its
 * range.  Field lines ("Size:", "AnonHugePages:") fail at the '-'.  By
 * hand rather than sscanf(): at 5 ms sampling its two tries per line were
 * a tenth of the monitor's CPU on a process in huge pages.
 */
static bool smaps_header(const char *line, unsigned long *start, unsigned long *end)
{
	char *p;

	if (!isxdigit((unsigned char)line[0]))
		return false;
	*start = strtoul(line, &p, 16);
	if (*p != '-' || !isxdigit((unsigned char)p[1]))
		return false;
	*end = strtoul(p + 1, &p, 16);
	return *p == ' ';
}

/**
 * __uks_damon_parse_smaps - the mappings of an smaps file and their Referenced: state
 * @f: /proc/PID/smaps, read from its start
 * @out: the mappings, in file order, freed with uks_kfree()
 * @nr: how many
 *
 * Lines that are neither a mapping's first line nor its Referenced: are
 * skipped, as is a Referenced: before any mapping.  Return: 0, or -ENOMEM
 * with *@out and *@nr holding the mappings read so far.
 */
int __uks_damon_parse_smaps(FILE *f, struct refs_map **out, unsigned int *nr)
{
	struct refs_map *maps = NULL;
	unsigned int n = 0, cap = 0;
	char line[512];
	int ret = 0;

	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (smaps_header(line, &s, &e)) {
			if (n == cap) {
				unsigned int ncap = cap ? 2 * cap : 64;
				void *p = uks_krealloc(maps, ncap * sizeof(*maps));

				if (!p) {
					ret = -ENOMEM;
					break;
				}
				maps = p;
				cap = ncap;
			}
			maps[n].start = s;
			maps[n].end = e;
			maps[n].referenced = false;
			n++;
		} else if (n && !strncmp(line, "Referenced:", 11)) {
			maps[n - 1].referenced = strtoul(line + 11, NULL, 10) > 0;
		}
		/* a line longer than the buffer: its rest is not a line of its own */
		while (!strchr(line, '\n') && fgets(line, sizeof(line), f))
			;
	}
	*out = maps;
	*nr = n;
	return ret;
}

/* 0, or -errno with *@out NULL, or -ENOMEM with the mappings read so far. */
static int read_smaps(pid_t pid, struct refs_map **out, unsigned int *nr)
{
	char path[64];
	FILE *f;
	int ret;

	*out = NULL;
	*nr = 0;
	uint64_t t0 = __uks_damon_va_now_ns();

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	ret = __uks_damon_parse_smaps(f, out, nr);
	fclose(f);
	/* the walk held the target's mmap lock (tune.c counts it against the budget) */
	if (__uks_damon_current)
		__uks_damon_cost_stall(__uks_damon_current, __uks_damon_va_now_ns() - t0);
	return ret;
}

/* The first mapping boundary strictly inside @r, from mapping *@i on; 0 if none. */
static unsigned long boundary_in(const struct damon_region *r, const struct refs_map *maps,
				 unsigned int nr, unsigned int *i)
{
	while (*i < nr && maps[*i].end <= r->ar.start)
		(*i)++;
	for (unsigned int j = *i; j < nr && maps[j].start < r->ar.end; j++) {
		if (maps[j].start > r->ar.start)
			return maps[j].start;
		if (maps[j].end < r->ar.end)
			return maps[j].end;
	}
	return 0;
}

/*
 * Split the regions of @t at the mapping boundaries inside them, while the
 * context's regions, *@nr_regions of all its targets, stay below
 * max_nr_regions (the bound 5.15 keeps on the whole context).
 */
static void clip_to_maps(struct uks_damon_ctx *ctx, struct damon_target *t,
			 const struct refs_map *maps, unsigned int nr, unsigned long *nr_regions)
{
	struct damon_region *r, *n;
	unsigned int i = 0, before;
	unsigned long at;

	damon_for_each_region(r, t) {
		if (*nr_regions >= ctx->max_nr_regions)
			return;
		at = boundary_in(r, maps, nr, &i);
		if (!at || at - r->ar.start < ctx->min_region || r->ar.end - at < ctx->min_region)
			continue;
		before = t->nr_regions;
		__uks_damon_split_region_at(ctx, t, r, at - r->ar.start);
		if (t->nr_regions == before)
			continue;	/* no memory for the piece */
		(*nr_regions)++;
		n = damon_next_region(r);
		n->nr_accesses = r->nr_accesses;
		/* Each piece samples inside itself from now on. */
		if (r->sampling_addr >= at) {
			n->sampling_addr = r->sampling_addr;
			r->sampling_addr = __uks_damon_rand(ctx, r->ar.start, r->ar.end);
		} else {
			n->sampling_addr = __uks_damon_rand(ctx, n->ar.start, n->ar.end);
		}
		/* The loop visits n next, which may hold more boundaries. */
	}
}

static bool any_referenced(const struct refs_map *maps, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++)
		if (maps[i].referenced)
			return true;
	return false;
}

static unsigned int refs_check(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;
	unsigned int max = 0;
	unsigned long nr_regions = 0;

	damon_for_each_target(t, ctx)
		nr_regions += t->nr_regions;
	damon_for_each_target(t, ctx) {
		struct vaddr_target *vt = t->pstate;
		struct refs_map *maps;
		unsigned int nr, i = 0;

		if (!vt)
			continue;
		/* Only a whole read may say that nothing was referenced. */
		vt->refs_clean = !read_smaps((pid_t)t->id, &maps, &nr) && !any_referenced(maps, nr);
		if (!maps)
			continue;
		clip_to_maps(ctx, t, maps, nr, &nr_regions);
		/* regions and mappings are both in address order */
		damon_for_each_region(r, t) {
			unsigned long a = r->sampling_addr;

			while (i < nr && maps[i].end <= a)
				i++;
			if (i < nr && maps[i].start <= a && maps[i].referenced)
				r->nr_accesses++;
			if (r->nr_accesses > max)
				max = r->nr_accesses;
		}
		uks_kfree(maps);
	}
	return max;
}

const struct damon_primitive __uks_damon_vaddr_refs = {
	.name = "vaddr-refs",
	.available = refs_available,
	.init = __uks_damon_va_init,
	.update = __uks_damon_va_update,
	.prepare_access_checks = refs_prepare,
	.check_accesses = refs_check,
	.target_valid = __uks_damon_va_target_valid,
	.cleanup = __uks_damon_va_cleanup,
	.init_again = true,
	.apply_scheme = __uks_damos_va_apply,
};

/* fvaddr: the same checks on fixed ranges (the kernel's fvaddr ops) */
const struct damon_primitive __uks_damon_fvaddr_refs = {
	.name = "fvaddr-refs",
	.available = refs_available,
	.init = __uks_damon_fva_init,
	.prepare_access_checks = refs_prepare,
	.check_accesses = refs_check,
	.target_valid = __uks_damon_va_target_valid,
	.cleanup = __uks_damon_va_cleanup,
	.init_again = true,
	.apply_scheme = __uks_damos_va_apply,
};
