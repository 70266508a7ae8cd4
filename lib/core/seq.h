/* SPDX-License-Identifier: MIT */
/*
 * A growable text buffer for building file contents (the kernel's seq_file
 * and trace_seq in one).  Memory comes from libc: core sits below the
 * slab allocator (under libuks-malloc.so, libc's malloc is uks again).
 * On allocation failure the buffer stops growing and ->overflow is set;
 * callers report -ENOMEM once at the end instead of checking every print.
 */
#ifndef UKS_LIB_CORE_SEQ_H
#define UKS_LIB_CORE_SEQ_H

#include <stdbool.h>
#include <stddef.h>

struct uks_seq {
	char *buf;		/* always NUL-terminated when non-NULL */
	size_t len;
	size_t cap;
	bool overflow;
};

#define UKS_SEQ_INIT { NULL, 0, 0, false }

/* The kernel's names, for the libraries' own use. */
#define seq_printf	__uks_seq_printf
#define seq_puts	__uks_seq_puts
#define seq_putmem	__uks_seq_putmem
#define seq_putc	__uks_seq_putc
#define seq_truncate	__uks_seq_truncate
#define seq_reset	__uks_seq_reset
#define seq_free	__uks_seq_free

void __uks_seq_printf(struct uks_seq *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void __uks_seq_puts(struct uks_seq *s, const char *str);
void __uks_seq_putmem(struct uks_seq *s, const void *mem, size_t len);
void __uks_seq_putc(struct uks_seq *s, char c);
/* Drop everything from @len on (for undoing a partial line). */
void __uks_seq_truncate(struct uks_seq *s, size_t len);
void __uks_seq_reset(struct uks_seq *s);
void __uks_seq_free(struct uks_seq *s);

#endif
