// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the event filter compiler and matcher: any text either
 * compiles or fails with a message and an in-range position, never a
 * crash; a filter that compiles runs on a fuzzed record, and the result
 * agrees with the filter's negation and conjunction (metamorphic checks:
 * "!(F)" is the opposite of F, "(F) && (F)" equals F, "(F) || !(F)" keeps).
 *
 * Input: the filter text up to the first NUL, then the record bytes.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/core.h>
#include "trace/filter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fuzz_rec {
	struct uks_trace_entry ent;
	uint64_t u64v;
	int32_t s32v;
	char name[16];
	uint32_t dstr;
	const char *pstr;
	int8_t s8v;
	uint8_t u8v;
	int16_t s16v;
	uint16_t u16v;
	char data[40];
};

#define FLD(t, n, m, ft, sg) { t, n, offsetof(struct fuzz_rec, m), \
			       sizeof(((struct fuzz_rec *)0)->m), sg, ft }

static const struct uks_event_field fields[] = {
	{ "int", "CPU", 0, 4, true, UKS_FILTER_CPU },
	{ "int", "cpu", 0, 4, true, UKS_FILTER_CPU },
	{ "char[16]", "COMM", 0, 16, false, UKS_FILTER_COMM },
	{ "char[16]", "comm", 0, 16, false, UKS_FILTER_COMM },
	{ "unsigned short", "common_type", 0, 2, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_flags", 2, 1, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_preempt_count", 3, 1, false, UKS_FILTER_OTHER },
	{ "int", "common_pid", 4, 4, true, UKS_FILTER_OTHER },
	FLD("u64", "a", u64v, UKS_FILTER_OTHER, false),
	FLD("s32", "b", s32v, UKS_FILTER_OTHER, true),
	FLD("char[16]", "name", name, UKS_FILTER_STATIC_STRING, false),
	{ "__data_loc char[]", "str", offsetof(struct fuzz_rec, dstr), 4, false,
	  UKS_FILTER_DYN_STRING },
	FLD("const char *", "p", pstr, UKS_FILTER_PTR_STRING, false),
	FLD("s8", "c", s8v, UKS_FILTER_OTHER, true),
	FLD("u8", "d", u8v, UKS_FILTER_OTHER, false),
	FLD("s16", "e", s16v, UKS_FILTER_OTHER, true),
	FLD("u16", "f", u16v, UKS_FILTER_OTHER, false),
	{ "char[3]", "odd", offsetof(struct fuzz_rec, data), 3, false, UKS_FILTER_OTHER },
};
#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))

static const char *const strings[] = { "bash", "", "/etc/passwd", "a*b?c[d]", NULL };

static int run(const char *text, const struct fuzz_rec *r, size_t len,
	       const struct uks_filter_ctx *ctx)
{
	struct uks_filter_error e;
	struct uks_filter *f = NULL;
	size_t tlen = strlen(text);
	int ret = __uks_trace_filter_compile(text, fields, NR_FIELDS, &f, &e);

	if (ret) {
		if (f || !e.msg || e.pos < 0 || (size_t)e.pos > tlen + 1)
			abort();
		if (ret != -EINVAL && ret != -ENOSPC && ret != -ENOMEM)
			abort();
		return ret;
	}
	if (!f)
		abort();
	ret = __uks_trace_filter_match(f, r, len, ctx);
	if (__uks_trace_filter_match(f, r, len, ctx) != ret)
		abort();
	__uks_trace_filter_free(f);
	return ret;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[4200], wrapped[8500];
	const uint8_t *nul = memchr(data, 0, size);
	size_t tlen = nul ? (size_t)(nul - data) : size;
	const uint8_t *rb = nul ? nul + 1 : data + size;
	size_t rlen = (size_t)(data + size - rb);
	struct uks_filter_ctx ctx = { 0, NULL };
	struct fuzz_rec r;
	int res;

	uks_set_log_fn(NULL, NULL);
	if (tlen >= sizeof(text))
		tlen = sizeof(text) - 1;
	memcpy(text, data, tlen);
	text[tlen] = 0;

	if (rlen > sizeof(r))
		rlen = sizeof(r);
	memset(&r, 0, sizeof(r));
	memcpy(&r, rb, rlen);
	/* The char * is the one thing a record may not hold at random. */
	r.pstr = strings[(r.ent.flags >> 4) % 5];
	ctx.cpu = r.ent.preempt_count - 2;
	ctx.comm = strings[r.ent.flags % 5];
	if (rlen < sizeof(r))
		rlen = (rlen + 7) % (sizeof(r) + 1);	/* short records too */

	res = run(text, &r, rlen, &ctx);
	if (res < 0 || tlen > 4000)
		return 0;
	/* metamorphic checks on a filter that compiled */
	snprintf(wrapped, sizeof(wrapped), "!(%s)", text);
	if (run(wrapped, &r, rlen, &ctx) != !res)
		abort();
	snprintf(wrapped, sizeof(wrapped), "(%s) && (%s)", text, text);
	if (tlen < 2000 && run(wrapped, &r, rlen, &ctx) != res)
		abort();
	snprintf(wrapped, sizeof(wrapped), "(%s) || !(%s)", text, text);
	if (tlen < 2000 && run(wrapped, &r, rlen, &ctx) != 1)
		abort();
	return 0;
}
