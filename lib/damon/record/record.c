// SPDX-License-Identifier: MIT
/*
 * DAMON record writer: damon:damon_aggregated events in, damo's binary
 * record file out (the layout is at the top of <uks/damon_record.h>).
 *
 * The events come as trace text or as the self agent's binary packets
 * (record_packets.c).  `uks damon record` consumes the same trace_pipe
 * lines any reader of our tracefs sees, so the record is exactly what the
 * tracepoint reported, with the tracepoint's own time stamps; the agent
 * inside a monitored program has no tracefs and sends its aggregations in
 * binary.  The text parser accepts the kernel's trace/trace_pipe lines and
 * `perf script` lines:
 *
 *	kdamond.0-1234  [001] .....  812.114432: damon_aggregated: target_id=...
 *	kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=...
 *
 * Events are grouped into snapshots by the assembler (record.h).  The
 * writer buffers output and writes it with write(2); a write error is
 * sticky and returned by every later call.
 *
 * Lock order: none; a writer belongs to one thread at a time.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include <config.h>

#include "core/compiler.h"
#include "damon/record/record.h"

#define MARKER		"damon_aggregated: target_id="
#define MARKER_LEN	(sizeof(MARKER) - 1)

/* ------------------------------------------------------------ parsing */

static const char *find(const char *s, size_t len, const char *what, size_t wlen)
{
	for (size_t i = 0; i + wlen <= len; i++)
		if (s[i] == what[0] && !memcmp(s + i, what, wlen))
			return s + i;
	return NULL;
}

static int parse_u64(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (s >= end || *s < '0' || *s > '9')
		return -EINVAL;
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
			return -EINVAL;
	}
	*p = s;
	*out = v;
	return 0;
}

static int expect(const char **p, const char *end, const char *lit)
{
	size_t n = strlen(lit);

	if ((size_t)(end - *p) < n || memcmp(*p, lit, n))
		return -EINVAL;
	*p += n;
	return 0;
}

/* "SEC.FRAC" ending right before @tail (FRAC: 1..9 digits, usually 6). */
static int parse_ts(const char *line, const char *tail, int64_t *ns)
{
	const char *s = tail, *dot = NULL;
	uint64_t sec = 0, frac = 0;
	int nfrac = 0;

	while (s > line && ((s[-1] >= '0' && s[-1] <= '9') || s[-1] == '.')) {
		s--;
		if (*s == '.') {
			if (dot)
				return -EINVAL;
			dot = s;
		}
	}
	if (!dot || dot == s || dot + 1 == tail || tail - dot - 1 > 9)
		return -EINVAL;
	for (const char *c = s; c < dot; c++)
		if (__builtin_mul_overflow(sec, 10, &sec) ||
		    __builtin_add_overflow(sec, *c - '0', &sec))
			return -EINVAL;
	for (const char *c = dot + 1; c < tail; c++, nfrac++)
		frac = frac * 10 + (uint64_t)(*c - '0');
	for (; nfrac < 9; nfrac++)
		frac *= 10;
	if (sec > (uint64_t)INT64_MAX / 1000000000ULL - 1)
		return -EINVAL;
	*ns = (int64_t)(sec * 1000000000ULL + frac);
	return 0;
}

/**
 * uks_damon_parse_aggregated - parse one damon:damon_aggregated text line
 * @line:	the line (need not be NUL-terminated; no newline needed)
 * @len:	its length
 * @ev:	the event
 *
 * Takes trace/trace_pipe lines and perf script lines (see the top of
 * this file); a number after the count is the region's age (6.12's
 * event, perf's column), other text after it is ignored.
 * Return: 0, -ENOENT if the line is no damon_aggregated event (headers,
 * other events), -EINVAL if it is one but malformed (a region ending below
 * its start included).
 */
UKS_EXPORT int uks_damon_parse_aggregated(const char *line, size_t len,
					  struct uks_damon_agg_event *ev)
{
	const char *end = line + len, *m = find(line, len, MARKER, MARKER_LEN), *p, *t;
	uint64_t v;

	if (!m)
		return -ENOENT;
	t = m;
	if (t - line >= 6 && !memcmp(t - 6, "damon:", 6))
		t -= 6;
	if (t - line < 3 || t[-1] != ' ' || t[-2] != ':')
		return -EINVAL;
	if (parse_ts(line, t - 2, &ev->ts_ns))
		return -EINVAL;
	p = m + MARKER_LEN;
	if (parse_u64(&p, end, &ev->target_id) || expect(&p, end, " nr_regions=") ||
	    parse_u64(&p, end, &v) || v > UINT32_MAX)
		return -EINVAL;
	ev->nr_regions = (uint32_t)v;
	if (expect(&p, end, " ") || parse_u64(&p, end, &ev->start) || expect(&p, end, "-") ||
	    parse_u64(&p, end, &ev->end) || expect(&p, end, ": ") || parse_u64(&p, end, &v) ||
	    v > UINT32_MAX)
		return -EINVAL;
	ev->nr_accesses = (uint32_t)v;
	if (p < end && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
		return -EINVAL;
	/* 6.12's event (and perf's column) adds the age: " %u" */
	ev->age = 0;
	if (p + 1 < end && *p == ' ' && p[1] >= '0' && p[1] <= '9') {
		const char *q = p + 1;

		if (!parse_u64(&q, end, &v) && v <= UINT32_MAX &&
		    (q == end || *q == ' ' || *q == '\n' || *q == '\r' || *q == '\t'))
			ev->age = (uint32_t)v;
	}
	if (ev->end < ev->start)	/* DAMON never reports one; sizes would wrap */
		return -EINVAL;
	return 0;
}

/* ---------------------------------------------------------- assembler */

static struct rec_asm_target *asm_target(struct rec_asm *a, uint64_t tid)
{
	size_t idx;
	int ret;

	/* room first, so that the map never holds an index the array lacks */
	if (a->nr_targets == a->cap) {
		unsigned int ncap = a->cap ? 2 * a->cap : 4;
		void *n = ncap > a->cap ? uks_krealloc(a->targets, ncap * sizeof(*a->targets)) : NULL;

		if (!n)
			return NULL;
		a->targets = n;
		a->cap = ncap;
	}
	ret = __uks_damon_tidmap_get(&a->map, tid, &idx);
	if (ret < 0)
		return NULL;
	if (!ret)
		return &a->targets[idx];
	memset(&a->targets[a->nr_targets], 0, sizeof(a->targets[0]));
	a->targets[a->nr_targets].tid = tid;
	return &a->targets[a->nr_targets++];
}

int __uks_damon_rec_asm_event(struct rec_asm *a, const struct uks_damon_agg_event *ev)
{
	struct rec_asm_target *t;
	struct uks_damon_rec_snapshot s;

	a->stats.lines++;
	if (!ev->nr_regions) {
		a->stats.bad_lines++;
		return 0;
	}
	t = asm_target(a, ev->target_id);
	if (!t)
		return -ENOMEM;
	if (t->n && (ev->nr_regions != t->expected || ev->start < t->regions[t->n - 1].end)) {
		a->stats.dropped += t->n;
		t->n = 0;
	}
	if (!t->n) {
		t->expected = ev->nr_regions;
		t->ts = ev->ts_ns;
	}
	if (t->n == t->cap) {
		uint32_t ncap = t->cap ? 2 * t->cap : 64;
		void *n;

		if (ncap > t->expected)
			ncap = t->expected;
		n = uks_krealloc(t->regions, (size_t)ncap * sizeof(*t->regions));
		if (!n)
			return -ENOMEM;
		t->regions = n;
		t->cap = ncap;
	}
	t->regions[t->n].start = ev->start;
	t->regions[t->n].end = ev->end;
	t->regions[t->n].nr_accesses = ev->nr_accesses;
	t->regions[t->n].age = ev->age;
	if (++t->n < t->expected)
		return 0;
	s.target_id = t->tid;
	s.start_ns = s.end_ns = t->ts;
	s.nr_regions = t->n;
	s.regions = t->regions;
	t->n = 0;
	a->stats.snapshots++;
	return a->emit ? a->emit(a->arg, &s) : 0;
}

/*
 * Feed text; complete lines are consumed, a trailing partial line is
 * left (*used says how much was consumed).  Returns 0 or the emitter's
 * error.
 */
int __uks_damon_rec_asm_text(struct rec_asm *a, const char *text, size_t len, size_t *used)
{
	size_t pos = 0;

	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		struct uks_damon_agg_event ev;
		size_t n;
		int ret;

		if (!nl)
			break;
		n = (size_t)(nl - (text + pos));
		ret = uks_damon_parse_aggregated(text + pos, n, &ev);
		pos += n + 1;
		if (ret == -EINVAL)
			a->stats.bad_lines++;
		if (ret)
			continue;
		ret = __uks_damon_rec_asm_event(a, &ev);
		if (ret) {
			*used = pos;
			return ret;
		}
	}
	*used = pos;
	return 0;
}

void __uks_damon_rec_asm_finish(struct rec_asm *a)
{
	for (unsigned int i = 0; i < a->nr_targets; i++) {
		a->stats.dropped += a->targets[i].n;
		uks_kfree(a->targets[i].regions);
	}
	uks_kfree(a->targets);
	__uks_damon_tidmap_free(&a->map);
	a->targets = NULL;
	a->nr_targets = a->cap = 0;
}

/* ------------------------------------------------------------- writer */

#define WBUF_SZ		(64 * 1024)
#define LINE_MAX_SZ	4096

struct uks_damon_rec_writer {
	int fd;
	int version;
	int format;		/* UKS_DAMON_RECFMT_* */
	struct uks_damon_record *rec;	/* json: every snapshot, written at the end */
	int err;		/* sticky */
	struct rec_asm as;
	size_t wlen;
	unsigned char wbuf[WBUF_SZ];
	size_t llen;		/* a partial line carried between feeds */
	char line[LINE_MAX_SZ];
	struct rec_pkt_carry pkt;	/* a partial packet, likewise */
};

static int wflush(struct uks_damon_rec_writer *w)
{
	size_t off = 0;

	while (!w->err && off < w->wlen) {
		ssize_t n = write(w->fd, w->wbuf + off, w->wlen - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			w->err = n < 0 ? -errno : -EIO;
		else
			off += (size_t)n;
	}
	w->wlen = 0;
	return w->err;
}

static int wput(struct uks_damon_rec_writer *w, const void *p, size_t n)
{
	if (w->err)
		return w->err;
	if (w->wlen + n > WBUF_SZ && wflush(w))
		return w->err;
	memcpy(w->wbuf + w->wlen, p, n);
	w->wlen += n;
	return 0;
}

/**
 * uks_damon_rec_write_snapshot - append one snapshot to the file
 * @w:	the writer
 * @s:	the snapshot (its end time is written; start is implied)
 *
 * One target per time stamp entry, as damo's writer does.
 * Return: 0 or the -errno of a write (sticky).
 */
UKS_EXPORT int uks_damon_rec_write_snapshot(struct uks_damon_rec_writer *w,
					    const struct uks_damon_rec_snapshot *s)
{
	int64_t sec = s->end_ns / 1000000000LL, nsec = s->end_ns % 1000000000LL;
	uint32_t one = 1;

	if (w->err)
		return w->err;
	if (w->rec) {
		w->err = __uks_damon_rec_append(w->rec, s);
		return w->err;
	}

	wput(w, &sec, 8);
	wput(w, &nsec, 8);
	wput(w, &one, 4);
	if (w->version == 1) {
		int32_t id = (int32_t)s->target_id;

		wput(w, &id, 4);
	} else {
		wput(w, &s->target_id, 8);
	}
	wput(w, &s->nr_regions, 4);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		wput(w, &s->regions[i].start, 8);
		wput(w, &s->regions[i].end, 8);
		wput(w, &s->regions[i].nr_accesses, 4);
	}
	return w->err;
}

static int emit_snapshot(void *arg, const struct uks_damon_rec_snapshot *s)
{
	return uks_damon_rec_write_snapshot(arg, s);
}

/**
 * uks_damon_rec_writer_create_format - a record writer on @fd, in a format
 * @fd:		where to write (not closed by the writer)
 * @format:	UKS_DAMON_RECFMT_BINARY (version 2, written as it comes),
 *		_JSON or _JSON_COMPRESSED (damo's; held in memory and written
 *		by uks_damon_rec_writer_finish(), as damo does: the file
 *		groups snapshots by target)
 * @intervals:	the monitoring intervals, written in a json record (NULL:
 *		not known)
 * @out:	the writer
 *
 * Return: 0, -EINVAL (format), -EOPNOTSUPP (json_compressed, built
 * without zlib), -ENOMEM, or the write's -errno.
 */
UKS_EXPORT int uks_damon_rec_writer_create_format(int fd, int format,
						  const struct uks_damon_rec_intervals *intervals,
						  struct uks_damon_rec_writer **out)
{
	struct uks_damon_rec_writer *w;
	int ret;

	*out = NULL;
	if (format == UKS_DAMON_RECFMT_BINARY)
		return uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, out);
	if (format != UKS_DAMON_RECFMT_JSON && format != UKS_DAMON_RECFMT_JSON_COMPRESSED)
		return -EINVAL;
#if !UKS_HAVE_ZLIB
	if (format == UKS_DAMON_RECFMT_JSON_COMPRESSED)
		return -EOPNOTSUPP;
#endif
	ret = uks_damon_rec_writer_create(fd, 0, &w);
	if (ret)
		return ret;
	w->format = format;
	w->rec = uks_kzalloc(sizeof(*w->rec));
	if (!w->rec) {
		uks_damon_rec_writer_finish(w, NULL);
		return -ENOMEM;
	}
	w->rec->version = format == UKS_DAMON_RECFMT_JSON ? UKS_DAMON_REC_VERSION_JSON
							  : UKS_DAMON_REC_VERSION_JSON_COMPRESSED;
	if (intervals)
		w->rec->intervals = *intervals;
	*out = w;
	return 0;
}

/**
 * uks_damon_rec_writer_create - a binary record writer on @fd
 * @fd:		where to write (not closed by the writer)
 * @version:	0 (no header), 1 (32-bit target ids) or 2 (damo's default)
 * @out:	the writer
 *
 * Writes the header at once (versions 1 and 2).
 * Return: 0, -EINVAL (version), -ENOMEM, or the write's -errno.
 */
UKS_EXPORT int uks_damon_rec_writer_create(int fd, int version,
					   struct uks_damon_rec_writer **out)
{
	struct uks_damon_rec_writer *w;
	int32_t v = version;

	*out = NULL;
	if (version < 0 || version > 2)
		return -EINVAL;
	w = uks_kzalloc(sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->fd = fd;
	w->version = version;
	w->as.emit = emit_snapshot;
	w->as.arg = w;
	if (version) {
		wput(w, UKS_DAMON_RECFMT_MAGIC, UKS_DAMON_RECFMT_MAGIC_LEN);
		wput(w, &v, 4);
		if (wflush(w)) {
			int err = w->err;

			uks_kfree(w);
			return err;
		}
	}
	*out = w;
	return 0;
}

/**
 * uks_damon_rec_writer_event - add one parsed damon_aggregated event
 * @w:	the writer
 * @ev:	the event
 *
 * A snapshot is written when its last region arrives.
 * Return: 0, -ENOMEM, or a write's -errno.
 */
UKS_EXPORT int uks_damon_rec_writer_event(struct uks_damon_rec_writer *w,
					  const struct uks_damon_agg_event *ev)
{
	if (w->err)
		return w->err;
	return __uks_damon_rec_asm_event(&w->as, ev);
}

/**
 * uks_damon_rec_writer_feed - add trace text
 * @w:		the writer
 * @text:	trace/trace_pipe or perf script text, in chunks of any size
 *		(a line may span calls); other lines are skipped
 * @len:	its length
 *
 * Return: 0, -ENOMEM, or a write's -errno.  Lines longer than 4 KiB are
 * no damon_aggregated line and are skipped.
 */
UKS_EXPORT int uks_damon_rec_writer_feed(struct uks_damon_rec_writer *w, const char *text,
					 size_t len)
{
	size_t used;
	int ret;

	while (len && !w->err) {
		/* complete the carried partial line first */
		if (w->llen) {
			const char *nl = memchr(text, '\n', len);
			size_t n = nl ? (size_t)(nl - text) + 1 : len;

			if (w->llen + n <= LINE_MAX_SZ) {
				memcpy(w->line + w->llen, text, n);
				w->llen += n;
			} else {
				w->llen = LINE_MAX_SZ + 1;	/* too long: skip it */
			}
			text += n;
			len -= n;
			if (!nl)
				return 0;
			if (w->llen <= LINE_MAX_SZ) {
				ret = __uks_damon_rec_asm_text(&w->as, w->line, w->llen, &used);
				if (ret)
					return ret;
			}
			w->llen = 0;
			continue;
		}
		ret = __uks_damon_rec_asm_text(&w->as, text, len, &used);
		if (ret)
			return ret;
		text += used;
		len -= used;
		if (len) {
			if (len <= LINE_MAX_SZ) {
				memcpy(w->line, text, len);
				w->llen = len;
			} else {
				w->llen = LINE_MAX_SZ + 1;
			}
			len = 0;
		}
	}
	return w->err;
}

/**
 * uks_damon_rec_writer_feed_packets - add the self agent's binary stream
 * @w:		the writer
 * @buf:	what the agent wrote to UKS_DAMON_AGENT_FD, in chunks of any
 *		size (a packet may span calls)
 * @len:	its length
 *
 * Each region counts as one damon_aggregated line in the stats; bytes
 * that start no packet are skipped and counted as one bad line.  A writer
 * takes either this stream or text, not both.
 * Return: 0, -ENOMEM, or a write's -errno.
 */
UKS_EXPORT int uks_damon_rec_writer_feed_packets(struct uks_damon_rec_writer *w, const void *buf,
						 size_t len)
{
	int ret;

	if (w->err)
		return w->err;
	ret = __uks_damon_rec_packets_feed(&w->as, &w->pkt, buf, len);
	return ret ? ret : w->err;
}

/** uks_damon_rec_writer_stats - what @w has seen so far, in @st */
UKS_EXPORT void uks_damon_rec_writer_stats(struct uks_damon_rec_writer *w,
					   struct uks_damon_rec_stats *st)
{
	*st = w->as.stats;
}

/**
 * uks_damon_rec_writer_finish - flush and free @w
 * @w:	the writer (freed, even on error)
 * @st:	if not NULL, the final counts (partial snapshots count as dropped)
 *
 * Return: 0 or the first write error.
 */
UKS_EXPORT int uks_damon_rec_writer_finish(struct uks_damon_rec_writer *w,
					   struct uks_damon_rec_stats *st)
{
	int err;

	if (w->llen && w->llen <= LINE_MAX_SZ && w->llen < LINE_MAX_SZ) {
		size_t used;

		w->line[w->llen++] = '\n';
		__uks_damon_rec_asm_text(&w->as, w->line, w->llen, &used);
	}
	__uks_damon_rec_packets_finish(&w->as, &w->pkt);
	__uks_damon_rec_asm_finish(&w->as);
	err = wflush(w);
	if (w->rec) {
		if (!err && !w->err)
			err = __uks_damon_rec_start_times(w->rec);
		if (!err && !w->err)
			err = __uks_damon_rec_write_json(w->rec, w->fd,
							 w->format == UKS_DAMON_RECFMT_JSON_COMPRESSED);
		if (!err)
			err = w->err;
		uks_damon_record_free(w->rec);
	}
	if (st)
		*st = w->as.stats;
	uks_kfree(w);
	return err;
}
