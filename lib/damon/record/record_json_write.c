// SPDX-License-Identifier: MIT
/*
 * damo's json and json_compressed records out of a struct
 * uks_damon_record, and the zlib side of reading json_compressed.
 *
 * The text is laid out as damo's write_json() lays it out (json.dumps()
 * with an indent of 4, the members in damo's order, sizes and times as
 * strings of digits, samples as numbers), so that every damo from 2.0.3
 * on reads it: those read "kdamond_idx", "context_idx", "scheme_idx",
 * "intervals" and, per age, "usec" without a default, so all are written.
 * Ages go in aggregation intervals and counts in samples, the units the
 * tracepoint reports; damo derives the others from the intervals.  A
 * record with no intervals (one read from a binary record) says null.
 *
 * json_compressed is the same text as one zlib stream (zlib.compress() in
 * damo; `file` says "zlib compressed data", which is how damo tells it).
 * The text is produced and compressed in 64 KiB pieces, so writing costs
 * no more than the record itself.  Reading inflates the whole file first,
 * to at most JSON_MAX_TEXT bytes, each growth checked against the memory
 * this process may take.  Built without zlib (UKS_HAVE_ZLIB 0), the
 * compressed format is -EOPNOTSUPP both ways.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <config.h>
#if UKS_HAVE_ZLIB
#include <zlib.h>
#endif

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/mem_avail.h"
#include "damon/record/json.h"
#include "damon/record/record.h"

#define JW_BUF	(64 * 1024)

struct jw {
	int fd;
	int err;
	bool compress;
	size_t len;
	char buf[JW_BUF];
#if UKS_HAVE_ZLIB
	z_stream zs;
	unsigned char zbuf[JW_BUF];
#endif
};

static int write_all(int fd, const void *p, size_t len)
{
	const char *c = p;

	while (len) {
		ssize_t n = write(fd, c, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		c += n;
		len -= (size_t)n;
	}
	return 0;
}

static void jw_flush(struct jw *w, bool last)
{
	if (w->err)
		return;
	if (!w->compress) {
		w->err = write_all(w->fd, w->buf, w->len);
		w->len = 0;
		return;
	}
#if UKS_HAVE_ZLIB
	w->zs.next_in = (unsigned char *)w->buf;
	w->zs.avail_in = (unsigned int)w->len;
	do {
		int zr;

		w->zs.next_out = w->zbuf;
		w->zs.avail_out = sizeof(w->zbuf);
		zr = deflate(&w->zs, last ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			w->err = -EIO;
			return;
		}
		w->err = write_all(w->fd, w->zbuf, sizeof(w->zbuf) - w->zs.avail_out);
	} while (!w->err && (w->zs.avail_out == 0 || w->zs.avail_in));
#endif
	w->len = 0;
}

static void __attribute__((format(printf, 2, 3))) jw_printf(struct jw *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->err)
		return;
	if (JW_BUF - w->len < 256)
		jw_flush(w, false);
	va_start(ap, fmt);
	n = vsnprintf(w->buf + w->len, JW_BUF - w->len, fmt, ap);
	va_end(ap);
	if (n > 0 && (size_t)n < JW_BUF - w->len)
		w->len += (size_t)n;
	else
		w->err = -EOVERFLOW;	/* no line here is that long */
}

/* One region, at the indent damo's json.dumps(indent=4) gives it. */
static void jw_region(struct jw *w, const struct uks_damon_rec_region *r, bool last)
{
	jw_printf(w, "                    {\n"
		  "                        \"start\": \"%" PRIu64 "\",\n"
		  "                        \"end\": \"%" PRIu64 "\",\n",
		  r->start, r->end);
	jw_printf(w, "                        \"nr_accesses\": {\n"
		  "                            \"samples\": %" PRIu32 ",\n"
		  "                            \"percent\": null\n"
		  "                        },\n", r->nr_accesses);
	jw_printf(w, "                        \"age\": {\n"
		  "                            \"usec\": null,\n"
		  "                            \"aggr_intervals\": \"%" PRIu32 "\"\n"
		  "                        },\n", r->age);
	jw_printf(w, "                        \"probe_hits\": [],\n"
		  "                        \"sz_filter_passed\": \"0\"\n"
		  "                    }%s\n", last ? "" : ",");
}

static void jw_snapshot(struct jw *w, const struct uks_damon_rec_snapshot *s, bool last)
{
	uint64_t total = 0;

	jw_printf(w, "            {\n"
		  "                \"start_time\": \"%" PRId64 "\",\n"
		  "                \"end_time\": \"%" PRId64 "\",\n"
		  "                \"regions\": [%s", s->start_ns, s->end_ns,
		  s->nr_regions ? "\n" : "],\n");
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		total += s->regions[i].end - s->regions[i].start;
		jw_region(w, &s->regions[i], i + 1 == s->nr_regions);
	}
	if (s->nr_regions)
		jw_printf(w, "                ],\n");
	jw_printf(w, "                \"total_bytes\": \"%" PRIu64 "\",\n"
		  "                \"damos_stats\": null,\n"
		  "                \"sample_interval_us\": null\n"
		  "            }%s\n", total, last ? "" : ",");
}

static void jw_target(struct jw *w, const struct uks_damon_record *rec,
		      const struct uks_damon_rec_targets *g, size_t t)
{
	const struct uks_damon_rec_intervals *iv = &rec->intervals;
	size_t first = g->first[t], end = g->first[t + 1];

	jw_printf(w, "    {\n"
		  "        \"kdamond_idx\": null,\n"
		  "        \"context_idx\": null,\n");
	if (iv->sample_us || iv->aggr_us || iv->update_us)
		jw_printf(w, "        \"intervals\": {\n"
			  "            \"sample_us\": \"%" PRIu64 "\",\n"
			  "            \"aggr_us\": \"%" PRIu64 "\",\n"
			  "            \"ops_update_us\": \"%" PRIu64 "\"\n"
			  "        },\n", iv->sample_us, iv->aggr_us, iv->update_us);
	else
		jw_printf(w, "        \"intervals\": null,\n");
	jw_printf(w, "        \"scheme_idx\": null,\n"
		  "        \"target_id\": %" PRIu64 ",\n"
		  "        \"scheme_filters\": [],\n"
		  "        \"snapshots\": [%s", g->ids[t], first < end ? "\n" : "],\n");
	for (size_t k = first; k < end; k++)
		jw_snapshot(w, &rec->snapshots[g->order[k]], k + 1 == end);
	if (first < end)
		jw_printf(w, "        ],\n");
	jw_printf(w, "        \"data_source\": \"unknown\"\n"
		  "    }%s", t + 1 == g->nr ? "\n" : ",\n");
}

/* @rec as damo's json (or json_compressed) text on @fd */
int __uks_damon_rec_write_json(const struct uks_damon_record *rec, int fd, bool compress)
{
	struct uks_damon_rec_targets g;
	struct jw *w;
	int ret;

#if !UKS_HAVE_ZLIB
	if (compress)
		return -EOPNOTSUPP;
#endif
	ret = uks_damon_record_group(rec, &g);
	if (ret)
		return ret;
	w = uks_kzalloc(sizeof(*w));
	if (!w) {
		uks_damon_record_group_free(&g);
		return -ENOMEM;
	}
	w->fd = fd;
	w->compress = compress;
#if UKS_HAVE_ZLIB
	if (compress && deflateInit(&w->zs, Z_DEFAULT_COMPRESSION) != Z_OK) {
		uks_kfree(w);
		uks_damon_record_group_free(&g);
		return -ENOMEM;
	}
#endif
	jw_printf(w, g.nr ? "[\n" : "[]");
	for (size_t t = 0; t < g.nr; t++)
		jw_target(w, rec, &g, t);
	if (g.nr)
		jw_printf(w, "]");
	jw_flush(w, true);
	ret = w->err;
#if UKS_HAVE_ZLIB
	if (compress)
		deflateEnd(&w->zs);
#endif
	uks_kfree(w);
	uks_damon_record_group_free(&g);
	return ret;
}

/* RFC 1950's header: deflate, a window up to 32 KiB, the check, no dictionary */
bool __uks_damon_rec_is_zlib(const unsigned char *p, size_t len)
{
	return len >= 2 && (p[0] & 0x0f) == 8 && (p[0] >> 4) <= 7 && !(p[1] & 0x20) &&
	       ((p[0] << 8) | p[1]) % 31 == 0;
}

/**
 * __uks_damon_rec_inflate - one zlib stream, whole, into a new buffer
 * @in:		the stream
 * @len:	its length
 * @out:	the bytes (uks_kfree() them)
 * @out_len:	their number
 * @why:	the reason of an -EINVAL
 *
 * Return: 0, -EINVAL (a bad or cut stream, bytes after it), -ENOMEM (past
 * JSON_MAX_TEXT, or more memory than allowed), -EOPNOTSUPP (no zlib).
 */
int __uks_damon_rec_inflate(const void *in, size_t len, char **out, size_t *out_len,
			    const char **why)
{
#if UKS_HAVE_ZLIB
	z_stream zs = { 0 };
	char *buf = NULL;
	size_t cap = 0;
	int zr, ret = 0;

	*out = NULL;
	*why = NULL;
	if (len > UINT32_MAX || inflateInit(&zs) != Z_OK)
		return -ENOMEM;
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (unsigned int)len;
	do {
		if (zs.total_out == cap) {
			size_t ncap = cap ? 2 * cap : len < 1024 ? 4096 : 4 * len;
			void *n;

			if (ncap > JSON_MAX_TEXT)
				ncap = JSON_MAX_TEXT;
			if (ncap <= cap || __uks_mem_may_allocate(ncap)) {
				*why = "inflates past the size the JSON reader takes";
				ret = -ENOMEM;
				break;
			}
			n = uks_krealloc(buf, ncap);
			if (!n) {
				ret = -ENOMEM;
				break;
			}
			buf = n;
			cap = ncap;
		}
		zs.next_out = (unsigned char *)buf + zs.total_out;
		zs.avail_out = (unsigned int)(cap - zs.total_out);
		zr = inflate(&zs, Z_NO_FLUSH);
		if (zr == Z_NEED_DICT || zr == Z_DATA_ERROR) {
			*why = "a bad zlib stream";
			ret = -EINVAL;
		} else if (zr == Z_MEM_ERROR) {
			ret = -ENOMEM;
		} else if (zr == Z_BUF_ERROR && zs.avail_out) {
			*why = "a zlib stream cut short";
			ret = -EINVAL;
		}
	} while (!ret && zr != Z_STREAM_END);
	if (!ret && zs.avail_in) {
		*why = "bytes after the zlib stream";
		ret = -EINVAL;
	}
	if (!ret) {
		*out = buf;
		*out_len = zs.total_out;
	} else {
		uks_kfree(buf);
	}
	inflateEnd(&zs);
	return ret;
#else
	(void)in;
	(void)len;
	(void)out_len;
	*out = NULL;
	*why = "json_compressed needs zlib, which this uks was built without";
	return -EOPNOTSUPP;
#endif
}

/**
 * uks_damon_record_write - write a whole record in a format
 * @rec:	the record (its start times and, for json, intervals are written
 *		as they are)
 * @fd:		where to (not closed)
 * @format:	UKS_DAMON_RECFMT_BINARY (version 2), _JSON or _JSON_COMPRESSED
 *
 * Converts a record read in any format: binary -> json -> binary gives the
 * same bytes back for a record of one target or of targets whose
 * snapshots end at distinct times.
 * Return: 0, -EINVAL (format), -EOPNOTSUPP (json_compressed without zlib),
 * -ENOMEM, or a write's -errno.
 */
UKS_EXPORT int uks_damon_record_write(const struct uks_damon_record *rec, int fd, int format)
{
	struct uks_damon_rec_writer *w;
	int ret;

	switch (format) {
	case UKS_DAMON_RECFMT_JSON:
	case UKS_DAMON_RECFMT_JSON_COMPRESSED:
		return __uks_damon_rec_write_json(rec, fd, format == UKS_DAMON_RECFMT_JSON_COMPRESSED);
	case UKS_DAMON_RECFMT_BINARY:
		ret = uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, &w);
		if (ret)
			return ret;
		for (size_t i = 0; i < rec->nr_snapshots && !ret; i++)
			ret = uks_damon_rec_write_snapshot(w, &rec->snapshots[i]);
		if (ret) {
			uks_damon_rec_writer_finish(w, NULL);
			return ret;
		}
		return uks_damon_rec_writer_finish(w, NULL);
	default:
		return -EINVAL;
	}
}

/**
 * uks_damon_rec_format_parse - a format by its damo name
 * @name:	"binary" (also "record", damo v1's name), "json" or "json_compressed"
 *
 * Return: UKS_DAMON_RECFMT_*, or -EINVAL.
 */
UKS_EXPORT int uks_damon_rec_format_parse(const char *name)
{
	if (!strcmp(name, "binary") || !strcmp(name, "record"))
		return UKS_DAMON_RECFMT_BINARY;
	if (!strcmp(name, "json"))
		return UKS_DAMON_RECFMT_JSON;
	if (!strcmp(name, "json_compressed"))
		return UKS_DAMON_RECFMT_JSON_COMPRESSED;
	return -EINVAL;
}

/** uks_damon_rec_format_name - the damo name of @format, or NULL */
UKS_EXPORT const char *uks_damon_rec_format_name(int format)
{
	static const char *const names[] = { "binary", "json", "json_compressed" };

	return format >= 0 && format < 3 ? names[format] : NULL;
}
