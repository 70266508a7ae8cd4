// SPDX-License-Identifier: MIT
/*
 * trace_options and options/: the kernel's 6.12 list, order and defaults
 * (a kernel without function tracing), the nop tracer's test options, the
 * files an instance lacks, and the output options that replace a line
 * (raw, hex, bin, printk-msg-only) with the kernel's texts.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"

#define DEFAULTS \
	"print-parent\nnosym-offset\nnosym-addr\nnoverbose\nnoraw\nnohex\nnobin\nnoblock\n" \
	"nofields\ntrace_printk\nannotate\nnouserstacktrace\nnosym-userobj\n" \
	"noprintk-msg-only\ncontext-info\nnolatency-format\nrecord-cmd\nnorecord-tgid\n" \
	"overwrite\nnodisable_on_free\nirq-info\nmarkers\nnoevent-fork\nnopause-on-trace\n" \
	"hash-ptr\nnostacktrace\nnotest_nop_accept\nnotest_nop_refuse\n"

FIXTURE(opts) {
	struct uks_trace *tr;
	char list[4096];
};

FIXTURE_SETUP(opts)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	self->list[0] = '\0';
}

FIXTURE_TEARDOWN(opts)
{
	uks_trace_destroy(self->tr);
}

static int collect(const char *name, enum uks_tracefs_type type, void *arg)
{
	strcat(arg, name);
	strcat(arg, " ");
	return 0;
}

TEST_F(opts, the_kernel_list_in_order)
{
	ASSERT_STREQ(DEFAULTS, rd(self->tr, "trace_options"));
	ASSERT_EQ(0, uks_tracefs_list(self->tr, "options", collect, self->list));
	ASSERT_STREQ("print-parent sym-offset sym-addr verbose raw hex bin block fields "
		     "trace_printk annotate userstacktrace sym-userobj printk-msg-only "
		     "context-info latency-format record-cmd record-tgid overwrite "
		     "disable_on_free irq-info markers event-fork pause-on-trace hash-ptr "
		     "stacktrace test_nop_accept test_nop_refuse ", self->list);
	ASSERT_STREQ("1\n", rd(self->tr, "options/hash-ptr"));
	ASSERT_STREQ("0\n", rd(self->tr, "options/pause-on-trace"));
}

TEST_F(opts, instance_lacks_the_top_level_ones)
{
	struct uks_trace *inst;
	unsigned int mode;

	ASSERT_EQ(0, uks_trace_create("optinst", &inst));
	ASSERT_EQ(0, uks_tracefs_list(inst, "options", collect, self->list));
	ASSERT_EQ(NULL, strstr(self->list, "trace_printk "));
	ASSERT_EQ(NULL, strstr(self->list, "printk-msg-only "));
	ASSERT_EQ(NULL, strstr(self->list, "record-cmd "));
	ASSERT_NE(NULL, strstr(self->list, "record-tgid "));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(inst, "options/record-cmd", &mode));
	/* trace_options still lists them all. */
	ASSERT_STREQ(DEFAULTS, rd(inst, "trace_options"));
	uks_trace_destroy(inst);
}

TEST_F(opts, nop_tracer_accepts_and_refuses)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "trace_options", "test_nop_accept"));
	ASSERT_STREQ("1\n", rd(tr, "options/test_nop_accept"));
	ASSERT_EQ(0, wr(tr, "options/test_nop_accept", "0"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "test_nop_refuse"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "notest_nop_refuse"));
	ASSERT_EQ(-EINVAL, wr(tr, "options/test_nop_refuse", "1"));
	ASSERT_EQ(0, wr(tr, "options/test_nop_refuse", "0"));	/* no change: not asked */
	ASSERT_STREQ("0\n", rd(tr, "options/test_nop_refuse"));
}

TEST_F(opts, every_option_sets_and_clears)
{
	struct uks_trace *tr = self->tr;
	char *save = NULL, *word;

	strcpy(self->list, DEFAULTS);
	for (word = strtok_r(self->list, "\n", &save); word; word = strtok_r(NULL, "\n", &save)) {
		const char *name = strncmp(word, "no", 2) ? word : word + 2;
		char path[64], neg[64];

		if (!strcmp(name, "test_nop_refuse"))
			continue;
		snprintf(path, sizeof(path), "options/%s", name);
		snprintf(neg, sizeof(neg), "no%s", name);
		ASSERT_EQ(0, wr(tr, "trace_options", name));
		ASSERT_STREQ("1\n", rd(tr, path));
		ASSERT_EQ(0, wr(tr, "trace_options", neg));
		ASSERT_STREQ("0\n", rd(tr, path));
		ASSERT_EQ(0, wr(tr, path, "1"));
		ASSERT_EQ(0, wr(tr, path, "0"));
	}
}

TEST_F(opts, garbage_writes)
{
	struct uks_trace *tr = self->tr;
	char big[80];

	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", big));	/* past the kernel's 64 bytes */
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "verbose raw"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "no"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "nonoverbose"));
	ASSERT_EQ(-EINVAL, wr(tr, "trace_options", "\xff"));
	ASSERT_EQ(-EINVAL, wr(tr, "options/raw", "2"));
	ASSERT_EQ(-EINVAL, wr(tr, "options/raw", "yes"));
	ASSERT_EQ(-EINVAL, wr(tr, "options/raw", "\n"));
	ASSERT_STREQ(DEFAULTS, rd(tr, "trace_options"));
}

/* One ping from this thread, then the trace_pipe text. */
static const char *one_ping(struct uks_trace *tr)
{
	wrt(tr, "trace", "");
	uks_trace_uks_other_ping(3);
	wr(tr, "trace_marker", "hello");
	return rd(tr, "trace_pipe");
}

TEST_F(opts, raw_hex_bin_and_msg_only_lines)
{
	struct uks_trace *tr = self->tr;
	char want[256];
	int id;

	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	id = atoi(rd(tr, "events/uks_other/ping/id"));
	ASSERT_EQ(0, wr(tr, "trace_options", "nocontext-info"));
	ASSERT_EQ(0, wr(tr, "trace_options", "raw"));
	/* trace_marker's raw printer shows its ip (0 here) and text. */
	snprintf(want, sizeof(want), "type: %d\n# 0 hello\n", id);
	ASSERT_STREQ(want, one_ping(tr));
	ASSERT_EQ(0, wr(tr, "trace_options", "hex"));
	snprintf(want, sizeof(want), "type: %d\n\ntype: 5\n\n", id);
	ASSERT_STREQ(want, one_ping(tr));
	ASSERT_EQ(0, wr(tr, "trace_options", "bin"));
	snprintf(want, sizeof(want), "type: %d\ntype: 5\n", id);
	ASSERT_STREQ(want, one_ping(tr));
	ASSERT_EQ(0, wr(tr, "trace_options", "printk-msg-only"));
	snprintf(want, sizeof(want), "type: %d\nhello\n", id);
	ASSERT_STREQ(want, one_ping(tr));
	ASSERT_EQ(0, wr(tr, "trace_options", "nobin"));
	ASSERT_EQ(0, wr(tr, "trace_options", "nohex"));
	ASSERT_EQ(0, wr(tr, "trace_options", "noraw"));
	ASSERT_EQ(0, wr(tr, "trace_options", "noprintk-msg-only"));
	ASSERT_STREQ("ping: v=3\ntracing_mark_write: hello\n", one_ping(tr));
}

TEST_F(opts, raw_and_hex_context)
{
	struct uks_trace *tr = self->tr;
	char want[64];
	int tid = (int)syscall(SYS_gettid);

	ASSERT_EQ(0, wr(tr, "set_event", "uks_other:ping"));
	ASSERT_EQ(0, wr(tr, "trace_options", "raw"));
	snprintf(want, sizeof(want), "%d ", tid);
	ASSERT_EQ(0, strncmp(one_ping(tr), want, strlen(want)));
	ASSERT_EQ(0, wr(tr, "trace_options", "hex"));
	snprintf(want, sizeof(want), "%08x ", tid);
	ASSERT_EQ(0, strncmp(one_ping(tr), want, strlen(want)));
	/* pid, cpu, ts: 8 + 1 + 8 + 1 + 16 + 1 characters before "type:" */
	ASSERT_EQ(0, strncmp(out + 35, "type: ", 6));
}

TEST_HARNESS_MAIN
