// SPDX-License-Identifier: MIT
/*
 * DAMON "synthetic" primitive: a simulated address space with a scripted
 * access pattern, for tests that need the ground truth.
 *
 * A struct uks_damon_synth is a set of mappings (what /proc/PID/maps would
 * list; the three-region rules apply to them as to a process) and a cycle
 * of phases, masim-like: each phase lasts a number of samples and lists
 * address ranges with the probability (per mille) that a sample inside
 * them finds an access.  1000 is "always", so a pattern of 0 and 1000 is
 * fully deterministic; otherwise the draw comes from the context's seeded
 * generator.  Nothing is allocated per byte, so a terabyte space costs the
 * same as a megabyte one.
 *
 * The space's clock is its sample counter: every check_accesses of a
 * target advances it by one, so phases are measured in samples, not in
 * wall time (runs are reproducible whatever the machine's speed).  Give
 * each target its own space.
 *
 * Lock order: none.  Build the space before the context starts; while it
 * runs, only the sample counter changes (atomically), and the ground-truth
 * queries below may be called from any thread.
 *
 * uks_damon_synth_load_masim() builds a space from a masim configuration
 * (the parser is lib/damon/primitives/masim_config.c, shared with uks-masim).
 */
#include <errno.h>
#include <string.h>

#include <uks/damon_masim.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/damon.h"

struct synth_access {
	unsigned long start, end;
	unsigned int permille;
};

struct synth_phase {
	unsigned long nr_samples;
	struct synth_access *acc;
	unsigned int nr, cap;
};

struct uks_damon_synth {
	struct damon_addr_range *maps;
	unsigned int nr_maps, cap_maps;
	struct synth_phase *phases;
	unsigned int nr_phases, cap_phases;
	unsigned long cycle;		/* samples of all phases */
	unsigned long sample;		/* atomic: samples taken */
};

static int grow(void **p, unsigned int *cap, unsigned int nr, size_t size)
{
	void *n;
	unsigned int ncap;

	if (nr < *cap)
		return 0;
	ncap = *cap ? 2 * *cap : 8;
	n = uks_krealloc(*p, ncap * size);
	if (!n)
		return -ENOMEM;
	*p = n;
	*cap = ncap;
	return 0;
}

/**
 * uks_damon_synth_create - an empty simulated address space
 * @out:	the space
 * Return: 0 or -ENOMEM.
 */
UKS_EXPORT int uks_damon_synth_create(struct uks_damon_synth **out)
{
	*out = uks_kzalloc(sizeof(**out));
	return *out ? 0 : -ENOMEM;
}

/** uks_damon_synth_destroy - free @s (no context may use it any more) */
UKS_EXPORT void uks_damon_synth_destroy(struct uks_damon_synth *s)
{
	if (!s)
		return;
	for (unsigned int i = 0; i < s->nr_phases; i++)
		uks_kfree(s->phases[i].acc);
	uks_kfree(s->phases);
	uks_kfree(s->maps);
	uks_kfree(s);
}

/**
 * uks_damon_synth_add_mapping - add the mapping [@start, @end)
 * @s:		the space
 * @start:	first byte
 * @end:	one past the last
 *
 * Mappings must be added in address order and must not overlap.
 * Return: 0, -EINVAL (empty, out of order) or -ENOMEM.
 */
UKS_EXPORT int uks_damon_synth_add_mapping(struct uks_damon_synth *s, unsigned long start,
					   unsigned long end)
{
	if (end <= start || (s->nr_maps && start < s->maps[s->nr_maps - 1].end))
		return -EINVAL;
	if (grow((void **)&s->maps, &s->cap_maps, s->nr_maps, sizeof(*s->maps)))
		return -ENOMEM;
	s->maps[s->nr_maps].start = start;
	s->maps[s->nr_maps].end = end;
	s->nr_maps++;
	return 0;
}

/**
 * uks_damon_synth_add_phase - start a new phase lasting @nr_samples samples
 * Return: 0, -EINVAL (0 samples) or -ENOMEM.
 */
UKS_EXPORT int uks_damon_synth_add_phase(struct uks_damon_synth *s, unsigned long nr_samples)
{
	if (!nr_samples)
		return -EINVAL;
	if (grow((void **)&s->phases, &s->cap_phases, s->nr_phases, sizeof(*s->phases)))
		return -ENOMEM;
	memset(&s->phases[s->nr_phases], 0, sizeof(s->phases[0]));
	s->phases[s->nr_phases].nr_samples = nr_samples;
	s->nr_phases++;
	s->cycle += nr_samples;
	return 0;
}

/**
 * uks_damon_synth_add_access - in the last phase, access [@start, @end)
 * @s:		the space
 * @start:	first byte
 * @end:	one past the last
 * @permille:	probability that a sample there sees an access (1000: always)
 *
 * Return: 0, -EINVAL (no phase yet, empty range, @permille over 1000) or
 * -ENOMEM.
 */
UKS_EXPORT int uks_damon_synth_add_access(struct uks_damon_synth *s, unsigned long start,
					  unsigned long end, unsigned int permille)
{
	struct synth_phase *ph;

	if (!s->nr_phases || end <= start || permille > 1000)
		return -EINVAL;
	ph = &s->phases[s->nr_phases - 1];
	if (grow((void **)&ph->acc, &ph->cap, ph->nr, sizeof(*ph->acc)))
		return -ENOMEM;
	ph->acc[ph->nr].start = start;
	ph->acc[ph->nr].end = end;
	ph->acc[ph->nr].permille = permille;
	ph->nr++;
	return 0;
}

static const struct synth_phase *phase_at(const struct uks_damon_synth *s, unsigned long sample,
					  unsigned int *idx)
{
	unsigned long n;

	if (!s->nr_phases)
		return NULL;
	n = sample % s->cycle;
	for (unsigned int i = 0; i < s->nr_phases; i++) {
		if (n < s->phases[i].nr_samples) {
			if (idx)
				*idx = i;
			return &s->phases[i];
		}
		n -= s->phases[i].nr_samples;
	}
	return NULL;
}

/** uks_damon_synth_phase - Return: the index of the phase being sampled now */
UKS_EXPORT unsigned int uks_damon_synth_phase(struct uks_damon_synth *s)
{
	unsigned int idx = 0;

	phase_at(s, __atomic_load_n(&s->sample, __ATOMIC_RELAXED), &idx);
	return idx;
}

static int permille_in(const struct synth_phase *ph, unsigned long addr)
{
	int p = 0;

	for (unsigned int i = 0; ph && i < ph->nr; i++)
		if (addr >= ph->acc[i].start && addr < ph->acc[i].end &&
		    (int)ph->acc[i].permille > p)
			p = (int)ph->acc[i].permille;
	return p;
}

/**
 * uks_damon_synth_access_permille - the ground truth at @addr now
 * Return: the access probability (per mille) of @addr in the current phase.
 */
UKS_EXPORT int uks_damon_synth_access_permille(struct uks_damon_synth *s, unsigned long addr)
{
	return permille_in(phase_at(s, __atomic_load_n(&s->sample, __ATOMIC_RELAXED), NULL),
			   addr);
}

bool __uks_damon_synth_sample(struct uks_damon_synth *s, unsigned long addr, uint64_t rnd)
{
	int p = permille_in(phase_at(s, __atomic_load_n(&s->sample, __ATOMIC_RELAXED), NULL),
			    addr);

	return p >= 1000 || (p > 0 && rnd % 1000 < (uint64_t)p);
}

/* ------------------------------------------------------- the primitive */

static int synth_three_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
			       struct damon_addr_range regions[3])
{
	struct uks_damon_synth *s = t->priv;

	if (!s)
		return -EINVAL;
	return __uks_damon_three_regions_of(s->maps, s->nr_maps, ctx->min_region, regions);
}

static int synth_init(struct uks_damon_ctx *ctx)
{
	struct damon_addr_range regions[3];
	struct damon_target *t;

	damon_for_each_target(t, ctx) {
		if (t->nr_regions || synth_three_regions(ctx, t, regions))
			continue;
		__uks_damon_init_regions_of(ctx, t, regions);
	}
	return 0;
}

static void synth_update(struct uks_damon_ctx *ctx)
{
	struct damon_addr_range regions[3];
	struct damon_target *t;

	damon_for_each_target(t, ctx)
		if (!synth_three_regions(ctx, t, regions))
			__uks_damon_apply_three_regions(ctx, t, regions);
}

static void synth_prepare(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;

	damon_for_each_target(t, ctx)
		damon_for_each_region(r, t)
			r->sampling_addr = __uks_damon_rand(ctx, r->ar.start, r->ar.end);
}

static unsigned int synth_check(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;
	struct damon_region *r;
	unsigned int max = 0;

	damon_for_each_target(t, ctx) {
		struct uks_damon_synth *s = t->priv;

		if (!s)
			continue;
		damon_for_each_region(r, t) {
			if (__uks_damon_synth_sample(s, r->sampling_addr,
						     __uks_damon_rand(ctx, 0, ~0UL)))
				r->nr_accesses++;
			if (r->nr_accesses > max)
				max = r->nr_accesses;
		}
		__atomic_fetch_add(&s->sample, 1, __ATOMIC_RELAXED);
	}
	return max;
}

static bool synth_target_valid(struct uks_damon_ctx *ctx, struct damon_target *t)
{
	return t->priv != NULL;
}

/* DAMOS on a simulated space: every action succeeds on the whole region. */
static unsigned long synth_apply(struct uks_damon_ctx *ctx, struct damon_target *t,
				 struct damon_region *r, unsigned int action)
{
	(void)ctx;
	(void)t;
	(void)action;
	return damon_sz_region(r);
}

const struct damon_primitive __uks_damon_synthetic = {
	.name = "synthetic",
	.init = synth_init,
	.update = synth_update,
	.prepare_access_checks = synth_prepare,
	.check_accesses = synth_check,
	.target_valid = synth_target_valid,
	.apply_scheme = synth_apply,
};

/* ------------------------------------------------- masim configurations */

/**
 * uks_damon_synth_load_masim - simulate a masim configuration
 * @s:		the space (mappings may be added before and after)
 * @m:		the configuration (uks_damon_masim_parse())
 * @base:	address of the first region; each region is a mapping of its
 *		size rounded up to 4 KiB, one 4 KiB gap after each (as
 *		uks-masim's guard pages)
 * @sample_us:	the sampling interval the space will be monitored with:
 *		a phase lasts duration_ms * 1000 / sample_us samples (>= 1)
 * @region_starts: if not NULL, gets the start of each region
 *
 * masim touches a whole region within one sampling interval at its access
 * rate (128 Ki accesses per pattern pick), so a phase's patterns are
 * modelled as "accessed in every sample", scaled by their weight relative
 * to the phase's heaviest pattern: per mille = 1000 * weight / max weight.
 * Return: 0, -EINVAL (mappings out of order), -ENOMEM.
 */
UKS_EXPORT int uks_damon_synth_load_masim(struct uks_damon_synth *s,
					  const struct uks_damon_masim *m, unsigned long base,
					  unsigned long sample_us, unsigned long *region_starts)
{
	unsigned long *starts = uks_kmalloc((m->nr_regions + 1) * sizeof(*starts));
	unsigned long addr = base;
	int ret = 0;

	if (!starts)
		return -ENOMEM;
	if (!sample_us)
		sample_us = 1;
	for (unsigned int i = 0; i < m->nr_regions && !ret; i++) {
		unsigned long sz = (unsigned long)DAMON_ALIGN(m->regions[i].size, 4096UL);

		starts[i] = addr;
		ret = uks_damon_synth_add_mapping(s, addr, addr + sz);
		addr += sz + 4096;
	}
	for (unsigned int p = 0; p < m->nr_phases && !ret; p++) {
		const struct uks_damon_masim_phase *ph = &m->phases[p];
		unsigned long samples = (unsigned long)(ph->duration_ms * 1000 / sample_us);
		unsigned int maxw = 0;

		ret = uks_damon_synth_add_phase(s, samples ? samples : 1);
		for (unsigned int k = 0; k < ph->nr_patterns; k++)
			if (ph->patterns[k].weight > maxw)
				maxw = ph->patterns[k].weight;
		for (unsigned int k = 0; k < ph->nr_patterns && !ret && maxw; k++) {
			const struct uks_damon_masim_pattern *pt = &ph->patterns[k];
			unsigned long st = starts[pt->region];

			if (!pt->weight)
				continue;
			ret = uks_damon_synth_add_access(s, st, st + m->regions[pt->region].size,
							 (unsigned int)(1000ULL * pt->weight / maxw));
		}
	}
	if (!ret && region_starts)
		memcpy(region_starts, starts, m->nr_regions * sizeof(*starts));
	uks_kfree(starts);
	return ret;
}
