// SPDX-License-Identifier: MIT
/*
 * trace_marker_raw and trace_marker's count, as the kernel answers: a raw
 * record is a tag and bytes (ftrace:raw_data, id 18, its format and its
 * "# TAG buf: .." line); too short, too long or markers off is -EINVAL.
 * A trace_marker line longer than an event takes what fits and says so in
 * its count, so the writer's next write carries the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/trace.h>

#include "harness.h"
#include "unit/tracefs_io.h"

FIXTURE(mraw) {
	struct uks_trace *tr;
	struct uks_tracefs_file *f;
};

FIXTURE_SETUP(mraw)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	ASSERT_EQ(0, wr(self->tr, "trace_options", "nocontext-info"));
	self->f = NULL;
}

FIXTURE_TEARDOWN(mraw)
{
	uks_tracefs_close(self->f);
	uks_trace_destroy(self->tr);
}

static ssize_t put(struct uks_trace *tr, struct uks_tracefs_file **f, const char *path,
		   const void *buf, size_t len)
{
	if (!*f && uks_tracefs_open(tr, path, O_WRONLY, f))
		return -999;
	return uks_tracefs_write(*f, buf, len);
}

TEST_F(mraw, record_format_and_line)
{
	const unsigned char rec[] = { 0x34, 0x12, 0, 0, 0xde, 0xad };

	ASSERT_EQ(6, put(self->tr, &self->f, "trace_marker_raw", rec, sizeof(rec)));
	/*
	 * The kernel reserves room for "<faulted>" after the tag and prints
	 * the whole record (its ring buffer rounds to 4 bytes, ours to 8):
	 * here the room reads as zeroes.
	 */
	ASSERT_STREQ("# 1234 buf: de ad 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n",
		     rd(self->tr, "trace_pipe"));
	ASSERT_STREQ("name: raw_data\nID: 18\nformat:\n"
		     "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		     "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		     "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		     "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		     "\tfield:unsigned int id;\toffset:8;\tsize:4;\tsigned:0;\n"
		     "\tfield:char buf[];\toffset:12;\tsize:0;\tsigned:0;\n\n"
		     "print fmt: \"id:%04x %08x\", REC->id, (int)REC->buf[0]\n",
		     rd(self->tr, "events/ftrace/raw_data/format"));
	ASSERT_EQ(0, wr(self->tr, "trace_options", "raw"));
	ASSERT_EQ(4, put(self->tr, &self->f, "trace_marker_raw", rec, 4));
	ASSERT_STREQ("# 1234 buf: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00\n",
		     rd(self->tr, "trace_pipe"));
}

TEST_F(mraw, refusals)
{
	static char big[8192];

	ASSERT_EQ(-EINVAL, put(self->tr, &self->f, "trace_marker_raw", "abc", 3));
	ASSERT_EQ(-EINVAL, put(self->tr, &self->f, "trace_marker_raw", big, sizeof(big)));
	ASSERT_EQ(-EINVAL, put(self->tr, &self->f, "trace_marker_raw", big, 4090));
	ASSERT_EQ(0, wr(self->tr, "options/markers", "0"));
	ASSERT_EQ(-EINVAL, put(self->tr, &self->f, "trace_marker_raw", "abcd", 4));
	ASSERT_EQ(0, wr(self->tr, "options/markers", "1"));
	ASSERT_EQ(0, wr(self->tr, "tracing_on", "0"));
	ASSERT_EQ(-EBADF, put(self->tr, &self->f, "trace_marker_raw", "abcd", 4));
	ASSERT_STREQ("", rd(self->tr, "trace_pipe"));
}

TEST_F(mraw, long_marker_takes_what_fits)
{
	static char line[5000];
	ssize_t n;

	memset(line, 'X', sizeof(line));
	n = put(self->tr, &self->f, "trace_marker", line, sizeof(line));
	ASSERT_GT(n, 1000);
	ASSERT_LT(n, 4096);
	ASSERT_EQ((ssize_t)sizeof(line) - n,
		  uks_tracefs_write(self->f, line + n, sizeof(line) - (size_t)n));
	rd(self->tr, "trace_pipe");
	/* Two lines whose texts make the whole write. */
	ASSERT_EQ(0, strncmp(out, "tracing_mark_write: X", 21));
	ASSERT_EQ((size_t)2 * strlen("tracing_mark_write: \n") + sizeof(line), strlen(out));
}

TEST_HARNESS_MAIN
