// SPDX-License-Identifier: MIT
/*
 * damo's json record into a struct uks_damon_record.
 *
 * The file (damo 2.0.3 to 3.x, _damo_records.py; json_compressed is the
 * same text as one zlib stream, record_zlib.c) is a list of records, one
 * per target:
 *
 *	{ "kdamond_idx", "context_idx", "scheme_idx": null or a number,
 *	  "intervals": null or { "sample_us", "aggr_us", "ops_update_us",
 *				 ["intervals_goal"] },
 *	  "target_id": a number,  ["scheme_filters", "data_source"],
 *	  "snapshots": [ { "start_time", "end_time" (ns),
 *			   "regions": [ { "start", "end",
 *					  ["nr_accesses": { "samples", "percent" },
 *					   "age": { "usec", "aggr_intervals" },
 *					   "probe_hits", "sz_filter_passed"] } ],
 *			   ["total_bytes", "damos_stats", "sample_interval_us"] } ] }
 *
 * A value is a JSON number or a string of one as damo's text_to_*() read
 * them: digits with commas ("4,096"), a fraction, "max", and a unit for
 * sizes ("0 B", "4 KiB") and times ("5 ms", "1 s 500 ms").  An access count
 * given in percent is turned into samples with the record's intervals, an
 * age in us into aggregation intervals, as damo's add_unset_unit() does;
 * without intervals they are -EINVAL.  Members uks has no use for are
 * skipped; a member it needs that is missing or of a wrong kind is
 * -EINVAL, with the offset of the value (or of the object lacking it) and
 * the reason.
 *
 * Snapshots go into the record in order of end time, then of target id
 * (targets interleaved, as in a binary record); each keeps its own start
 * time.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include <uks/slab.h>

#include "core/mem_avail.h"
#include "damon/record/json.h"
#include "damon/record/record.h"

enum vkind { V_NR, V_BYTES, V_NS, V_US, V_PERCENT };

struct jr {
	struct json_doc d;
	struct uks_damon_record *rec;
	struct uks_damon_rec_diag *diag;
	uint32_t entry;		/* the snapshot (or record) being read */
};

static int bad_at(struct jr *r, uint64_t at, const char *why)
{
	if (r->diag)
		*r->diag = (struct uks_damon_rec_diag){ r->entry, at, why };
	return -EINVAL;
}

static int bad(struct jr *r, uint32_t tok, const char *why)
{
	return bad_at(r, r->d.toks[tok].start, why);
}

static long double unit_scale(const char *u, size_t n, enum vkind k, bool *ok)
{
	static const struct { const char *name; long double ns; } times[] = {
		{ "ns", 1 }, { "us", 1e3L }, { "ms", 1e6L }, { "s", 1e9L },
		{ "m", 60e9L }, { "h", 3600e9L }, { "d", 86400e9L },
	};
	static const char *const sizes[] = { "B", "K", "M", "G", "T", "P", "E" };

	*ok = true;
	if (k == V_NS || k == V_US) {
		for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
			if (strlen(times[i].name) == n && !memcmp(u, times[i].name, n))
				return k == V_US ? times[i].ns / 1e3L : times[i].ns;
	} else if (k == V_BYTES) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			if (u[0] != sizes[i][0] || n > 3 ||
			    (n == 2 && (i == 0 || u[1] != 'B')) || (n == 3 && (i == 0 || memcmp(u + 1, "iB", 2))))
				continue;
			return (long double)(1ULL << (10 * i));
		}
	} else if (k == V_PERCENT && n == 1 && u[0] == '%') {
		return 1;
	}
	*ok = false;
	return 0;
}

/*
 * A number in damo's text: "[-]D[,D...][.D][e[+-]D]" and, for kinds with
 * units, an optional unit; times may be several "N unit" terms.
 */
static int text_value(const char *s, size_t len, enum vkind k, long double *out)
{
	size_t i = 0;
	long double sum = 0;
	int terms = 0;

	if (len == 3 && !memcmp(s, "max", 3)) {
		*out = 18446744073709551615.0L;
		return 0;
	}
	while (i < len) {
		long double v = 0, scale = 1;
		bool neg = false, digits = false, ok;
		size_t u;

		while (i < len && s[i] == ' ')
			i++;
		if (i == len)
			break;
		if (s[i] == '-') {
			neg = true;
			i++;
		}
		for (; i < len && ((s[i] >= '0' && s[i] <= '9') || (s[i] == ',' && digits)); i++) {
			if (s[i] == ',')
				continue;
			v = v * 10 + (s[i] - '0');
			digits = true;
		}
		if (i < len && s[i] == '.') {
			long double f = 0.1L;

			for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++, f /= 10) {
				v += f * (s[i] - '0');
				digits = true;
			}
		}
		if (!digits)
			return -EINVAL;
		if (i < len && (s[i] == 'e' || s[i] == 'E') && i + 1 < len &&
		    ((s[i + 1] >= '0' && s[i + 1] <= '9') || s[i + 1] == '-' || s[i + 1] == '+')) {
			int e = 0, esign = 1;

			i++;
			if (s[i] == '-' || s[i] == '+')
				esign = s[i++] == '-' ? -1 : 1;
			if (i >= len || s[i] < '0' || s[i] > '9')
				return -EINVAL;
			for (; i < len && s[i] >= '0' && s[i] <= '9'; i++)
				if (e < 10000)
					e = e * 10 + (s[i] - '0');
			/* past 1e5000 a long double is infinite or 0 anyway */
			for (int j = 0; j < e && j < 5000 && v != 0 && isfinite(v); j++)
				v = esign > 0 ? v * 10 : v / 10;
		}
		while (i < len && s[i] == ' ')
			i++;
		for (u = i; i < len && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
					s[i] == '%'); i++)
			;
		if (i > u) {
			scale = unit_scale(s + u, i - u, k, &ok);
			if (!ok)
				return -EINVAL;
		}
		sum += neg ? -v * scale : v * scale;
		terms++;
		if (k != V_NS && k != V_US && i < len)
			return -EINVAL;
	}
	if (!terms || !isfinite(sum))
		return -EINVAL;
	*out = sum;
	return 0;
}

/* The value at @t as a number of kind @k, in [0, @max]. */
static int get_val(struct jr *r, uint32_t t, enum vkind k, uint64_t max, long double *out,
		   const char *what)
{
	const struct json_tok *tok = &r->d.toks[t];
	char buf[96];
	long double v;

	if (!t)		/* missing: the object it is missing from */
		return bad_at(r, r->entry, what);
	if (tok->type == JSON_NUMBER) {
		if (text_value(r->d.text + tok->start, tok->len, V_NR, &v))
			return bad(r, t, what);
	} else if (tok->type == JSON_STRING) {
		if (__uks_damon_json_str(&r->d, t, buf, sizeof(buf)) ||
		    text_value(buf, strlen(buf), k, &v))
			return bad(r, t, what);
	} else {
		return bad(r, t, what);
	}
	if (!(v >= 0) || v > (long double)max)
		return bad(r, t, what);
	*out = v;
	return 0;
}

/* The same, truncated toward 0 as damo's int() */
static int get_num(struct jr *r, uint32_t t, enum vkind k, uint64_t max, uint64_t *out,
		   const char *what)
{
	long double v;
	int ret = get_val(r, t, k, max, &v, what);

	if (!ret)
		*out = (uint64_t)v;
	return ret;
}

static bool is_null(const struct jr *r, uint32_t t)
{
	return !t || r->d.toks[t].type == JSON_NULL;
}

static int read_intervals(struct jr *r, uint32_t t, struct uks_damon_rec_intervals *iv)
{
	int ret;

	*iv = (struct uks_damon_rec_intervals){ 0 };
	if (is_null(r, t))
		return 0;
	if (r->d.toks[t].type != JSON_OBJECT)
		return bad(r, t, "intervals is no object");
	ret = get_num(r, __uks_damon_json_get(&r->d, t, "sample_us"), V_US, UINT64_MAX,
		      &iv->sample_us, "a bad or missing intervals sample_us");
	if (!ret)
		ret = get_num(r, __uks_damon_json_get(&r->d, t, "aggr_us"), V_US, UINT64_MAX,
			      &iv->aggr_us, "a bad or missing intervals aggr_us");
	if (!ret)
		ret = get_num(r, __uks_damon_json_get(&r->d, t, "ops_update_us"), V_US,
			      UINT64_MAX, &iv->update_us,
			      "a bad or missing intervals ops_update_us");
	return ret;
}

static int read_region(struct jr *r, uint32_t t, const struct uks_damon_rec_intervals *iv,
		       struct uks_damon_rec_region *out)
{
	uint32_t acc, age, v;
	uint64_t x;
	int ret;

	if (r->d.toks[t].type != JSON_OBJECT)
		return bad(r, t, "a region is no object");
	*out = (struct uks_damon_rec_region){ 0 };
	ret = get_num(r, __uks_damon_json_get(&r->d, t, "start"), V_BYTES, UINT64_MAX,
		      &out->start, "a bad or missing region start");
	if (!ret)
		ret = get_num(r, __uks_damon_json_get(&r->d, t, "end"), V_BYTES, UINT64_MAX,
			      &out->end, "a bad or missing region end");
	if (ret)
		return ret;
	if (out->end < out->start)
		return bad(r, t, "region end below its start");
	acc = __uks_damon_json_get(&r->d, t, "nr_accesses");
	if (!is_null(r, acc)) {
		if (r->d.toks[acc].type != JSON_OBJECT)
			return bad(r, acc, "nr_accesses is no object");
		v = __uks_damon_json_get(&r->d, acc, "samples");
		if (!is_null(r, v)) {
			ret = get_num(r, v, V_NR, UINT32_MAX, &x, "a bad nr_accesses samples");
		} else {
			v = __uks_damon_json_get(&r->d, acc, "percent");
			if (is_null(r, v))
				return bad(r, acc, "nr_accesses without samples or percent");
			if (!iv->sample_us || !iv->aggr_us)
				return bad(r, v, "nr_accesses in percent without intervals");
			long double pct, smp;

			ret = get_val(r, v, V_PERCENT, UINT32_MAX, &pct, "a bad nr_accesses percent");
			/* damo: samples = int(percent * (aggr / sample) / 100) */
			smp = pct * ((long double)iv->aggr_us / (long double)iv->sample_us) / 100;
			if (!ret && smp > UINT32_MAX)
				return bad(r, v, "a bad nr_accesses percent");
			x = ret ? 0 : (uint64_t)smp;
		}
		if (ret)
			return ret;
		out->nr_accesses = (uint32_t)x;
	}
	age = __uks_damon_json_get(&r->d, t, "age");
	if (!is_null(r, age)) {
		if (r->d.toks[age].type != JSON_OBJECT)
			return bad(r, age, "age is no object");
		v = __uks_damon_json_get(&r->d, age, "aggr_intervals");
		if (!is_null(r, v)) {
			ret = get_num(r, v, V_NR, UINT32_MAX, &x, "a bad age aggr_intervals");
		} else if (!is_null(r, v = __uks_damon_json_get(&r->d, age, "usec"))) {
			if (!iv->aggr_us)
				return bad(r, v, "an age in usec without intervals");
			long double us;

			ret = get_val(r, v, V_US, UINT64_MAX, &us, "a bad age usec");
			us /= (long double)iv->aggr_us;		/* damo: int(usec / aggr) */
			if (!ret && us > UINT32_MAX)
				return bad(r, v, "a bad age usec");
			x = ret ? 0 : (uint64_t)us;
		} else {
			x = 0;
		}
		if (ret)
			return ret;
		out->age = (uint32_t)x;
	}
	return 0;
}

static int read_snapshot(struct jr *r, uint32_t t, uint64_t tid,
			 const struct uks_damon_rec_intervals *iv)
{
	struct uks_damon_rec_snapshot s = { .target_id = tid }, *d;
	uint64_t start, end;
	uint32_t regs, k, nr;
	int ret;

	r->entry = r->d.toks[t].start;
	if (r->d.toks[t].type != JSON_OBJECT)
		return bad(r, t, "a snapshot is no object");
	ret = get_num(r, __uks_damon_json_get(&r->d, t, "start_time"), V_NS, INT64_MAX, &start,
		      "a bad or missing start_time");
	if (!ret)
		ret = get_num(r, __uks_damon_json_get(&r->d, t, "end_time"), V_NS, INT64_MAX, &end,
			      "a bad or missing end_time");
	if (ret)
		return ret;
	regs = __uks_damon_json_get(&r->d, t, "regions");
	if (!regs || r->d.toks[regs].type != JSON_ARRAY)
		return bad(r, regs ? regs : t, "a snapshot without a regions list");
	s.start_ns = (int64_t)start;
	s.end_ns = (int64_t)end;
	ret = __uks_damon_rec_append(r->rec, &s);	/* its regions are filled in place */
	if (ret)
		return ret;
	nr = r->d.toks[regs].n;
	if (!nr)
		return 0;
	d = &r->rec->snapshots[r->rec->nr_snapshots - 1];
	/* the tokens bound the count: each region took at least 2 bytes */
	d->regions = uks_kmalloc((size_t)nr * sizeof(*d->regions));
	if (!d->regions)
		return -ENOMEM;
	k = regs + 1;
	for (uint32_t i = 0; i < nr; i++) {
		ret = read_region(r, k, iv, &d->regions[i]);
		if (ret)
			return ret;
		d->nr_regions++;
		k = r->d.toks[k].next;
	}
	return 0;
}

static int read_target(struct jr *r, uint32_t t)
{
	struct uks_damon_rec_intervals iv;
	uint32_t snaps, k;
	uint64_t tid = 0;
	int ret;

	r->entry = r->d.toks[t].start;
	if (r->d.toks[t].type != JSON_OBJECT)
		return bad(r, t, "a record is no object");
	k = __uks_damon_json_get(&r->d, t, "target_id");
	if (!is_null(r, k)) {
		ret = get_num(r, k, V_NR, UINT64_MAX, &tid, "a bad target_id");
		if (ret)
			return ret;
	}
	ret = read_intervals(r, __uks_damon_json_get(&r->d, t, "intervals"), &iv);
	if (ret)
		return ret;
	if (!r->rec->intervals.aggr_us)
		r->rec->intervals = iv;
	snaps = __uks_damon_json_get(&r->d, t, "snapshots");
	if (!snaps || r->d.toks[snaps].type != JSON_ARRAY)
		return bad(r, snaps ? snaps : t, "a record without a snapshots list");
	k = snaps + 1;
	for (uint32_t i = 0; i < r->d.toks[snaps].n; i++) {
		ret = read_snapshot(r, k, tid, &iv);
		if (ret)
			return ret;
		k = r->d.toks[k].next;
	}
	return 0;
}

/*
 * Stable merge sort of the snapshots by end time, then target id: the
 * order then does not depend on how the file grouped them, so a record
 * written and read again comes back in the same order.
 */
static bool before(const struct uks_damon_rec_snapshot *a, const struct uks_damon_rec_snapshot *b)
{
	return a->end_ns < b->end_ns || (a->end_ns == b->end_ns && a->target_id < b->target_id);
}

static int sort_by_end(struct uks_damon_record *rec)
{
	size_t n = rec->nr_snapshots;
	struct uks_damon_rec_snapshot *a = rec->snapshots, *tmp;

	if (n < 2)
		return 0;
	if (__uks_mem_may_allocate_array(n, sizeof(*tmp)))
		return -ENOMEM;
	tmp = uks_kmalloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (size_t w = 1; w < n; w *= 2) {
		for (size_t lo = 0; lo < n; lo += 2 * w) {
			size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			size_t i = lo, j = mid, o = lo;

			while (i < mid && j < hi)
				tmp[o++] = before(&a[j], &a[i]) ? a[j++] : a[i++];
			while (i < mid)
				tmp[o++] = a[i++];
			while (j < hi)
				tmp[o++] = a[j++];
		}
		memcpy(a, tmp, n * sizeof(*a));
	}
	uks_kfree(tmp);
	return 0;
}

/**
 * __uks_damon_rec_read_json - damo's json text into @rec
 * @rec:	an empty record (its version is set by the caller)
 * @text:	the text
 * @len:	its length
 * @diag:	where and why it failed (offsets in @text), or NULL
 *
 * Return: 0, -EINVAL (no JSON, or no damo record), -ENOMEM.
 */
int __uks_damon_rec_read_json(struct uks_damon_record *rec, const char *text, size_t len,
			      struct uks_damon_rec_diag *diag)
{
	struct jr r = { .rec = rec, .diag = diag };
	uint32_t k;
	int ret = __uks_damon_json_parse(&r.d, text, len);

	if (ret) {
		if (diag)
			*diag = (struct uks_damon_rec_diag){ 0, r.d.err_at, r.d.err };
		goto out;
	}
	if (r.d.toks[0].type != JSON_ARRAY) {
		ret = bad(&r, 0, "no list of records");
		goto out;
	}
	k = 1;
	for (uint32_t i = 0; i < r.d.toks[0].n && !ret; i++) {
		ret = read_target(&r, k);
		k = r.d.toks[k].next;
	}
	if (!ret)
		ret = sort_by_end(rec);
out:
	__uks_damon_json_free(&r.d);
	return ret;
}
