// SPDX-License-Identifier: MIT
/*
 * A strict JSON reader (RFC 8259) for damo's json record files: the text
 * into a flat token array (json.h), nothing else.
 *
 * Hand-written rather than a library: damo's records need no more than
 * this, and a reader of our own is bounded the way every uks parser is.
 * Strict: one value and white space only, no trailing commas, no
 * comments, no NaN/Infinity, no control bytes in strings, escapes as the
 * RFC lists them.  Bounded: nesting to JSON_MAX_DEPTH (recursion is that
 * deep at most), text to JSON_MAX_TEXT, tokens to one per byte (each is
 * checked with __uks_mem_may_allocate before the array grows).  A failure
 * leaves the offset and the reason in the document.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "core/mem_avail.h"
#include "damon/record/json.h"

struct jp {
	struct json_doc *d;
	const char *s;
	size_t len;
	size_t pos;
};

static int fail(struct jp *p, size_t at, const char *why)
{
	p->d->err_at = (uint32_t)at;
	p->d->err = why;
	return -EINVAL;
}

static void skip_ws(struct jp *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				   p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int new_tok(struct jp *p, enum json_type type, uint32_t *idx)
{
	struct json_doc *d = p->d;

	if (d->nr == d->cap) {
		uint32_t ncap = d->cap ? 2 * d->cap : 256;
		void *n;

		if (ncap > p->len + 1)	/* at most one token per byte */
			ncap = (uint32_t)p->len + 1;
		if (ncap <= d->cap || __uks_mem_may_allocate_array(ncap, sizeof(*d->toks)))
			return -ENOMEM;
		n = uks_krealloc(d->toks, (size_t)ncap * sizeof(*d->toks));
		if (!n)
			return -ENOMEM;
		d->toks = n;
		d->cap = ncap;
	}
	*idx = d->nr++;
	d->toks[*idx] = (struct json_tok){ .type = type, .start = (uint32_t)p->pos };
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static int hex4(const char *s)
{
	int v = 0;

	for (int i = 0; i < 4; i++) {
		char c = s[i];

		v <<= 4;
		if (is_digit(c))
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static int parse_string(struct jp *p, uint32_t *idx)
{
	size_t at = p->pos;
	struct json_tok *t;
	bool esc = false;
	int ret;

	p->pos++;	/* the quote */
	ret = new_tok(p, JSON_STRING, idx);
	if (ret)
		return ret;
	while (p->pos < p->len) {
		unsigned char c = (unsigned char)p->s[p->pos];

		if (c == '"') {
			t = &p->d->toks[*idx];
			t->len = (uint32_t)(p->pos - t->start);
			t->escaped = esc;
			t->next = *idx + 1;
			p->pos++;
			return 0;
		}
		if (c < 0x20)
			return fail(p, p->pos, "a control character in a string");
		if (c == '\\') {
			esc = true;
			if (p->pos + 1 >= p->len)
				break;
			c = (unsigned char)p->s[p->pos + 1];
			if (c == 'u') {
				if (p->len - p->pos < 6 || hex4(p->s + p->pos + 2) < 0)
					return fail(p, p->pos, "a bad \\u escape");
				p->pos += 6;
				continue;
			}
			if (!strchr("\"\\/bfnrt", c) || !c)
				return fail(p, p->pos, "a bad escape");
			p->pos += 2;
			continue;
		}
		p->pos++;
	}
	return fail(p, at, "a string cut short");
}

static int parse_number(struct jp *p, uint32_t *idx)
{
	size_t at = p->pos, i = p->pos;
	const char *s = p->s;
	int ret;

	if (i < p->len && s[i] == '-')
		i++;
	if (i >= p->len || !is_digit(s[i]))
		return fail(p, at, "a bad number");
	if (s[i] == '0')
		i++;
	else
		while (i < p->len && is_digit(s[i]))
			i++;
	if (i < p->len && s[i] == '.') {
		if (++i >= p->len || !is_digit(s[i]))
			return fail(p, at, "a bad number");
		while (i < p->len && is_digit(s[i]))
			i++;
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= p->len || !is_digit(s[i]))
			return fail(p, at, "a bad number");
		while (i < p->len && is_digit(s[i]))
			i++;
	}
	ret = new_tok(p, JSON_NUMBER, idx);
	if (ret)
		return ret;
	p->d->toks[*idx].len = (uint32_t)(i - at);
	p->d->toks[*idx].next = *idx + 1;
	p->pos = i;
	return 0;
}

static int parse_value(struct jp *p, unsigned int depth, uint32_t *idx);

/* An array or an object, p->pos at its bracket. */
static int parse_container(struct jp *p, unsigned int depth, uint32_t *idx)
{
	bool obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	uint32_t n = 0, kid;
	size_t at = p->pos;
	int ret;

	if (depth >= JSON_MAX_DEPTH)
		return fail(p, at, "nested too deep");
	ret = new_tok(p, obj ? JSON_OBJECT : JSON_ARRAY, idx);
	if (ret)
		return ret;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		goto done;
	}
	for (;;) {
		skip_ws(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p, p->pos, "an object member without a string key");
			ret = parse_string(p, &kid);
			if (ret)
				return ret;
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fail(p, p->pos, "a key without ':'");
			p->pos++;
		}
		ret = parse_value(p, depth + 1, &kid);
		if (ret)
			return ret;
		n++;
		skip_ws(p);
		if (p->pos >= p->len)
			return fail(p, at, obj ? "an object cut short" : "an array cut short");
		if (p->s[p->pos] == close) {
			p->pos++;
			break;
		}
		if (p->s[p->pos] != ',')
			return fail(p, p->pos, "a missing ','");
		p->pos++;
	}
done:
	p->d->toks[*idx].n = n;
	p->d->toks[*idx].len = (uint32_t)(p->pos - at);
	p->d->toks[*idx].next = p->d->nr;
	return 0;
}

static int parse_literal(struct jp *p, const char *word, enum json_type type, uint32_t *idx)
{
	size_t n = strlen(word);
	int ret;

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n))
		return fail(p, p->pos, "an unexpected character");
	ret = new_tok(p, type, idx);
	if (ret)
		return ret;
	p->d->toks[*idx].len = (uint32_t)n;
	p->d->toks[*idx].next = *idx + 1;
	p->pos += n;
	return 0;
}

static int parse_value(struct jp *p, unsigned int depth, uint32_t *idx)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return fail(p, p->pos, "a value missing at the end");
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		return parse_container(p, depth, idx);
	case '"':
		return parse_string(p, idx);
	case 't':
		return parse_literal(p, "true", JSON_TRUE, idx);
	case 'f':
		return parse_literal(p, "false", JSON_FALSE, idx);
	case 'n':
		return parse_literal(p, "null", JSON_NULL, idx);
	default:
		return parse_number(p, idx);
	}
}

/**
 * __uks_damon_json_parse - tokenize JSON text
 * @d:		the document (freed with __uks_damon_json_free(), also on error)
 * @text:	the text (need not be NUL-terminated)
 * @len:	its length
 *
 * Return: 0, -EINVAL (not JSON: @d->err and @d->err_at say why and where),
 * -ENOMEM (also for text past JSON_MAX_TEXT).
 */
int __uks_damon_json_parse(struct json_doc *d, const char *text, size_t len)
{
	struct jp p = { d, text, len, 0 };
	uint32_t root;
	int ret;

	*d = (struct json_doc){ .text = text, .len = len };
	if (len > JSON_MAX_TEXT) {
		d->err = "larger than the JSON reader takes";
		return -ENOMEM;
	}
	ret = parse_value(&p, 0, &root);
	if (ret)
		return ret;
	skip_ws(&p);
	if (p.pos < len)
		return fail(&p, p.pos, "more after the JSON value");
	return 0;
}

void __uks_damon_json_free(struct json_doc *d)
{
	uks_kfree(d->toks);
	d->toks = NULL;
	d->nr = d->cap = 0;
}

static int put_utf8(char *buf, size_t cap, size_t *o, unsigned int cp)
{
	unsigned char tmp[4];
	size_t n;

	if (cp < 0x80) {
		tmp[0] = (unsigned char)cp;
		n = 1;
	} else if (cp < 0x800) {
		tmp[0] = (unsigned char)(0xc0 | (cp >> 6));
		tmp[1] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 2;
	} else {
		tmp[0] = (unsigned char)(0xe0 | (cp >> 12));
		tmp[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[2] = (unsigned char)(0x80 | (cp & 0x3f));
		n = 3;
	}
	if (*o + n >= cap)
		return -EINVAL;
	memcpy(buf + *o, tmp, n);
	*o += n;
	return 0;
}

int __uks_damon_json_str(const struct json_doc *d, uint32_t t, char *buf, size_t cap)
{
	const struct json_tok *k = &d->toks[t];
	const char *s = d->text + k->start;
	size_t o = 0;

	if (k->type != JSON_STRING || !cap)
		return -EINVAL;
	for (uint32_t i = 0; i < k->len; i++) {
		char c = s[i];

		if (c == '\\') {
			/* the tokenizer checked every escape */
			c = s[++i];
			if (c == 'u') {
				if (put_utf8(buf, cap, &o, (unsigned int)hex4(s + i + 1)))
					return -EINVAL;
				i += 4;
				continue;
			}
			c = c == 'b' ? '\b' : c == 'f' ? '\f' : c == 'n' ? '\n' :
			    c == 'r' ? '\r' : c == 't' ? '\t' : c;
		}
		if (o + 1 >= cap)
			return -EINVAL;
		buf[o++] = c;
	}
	buf[o] = '\0';
	return 0;
}

uint32_t __uks_damon_json_get(const struct json_doc *d, uint32_t obj, const char *key)
{
	const struct json_tok *o = &d->toks[obj];
	size_t klen = strlen(key);
	uint32_t k = obj + 1;
	char buf[64];

	if (o->type != JSON_OBJECT)
		return 0;
	for (uint32_t i = 0; i < o->n; i++) {
		const struct json_tok *kt = &d->toks[k];
		uint32_t v = k + 1;

		if (kt->escaped ? !__uks_damon_json_str(d, k, buf, sizeof(buf)) && !strcmp(buf, key)
				: kt->len == klen && !memcmp(d->text + kt->start, key, klen))
			return v;
		k = d->toks[v].next;
	}
	return 0;
}
