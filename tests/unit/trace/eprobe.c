// SPDX-License-Identifier: MIT
/*
 * Event probes through dynamic_events: creation, listing, format, the
 * soft-enabled attached event, output, filters, removal rules, and every
 * error with its error_log text and caret.
 */
#include <fcntl.h>
#include <regex.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include "unit/trace/tracefs_events.h"
#include "harness.h"
#include "unit/tracefs_io.h"

/* The error_log entry without its timestamp. */
static const char *last_error(struct uks_trace *tr)
{
	const char *log = rd(tr, "error_log"), *last = NULL, *p = log;

	while ((p = strstr(p, "] ")))
		last = p++ + 2;
	return last ? last : "<none>";
}

FIXTURE(ep) {
	struct uks_trace *tr;
};

FIXTURE_SETUP(ep)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
}

FIXTURE_TEARDOWN(ep)
{
	wr(self->tr, "events/eprobes/enable", "0");
	uks_tracefs_write_str(self->tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
	uks_trace_destroy(self->tr);
}

TEST_F(ep, create_list_format)
{
	struct uks_trace *tr = self->tr;
	char expect[2048], id[16];

	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:myopen uks_test/open fd=$fd name=+0($name_ptr):ustring f=$flags:u32"));
	ASSERT_STREQ("e:eprobes/myopen uks_test.open fd=$fd name=+0($name_ptr):ustring f=$flags:u32\n",
		     rd(tr, "dynamic_events"));
	snprintf(id, sizeof(id), "%.15s", rd(tr, "events/eprobes/myopen/id"));
	snprintf(expect, sizeof(expect),
		 "name: myopen\nID: %d\nformat:\n"
		 "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
		 "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
		 "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
		 "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		 "\tfield:unsigned int __probe_type;\toffset:8;\tsize:4;\tsigned:0;\n"
		 "\tfield:u64 fd;\toffset:12;\tsize:8;\tsigned:0;\n"
		 "\tfield:__data_loc char[] name;\toffset:20;\tsize:4;\tsigned:1;\n"
		 "\tfield:u32 f;\toffset:24;\tsize:4;\tsigned:0;\n\n"
		 "print fmt: \"(%%u) fd=0x%%Lx name=\\\"%%s\\\" f=%%u\", REC->__probe_type, REC->fd, "
		 "__get_str(name), REC->f\n", atoi(id));
	ASSERT_STREQ(expect, rd(tr, "events/eprobes/myopen/format"));
	ASSERT_NE(NULL, strstr(rd(tr, "available_events"), "eprobes:myopen\n"));
}

TEST_F(ep, dot_or_slash_and_default_names)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e uks_test.open $fd"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:grp/named uks_other/ping v=$v:s64"));
	/* 5.15 default: the sanitized attach target (6.1: the event's name) */
	ASSERT_STREQ("e:eprobes/uks_test_open uks_test.open arg1=$fd\n"
		     "e:grp/named uks_other.ping v=$v:s64\n", rd(tr, "dynamic_events"));
	ASSERT_EQ(UKS_TRACEFS_DIR, uks_tracefs_stat(tr, "events/grp/named", NULL));
}

/* 6.x: "e:GRP/ ..." takes the attached event's name; "-:GRP/" removes the group. */
TEST_F(ep, group_only_names_and_group_removal)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:mygroup/ uks_other/ping v=$v"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:mygroup/open uks_test/open $fd"));
	ASSERT_STREQ("e:mygroup/ping uks_other.ping v=$v\n"
		     "e:mygroup/open uks_test.open arg1=$fd\n", rd(tr, "dynamic_events"));
	ASSERT_EQ(-ENOENT, wr(tr, "dynamic_events", "-:nogroup/"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "-:mygroup/"));
	ASSERT_STREQ("", rd(tr, "dynamic_events"));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(tr, "events/mygroup", NULL));
}

/* 6.1: "if FILTER" runs on the attached event's record. */
TEST_F(ep, filter_on_the_attached_record)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:big uks_other/ping v=$v:s64 if v > 10 && v < 100"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/big/enable", "1"));
	uks_trace_uks_other_ping(5);
	uks_trace_uks_other_ping(50);
	uks_trace_uks_other_ping(500);
	rd(tr, "trace_pipe");
	ASSERT_NE(NULL, strstr(out, "big: (uks_other.ping) v=50\n"));
	ASSERT_EQ(NULL, strstr(out, "v=5\n"));
	ASSERT_EQ(NULL, strstr(out, "v=500\n"));
	/* The filter is not part of the listing, as the kernel's. */
	ASSERT_STREQ("e:eprobes/big uks_other.ping v=$v:s64\n", rd(tr, "dynamic_events"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/big/enable", "0"));
}

TEST_F(ep, enable_soft_enables_the_attached_event)
{
	struct uks_trace *tr = self->tr;
	static const char path[] = "/etc/hosts";
	regex_t re;

	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:myopen uks_test/open fd=$fd name=+0($name_ptr):ustring f=$flags:u32"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/myopen/enable", "1"));
	ASSERT_STREQ("1\n", rd(tr, "events/eprobes/myopen/enable"));
	ASSERT_STREQ("0*\n", rd(tr, "events/uks_test/open/enable"));
	uks_trace_uks_test_open(5, path, 0x42);
	/* Only the eprobe is recorded, in the 5.15 form. */
	regcomp(&re, "^ +[^ ]+-[0-9]+ +\\[[0-9]{3}\\] \\.\\.\\.\\.\\. +[0-9]+\\.[0-9]{6}: "
		     "myopen: \\(uks_test\\.open\\) fd=0x5 name=\"/etc/hosts\" f=66\n$",
		REG_EXTENDED);
	ASSERT_EQ(0, regexec(&re, rd(tr, "trace_pipe"), 0, NULL, 0));
	regfree(&re);
	/* Enabling the attached event too records both. */
	ASSERT_EQ(0, wr(tr, "events/uks_test/open/enable", "1"));
	ASSERT_STREQ("1*\n", rd(tr, "events/uks_test/open/enable"));
	uks_trace_uks_test_open(6, path, 0);
	rd(tr, "trace_pipe");
	ASSERT_NE(NULL, strstr(out, "open: fd=6 filename=/etc/hosts"));
	ASSERT_NE(NULL, strstr(out, "myopen: (uks_test.open) fd=0x6"));
	{
		/* One hit, one clock reading: both records carry the same time. */
		const char *a = strstr(out, ": open: "), *b = strstr(out, ": myopen: ");

		ASSERT_TRUE(a && b && a - out > 13 && b - out > 13);
		ASSERT_EQ(0, strncmp(a - 13, b - 13, 13));
	}
	ASSERT_EQ(0, wr(tr, "events/eprobes/myopen/enable", "0"));
	ASSERT_STREQ("1\n", rd(tr, "events/uks_test/open/enable"));
}

TEST_F(ep, faulting_dereference_prints_fault)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:bad uks_test/open s=+0($fd):string"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/bad/enable", "1"));
	uks_trace_uks_test_open(8, "x", 0);	/* fd 8 is no address */
	ASSERT_NE(NULL, strstr(rd(tr, "trace_pipe"), "bad: (uks_test.open) s=(fault)\n"));
}

TEST_F(ep, eprobe_filter)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:f uks_other/ping v=$v:s64"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/f/filter", "v > 10"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/f/enable", "1"));
	uks_trace_uks_other_ping(5);
	uks_trace_uks_other_ping(50);
	rd(tr, "trace_pipe");
	ASSERT_NE(NULL, strstr(out, "f: (uks_other.ping) v=50\n"));
	ASSERT_EQ(NULL, strstr(out, "v=5\n"));
}

TEST_F(ep, removal_rules)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:a uks_other/ping v=$v"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:b uks_other/ping v=$v"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/a/enable", "1"));
	ASSERT_EQ(-EBUSY, wr(tr, "dynamic_events", "-:a"));
	/* "> dynamic_events" is all or nothing */
	ASSERT_EQ(-EBUSY, uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC));
	ASSERT_NE(NULL, strstr(rd(tr, "dynamic_events"), "e:eprobes/b "));
	ASSERT_EQ(0, wr(tr, "events/eprobes/a/enable", "0"));
	ASSERT_STREQ("0\n", rd(tr, "events/uks_other/ping/enable"));
	/* With the attached event: must match exactly */
	ASSERT_EQ(-ENOENT, wr(tr, "dynamic_events", "-:a uks_other/pin"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "-:eprobes/a uks_other/ping"));
	ASSERT_EQ(-ENOENT, uks_tracefs_stat(tr, "events/eprobes/a", NULL));
	ASSERT_EQ(-ENOENT, wr(tr, "dynamic_events", "-:a"));
	ASSERT_EQ(-EINVAL, wr(tr, "dynamic_events", "-a"));
	ASSERT_EQ(0, uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC));
	ASSERT_STREQ("", rd(tr, "dynamic_events"));
}

/* Later kernels' rule: removing dynamic events clears the buffers. */
TEST_F(ep, removal_clears_the_buffers)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:gone uks_other/ping v=$v"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/gone/enable", "1"));
	uks_trace_uks_other_ping(3);
	ASSERT_NE(NULL, strstr(rd(tr, "trace"), "gone: (uks_other.ping) v=0x3\n"));
	ASSERT_EQ(0, wr(tr, "events/eprobes/gone/enable", "0"));
	ASSERT_EQ(0, wr(tr, "dynamic_events", "-:gone"));
	rd(tr, "trace");
	ASSERT_EQ(NULL, strstr(out, "Unknown type"));
	ASSERT_NE(NULL, strstr(out, "entries-in-buffer/entries-written: 0/0 "));
}

TEST_F(ep, several_commands_and_comments)
{
	struct uks_trace *tr = self->tr;

	ASSERT_EQ(0, wr(tr, "dynamic_events", "# a comment\ne:x uks_other/ping\ne:y uks_other/ping # c\n"));
	ASSERT_STREQ("e:eprobes/x uks_other.ping\ne:eprobes/y uks_other.ping\n",
		     rd(tr, "dynamic_events"));
}

struct err_case {
	const char *cmd;
	int ret;
	const char *log;	/* error text, command, caret line; NULL: no entry */
};

TEST_F(ep, errors_and_carets)
{
	static const struct err_case cases[] = {
		{ "e:foo/bar a.b", -ENODEV,
		  "event_probe: error: Attached event does not exist\n"
		  "  Command: e:foo/bar a.b\n                     ^\n" },
		{ "e:1bad uks_other/ping", -EINVAL,
		  "event_probe: error: Event name must follow the same rules as C identifiers\n"
		  "  Command: e:1bad uks_other/ping\n             ^\n" },
		{ "e:g-x/ok uks_other/ping", -EINVAL,
		  "event_probe: error: Group name must follow the same rules as C identifiers\n"
		  "  Command: e:g-x/ok uks_other/ping\n             ^\n" },
		{ "e:/ok uks_other/ping", -EINVAL,
		  "event_probe: error: Group name is not specified\n"
		  "  Command: e:/ok uks_other/ping\n             ^\n" },
		/* 6.x: the attach target lacks its event or its group (NO_EVENT_INFO) */
		{ "e a.", -EINVAL,
		  "event_probe: error: This requires both group and event name to attach\n"
		  "  Command: e a.\n" "             ^\n" },
		{ "e .b", -EINVAL,
		  "event_probe: error: This requires both group and event name to attach\n"
		  "  Command: e .b\n" "             ^\n" },
		{ "e:g/ uks_other/ping arg=$v if", -EINVAL,
		  "event_probe: error: No filter rule after 'if'\n"
		  "  Command: e:g/ uks_other/ping arg=$v if\n"
		  "                                         ^\n" },
		{ "e:g/ uks_other/ping arg=$v if nosuch == 1", -EINVAL,
		  "event filter parse error: error: Field not found\n"
		  "  Command: nosuch == 1\n                  ^\n" },
		{ "e:ok ping", -EINVAL,
		  "event_probe: error: This requires both group and event name to attach\n"
		  "  Command: e:ok ping\n                ^\n" },
		{ "e:ok uks_other/ping", 0, NULL },
		{ "e:ok uks_other/ping", -EEXIST,
		  "event_probe: error: Given group/event name is already used by another event\n"
		  "  Command: e:ok uks_other/ping\n           ^\n" },
		{ "e:ep2 eprobes/ok", -ENODEV,
		  "event_probe: error: Attached event does not exist\n"
		  "  Command: e:ep2 eprobes/ok\n                 ^\n" },
		{ "e:p2 ftrace/print", -ENODEV, NULL },
		{ "p:kp do_sys_open", -EINVAL, NULL },
	};
	struct uks_trace *tr = self->tr;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct err_case *c = &cases[i];

		uks_tracefs_write_str(tr, "error_log", "", UKS_TRACEFS_TRUNC);
		TH_LOG("%s", c->cmd);
		ASSERT_EQ(c->ret, wr(tr, "dynamic_events", c->cmd));
		if (c->log)
			ASSERT_STREQ(c->log, last_error(tr));
	}
}

TEST_F(ep, bad_fetch_args_are_logged)
{
	struct uks_trace *tr = self->tr;
	const char *e;

	ASSERT_EQ(-ENOENT, wr(tr, "dynamic_events", "e:x uks_other/ping v=$nosuch"));
	e = last_error(tr);
	ASSERT_NE(NULL, strstr(e, "  Command: e:x uks_other/ping v=$nosuch\n"));
	ASSERT_EQ(-EINVAL, wr(tr, "dynamic_events", "e:x uks_other/ping v=$v:u128"));
	ASSERT_NE(NULL, strstr(last_error(tr), "event_probe: error: "));
	ASSERT_EQ(-EINVAL, wr(tr, "dynamic_events", "e:x uks_other/ping v=%ax"));
	ASSERT_EQ(-EINVAL, wr(tr, "dynamic_events", "e:x uks_other/ping v=@sym"));
	ASSERT_EQ(-EINVAL, wr(tr, "dynamic_events", "e:x uks_other/ping v=$stack"));
	ASSERT_STREQ("", rd(tr, "dynamic_events"));
}

TEST_F(ep, garbage_commands_do_not_crash)
{
	struct uks_trace *tr = self->tr;
	char cmd[256];
	unsigned int seed = 1;

	for (int i = 0; i < 2000; i++) {
		size_t n = rand_r(&seed) % (sizeof(cmd) - 1);

		for (size_t j = 0; j < n; j++)
			cmd[j] = (char)(rand_r(&seed) % 95 + 32);
		cmd[0] = "e-e:"[rand_r(&seed) % 4];
		cmd[n] = '\0';
		wr(tr, "dynamic_events", cmd);
	}
	uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
	ASSERT_STREQ("", rd(tr, "dynamic_events"));
}

TEST_HARNESS_MAIN
