// SPDX-License-Identifier: MIT
/*
 * Bitmap helpers and the kernel's "list" text format.
 *
 * Grammar (as lib/bitmap.c's bitmap_parselist accepts it):
 *   list   := "" | region ("," region)*
 *   region := num | num "-" num [":" used "/" group]
 *   num    := decimal | "N"          ("N" is the last bit, nbits - 1)
 * Surrounding whitespace and one trailing newline (what `echo` writes) are
 * accepted.  Errors: -EINVAL for malformed text or start > end or a bad
 * group, -ERANGE for a bit at or past @nbits, -EOVERFLOW for a number that
 * does not fit in 32 bits.  On error the map is left cleared.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/bitmap.h"

void bitmap_zero(unsigned long *map, unsigned int nbits)
{
	memset(map, 0, BITS_TO_LONGS(nbits) * sizeof(unsigned long));
}

void bitmap_set(unsigned long *map, unsigned int start, unsigned int len)
{
	for (unsigned int i = start; i < start + len; i++)
		set_bit(i, map);
}

unsigned int bitmap_weight(const unsigned long *map, unsigned int nbits)
{
	unsigned int w = 0, i;

	for (i = 0; i < nbits / BITS_PER_LONG; i++)
		w += __builtin_popcountl(map[i]);
	if (nbits % BITS_PER_LONG)
		w += __builtin_popcountl(map[i] & (BIT_MASK(nbits) - 1));
	return w;
}

/* Returns the first set bit at or after @start, or @nbits if none. */
unsigned int find_next_bit(const unsigned long *map, unsigned int nbits,
			   unsigned int start)
{
	if (start >= nbits)
		return nbits;

	unsigned int idx = BIT_WORD(start);
	unsigned long word = map[idx] & (~0UL << (start % BITS_PER_LONG));

	while (!word) {
		if (++idx >= BITS_TO_LONGS(nbits))
			return nbits;
		word = map[idx];
	}
	unsigned int bit = idx * BITS_PER_LONG + __builtin_ctzl(word);

	return bit < nbits ? bit : nbits;
}

struct region {
	unsigned int start, end, used, group;
};

/*
 * ASCII classes, as the kernel's lib/ctype.c has them.  Not <ctype.h>:
 * this parser runs inside the first malloc() of a preloaded allocator,
 * and glibc's class table would pull 100 KiB of its read-only data into
 * every process (fault-around maps 64 KiB of a file at a time).
 */
static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static int parse_num(const char **p, unsigned int nbits, unsigned int *out)
{
	const char *s = *p;
	uint64_t v = 0;

	if (*s == 'N') {
		if (nbits == 0)
			return -ERANGE;
		*out = nbits - 1;
		*p = s + 1;
		return 0;
	}
	if (!is_digit(*s))
		return -EINVAL;
	while (is_digit(*s)) {
		v = v * 10 + (uint64_t)(*s++ - '0');
		if (v > UINT32_MAX)
			return -EOVERFLOW;
	}
	*out = (unsigned int)v;
	*p = s;
	return 0;
}

static int parse_region(const char **p, unsigned int nbits, struct region *r)
{
	int ret = parse_num(p, nbits, &r->start);

	if (ret)
		return ret;
	r->end = r->start;
	r->used = r->group = 1;
	if (**p != '-')
		return 0;
	(*p)++;
	ret = parse_num(p, nbits, &r->end);
	if (ret)
		return ret;
	if (**p != ':')
		return 0;
	(*p)++;
	ret = parse_num(p, nbits, &r->used);
	if (ret)
		return ret;
	if (**p != '/')
		return -EINVAL;
	(*p)++;
	return parse_num(p, nbits, &r->group);
}

static int check_region(const struct region *r, unsigned int nbits)
{
	if (r->start > r->end || r->group == 0 || r->used > r->group)
		return -EINVAL;
	if (r->end >= nbits)
		return -ERANGE;
	return 0;
}

static void set_region(unsigned long *map, const struct region *r)
{
	for (unsigned int base = r->start; base <= r->end; base += r->group) {
		for (unsigned int i = 0; i < r->used && base + i <= r->end; i++)
			set_bit(base + i, map);
		if (r->end - base < r->group)
			break;	/* avoid wrapping past UINT_MAX */
	}
}

int bitmap_parselist(const char *text, unsigned long *map, unsigned int nbits)
{
	const char *p = text;
	int ret;

	bitmap_zero(map, nbits);
	while (is_space(*p))
		p++;
	if (!*p)
		return 0;
	for (;;) {
		struct region r;

		ret = parse_region(&p, nbits, &r);
		if (!ret)
			ret = check_region(&r, nbits);
		if (ret)
			goto fail;
		set_region(map, &r);
		if (*p != ',')
			break;
		p++;
	}
	while (is_space(*p))
		p++;
	if (!*p)
		return 0;
	ret = -EINVAL;
fail:
	bitmap_zero(map, nbits);
	return ret;
}

/*
 * Print @map as "0-3,8,10-11" into @buf.  Returns the string length (no
 * newline; an empty map prints ""), or -ENOSPC if @size is too small, in
 * which case @buf holds a truncated, still terminated string.
 */
int bitmap_print_list(const unsigned long *map, unsigned int nbits,
		      char *buf, size_t size)
{
	size_t len = 0;
	unsigned int start = find_next_bit(map, nbits, 0);

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	while (start < nbits) {
		unsigned int end = start;

		while (end + 1 < nbits && test_bit(end + 1, map))
			end++;
		int n = (end == start)
			? snprintf(buf + len, size - len, "%s%u", len ? "," : "", start)
			: snprintf(buf + len, size - len, "%s%u-%u", len ? "," : "", start, end);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
		start = find_next_bit(map, nbits, end + 1);
	}
	return (int)len;
}
