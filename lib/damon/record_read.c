// SPDX-License-Identifier: MIT
/*
 * DAMON record reader: damo's binary record file (any version, with or
 * without the header), or damon_aggregated text (perf script output, which
 * is what damo writes on 5.15, or a saved trace), into a struct
 * uks_damon_record.
 *
 * As damo: a file starting with the "damon_recfmt_ver" magic has a version
 * (1: 32-bit target ids, else 64-bit); any other file is text when its
 * first 4 KiB hold no NUL byte and a damon_aggregated line, else a
 * version-0 binary file.  A file ending inside a time stamp ends there
 * (damo stops); one ending inside the rest of an entry is -EINVAL (damo
 * fails).  Counts are checked against the bytes left, so a garbage file
 * costs no more memory than its size.
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
#include "damon/record.h"

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

static int parse_binary(struct uks_damon_record *rec, struct cursor *c)
{
	struct uks_damon_rec_snapshot s;

	while (c->left) {
		int64_t sec, nsec, end;
		uint32_t nr_targets;

		if (c->left < 16)
			break;				/* damo: a short time stamp ends the file */
		take(c, &sec, 8);
		take(c, &nsec, 8);
		if (__builtin_mul_overflow(sec, 1000000000LL, &end) ||
		    __builtin_add_overflow(end, nsec, &end))
			return -EINVAL;
		if (!take(c, &nr_targets, 4))
			return -EINVAL;
		for (uint32_t t = 0; t < nr_targets; t++) {
			uint32_t nr;
			int ret;

			if (rec->version == 1) {
				int32_t id;

				if (!take(c, &id, 4))
					return -EINVAL;
				s.target_id = (uint64_t)(uint32_t)id;
			} else if (!take(c, &s.target_id, 8)) {
				return -EINVAL;
			}
			if (!take(c, &nr, 4) || nr > c->left / 20)
				return -EINVAL;
			s.start_ns = s.end_ns = end;
			s.nr_regions = 0;
			s.regions = NULL;
			ret = __uks_damon_rec_append(rec, &s);
			if (ret)
				return ret;
			if (!nr)
				continue;
			struct uks_damon_rec_snapshot *d = &rec->snapshots[rec->nr_snapshots - 1];

			d->regions = uks_kmalloc((size_t)nr * sizeof(*d->regions));
			if (!d->regions)
				return -ENOMEM;
			for (uint32_t i = 0; i < nr; i++) {
				take(c, &d->regions[i].start, 8);
				take(c, &d->regions[i].end, 8);
				take(c, &d->regions[i].nr_accesses, 4);
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

/* damo's set_first_snapshot_start_time() and chained start times */
struct tinfo {
	uint64_t tid;
	int64_t first_end, last_end, prev_end;
	size_t n, seen;
};

static int set_start_times(struct uks_damon_record *rec)
{
	struct tinfo *ti = NULL;
	size_t nr = 0, cap = 0;

	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		struct uks_damon_rec_snapshot *s = &rec->snapshots[i];
		size_t k;

		for (k = 0; k < nr && ti[k].tid != s->target_id; k++)
			;
		if (k == nr) {
			if (nr == cap) {
				size_t ncap = cap ? 2 * cap : 8;
				void *p = uks_krealloc(ti, ncap * sizeof(*ti));

				if (!p) {
					uks_kfree(ti);
					return -ENOMEM;
				}
				ti = p;
				cap = ncap;
			}
			memset(&ti[nr], 0, sizeof(ti[0]));
			ti[nr].tid = s->target_id;
			ti[nr].first_end = s->end_ns;
			nr++;
		}
		ti[k].last_end = s->end_ns;
		ti[k].n++;
	}
	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		struct uks_damon_rec_snapshot *s = &rec->snapshots[i];
		size_t k;

		for (k = 0; ti[k].tid != s->target_id; k++)
			;
		if (ti[k].seen++) {
			s->start_ns = ti[k].prev_end;
		} else if (ti[k].n >= 2) {
			double len = (double)(ti[k].last_end - ti[k].first_end) /
				     (double)(ti[k].n - 1);

			s->start_ns = s->end_ns - (int64_t)len;
		} else {
			s->start_ns = s->end_ns;
		}
		ti[k].prev_end = s->end_ns;
	}
	uks_kfree(ti);
	return 0;
}

/**
 * uks_damon_record_parse - read a record from memory
 * @buf:	the file's bytes
 * @len:	their number
 * @out:	the record (free with uks_damon_record_free())
 *
 * Return: 0, -EINVAL (a malformed or truncated entry, an unknown version
 * in the header), -ENOMEM.
 */
UKS_EXPORT int uks_damon_record_parse(const void *buf, size_t len, struct uks_damon_record **out)
{
	struct uks_damon_record *rec = uks_kzalloc(sizeof(*rec));
	struct cursor c = { buf, len };
	int ret;

	*out = NULL;
	if (!rec)
		return -ENOMEM;
	if (len >= UKS_DAMON_RECFMT_MAGIC_LEN &&
	    !memcmp(buf, UKS_DAMON_RECFMT_MAGIC, UKS_DAMON_RECFMT_MAGIC_LEN)) {
		int32_t v;

		c.p += UKS_DAMON_RECFMT_MAGIC_LEN;
		c.left -= UKS_DAMON_RECFMT_MAGIC_LEN;
		if (!take(&c, &v, 4) || v < 0 || v > UKS_DAMON_RECFMT_VERSION) {
			uks_kfree(rec);
			return -EINVAL;
		}
		rec->version = v;
		ret = parse_binary(rec, &c);
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
		ret = parse_binary(rec, &c);
	}
	if (ret) {
		uks_damon_record_free(rec);
		return ret;
	}
	ret = set_start_times(rec);
	if (ret) {
		uks_damon_record_free(rec);
		return ret;
	}
	*out = rec;
	return 0;
}

/**
 * uks_damon_record_load - read a record file
 * @path:	the file
 * @out:	the record
 *
 * Return: 0, the -errno of open/read, or those of uks_damon_record_parse().
 */
UKS_EXPORT int uks_damon_record_load(const char *path, struct uks_damon_record **out)
{
	unsigned char *buf = NULL;
	size_t len = 0, cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	*out = NULL;
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (len == cap) {
			size_t ncap = cap ? 2 * cap : 1 << 16;
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
		ret = uks_damon_record_parse(buf ? buf : (unsigned char *)"", len, out);
	uks_kfree(buf);
	return ret;
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

/**
 * uks_damon_record_targets - the target ids of @rec, in order of appearance
 * @rec:	the record
 * @ids:	filled with up to @max ids
 * @max:	room in @ids
 *
 * Return: the number of distinct targets (may exceed @max).
 */
UKS_EXPORT int uks_damon_record_targets(const struct uks_damon_record *rec, uint64_t *ids,
					size_t max)
{
	uint64_t last = 0;
	size_t n = 0;

	for (size_t i = 0; i < rec->nr_snapshots; i++) {
		uint64_t id = rec->snapshots[i].target_id;
		bool seen = i && id == last;

		/* the ids found so far are in ids[] (or were, past @max) */
		for (size_t j = 0; j < n && !seen; j++) {
			if (j < max)
				seen = ids[j] == id;
			else
				for (size_t k = 0; k < i && !seen; k++)
					seen = rec->snapshots[k].target_id == id;
		}
		last = id;
		if (seen)
			continue;
		if (n < max)
			ids[n] = id;
		n++;
	}
	return (int)n;
}
