// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the DAMON debugfs schemes parser (6.12's format,
 * lib/damon/debugfs/dbgfs_schemes.c): any bytes give -EINVAL or a list of
 * at most one scheme per eight bytes, each with an action of debugfs's
 * numbering, ordered ranges and watermarks; the list, set on a context
 * and read back, parses again to the same schemes (its text has five
 * stats more per line, which the parser's eighteen-number steps read as
 * the next scheme's first numbers: so the round trip goes through the
 * API).  Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/damon.h>
#include <uks/slab.h>

#include "damon/debugfs/dbgfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_damon_ctx *ctx;
	struct uks_damos_scheme *s, back;
	char *text = malloc(size + 1);
	unsigned int nr;
	int ret;

	if (!text)
		return 0;
	if (!ctx && uks_damon_ctx_create(&ctx))
		abort();
	memcpy(text, data, size);
	text[size] = '\0';
	ret = __uks_damon_dbgfs_parse_schemes(text, size, &s, &nr);
	if (ret) {
		if (ret != -EINVAL && ret != -ENOMEM)
			abort();
		free(text);
		return 0;
	}
	if (nr > size / 8 || nr > UKS_DAMOS_MAX_SCHEMES)
		abort();
	for (unsigned int i = 0; i < nr; i++) {
		const struct uks_damos_scheme *x = &s[i];

		if (x->pattern.min_sz > x->pattern.max_sz ||
		    x->pattern.min_nr_accesses > x->pattern.max_nr_accesses ||
		    x->pattern.min_age > x->pattern.max_age || x->wmarks.high < x->wmarks.mid ||
		    x->wmarks.mid < x->wmarks.low || x->nr_filters || x->quota.nr_goals ||
		    x->action >= UKS_DAMOS_NR_ACTIONS ||
		    (x->action >= UKS_DAMOS_LRU_PRIO && x->action <= UKS_DAMOS_MIGRATE_COLD))
			abort();
	}
	ret = uks_damos_set_schemes(ctx, s, nr);
	if (!ret) {
		if (uks_damos_nr_schemes(ctx) != (int)nr)
			abort();
		for (unsigned int i = 0; i < nr; i++)
			if (uks_damos_get_scheme(ctx, i, &back) || memcmp(&back, &s[i], sizeof(back)))
				abort();
		{
			static char out[1 << 16];	/* lines of up to 430 bytes */

			if (__uks_damon_dbgfs_sprint_schemes(ctx, out, sizeof(out)) < 0 && nr < 150)
				abort();
		}
	} else if (ret != -EINVAL) {	/* an action the kernel's process_madvise() lacks */
		abort();
	}
	uks_kfree(s);
	free(text);
	return 0;
}
