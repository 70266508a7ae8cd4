// SPDX-License-Identifier: MIT
/*
 * damo's "work time" adjustment of a record: consecutive snapshots of a
 * target are merged into one per unit of work, so that `report wss
 * --work_time` gives the working set of that unit rather than of one
 * aggregation interval.
 *
 * The rules are damo's (wss --work_time, --exclude_samples):
 *  - a target's snapshot time is its span (first start to last end) over
 *    its number of snapshots; a unit is round(work_time * 1000 / that)
 *    snapshots, at least one;
 *  - a unit of one leaves the target as it is, nothing excluded;
 *  - otherwise the first @exclude_samples snapshots are dropped (the
 *    regions have not adapted yet) and the rest grouped, the last group
 *    possibly short;
 *  - within a group, a region of a later snapshot adds to every region it
 *    overlaps the largest count among the later snapshot's regions that
 *    overlap it, and the parts it shares with no region so far join the
 *    group as regions of their own with its count.
 *
 * The group's regions stay disjoint (the first snapshot's are, and only
 * uncovered parts are added), so both lists are swept in address order.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/damon_record.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/record/record.h"

struct region_vec {
	struct uks_damon_rec_region *r;
	uint32_t n, cap;
};

static int vec_push(struct region_vec *v, uint64_t start, uint64_t end, uint32_t nr)
{
	if (v->n == v->cap) {
		uint32_t ncap = v->cap ? 2 * v->cap : 16;
		void *p;

		if (ncap < v->cap)
			return -ENOMEM;
		p = uks_krealloc(v->r, (size_t)ncap * sizeof(*v->r));
		if (!p)
			return -ENOMEM;
		v->r = p;
		v->cap = ncap;
	}
	v->r[v->n++] = (struct uks_damon_rec_region){ .start = start, .end = end, .nr_accesses = nr };
	return 0;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a + b < a ? UINT32_MAX : a + b;
}

static int cmp_start(const void *a, const void *b)
{
	const struct uks_damon_rec_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/*
 * Fold snapshot @s into @g: @add (one slot per region of @g, zeroed)
 * collects the largest overlapping count, @fresh the uncovered parts.
 */
static int fold(struct region_vec *g, const struct uks_damon_rec_snapshot *s, uint32_t *add,
		struct region_vec *fresh)
{
	uint32_t first = 0;
	int ret;

	fresh->n = 0;
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct uks_damon_rec_region *r = &s->regions[i];
		uint64_t at = r->start;

		if (r->end <= r->start)
			continue;
		/* the group's regions ending at or before r start are behind us */
		while (first < g->n && g->r[first].end <= r->start)
			first++;
		for (uint32_t j = first; j < g->n && g->r[j].start < r->end; j++) {
			if (g->r[j].start > at) {
				ret = vec_push(fresh, at, g->r[j].start, r->nr_accesses);
				if (ret)
					return ret;
			}
			if (r->nr_accesses > add[j])
				add[j] = r->nr_accesses;
			if (g->r[j].end > at)
				at = g->r[j].end;
		}
		if (at < r->end) {
			ret = vec_push(fresh, at, r->end, r->nr_accesses);
			if (ret)
				return ret;
		}
	}
	for (uint32_t j = 0; j < g->n; j++)
		g->r[j].nr_accesses = sat_add(g->r[j].nr_accesses, add[j]);
	for (uint32_t k = 0; k < fresh->n; k++) {
		ret = vec_push(g, fresh->r[k].start, fresh->r[k].end, fresh->r[k].nr_accesses);
		if (ret)
			return ret;
	}
	if (fresh->n)
		qsort(g->r, g->n, sizeof(*g->r), cmp_start);
	return 0;
}

/*
 * Merge the snapshots of target @t of @tg after the first @skip, @unit at
 * a time, into @out.
 */
static int group_target(const struct uks_damon_record *rec, const struct uks_damon_rec_targets *tg,
			size_t t, size_t skip, size_t unit, struct uks_damon_record *out)
{
	uint64_t tid = tg->ids[t];
	struct region_vec g = { 0 }, fresh = { 0 };
	struct uks_damon_rec_snapshot acc = { .target_id = tid };
	uint32_t *add = NULL, add_cap = 0;
	size_t in_group = 0, from = tg->first[t] + skip;
	int ret = 0;

	if (from < tg->first[t] || from > tg->first[t + 1])	/* all excluded */
		from = tg->first[t + 1];
	for (size_t k = from; k < tg->first[t + 1] && !ret; k++) {
		const struct uks_damon_rec_snapshot *s = &rec->snapshots[tg->order[k]];

		if (!in_group) {
			acc.start_ns = s->start_ns;
			g.n = 0;
		}
		if (g.n > add_cap) {
			uint32_t *p = uks_krealloc(add, (size_t)g.n * sizeof(*add));

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			add = p;
			add_cap = g.n;
		}
		if (g.n)
			memset(add, 0, (size_t)g.n * sizeof(*add));
		ret = fold(&g, s, add, &fresh);
		acc.end_ns = s->end_ns;
		if (!ret && ++in_group == unit) {
			acc.nr_regions = g.n;
			acc.regions = g.r;
			ret = __uks_damon_rec_append(out, &acc);
			in_group = 0;
		}
	}
	if (!ret && in_group) {
		acc.nr_regions = g.n;
		acc.regions = g.r;
		ret = __uks_damon_rec_append(out, &acc);
	}
	uks_kfree(g.r);
	uks_kfree(fresh.r);
	uks_kfree(add);
	return ret;
}

/* The number of snapshots damo merges into one unit of @work_time_us. */
static size_t unit_of(const struct uks_damon_record *rec, const struct uks_damon_rec_targets *tg,
		      size_t t, uint64_t work_time_us)
{
	size_t n = tg->first[t + 1] - tg->first[t];
	int64_t first, last;
	double per_snapshot, unit;
	size_t whole;

	if (!n)
		return 1;
	first = rec->snapshots[tg->order[tg->first[t]]].start_ns;
	last = rec->snapshots[tg->order[tg->first[t + 1] - 1]].end_ns;
	per_snapshot = ((double)last - (double)first) / (double)n;
	if (!(per_snapshot > 0))
		return 1;
	unit = (double)work_time_us * 1000.0 / per_snapshot;
	if (!(unit >= 1.5))
		return 1;
	if (unit >= 0x1p53)
		return SIZE_MAX;
	/* Python's round(): halves go to the even neighbour */
	whole = (size_t)unit;
	if (unit - (double)whole > 0.5 || (unit - (double)whole == 0.5 && (whole & 1)))
		whole++;
	return whole;
}

/**
 * uks_damon_record_adjust - group snapshots into units of work (damo's --work_time)
 * @rec:		the record
 * @work_time_us:	the time of one unit of work, in microseconds
 * @exclude_samples:	snapshots to drop first from each target that is grouped
 * @out:		the adjusted record (free with uks_damon_record_free())
 *
 * See the top of lib/damon/record/adjust.c for the rules.  Targets keep their
 * order of appearance; each one's snapshots are contiguous in @out.
 *
 * Return: 0 or -ENOMEM.
 */
UKS_EXPORT int uks_damon_record_adjust(const struct uks_damon_record *rec, uint64_t work_time_us,
				       size_t exclude_samples, struct uks_damon_record **out)
{
	struct uks_damon_record *adj = uks_kzalloc(sizeof(*adj));
	struct uks_damon_rec_targets tg;
	int ret;

	*out = NULL;
	if (!adj)
		return -ENOMEM;
	adj->version = rec->version;
	ret = uks_damon_record_group(rec, &tg);
	for (size_t t = 0; t < tg.nr && !ret; t++) {
		size_t unit = unit_of(rec, &tg, t, work_time_us);

		if (unit > 1) {
			ret = group_target(rec, &tg, t, exclude_samples, unit, adj);
			continue;
		}
		for (size_t k = tg.first[t]; k < tg.first[t + 1] && !ret; k++)
			ret = __uks_damon_rec_append(adj, &rec->snapshots[tg.order[k]]);
	}
	uks_damon_record_group_free(&tg);
	if (ret) {
		uks_damon_record_free(adj);
		return ret;
	}
	*out = adj;
	return 0;
}
