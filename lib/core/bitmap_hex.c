// SPDX-License-Identifier: MIT
/*
 * The kernel's hex bitmap format (cpumask files such as tracing_cpumask):
 * what "%*pb" prints and bitmap_parse() accepts.
 *
 * Printed: 32-bit chunks in hex, most significant first, separated by
 * commas; the first chunk has as many digits as its bits need (for 2 bits
 * "3"), the others 8 ("f,ffffffff" for 36 bits).
 *
 * Parsed: the text ends at its first newline or NUL; chunks of at most 8
 * hex digits are separated by commas and/or whitespace, anywhere and any
 * number of them ("  ,  1" is 1, "" and "," are the empty map).  Errors,
 * as the kernel's: -EINVAL for a character that is not a hex digit,
 * -EOVERFLOW for a chunk of more than 8 digits, more chunks than @nbits
 * needs, or a bit set at or past @nbits.  On error the map holds garbage:
 * parse into a scratch map.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/bitmap.h"

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static bool separator(char c)
{
	return c == ',' || c == ' ' || (c >= '\t' && c <= '\r');
}

static uint32_t chunk_get(const unsigned long *map, unsigned int chunk)
{
	unsigned int bit = chunk * 32;

	return (uint32_t)(map[BIT_WORD(bit)] >> (bit % BITS_PER_LONG));
}

/*
 * Print @map into @buf as the kernel's "%*pb".  Returns the length (no
 * newline), or -ENOSPC if @size is too small.
 */
int bitmap_print_hex(const unsigned long *map, unsigned int nbits, char *buf, size_t size)
{
	unsigned int chunks = (nbits + 31) / 32, top = nbits % 32 ? nbits % 32 : 32;
	size_t len = 0;

	if (!size)
		return -ENOSPC;
	buf[0] = '\0';
	for (unsigned int i = chunks; i-- > 0;) {
		unsigned int width = i == chunks - 1 ? (top + 3) / 4 : 8;
		uint32_t v = chunk_get(map, i);
		int n;

		if (i == chunks - 1 && top < 32)
			v &= (1u << top) - 1;
		n = snprintf(buf + len, size - len, "%s%0*x", len ? "," : "", (int)width, v);
		if (n < 0 || (size_t)n >= size - len)
			return -ENOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

/* Parse @text (@len bytes) into @map of @nbits bits; see the top comment. */
int bitmap_parse_hex(const char *text, size_t len, unsigned long *map, unsigned int nbits)
{
	unsigned int max_chunks = (nbits + 31) / 32, nr = 0;
	unsigned long *words = map;
	size_t end = 0;

	while (end < len && text[end] != '\n' && text[end])
		end++;
	bitmap_zero(words, nbits);
	for (;;) {
		uint32_t v = 0;
		unsigned int digits = 0;

		while (end > 0 && separator(text[end - 1]))
			end--;
		if (!end)
			break;
		if (nr == max_chunks)
			return -EOVERFLOW;
		while (end > 0 && !separator(text[end - 1])) {
			int h = hex_value(text[end - 1]);

			if (h < 0)
				return -EINVAL;
			if (digits == 8)
				return -EOVERFLOW;
			v |= (uint32_t)h << (4 * digits++);
			end--;
		}
		words[BIT_WORD(nr * 32)] |= (unsigned long)v << (nr * 32 % BITS_PER_LONG);
		nr++;
	}
	/* Only a full set of chunks can reach past @nbits. */
	if (nr == max_chunks && nbits % 32 && chunk_get(words, nr - 1) >> (nbits % 32))
		return -EOVERFLOW;
	return 0;
}
