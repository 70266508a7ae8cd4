// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for what `uks vduse-blk` parses from its user: sizes
 * ("64K", "16M", ... and the resize requests of the control socket) and
 * backend specs.  A size either fails with -EINVAL/-ERANGE or parses to a
 * value that printing in bytes and parsing again reproduces; a "null:" or
 * "ram:" spec (at most 64 MiB, so the fuzzer does not map the machine
 * away) opens with exactly the parsed size or fails with -EINVAL/-ERANGE.
 * "file:" specs are not opened: the fuzzer must not touch the file system.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/vduse.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[256], again[32];
	struct uks_vduse_backend *be;
	uint64_t v, w;
	int ret;

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	ret = uks_vduse_parse_size(text, &v);
	if (ret && ret != -EINVAL && ret != -ERANGE)
		abort();
	if (!ret) {
		snprintf(again, sizeof(again), "%" PRIu64, v);
		if (uks_vduse_parse_size(again, &w) || w != v)
			abort();
	}
	if (strncmp(text, "null:", 5) && strncmp(text, "ram:", 4))
		return 0;
	ret = uks_vduse_parse_size(strchr(text, ':') + 1, &v);
	if (ret || v > (64u << 20))
		return 0;
	ret = uks_vduse_backend_open(text, false, false, 1, &be);
	if (ret) {
		if (ret != -EINVAL && ret != -ERANGE)
			abort();
		return 0;
	}
	if (uks_vduse_backend_size(be) != v)
		abort();
	uks_vduse_backend_close(be);
	return 0;
}
