// SPDX-License-Identifier: MIT
/*
 * Event-probe fetch arguments: the part of the kernel's trace_probe.c and
 * trace_eprobe.c (Linux 5.15) that turns "NAME=FETCHARG[:TYPE]" words into
 * fields of the probe record, fills them from an attached record and prints
 * them.  This file owns the words (names, types, arrays, bitfields), the
 * record layout, the format-file view and printing; probe_fetch.c owns
 * FETCHARG itself: where a value comes from and how it is read.
 *
 * Design.  The kernel compiles each argument into a little fetch_insn
 * program (load, dereference*, store, modify, loop).  For event probes the
 * program always has the same shape, so an argument here is a flat
 * description instead: a compiled FETCHARG (probe_fetch.c: a base and its
 * dereferences), a type, a bitfield and an array count.  The kernel's
 * limits on nesting are kept by counting the instruction slots the kernel
 * program would use (pa_check_slots), so the same words are rejected with
 * the same messages at the same carets.
 *
 * Everything else an argument needs (name, listing text, the format-file
 * type text) has a bounded size (names are at most 32 bytes and bodies 63
 * in the kernel), so it lives inline; parsing allocates, fetching never.
 *
 * Record layout (5.15): [common header 8][u32 __probe_type][args packed
 * without alignment, in order][dynamic data].  Strings are 4-byte
 * __data_loc words (len << 16 | offset from the record start), their text
 * appended after the fixed part.
 *
 * Semantics chosen where 5.15 was broken for eprobes (see EPROBES.md):
 * "$NAME" is looked up in the attached event first, then $comm/$COMM mean
 * the writer's comm (6.0, "tracing/eprobes: Have event probes be consistent
 * with kprobes and uprobes"); a string or ustring of a field that already
 * is a string (char[N], __data_loc) is copied from the record (6.0,
 * "tracing/eprobes: Fix reading of string fields"); registers, the stack,
 * $retval (unless the event has such a field), @addr, @sym and the symbol
 * type are rejected.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/probe_arg.h"
#include "trace/probe_fetch.h"

/* Limits of trace_probe.h (MAX_TRACE_ARGS, MAX_ARG_NAME_LEN, ...). */
#define PA_MAX_ARGS	128
#define PA_MAX_NAME	32
#define PA_MAX_BODY	63		/* MAX_ARGSTR_LEN */
#define PA_MAX_ARRAY	64
#define PA_INSN_MAX	16		/* FETCH_INSN_MAX */

enum pa_print { PA_UNS, PA_SIG, PA_HEX, PA_STR };

/* struct fetch_type */
struct pa_type {
	const char *name;
	const char *fmttype;	/* the type the format file shows */
	const char *fmt;	/* the print fmt conversion */
	unsigned int size;
	bool is_signed;
	enum pa_print print;
};

/* One compiled argument. */
struct pa_arg {
	const struct pa_type *type;
	struct pa_fetch *fetch;		/* where the value comes from */
	bool bitfield;
	uint8_t lshift, rshift;
	unsigned int count;		/* array length, 0: scalar */
	unsigned int offset, size;	/* in the probe record */
	char name[PA_MAX_NAME + 1];
	char text[PA_MAX_NAME + 1 + PA_MAX_BODY + 1];
	char fmttype[32];		/* "u8[64]", "__data_loc char[][64]" */
};

struct uks_probe_args {
	int nr;
	int cap;			/* args[] allocated, for cleanup */
	unsigned int base;
	size_t fixed_size;
	bool has_strings;		/* any string argument: records vary in size */
	struct uks_event_field *fields;	/* nr of them, after args[] */
	struct pa_arg args[];
};

/* The kernel's ERRORS texts (trace_probe.h); FETCHARG's are in probe_fetch.c. */
#define E_TOO_MANY_OPS		"Dereference is too much nested"
#define E_BAD_FETCH_ARG		"Invalid fetch argument"
#define E_ARRAY_NO_CLOSE	"Array is not closed"
#define E_BAD_ARRAY_SUFFIX	"Array has wrong suffix"
#define E_BAD_ARRAY_NUM		"Invalid array size"
#define E_ARRAY_TOO_BIG		"Array number is too big"
#define E_BAD_TYPE		"Unknown type is specified"
#define E_BAD_STRING		"String accepts only memory argument"
#define E_BAD_BITFIELD		"Invalid bitfield"
#define E_ARG_NAME_TOO_LONG	"Argument name is too long"
#define E_NO_ARG_NAME		"Argument name is not specified"
#define E_BAD_ARG_NAME		"Argument name must follow the same rules as C identifiers"
#define E_USED_ARG_NAME		"This argument name is already used"
#define E_ARG_TOO_LONG		"Argument expression is too long"
#define E_NO_ARG_BODY		"No argument expression"
/* Later kernels' texts, for cases 5.15 rejected silently or not at all. */
#define E_NEED_STRING_TYPE	"$comm and immediate-string only accepts string type"
#define E_TOO_MANY_ARGS		"Too many arguments are specified"
/* Ours: there is no kallsyms to resolve against in user space. */
#define E_NO_SYMBOL_TYPE	"The symbol type is not available in user space"

/*
 * The fetch types (probe_fetch_types[]).  x* are aliases shown with their
 * u* name in the format file; strings are a 4-byte __data_loc.
 */
static const struct pa_type pa_types[] = {
	{ "string",  "__data_loc char[]", "\\\"%s\\\"", 4, true,  PA_STR },
	{ "ustring", "__data_loc char[]", "\\\"%s\\\"", 4, true,  PA_STR },
	{ "u8",  "u8",  "%u",    1, false, PA_UNS },
	{ "u16", "u16", "%u",    2, false, PA_UNS },
	{ "u32", "u32", "%u",    4, false, PA_UNS },
	{ "u64", "u64", "%Lu",   8, false, PA_UNS },
	{ "s8",  "s8",  "%d",    1, true,  PA_SIG },
	{ "s16", "s16", "%d",    2, true,  PA_SIG },
	{ "s32", "s32", "%d",    4, true,  PA_SIG },
	{ "s64", "s64", "%Ld",   8, true,  PA_SIG },
	{ "x8",  "u8",  "0x%x",  1, false, PA_HEX },
	{ "x16", "u16", "0x%x",  2, false, PA_HEX },
	{ "x32", "u32", "0x%x",  4, false, PA_HEX },
	{ "x64", "u64", "0x%Lx", 8, false, PA_HEX },
};

/* Field names a probe argument may not take (reserved_field_names). */
static const char *const pa_reserved[] = {
	"common_type", "common_flags", "common_preempt_count", "common_pid",
	"common_tgid", "__probe_ip", "__probe_ret_ip", "__probe_func",
	/* ours: the eprobe record really has this field at offset 8 */
	"__probe_type",
};

struct pa_parse {
	const struct uks_event_field *fields;
	size_t nr_fields;
	struct pa_arg *a;
	struct uks_probe_error *err;
};

static int pa_fail(struct pa_parse *p, int ret, const char *msg, int offset)
{
	p->err->msg = msg;
	p->err->offset = offset;
	return ret;
}

static const struct pa_type *pa_type_named(const char *name)
{
	for (size_t i = 0; i < sizeof(pa_types) / sizeof(pa_types[0]); i++)
		if (!strcmp(pa_types[i].name, name))
			return &pa_types[i];
	return NULL;
}

static bool pa_good_name(const char *s)
{
	if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_'))
		return false;
	for (s++; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_'))
			return false;
	return true;
}

/* "b<width>@<offset>/<container>" (__parse_bitfield_probe_arg). */
static bool pa_parse_bitfield(struct pa_arg *a, const char *bf)
{
	unsigned int bits = a->type->size * 8;
	uint64_t bw = 0, bo = 0;
	size_t n;

	n = __uks_probe_parse_ulong(bf + 1, &bw);
	if (!bw || bf[1 + n] != '@')
		return false;
	bf += 2 + n;
	n = __uks_probe_parse_ulong(bf, &bo);
	/* Each bound alone first, so a huge width cannot wrap the sum. */
	if (!n || bf[n] != '/' || bw > bits || bo > bits || bw + bo > bits)
		return false;
	a->bitfield = true;
	a->lshift = (uint8_t)(bits - (bw + bo));
	a->rshift = (uint8_t)(bits - bw);
	return true;
}

/* find_fetch_type(): a bitfield's type is its container's unsigned type. */
static const struct pa_type *pa_find_type(const char *t)
{
	uint64_t bs;

	if (*t != 'b')
		return pa_type_named(t);
	t = strchr(t, '/');
	if (!t || !__uks_probe_kstrtoul(t + 1, &bs))
		return NULL;
	switch (bs) {
	case 8:  return pa_type_named("u8");
	case 16: return pa_type_named("u16");
	case 32: return pa_type_named("u32");
	case 64: return pa_type_named("u64");
	}
	return NULL;
}

/*
 * The kernel program has FETCH_INSN_MAX (16) slots, the last one END:
 * load at 0, dereferences after it; a string without a dereference, an
 * array of strings, a bitfield and an array loop each take one more.
 * Reproduce its checks so the limits and messages are the same.
 */
static int pa_check_slots(struct pa_parse *p, int offset, int toffs, bool string)
{
	struct pa_arg *a = p->a;
	int depth = __uks_probe_fetch_depth(a->fetch), last = depth;

	if (string ? (!depth || a->count) : !depth)
		last++;
	if (last >= PA_INSN_MAX - 1)
		return pa_fail(p, -EINVAL, E_TOO_MANY_OPS, offset);
	if (a->bitfield && ++last >= PA_INSN_MAX - 1)
		return pa_fail(p, -EINVAL, E_BAD_BITFIELD, toffs);
	if (a->count) {
		/* Arrays are read from memory: only a dereference can loop. */
		if (!depth)
			return pa_fail(p, -EINVAL, E_BAD_STRING, toffs);
		if (++last >= PA_INSN_MAX - 1)
			return pa_fail(p, -EINVAL, E_TOO_MANY_OPS, offset);
	}
	return 0;
}

/* traceprobe_parse_probe_arg_body(): @offset is where @body is in the word. */
static int pa_parse_body(struct pa_parse *p, const char *body, int offset)
{
	struct pa_arg *a = p->a;
	char buf[PA_MAX_BODY + 1];
	char *t = NULL, *t2, *t3;
	size_t len = strlen(body);
	int toffs, ret;
	bool bitfield;

	if (len > PA_MAX_BODY)
		return pa_fail(p, -EINVAL, E_ARG_TOO_LONG, offset);
	if (!len)
		return pa_fail(p, -EINVAL, E_NO_ARG_BODY, offset);
	memcpy(buf, body, len + 1);
	t = strchr(buf, ':');
	if (t) {
		*t++ = '\0';
		t2 = strchr(t, '[');
		if (t2) {
			uint64_t n;

			*t2++ = '\0';
			t3 = strchr(t2, ']');
			if (!t3)
				return pa_fail(p, -EINVAL, E_ARRAY_NO_CLOSE,
					       offset + (int)(t2 + strlen(t2) - buf));
			if (t3[1])
				return pa_fail(p, -EINVAL, E_BAD_ARRAY_SUFFIX,
					       offset + (int)(t3 + 1 - buf));
			*t3 = '\0';
			if (!__uks_probe_kstrtoul(t2, &n) || !n || n > UINT32_MAX)
				return pa_fail(p, -EINVAL, E_BAD_ARRAY_NUM,
					       offset + (int)(t2 - buf));
			if (n > PA_MAX_ARRAY)
				return pa_fail(p, -EINVAL, E_ARRAY_TOO_BIG,
					       offset + (int)(t2 - buf));
			a->count = (unsigned int)n;
		}
	}
	toffs = offset + (t ? (int)(t - buf) : 0);
	/* An immediate string is a string, and only one (5.15 and later). */
	if (!strncmp(buf, "\\\"", 2) && (a->count || (t && strcmp(t, "string"))))
		return pa_fail(p, -EINVAL, E_NEED_STRING_TYPE, toffs);
	if (t && !strcmp(t, "symbol"))
		return pa_fail(p, -EINVAL, E_NO_SYMBOL_TYPE, toffs);
	a->type = pa_find_type(t ? t : "x64");	/* DEFAULT_FETCH_TYPE, 64-bit */
	if (!a->type)
		return pa_fail(p, -EINVAL, E_BAD_TYPE, toffs);
	bitfield = t && *t == 'b';

	ret = __uks_probe_fetch_parse(buf, offset, p->fields, p->nr_fields, &a->fetch,
				      &p->err->msg, &p->err->offset);
	if (ret)
		return ret;
	/*
	 * The writer's comm and immediate strings are text: untyped they are
	 * strings (as 5.15 for kprobes), any other type is refused with the
	 * kernel's later message; 6.0 eprobes would store the kernel address
	 * of current->comm as a number, which means nothing here.
	 */
	if (__uks_probe_fetch_is_text(a->fetch)) {
		if (!t)
			a->type = pa_type_named("string");
		else if (a->count || a->type->print != PA_STR)
			return pa_fail(p, -EINVAL, E_NEED_STRING_TYPE, toffs);
	}
	if (bitfield && !pa_parse_bitfield(a, t))
		return pa_fail(p, -EINVAL, E_BAD_BITFIELD, toffs);
	ret = pa_check_slots(p, offset, toffs, a->type->print == PA_STR);
	if (ret)
		return ret;
	__uks_probe_fetch_shape(a->fetch, a->type->size, a->type->print == PA_STR, a->count,
				a->bitfield ? a->lshift : -1, a->bitfield ? a->rshift : -1);
	return 0;
}

/* traceprobe_parse_probe_arg(): the name part, then the body. */
static int pa_parse_word(struct pa_parse *p, struct uks_probe_args *pa, int i,
			 const char *word)
{
	struct pa_arg *a = p->a;
	const char *eq = strchr(word, '=');
	const char *body = word;

	if (eq) {
		if (eq - word > PA_MAX_NAME)
			return pa_fail(p, -EINVAL, E_ARG_NAME_TOO_LONG, 0);
		if (eq == word)
			return pa_fail(p, -EINVAL, E_NO_ARG_NAME, 0);
		memcpy(a->name, word, (size_t)(eq - word));
		a->name[eq - word] = '\0';
		body = eq + 1;
	} else {
		snprintf(a->name, sizeof(a->name), "arg%d", i + 1);
	}
	if (!pa_good_name(a->name))
		return pa_fail(p, -EINVAL, E_BAD_ARG_NAME, 0);
	for (size_t r = 0; r < sizeof(pa_reserved) / sizeof(pa_reserved[0]); r++)
		if (!strcmp(pa_reserved[r], a->name))
			return pa_fail(p, -EINVAL, E_USED_ARG_NAME, 0);
	for (int j = 0; j < i; j++)
		if (!strcmp(pa->args[j].name, a->name))
			return pa_fail(p, -EINVAL, E_USED_ARG_NAME, 0);
	if (strlen(body) <= PA_MAX_BODY)
		snprintf(a->text, sizeof(a->text), "%s=%s", a->name, body);
	return pa_parse_body(p, body, (int)(body - word));
}

/**
 * __uks_trace_probe_args_parse - compile the fetch arguments of an event probe
 *
 * See probe_arg.h.  Arguments are laid out in order from @base, packed;
 * the field table for the format file is built here too so that readers
 * of the format never allocate.
 */
int __uks_trace_probe_args_parse(int argc, const char *const *argv,
				 const struct uks_event_field *fields, size_t nr_fields,
				 unsigned int base, struct uks_probe_args **out,
				 struct uks_probe_error *err)
{
	struct uks_probe_error dummy;
	struct uks_probe_args *pa;
	struct pa_parse p;
	size_t off = base;

	if (!err)
		err = &dummy;
	err->msg = NULL;
	err->arg = -1;
	err->offset = 0;
	if (!out || argc < 0 || (argc && !argv) || (nr_fields && !fields)) {
		err->msg = E_BAD_FETCH_ARG;
		return -EINVAL;
	}
	*out = NULL;
	if (argc > PA_MAX_ARGS) {
		err->msg = E_TOO_MANY_ARGS;
		return -E2BIG;
	}
	pa = uks_kzalloc(sizeof(*pa) + (size_t)argc * (sizeof(pa->args[0]) + sizeof(pa->fields[0])));
	if (!pa)
		return -ENOMEM;
	pa->fields = (struct uks_event_field *)&pa->args[argc];
	pa->cap = argc;
	pa->base = base;
	p.fields = fields;
	p.nr_fields = nr_fields;
	p.err = err;
	for (int i = 0; i < argc; i++) {
		struct pa_arg *a = &pa->args[i];
		struct uks_event_field *f = &pa->fields[i];
		int ret;

		p.a = a;
		ret = argv[i] ? pa_parse_word(&p, pa, i, argv[i])
			      : pa_fail(&p, -EINVAL, E_NO_ARG_BODY, 0);
		if (ret) {
			err->arg = i;
			__uks_trace_probe_args_free(pa);
			return ret;
		}
		a->offset = (unsigned int)off;
		a->size = a->type->size * (a->count ? a->count : 1);
		off += a->size;
		if (a->count)
			snprintf(a->fmttype, sizeof(a->fmttype), "%s[%u]",
				 a->type->fmttype, a->count);
		else
			snprintf(a->fmttype, sizeof(a->fmttype), "%s", a->type->fmttype);
		f->type = a->fmttype;
		f->name = a->name;
		f->offset = a->offset;
		f->size = a->size;
		f->is_signed = a->type->is_signed;
		/* trace_define_field() classifies "__data_loc char[]" this way. */
		f->filter_type = a->type->print == PA_STR && !a->count ?
				 UKS_FILTER_DYN_STRING : UKS_FILTER_OTHER;
		pa->has_strings |= a->type->print == PA_STR;
		pa->nr++;
	}
	pa->fixed_size = off;
	*out = pa;
	return 0;
}

/** __uks_trace_probe_args_free - release what __uks_trace_probe_args_parse() made (NULL ok) */
void __uks_trace_probe_args_free(struct uks_probe_args *pa)
{
	if (!pa)
		return;
	for (int i = 0; i < pa->cap; i++)
		__uks_probe_fetch_free(pa->args[i].fetch);
	uks_kfree(pa);
}

/** __uks_trace_probe_args_fields - the argument fields (no common or __probe_type) */
const struct uks_event_field *__uks_trace_probe_args_fields(const struct uks_probe_args *pa,
							    size_t *nr)
{
	if (nr)
		*nr = pa ? (size_t)pa->nr : 0;
	return pa ? pa->fields : NULL;
}

/** __uks_trace_probe_args_fixed_size - @base plus the packed argument words */
size_t __uks_trace_probe_args_fixed_size(const struct uks_probe_args *pa)
{
	return pa ? pa->fixed_size : 0;
}

/**
 * __uks_trace_probe_args_read_memory - does storing these arguments read the writer's memory?
 *
 * True when an argument dereferences, or is a string read from the
 * address a field holds (not $comm or an immediate string).
 */
bool __uks_trace_probe_args_read_memory(const struct uks_probe_args *pa)
{
	for (int i = 0; pa && i < pa->nr; i++) {
		const struct pa_arg *a = &pa->args[i];

		if (__uks_probe_fetch_depth(a->fetch) ||
		    (a->type->print == PA_STR && !__uks_probe_fetch_is_text(a->fetch)))
			return true;
	}
	return false;
}

/** __uks_trace_probe_args_count - number of compiled arguments */
int __uks_trace_probe_args_count(const struct uks_probe_args *pa)
{
	return pa ? pa->nr : 0;
}

/**
 * __uks_trace_probe_args_text - "name=FETCHARG[:TYPE]" of argument @i, as the
 * dynamic_events listing prints it (" %s=%s" of name and body), with the
 * default name filled in.  NULL when @i is out of range.
 */
const char *__uks_trace_probe_args_text(const struct uks_probe_args *pa, int i)
{
	if (!pa || i < 0 || i >= pa->nr)
		return NULL;
	return pa->args[i].text;
}

/**
 * __uks_trace_probe_args_print_fmt - the event's print fmt (__set_print_fmt with
 * PROBE_PRINT_EVENT): "(%u)" for __probe_type, each argument's type format,
 * arrays as {f,f}, then the REC-> / __get_str() list.
 */
void __uks_trace_probe_args_print_fmt(const struct uks_probe_args *pa, struct uks_seq *s)
{
	int n = pa ? pa->nr : 0;

	seq_puts(s, "\"(%u)");
	for (int i = 0; i < n; i++) {
		const struct pa_arg *a = &pa->args[i];

		seq_printf(s, " %s=", a->name);
		if (!a->count) {
			seq_puts(s, a->type->fmt);
			continue;
		}
		seq_putc(s, '{');
		for (unsigned int j = 0; j < a->count; j++) {
			if (j)
				seq_putc(s, ',');
			seq_puts(s, a->type->fmt);
		}
		seq_putc(s, '}');
	}
	seq_puts(s, "\", REC->__probe_type");
	for (int i = 0; i < n; i++) {
		const struct pa_arg *a = &pa->args[i];
		bool str = a->type->print == PA_STR;

		if (!a->count) {
			seq_printf(s, str ? ", __get_str(%s)" : ", REC->%s", a->name);
			continue;
		}
		for (unsigned int j = 0; j < a->count; j++)
			seq_printf(s, str ? ", __get_str(%s[%u])" : ", REC->%s[%u]",
				   a->name, j);
	}
}

/* One value of @type at @p (print_type_*); strings need the record. */
static void pa_print_one(const struct pa_type *type, const uint8_t *rec, size_t rec_len,
			 size_t off, struct uks_seq *s)
{
	uint64_t v;

	if (off > rec_len || rec_len - off < type->size) {
		seq_puts(s, "(fault)");
		return;
	}
	if (type->print == PA_STR) {
		uint32_t loc;
		unsigned int doff, dlen;

		memcpy(&loc, rec + off, 4);
		doff = uks_data_loc_offset(loc);
		dlen = uks_data_loc_len(loc);
		/* A zero-length location is how 5.15 records a fault. */
		if (!dlen || doff > rec_len || rec_len - doff < dlen) {
			seq_puts(s, "(fault)");
			return;
		}
		seq_putc(s, '"');
		seq_putmem(s, rec + doff, strnlen((const char *)rec + doff, dlen));
		seq_putc(s, '"');
		return;
	}
	switch (type->size) {
	case 1: v = rec[off]; break;
	case 2: { uint16_t h; memcpy(&h, rec + off, 2); v = h; break; }
	case 4: { uint32_t w; memcpy(&w, rec + off, 4); v = w; break; }
	default: memcpy(&v, rec + off, 8); break;
	}
	switch (type->print) {
	case PA_UNS:
		seq_printf(s, "%llu", (unsigned long long)v);
		break;
	case PA_HEX:
		seq_printf(s, "0x%llx", (unsigned long long)v);
		break;
	default:	/* PA_SIG: sign-extend from the stored width */
		if (type->size < 8 && (v >> (type->size * 8 - 1)) & 1)
			v |= ~0ULL << (type->size * 8);
		seq_printf(s, "%lld", (long long)v);
		break;
	}
}

/**
 * __uks_trace_probe_args_print - " name=value" for each argument (print_probe_args):
 * arrays as {a,b}, strings quoted, failed strings as (fault).
 */
void __uks_trace_probe_args_print(const struct uks_probe_args *pa, const void *rec,
				  size_t rec_len, struct uks_seq *s)
{
	if (!pa || !rec)
		return;
	for (int i = 0; i < pa->nr; i++) {
		const struct pa_arg *a = &pa->args[i];

		seq_printf(s, " %s=", a->name);
		if (!a->count) {
			pa_print_one(a->type, rec, rec_len, a->offset, s);
			continue;
		}
		seq_putc(s, '{');
		for (unsigned int j = 0; j < a->count; j++) {
			pa_print_one(a->type, rec, rec_len, a->offset + j * a->type->size, s);
			seq_putc(s, j == a->count - 1 ? '}' : ',');
		}
	}
}

/** __uks_trace_probe_args_dynamic_size - string bytes a record of @src needs */
size_t __uks_trace_probe_args_dynamic_size(const struct uks_probe_args *pa, const void *src,
					   size_t src_len, pid_t pid)
{
	size_t total = 0;

	if (!pa || !pa->has_strings)
		return 0;
	for (int i = 0; i < pa->nr; i++)
		total += __uks_probe_fetch_size(pa->args[i].fetch, src, src_len, pid);
	return total;
}

/**
 * __uks_trace_probe_args_store - fill the argument words and string data of @dst
 *
 * store_trace_args() for an eprobe: the argument words are cleared, then
 * each argument stores its value (probe_fetch.c), strings being appended
 * after the fixed part.  A @dst shorter than the fixed part is left alone.
 */
void __uks_trace_probe_args_store(const struct uks_probe_args *pa, const void *src,
				  size_t src_len, pid_t pid, void *dst, size_t dst_len)
{
	uint8_t *rec = dst;
	size_t dyn;

	if (!pa || !rec || dst_len < pa->fixed_size)
		return;
	dyn = pa->fixed_size;
	memset(rec + pa->base, 0, pa->fixed_size - pa->base);
	for (int i = 0; i < pa->nr; i++)
		__uks_probe_fetch_store(pa->args[i].fetch, src, src_len, pid, rec, dst_len,
					pa->args[i].offset, &dyn);
}
