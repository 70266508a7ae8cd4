// SPDX-License-Identifier: MIT
/*
 * Where the pages of a taken huge page are: a huge entry is 512 pages at
 * page + k * PG, until the program mremap()s a range that cuts it.  The
 * kernel then moves the part of the mapping (and of our registration)
 * inside the range, and the pages of it that we hold must go back at the
 * new addresses, where the program will look for them.  Giving them back
 * at once is not possible (the move fails with -EAGAIN until the
 * mremapping thread has gone on), so the entry remembers the cut: it
 * becomes up to SELF_MAX_PIECES pieces, pages [k0, k1) at
 * page + k * PG + delta, and every lookup by address goes through here.
 *
 * Only the monitor thread runs this, as the rest of self_uffd.c.
 */
#include <errno.h>

#include "damon/self/self.h"

/* The pieces of @e, the uncut entry being one piece of delta 0. */
static unsigned int pieces_of(const struct self_entry *e, struct self_piece *one,
			      const struct self_piece **out)
{
	if (e->nr_pieces) {
		*out = e->piece;
		return e->nr_pieces;
	}
	one->k0 = 0;
	one->k1 = (uint16_t)(e->len / PG);
	one->delta = 0;
	*out = one;
	return 1;
}

/** __uks_damon_self_page_addr - where page @k of entry @e is now */
unsigned long __uks_damon_self_page_addr(const struct self_entry *e, unsigned long k)
{
	for (unsigned int i = 0; i < e->nr_pieces; i++)
		if (k >= e->piece[i].k0 && k < e->piece[i].k1)
			return e->page + k * PG + (unsigned long)e->piece[i].delta;
	return e->page + k * PG;
}

/** __uks_damon_self_page_index - which page of @e is at @addr now, or -1 */
long __uks_damon_self_page_index(const struct self_entry *e, unsigned long addr)
{
	struct self_piece one;
	const struct self_piece *p;
	unsigned int n = pieces_of(e, &one, &p);

	for (unsigned int i = 0; i < n; i++) {
		unsigned long base = e->page + (unsigned long)p[i].delta;

		if (addr >= base + p[i].k0 * PG && addr < base + p[i].k1 * PG)
			return (long)((addr - base) / PG);
	}
	return -1;
}

/** __uks_damon_self_meets - does any page of @e lie in [@start, @end)? */
bool __uks_damon_self_meets(const struct self_entry *e, unsigned long start, unsigned long end)
{
	struct self_piece one;
	const struct self_piece *p;
	unsigned int n = pieces_of(e, &one, &p);

	for (unsigned int i = 0; i < n; i++) {
		unsigned long base = e->page + (unsigned long)p[i].delta;

		if (base + p[i].k0 * PG < end && base + p[i].k1 * PG > start)
			return true;
	}
	return false;
}

/**
 * __uks_damon_self_piece_range - the addresses of piece @i of @e
 * @e:		the entry
 * @i:		0 .. nr_pieces - 1, or 0 for an uncut entry
 * @start:	first byte
 *
 * Return: its length in bytes, 0 past the last piece.
 */
unsigned long __uks_damon_self_piece_range(const struct self_entry *e, unsigned int i,
					   unsigned long *start)
{
	struct self_piece one;
	const struct self_piece *p;
	unsigned int n = pieces_of(e, &one, &p);

	if (i >= n)
		return 0;
	*start = e->page + (unsigned long)p[i].delta + p[i].k0 * PG;
	return (unsigned long)(p[i].k1 - p[i].k0) * PG;
}

/* Pages [k0, k1) of piece @p whose addresses lie in [start, end). */
static void clip(const struct self_entry *e, const struct self_piece *p, unsigned long start,
		 unsigned long end, unsigned long *kx, unsigned long *ky)
{
	unsigned long base = e->page + (unsigned long)p->delta;

	*kx = start <= base + p->k0 * PG ? p->k0 : (start - base) / PG;
	*ky = end >= base + p->k1 * PG ? p->k1 : end <= base ? 0 : (end - base) / PG;
	if (*kx > p->k1)
		*kx = p->k1;
	if (*ky < *kx)
		*ky = *kx;
}

/**
 * __uks_damon_self_remap - mremap() moved [@from, @from + @len) to @to
 * @e:		a registered entry
 *
 * The pages of @e inside the range move with it.  Return: 0, or -ENOSPC
 * when the cut would need more than SELF_MAX_PIECES pieces; the entry is
 * then unchanged, and the caller lets go of the moved pages (on_remap()).
 */
int __uks_damon_self_remap(struct self_entry *e, unsigned long from, unsigned long to,
			   unsigned long len)
{
	struct self_piece one, out[3 * SELF_MAX_PIECES];
	const struct self_piece *p;
	unsigned int n = pieces_of(e, &one, &p), nr = 0;
	long delta = (long)(to - from);

	for (unsigned int i = 0; i < n; i++) {
		unsigned long kx, ky;

		clip(e, &p[i], from, from + len, &kx, &ky);
		if (kx == ky) {
			out[nr++] = p[i];
			continue;
		}
		if (p[i].k0 < kx)
			out[nr++] = (struct self_piece){ p[i].k0, (uint16_t)kx, p[i].delta };
		out[nr++] = (struct self_piece){ (uint16_t)kx, (uint16_t)ky, p[i].delta + delta };
		if (ky < p[i].k1)
			out[nr++] = (struct self_piece){ (uint16_t)ky, p[i].k1, p[i].delta };
	}
	/* the pieces stay in page order: join neighbours that moved alike */
	unsigned int m = 0;

	for (unsigned int i = 0; i < nr; i++) {
		if (m && out[m - 1].k1 == out[i].k0 && out[m - 1].delta == out[i].delta)
			out[m - 1].k1 = out[i].k1;
		else
			out[m++] = out[i];
	}
	if (m == 1) {			/* all of it moved, or none: one base */
		e->page += (unsigned long)out[0].delta;
		e->nr_pieces = 0;
		return 0;
	}
	if (m > SELF_MAX_PIECES)
		return -ENOSPC;
	for (unsigned int i = 0; i < m; i++)
		e->piece[i] = out[i];
	e->nr_pieces = (unsigned char)m;
	return 0;
}
