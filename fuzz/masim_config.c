// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the masim configuration parser: any input parses
 * or fails with -EINVAL and an error text naming a line; a parsed
 * configuration keeps the parser's promises (regions and phases present,
 * every pattern naming a region, weights summing to the phase total) and
 * loads into a synthetic space.  Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/damon_masim.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uks_damon_masim *m;
	struct uks_damon_synth *s;
	char err[256];
	int ret = uks_damon_masim_parse((const char *)data, size, &m, err, sizeof(err));

	if (ret) {
		if (ret != -EINVAL || m || strncmp(err, "line ", 5))
			abort();
		return 0;
	}
	if (!m->nr_regions || !m->nr_phases)
		abort();
	for (unsigned int p = 0; p < m->nr_phases; p++) {
		unsigned int total = 0;

		for (unsigned int k = 0; k < m->phases[p].nr_patterns; k++) {
			if (m->phases[p].patterns[k].region >= m->nr_regions)
				abort();
			total += m->phases[p].patterns[k].weight;
		}
		if (!total || total != m->phases[p].total_weight || !m->phases[p].duration_ms)
			abort();
	}
	if (!uks_damon_synth_create(&s)) {
		uks_damon_synth_load_masim(s, m, 0x10000000UL, 5000, NULL);
		uks_damon_synth_destroy(s);
	}
	uks_damon_masim_free(m);
	return 0;
}
