// SPDX-License-Identifier: MIT
/*
 * The debugfs "schemes" file of a DAMON context, in the text format of
 * Linux 6.12's mm/damon/dbgfs.c (Documentation/admin-guide/mm/damon/
 * usage.rst, "Schemes"; 5.15 had no such file).
 *
 * Writing: one scheme per eighteen numbers (a line each, by custom),
 *
 *	min_sz max_sz min_nr_accesses max_nr_accesses min_age max_age
 *	action quota_ms quota_sz quota_reset_interval_ms quota_weight_sz
 *	quota_weight_nr_accesses quota_weight_age wmark_metric
 *	wmark_interval_us wmark_high wmark_mid wmark_low
 *
 * parsed as the kernel's sscanf("%lu %lu %u %u %u %u %u %lu %lu %lu %u %u
 * %u %u %lu %lu %lu %lu%n") over and over (so "%u" fields wrap to 32 bits),
 * stopping at the first place that does not give eighteen numbers: what
 * follows is ignored, and a write that gives none (an empty one, or
 * garbage) removes every scheme.  Up to one scheme per eight bytes of the
 * write (the kernel's kmalloc_array(len / sizeof(pointer)) bound), and at
 * most UKS_DAMOS_MAX_SCHEMES.  -EINVAL, with the schemes unchanged: an
 * action outside debugfs's numbering (0 willneed, 1 cold, 2 pageout,
 * 3 hugepage, 4 nohugepage, 5 stat), a pattern minimum above its maximum,
 * watermarks not high >= mid >= low; also (uks) an action the running
 * kernel's process_madvise() does not take.  -EBUSY while the context
 * runs (after the parse, as the kernel).
 *
 * Reading: each scheme's eighteen numbers (the action in debugfs's
 * numbering) and its stats, nr_tried sz_tried nr_applied sz_applied
 * qt_exceeds, a line each, formatted into a buffer of the read's size as
 * the kernel's sprint_schemes(): a short read gets the text cut, and a line
 * that starts with one byte of room left fails the read with -ENOMEM.
 *
 * Lock order: the tree's fs->lock -> ctx->schemes_lock (in schemes.c).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "core/kscan.h"
#include "damon/debugfs/dbgfs.h"

#define DBGFS_NR_FIELDS		18

/* debugfs's action numbers (usage.rst) to and from enum uks_damos_action */
static const unsigned int dbgfs_actions[] = {
	UKS_DAMOS_WILLNEED, UKS_DAMOS_COLD, UKS_DAMOS_PAGEOUT,
	UKS_DAMOS_HUGEPAGE, UKS_DAMOS_NOHUGEPAGE, UKS_DAMOS_STAT,
};

static int action_to_dbgfs(unsigned int action)
{
	for (unsigned int i = 0; i < sizeof(dbgfs_actions) / sizeof(dbgfs_actions[0]); i++)
		if (dbgfs_actions[i] == action)
			return (int)i;
	return -EINVAL;
}

/* One scheme's eighteen numbers at *@pos; false if they are not all there. */
static bool scan_scheme(const char **pos, struct uks_damos_scheme *s, unsigned long *action)
{
	unsigned long v[DBGFS_NR_FIELDS];

	for (int i = 0; i < DBGFS_NR_FIELDS; i++)
		if (!kscan_ulong(pos, &v[i]))
			return false;
	memset(s, 0, sizeof(*s));
	s->pattern.min_sz = v[0];
	s->pattern.max_sz = v[1];
	s->pattern.min_nr_accesses = (unsigned int)v[2];
	s->pattern.max_nr_accesses = (unsigned int)v[3];
	s->pattern.min_age = (unsigned int)v[4];
	s->pattern.max_age = (unsigned int)v[5];
	*action = (unsigned int)v[6];
	s->quota.ms = v[7];
	s->quota.sz = v[8];
	s->quota.reset_interval_ms = v[9];
	s->quota.weight_sz = (unsigned int)v[10];
	s->quota.weight_nr_accesses = (unsigned int)v[11];
	s->quota.weight_age = (unsigned int)v[12];
	s->wmarks.metric = (unsigned int)v[13];
	s->wmarks.interval_us = v[14];
	s->wmarks.high = v[15];
	s->wmarks.mid = v[16];
	s->wmarks.low = v[17];
	return true;
}

/**
 * __uks_damon_dbgfs_parse_schemes - 6.12's str_to_schemes()
 * @str:	the write, NUL-terminated
 * @len:	its length (bounds the number of schemes)
 * @out:	the schemes (uks_kfree() them; NULL when none)
 * @nr:		their number
 *
 * Return: 0, -EINVAL (see the top of the file; nothing in *@out), -ENOMEM.
 */
int __uks_damon_dbgfs_parse_schemes(const char *str, size_t len,
				    struct uks_damos_scheme **out, unsigned int *nr)
{
	size_t max = len / sizeof(void *);
	struct uks_damos_scheme *schemes = NULL, s;
	const char *pos = str;
	unsigned int n = 0, room = 0;

	*out = NULL;
	*nr = 0;
	if (max > UKS_DAMOS_MAX_SCHEMES)
		max = UKS_DAMOS_MAX_SCHEMES;
	while ((size_t)(pos - str) < len && n < max) {
		const struct uks_damos_access_pattern *p = &s.pattern;
		unsigned long action;
		int a;

		if (!scan_scheme(&pos, &s, &action))
			break;
		a = action < sizeof(dbgfs_actions) / sizeof(dbgfs_actions[0]) ?
		    (int)dbgfs_actions[action] : -1;
		if (a < 0 || p->min_sz > p->max_sz || p->min_nr_accesses > p->max_nr_accesses ||
		    p->min_age > p->max_age || s.wmarks.high < s.wmarks.mid ||
		    s.wmarks.high < s.wmarks.low || s.wmarks.mid < s.wmarks.low)
			goto fail;
		s.action = (unsigned int)a;
		if (n == room) {
			struct uks_damos_scheme *more;

			room = room ? room * 2 : 4;
			more = uks_krealloc(schemes, room * sizeof(*schemes));
			if (!more) {
				uks_kfree(schemes);
				return -ENOMEM;
			}
			schemes = more;
		}
		schemes[n++] = s;
	}
	*out = schemes;
	*nr = n;
	return 0;
fail:
	uks_kfree(schemes);
	return -EINVAL;
}

/* The kernel's scnprintf(): what fits, less the NUL; 0 when nothing does. */
static size_t scnprintf_(char *buf, size_t room, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static size_t scnprintf_(char *buf, size_t room, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!room)
		return 0;
	va_start(ap, fmt);
	n = vsnprintf(buf, room, fmt, ap);
	va_end(ap);
	if (n < 0)
		return 0;
	return (size_t)n < room ? (size_t)n : room - 1;
}

/**
 * __uks_damon_dbgfs_sprint_schemes - the schemes file's text, 6.12's way
 * @c:		the context
 * @buf:	the read's buffer
 * @len:	its size
 *
 * Return: the text's length, or -ENOMEM (a line found one byte of room).
 */
ssize_t __uks_damon_dbgfs_sprint_schemes(struct uks_damon_ctx *c, char *buf, size_t len)
{
	int nr = uks_damos_nr_schemes(c);
	size_t written = 0;

	for (int i = 0; i < nr; i++) {
		struct uks_damos_scheme s;
		struct uks_damos_stats st;
		size_t rc;

		if (uks_damos_get_scheme(c, (unsigned int)i, &s) ||
		    uks_damos_get_stats(c, (unsigned int)i, &st))
			break;	/* removed meanwhile */
		rc = scnprintf_(buf + written, len - written,
				"%lu %lu %u %u %u %u %d %lu %lu %lu %u %u %u %d %lu %lu %lu %lu "
				"%lu %lu %lu %lu %lu\n",
				s.pattern.min_sz, s.pattern.max_sz, s.pattern.min_nr_accesses,
				s.pattern.max_nr_accesses, s.pattern.min_age, s.pattern.max_age,
				action_to_dbgfs(s.action), s.quota.ms, s.quota.sz,
				s.quota.reset_interval_ms, s.quota.weight_sz,
				s.quota.weight_nr_accesses, s.quota.weight_age, (int)s.wmarks.metric,
				s.wmarks.interval_us, s.wmarks.high, s.wmarks.mid, s.wmarks.low,
				st.nr_tried, st.sz_tried, st.nr_applied, st.sz_applied,
				st.qt_exceeds);
		if (!rc)
			return -ENOMEM;
		written += rc;
	}
	return (ssize_t)written;
}

/**
 * __uks_damon_dbgfs_write_schemes - a write of the schemes file
 * @c:		the context
 * @kbuf:	the write, NUL-terminated
 * @count:	its length
 *
 * Return: 0, -EINVAL, -EBUSY (running), -ENOMEM.
 */
int __uks_damon_dbgfs_write_schemes(struct uks_damon_ctx *c, const char *kbuf, size_t count)
{
	struct uks_damos_scheme *schemes;
	unsigned int nr;
	int ret = __uks_damon_dbgfs_parse_schemes(kbuf, count, &schemes, &nr);

	if (ret)
		return ret;
	if (uks_damon_is_running(c))
		ret = -EBUSY;
	else
		ret = uks_damos_set_schemes(c, schemes, nr);
	uks_kfree(schemes);
	return ret;
}
