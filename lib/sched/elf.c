// SPDX-License-Identifier: MIT
/*
 * A small ELF header reader: the class (32/64-bit), byte order, type and
 * machine, and where the PT_INTERP string lies.  uks exec32 --auto uses
 * the class to decide whether a program is 32-bit, the denywrite checker
 * uses the interpreter offset to point a copy of a program at a copy of
 * its dynamic loader.
 *
 * Input is untrusted (any file on the command line, the fuzz target):
 * every offset and count is checked against the buffer before use, with
 * 64-bit arithmetic so nothing wraps.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "core/compiler.h"
#include <uks/sched.h>

static uint64_t get(const unsigned char *p, unsigned int n, bool be)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

UKS_EXPORT int uks_elf_parse(const void *buf, size_t len, struct uks_elf_info *info)
{
	const unsigned char *b = buf;
	uint64_t phoff, phentsize, phnum;
	bool be, is64;

	memset(info, 0, sizeof(*info));
	if (len < 20 || memcmp(b, "\177ELF", 4))
		return -ENOEXEC;
	if (b[4] != 1 && b[4] != 2)
		return -ENOEXEC;
	if (b[5] != 1 && b[5] != 2)
		return -ENOEXEC;
	is64 = b[4] == 2;
	be = b[5] == 2;
	if (len < (is64 ? 64u : 52u))
		return -ENOEXEC;
	info->elf_class = is64 ? 64 : 32;
	info->big_endian = be;
	info->type = (unsigned int)get(b + 16, 2, be);
	info->machine = (unsigned int)get(b + 18, 2, be);
	if (is64) {
		phoff = get(b + 32, 8, be);
		phentsize = get(b + 54, 2, be);
		phnum = get(b + 56, 2, be);
	} else {
		phoff = get(b + 28, 4, be);
		phentsize = get(b + 42, 2, be);
		phnum = get(b + 44, 2, be);
	}
	info->phnum = (unsigned int)phnum;
	if (!phnum)
		return 0;
	if (phentsize < (is64 ? 56u : 32u) || phoff > len ||
	    phnum * phentsize > len - phoff) {
		info->phdrs_truncated = true;
		return 0;
	}
	for (uint64_t i = 0; i < phnum; i++) {
		const unsigned char *ph = b + phoff + i * phentsize;
		uint64_t off, sz;

		if (get(ph, 4, be) != 3)		/* PT_INTERP */
			continue;
		off = is64 ? get(ph + 8, 8, be) : get(ph + 4, 4, be);
		sz = is64 ? get(ph + 32, 8, be) : get(ph + 16, 4, be);
		if (!sz || off > len || sz > len - off || b[off + sz - 1] != '\0')
			return -ENOEXEC;
		info->interp_off = (size_t)off;
		info->interp_size = (size_t)sz;
		break;
	}
	return 0;
}

UKS_EXPORT int uks_elf_read_file(const char *path, struct uks_elf_info *info)
{
	static const size_t max = 64 * 1024;
	unsigned char buf[64 * 1024];
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while (got < max) {
		ssize_t n = read(fd, buf + got, max - got);

		if (n < 0) {
			int err = -errno;

			close(fd);
			return err;
		}
		if (!n)
			break;
		got += (size_t)n;
	}
	close(fd);
	return uks_elf_parse(buf, got, info);
}
