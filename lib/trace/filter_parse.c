// SPDX-License-Identifier: MIT
/*
 * Event filters: compiling the 5.15 filter language (the language and the
 * program it compiles to are described in filter.c).
 *
 * How it is compiled.  Parsing follows the kernel step by step so that the
 * same input is rejected with the same message at the same position:
 *  1. calc_stack() scans the string once for unbalanced quotes and
 *     parentheses and counts predicates and nesting depth (sizes of the
 *     work arrays);
 *  2. predicate_parse() walks it left to right: '(' pushes the current
 *     inversion on a stack, '!' toggles it, anything else must be a
 *     predicate, which parse_pred() turns into one instruction; after a
 *     predicate only ")", "&&", "||" or the end may follow.
 * Instead of building a tree, each instruction gets a branch: "if the
 * predicate's result equals @when, jump to @target, else fall through".
 * While parsing, ->target links the instructions still waiting for their
 * && or || to be resolved; link_pending() resolves one when the operator's
 * right operand is complete (&& first, as it binds tighter).  Two passes
 * over the finished program then (a) turn a jump onto an instruction that
 * would branch the same way into a jump to that instruction's target, so
 * every jump lands on a predicate that must be evaluated, and (b) fold the
 * '!' inversions into @when.  Jumps only go forward, so matching is one
 * loop over a flat array: no recursion, no allocation, no indirect calls.
 * Index n of an n-instruction program means "keep", n + 1 "drop".
 *
 * Errors carry the kernel's message and the position its parser computes
 * (inside a predicate that is one past the offending byte, as 5.15 passes
 * parse_pred() "ptr - str" after ptr++).  A compiled filter is a single
 * allocation: header, instructions, then the patterns they point at.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include <uks/slab.h>
#include "trace/filter_impl.h"

#define C(a, b) b
static const char *const filter_err_text[] = { FILTER_ERRORS };
#undef C

static const char *const filter_ops[OP_MAX] = { "~", "!=", "==", "<=", "<", ">=", ">", "&" };

/* ---------------------------------------------------------------- ctype */

/* The kernel's ctype is Latin-1: 0xa0 is a space, 0xc0-0xff letters. */
static bool k_isspace(unsigned char c)
{
	return (c >= '\t' && c <= '\r') || c == ' ' || c == 0xa0;
}

static bool k_isdigit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

static bool k_isalnum(unsigned char c)
{
	unsigned char l = c | 0x20;

	if (k_isdigit(c) || (l >= 'a' && l <= 'z' && c < 0x80))
		return true;
	return c >= 0xc0 && c != 0xd7 && c != 0xf7;
}

static int k_hexval(unsigned char c)
{
	if (k_isdigit(c))
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : 16;
}

/*
 * kstrtoll()/kstrtoull() with base 0: 0x hex, leading 0 octal, else
 * decimal; the whole string must be digits; out of range is an error.
 */
static int parse_int(const char *s, bool is_signed, uint64_t *res)
{
	unsigned int base = 10, digits = 0;
	bool neg = is_signed && *s == '-';
	uint64_t v = 0;

	if (neg)
		s++;
	else if (*s == '+')
		s++;
	if (s[0] == '0') {
		base = ((s[1] | 0x20) == 'x' && k_hexval(s[2]) < 16) ? 16 : 8;
		if (base == 16)
			s += 2;
	}
	for (;; s++, digits++) {
		unsigned int d = k_hexval(*s);

		if (d >= base)
			break;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	if (!digits || *s)
		return -EINVAL;
	if (is_signed && v > (uint64_t)INT64_MAX + neg)
		return -ERANGE;
	*res = neg ? -v : v;
	return 0;
}

/* -------------------------------------------------------------- parsing */

struct filter_parser {
	const char *str;		/* the filter text, trailing space cut */
	const struct uks_event_field *fields;
	size_t nr_fields;
	char *pool;			/* pattern storage inside the filter */
	struct uks_filter_error *err;
};

static int parse_error(struct filter_parser *p, int code, int pos, int ret)
{
	p->err->msg = filter_err_text[code];
	p->err->pos = pos;
	return ret;
}

static bool is_string_field(const struct uks_event_field *f)
{
	return f->filter_type == UKS_FILTER_STATIC_STRING ||
	       f->filter_type == UKS_FILTER_DYN_STRING ||
	       f->filter_type == UKS_FILTER_PTR_STRING ||
	       f->filter_type == UKS_FILTER_COMM;
}

/*
 * The event's own fields come before the generic CPU/cpu/COMM/comm ones,
 * as in trace_find_event_field(), whatever order the table has.
 */
static const struct uks_event_field *find_field(const struct filter_parser *p,
						const char *name, size_t len)
{
	const struct uks_event_field *generic = NULL;

	for (size_t i = 0; i < p->nr_fields; i++) {
		const struct uks_event_field *f = &p->fields[i];

		if (strncmp(f->name, name, len) || f->name[len])
			continue;
		if (f->filter_type != UKS_FILTER_CPU && f->filter_type != UKS_FILTER_COMM)
			return f;
		if (!generic)
			generic = f;
	}
	return generic;
}

/*
 * The kernel's filter_parse_regex() for "~": a leading '!' inverts, a
 * pattern starting with a digit is compared whole (MATCH_INDEX), "abc*",
 * "*abc" and "*abc*" become prefix/suffix/substring tests, anything else
 * with * ? [ or \ is a glob.
 */
static void build_regex(struct filter_insn *in, char *pat)
{
	size_t len = strlen(pat);
	int type = MT_FULL;

	if (in->op == OP_GLOB) {
		if (pat[0] == '!') {
			in->not = 1;
			pat++;
			len--;
		}
		if (!k_isdigit((unsigned char)pat[0])) {
			for (size_t i = 0; i < len; i++) {
				if (pat[i] == '*') {
					if (!i) {
						type = MT_END;
					} else if (i == len - 1) {
						type = type == MT_END ? MT_MIDDLE : MT_FRONT;
						pat[i] = 0;
						break;
					} else {
						type = MT_GLOB;
						break;
					}
				} else if (strchr("[?\\", pat[i])) {
					type = MT_GLOB;
					break;
				}
			}
			if (type != MT_GLOB && pat[0] == '*')
				pat++;
		}
	}
	in->mtype = (uint8_t)type;
	in->pat = pat;
	in->plen = (uint16_t)strlen(pat);
}

/*
 * parse_pred - one "field op value" starting at @start
 *
 * Returns the number of bytes consumed or -EINVAL.  Like the kernel, error
 * positions inside a predicate are reported one past their byte offset
 * (its parse_pred() gets "pos" = start + 1).
 */
static int parse_pred(struct filter_parser *p, int start, struct filter_insn *in)
{
	const char *str = p->str + start;
	const struct uks_event_field *field;
	int pos = start + 1, i = 0, s, len, op, target;
	char q;

	while (k_isalnum((unsigned char)str[i]) || str[i] == '_')
		i++;
	/* uks: the kernel returns -1 (EPERM, no message) for a missing name */
	if (!i)
		return parse_error(p, FILT_ERR_FIELD_NOT_FOUND, pos, -EINVAL);
	field = find_field(p, str, (size_t)i);
	if (!field)
		return parse_error(p, FILT_ERR_FIELD_NOT_FOUND, pos + i, -EINVAL);

	while (k_isspace((unsigned char)str[i]))
		i++;
	for (op = 0; op < OP_MAX; op++)
		if (!strncmp(str + i, filter_ops[op], strlen(filter_ops[op])))
			break;
	if (op == OP_MAX)
		return parse_error(p, FILT_ERR_INVALID_OP, pos + i, -EINVAL);
	i += (int)strlen(filter_ops[op]);
	while (k_isspace((unsigned char)str[i]))
		i++;
	s = i;

	target = in->target;	/* the only member set by the caller */
	memset(in, 0, sizeof(*in));
	in->target = target;
	in->op = (uint8_t)op;
	in->offset = field->offset;
	in->size = field->size;
	in->is_signed = field->is_signed;
	q = str[i];

	if (q == '\'' || q == '"') {
		char *pat;

		switch (op) {
		case OP_NE:
			in->not = 1;
			break;
		case OP_GLOB:
		case OP_EQ:
			break;
		default:
			return parse_error(p, FILT_ERR_ILLEGAL_FIELD_OP, pos + i, -EINVAL);
		}
		if (!is_string_field(field))
			return parse_error(p, FILT_ERR_EXPECT_DIGIT, pos + i, -EINVAL);
		for (i++; str[i] && str[i] != q; i++)
			;
		/* calc_stack() already caught this; kept for safety */
		if (!str[i])
			return parse_error(p, FILT_ERR_MISSING_QUOTE, pos + i, -EINVAL);
		s++;
		len = i - s;
		if (len >= MAX_FILTER_STR_VAL)
			return parse_error(p, FILT_ERR_OPERAND_TOO_LONG, pos + i, -EINVAL);

		pat = p->pool;
		memcpy(pat, str + s, (size_t)len);
		pat[len] = 0;
		p->pool += len + 1;
		build_regex(in, pat);

		in->kind = field->filter_type == UKS_FILTER_COMM ? PK_COMM :
			   field->filter_type == UKS_FILTER_STATIC_STRING ? PK_STATIC :
			   field->filter_type == UKS_FILTER_DYN_STRING ? PK_DYN : PK_PTR;
		i++;		/* past the closing quote */
	} else if (k_isdigit((unsigned char)q) || q == '-') {
		char num[FILTER_NUM_BUF];
		uint64_t val;

		if (is_string_field(field))
			return parse_error(p, FILT_ERR_EXPECT_STRING, pos + i, -EINVAL);
		if (op == OP_GLOB)
			return parse_error(p, FILT_ERR_ILLEGAL_FIELD_OP, pos + i, -EINVAL);
		if (str[i] == '-')
			i++;
		while (k_isalnum((unsigned char)str[i]))	/* takes 0xDEADBEEF */
			i++;
		len = i - s;
		if (len >= (int)sizeof(num))
			return parse_error(p, FILT_ERR_OPERAND_TOO_LONG, pos + i, -EINVAL);
		memcpy(num, str + s, (size_t)len);
		num[len] = 0;
		if (parse_int(num, field->is_signed, &val))
			return parse_error(p, FILT_ERR_ILLEGAL_INTVAL, pos + s, -EINVAL);

		if (field->filter_type == UKS_FILTER_CPU) {
			/* the kernel compares "int cpu" with "int cmp = val" */
			in->kind = PK_CPU;
			in->is_signed = 1;
			in->val = (uint64_t)(int64_t)(int32_t)val;
		} else {
			/* uks: the kernel would install no function at all */
			if (field->size != 1 && field->size != 2 &&
			    field->size != 4 && field->size != 8)
				return parse_error(p, FILT_ERR_ILLEGAL_FIELD_OP, pos + s, -EINVAL);
			in->kind = PK_NUM;
			/* the kernel casts the literal to the field's type */
			in->val = filter_num_extend(val, field->size, field->is_signed);
		}
	} else {
		return parse_error(p, FILT_ERR_INVALID_VALUE, pos + i, -EINVAL);
	}
	return i;
}

enum { TOO_MANY_CLOSE = -1, TOO_MANY_OPEN = -2, MISSING_QUOTE = -3 };

/*
 * calc_stack - check quotes and parentheses, size the work arrays
 *
 * Counts the whole expression as one "(E)".  Returns 0 or one of the codes
 * above with *err_pos at the offending byte (for an unclosed '(' the
 * innermost one from the right, or 0 as the kernel's backward scan never
 * looks at byte 0).
 */
static int calc_stack(const char *str, int *parens, int *preds, int *err_pos)
{
	int nr_preds = 0, open = 1, max_open = 1, last_quote = 0, i;
	bool in_pred = false;
	char quote = 0;

	for (i = 0; str[i]; i++) {
		if (k_isspace((unsigned char)str[i]))
			continue;
		if (quote) {
			if (str[i] == quote)
				quote = 0;
			continue;
		}
		switch (str[i]) {
		case '\'':
		case '"':
			quote = str[i];
			last_quote = i;
			break;
		case '|':
		case '&':
			if (str[i + 1] != str[i])
				break;
			in_pred = false;
			continue;
		case '(':
			in_pred = false;
			if (++open > max_open)
				max_open = open;
			continue;
		case ')':
			in_pred = false;
			if (open == 1) {
				*err_pos = i;
				return TOO_MANY_CLOSE;
			}
			open--;
			continue;
		}
		if (!in_pred) {
			nr_preds++;
			in_pred = true;
		}
	}
	if (quote) {
		*err_pos = last_quote;
		return MISSING_QUOTE;
	}
	if (open != 1) {
		int level = open;

		for (i--; i; i--) {
			if (quote) {
				if (str[i] == quote)
					quote = 0;
				continue;
			}
			switch (str[i]) {
			case '(':
				if (level == open) {
					*err_pos = i;
					return TOO_MANY_OPEN;
				}
				level--;
				break;
			case ')':
				level++;
				break;
			case '\'':
			case '"':
				quote = str[i];
				break;
			}
		}
		*err_pos = 0;
		return TOO_MANY_OPEN;
	}
	*parens = max_open;
	*preds = nr_preds;
	return 0;
}

enum { INVERT = 1, PROCESS_AND = 2, PROCESS_OR = 4 };

/*
 * Resolve the pending && or || whose right operand ends at @n: the waiting
 * instruction (linked from prog[n].target) branches to label @n when its
 * result is @when, and prog[n] inherits the rest of the waiting chain.
 */
static void link_pending(struct filter_insn *prog, int n, int when)
{
	int t = prog[n].target;
	int rest = prog[t].target;

	prog[t].when = (uint8_t)when;
	prog[t].target = n;
	prog[n].target = rest;
}

/* Returns the number of instructions or -errno with the error set. */
static int predicate_parse(struct filter_parser *p, struct filter_insn *prog,
			   int nr_preds, int *op_stack, uint8_t *inverts)
{
	const char *str = p->str;
	int *top = op_stack;
	int invert = 0, n = 0, ptr = 0, next, len, i;

	*top = 0;
	while (str[ptr]) {
		next = ptr++;
		if (k_isspace((unsigned char)str[next]))
			continue;
		if (str[next] == '(') {
			*++top = invert;
			continue;
		}
		/* "!=" and "!~" are operators, not "not" */
		if (str[next] == '!' && str[next + 1] != '=' && str[next + 1] != '~') {
			invert = !invert;
			continue;
		}
		/* uks: the kernel fails here with -EPERM and no message */
		if (str[next] == ')')
			return parse_error(p, FILT_ERR_INVALID_FILTER, next, -EINVAL);
		/*
		 * calc_stack() over-counts, and a page of text holds far fewer
		 * than FILTER_MAX_PREDS terms: this is a backstop, not a limit
		 * a valid filter can reach.
		 */
		if (n >= nr_preds || n >= FILTER_MAX_PREDS)
			return parse_error(p, FILT_ERR_TOO_MANY_PREDS, next, -ENOSPC);

		inverts[n] = (uint8_t)invert;
		prog[n].target = n - 1;
		len = parse_pred(p, next, &prog[n]);
		if (len < 0)
			return len;
		ptr = next + len;
		n++;

		for (;;) {
			char c;

			next = ptr++;
			c = str[next];
			if (k_isspace((unsigned char)c))
				continue;
			if (c == '&' || c == '|') {
				if (str[next + 1] != c)	/* only "&&" and "||" */
					return parse_error(p, FILT_ERR_TOO_MANY_PREDS, next, -EINVAL);
				ptr++;
			} else if (c && c != ')') {
				/* the kernel's message for trailing garbage */
				return parse_error(p, FILT_ERR_TOO_MANY_PREDS, next, -EINVAL);
			}

			invert = *top & INVERT;
			if (*top & PROCESS_AND) {	/* && binds first */
				link_pending(prog, n - 1, invert);
				*top &= ~PROCESS_AND;
			}
			if (c == '&') {
				*top |= PROCESS_AND;
				break;
			}
			if (*top & PROCESS_OR) {
				link_pending(prog, n - 1, !invert);
				*top &= ~PROCESS_OR;
			}
			if (c == '|') {
				*top |= PROCESS_OR;
				break;
			}
			if (!c)
				goto done;
			if (top == op_stack)	/* calc_stack() rules this out */
				return parse_error(p, FILT_ERR_TOO_MANY_CLOSE, ptr, -EINVAL);
			top--;			/* ')' */
		}
	}
	/* The text ended where a predicate was due. */
	if (!n)
		return parse_error(p, FILT_ERR_NO_FILTER, ptr, -EINVAL);
	/*
	 * uks: 5.15 accepts "a == 1 &&" (and a dangling '!') as "a == 1";
	 * later kernels reject an incomplete expression, and so do we.
	 */
	return parse_error(p, FILT_ERR_INVALID_FILTER, ptr, -EINVAL);

done:
	if (top != op_stack)
		return parse_error(p, FILT_ERR_TOO_MANY_OPEN, ptr - 1, -EINVAL);

	/* The last predicate: true falls through to "keep", false drops. */
	prog[n - 1].target = n;
	prog[n - 1].when = 0;

	/* A jump onto a branch with the same condition takes that branch. */
	for (i = n - 2; i >= 0; i--) {
		int t = prog[i].target;

		if (prog[i].when == prog[t].when)
			prog[i].target = prog[t].target;
	}
	/*
	 * Fold the inversions in, and turn "label t" (skip t's own branch)
	 * into the index to continue at.
	 */
	for (i = 0; i < n; i++) {
		prog[i].when ^= inverts[i];
		if (prog[i].target <= i)	/* jumps must go forward */
			return parse_error(p, FILT_ERR_ERRNO, 0, -EINVAL);
		prog[i].target++;
	}
	return n;
}

/**
 * __uks_trace_filter_compile - parse @text against an event's fields
 * @text:	the filter string (trailing newline/whitespace allowed)
 * @fields:	every field a filter may name
 * @nr_fields:	number of @fields
 * @out:	the compiled filter on success (NULL otherwise)
 * @err:	message and position on failure (may be NULL)
 *
 * Error positions are the kernel's: byte offsets into @text, some of them
 * one past the offending byte exactly as 5.15 computes them.  Errors that
 * the kernel reports by errno only (empty or overlong text, "()") carry
 * the message "Error" at 0.
 *
 * Returns 0, -EINVAL (parse error), -ENOMEM, or -ENOSPC (too many terms).
 */
int __uks_trace_filter_compile(const char *text, const struct uks_event_field *fields,
			       size_t nr_fields, struct uks_filter **out,
			       struct uks_filter_error *err)
{
	struct uks_filter_error dummy;
	struct filter_parser p;
	struct uks_filter *f;
	int nr_parens, nr_preds, epos, ret, cap;
	size_t len;
	char *buf;
	void *work;

	if (!err)
		err = &dummy;
	err->msg = NULL;
	err->pos = 0;
	if (out)
		*out = NULL;
	p.err = err;
	if (!text || !out || (!fields && nr_fields))
		return parse_error(&p, FILT_ERR_ERRNO, 0, -EINVAL);

	/* The kernel refuses a write of a page or more before parsing it. */
	len = strnlen(text, FILTER_MAX_TEXT);
	if (len >= FILTER_MAX_TEXT)
		return parse_error(&p, FILT_ERR_ERRNO, 0, -EINVAL);
	/* strstrip() cuts trailing space in place; leading space stays. */
	while (len && k_isspace((unsigned char)text[len - 1]))
		len--;

	buf = uks_kmalloc(len + 1);
	if (!buf)
		return parse_error(&p, FILT_ERR_ERRNO, 0, -ENOMEM);
	memcpy(buf, text, len);
	buf[len] = 0;
	p.str = buf;
	p.fields = fields;
	p.nr_fields = nr_fields;

	ret = calc_stack(buf, &nr_parens, &nr_preds, &epos);
	if (ret) {
		ret = parse_error(&p, ret == MISSING_QUOTE ? FILT_ERR_MISSING_QUOTE :
				  ret == TOO_MANY_OPEN ? FILT_ERR_TOO_MANY_OPEN :
				  FILT_ERR_TOO_MANY_CLOSE, epos, -EINVAL);
		goto out_buf;
	}
	if (!nr_preds) {	/* "", "()": the kernel's bare -EINVAL */
		ret = parse_error(&p, FILT_ERR_ERRNO, 0, -EINVAL);
		goto out_buf;
	}

	/* Room for every counted term plus two, as the kernel sizes it. */
	cap = nr_preds + 2;
	f = uks_kmalloc(sizeof(*f) + (size_t)cap * sizeof(f->insn[0]) + len + (size_t)cap + 1);
	work = uks_kmalloc((size_t)(nr_parens + 1) * sizeof(int) + (size_t)cap);
	if (!f || !work) {
		ret = parse_error(&p, FILT_ERR_ERRNO, 0, -ENOMEM);
		goto out_free;
	}
	p.pool = (char *)&f->insn[cap];
	ret = predicate_parse(&p, f->insn, cap, work,
			      (uint8_t *)work + (size_t)(nr_parens + 1) * sizeof(int));
	if (ret < 0)
		goto out_free;
	f->n = (unsigned int)ret;
	*out = f;
	f = NULL;
	ret = 0;
	err->msg = NULL;
	err->pos = 0;
out_free:
	uks_kfree(work);
	uks_kfree(f);
out_buf:
	uks_kfree(buf);
	return ret;
}
