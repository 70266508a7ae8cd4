/* SPDX-License-Identifier: MIT */
/*
 * Event filters, private to filter.c (matching) and filter_parse.c
 * (compiling): the compiled program's layout and the kernel's limits.
 */
#ifndef UKS_LIB_TRACE_FILTER_IMPL_H
#define UKS_LIB_TRACE_FILTER_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "trace/filter.h"

#define FILTER_MAX_TEXT		4096	/* event_filter_write(): cnt >= PAGE_SIZE */
#define FILTER_MAX_PREDS	16384	/* the old MAX_FILTER_PRED */
#define MAX_FILTER_STR_VAL	256
#define FILTER_NUM_BUF		24	/* "0xfeedfacedeadbeef" fits */
#define FILTER_COMM_LEN		16	/* TASK_COMM_LEN */
#define FILTER_PTR_STR_MAX	1024	/* later kernels' USTRING_BUF_SIZE */

/* The kernel's ERRORS table (its order and texts); NO_MATCH is "Error". */
#define FILTER_ERRORS							\
	C(NONE,			"No error"),				\
	C(INVALID_OP,		"Invalid operator"),			\
	C(TOO_MANY_OPEN,	"Too many '('"),			\
	C(TOO_MANY_CLOSE,	"Too few '('"),				\
	C(MISSING_QUOTE,	"Missing matching quote"),		\
	C(OPERAND_TOO_LONG,	"Operand too long"),			\
	C(EXPECT_STRING,	"Expecting string field"),		\
	C(EXPECT_DIGIT,		"Expecting numeric field"),		\
	C(ILLEGAL_FIELD_OP,	"Illegal operation for field type"),	\
	C(FIELD_NOT_FOUND,	"Field not found"),			\
	C(ILLEGAL_INTVAL,	"Illegal integer value"),		\
	C(TOO_MANY_PREDS,	"Too many terms in predicate expression"), \
	C(INVALID_FILTER,	"Meaningless filter expression"),	\
	C(INVALID_VALUE,	"Invalid value (did you forget quotes)?"), \
	C(ERRNO,		"Error"),				\
	C(NO_FILTER,		"No filter found")

#define C(a, b) FILT_ERR_##a
enum { FILTER_ERRORS };
#undef C

/* '<=' must come before '<' and '>=' before '>' (first match wins). */
enum filter_op { OP_GLOB, OP_NE, OP_EQ, OP_LE, OP_LT, OP_GE, OP_GT, OP_BAND, OP_MAX };

enum pred_kind { PK_NUM, PK_CPU, PK_STATIC, PK_DYN, PK_PTR, PK_COMM };
enum match_type { MT_FULL, MT_FRONT, MT_MIDDLE, MT_END, MT_GLOB };

/* One predicate plus its branch. */
struct filter_insn {
	uint8_t kind;		/* enum pred_kind */
	uint8_t op;		/* enum filter_op */
	uint8_t when;		/* branch when the predicate's result equals this */
	uint8_t not;		/* string result inverted (!= and "~ !pat") */
	uint8_t mtype;		/* enum match_type for strings */
	uint8_t is_signed;
	uint16_t plen;		/* pattern length (< MAX_FILTER_STR_VAL) */
	int target;		/* while parsing: kernel-style label; then next index */
	unsigned int offset;
	unsigned int size;
	uint64_t val;		/* literal, cast to the field's type and extended */
	const char *pat;	/* NUL-terminated, in the filter's pool */
};

struct uks_filter {
	unsigned int n;
	struct filter_insn insn[];	/* followed by the pattern pool */
};

/* Truncate to a 1/2/4/8-byte field's type and widen back to 64 bits. */
static inline uint64_t filter_num_extend(uint64_t v, unsigned int size, bool is_signed)
{
	unsigned int shift = 64 - 8 * size;

	v <<= shift;
	return is_signed ? (uint64_t)((int64_t)v >> shift) : v >> shift;
}

#endif
