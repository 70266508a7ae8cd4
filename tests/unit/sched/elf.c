// SPDX-License-Identifier: MIT
/*
 * The ELF header reader: class, byte order, machine and PT_INTERP of
 * hand-built 32- and 64-bit headers and of real programs, and garbage
 * input (random bytes, every truncation of a valid header, offsets that
 * point outside the buffer) that must fail with -ENOEXEC or parse with
 * every reported offset inside the buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uks/sched.h>

#include "harness.h"

/* A 64-bit little-endian ET_DYN with one PT_INTERP naming "/ld.so". */
static size_t build64(unsigned char *b)
{
	memset(b, 0, 256);
	memcpy(b, "\177ELF\2\1\1", 7);
	b[16] = 3;		/* ET_DYN */
	b[18] = 62;		/* EM_X86_64 */
	b[32] = 64;		/* e_phoff */
	b[54] = 56;		/* e_phentsize */
	b[56] = 1;		/* e_phnum */
	b[64] = 3;		/* PT_INTERP */
	b[64 + 8] = 128;	/* p_offset */
	b[64 + 32] = 7;		/* p_filesz */
	memcpy(b + 128, "/ld.so", 7);
	return 160;
}

/* A 32-bit big-endian ET_EXEC (ARM) with PT_LOAD then PT_INTERP. */
static size_t build32be(unsigned char *b)
{
	memset(b, 0, 256);
	memcpy(b, "\177ELF\1\2\1", 7);
	b[17] = 2;		/* ET_EXEC */
	b[19] = 40;		/* EM_ARM */
	b[31] = 52;		/* e_phoff */
	b[43] = 32;		/* e_phentsize */
	b[45] = 2;		/* e_phnum */
	b[52 + 3] = 1;		/* PT_LOAD */
	b[84 + 3] = 3;		/* PT_INTERP */
	b[84 + 7] = 200;	/* p_offset */
	b[84 + 19] = 4;		/* p_filesz */
	memcpy(b + 200, "/ld", 4);
	return 210;
}

TEST(elf64_header_and_interp)
{
	unsigned char b[256];
	struct uks_elf_info i;

	ASSERT_EQ(uks_elf_parse(b, build64(b), &i), 0);
	EXPECT_EQ(i.elf_class, 64);
	EXPECT_FALSE(i.big_endian);
	EXPECT_EQ(i.type, 3u);
	EXPECT_EQ(i.machine, 62u);
	EXPECT_EQ(i.interp_off, 128u);
	EXPECT_EQ(i.interp_size, 7u);
	EXPECT_STREQ((char *)b + i.interp_off, "/ld.so");
}

TEST(elf32_big_endian)
{
	unsigned char b[256];
	struct uks_elf_info i;

	ASSERT_EQ(uks_elf_parse(b, build32be(b), &i), 0);
	EXPECT_EQ(i.elf_class, 32);
	EXPECT_TRUE(i.big_endian);
	EXPECT_EQ(i.type, 2u);
	EXPECT_EQ(i.machine, 40u);
	EXPECT_EQ(i.phnum, 2u);
	EXPECT_EQ(i.interp_off, 200u);
	EXPECT_STREQ((char *)b + i.interp_off, "/ld");
}

TEST(real_programs)
{
	struct uks_elf_info i;

	ASSERT_EQ(uks_elf_read_file("/proc/self/exe", &i), 0);
	EXPECT_EQ(i.elf_class, (int)(sizeof(void *) * 8));
	EXPECT_EQ(uks_elf_read_file("/nonexistent/x", &i), -ENOENT);
	EXPECT_EQ(uks_elf_read_file("/proc/self/status", &i), -ENOEXEC);
}

TEST(interp_without_nul_or_outside)
{
	unsigned char b[256];
	struct uks_elf_info i;
	size_t n = build64(b);

	b[128 + 6] = 'x';			/* no NUL at the end */
	EXPECT_EQ(uks_elf_parse(b, n, &i), -ENOEXEC);
	build64(b);
	b[64 + 8] = 0xff;			/* offset beyond the buffer */
	b[64 + 9] = 0xff;
	EXPECT_EQ(uks_elf_parse(b, n, &i), -ENOEXEC);
	build64(b);
	memset(b + 64 + 32, 0xff, 8);		/* size wraps */
	EXPECT_EQ(uks_elf_parse(b, n, &i), -ENOEXEC);
	build64(b);
	b[56] = 0xff;				/* phdrs past the end: no interp */
	b[57] = 0xff;
	ASSERT_EQ(uks_elf_parse(b, n, &i), 0);
	EXPECT_TRUE(i.phdrs_truncated);
	EXPECT_EQ(i.interp_size, 0u);
}

TEST(every_truncation)
{
	unsigned char b[256];
	struct uks_elf_info i;
	size_t n = build64(b);

	for (size_t len = 0; len < n; len++) {
		int ret = uks_elf_parse(b, len, &i);

		if (len < 64)
			ASSERT_EQ(ret, -ENOEXEC);
		else if (!ret && i.interp_size)
			ASSERT_LE(i.interp_off + i.interp_size, len);
	}
}

TEST(garbage)
{
	unsigned char b[512];
	struct uks_elf_info i;

	srand(8);
	for (int round = 0; round < 20000; round++) {
		size_t len = (size_t)rand() % sizeof(b);

		for (size_t k = 0; k < len; k++)
			b[k] = (unsigned char)rand();
		if (round & 1 && len >= 7)
			memcpy(b, round & 2 ? "\177ELF\2\1\1" : "\177ELF\1\2\1", 7);
		int ret = uks_elf_parse(b, len, &i);

		if (ret) {
			ASSERT_EQ(ret, -ENOEXEC);
			continue;
		}
		ASSERT_TRUE(i.elf_class == 32 || i.elf_class == 64);
		if (i.interp_size) {
			ASSERT_LE(i.interp_off + i.interp_size, len);
			ASSERT_EQ(b[i.interp_off + i.interp_size - 1], 0);
		}
	}
}

TEST_HARNESS_MAIN
