// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for vaddr-refs' reader of /proc/PID/smaps
 * (lib/damon/vaddr_refs.c): any bytes parse; every mapping it returns came
 * from a line of the input that starts with its range, and a Referenced:
 * flag is set only if such a line follows its mapping.  Built and run by
 * `make fuzz`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "damon/damon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct refs_map *maps = NULL;
	unsigned int nr = 0;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (__uks_damon_parse_smaps(f, &maps, &nr))
		abort();
	fclose(f);
	if (nr && !maps)
		abort();
	if (nr > size / 4)		/* a header line needs at least "0-0 " */
		abort();
	if (nr && maps[0].referenced && !memmem(data, size, "Referenced:", 11))
		abort();
	uks_kfree(maps);
	return 0;
}
