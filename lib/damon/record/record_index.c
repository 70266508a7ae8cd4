// SPDX-License-Identifier: MIT
/*
 * Target ids of DAMON records: a hash map from id to a dense index (order
 * of first appearance), and the snapshots of a record grouped by target.
 *
 * Why a map: a record may hold any number of targets (a garbage file
 * parses as one target per entry), and every per-target walk of the
 * reports and the reader was a search over the targets found so far, so
 * a file of n entries cost n^2.  With the map each lookup is O(1) and the
 * grouping is a counting sort: memory and time follow the file's size.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/record/record.h"

#define EMPTY	SIZE_MAX

static size_t slot_of(uint64_t key, size_t mask)
{
	key ^= key >> 33;
	key *= 0xff51afd7ed558ccdULL;
	key ^= key >> 33;
	return (size_t)key & mask;
}

static int grow(struct tid_map *m)
{
	size_t ncap = m->mask ? 2 * (m->mask + 1) : 16;
	uint64_t *keys;
	size_t *vals;

	if (ncap > SIZE_MAX / sizeof(*vals) / 2)
		return -ENOMEM;
	keys = uks_kmalloc(ncap * sizeof(*keys));
	vals = uks_kmalloc(ncap * sizeof(*vals));
	if (!keys || !vals) {
		uks_kfree(keys);
		uks_kfree(vals);
		return -ENOMEM;
	}
	memset(vals, 0xff, ncap * sizeof(*vals));	/* EMPTY */
	for (size_t i = 0; m->mask && i <= m->mask; i++) {
		size_t s;

		if (m->vals[i] == EMPTY)
			continue;
		for (s = slot_of(m->keys[i], ncap - 1); vals[s] != EMPTY; s = (s + 1) & (ncap - 1))
			;
		keys[s] = m->keys[i];
		vals[s] = m->vals[i];
	}
	uks_kfree(m->keys);
	uks_kfree(m->vals);
	m->keys = keys;
	m->vals = vals;
	m->mask = ncap - 1;
	return 0;
}

/*
 * The index of @key in @m, added as the next index (m->nr before the call)
 * when it is new.  Return: 1 if added, 0 if found, -ENOMEM.
 */
int __uks_damon_tidmap_get(struct tid_map *m, uint64_t key, size_t *idx)
{
	size_t s;

	if ((m->nr + 1) * 2 > m->mask + 1 && grow(m))
		return -ENOMEM;
	for (s = slot_of(key, m->mask); m->vals[s] != EMPTY; s = (s + 1) & m->mask) {
		if (m->keys[s] == key) {
			*idx = m->vals[s];
			return 0;
		}
	}
	m->keys[s] = key;
	m->vals[s] = m->nr;
	*idx = m->nr++;
	return 1;
}

void __uks_damon_tidmap_free(struct tid_map *m)
{
	uks_kfree(m->keys);
	uks_kfree(m->vals);
	memset(m, 0, sizeof(*m));
}

/**
 * uks_damon_record_group - the snapshots of @rec grouped by target
 * @rec:	the record
 * @out:	filled in (free with uks_damon_record_group_free())
 *
 * Time and memory are linear in the number of snapshots.
 * Return: 0 or -ENOMEM.
 */
UKS_EXPORT int uks_damon_record_group(const struct uks_damon_record *rec,
				      struct uks_damon_rec_targets *out)
{
	size_t n = rec->nr_snapshots, *tidx = NULL;
	struct tid_map m = { 0 };
	int ret = 0;

	memset(out, 0, sizeof(*out));
	if (n > SIZE_MAX / sizeof(size_t) - 1)
		return -ENOMEM;
	tidx = uks_kmalloc((n ? n : 1) * sizeof(*tidx));
	out->order = uks_kmalloc((n ? n : 1) * sizeof(*out->order));
	if (!tidx || !out->order)
		ret = -ENOMEM;
	for (size_t i = 0; i < n && !ret; i++)
		ret = __uks_damon_tidmap_get(&m, rec->snapshots[i].target_id, &tidx[i]) < 0 ?
		      -ENOMEM : 0;
	if (!ret) {
		out->nr = m.nr;
		out->ids = uks_kmalloc((m.nr ? m.nr : 1) * sizeof(*out->ids));
		out->first = uks_kzalloc((m.nr + 1) * sizeof(*out->first));
		if (!out->ids || !out->first)
			ret = -ENOMEM;
	}
	if (!ret) {
		/* counting sort by target index, stable: file order within a target */
		for (size_t i = 0; i < n; i++) {
			if (!out->first[tidx[i] + 1]++)
				out->ids[tidx[i]] = rec->snapshots[i].target_id;
		}
		for (size_t t = 0; t < m.nr; t++)
			out->first[t + 1] += out->first[t];
	}
	if (!ret) {
		/* each target's slice filled front to back */
		size_t *pos = uks_kmalloc((m.nr ? m.nr : 1) * sizeof(*pos));

		if (!pos) {
			ret = -ENOMEM;
		} else {
			memcpy(pos, out->first, m.nr * sizeof(*pos));
			for (size_t i = 0; i < n; i++)
				out->order[pos[tidx[i]]++] = i;
			uks_kfree(pos);
		}
	}
	uks_kfree(tidx);
	__uks_damon_tidmap_free(&m);
	if (ret)
		uks_damon_record_group_free(out);
	return ret;
}

/** uks_damon_record_group_free - free what uks_damon_record_group() filled in */
UKS_EXPORT void uks_damon_record_group_free(struct uks_damon_rec_targets *g)
{
	uks_kfree(g->ids);
	uks_kfree(g->first);
	uks_kfree(g->order);
	memset(g, 0, sizeof(*g));
}

/**
 * uks_damon_record_targets - the target ids of @rec, in order of appearance
 * @rec:	the record
 * @ids:	filled with up to @max ids
 * @max:	room in @ids
 *
 * Return: the number of distinct targets (may exceed @max; at most
 * INT_MAX), or -ENOMEM.
 */
UKS_EXPORT int uks_damon_record_targets(const struct uks_damon_record *rec, uint64_t *ids,
					size_t max)
{
	struct tid_map m = { 0 };
	size_t idx;
	int ret = 0;

	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		ret = __uks_damon_tidmap_get(&m, rec->snapshots[i].target_id, &idx);
		if (ret < 0)
			break;
		if (ret && idx < max)
			ids[idx] = rec->snapshots[i].target_id;
	}
	if (ret >= 0)
		ret = m.nr > INT_MAX ? INT_MAX : (int)m.nr;
	__uks_damon_tidmap_free(&m);
	return ret;
}
