// SPDX-License-Identifier: MIT
/*
 * Fuzz target for event-probe fetch arguments (lib/trace/probe_arg.c):
 * arbitrary words parse to 0 or an error with a message and a caret inside
 * the word; accepted words build a probe record from an arbitrary attached
 * record (dereferencing into this process, where some fields point at a
 * table of pointers so nested dereferences go somewhere), and every
 * __data_loc the store writes stays inside the record.
 *
 * Input: byte 0 = how many of the following bytes are the attached record
 * (mod 64), then the record, then the words separated by spaces/newlines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>
#include "trace/probe_arg.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct uks_event_field fields[] = {
	{ "unsigned short", "common_type", 0, 2, false, UKS_FILTER_OTHER },
	{ "int", "common_pid", 4, 4, true, UKS_FILTER_OTHER },
	{ "int", "fd", 8, 4, true, UKS_FILTER_OTHER },
	{ "const char *", "p", 12, 8, false, UKS_FILTER_PTR_STRING },
	{ "char[6]", "comm", 20, 6, true, UKS_FILTER_STATIC_STRING },
	{ "__data_loc char[]", "name", 26, 4, true, UKS_FILTER_DYN_STRING },
	{ "u64", "v", 30, 8, false, UKS_FILTER_OTHER },
	{ "char", "c", 38, 1, true, UKS_FILTER_OTHER },
	{ "char[3]", "odd", 39, 3, false, UKS_FILTER_OTHER },
};
#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))
#define SRC_SIZE 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* p -> table: a pointer to itself, strings, numbers. */
	static const char *table[8];
	const char *argv[16];
	char text[512];
	uint8_t src[SRC_SIZE] = { 0 };
	size_t rlen, n, src_len;
	struct uks_probe_args *pa;
	struct uks_probe_error err;
	uint64_t p;
	int argc = 0;

	table[0] = (const char *)table;
	table[1] = "string";
	table[2] = "";
	table[3] = (const char *)&table[1];
	table[4] = (const char *)16;	/* unmapped */
	table[5] = (const char *)table;
	if (!size)
		return 0;
	rlen = data[0] % SRC_SIZE;
	if (rlen > size - 1)
		rlen = size - 1;
	memcpy(src, data + 1, rlen);
	src_len = rlen < 42 ? 42 : rlen;
	/* Half the inputs keep their own p; the rest point it at the table. */
	if (!(data[0] & 0x40)) {
		p = (uint64_t)(uintptr_t)table;
		memcpy(src + 12, &p, 8);
	}
	n = size - 1 - rlen;
	if (n >= sizeof(text))
		n = sizeof(text) - 1;
	memcpy(text, data + 1 + rlen, n);
	text[n] = '\0';
	for (char *s = text, *tok; argc < 16 && (tok = strsep(&s, " \n"));)
		if (*tok)
			argv[argc++] = tok;

	if (__uks_trace_probe_args_parse(argc, argv, fields, NR_FIELDS, 12, &pa, &err)) {
		if (!err.msg)
			abort();
		if (err.arg >= 0 && (err.offset < 0 || (size_t)err.offset > strlen(argv[err.arg]) + 1))
			abort();
		return 0;
	}
	{
		size_t fixed = __uks_trace_probe_args_fixed_size(pa), nr, want = 12;
		size_t dyn = __uks_trace_probe_args_dynamic_size(pa, src, src_len, 0);
		const struct uks_event_field *f = __uks_trace_probe_args_fields(pa, &nr);
		struct uks_seq seq = UKS_SEQ_INIT;
		uint8_t *rec = calloc(1, fixed + dyn);

		if (!rec || nr != (size_t)__uks_trace_probe_args_count(pa))
			abort();
		for (size_t i = 0; i < nr; i++) {
			if (f[i].offset != want || !__uks_trace_probe_args_text(pa, (int)i))
				abort();
			want += f[i].size;
		}
		if (want != fixed)
			abort();
		__uks_trace_probe_args_store(pa, src, src_len, 0, rec, fixed + dyn);
		for (size_t i = 0; i < nr; i++) {
			uint32_t loc;

			if (strncmp(f[i].type, "__data_loc", 10))
				continue;
			for (size_t j = 0; j < f[i].size; j += 4) {
				memcpy(&loc, rec + f[i].offset + j, 4);
				if ((loc & 0xffff) + (loc >> 16) > fixed + dyn ||
				    (loc >> 16 && rec[(loc & 0xffff) + (loc >> 16) - 1]))
					abort();
			}
		}
		__uks_trace_probe_args_print(pa, rec, fixed + dyn, &seq);
		/* A record that is pure input: offsets are checked on print. */
		__uks_trace_probe_args_print(pa, data, size < fixed ? size : fixed, &seq);
		__uks_trace_probe_args_print_fmt(pa, &seq);
		if (seq.overflow)
			abort();
		seq_free(&seq);
		free(rec);
		__uks_trace_probe_args_free(pa);
	}
	return 0;
}
