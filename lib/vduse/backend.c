// SPDX-License-Identifier: MIT
/*
 * Backend selection: "file:PATH", "ram:SIZE", "null:SIZE" specs, the size
 * syntax the CLI shares (K/M/G/T binary suffixes), and the generic calls
 * every backend answers.  The backends themselves are backend_file.c
 * (io_uring), backend_ram.c and backend_null.c.  No state, no locks.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "vduse/vduse_int.h"

UKS_EXPORT int uks_vduse_parse_size(const char *text, uint64_t *out)
{
	unsigned int shift = 0;
	uint64_t v = 0;
	const char *s = text;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (uint64_t)(*s - '0');
	}
	switch (*s) {
	case '\0':
		break;
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	case 't': case 'T':
		shift = 40;
		break;
	default:
		return -EINVAL;
	}
	if (*s && s[1])
		return -EINVAL;
	if (shift && v > (UINT64_MAX >> shift))
		return -ERANGE;
	*out = v << shift;
	return 0;
}

UKS_EXPORT int uks_vduse_backend_open(const char *spec, bool readonly, bool direct, unsigned int nr_queues,
			   struct uks_vduse_backend **out)
{
	struct uks_vduse_backend *be = NULL;
	uint64_t size;
	int ret;

	if (!spec || !nr_queues)
		return -EINVAL;
	if (!strncmp(spec, "file:", 5)) {
		if (!spec[5])
			return -EINVAL;
		ret = __uks_vduse_backend_file_open(spec + 5, readonly, direct, nr_queues, &be);
	} else if (!strncmp(spec, "ram:", 4) || !strncmp(spec, "null:", 5)) {
		bool ram = spec[0] == 'r';

		ret = uks_vduse_parse_size(spec + (ram ? 4 : 5), &size);
		if (ret)
			return ret;
		if (!size || size % 512)
			return -EINVAL;
		ret = ram ? __uks_vduse_backend_ram_open(size, &be)
			  : __uks_vduse_backend_null_open(size, &be);
	} else {
		return -EINVAL;
	}
	if (ret)
		return ret;
	be->readonly = be->readonly || readonly;
	be->nr_queues = nr_queues;
	*out = be;
	return 0;
}

UKS_EXPORT uint64_t uks_vduse_backend_size(const struct uks_vduse_backend *be)
{
	return atomic_load_explicit(&be->size, memory_order_relaxed);
}

UKS_EXPORT int uks_vduse_backend_resize(struct uks_vduse_backend *be, uint64_t size)
{
	if (!size || size % 512)
		return -EINVAL;
	if (!be->ops->resize)
		return -EOPNOTSUPP;
	return be->ops->resize(be, size);
}

UKS_EXPORT void uks_vduse_backend_close(struct uks_vduse_backend *be)
{
	if (be)
		be->ops->close(be);
}
