// SPDX-License-Identifier: MIT
/*
 * The event filter language: every operator on every field kind, literal
 * forms, precedence, '!', parentheses and short-circuit evaluation, the
 * kernel's error messages with their caret positions, garbage and
 * overlong input, and the cost of a one-predicate match.
 */
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "trace/filter.h"

struct rec {
	struct uks_trace_entry ent;	/* common_* at 0..7 */
	uint64_t u64v;
	int32_t s32v;
	char name[16];
	uint32_t dstr;			/* __data_loc char[] */
	const char *pstr;
	int8_t s8v;
	uint8_t u8v;
	int16_t s16v;
	uint16_t u16v;
	uint32_t u32v;
	int64_t s64v;
	char data[64];
};

#define F(t, n, m, sz, sg, ft) { t, n, offsetof(struct rec, m), sz, sg, ft }
#define NUM(t, n, m, sg) F(t, n, m, sizeof(((struct rec *)0)->m), sg, UKS_FILTER_OTHER)

static const struct uks_event_field FIELDS[] = {
	/* generic fields first: the event's own "comm" must still win */
	{ "int", "CPU", 0, 4, true, UKS_FILTER_CPU },
	{ "int", "cpu", 0, 4, true, UKS_FILTER_CPU },
	{ "char[16]", "COMM", 0, 16, false, UKS_FILTER_COMM },
	{ "char[16]", "comm", 0, 16, false, UKS_FILTER_COMM },
	{ "unsigned short", "common_type", 0, 2, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_flags", 2, 1, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_preempt_count", 3, 1, false, UKS_FILTER_OTHER },
	{ "int", "common_pid", 4, 4, true, UKS_FILTER_OTHER },
	NUM("u64", "u64v", u64v, false),
	NUM("s32", "s32v", s32v, true),
	F("char[16]", "name", name, 16, false, UKS_FILTER_STATIC_STRING),
	F("__data_loc char[]", "dstr", dstr, 4, false, UKS_FILTER_DYN_STRING),
	F("const char *", "pstr", pstr, sizeof(char *), false, UKS_FILTER_PTR_STRING),
	NUM("s8", "s8v", s8v, true),
	NUM("u8", "u8v", u8v, false),
	NUM("s16", "s16v", s16v, true),
	NUM("u16", "u16v", u16v, false),
	NUM("u32", "u32v", u32v, false),
	NUM("s64", "s64v", s64v, true),
	F("char[3]", "odd", data, 3, false, UKS_FILTER_OTHER),
};
#define NR_FIELDS (sizeof(FIELDS) / sizeof(FIELDS[0]))

/* A second table where the event has its own "comm" (signal_generate). */
static const struct uks_event_field OWN_COMM[] = {
	{ "char[16]", "comm", 0, 16, false, UKS_FILTER_COMM },
	F("char[16]", "comm", name, 16, false, UKS_FILTER_STATIC_STRING),
};

static const struct uks_filter_ctx CTX = { 3, "sshd" };

static void init_rec(struct rec *r)
{
	memset(r, 0, sizeof(*r));
	r->ent.type = 7;
	r->ent.flags = UKS_TRACE_FLAG_IRQS_OFF | UKS_TRACE_FLAG_NEED_RESCHED;
	r->ent.preempt_count = 2;
	r->ent.pid = 1234;
	r->u64v = 0xdeadbeefcafef00dULL;
	r->s32v = -5;
	strcpy(r->name, "bash");
	strcpy(r->data, "hello world");
	r->dstr = uks_data_loc(offsetof(struct rec, data), 12);
	r->pstr = "/etc/passwd";
	r->s8v = -1;
	r->u8v = 200;
	r->s16v = -300;
	r->u16v = 60000;
	r->u32v = 0x80000000u;
	r->s64v = -1234567890123LL;
}

/* 1 or 0 for keep/drop, or the negative errno of a failed compile. */
static int run_on(const struct uks_event_field *fields, size_t nr, const char *text,
		  const void *rec, size_t len, const struct uks_filter_ctx *ctx)
{
	struct uks_filter_error e;
	struct uks_filter *f;
	int ret = __uks_trace_filter_compile(text, fields, nr, &f, &e);

	if (ret) {
		TH_LOG("\"%s\": %d %s at %d", text, ret, e.msg ? e.msg : "?", e.pos);
		return ret;
	}
	ret = __uks_trace_filter_match(f, rec, len, ctx);
	__uks_trace_filter_free(f);
	return ret;
}

static int run(const char *text, const struct rec *r)
{
	return run_on(FIELDS, NR_FIELDS, text, r, sizeof(*r), &CTX);
}

#define M(text, want) do {						\
	int _got = run(text, &r);					\
	if (_got != (want))						\
		TH_LOG("filter: %s", text);				\
	EXPECT_EQ(want, _got);						\
} while (0)

#define E(text, rc, emsg, epos) do {					\
	struct uks_filter_error _e = { "unset", -1 };			\
	struct uks_filter *_f = (struct uks_filter *)&_e;		\
	int _rc = __uks_trace_filter_compile(text, FIELDS, NR_FIELDS, &_f, &_e); \
	if (_rc != (rc) || (_e.msg && strcmp(_e.msg, emsg)) || _e.pos != (epos)) \
		TH_LOG("filter: %s -> %d \"%s\" at %d", text, _rc,	\
		       _e.msg ? _e.msg : "(null)", _e.pos);		\
	EXPECT_EQ(rc, _rc);						\
	EXPECT_NULL(_f);						\
	EXPECT_STREQ(emsg, _e.msg ? _e.msg : "(null)");			\
	EXPECT_EQ(epos, _e.pos);					\
} while (0)

TEST(numeric_operators_every_size)
{
	struct rec r;

	init_rec(&r);
	M("common_type == 7", 1);
	M("common_type != 7", 0);
	M("common_type < 8", 1);
	M("common_type < 7", 0);
	M("common_type <= 7", 1);
	M("common_type > 7", 0);
	M("common_type > 6", 1);
	M("common_type >= 7", 1);
	M("common_type >= 8", 0);
	M("common_type & 2", 1);
	M("common_type & 8", 0);
	M("common_flags & 0x04", 1);
	M("common_flags & 0x08", 0);
	M("common_flags == 5", 1);
	M("common_preempt_count > 1", 1);
	M("common_preempt_count<=1", 0);
	M("common_pid == 1234", 1);
	M("common_pid > -1", 1);
	M("common_pid < -1", 0);
	M("u64v == 0xdeadbeefcafef00d", 1);
	M("u64v == 16045690984503111693", 1);
	M("u64v > 0x7fffffffffffffff", 1);	/* unsigned compare */
	M("u64v < 18446744073709551615", 1);
	M("u64v & 0x1", 1);
	M("u64v & 0x2", 0);
	M("s32v == -5", 1);
	M("s32v < 0", 1);
	M("s32v > -6", 1);
	M("s32v >= -4", 0);
	M("s32v & 1", 1);
	M("s32v & 4", 0);
	M("s8v == -1", 1);
	M("s8v < 0", 1);
	M("s8v == 255", 1);		/* the literal is cast to s8, as the kernel does */
	M("u8v > 100", 1);
	M("u8v == 200", 1);
	M("u8v == 456", 1);		/* (u8)456 == 200 */
	M("u8v > 199 && u8v < 201", 1);
	M("s16v < -299", 1);
	M("s16v == -300", 1);
	M("s16v > 0", 0);
	M("u16v >= 60000", 1);
	M("u16v > 60000", 0);
	M("u32v == 0x80000000", 1);
	M("u32v > 0x7fffffff", 1);	/* unsigned compare */
	M("s64v == -1234567890123", 1);
	M("s64v < 0", 1);
	M("s64v > -9223372036854775808", 1);
	M("s64v != -1234567890123", 0);
}

TEST(numeric_literal_forms)
{
	struct rec r;

	init_rec(&r);
	M("common_type == 07", 1);		/* octal */
	M("common_type == 010", 0);		/* 8 */
	M("common_pid == 02322", 1);		/* 1234 octal */
	M("common_pid == 0x4d2", 1);
	M("common_pid == 0X4D2", 1);
	M("common_pid == 0", 0);
	M("common_pid==1234", 1);
	M("  common_pid\t==\t1234  ", 1);
	M("common_pid == 1234\n", 1);		/* the trailing newline of echo */
	M("common_pid == 00000000000000000002322", 1);	/* 23 characters */
	M("common_pid == 00000000000000000001234", 0);	/* octal: 668 */
	M("s32v == -0x5", 1);
	M("s32v == -05", 1);
	M("u64v == 18446744073709551615", 0);
}

TEST(cpu_field)
{
	struct rec r;

	init_rec(&r);
	M("CPU == 3", 1);
	M("cpu == 3", 1);
	M("cpu != 3", 0);
	M("cpu < 4", 1);
	M("cpu <= 2", 0);
	M("cpu > 2", 1);
	M("cpu >= 4", 0);
	M("cpu & 1", 0);			/* the kernel has no & for CPU */
	M("cpu > -1", 1);
	EXPECT_EQ(0, run_on(FIELDS, NR_FIELDS, "cpu == 3", &r, sizeof(r), NULL));
}

TEST(static_string_field)
{
	struct rec r;

	init_rec(&r);
	M("name == \"bash\"", 1);
	M("name == 'bash'", 1);
	M("name=='bash'&&common_pid==1234", 1);
	M("name != \"bash\"", 0);
	M("name != \"zsh\"", 1);
	M("name == \"bas\"", 0);
	M("name == \"bashx\"", 0);
	M("name == \"ba*\"", 0);		/* == never globs */
	M("name == \"\"", 0);
	M("name ~ \"bash\"", 1);
	M("name ~ \"ba*\"", 1);
	M("name ~ \"*sh\"", 1);
	M("name ~ \"*as*\"", 1);
	M("name ~ \"*z*\"", 0);
	M("name ~ \"*\"", 1);
	M("name ~ \"**\"", 1);
	M("name ~ \"b?sh\"", 1);
	M("name ~ \"b?h\"", 0);
	M("name ~ \"b*h\"", 1);
	M("name ~ \"*a*h\"", 1);
	M("name ~ \"[a-c]ash\"", 1);
	M("name ~ \"[!b]ash\"", 0);
	M("name ~ \"[]b]ash\"", 1);
	M("name ~ \"b\\ash\"", 1);		/* \a is a literal 'a' */
	M("name ~ \"b\\\\ash\"", 0);		/* \\ is a literal backslash */
	M("name ~ \"!bash\"", 0);		/* a leading '!' inverts */
	M("name ~ \"!zsh\"", 1);
	M("name ~ \"ba*\"", 1);
	M("name ~ 'z*'", 0);
	M("name ~ \"bash*\"", 1);
	M("name ~ \"bash?\"", 0);

	strcpy(r.name, "1*");
	M("name ~ \"1*\"", 1);			/* a leading digit compares whole */
	M("name ~ \"1x\"", 0);

	memset(r.name, 'x', sizeof(r.name));	/* no NUL within char[16] */
	M("name == \"xxxxxxxxxxxxxxxx\"", 1);
	M("name == \"xxxxxxxxxxxxxxx\"", 0);
	M("name == \"xxxxxxxxxxxxxxxxx\"", 0);
	M("name ~ \"*x\"", 1);
	M("name ~ \"x*x\"", 1);
	M("name ~ \"x*y\"", 0);
	M("name ~ \"????????????????\"", 1);
	M("name ~ \"?????????????????\"", 0);
}

TEST(dynamic_and_pointer_strings)
{
	struct rec r;

	init_rec(&r);
	M("dstr == \"hello world\"", 1);
	M("dstr != \"hello\"", 1);
	M("dstr ~ \"*world\"", 1);
	M("dstr ~ \"hello*\"", 1);
	M("dstr ~ \"*lo w*\"", 1);
	M("dstr ~ \"h?llo*d\"", 1);
	M("dstr ~ \"*xyz\"", 0);
	M("pstr == \"/etc/passwd\"", 1);
	M("pstr ~ \"*passwd\"", 1);
	M("pstr ~ \"/etc/*\"", 1);
	M("pstr != '/etc/passwd'", 0);

	/* A __data_loc pointing past the record matches nothing. */
	r.dstr = uks_data_loc(sizeof(r) - 4, 10);
	M("dstr == \"x\"", 0);
	M("dstr != \"x\"", 0);
	/* Nor does a NULL char *. */
	r.pstr = NULL;
	M("pstr != \"x\"", 0);
	/* A record too short for a field fails its predicate. */
	init_rec(&r);
	EXPECT_EQ(0, run_on(FIELDS, NR_FIELDS, "u64v != 0", &r, 12, &CTX));
	EXPECT_EQ(1, run_on(FIELDS, NR_FIELDS, "common_pid == 1234", &r, 8, &CTX));
	EXPECT_EQ(0, run_on(FIELDS, NR_FIELDS, "name != 'x'", &r, 30, &CTX));
}

TEST(comm_field)
{
	struct rec r;

	init_rec(&r);
	M("comm == \"sshd\"", 1);
	M("COMM ~ \"ss*\"", 1);
	M("comm != \"sshd\"", 0);
	M("comm ~ \"*hd\"", 1);
	EXPECT_EQ(0, run_on(FIELDS, NR_FIELDS, "comm == \"sshd\"", &r, sizeof(r), NULL));
	/* The event's own "comm" field wins over the generic one. */
	EXPECT_EQ(1, run_on(OWN_COMM, 2, "comm == \"bash\"", &r, sizeof(r), &CTX));
	EXPECT_EQ(0, run_on(OWN_COMM, 2, "comm == \"sshd\"", &r, sizeof(r), &CTX));
}

TEST(precedence_not_and_parentheses)
{
	struct rec r;

	init_rec(&r);
	M("common_pid == 1 || common_type == 7 && common_flags == 5", 1);
	/* left to right without precedence this would be false */
	M("common_pid == 1234 || common_type == 0 && common_flags == 0", 1);
	M("(common_pid == 1234 || common_type == 0) && common_flags == 0", 0);
	M("common_type == 0 && common_flags == 5 || common_pid == 1234", 1);
	M("common_type == 7 && common_flags == 5 && common_pid == 1", 0);
	M("!common_pid == 1234", 0);
	M("!!common_pid == 1234", 1);
	M("!(common_pid == 1 || common_type == 1)", 1);
	M("!(common_pid == 1234 && common_type == 1)", 1);
	M("!(!(common_pid == 1234))", 1);
	M("!(common_pid == 1234) || common_type == 7", 1);
	M("common_type == 7 && !(common_pid == 1 || !(common_flags == 5))", 1);
	M("((((common_pid == 1234))))", 1);
	M("( common_pid == 1234 ) && ( ! ( common_type != 7 ) )", 1);
}

/* Seven independent predicates a..g: bits of u64v. */
static int truth(int e, unsigned int m)
{
	bool a = m & 1, b = m & 2, c = m & 4, d = m & 8, x = m & 16, f = m & 32, g = m & 64;

	switch (e) {
	case 0: return (a && !(!b || (c && g))) || d || (x && !f);
	case 1: return ((a || b) && (c || d) && !(x && f)) || g;
	case 2: return !(a && (b || !(c && (d || x)))) && (f || !g);
	case 3: return a || b || c || (d && x && f && g);
	case 4: return (a && (b || c)) || (!d && x);
	case 5: return !(!(a || !b) && !(c && !(d || !(x && !(f || g)))));
	default: return ((a || b) && !c) || (d && (x || f) && !g);
	}
}

static const char *const TRUTH_EXPR[] = {
	"a && !(!b || (c && g)) || d || e && !f",
	"(a || b) && (c || d) && !(e && f) || g",
	"!(a && (b || !(c && (d || e)))) && (f || !g)",
	"a || b || c || d && e && f && g",
	"((a)) && ((b || c)) || !((d)) && e",
	"!(!(a || !b) && !(c && !(d || !(e && !(f || g)))))",
	"(a||b)&&!c||d&&(e||f)&&!g",
};

TEST(truth_tables)
{
	for (int e = 0; e < 7; e++) {
		char text[512], *o = text;
		struct uks_filter_error err;
		struct uks_filter *f;
		struct rec r;

		for (const char *s = TRUTH_EXPR[e]; *s; s++) {
			if (*s >= 'a' && *s <= 'g')
				o += sprintf(o, "u64v & 0x%x", 1u << (*s - 'a'));
			else
				*o++ = *s;
		}
		*o = 0;
		ASSERT_EQ(0, __uks_trace_filter_compile(text, FIELDS, NR_FIELDS, &f, &err));
		init_rec(&r);
		for (unsigned int m = 0; m < 128; m++) {
			r.u64v = m;
			if (__uks_trace_filter_match(f, &r, sizeof(r), &CTX) != truth(e, m))
				TH_LOG("%s with %#x", TRUTH_EXPR[e], m);
			EXPECT_EQ(truth(e, m), __uks_trace_filter_match(f, &r, sizeof(r), &CTX));
		}
		__uks_trace_filter_free(f);
	}
}

TEST(short_circuit)
{
	struct rec r;

	/* Reading this pointer would crash: it must never be evaluated. */
	init_rec(&r);
	r.pstr = (const char *)(uintptr_t)16;
	M("common_pid == 1234 || pstr == \"x\"", 1);
	M("common_pid == 0 && pstr == \"x\"", 0);
	M("(common_pid == 0 && pstr == 'x') || common_type == 7", 1);
	M("!(common_pid == 1234 || pstr ~ \"*x\")", 0);
	M("common_type == 7 && (common_pid == 1234 || pstr == 'x')", 1);
}

TEST(error_messages_and_positions)
{
	char big[700];

	E("dsig == 17", -EINVAL, "Field not found", 5);
	E("  dsig == 17", -EINVAL, "Field not found", 7);
	E("((common_pid >= 10 && common_pid < 15) || dsig == 17) && comm != bash",
	  -EINVAL, "Field not found", 47);
	E("== 1", -EINVAL, "Field not found", 1);
	E("common_pid == 1 && && common_type == 1", -EINVAL, "Field not found", 20);
	E("common_pid = 1", -EINVAL, "Invalid operator", 12);
	E("common_pid 1", -EINVAL, "Invalid operator", 12);
	E("name.ustring == \"x\"", -EINVAL, "Invalid operator", 5);	/* 6.0+ syntax */
	E("common_pid", -EINVAL, "Invalid operator", 11);
	E("(common_pid == 1", -EINVAL, "Too many '('", 0);
	E("common_pid == 1 && (common_type == 7", -EINVAL, "Too many '('", 19);
	E("((common_pid == 1)", -EINVAL, "Too many '('", 0);
	E("common_pid == 1)", -EINVAL, "Too few '('", 15);
	E("(common_pid == 1))", -EINVAL, "Too few '('", 17);
	E("name == \"bash", -EINVAL, "Missing matching quote", 8);
	E("name == 'ba\"sh", -EINVAL, "Missing matching quote", 8);
	E("name == 'bash' && comm == 'x", -EINVAL, "Missing matching quote", 26);
	/* 5.15 wants string values quoted (events.rst's "comm != bash" fails) */
	E("name == bash", -EINVAL, "Invalid value (did you forget quotes)?", 9);
	E("common_pid == 1 || comm != bash", -EINVAL,
	  "Invalid value (did you forget quotes)?", 28);
	E("name == 5", -EINVAL, "Expecting string field", 9);
	E("name < 5", -EINVAL, "Expecting string field", 8);
	E("common_pid == \"x\"", -EINVAL, "Expecting numeric field", 15);
	E("cpu == '3'", -EINVAL, "Expecting numeric field", 8);
	E("name < \"bash\"", -EINVAL, "Illegal operation for field type", 8);
	E("name & \"bash\"", -EINVAL, "Illegal operation for field type", 8);
	E("common_pid ~ 5", -EINVAL, "Illegal operation for field type", 14);
	E("odd == 1", -EINVAL, "Illegal operation for field type", 8);
	E("common_pid == 12abc", -EINVAL, "Illegal integer value", 15);
	E("common_pid == 0x", -EINVAL, "Illegal integer value", 15);
	E("common_pid == 09", -EINVAL, "Illegal integer value", 15);
	E("common_pid == -", -EINVAL, "Illegal integer value", 15);
	E("common_pid == --1", -EINVAL, "Illegal integer value", 15);
	E("u8v == -1", -EINVAL, "Illegal integer value", 8);
	E("s64v == 9223372036854775808", -EINVAL, "Illegal integer value", 9);
	E("s64v == -9223372036854775809", -EINVAL, "Illegal integer value", 9);
	E("u64v == 18446744073709551616", -EINVAL, "Illegal integer value", 9);
	E("common_pid == abc", -EINVAL, "Invalid value (did you forget quotes)?", 15);
	E("common_pid ==", -EINVAL, "Invalid value (did you forget quotes)?", 14);
	E("name == (x)", -EINVAL, "Invalid value (did you forget quotes)?", 9);
	E("common_pid == 1 common_type == 2", -EINVAL,
	  "Too many terms in predicate expression", 16);
	E("common_pid == 1 & common_type == 2", -EINVAL,
	  "Too many terms in predicate expression", 16);
	E("name == 'a' 'b'", -EINVAL, "Too many terms in predicate expression", 12);
	/* uks: incomplete expressions, accepted by 5.15, rejected as later */
	E("common_pid == 1 &&", -EINVAL, "Meaningless filter expression", 18);
	E("common_pid == 1 ||   \n", -EINVAL, "Meaningless filter expression", 18);
	E("common_pid == 1 && !", -EINVAL, "Meaningless filter expression", 20);
	E("(common_pid == 1 && )", -EINVAL, "Meaningless filter expression", 20);
	E("(common_pid == 1) || ()", -EINVAL, "Meaningless filter expression", 22);
	E("!", -EINVAL, "No filter found", 1);
	E("  ! !", -EINVAL, "No filter found", 5);
	E("", -EINVAL, "Error", 0);
	E(" \n", -EINVAL, "Error", 0);
	E("()", -EINVAL, "Error", 0);

	/* Operand too long: strings of 256+ bytes, numbers of 24+. */
	strcpy(big, "name == \"");
	memset(big + 9, 'a', 256);
	strcpy(big + 265, "\"");
	E(big, -EINVAL, "Operand too long", 266);
	big[9 + 255] = '"';
	big[9 + 256] = 0;
	{
		struct rec r;

		init_rec(&r);
		M(big, 0);		/* 255 bytes are fine */
	}
	E("u64v == 000000000000000000000001", -EINVAL, "Operand too long", 33);
	E("u64v == 0000000000000000000000001", -EINVAL, "Operand too long", 34);
}

TEST(bad_arguments)
{
	struct uks_filter_error e;
	struct uks_filter *f = (struct uks_filter *)&e;

	EXPECT_EQ(-EINVAL, __uks_trace_filter_compile(NULL, FIELDS, NR_FIELDS, &f, &e));
	EXPECT_NULL(f);
	EXPECT_STREQ("Error", e.msg);
	EXPECT_EQ(-EINVAL,
		  __uks_trace_filter_compile("common_pid == 1", FIELDS, NR_FIELDS, NULL, &e));
	EXPECT_EQ(-EINVAL, __uks_trace_filter_compile("common_pid == 1", NULL, 3, &f, &e));
	EXPECT_EQ(-EINVAL, __uks_trace_filter_compile("common_pid == 1", NULL, 0, &f, NULL));
	EXPECT_EQ(0, __uks_trace_filter_compile("common_pid == 1", FIELDS, NR_FIELDS, &f, NULL));
	__uks_trace_filter_free(f);
	EXPECT_TRUE(__uks_trace_filter_match(NULL, NULL, 0, NULL));
	__uks_trace_filter_free(NULL);
}

TEST(overlong_input)
{
	static char text[8192];
	const char *term = "common_pid == 1 || ";
	size_t tl = strlen(term), len = 0;
	struct rec r;

	init_rec(&r);
	while (len + tl + 20 < 4096) {
		memcpy(text + len, term, tl);
		len += tl;
	}
	strcpy(text + len, "common_pid == 1234");
	M(text, 1);				/* ~210 terms, just under a page */
	text[strlen(text) - 1] = '5';
	M(text, 0);

	memset(text, ' ', 4096);
	memcpy(text, "common_pid == 1234", 18);
	text[4096] = 0;
	E(text, -EINVAL, "Error", 0);		/* a page or more is refused */
	text[4095] = 0;
	M(text, 1);

	memset(text, '(', 3000);
	text[3000] = 0;
	E(text, -EINVAL, "Too many '('", 2999);
	memset(text, '!', 4000);
	strcpy(text + 4000, "common_pid == 1234");
	M(text, 1);				/* an even number of '!' */
}

TEST_TIMEOUT(garbage_does_not_crash, 120)
{
	static const char alphabet[] = "()!&|=<>~\"'* \t-0x9aAzZ_?[]\\";
	static const char *const words[] = {
		"common_pid", "name", "dstr", "pstr", "comm", "cpu", "u8v", "s64v",
		"==", "!=", "~", "&&", "||", "&", "<=", ">", "\"ba*\"", "'x'", "0x10",
		"-3", "(", ")", "!", " ", "common_pid == 1234", "name ~ 'b*'",
		"dstr != \"x\"", "cpu < 9", " && ", " || ", "!(", "u8v & 0x80",
		"comm ~ \"*s[h]?\"", "pstr == /etc/passwd", "s32v >= -5",
	};
	struct rec r;
	unsigned int seed = 12345;
	int compiled = 0;

	init_rec(&r);
	for (int iter = 0; iter < 40000; iter++) {
		char text[200];
		struct uks_filter_error e;
		struct uks_filter *f;
		int len = rand_r(&seed) % 120, pos = 0, ret;

		while (pos < len) {
			int k = rand_r(&seed) % 8;

			k = k < 5 ? 0 : k - 5;

			if (k == 0) {
				const char *w = words[rand_r(&seed) % (sizeof(words) / sizeof(words[0]))];
				size_t wl = strlen(w);

				if (pos + (int)wl >= (int)sizeof(text) - 1)
					break;
				memcpy(text + pos, w, wl);
				pos += (int)wl;
			} else if (k == 1) {
				text[pos++] = alphabet[rand_r(&seed) % (sizeof(alphabet) - 1)];
			} else {
				text[pos++] = (char)(1 + rand_r(&seed) % 255);
			}
		}
		text[pos] = 0;
		ret = __uks_trace_filter_compile(text, FIELDS, NR_FIELDS, &f, &e);
		if (ret) {
			ASSERT_NULL(f);
			ASSERT_NONNULL(e.msg);
			ASSERT_TRUE(ret == -EINVAL || ret == -ENOSPC);
			ASSERT_GE(e.pos, 0);
			ASSERT_LE(e.pos, pos + 1);
			continue;
		}
		compiled++;
		r.pstr = "/etc/passwd";
		(void)__uks_trace_filter_match(f, &r, sizeof(r), &CTX);
		(void)__uks_trace_filter_match(f, &r, 10, NULL);
		__uks_trace_filter_free(f);
	}
	TH_LOG("%d of 40000 random filters compiled", compiled);
	EXPECT_GT(compiled, 0);
}

TEST(one_predicate_match_is_fast)
{
	struct uks_filter_error e;
	struct uks_filter *f;
	struct timespec t0, t1;
	const long n = 5000000;
	volatile int sink = 0;
	struct rec r;
	double ns;

	init_rec(&r);
	ASSERT_EQ(0, __uks_trace_filter_compile("common_pid == 1234", FIELDS, NR_FIELDS, &f, &e));
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		r.ent.pid = (int32_t)(i & 2047);
		sink += __uks_trace_filter_match(f, &r, sizeof(r), &CTX);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ns = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n;
	TH_LOG("one-predicate match: %.1f ns", ns);
	EXPECT_EQ(n / 2048, sink);
	/* generous: sanitizer builds are several times slower */
	EXPECT_LT(ns, 500.0);
	__uks_trace_filter_free(f);
}

TEST_HARNESS_MAIN
