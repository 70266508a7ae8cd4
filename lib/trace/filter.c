// SPDX-License-Identifier: MIT
/*
 * Event filters: the filter language of Linux 5.15
 * (kernel/trace/trace_events_filter.c, Documentation/trace/events.rst §5).
 *
 * What.  A filter such as
 *	((sig >= 10 && sig < 15) || sig == 17) && comm != "bash"
 * is compiled once against an event's field table and then run against
 * every record before it is committed.  Numeric fields take == != < <= > >=
 * and & (bitwise and, true when nonzero); string fields take == != and ~
 * (glob).  Predicates combine with && (binds tighter), ||, ! and
 * parentheses, and evaluation short-circuits.
 *
 * Compiling (filter_parse.c) follows the kernel's parser step by step, so
 * the same input fails with the same message at the same position; the
 * result is a flat array of predicates with forward branches, which
 * __uks_trace_filter_match() below runs in one loop.
 *
 * Deviations from 5.15 are marked "uks:" here and in filter_parse.c; the
 * main ones: incomplete expressions ("a == 1 &&") are rejected as later
 * kernels do, string matching never reads past the field or the record,
 * "*abc" and "*abc*" look at the string up to its NUL rather than at the
 * whole char[N] buffer, and a char * is read at most 1024 bytes deep (NULL
 * never matches).  As in 5.15, string values must be quoted: the
 * "comm != bash" example of events.rst fails on the kernel too ("did you
 * forget quotes").
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <uks/slab.h>
#include "trace/filter_impl.h"

/* ------------------------------------------------------------- matching */

/*
 * lib/glob.c semantics (*, ?, [a-z], [!...], \x), on a subject of @len
 * bytes that need not be NUL-terminated: byte @len reads as the NUL.
 */
static bool glob_match(const char *pat, const char *str, size_t len)
{
	const char *back_pat = NULL;
	size_t back_str = 0, i = 0;

	for (;;) {
		unsigned char c = i < len ? (unsigned char)str[i] : 0;
		unsigned char d = (unsigned char)*pat++;

		i++;
		switch (d) {
		case '?':
			if (!c)
				return false;
			break;
		case '*':
			if (!*pat)		/* a trailing '*' matches the rest */
				return true;
			back_pat = pat;
			back_str = --i;		/* allow a zero-length match */
			break;
		case '[': {
			bool match = false, inverted = *pat == '!';
			const char *cls = pat + inverted;
			unsigned char a = (unsigned char)*cls++;

			/* spans "a" or "a-b"; a leading ']' is literal */
			do {
				unsigned char b = a;

				if (!a)		/* malformed: '[' is literal */
					goto literal;
				if (cls[0] == '-' && cls[1] != ']') {
					b = (unsigned char)cls[1];
					if (!b)
						goto literal;
					cls += 2;
				}
				match |= a <= c && c <= b;
			} while ((a = (unsigned char)*cls++) != ']');
			if (match == inverted)
				goto backtrack;
			pat = cls;
			break;
		}
		case '\\':
			d = (unsigned char)*pat;
			if (d)
				pat++;
			/* fall through */
		default:
literal:
			if (c == d) {
				if (!d)
					return true;
				break;
			}
backtrack:
			if (!c || !back_pat)
				return false;
			/* retry from the last '*', one byte further on */
			pat = back_pat;
			i = ++back_str;
			break;
		}
	}
}

/* @s holds @slen bytes of string (its NUL, if any, already cut off). */
static bool str_match(const struct filter_insn *in, const char *s, size_t slen)
{
	size_t plen = in->plen;

	switch (in->mtype) {
	case MT_FULL:
		return slen == plen && !memcmp(s, in->pat, plen);
	case MT_FRONT:
		return slen >= plen && !memcmp(s, in->pat, plen);
	case MT_MIDDLE:
		return memmem(s, slen, in->pat, plen) != NULL;
	case MT_END:
		return slen >= plen && !memcmp(s + slen - plen, in->pat, plen);
	default:
		return glob_match(in->pat, s, slen);
	}
}

static int num_compare(const struct filter_insn *in, uint64_t x)
{
	uint64_t v = in->val;

	switch (in->op) {
	case OP_EQ:
		return x == v;
	case OP_NE:
		return x != v;
	case OP_BAND:
		return (x & v) != 0;
	case OP_LT:
		return in->is_signed ? (int64_t)x < (int64_t)v : x < v;
	case OP_LE:
		return in->is_signed ? (int64_t)x <= (int64_t)v : x <= v;
	case OP_GT:
		return in->is_signed ? (int64_t)x > (int64_t)v : x > v;
	default:
		return in->is_signed ? (int64_t)x >= (int64_t)v : x >= v;
	}
}

/*
 * A predicate that cannot look at its data (field beyond the record, a bad
 * __data_loc, a NULL char *, no comm) is false whatever its operator, as
 * the kernel treats a faulting string read.
 */
static int eval_insn(const struct filter_insn *in, const unsigned char *rec,
		     size_t rec_len, const struct uks_filter_ctx *ctx)
{
	const char *s;
	size_t cap;

	switch (in->kind) {
	case PK_NUM: {
		const unsigned char *p = rec + in->offset;
		uint64_t x;

		if ((size_t)in->offset + in->size > rec_len)
			return 0;
		/* typed loads: unaligned-safe and endian-neutral */
		if (in->size == 8) {
			memcpy(&x, p, 8);
		} else if (in->size == 4) {
			uint32_t v;

			memcpy(&v, p, 4);
			x = v;
		} else if (in->size == 2) {
			uint16_t v;

			memcpy(&v, p, 2);
			x = v;
		} else {
			x = *p;
		}
		return num_compare(in, filter_num_extend(x, in->size, in->is_signed));
	}
	case PK_CPU:
		if (!ctx || in->op == OP_BAND)	/* the kernel has no & for CPU */
			return 0;
		return num_compare(in, (uint64_t)(int64_t)ctx->cpu);
	case PK_STATIC:
		if ((size_t)in->offset + in->size > rec_len)
			return 0;
		s = (const char *)rec + in->offset;
		cap = in->size;
		break;
	case PK_DYN: {
		uint32_t loc;

		if ((size_t)in->offset + sizeof(loc) > rec_len)
			return 0;
		memcpy(&loc, rec + in->offset, sizeof(loc));
		cap = uks_data_loc_len(loc);
		if ((size_t)uks_data_loc_offset(loc) + cap > rec_len)
			return 0;
		s = (const char *)rec + uks_data_loc_offset(loc);
		break;
	}
	case PK_PTR:
		if ((size_t)in->offset + sizeof(s) > rec_len)
			return 0;
		memcpy(&s, rec + in->offset, sizeof(s));
		if (!s)
			return 0;
		cap = FILTER_PTR_STR_MAX;
		break;
	default:
		if (!ctx || !ctx->comm)
			return 0;
		s = ctx->comm;
		cap = FILTER_COMM_LEN;
		break;
	}
	return str_match(in, s, strnlen(s, cap)) ^ in->not;
}

/**
 * __uks_trace_filter_match - run a compiled filter against one record
 * @filter:	from __uks_trace_filter_compile(); NULL matches everything
 * @rec:	the record, common header at offset 0
 * @rec_len:	its length; fields beyond it never match
 * @ctx:	CPU and comm for the generic fields (may be NULL)
 *
 * Safe to call concurrently on the same filter; never allocates.
 * Returns true when the record passes (is to be kept).
 */
bool __uks_trace_filter_match(const struct uks_filter *filter, const void *rec,
			      size_t rec_len, const struct uks_filter_ctx *ctx)
{
	unsigned int i = 0, n;

	if (!filter)
		return true;
	n = filter->n;
	while (i < n) {
		const struct filter_insn *in = &filter->insn[i];

		if (eval_insn(in, rec, rec_len, ctx) == in->when)
			i = (unsigned int)in->target;
		else
			i++;
	}
	return i == n;
}

/**
 * __uks_trace_filter_free - free a compiled filter
 * @filter:	from __uks_trace_filter_compile(), or NULL
 */
void __uks_trace_filter_free(struct uks_filter *filter)
{
	uks_kfree(filter);
}
