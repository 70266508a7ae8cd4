// SPDX-License-Identifier: MIT
/*
 * The computations of damo's reports (v1.0.0) on a struct uks_damon_record:
 * the heats guide, heat pixels and working set sizes.  The CLI prints them.
 *
 * Guide (damo's get_guide_info): per target, the time from its first to
 * its last snapshot end, the lowest and highest address, and the gaps
 * between regions that every snapshot has (each snapshot's gaps narrow the
 * gaps found so far; damo keeps a gap that overlaps none of a snapshot's
 * gaps, and starts over when none is left: kept as is).  The address
 * ranges between the gaps are the target's "regions"; targets are sorted
 * by their total size, biggest first (stable).
 *
 * Heats (damo's heat_pixels_from_snapshots): tres x ares pixels over
 * [tmin, tmax) x [amin, amax), the ends trimmed to a whole number of
 * units; every snapshot but the first adds nr_accesses x the overlap in
 * time x the overlap in bytes, divided by the pixel's area, so a pixel is
 * the time- and space-weighted mean of nr_accesses.  Doubles throughout, as
 * damo's Python floats.  One difference: damo lets a snapshot starting
 * before tmin index pixels from the end (Python's negative indices); uks
 * clips it at tmin.
 *
 * Working set sizes (damo's wss): per snapshot, the bytes of the regions
 * with at least acc_thres accesses and at least sz_thres bytes.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/record/record.h"

static uint64_t rsize(const struct uks_damon_rec_region *r)
{
	return r->end > r->start ? r->end - r->start : 0;
}

/* ------------------------------------------------------------- guide */

static int narrow_gaps(struct uks_damon_guide *g, const uint64_t *gaps, size_t nr)
{
	if (!g->nr_ranges) {
		void *p = NULL;

		if (nr) {
			p = uks_kmalloc(nr * 2 * sizeof(uint64_t));
			if (!p)
				return -ENOMEM;
			memcpy(p, gaps, nr * 2 * sizeof(uint64_t));
		}
		uks_kfree(g->ranges);
		g->ranges = p;
		g->nr_ranges = nr;
		return 0;
	}
	for (size_t i = 0; i < g->nr_ranges; i++) {
		uint64_t *r1 = &g->ranges[2 * i];

		for (size_t j = 0; j < nr; j++) {
			const uint64_t *r2 = &gaps[2 * j];

			if (r1[1] < r2[0] || r2[1] < r1[0])
				continue;
			r1[0] = r1[0] > r2[0] ? r1[0] : r2[0];
			r1[1] = r1[1] < r2[1] ? r1[1] : r2[1];
		}
	}
	return 0;
}

/* The gaps of @g become its ranges: [lowest, gap0.start), [gap0.end, ...) */
static int gaps_to_ranges(struct uks_damon_guide *g)
{
	uint64_t *r = uks_kmalloc((g->nr_ranges + 1) * 2 * sizeof(uint64_t));
	uint64_t lo = g->lowest;

	if (!r)
		return -ENOMEM;
	for (size_t i = 0; i < g->nr_ranges; i++) {
		r[2 * i] = lo;
		r[2 * i + 1] = g->ranges[2 * i];
		lo = g->ranges[2 * i + 1];
	}
	r[2 * g->nr_ranges] = lo;
	r[2 * g->nr_ranges + 1] = g->highest;
	uks_kfree(g->ranges);
	g->ranges = r;
	g->nr_ranges++;
	return 0;
}

struct guide_key {
	uint64_t total;		/* damo's total_space(), wrapping as uint64 */
	size_t seen;		/* order of first appearance */
	struct uks_damon_guide g;
};

static int cmp_guide(const void *a, const void *b)
{
	const struct guide_key *x = a, *y = b;

	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->seen < y->seen ? -1 : x->seen > y->seen;
}

/**
 * uks_damon_guides - damo's heats guide for every target of @rec
 * @rec:	the record
 * @out:	the guides, biggest total space first
 * @nr:		their number
 *
 * Return: 0 or -ENOMEM.  Free with uks_damon_guides_free().
 */
UKS_EXPORT int uks_damon_guides(const struct uks_damon_record *rec, struct uks_damon_guide **out,
				size_t *nr)
{
	struct uks_damon_guide *g = NULL;
	struct tid_map map = { 0 };
	struct guide_key *keys;
	uint64_t *gaps = NULL;
	size_t n = 0, gcap = 0, cap = 0;
	int ret = 0;

	*out = NULL;
	*nr = 0;
	for (size_t i = 0; i < rec->nr_snapshots && !ret; i++) {
		const struct uks_damon_rec_snapshot *s = &rec->snapshots[i];
		struct uks_damon_guide *cur;
		size_t ng = 0, idx;
		uint64_t last = 0;

		if (n == cap) {		/* room first: the map's next index must fit */
			size_t ncap = cap ? 2 * cap : 8;
			void *p = uks_krealloc(g, ncap * sizeof(*g));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			g = p;
			cap = ncap;
		}
		ret = __uks_damon_tidmap_get(&map, s->target_id, &idx);
		if (ret < 0)
			break;
		cur = &g[idx];
		if (ret) {
			ret = 0;
			n++;
			memset(cur, 0, sizeof(*cur));
			cur->target_id = s->target_id;
			cur->start_ns = s->end_ns;
		}
		cur->end_ns = s->end_ns;
		if (s->nr_regions > gcap) {
			void *p = uks_krealloc(gaps, (size_t)s->nr_regions * 2 * sizeof(uint64_t));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			gaps = p;
			gcap = s->nr_regions;
		}
		for (uint32_t j = 0; j < s->nr_regions; j++) {
			const struct uks_damon_rec_region *r = &s->regions[j];

			/* damo's "if not lowest_addr": a 0 is replaced too */
			if (!cur->lowest || r->start < cur->lowest)
				cur->lowest = r->start;
			if (!cur->highest || r->end > cur->highest)
				cur->highest = r->end;
			if (!last) {
				last = r->end;
				continue;
			}
			if (last != r->start) {
				gaps[2 * ng] = last;
				gaps[2 * ng + 1] = r->start;
				ng++;
			}
			last = r->end;
		}
		ret = narrow_gaps(cur, gaps, ng);
	}
	uks_kfree(gaps);
	__uks_damon_tidmap_free(&map);
	for (size_t k = 0; k < n && !ret; k++)
		ret = gaps_to_ranges(&g[k]);
	keys = ret ? NULL : uks_kmalloc((n ? n : 1) * sizeof(*keys));
	if (!ret && !keys)
		ret = -ENOMEM;
	if (ret) {
		uks_damon_guides_free(g, n);
		return ret;
	}
	/* stable sort by total space, descending: the first-seen order breaks ties */
	for (size_t i = 0; i < n; i++) {
		keys[i] = (struct guide_key){ 0, i, g[i] };
		for (size_t k = 0; k < g[i].nr_ranges; k++)
			keys[i].total += g[i].ranges[2 * k + 1] - g[i].ranges[2 * k];
	}
	qsort(keys, n, sizeof(*keys), cmp_guide);
	for (size_t i = 0; i < n; i++)
		g[i] = keys[i].g;
	uks_kfree(keys);
	*out = g;
	*nr = n;
	return 0;
}

/** uks_damon_guides_free - free what uks_damon_guides() returned */
UKS_EXPORT void uks_damon_guides_free(struct uks_damon_guide *g, size_t nr)
{
	for (size_t i = 0; g && i < nr; i++)
		uks_kfree(g[i].ranges);
	uks_kfree(g);
}

/* ------------------------------------------------------------- heats */

static void add_heats(const struct uks_damon_rec_snapshot *s, double duration, double *row,
		      const struct uks_damon_heatmap *hm, double time_unit, double space_unit)
{
	double pixel_sz = time_unit * space_unit;

	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct uks_damon_rec_region *r = &s->regions[i];
		double start = (double)(r->start > hm->amin ? r->start : hm->amin);
		double end = (double)(r->end < hm->amax ? r->end : hm->amax);
		double fs = start;
		long idx;

		if (start >= end)
			continue;
		idx = (long)((fs - (double)hm->amin) / space_unit);
		if (idx < 0)		/* rounding of 64-bit addresses in doubles */
			idx = 0;
		while (fs < end && idx < (long)hm->ares) {
			double fe = (idx + 1) * space_unit + (double)hm->amin;
			double heat;

			if (fe > end)
				fe = end;
			heat = r->nr_accesses * duration * (fe - fs);
			heat += row[idx] * pixel_sz;
			row[idx] = heat / pixel_sz;
			fs = fe;
			idx++;
		}
	}
}

/**
 * uks_damon_heatmap_compute - damo's heat pixels of one target
 * @rec:	the record
 * @hm:		in: @tres, @ares and what @given says; out: the rest
 * @given:	UKS_DAMON_HEATS_* flags: which of @hm's fields the caller set;
 *		the others get damo's defaults from the guide (the biggest
 *		target, its whole time, its biggest address range)
 *
 * Return: 0, -ENOENT (no snapshot of the target), -EINVAL (a resolution
 * of 0, or a range smaller than its resolution), -ENOMEM.
 */
UKS_EXPORT int uks_damon_heatmap_compute(const struct uks_damon_record *rec,
					 struct uks_damon_heatmap *hm, unsigned int given)
{
	struct uks_damon_guide *g = NULL, *guide;
	size_t nr = 0;
	int64_t tunit;
	uint64_t aunit, tspan;
	double time_unit, space_unit;
	bool first = true;
	int ret;

	hm->heat = NULL;
	if (!hm->tres || !hm->ares)
		return -EINVAL;
	ret = uks_damon_guides(rec, &g, &nr);
	if (ret)
		return ret;
	if (!nr) {
		uks_damon_guides_free(g, nr);
		return -ENOENT;
	}
	guide = &g[0];
	if (given & UKS_DAMON_HEATS_TID) {
		guide = NULL;
		for (size_t i = 0; i < nr && !guide; i++)
			if (g[i].target_id == hm->target_id)
				guide = &g[i];
		if (!guide) {
			uks_damon_guides_free(g, nr);
			return -ENOENT;
		}
	}
	hm->target_id = guide->target_id;
	if (!(given & UKS_DAMON_HEATS_TIME)) {
		hm->tmin = guide->start_ns;
		hm->tmax = guide->end_ns;
	}
	if (!(given & UKS_DAMON_HEATS_ADDR)) {
		size_t best = 0;

		for (size_t i = 1; i < guide->nr_ranges; i++)
			if (guide->ranges[2 * i + 1] - guide->ranges[2 * i] >
			    guide->ranges[2 * best + 1] - guide->ranges[2 * best])
				best = i;
		hm->amin = guide->ranges[2 * best];
		hm->amax = guide->ranges[2 * best + 1];
	}
	uks_damon_guides_free(g, nr);
	if (hm->tmax <= hm->tmin || hm->amax <= hm->amin)
		return -EINVAL;
	/* the span in unsigned arithmetic: tmax - tmin overflows int64 for a wide record */
	tspan = (uint64_t)hm->tmax - (uint64_t)hm->tmin;
	if (tspan / hm->tres > INT64_MAX)
		return -EINVAL;
	tunit = (int64_t)(tspan / hm->tres);
	aunit = (hm->amax - hm->amin) / hm->ares;
	if (!tunit || !aunit)
		return -EINVAL;
	hm->tmax = (int64_t)((uint64_t)hm->tmin + (uint64_t)tunit * hm->tres);
	hm->amax = hm->amin + aunit * hm->ares;
	hm->heat = uks_kcalloc((size_t)hm->tres * hm->ares, sizeof(double));
	if (!hm->heat)
		return -ENOMEM;
	time_unit = (double)tunit;
	space_unit = (double)aunit;

	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		const struct uks_damon_rec_snapshot *s = &rec->snapshots[i];
		double fs, end;
		long idx;

		if (s->target_id != hm->target_id)
			continue;
		if (first) {		/* damo: snapshots[1:] */
			first = false;
			continue;
		}
		fs = (double)(s->start_ns > hm->tmin ? s->start_ns : hm->tmin);
		end = (double)(s->end_ns < hm->tmax ? s->end_ns : hm->tmax);
		idx = (long)((fs - (double)hm->tmin) / time_unit);
		if (idx < 0)		/* rounding of 64-bit times in doubles */
			idx = 0;
		while (fs < end && idx < (long)hm->tres) {
			double fe = (idx + 1) * time_unit + (double)hm->tmin;

			if (fe > end)
				fe = end;
			add_heats(s, fe - fs, &hm->heat[(size_t)idx * hm->ares], hm, time_unit,
				  space_unit);
			fs = fe;
			idx++;
		}
	}
	return 0;
}

/** uks_damon_heatmap_free - free the pixels of @hm */
UKS_EXPORT void uks_damon_heatmap_free(struct uks_damon_heatmap *hm)
{
	uks_kfree(hm->heat);
	hm->heat = NULL;
}

/* --------------------------------------------------------------- wss */

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/**
 * uks_damon_wss - the working set size of each snapshot of a target
 * @rec:	the record
 * @target_id:	the target
 * @acc_thres:	regions with fewer accesses are not in the working set
 * @sz_thres:	nor are regions smaller than this
 * @sort:	sort ascending (damo's --sortby size, the default)
 * @out:	the sizes, in bytes (uks_kfree() them)
 * @nr:		their number (0 when the target has no snapshot)
 *
 * Return: 0 or -ENOMEM.
 */
UKS_EXPORT int uks_damon_wss(const struct uks_damon_record *rec, uint64_t target_id,
			     unsigned int acc_thres, uint64_t sz_thres, bool sort, uint64_t **out,
			     size_t *nr)
{
	uint64_t *w = uks_kmalloc((rec->nr_snapshots ? rec->nr_snapshots : 1) * sizeof(*w));
	size_t n = 0;

	*out = NULL;
	*nr = 0;
	if (!w)
		return -ENOMEM;
	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		const struct uks_damon_rec_snapshot *s = &rec->snapshots[i];
		uint64_t wss = 0;

		if (s->target_id != target_id)
			continue;
		for (uint32_t j = 0; j < s->nr_regions; j++)
			if (s->regions[j].nr_accesses >= acc_thres &&
			    rsize(&s->regions[j]) >= sz_thres)
				wss += rsize(&s->regions[j]);
		w[n++] = wss;
	}
	if (sort)
		qsort(w, n, sizeof(*w), cmp_u64);
	*out = w;
	*nr = n;
	return 0;
}
