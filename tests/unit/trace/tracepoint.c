// SPDX-License-Identifier: MIT
/* Tracepoint definition macro, probe attach/detach and the printer. */
#include <pthread.h>
#include <stdint.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

#include "harness.h"

UKS_TRACE_EVENT(uks_test, sample,
	UKS_TP_PROTO(int id, const char *path, unsigned long bytes, const char *tag),
	UKS_TP_ARGS(id, path, bytes, tag),
	UKS_TP_FIELDS(
		(field, int, id, id),
		(string, path, path),
		(field, unsigned long, bytes, bytes),
		(array, char, tag, 4, tag)),
	UKS_TP_PRINTK("id=%d path=%s bytes=%lu tag=%.4s", REC->id, __get_str(path),
		      REC->bytes, REC->tag))

/* The hooks record the key they saw, to check they run on the right side of it. */
static int hook_regs, hook_unregs, key_at_reg = -1, key_at_unreg = -1;
static void hooked_reg(void);
static void hooked_unreg(void);

UKS_TRACE_EVENT_FN(uks_test, hooked,
	UKS_TP_PROTO(int id),
	UKS_TP_ARGS(id),
	UKS_TP_FIELDS((field, int, id, id)),
	UKS_TP_PRINTK("id=%d", REC->id),
	hooked_reg, hooked_unreg)

static void hooked_reg(void)
{
	hook_regs++;
	key_at_reg = __uks_tp_uks_test_hooked.key;
}

static void hooked_unreg(void)
{
	hook_unregs++;
	key_at_unreg = __uks_tp_uks_test_hooked.key;
}

struct sink {
	char rec[256];
	size_t len;
	int reserves, commits;
	bool refuse;
};

static void *sink_reserve(void *data, struct uks_tp_iter *hit, size_t len)
{
	struct sink *s = data;

	s->reserves++;
	if (s->refuse || len > sizeof(s->rec))
		return NULL;
	memset(s->rec, 0xaa, sizeof(s->rec));
	return s->rec;
}

static void sink_commit(void *data, struct uks_tp_iter *hit, void *rec, size_t len)
{
	struct sink *s = data;

	s->commits++;
	s->len = len;
}

TEST(disabled_call_site_does_nothing)
{
	ASSERT_FALSE(uks_trace_uks_test_sample_enabled());
	uks_trace_uks_test_sample(1, "x", 2, "abcd");	/* no probe: must not crash */
	ASSERT_EQ(0, __uks_tp_uks_test_sample.key);
}

/* TRACE_EVENT_FN: reg before the first probe (key still 0), unreg after the last. */
TEST(reg_unreg_hooks_bracket_the_probes)
{
	struct uks_tracepoint *tp = &__uks_tp_uks_test_hooked;
	struct sink a = { 0 }, b = { 0 };
	struct uks_tp_probe pa = { sink_reserve, sink_commit, &a };
	struct uks_tp_probe pb = { sink_reserve, sink_commit, &b };

	ASSERT_EQ(0, uks_tracepoint_attach(tp, &pa));
	ASSERT_EQ(1, hook_regs);
	ASSERT_EQ(0, key_at_reg);
	ASSERT_EQ(0, uks_tracepoint_attach(tp, &pb));
	ASSERT_EQ(-EEXIST, uks_tracepoint_attach(tp, &pb));
	ASSERT_EQ(1, hook_regs);		/* not again for a second probe */
	uks_trace_uks_test_hooked(3);
	ASSERT_EQ(1, a.commits);
	ASSERT_EQ(0, uks_tracepoint_detach(tp, &pa));
	ASSERT_EQ(0, hook_unregs);		/* pb is still attached */
	ASSERT_EQ(-ENOENT, uks_tracepoint_detach(tp, &pa));
	ASSERT_EQ(0, uks_tracepoint_detach(tp, &pb));
	ASSERT_EQ(1, hook_unregs);
	ASSERT_EQ(0, key_at_unreg);
	ASSERT_EQ(0, uks_tracepoint_attach(tp, &pa));
	ASSERT_EQ(2, hook_regs);
	ASSERT_EQ(0, uks_tracepoint_detach(tp, &pa));
	ASSERT_EQ(2, hook_unregs);
	/* UKS_TRACE_EVENT() has no hooks */
	ASSERT_NULL(__uks_tp_uks_test_sample.regfunc);
	ASSERT_NULL(__uks_tp_uks_test_sample.unregfunc);
}

TEST(fields_and_print_fmt)
{
	const struct uks_tracepoint *tp = &__uks_tp_uks_test_sample;

	ASSERT_EQ(4, tp->nr_fields);
	ASSERT_STREQ("int", tp->fields[0].type);
	ASSERT_STREQ("id", tp->fields[0].name);
	ASSERT_EQ(8, tp->fields[0].offset);
	ASSERT_EQ(4, tp->fields[0].size);
	ASSERT_TRUE(tp->fields[0].is_signed);
	ASSERT_STREQ("__data_loc char[]", tp->fields[1].type);
	ASSERT_EQ(12, tp->fields[1].offset);
	ASSERT_EQ(4, tp->fields[1].size);
	ASSERT_EQ(UKS_FILTER_DYN_STRING, tp->fields[1].filter_type);
	ASSERT_STREQ("unsigned long", tp->fields[2].type);
	ASSERT_EQ(16, tp->fields[2].offset);
	ASSERT_FALSE(tp->fields[2].is_signed);
	ASSERT_STREQ("char[4]", tp->fields[3].type);
	ASSERT_EQ(UKS_FILTER_STATIC_STRING, tp->fields[3].filter_type);
	ASSERT_EQ(24, tp->fields[3].offset);
	ASSERT_EQ(32, tp->fixed_size);
	size_t len;
	const char *fmt = uks_tracepoint_print_fmt(tp, &len);
	static const char expect[] =
		"\"id=%d path=%s bytes=%lu tag=%.4s\", REC->id, __get_str(path), REC->bytes, REC->tag";

	ASSERT_EQ(strlen(expect), len);
	ASSERT_EQ(0, memcmp(expect, fmt, len));
}

TEST(attach_fill_print_detach)
{
	struct uks_tracepoint *tp = &__uks_tp_uks_test_sample;
	struct sink a = { 0 }, b = { .refuse = true };
	struct uks_tp_probe pa = { sink_reserve, sink_commit, &a };
	struct uks_tp_probe pb = { sink_reserve, sink_commit, &b };
	char text[128];

	ASSERT_EQ(0, uks_tracepoint_attach(tp, &pa));
	ASSERT_EQ(-EEXIST, uks_tracepoint_attach(tp, &pa));
	ASSERT_EQ(0, uks_tracepoint_attach(tp, &pb));
	ASSERT_TRUE(uks_trace_uks_test_sample_enabled());
	uks_trace_uks_test_sample(7, "/etc/passwd", 4096, "wxyz");
	ASSERT_EQ(1, a.commits);
	ASSERT_EQ(1, b.reserves);
	ASSERT_EQ(0, b.commits);
	ASSERT_EQ(32 + sizeof("/etc/passwd"), a.len);
	tp->print(text, sizeof(text), a.rec);
	ASSERT_STREQ("id=7 path=/etc/passwd bytes=4096 tag=wxyz", text);
	uks_trace_uks_test_sample(8, NULL, 1, "abcd");
	tp->print(text, sizeof(text), a.rec);
	ASSERT_STREQ("id=8 path=(null) bytes=1 tag=abcd", text);
	ASSERT_EQ(0, uks_tracepoint_detach(tp, &pa));
	ASSERT_EQ(-ENOENT, uks_tracepoint_detach(tp, &pa));
	ASSERT_EQ(0, uks_tracepoint_detach(tp, &pb));
	ASSERT_FALSE(uks_trace_uks_test_sample_enabled());
	uks_trace_uks_test_sample(9, "y", 1, "abcd");
	ASSERT_EQ(2, a.commits);
}

static int find_sample(struct uks_tracepoint *tp, void *arg)
{
	return tp == &__uks_tp_uks_test_sample;
}

TEST(registered_by_constructor)
{
	ASSERT_EQ(1, uks_tracepoint_for_each(find_sample, NULL));
	ASSERT_EQ(-EEXIST, uks_tracepoint_register(&__uks_tp_uks_test_sample));
}

TEST(snprintf_kernel_extensions)
{
	char buf[128];
	int n;

	n = uks_trace_snprintf(buf, sizeof(buf), "%d|%5u|%-4x|%lld|%zu|%s|%c|%%|%.2f",
			       -3, 42u, 0xabu, -9ll, (size_t)10, "str", 'q', 1.5);
	ASSERT_STREQ("-3|   42|ab  |-9|10|str|q|%|1.50", buf);
	ASSERT_EQ((int)strlen(buf), n);
	uks_trace_snprintf(buf, sizeof(buf), "%p", (void *)0x1234);
	ASSERT_STREQ("0000000000001234", buf);
	/* dladdr sees dynamic symbols: use one of libc's. */
	uks_trace_snprintf(buf, sizeof(buf), "%ps", (void *)fputs);
	ASSERT_NE(NULL, strstr(buf, "fputs"));
	uks_trace_snprintf(buf, sizeof(buf), "%pS", (void *)((char *)fputs + 4));
	ASSERT_NE(NULL, strstr(buf, "fputs+0x4/0x"));
	uks_trace_snprintf(buf, sizeof(buf), "%ps", (void *)16);
	ASSERT_STREQ("0x10", buf);
	uks_trace_snprintf(buf, sizeof(buf), "%*d|%-*.*s|", 4, 7, 5, 2, "abcdef");
	ASSERT_STREQ("   7|ab   |", buf);
	n = uks_trace_snprintf(buf, 4, "%s", "abcdefgh");
	ASSERT_EQ(8, n);
	ASSERT_STREQ("abc", buf);
}

TEST_HARNESS_MAIN
