// SPDX-License-Identifier: MIT
/* uks damon report heats --heatmap FILE.png|FILE.svg (placeholder) */
#include <errno.h>

#include "damon.h"

int damon_heatmap_image(const struct uks_damon_heatmap *hm, const char *path, bool abs_time,
			bool abs_addr)
{
	return -EOPNOTSUPP;
}
