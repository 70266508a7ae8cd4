// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the /sys/kernel/slab/<cache>/ writers: arbitrary bytes
 * written to each writable attribute give 0 or an errno, never a crash,
 * and every attribute still reads back as one line of text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/core.h>
#include <uks/slab.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_kmem_cache *s;
	const char *const *names = uks_kmem_cache_attr_names();
	char buf[1024];
	void *objs[8];

	uks_set_log_fn(NULL, NULL);
	if (!s)
		s = uks_kmem_cache_create("fuzz_attr", 72, 0, 0, NULL);
	if (!s || uks_kmem_cache_alloc_bulk(s, 8, objs) != 8)
		abort();
	for (int i = 0; names[i]; i++) {
		ssize_t len;
		int err;

		if (uks_kmem_cache_attr_writable(names[i])) {
			err = uks_kmem_cache_attr_store(s, names[i], (const char *)data, size);
			if (err && err != -EINVAL && err != -ERANGE)
				abort();
		}
		len = uks_kmem_cache_attr_show(s, names[i], buf, sizeof(buf));
		if (len < 0 || (len && buf[len - 1] != '\n'))
			abort();
	}
	uks_kmem_cache_free_bulk(s, 8, objs);
	return 0;
}
