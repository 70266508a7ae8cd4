// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the slub_debug= parser (UKS_SLUB_DEBUG): any string
 * parses without a crash or a hang, and per-cache flags stay within the
 * debug flags the syntax can express.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/core.h>
#include "slab/slub.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const names[] = { "kmalloc-64", "dentry", "a", "", "kmalloc-8k" };
	const unsigned long allowed = SLUB_DEBUG_FLAGS | UKS_SLAB_FAILSLAB;
	char text[1100];

	if (size >= sizeof(text))
		size = sizeof(text) - 1;
	memcpy(text, data, size);
	text[size] = 0;
	uks_set_log_fn(NULL, NULL);
	__uks_slub_debug_parse(text);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (__uks_slub_debug_flags(names[i], 0) & ~allowed)
			abort();
	return 0;
}
