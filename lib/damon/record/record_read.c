// SPDX-License-Identifier: MIT
/*
 * DAMON record reader: damo's binary record file (any version, with or
 * without the header), or damon_aggregated text (perf script output, which
 * is what damo writes on 5.15, or a saved trace), into a struct
 * uks_damon_record.
 *
 * As damo: a file starting with the "damon_recfmt_ver" magic has a version
 * (1: 32-bit target ids, else 64-bit); one starting (after white space)
 * with '[' or '{' is damo's json (record_json.c), one starting with a zlib
 * header json_compressed; either, if it does not read as such but as a
 * whole version-0 binary file (whose time stamp happens to start like
 * that), is the binary file; any other file
 * is text when its first 4 KiB hold no NUL byte and a damon_aggregated
 * line, else a version-0 binary file.  For json_compressed, the offsets
 * of a diagnostic are in the inflated text.  A file ending inside a time stamp ends there
 * (damo stops); one ending inside the rest of an entry is -EINVAL (damo
 * fails), or, with UKS_DAMON_REC_PARTIAL, keeps the snapshots before the
 * cut.  A region whose end is below its start is -EINVAL: DAMON never
 * reports one, and every size computed from it would wrap.  The offset
 * and the reason go to a struct uks_damon_rec_diag.
 *
 * Counts are checked against the bytes left before anything is allocated
 * for them (a target takes at least 12 bytes of the file and a region 20),
 * so a garbage file costs memory in proportion to its size: at most about
 * 7 times it (snapshot and region structs, and the arrays' doubling).
 *
 * Start times are damo's: a snapshot starts where its target's previous one
 * ended, the first one a mean snapshot length before its end.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "damon/record/record.h"

/* Append a copy of @s (its regions too) to record @arg; shared with adjust.c. */
int __uks_damon_rec_append(void *arg, const struct uks_damon_rec_snapshot *s)
{
	struct uks_damon_record *rec = arg;
	struct uks_damon_rec_snapshot *d;

	if (rec->nr_snapshots == rec->cap) {
		size_t ncap = rec->cap ? 2 * rec->cap : 64;
		void *n = uks_krealloc(rec->snapshots, ncap * sizeof(*rec->snapshots));

		if (!n)
			return -ENOMEM;
		rec->snapshots = n;
		rec->cap = ncap;
	}
	d = &rec->snapshots[rec->nr_snapshots];
	*d = *s;
	d->regions = NULL;
	if (s->nr_regions) {
		d->regions = uks_kmalloc((size_t)s->nr_regions * sizeof(*d->regions));
		if (!d->regions)
			return -ENOMEM;
		memcpy(d->regions, s->regions, (size_t)s->nr_regions * sizeof(*d->regions));
	}
	rec->nr_snapshots++;
	return 0;
}

struct cursor {
	const unsigned char *p;
	size_t left;
};

static bool take(struct cursor *c, void *out, size_t n)
{
	if (c->left < n)
		return false;
	memcpy(out, c->p, n);
	c->p += n;
	c->left -= n;
	return true;
}

struct bin_parse {
	struct uks_damon_record *rec;
	struct cursor c;
	const unsigned char *base;
	unsigned int flags;
	struct uks_damon_rec_diag *diag;
};

static uint64_t pos(const struct bin_parse *b)
{
	return (uint64_t)(b->c.p - b->base);
}

/* A corrupt entry: -EINVAL, with where and why. */
static int corrupt(struct bin_parse *b, uint64_t entry, uint64_t at, const char *why)
{
	if (b->diag)
		*b->diag = (struct uks_damon_rec_diag){ entry, at, why };
	return -EINVAL;
}

/*
 * The file ends inside the entry at @entry: the snapshots before it are
 * kept with UKS_DAMON_REC_PARTIAL (or always, when the cut is inside the
 * time stamp, as damo), else -EINVAL.
 */
static int cut(struct bin_parse *b, uint64_t entry, const char *why, bool in_time_stamp)
{
	if (b->diag)
		*b->diag = (struct uks_damon_rec_diag){ entry, pos(b) + b->c.left, why };
	return in_time_stamp || (b->flags & UKS_DAMON_REC_PARTIAL) ? 0 : -EINVAL;
}

static int parse_binary(struct bin_parse *b)
{
	struct uks_damon_record *rec = b->rec;
	struct cursor *c = &b->c;
	size_t id_len = rec->version == 1 ? 4 : 8;
	struct uks_damon_rec_snapshot s;

	while (c->left) {
		uint64_t entry = pos(b);
		int64_t sec, nsec, end;
		uint32_t nr_targets;

		if (c->left < 16)	/* damo: a short time stamp ends the file */
			return cut(b, entry, "a time stamp cut short", true);
		take(c, &sec, 8);
		take(c, &nsec, 8);
		if (__builtin_mul_overflow(sec, 1000000000LL, &end) ||
		    __builtin_add_overflow(end, nsec, &end))
			return corrupt(b, entry, entry, "time stamp out of range");
		if (!take(c, &nr_targets, 4))
			return cut(b, entry, "a target count cut short", false);
		if (nr_targets > c->left / (id_len + 4))
			return cut(b, entry, "fewer bytes left than its target count needs", false);
		for (uint32_t t = 0; t < nr_targets; t++) {
			struct uks_damon_rec_snapshot *d;
			uint32_t nr = 0;
			int ret;

			if (c->left < id_len + 4)
				return cut(b, entry, "a target's id and region count cut short", false);
			if (rec->version == 1) {
				int32_t id;

				take(c, &id, 4);
				s.target_id = (uint64_t)(uint32_t)id;
			} else {
				take(c, &s.target_id, 8);
			}
			take(c, &nr, 4);
			if (nr > c->left / 20)
				return cut(b, entry, "fewer bytes left than its region count needs", false);
			s.start_ns = s.end_ns = end;
			s.nr_regions = 0;
			s.regions = NULL;
			ret = __uks_damon_rec_append(rec, &s);
			if (ret)
				return ret;
			if (!nr)
				continue;
			d = &rec->snapshots[rec->nr_snapshots - 1];
			d->regions = uks_kmalloc((size_t)nr * sizeof(*d->regions));
			if (!d->regions)
				return -ENOMEM;
			for (uint32_t i = 0; i < nr; i++) {
				uint64_t at = pos(b);

				take(c, &d->regions[i].start, 8);
				take(c, &d->regions[i].end, 8);
				take(c, &d->regions[i].nr_accesses, 4);
				if (d->regions[i].end < d->regions[i].start)
					return corrupt(b, entry, at, "region end below its start");
			}
			d->nr_regions = nr;
		}
	}
	return 0;
}

static bool looks_like_text(const unsigned char *buf, size_t len)
{
	size_t n = len < 4096 ? len : 4096;

	if (memchr(buf, '\0', n))
		return false;
	for (size_t i = 0; i + 17 <= n; i++)
		if (!memcmp(buf + i, "damon_aggregated:", 17))
			return true;
	return false;
}

static bool looks_like_json(const unsigned char *buf, size_t len)
{
	size_t i = 0;

	while (i < len && (buf[i] == ' ' || buf[i] == '\t' || buf[i] == '\n' || buf[i] == '\r'))
		i++;
	return i < len && (buf[i] == '[' || buf[i] == '{');
}

/*
 * A file taken for json or json_compressed that does not read as one: if
 * it reads, strictly and whole, as a version-0 binary record (whose first
 * time stamp happens to start like JSON or a zlib header), that is what it
 * is; else the JSON or zlib error stands.
 */
static int binary_instead(struct bin_parse *b, int err, int version)
{
	struct uks_damon_record *rec = b->rec;
	struct uks_damon_rec_diag d = { 0 };
	struct bin_parse alt = *b;

	if (err != -EINVAL)
		return err;
	alt.diag = &d;
	alt.flags = 0;
	rec->version = 0;
	if (!parse_binary(&alt) && rec->nr_snapshots && !d.reason) {
		if (b->diag)
			*b->diag = d;
		return 0;
	}
	for (size_t i = 0; i < rec->nr_snapshots; i++)
		uks_kfree(rec->snapshots[i].regions);
	rec->nr_snapshots = 0;
	rec->version = version;
	return err;
}

static int read_json(struct bin_parse *b)
{
	struct uks_damon_rec_diag d = { 0 };
	int ret;

	b->rec->version = UKS_DAMON_REC_VERSION_JSON;
	ret = __uks_damon_rec_read_json(b->rec, (const char *)b->c.p, b->c.left, &d);
	if (ret)
		ret = binary_instead(b, ret, UKS_DAMON_REC_VERSION_JSON);
	if (ret && b->diag)
		*b->diag = d;
	return ret;
}

static int read_compressed(struct bin_parse *b)
{
	struct uks_damon_record *rec = b->rec;
	const char *why;
	size_t tlen = 0;
	char *text;
	int ret = __uks_damon_rec_inflate(b->c.p, b->c.left, &text, &tlen, &why);

	rec->version = UKS_DAMON_REC_VERSION_JSON_COMPRESSED;
	if (!ret) {
		ret = __uks_damon_rec_read_json(rec, text, tlen, b->diag);
		uks_kfree(text);
		return ret;
	}
	ret = binary_instead(b, ret, UKS_DAMON_REC_VERSION_JSON_COMPRESSED);
	if (ret && why && b->diag)
		*b->diag = (struct uks_damon_rec_diag){ 0, 0, why };
	return ret;
}

/* damo's set_first_snapshot_start_time() and chained start times */
int __uks_damon_rec_start_times(struct uks_damon_record *rec)
{
	struct uks_damon_rec_targets g;
	int ret = uks_damon_record_group(rec, &g);

	if (ret)
		return ret;
	for (size_t t = 0; t < g.nr; t++) {
		size_t n = g.first[t + 1] - g.first[t];
		struct uks_damon_rec_snapshot *first = &rec->snapshots[g.order[g.first[t]]];
		struct uks_damon_rec_snapshot *last = &rec->snapshots[g.order[g.first[t + 1] - 1]];
		int64_t prev_end = first->end_ns;

		if (n >= 2) {
			double len = (double)(last->end_ns - first->end_ns) / (double)(n - 1);

			first->start_ns = first->end_ns - (int64_t)len;
		} else {
			first->start_ns = first->end_ns;
		}
		for (size_t k = g.first[t] + 1; k < g.first[t + 1]; k++) {
			struct uks_damon_rec_snapshot *s = &rec->snapshots[g.order[k]];

			s->start_ns = prev_end;
			prev_end = s->end_ns;
		}
	}
	uks_damon_record_group_free(&g);
	return 0;
}

/**
 * uks_damon_record_read - read a record from memory, saying where it failed
 * @buf:	the file's bytes
 * @len:	their number
 * @flags:	UKS_DAMON_REC_PARTIAL: a file cut inside an entry gives the
 *		snapshots before the cut instead of -EINVAL
 * @out:	the record (free with uks_damon_record_free())
 * @diag:	if not NULL, where and why reading stopped (@diag->reason is
 *		NULL when every byte was read); set on success too, for a cut
 *
 * Return: 0, -EINVAL (a malformed entry, a region ending below its start,
 * a cut entry without UKS_DAMON_REC_PARTIAL, an unknown version in the
 * header; JSON that is no damo record, a bad zlib stream), -ENOMEM (also
 * json past the reader's 1 GiB), -EOPNOTSUPP (json_compressed, built
 * without zlib).
 */
UKS_EXPORT int uks_damon_record_read(const void *buf, size_t len, unsigned int flags,
				     struct uks_damon_record **out,
				     struct uks_damon_rec_diag *diag)
{
	struct uks_damon_record *rec = uks_kzalloc(sizeof(*rec));
	struct bin_parse b = { rec, { buf, len }, buf, flags, diag };
	int ret;

	*out = NULL;
	if (diag)
		*diag = (struct uks_damon_rec_diag){ 0 };
	if (!rec)
		return -ENOMEM;
	if (len >= UKS_DAMON_RECFMT_MAGIC_LEN &&
	    !memcmp(buf, UKS_DAMON_RECFMT_MAGIC, UKS_DAMON_RECFMT_MAGIC_LEN)) {
		bool short_version = len < UKS_DAMON_RECFMT_MAGIC_LEN + 4;
		int32_t v;

		b.c.p += UKS_DAMON_RECFMT_MAGIC_LEN;
		b.c.left -= UKS_DAMON_RECFMT_MAGIC_LEN;
		if (!take(&b.c, &v, 4) || v < 0 || v > UKS_DAMON_RECFMT_VERSION) {
			corrupt(&b, 0, UKS_DAMON_RECFMT_MAGIC_LEN, short_version ?
				"the version cut short" : "unknown format version");
			uks_kfree(rec);
			return -EINVAL;
		}
		rec->version = v;
		ret = parse_binary(&b);
	} else if (looks_like_json(buf, len)) {
		ret = read_json(&b);
	} else if (__uks_damon_rec_is_zlib(buf, len)) {
		ret = read_compressed(&b);
	} else if (looks_like_text(buf, len)) {
		struct rec_asm as = { .emit = __uks_damon_rec_append, .arg = rec };
		size_t used = 0;

		rec->version = -1;
		ret = __uks_damon_rec_asm_text(&as, buf, len, &used);
		if (!ret && used < len) {	/* a last line without newline */
			struct uks_damon_agg_event ev;

			if (!uks_damon_parse_aggregated((const char *)buf + used, len - used, &ev))
				ret = __uks_damon_rec_asm_event(&as, &ev);
		}
		__uks_damon_rec_asm_finish(&as);
	} else {
		rec->version = 0;
		ret = parse_binary(&b);
	}
	if (!ret && rec->version >= UKS_DAMON_REC_VERSION_TEXT)	/* json has its own */
		ret = __uks_damon_rec_start_times(rec);
	if (ret) {
		uks_damon_record_free(rec);
		return ret;
	}
	*out = rec;
	return 0;
}

/**
 * uks_damon_record_parse - read a record from memory
 * @buf:	the file's bytes
 * @len:	their number
 * @out:	the record (free with uks_damon_record_free())
 *
 * uks_damon_record_read() without flags or diagnostics.
 * Return: 0, -EINVAL (a malformed or truncated entry, an unknown version
 * in the header), -ENOMEM.
 */
UKS_EXPORT int uks_damon_record_parse(const void *buf, size_t len, struct uks_damon_record **out)
{
	return uks_damon_record_read(buf, len, 0, out, NULL);
}

/**
 * uks_damon_record_read_file - read a record file, saying where it failed
 * @path:	the file
 * @flags:	as uks_damon_record_read()
 * @out:	the record
 * @diag:	as uks_damon_record_read()
 *
 * Return: 0, the -errno of open/read, or those of uks_damon_record_read().
 */
UKS_EXPORT int uks_damon_record_read_file(const char *path, unsigned int flags,
					  struct uks_damon_record **out,
					  struct uks_damon_rec_diag *diag)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;
	struct stat st;

	*out = NULL;
	if (diag)
		*diag = (struct uks_damon_rec_diag){ 0 };
	if (fd < 0)
		return -errno;
	/* a regular file is read in one buffer of its size (plus one byte to see EOF) */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX / 2)
		cap = (size_t)st.st_size + 1;
	for (;;) {
		ssize_t n;

		if (len == cap || !buf) {
			size_t ncap = !cap ? 1 << 16 : len == cap ? 2 * cap : cap;
			void *p = uks_krealloc(buf, ncap);

			if (!p) {
				ret = -ENOMEM;
				break;
			}
			buf = p;
			cap = ncap;
		}
		n = read(fd, buf + len, cap - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			break;
		}
		if (!n)
			break;
		len += (size_t)n;
	}
	close(fd);
	if (!ret)
		ret = uks_damon_record_read(buf ? buf : (unsigned char *)"", len, flags, out, diag);
	uks_kfree(buf);
	return ret;
}

/**
 * uks_damon_record_load - read a record file
 * @path:	the file
 * @out:	the record
 *
 * uks_damon_record_read_file() without flags or diagnostics.
 * Return: 0, the -errno of open/read, or those of uks_damon_record_parse().
 */
UKS_EXPORT int uks_damon_record_load(const char *path, struct uks_damon_record **out)
{
	return uks_damon_record_read_file(path, 0, out, NULL);
}

/** uks_damon_record_free - free @rec (NULL is fine) */
UKS_EXPORT void uks_damon_record_free(struct uks_damon_record *rec)
{
	if (!rec)
		return;
	for (size_t i = 0; i < rec->nr_snapshots; i++)
		uks_kfree(rec->snapshots[i].regions);
	uks_kfree(rec->snapshots);
	uks_kfree(rec);
}
