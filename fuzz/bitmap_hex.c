// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the hex bitmap parser (tracing_cpumask's writes):
 * any input either fails with -EINVAL/-EOVERFLOW, or parses to a map with
 * no bit at or past nbits, and then printing and re-parsing gives the same
 * map.  Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/bitmap.h"

#define MAX_BITS	4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned long a[BITS_TO_LONGS(MAX_BITS) + 1], b[BITS_TO_LONGS(MAX_BITS) + 1];
	static char printed[MAX_BITS / 4 + MAX_BITS / 32 + 8];
	unsigned int nbits = 1 + (size ? data[0] % 200 : 0);
	int ret;

	if (size && data[0] & 0x80)
		nbits = MAX_BITS - data[0] % 64;
	a[BITS_TO_LONGS(nbits)] = 0x5a5a;	/* a canary past the map */
	ret = bitmap_parse_hex((const char *)data, size, a, nbits);
	if (a[BITS_TO_LONGS(nbits)] != 0x5a5a)
		abort();
	if (ret) {
		if (ret != -EINVAL && ret != -EOVERFLOW)
			abort();
		return 0;
	}
	if (find_next_bit(a, BITS_TO_LONGS(nbits) * BITS_PER_LONG, nbits) <
	    BITS_TO_LONGS(nbits) * BITS_PER_LONG)
		abort();
	if (bitmap_print_hex(a, nbits, printed, sizeof(printed)) < 0)
		abort();
	if (bitmap_parse_hex(printed, strlen(printed), b, nbits) ||
	    memcmp(a, b, BITS_TO_LONGS(nbits) * sizeof(long)))
		abort();
	return 0;
}
