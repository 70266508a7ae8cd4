// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the ELF header reader (lib/sched/elf.c): any input
 * parses or fails with -ENOEXEC; a parsed header has class 32 or 64 and a
 * PT_INTERP, if any, that lies inside the input and ends with its NUL.
 * Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#include <uks/sched.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uks_elf_info info;
	int ret = uks_elf_parse(data, size, &info);

	if (ret) {
		if (ret != -ENOEXEC)
			abort();
		return 0;
	}
	if (info.elf_class != 32 && info.elf_class != 64)
		abort();
	if (info.interp_size &&
	    (info.interp_off > size || info.interp_size > size - info.interp_off ||
	     data[info.interp_off + info.interp_size - 1] != '\0'))
		abort();
	return 0;
}
