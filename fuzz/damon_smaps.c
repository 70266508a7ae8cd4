// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for vaddr-refs' reader of /proc/PID/smaps
 * (lib/damon/primitives/vaddr_refs.c): any bytes parse, and the mappings it returns
 * are, in order, lines of the input that start with their ranges.  Built
 * and run by `make fuzz`.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "damon/damon.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/*
 * Does a line of @text from *@pos on start with "@start-@end " (as strtoul
 * reads hex)?  *@pos moves past the line found: mappings come in order.
 */
static bool next_line_with(const char *text, size_t *pos, unsigned long start, unsigned long end)
{
	while (text[*pos]) {
		const char *line = text + *pos, *nl = strchr(line, '\n');
		char *p;
		bool match = isxdigit((unsigned char)line[0]) && strtoul(line, &p, 16) == start &&
			     *p == '-' && isxdigit((unsigned char)p[1]) &&
			     strtoul(p + 1, &p, 16) == end && *p == ' ';

		*pos = nl ? (size_t)(nl - text) + 1 : strlen(text);
		if (match)
			return true;
	}
	return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct refs_map *maps = NULL;
	unsigned int nr = 0;
	size_t pos = 0;
	char *text;
	FILE *f;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (__uks_damon_parse_smaps(f, &maps, &nr))
		abort();
	fclose(f);
	/* the same bytes as one C string, NULs ending lines as fgets() sees them */
	text = malloc(size + 1);
	if (!text)
		abort();
	for (size_t i = 0; i < size; i++)
		text[i] = data[i] ? (char)data[i] : '\n';
	text[size] = '\0';
	for (unsigned int i = 0; i < nr; i++)
		if (!next_line_with(text, &pos, maps[i].start, maps[i].end))
			abort();
	free(text);
	uks_kfree(maps);
	return 0;
}
