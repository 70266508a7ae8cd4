// SPDX-License-Identifier: MIT
/*
 * The parser of masim's configuration format (described at the top of
 * <uks/damon_masim.h>), shared by uks-masim and the synthetic primitive.
 *
 * Strict where masim is silent: every number must be a whole decimal
 * number that fits, names must be defined before use and unique, each
 * phase needs a duration above 0 and a total weight above 0, and a
 * sequential pattern a stride above 0.  Runs of empty lines count as one
 * separator; blanks around fields are ignored.  Errors name the line.
 * Limits (regions, phases, patterns per phase) keep a hostile file from
 * costing more than its size.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uks/damon_masim.h>
#include <uks/slab.h>

#include "core/compiler.h"

struct mparser {
	const char *p, *end;
	unsigned int lineno;
	char *err;
	size_t errlen;
	struct uks_damon_masim *m;
};

__attribute__((format(printf, 2, 3)))
static int fail(struct mparser *ps, const char *fmt, ...)
{
	va_list ap;
	int n = 0;

	if (ps->err && ps->errlen) {
		n = snprintf(ps->err, ps->errlen, "line %u: ", ps->lineno);
		if (n < 0 || (size_t)n >= ps->errlen)
			return -EINVAL;
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

/* Next line that is not a comment; NULL at the end.  *len excludes "\n". */
static const char *next_line(struct mparser *ps, size_t *len)
{
	while (ps->p < ps->end) {
		const char *l = ps->p, *nl = memchr(l, '\n', (size_t)(ps->end - l));
		size_t n = nl ? (size_t)(nl - l) : (size_t)(ps->end - l);

		ps->p = nl ? nl + 1 : ps->end;
		ps->lineno++;
		if (n && l[0] == '#')
			continue;
		while (n && (l[n - 1] == '\r' || l[n - 1] == ' ' || l[n - 1] == '\t'))
			n--;
		*len = n;
		return l;
	}
	return NULL;
}

/* Split a line at commas into at most @max trimmed fields. */
static int fields(const char *l, size_t n, char f[][UKS_DAMON_MASIM_NAME_MAX * 4], int max)
{
	int nr = 0;
	size_t i = 0;

	while (i <= n) {
		size_t s = i, e;

		while (i < n && l[i] != ',')
			i++;
		e = i;
		while (s < e && (l[s] == ' ' || l[s] == '\t'))
			s++;
		while (e > s && (l[e - 1] == ' ' || l[e - 1] == '\t'))
			e--;
		if (nr == max || e - s >= UKS_DAMON_MASIM_NAME_MAX * 4)
			return -1;
		memcpy(f[nr], l + s, e - s);
		f[nr][e - s] = '\0';
		nr++;
		i++;
	}
	return nr;
}

static int num(const char *s, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return -1;
	for (; *s; s++) {
		if (*s < '0' || *s > '9' || __builtin_mul_overflow(v, 10, &v) ||
		    __builtin_add_overflow(v, (uint64_t)(*s - '0'), &v))
			return -1;
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int find_region(const struct uks_damon_masim *m, const char *name)
{
	for (unsigned int i = 0; i < m->nr_regions; i++)
		if (!strcmp(m->regions[i].name, name))
			return (int)i;
	return -1;
}

static int parse_region(struct mparser *ps, const char *l, size_t n)
{
	char f[3][UKS_DAMON_MASIM_NAME_MAX * 4];
	struct uks_damon_masim *m = ps->m;
	struct uks_damon_masim_region *r;
	int nf = fields(l, n, f, 3);
	uint64_t size;
	void *p;

	if (nf < 2)
		return fail(ps, "a region is 'NAME, SIZE[, INIT_FILE]'");
	if (!f[0][0] || strlen(f[0]) >= UKS_DAMON_MASIM_NAME_MAX)
		return fail(ps, "bad region name");
	if (find_region(m, f[0]) >= 0)
		return fail(ps, "region '%s' defined twice", f[0]);
	if (num(f[1], 1ULL << 48, &size) || !size)
		return fail(ps, "bad region size '%s'", f[1]);
	if (m->nr_regions == UKS_DAMON_MASIM_MAX_REGIONS)
		return fail(ps, "more than %d regions", UKS_DAMON_MASIM_MAX_REGIONS);
	p = uks_krealloc(m->regions, (m->nr_regions + 1) * sizeof(*m->regions));
	if (!p)
		return -ENOMEM;
	m->regions = p;
	r = &m->regions[m->nr_regions];
	memset(r, 0, sizeof(*r));
	strcpy(r->name, f[0]);
	r->size = size;
	m->nr_regions++;
	if (nf == 3 && strcmp(f[2], "none") && f[2][0]) {
		size_t fl = strlen(f[2]) + 1;

		r->init_file = uks_kmalloc(fl);
		if (!r->init_file)
			return -ENOMEM;
		memcpy(r->init_file, f[2], fl);
	}
	return 0;
}

static int parse_pattern(struct mparser *ps, struct uks_damon_masim_phase *ph, const char *l,
			 size_t n)
{
	char f[5][UKS_DAMON_MASIM_NAME_MAX * 4];
	struct uks_damon_masim_pattern *pt;
	int nf = fields(l, n, f, 5), region;
	uint64_t rnd, stride, weight;
	void *p;

	if (nf < 4)
		return fail(ps, "a pattern is 'REGION, RANDOM, STRIDE, WEIGHT[, ro|wo|rw]'");
	region = find_region(ps->m, f[0]);
	if (region < 0)
		return fail(ps, "no region '%s'", f[0]);
	if (num(f[1], 1, &rnd))
		return fail(ps, "RANDOM is 0 or 1, not '%s'", f[1]);
	if (num(f[2], 1ULL << 48, &stride) || (!rnd && !stride))
		return fail(ps, "bad stride '%s'", f[2]);
	if (num(f[3], 1000000, &weight))
		return fail(ps, "bad weight '%s'", f[3]);
	if (nf == 5 && strcmp(f[4], "ro") && strcmp(f[4], "wo") && strcmp(f[4], "rw"))
		return fail(ps, "access mode is ro, wo or rw, not '%s'", f[4]);
	if (ph->nr_patterns == UKS_DAMON_MASIM_MAX_PATTERNS)
		return fail(ps, "more than %d patterns in a phase", UKS_DAMON_MASIM_MAX_PATTERNS);
	p = uks_krealloc(ph->patterns, (ph->nr_patterns + 1) * sizeof(*ph->patterns));
	if (!p)
		return -ENOMEM;
	ph->patterns = p;
	pt = &ph->patterns[ph->nr_patterns++];
	pt->region = (unsigned int)region;
	pt->random = rnd;
	pt->stride = stride;
	pt->weight = (unsigned int)weight;
	pt->rw = nf < 5 || !strcmp(f[4], "wo") ? UKS_DAMON_MASIM_WO :
		 !strcmp(f[4], "ro") ? UKS_DAMON_MASIM_RO : UKS_DAMON_MASIM_RW;
	ph->total_weight += pt->weight;
	return 0;
}

/* One phase paragraph starting at line @l. */
static int parse_phase(struct mparser *ps, const char *l, size_t n)
{
	struct uks_damon_masim *m = ps->m;
	struct uks_damon_masim_phase *ph;
	uint64_t ms;
	char text[32];
	void *p;
	int ret;

	if (n >= UKS_DAMON_MASIM_NAME_MAX)
		return fail(ps, "phase name too long");
	if (m->nr_phases == UKS_DAMON_MASIM_MAX_PHASES)
		return fail(ps, "more than %d phases", UKS_DAMON_MASIM_MAX_PHASES);
	p = uks_krealloc(m->phases, (m->nr_phases + 1) * sizeof(*m->phases));
	if (!p)
		return -ENOMEM;
	m->phases = p;
	ph = &m->phases[m->nr_phases++];
	memset(ph, 0, sizeof(*ph));
	memcpy(ph->name, l, n);
	l = next_line(ps, &n);
	if (!l || !n)
		return fail(ps, "phase '%s' has no duration", ph->name);
	if (n >= sizeof(text))
		return fail(ps, "bad duration");
	memcpy(text, l, n);
	text[n] = '\0';
	if (num(text, 1ULL << 40, &ms) || !ms)
		return fail(ps, "bad duration '%s' (milliseconds above 0)", text);
	ph->duration_ms = ms;
	while ((l = next_line(ps, &n)) && n) {
		ret = parse_pattern(ps, ph, l, n);
		if (ret)
			return ret;
	}
	if (!ph->nr_patterns || !ph->total_weight)
		return fail(ps, "phase '%s' has no pattern with a weight", ph->name);
	return 0;
}

/**
 * uks_damon_masim_parse - parse a masim configuration
 * @text:	the file's text (need not be NUL-terminated)
 * @len:	its length
 * @out:	the configuration (free with uks_damon_masim_free())
 * @err:	if not NULL, the reason of a failure ("line 7: no region 'c'")
 * @errlen:	room in @err
 *
 * Return: 0, -EINVAL (see @err), -ENOMEM.
 */
UKS_EXPORT int uks_damon_masim_parse(const char *text, size_t len, struct uks_damon_masim **out,
				     char *err, size_t errlen)
{
	struct mparser ps = { text, text + len, 0, err, errlen, NULL };
	const char *l;
	size_t n;
	int ret = 0;

	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (memchr(text, '\0', len)) {
		ps.lineno = 1;
		return fail(&ps, "a NUL byte in the text");
	}
	ps.m = uks_kzalloc(sizeof(*ps.m));
	if (!ps.m)
		return -ENOMEM;
	/* the regions paragraph (after any leading empty lines) */
	while ((l = next_line(&ps, &n)) && !n)
		;
	for (; l && n && !ret; l = next_line(&ps, &n))
		if (n)
			ret = parse_region(&ps, l, n);
	if (!ret && !ps.m->nr_regions)
		ret = fail(&ps, "no regions");
	while (!ret && (l = next_line(&ps, &n))) {
		if (!n)
			continue;
		ret = parse_phase(&ps, l, n);
	}
	if (!ret && !ps.m->nr_phases)
		ret = fail(&ps, "no phases");
	if (ret) {
		uks_damon_masim_free(ps.m);
		return ret;
	}
	*out = ps.m;
	return 0;
}

/**
 * uks_damon_masim_load - read and parse a masim configuration file
 * @path:	the file (at most 16 MiB)
 * @out:	the configuration
 * @err:	the reason of a failure
 * @errlen:	room in @err
 *
 * Return: 0, -errno of open/read, -EFBIG, or those of uks_damon_masim_parse().
 */
UKS_EXPORT int uks_damon_masim_load(const char *path, struct uks_damon_masim **out, char *err,
				    size_t errlen)
{
	size_t cap = 1 << 24, len = 0;
	char *buf;
	int fd, ret = 0;

	*out = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = uks_kmalloc(cap);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		ssize_t r = read(fd, buf + len, cap - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		if (!r)
			break;
		len += (size_t)r;
		if (len == cap) {
			ret = -EFBIG;
			break;
		}
	}
	close(fd);
	if (!ret)
		ret = uks_damon_masim_parse(buf, len, out, err, errlen);
	uks_kfree(buf);
	return ret;
}

/** uks_damon_masim_free - free @m (NULL is fine) */
UKS_EXPORT void uks_damon_masim_free(struct uks_damon_masim *m)
{
	if (!m)
		return;
	for (unsigned int i = 0; i < m->nr_regions; i++)
		uks_kfree(m->regions[i].init_file);
	for (unsigned int i = 0; i < m->nr_phases; i++)
		uks_kfree(m->phases[i].patterns);
	uks_kfree(m->regions);
	uks_kfree(m->phases);
	uks_kfree(m);
}
