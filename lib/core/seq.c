// SPDX-License-Identifier: MIT
/* Growable text buffer; see seq.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <stdlib.h>

#include "core/seq.h"

static bool seq_reserve(struct uks_seq *s, size_t more)
{
	size_t need = s->len + more + 1, cap;
	char *buf;

	if (s->overflow)
		return false;
	if (need <= s->cap)
		return true;
	cap = s->cap ? s->cap : 256;
	while (cap < need)
		cap *= 2;
	buf = realloc(s->buf, cap);
	if (!buf) {
		s->overflow = true;
		return false;
	}
	s->buf = buf;
	s->cap = cap;
	return true;
}

void __uks_seq_printf(struct uks_seq *s, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(s->buf ? s->buf + s->len : NULL, s->buf ? s->cap - s->len : 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (s->buf && (size_t)n < s->cap - s->len) {
		s->len += n;
		return;
	}
	if (!seq_reserve(s, n))
		return;
	va_start(ap, fmt);
	vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
	va_end(ap);
	s->len += n;
}

void __uks_seq_putmem(struct uks_seq *s, const void *mem, size_t len)
{
	if (!seq_reserve(s, len))
		return;
	memcpy(s->buf + s->len, mem, len);
	s->len += len;
	s->buf[s->len] = '\0';
}

void __uks_seq_puts(struct uks_seq *s, const char *str)
{
	__uks_seq_putmem(s, str, strlen(str));
}

void __uks_seq_putc(struct uks_seq *s, char c)
{
	__uks_seq_putmem(s, &c, 1);
}

void __uks_seq_truncate(struct uks_seq *s, size_t len)
{
	if (len < s->len) {
		s->len = len;
		s->buf[len] = '\0';
	}
}

void __uks_seq_reset(struct uks_seq *s)
{
	s->len = 0;
	s->overflow = false;
	if (s->buf)
		s->buf[0] = '\0';
}

void __uks_seq_free(struct uks_seq *s)
{
	free(s->buf);
	*s = (struct uks_seq)UKS_SEQ_INIT;
}
