/* SPDX-License-Identifier: MIT */
/*
 * A strict, bounded JSON reader for damo's record files (json.c).
 *
 * The text becomes one array of tokens in document order: a container's
 * members follow it, an object's as key, value, key, value.  Each token
 * keeps where it is in the text (strings without their quotes), so the
 * record reader can say where a wrong value is.  Nothing is copied: a
 * string is read through json_str() when it is needed.
 *
 * Bounds: nesting deeper than JSON_MAX_DEPTH and text longer than
 * JSON_MAX_TEXT are refused; every token takes at least one byte of text,
 * so the array costs at most one token per byte.
 */
#ifndef UKS_LIB_DAMON_RECORD_JSON_H
#define UKS_LIB_DAMON_RECORD_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_MAX_DEPTH	64
#define JSON_MAX_TEXT	(1U << 30)

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT,
};

struct json_tok {
	uint32_t type;
	uint32_t start;		/* byte offset (a string's first byte after the quote) */
	uint32_t len;		/* bytes of a number or of a string's raw text */
	uint32_t n;		/* members of an array or object */
	uint32_t next;		/* the index of the token after this value */
	bool escaped;		/* a string holding a backslash */
};

struct json_doc {
	const char *text;
	size_t len;
	struct json_tok *toks;
	uint32_t nr;
	uint32_t cap;
	uint32_t err_at;	/* where parsing failed */
	const char *err;	/* why; NULL on success */
};

int __uks_damon_json_parse(struct json_doc *d, const char *text, size_t len);
void __uks_damon_json_free(struct json_doc *d);
/* the member @key of object @obj: its value's index, or 0 (the root is never a member) */
uint32_t __uks_damon_json_get(const struct json_doc *d, uint32_t obj, const char *key);
/* string @t decoded into @buf (NUL-terminated); -EINVAL if no string or too long */
int __uks_damon_json_str(const struct json_doc *d, uint32_t t, char *buf, size_t cap);

#endif
