// SPDX-License-Identifier: MIT
/*
 * Event-probe fetch arguments (lib/trace/probe_arg.c): parsing against a
 * fake attached event, the probe record layout, the format-file fields and
 * print fmt, every fetch type, bitfields, arrays, nested dereferences into
 * this process and into a child, faults, and the kernel's error messages
 * with their caret offsets.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include <uks/slab.h>
#include "trace/probe_arg.h"

/*
 * The attached event: the common header, then a syscall-like layout.
 * Offsets are packed on purpose: the fetcher must not assume alignment.
 */
enum {
	OFF_FD = 8,		/* int */
	OFF_FILENAME = 12,	/* const char * */
	OFF_COMM = 20,		/* char[16] */
	OFF_NAME = 36,		/* __data_loc char[] */
	OFF_VAL = 40,		/* u64 (a pointer in most tests) */
	OFF_SMALL = 48,		/* signed char */
	OFF_SHORT = 49,		/* short */
	OFF_FLAGS = 51,		/* u32 */
	SRC_FIXED = 55,
};

static const struct uks_event_field ev_fields[] = {
	{ "unsigned short", "common_type", 0, 2, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_flags", 2, 1, false, UKS_FILTER_OTHER },
	{ "unsigned char", "common_preempt_count", 3, 1, false, UKS_FILTER_OTHER },
	{ "int", "common_pid", 4, 4, true, UKS_FILTER_OTHER },
	{ "int", "fd", OFF_FD, 4, true, UKS_FILTER_OTHER },
	{ "const char *", "filename", OFF_FILENAME, 8, false, UKS_FILTER_PTR_STRING },
	{ "char[16]", "comm", OFF_COMM, 16, true, UKS_FILTER_STATIC_STRING },
	{ "__data_loc char[]", "name", OFF_NAME, 4, true, UKS_FILTER_DYN_STRING },
	{ "u64", "val", OFF_VAL, 8, false, UKS_FILTER_OTHER },
	{ "signed char", "small", OFF_SMALL, 1, true, UKS_FILTER_OTHER },
	{ "short", "shrt", OFF_SHORT, 2, true, UKS_FILTER_OTHER },
	{ "u32", "flags", OFF_FLAGS, 4, false, UKS_FILTER_OTHER },
};
#define NR_FIELDS (sizeof(ev_fields) / sizeof(ev_fields[0]))

struct src {
	uint8_t b[256];
	size_t len;
};

static void src_init(struct src *s, int32_t fd, const void *filename, const char *comm,
		     const char *name, uint64_t val)
{
	uint64_t p = (uint64_t)(uintptr_t)filename;
	uint32_t loc;
	size_t nl = strlen(name) + 1;

	memset(s, 0, sizeof(*s));
	s->b[0] = 42;
	memcpy(s->b + OFF_FD, &fd, 4);
	memcpy(s->b + OFF_FILENAME, &p, 8);
	strncpy((char *)s->b + OFF_COMM, comm, 16);
	loc = (uint32_t)nl << 16 | SRC_FIXED;
	memcpy(s->b + OFF_NAME, &loc, 4);
	memcpy(s->b + OFF_VAL, &val, 8);
	s->b[OFF_SMALL] = 0x80;			/* -128 */
	s->b[OFF_SHORT] = 0xfe;			/* -2 */
	s->b[OFF_SHORT + 1] = 0xff;
	memcpy(s->b + OFF_FLAGS, &(uint32_t){ 0xabcd1234 }, 4);
	memcpy(s->b + SRC_FIXED, name, nl);
	s->len = SRC_FIXED + nl;
}

/*
 * Parse @argc words, build the probe record from @s for @pid, print it.
 * Returns the printed text (caller frees) or NULL if the parse failed.
 */
static char *run(int argc, const char *const *argv, const struct src *s, pid_t pid)
{
	struct uks_probe_error err;
	struct uks_probe_args *pa;
	struct uks_seq seq = UKS_SEQ_INIT;
	size_t fixed, dyn;
	uint8_t *rec;
	char *out;

	if (__uks_trace_probe_args_parse(argc, argv, ev_fields, NR_FIELDS, 12, &pa, &err)) {
		TH_LOG("parse failed: %s at %d:%d", err.msg, err.arg, err.offset);
		return NULL;
	}
	fixed = __uks_trace_probe_args_fixed_size(pa);
	dyn = __uks_trace_probe_args_dynamic_size(pa, s->b, s->len, pid);
	rec = malloc(fixed + dyn);
	memset(rec, 0xaa, fixed + dyn);
	memset(rec, 0, 12);
	__uks_trace_probe_args_store(pa, s->b, s->len, pid, rec, fixed + dyn);
	__uks_trace_probe_args_print(pa, rec, fixed + dyn, &seq);
	out = strdup(seq.buf ? seq.buf : "");
	seq_free(&seq);
	free(rec);
	__uks_trace_probe_args_free(pa);
	return out;
}

#define EXPECT_PRINT(want, s, pid, ...) do {				\
	const char *const _w[] = { __VA_ARGS__ };			\
	char *_got = run((int)(sizeof(_w) / sizeof(_w[0])), _w, s, pid); \
	ASSERT_NONNULL(_got);						\
	EXPECT_STREQ(want, _got);					\
	free(_got);							\
} while (0)

static const char path[] = "/etc/passwd";

TEST(layout_fields_and_print_fmt)
{
	const char *const argv[] = {
		"fd=$fd", "$val", "file=+0($filename):ustring", "arr=+0($val):u8[2]",
		"s=$fd:s32", "h=$fd:x16", "sa=+0($val):string[2]", "b=$flags:b4@4/32",
		"u=$fd:u64", "d=$fd:s64",
	};
	static const struct { const char *type, *name; unsigned int off, size; bool sgn; } want[] = {
		{ "u64", "fd", 12, 8, false }, { "u64", "arg2", 20, 8, false },
		{ "__data_loc char[]", "file", 28, 4, true }, { "u8[2]", "arr", 32, 2, false },
		{ "s32", "s", 34, 4, true }, { "u16", "h", 38, 2, false },
		{ "__data_loc char[][2]", "sa", 40, 8, true }, { "u32", "b", 48, 4, false },
		{ "u64", "u", 52, 8, false }, { "s64", "d", 60, 8, true },
	};
	struct uks_probe_error err;
	struct uks_probe_args *pa;
	struct uks_seq seq = UKS_SEQ_INIT;
	const struct uks_event_field *f;
	size_t nr;

	ASSERT_EQ(0, __uks_trace_probe_args_parse(10, argv, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_EQ(10, __uks_trace_probe_args_count(pa));
	EXPECT_EQ(68u, __uks_trace_probe_args_fixed_size(pa));
	f = __uks_trace_probe_args_fields(pa, &nr);
	ASSERT_EQ(10u, nr);
	for (size_t i = 0; i < nr; i++) {
		EXPECT_STREQ(want[i].type, f[i].type);
		EXPECT_STREQ(want[i].name, f[i].name);
		EXPECT_EQ(want[i].off, f[i].offset);
		EXPECT_EQ(want[i].size, f[i].size);
		EXPECT_EQ(want[i].sgn, f[i].is_signed);
	}
	EXPECT_EQ(UKS_FILTER_DYN_STRING, f[2].filter_type);
	EXPECT_EQ(UKS_FILTER_OTHER, f[0].filter_type);
	__uks_trace_probe_args_print_fmt(pa, &seq);
	EXPECT_STREQ("\"(%u) fd=0x%Lx arg2=0x%Lx file=\\\"%s\\\" arr={%u,%u} s=%d h=0x%x "
		     "sa={\\\"%s\\\",\\\"%s\\\"} b=%u u=%Lu d=%Ld\", REC->__probe_type, "
		     "REC->fd, REC->arg2, __get_str(file), REC->arr[0], REC->arr[1], REC->s, "
		     "REC->h, __get_str(sa[0]), __get_str(sa[1]), REC->b, REC->u, REC->d",
		     seq.buf);
	EXPECT_STREQ("fd=$fd", __uks_trace_probe_args_text(pa, 0));
	EXPECT_STREQ("arg2=$val", __uks_trace_probe_args_text(pa, 1));
	EXPECT_STREQ("file=+0($filename):ustring", __uks_trace_probe_args_text(pa, 2));
	EXPECT_NULL(__uks_trace_probe_args_text(pa, 10));
	EXPECT_NULL(__uks_trace_probe_args_text(pa, -1));
	seq_free(&seq);
	__uks_trace_probe_args_free(pa);
}

TEST(empty_and_5_15_example)
{
	const char *const argv[] = { "prev_state=$fd", "prev_prio=$small" };
	struct uks_probe_args *pa;
	struct uks_probe_error err;
	struct uks_seq seq = UKS_SEQ_INIT;
	size_t nr = 99;

	ASSERT_EQ(0, __uks_trace_probe_args_parse(0, NULL, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_EQ(12u, __uks_trace_probe_args_fixed_size(pa));
	__uks_trace_probe_args_fields(pa, &nr);
	EXPECT_EQ(0u, nr);
	__uks_trace_probe_args_print_fmt(pa, &seq);
	EXPECT_STREQ("\"(%u)\", REC->__probe_type", seq.buf);
	seq_reset(&seq);
	__uks_trace_probe_args_free(pa);
	/* The shape of the 5.15 format quoted in FORMATS.md. */
	ASSERT_EQ(0, __uks_trace_probe_args_parse(2, argv, ev_fields, NR_FIELDS, 12, &pa, &err));
	__uks_trace_probe_args_print_fmt(pa, &seq);
	EXPECT_STREQ("\"(%u) prev_state=0x%Lx prev_prio=0x%Lx\", REC->__probe_type, "
		     "REC->prev_state, REC->prev_prio", seq.buf);
	seq_free(&seq);
	__uks_trace_probe_args_free(pa);
}

TEST(field_values_sign_extend_and_truncate)
{
	struct src s;

	src_init(&s, -3, path, "cat", "dyn", 0x1122334455667788ULL);
	EXPECT_PRINT(" arg1=0xfffffffffffffffd", &s, 0, "$fd");
	EXPECT_PRINT(" a=-3 b=4294967293 c=253 d=-3 e=0xfffd f=18446744073709551613",
		     &s, 0, "a=$fd:s32", "b=$fd:u32", "c=$fd:u8", "d=$fd:s64", "e=$fd:x16",
		     "f=$fd:u64");
	EXPECT_PRINT(" a=0x1122334455667788 b=0x7788 c=0x55667788 d=0x88 e=-120",
		     &s, 0, "a=$val", "b=$val:x16", "c=$val:x32", "d=$val:x8", "e=$val:s8");
	EXPECT_PRINT(" a=-128 b=0xff80 c=-2 d=65534 e=0xabcd1234 f=4660",
		     &s, 0, "a=$small:s32", "b=$small:x16", "c=$shrt:s16", "d=$shrt:u16",
		     "e=$flags:x32", "f=$flags:s16");
	EXPECT_PRINT(" t=0x2a p=0x0", &s, 0, "t=$common_type", "p=$common_pid");
	/* 5.15 reads a char[16] as a long: the first 8 bytes. */
	EXPECT_PRINT(" c=0x746163", &s, 0, "c=$comm");
}

TEST(bitfields)
{
	uint8_t bytes[4] = { 0xb5, 0x0f, 0xf0, 0x00 };
	struct src s;

	src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)bytes);
	/* flags = 0xabcd1234 */
	EXPECT_PRINT(" a=3 b=10 c=2882343476 d=1 e=43981",
		     &s, 0, "a=$flags:b4@4/32", "b=$flags:b4@28/32", "c=$flags:b32@0/32",
		     "d=$flags:b1@2/8", "e=$flags:b16@16/32");
	/* 0xb5 = 1011 0101: bits 1..3 = 010, bits 5..7 = 101 */
	EXPECT_PRINT(" a=2 b=5 c={2,7}", &s, 0, "a=+0($val):b3@1/8", "b=+0($val):b3@5/8",
		     "c=+0($val):b3@1/8[2]");
	EXPECT_PRINT(" w=15 q=0xb5", &s, 0, "w=+0($val):b4@8/16", "q=+0($val):x8");
}

struct inner {
	uint32_t a;
	uint64_t b;
	const char *str;
} __attribute__((packed));

TEST(dereference_this_process)
{
	static const char hello[] = "hello";
	static struct inner in = { 7, 0x123456789aULL, hello + 2 };
	static const struct inner *pin = &in;
	static const uint16_t arr[4] = { 1, 2, 3, 0xffff };
	static const char *const strs[3] = { "one", "", "three" };
	struct src s;

	src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)&in);
	EXPECT_PRINT(" f=\"/etc/passwd\" g=\"passwd\" h=\"/etc/passwd\" i=\"/etc/passwd\"",
		     &s, 0, "f=+0($filename):string", "g=+5($filename):ustring",
		     "h=$filename:string", "i=+u0($filename):ustring");
	EXPECT_PRINT(" a=7 b=0x123456789a c=\"llo\" d=\"hello\" e=\"lo\"", &s, 0,
		     "a=+0($val):u32", "b=+4($val):x64", "c=+0(+12($val)):string",
		     "d=-2(+12($val)):string", "e=+1(+12($val)):string");
	EXPECT_PRINT(" n=0x9a m=101 o=0x12", &s, 0, "n=+4($val):x8", "m=-1(+12($val)):s8",
		     "o=+0x8($val):x8");
	src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)&pin);
	EXPECT_PRINT(" deep=\"llo\" v=7", &s, 0, "deep=+0(+12(+0($val))):string",
		     "v=+0(+0($val)):u32");
	src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)arr);
	EXPECT_PRINT(" a={1,2,3,65535} b={0x1,0x2} c={-1}", &s, 0, "a=+0($val):u16[4]",
		     "b=+0($val):x16[2]", "c=+6($val):s16[1]");
	src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)strs);
	EXPECT_PRINT(" s={\"one\",\"\",\"three\"} t={\"three\"}", &s, 0,
		     "s=+0($val):string[3]", "t=+16($val):string[1]");
	/* An immediate is a base like a field. */
	src_init(&s, 0, path, "x", "y", 0);
	{
		char imm[64];
		char *w;

		snprintf(imm, sizeof(imm), "+0(\\%llu):u32", (unsigned long long)(uintptr_t)&in);
		w = imm;
		EXPECT_PRINT(" arg1=7 k=0x7b l=-1 m=\"hi there\"", &s, 0, w, "k=\\123",
			     "l=\\-1:s32", "m=\\\"hi there\"");
	}
}

TEST(string_fields_come_from_the_record)
{
	struct src s;

	src_init(&s, 0, path, "bash", "from-dataloc", 0);
	EXPECT_PRINT(" c=\"bash\" n=\"from-dataloc\" u=\"bash\"", &s, 0, "c=$comm:string",
		     "n=$name:string", "u=$comm:ustring");
	/* A full char[16] has no NUL: the field size bounds it. */
	src_init(&s, 0, path, "0123456789abcdef", "", 0);
	EXPECT_PRINT(" c=\"0123456789abcdef\" n=\"\"", &s, 0, "c=$comm:string", "n=$name:string");
	/* A __data_loc pointing outside the record is a fault, not a read. */
	s.b[OFF_NAME + 2] = 0xff;
	EXPECT_PRINT(" n=(fault)", &s, 0, "n=$name:string");
}

TEST(writer_comm)
{
	/* No "comm" field in this event: $comm is the writer's comm (6.0). */
	static const struct uks_event_field nocomm[] = {
		{ "int", "fd", OFF_FD, 4, true, UKS_FILTER_OTHER },
		{ "char *", "COMM", 0, 0, false, UKS_FILTER_COMM },
	};
	const char *const argv[] = { "c=$comm", "C=$COMM:string", "u=$comm:ustring" };
	struct uks_probe_args *pa;
	struct uks_probe_error err;
	struct uks_seq seq = UKS_SEQ_INIT;
	uint8_t src[16] = { 0 }, rec[128];
	size_t fixed, dyn;

	ASSERT_EQ(0, prctl(PR_SET_NAME, "probe-writer", 0, 0, 0));
	ASSERT_EQ(0, __uks_trace_probe_args_parse(3, argv, nocomm, 2, 12, &pa, &err));
	fixed = __uks_trace_probe_args_fixed_size(pa);
	EXPECT_EQ(24u, fixed);
	dyn = __uks_trace_probe_args_dynamic_size(pa, src, sizeof(src), getpid());
	EXPECT_EQ(39u, dyn);
	ASSERT_LE(fixed + dyn, sizeof(rec));
	__uks_trace_probe_args_store(pa, src, sizeof(src), getpid(), rec, fixed + dyn);
	__uks_trace_probe_args_print(pa, rec, fixed + dyn, &seq);
	EXPECT_STREQ(" c=\"probe-writer\" C=\"probe-writer\" u=\"probe-writer\"", seq.buf);
	seq_free(&seq);
	__uks_trace_probe_args_free(pa);
}

TEST(faults_store_zero_and_fault)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *edge;
	struct src s;

	ASSERT_NE(MAP_FAILED, (void *)map);
	ASSERT_EQ(0, mprotect(map + pg, (size_t)pg, PROT_NONE));
	edge = map + pg - 4;
	memcpy(edge, "\x01\x02\x03\x04", 4);
	src_init(&s, 16, path, "x", "y", (uint64_t)(uintptr_t)edge);
	/* fd = 16 is not a mapped address. */
	EXPECT_PRINT(" a=(fault) b=0 c=0x0 d=(fault) e={0,0}", &s, 0, "a=+0($fd):string",
		     "b=+0($fd):u32", "c=+8(+0($fd)):x64", "d=$fd:string", "e=+0($fd):u8[2]");
	/* Four bytes before the hole: the array reads them, then stops at 0. */
	EXPECT_PRINT(" a={1,2,3,4,0,0} b=0x4030201 c=0", &s, 0, "a=+0($val):u8[6]",
		     "b=+0($val):x32", "c=+2($val):u32");
	/* No NUL before the hole: a fault; a NUL right at the page end: fine. */
	EXPECT_PRINT(" s=(fault)", &s, 0, "s=+0($val):string");
	edge[3] = 0;
	EXPECT_PRINT(" s=\"\x01\x02\x03\"", &s, 0, "s=+0($val):string");
	/* An array of strings with a bad pointer in it. */
	{
		const char *tbl[3] = { "ok", (const char *)(map + pg), "fine" };

		src_init(&s, 0, path, "x", "y", (uint64_t)(uintptr_t)tbl);
		EXPECT_PRINT(" s={\"ok\",(fault),\"fine\"}", &s, 0, "s=+0($val):string[3]");
	}
	munmap(map, (size_t)pg * 2);
}

TEST(long_strings_and_short_records)
{
	char *big = malloc(6000);
	const char *const argv[] = { "s=+0($filename):string", "t=$comm:string" };
	struct uks_probe_args *pa;
	struct uks_probe_error err;
	struct uks_seq seq = UKS_SEQ_INIT;
	uint8_t *rec;
	size_t fixed, dyn;
	uint32_t loc;
	struct src s;

	memset(big, 'z', 5999);
	big[5999] = 0;
	src_init(&s, 0, big, "tail", "y", 0);
	ASSERT_EQ(0, __uks_trace_probe_args_parse(2, argv, ev_fields, NR_FIELDS, 12, &pa, &err));
	fixed = __uks_trace_probe_args_fixed_size(pa);
	dyn = __uks_trace_probe_args_dynamic_size(pa, s.b, s.len, 0);
	EXPECT_EQ(4096u + 5u, dyn);	/* MAX_STRING_SIZE, NUL included */
	rec = calloc(1, fixed + dyn);
	__uks_trace_probe_args_store(pa, s.b, s.len, 0, rec, fixed + dyn);
	memcpy(&loc, rec + 12, 4);
	EXPECT_EQ(4096u, loc >> 16);
	EXPECT_EQ(fixed, loc & 0xffff);
	EXPECT_EQ(0, rec[fixed + 4095]);
	EXPECT_EQ('z', rec[fixed + 4094]);
	memcpy(&loc, rec + 16, 4);
	EXPECT_EQ(5u, loc >> 16);
	EXPECT_EQ(fixed + 4096, loc & 0xffff);
	/* Less room than measured: the first string is cut, the second faults. */
	memset(rec, 0, fixed + dyn);
	__uks_trace_probe_args_store(pa, s.b, s.len, 0, rec, fixed + 10);
	__uks_trace_probe_args_print(pa, rec, fixed + 10, &seq);
	EXPECT_STREQ(" s=\"zzzzzzzzz\" t=(fault)", seq.buf);
	/* Records too short for the words print faults, never read past. */
	seq_reset(&seq);
	__uks_trace_probe_args_print(pa, rec, 14, &seq);
	EXPECT_STREQ(" s=(fault) t=(fault)", seq.buf);
	/* A source too short for the field: nothing is read from it. */
	memset(rec, 0, fixed + dyn);
	__uks_trace_probe_args_store(pa, s.b, OFF_FILENAME + 4, 0, rec, fixed + dyn);
	seq_reset(&seq);
	__uks_trace_probe_args_print(pa, rec, fixed + dyn, &seq);
	EXPECT_STREQ(" s=(fault) t=(fault)", seq.buf);
	/* dst shorter than the fixed part: left alone. */
	memset(rec, 0x5a, fixed + dyn);
	__uks_trace_probe_args_store(pa, s.b, s.len, 0, rec, fixed - 1);
	EXPECT_EQ(0x5a, rec[12]);
	seq_free(&seq);
	free(rec);
	free(big);
	__uks_trace_probe_args_free(pa);
}

TEST(dereference_a_child_process)
{
	static char buf[64] = "parent-copy";
	int ready[2], done[2];
	char c;
	pid_t child;
	struct src s;
	char probe;
	struct iovec l = { &probe, 1 }, r = { buf, 1 };

	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	child = fork();
	ASSERT_GE(child, 0);
	if (child == 0) {
		/* Same address, other contents: only a real remote read sees them. */
		strcpy(buf, "child-secret");
		prctl(PR_SET_NAME, "probe-child", 0, 0, 0);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		if (read(done[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	ASSERT_EQ(1, read(ready[0], &c, 1));
	if (process_vm_readv(child, &l, 1, &r, 1, 0) != 1) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP(return, "process_vm_readv on a child: %s", strerror(errno));
	}
	src_init(&s, 0, buf, "x", "y", (uint64_t)(uintptr_t)buf);
	EXPECT_PRINT(" a=\"child-secret\" b=\"secret\" c=0x63", &s, child,
		     "a=+0($filename):ustring", "b=+6($val):string", "c=+0($val):x8");
	EXPECT_PRINT(" a=\"parent-copy\"", &s, getpid(), "a=+0($filename):ustring");
	{
		static const struct uks_event_field f[] = {
			{ "int", "fd", OFF_FD, 4, true, UKS_FILTER_OTHER },
		};
		const char *const argv[] = { "$comm" };
		struct uks_probe_args *pa;
		struct uks_probe_error err;
		struct uks_seq seq = UKS_SEQ_INIT;
		uint8_t rec[64];
		size_t n;

		ASSERT_EQ(0, __uks_trace_probe_args_parse(1, argv, f, 1, 12, &pa, &err));
		n = __uks_trace_probe_args_fixed_size(pa) +
		    __uks_trace_probe_args_dynamic_size(pa, s.b, s.len, child);
		ASSERT_LE(n, sizeof(rec));
		__uks_trace_probe_args_store(pa, s.b, s.len, child, rec, n);
		__uks_trace_probe_args_print(pa, rec, n, &seq);
		EXPECT_STREQ(" arg1=\"probe-child\"", seq.buf);
		seq_free(&seq);
		__uks_trace_probe_args_free(pa);
	}
	ASSERT_EQ(1, write(done[1], "d", 1));
	waitpid(child, NULL, 0);
	/* The child is gone: reads fail cleanly. */
	EXPECT_PRINT(" a=(fault) c=0", &s, child, "a=+0($filename):ustring", "c=+0($val):u8");
}

struct bad {
	const char *word;
	int ret;
	const char *msg;
	int offset;
};

static const struct bad bad_words[] = {
	{ "=$fd", -EINVAL, "Argument name is not specified", 0 },
	{ "1x=$fd", -EINVAL, "Argument name must follow the same rules as C identifiers", 0 },
	{ "a.b=$fd", -EINVAL, "Argument name must follow the same rules as C identifiers", 0 },
	{ "abcdefghijklmnopqrstuvwxyz0123456=$fd", -EINVAL, "Argument name is too long", 0 },
	{ "common_pid=$fd", -EINVAL, "This argument name is already used", 0 },
	{ "__probe_type=$fd", -EINVAL, "This argument name is already used", 0 },
	{ "x=", -EINVAL, "No argument expression", 2 },
	{ "x=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0($fd))))))))))))))):u8", -EINVAL,
	  "Argument expression is too long", 2 },
	{ "x=$nosuch", -ENOENT, "Attached event does not have this field", 2 },
	{ "x=+8(+0($nosuch))", -ENOENT, "Attached event does not have this field", 8 },
	{ "x=$retval", -EINVAL, "$retval is not available on probe", 2 },
	{ "x=$stack", -EINVAL, "Invalid $-valiable specified", 2 },
	{ "x=$stack3", -EINVAL, "Invalid $-valiable specified", 2 },
	{ "x=$", -EINVAL, "Invalid $-valiable specified", 2 },
	{ "x=%ax", -EINVAL, "Invalid $-valiable specified", 2 },
	{ "x=@0x1234", -EINVAL, "Invalid memory address", 2 },
	{ "x=@+10", -EINVAL, "File offset is not available with kprobe", 2 },
	{ "x=@jiffies", -EINVAL, "Symbol is not available with uprobe", 2 },
	{ "x=$fd:foo", -EINVAL, "Unknown type is specified", 6 },
	{ "x=$fd:", -EINVAL, "Unknown type is specified", 6 },
	{ "x=$fd:symbol", -EINVAL, "The symbol type is not available in user space", 6 },
	{ "x=+0($filename):u8[4", -EINVAL, "Array is not closed", 20 },
	{ "x=+0($filename):u8[4]z", -EINVAL, "Array has wrong suffix", 21 },
	{ "x=+0($filename):u8[0]", -EINVAL, "Invalid array size", 19 },
	{ "x=+0($filename):u8[z]", -EINVAL, "Invalid array size", 19 },
	{ "x=+0($filename):u8[65]", -EINVAL, "Array number is too big", 19 },
	{ "x=$fd:u8[2]", -EINVAL, "String accepts only memory argument", 6 },
	{ "x=$comm:string[2]", -EINVAL, "String accepts only memory argument", 8 },
	{ "x=+0$fd", -EINVAL, "Dereference needs a brace", 2 },
	{ "x=+z($fd)", -EINVAL, "Invalid dereference offset", 2 },
	{ "x=+($fd)", -EINVAL, "Invalid dereference offset", 2 },
	{ "x=--1($fd)", -EINVAL, "Invalid dereference offset", 2 },
	{ "x=+0($fd", -EINVAL, "Dereference brace is not closed", 8 },
	{ "x=+0(%ax)", -EINVAL, "Invalid $-valiable specified", 5 },
	{ "x=-16(%ax)", -EINVAL, "Invalid $-valiable specified", 6 },
	{ "x=+u0(%ax)", -EINVAL, "Invalid $-valiable specified", 5 },	/* kernel's caret */
	{ "x=+0()", -EINVAL, "Invalid fetch argument", 5 },
	{ "x=foo", -EINVAL, "Invalid fetch argument", 2 },
	{ "x=123", -EINVAL, "Invalid fetch argument", 2 },
	{ "+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0($fd)))))))))))))))", -EINVAL,
	  "Dereference is too much nested", 3 },
	{ "x=\\\"abc", -EINVAL, "String is not closed with '\"'", 7 },
	{ "x=\\\"", -EINVAL, "String is not closed with '\"'", 4 },
	{ "x=\\\"abc\":u32", -EINVAL, "$comm and immediate-string only accepts string type", 9 },
	{ "x=\\abc", -EINVAL, "Invalid immediate value", 3 },
	{ "x=\\", -EINVAL, "Invalid immediate value", 3 },
	{ "x=+0(\\\"abc\")", -EINVAL, "$comm can not be dereferenced", 5 },
	{ "x=$COMM:u32", -EINVAL, "$comm and immediate-string only accepts string type", 8 },
	{ "x=$COMM:string[1]", -EINVAL, "$comm and immediate-string only accepts string type", 8 },
	{ "x=+0($COMM)", -EINVAL, "$comm can not be dereferenced", 5 },
	{ "x=$flags:b0@0/32", -EINVAL, "Invalid bitfield", 9 },
	{ "x=$flags:b4@29/32", -EINVAL, "Invalid bitfield", 9 },
	{ "x=$flags:b4/32", -EINVAL, "Invalid bitfield", 9 },
	{ "x=$flags:b4@/32", -EINVAL, "Invalid bitfield", 9 },
	{ "x=$flags:b18446744073709551615@2/8", -EINVAL, "Invalid bitfield", 9 },
	{ "x=$flags:b4@0/12", -EINVAL, "Unknown type is specified", 9 },
	{ "x=$flags:b4@0", -EINVAL, "Unknown type is specified", 9 },
};

TEST(errors_with_kernel_messages_and_carets)
{
	for (size_t i = 0; i < sizeof(bad_words) / sizeof(bad_words[0]); i++) {
		const char *const argv[] = { "ok=$fd", bad_words[i].word };
		struct uks_probe_args *pa = (void *)1;
		struct uks_probe_error err;
		int ret = __uks_trace_probe_args_parse(2, argv, ev_fields, NR_FIELDS, 12, &pa,
						       &err);

		if (ret != bad_words[i].ret || !err.msg || strcmp(err.msg, bad_words[i].msg) ||
		    err.offset != bad_words[i].offset || err.arg != 1)
			TH_LOG("word %zu \"%s\": %d \"%s\" at %d:%d", i, bad_words[i].word, ret,
			       err.msg ? err.msg : "(null)", err.arg, err.offset);
		EXPECT_EQ(bad_words[i].ret, ret);
		ASSERT_NONNULL(err.msg);
		EXPECT_STREQ(bad_words[i].msg, err.msg);
		EXPECT_EQ(bad_words[i].offset, err.offset);
		EXPECT_EQ(1, err.arg);
		EXPECT_NULL(pa);
	}
}

TEST(names_defaults_duplicates_and_limits)
{
	const char *dup[] = { "$fd", "arg1=$val" };
	const char *dup2[] = { "a=$fd", "a=$val" };
	const char *ok[] = { "abcdefghijklmnopqrstuvwxyz012345=$fd", "$val", "_x=$fd",
			     "+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0($fd))))))))))))))",
			     "y=+0($filename):u8[64]" };
	const char *many[129];
	struct uks_probe_args *pa;
	struct uks_probe_error err;

	EXPECT_EQ(-EINVAL,
		  __uks_trace_probe_args_parse(2, dup, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_STREQ("This argument name is already used", err.msg);
	EXPECT_EQ(1, err.arg);
	EXPECT_EQ(-EINVAL,
		  __uks_trace_probe_args_parse(2, dup2, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_EQ(1, err.arg);
	ASSERT_EQ(0, __uks_trace_probe_args_parse(5, ok, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_STREQ("arg2=$val", __uks_trace_probe_args_text(pa, 1));
	EXPECT_STREQ("_x=$fd", __uks_trace_probe_args_text(pa, 2));
	EXPECT_EQ(12u + 8 * 4 + 64, __uks_trace_probe_args_fixed_size(pa));
	__uks_trace_probe_args_free(pa);
	for (int i = 0; i < 129; i++)
		many[i] = "$fd";
	EXPECT_EQ(-E2BIG,
		  __uks_trace_probe_args_parse(129, many, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_STREQ("Too many arguments are specified", err.msg);
	EXPECT_EQ(-ENOENT, __uks_trace_probe_args_parse(128, many, NULL, 0, 12, &pa, &err));
	/* 128 unnamed $fd words are fine: names arg1..arg128 differ. */
	ASSERT_EQ(0, __uks_trace_probe_args_parse(128, many, ev_fields, NR_FIELDS, 12, &pa, &err));
	EXPECT_EQ(12u + 128 * 8, __uks_trace_probe_args_fixed_size(pa));
	EXPECT_STREQ("arg128=$fd", __uks_trace_probe_args_text(pa, 127));
	__uks_trace_probe_args_free(pa);
	EXPECT_EQ(-EINVAL,
		  __uks_trace_probe_args_parse(-1, many, ev_fields, NR_FIELDS, 12, &pa, &err));
	__uks_trace_probe_args_free(NULL);
}

/* A tiny PRNG: deterministic garbage. */
static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

TEST(garbage_words_do_not_crash)
{
	static const char alphabet[] = "+-u0x19()$%@\\\":[]b/@fdvalcomCOMMstringu8s64x16=_";
	static const char *const pieces[] = {
		"$fd", "$val", "$comm", "$name", "+0(", ")", ":string", ":u8[3]", ":b3@1/8",
		"\\\"", "-8(", "+u4(", "$COMM", ":x64", "[", "]", "=", "\\0x10",
	};
	uint32_t seed = 0x12345678;
	struct src s;
	uint8_t junk[96];

	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (uint8_t)rnd(&seed);
	src_init(&s, 5, path, "c", "n", (uint64_t)(uintptr_t)path);
	for (int iter = 0; iter < 3000; iter++) {
		char word[96];
		size_t n = 0, len = rnd(&seed) % 12;
		const char *argv[1] = { word };
		struct uks_probe_args *pa;
		struct uks_probe_error err;

		for (size_t k = 0; k < len && n < sizeof(word) - 12; k++) {
			if (rnd(&seed) & 1) {
				const char *p = pieces[rnd(&seed) % (sizeof(pieces) / sizeof(pieces[0]))];

				memcpy(word + n, p, strlen(p));
				n += strlen(p);
			} else {
				word[n++] = alphabet[rnd(&seed) % (sizeof(alphabet) - 1)];
			}
		}
		word[n] = 0;
		if (__uks_trace_probe_args_parse(1, argv, ev_fields, NR_FIELDS, 12, &pa, &err)) {
			ASSERT_NONNULL(err.msg);
			ASSERT_GE(err.offset, 0);
			ASSERT_LE(err.offset, (int)n + 1);
			continue;
		}
		{
			size_t fixed = __uks_trace_probe_args_fixed_size(pa);
			size_t dyn = __uks_trace_probe_args_dynamic_size(pa, s.b, s.len, 0);
			uint8_t *rec = calloc(1, fixed + dyn);
			struct uks_seq seq = UKS_SEQ_INIT;

			__uks_trace_probe_args_store(pa, s.b, s.len, 0, rec, fixed + dyn);
			__uks_trace_probe_args_print(pa, rec, fixed + dyn, &seq);
			/* And a record of junk: bounds come from rec_len alone. */
			__uks_trace_probe_args_print(pa, junk,
						     sizeof(junk) < fixed ? sizeof(junk) : fixed,
						     &seq);
			__uks_trace_probe_args_store(pa, junk, sizeof(junk), 0, rec, fixed + dyn);
			__uks_trace_probe_args_print_fmt(pa, &seq);
			ASSERT_FALSE(seq.overflow);
			seq_free(&seq);
			free(rec);
			__uks_trace_probe_args_free(pa);
		}
	}
}

TEST_HARNESS_MAIN
