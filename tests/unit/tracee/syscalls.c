// SPDX-License-Identifier: MIT
/*
 * System-call events from real processes: the format files of
 * syscalls:sys_enter_openat/sys_exit_openat and raw_syscalls:* against the
 * kernel's text, the paths an eprobe reads out of a traced /bin/ls, the
 * trace lines, and that calls without an enabled event never stop.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <uks/trace.h>
#include <uks/tracee.h>

#include "harness.h"
#include "unit/tracefs_io.h"
#include "unit/tracee/helper.h"

/* The format file without its "ID: N" line (ids are the instance's). */
static const char *format_noid(struct uks_trace *tr, const char *event)
{
	char path[128], *id, *nl;

	snprintf(path, sizeof(path), "events/%s/format", event);
	rd(tr, path);
	id = strstr(out, "ID: ");
	if (id && (nl = strchr(id, '\n')))
		memmove(id, nl + 1, strlen(nl + 1) + 1);
	return out;
}

#define COMMON_FIELDS \
	"format:\n" \
	"\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n" \
	"\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n" \
	"\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n" \
	"\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"

FIXTURE(sys) {
	struct uks_trace *tr;
	struct uks_tracee_session *s;
};

FIXTURE_SETUP(sys)
{
	const char *why = tracee_unsupported();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, uks_tracee_session_create(NULL, &self->s));
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
}

FIXTURE_TEARDOWN(sys)
{
	uks_tracee_session_destroy(self->s);
	if (self->tr) {
		wr(self->tr, "events/enable", "0");
		uks_tracefs_write_str(self->tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
		uks_trace_destroy(self->tr);
	}
}

TEST_F(sys, format_files_match_the_kernel)
{
	struct uks_trace *tr = self->tr;

	EXPECT_STREQ("name: sys_enter_openat\n" COMMON_FIELDS
		     "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		     "\tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n"
		     "\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n"
		     "\tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n"
		     "\tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n"
		     "print fmt: \"dfd: 0x%08lx, filename: 0x%08lx, flags: 0x%08lx, mode: 0x%08lx\", "
		     "((unsigned long)(REC->dfd)), ((unsigned long)(REC->filename)), "
		     "((unsigned long)(REC->flags)), ((unsigned long)(REC->mode))\n",
		     format_noid(tr, "syscalls/sys_enter_openat"));
	EXPECT_STREQ("name: sys_exit_openat\n" COMMON_FIELDS
		     "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n"
		     "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
		     "print fmt: \"0x%lx\", REC->ret\n",
		     format_noid(tr, "syscalls/sys_exit_openat"));
	EXPECT_STREQ("name: sys_enter_getpid\n" COMMON_FIELDS
		     "\tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\n"
		     "print fmt: \"\"\n",
		     format_noid(tr, "syscalls/sys_enter_getpid"));
	EXPECT_STREQ("name: sys_enter\n" COMMON_FIELDS
		     "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
		     "\tfield:unsigned long args[6];\toffset:16;\tsize:48;\tsigned:0;\n\n"
		     "print fmt: \"NR %ld (%lx, %lx, %lx, %lx, %lx, %lx)\", REC->id, REC->args[0], "
		     "REC->args[1], REC->args[2], REC->args[3], REC->args[4], REC->args[5]\n",
		     format_noid(tr, "raw_syscalls/sys_enter"));
	EXPECT_STREQ("name: sys_exit\n" COMMON_FIELDS
		     "\tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n"
		     "\tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n"
		     "print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n",
		     format_noid(tr, "raw_syscalls/sys_exit"));
	/* stat's entry point is sys_newstat, so is its event; execve's argv type */
	EXPECT_NE(NULL, strstr(rd(tr, "available_events"), "syscalls:sys_enter_newstat\n"));
	EXPECT_NE(NULL, strstr(format_noid(tr, "syscalls/sys_enter_execve"),
			       "\tfield:const char *const * argv;\toffset:24;\tsize:8;\tsigned:0;\n"));
}

TEST_F(sys, eprobe_reads_paths_from_ls)
{
	struct uks_trace *tr = self->tr;
	static char ls[] = "/bin/ls", root[] = "/";
	char *argv[] = { ls, root, NULL };
	int status = -1, ret;
	pid_t pid;
	char expect[64];

	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/enable", "1"));
	ASSERT_EQ(0, wr(tr, "events/syscalls/sys_exit_openat/enable", "1"));
	int fd1 = fcntl(1, F_DUPFD_CLOEXEC, 3), null = open("/dev/null", O_WRONLY | O_CLOEXEC);

	dup2(null, 1);			/* ls's listing is not TAP */
	ret = uks_tracee_spawn(self->s, argv, &pid);
	dup2(fd1, 1);
	close(fd1);
	close(null);
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	rd(tr, "trace");
	/* the dynamic loader opens the C library by its real path */
	EXPECT_NE(NULL, strstr(out, "eopen: (syscalls.sys_enter_openat) file=\"/etc/ld.so.cache\""));
	EXPECT_NE(NULL, strstr(out, "libc.so.6\""));
	snprintf(expect, sizeof(expect), "ls-%d", (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
	EXPECT_NE(NULL, strstr(out, ": sys_openat -> 0x3\n"));
}

TEST_F(sys, trace_lines_and_only_enabled_calls_stop)
{
	struct uks_trace *tr = self->tr;
	struct uks_tracee_stats st;
	int status = -1;

	ASSERT_EQ(0, wr(tr, "set_event", "syscalls:sys_enter_openat"));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("getpid 5000"), NULL));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	uks_tracee_get_stats(self->s, &st);
	/* 5000 getpid() calls, a few dozen openat() at most (loader, sanitizers) */
	EXPECT_GE(st.seccomp_stops, 3);
	EXPECT_LT(st.seccomp_stops, 1000);
	EXPECT_EQ(0, st.syscall_stops);
	rd(tr, "trace");
	EXPECT_NE(NULL, strstr(out, ": sys_openat(dfd: ffffff9c, filename: "));
	EXPECT_NE(NULL, strstr(out, ", flags: 0, mode: 0)\n"));
	EXPECT_EQ(NULL, strstr(out, "getpid"));
}

TEST_F(sys, raw_syscalls_see_every_call)
{
	struct uks_trace *tr = self->tr;
	struct uks_tracee_stats st;
	int status = -1;

	ASSERT_EQ(0, wr(tr, "set_event", "raw_syscalls:sys_enter"));
	ASSERT_EQ(0, wr(tr, "events/raw_syscalls/sys_enter/filter", "id == 39"));
	ASSERT_EQ(0, wr(tr, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("getpid 100"), NULL));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	uks_tracee_get_stats(self->s, &st);
	EXPECT_GE(st.seccomp_stops, 100);
	rd(tr, "trace");
	EXPECT_NE(NULL, strstr(out, ": sys_enter: NR 39 ("));
	EXPECT_EQ(NULL, strstr(out, "NR 257 "));
}

TEST_F(sys, no_seccomp_steps_and_filters_at_the_stop)
{
	struct uks_tracee_opts o = { .sz = sizeof(o), .flags = UKS_TRACEE_NO_SECCOMP };
	struct uks_trace *tr = self->tr;
	struct uks_tracee_session *s2;
	struct uks_tracee_stats st;
	int status = -1;

	ASSERT_EQ(0, uks_tracee_session_create(&o, &s2));
	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/enable", "1"));
	ASSERT_EQ(0, uks_tracee_spawn(s2, helper_argv("getpid 50"), NULL));
	ASSERT_EQ(0, uks_tracee_run(s2, &status));
	uks_tracee_get_stats(s2, &st);
	uks_tracee_session_destroy(s2);
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, st.seccomp_stops);
	EXPECT_GE(st.syscall_stops, 100);
	rd(tr, "trace");
	EXPECT_NE(NULL, strstr(out, "file=\"/uks-tracee/probe-2\""));
}

TEST_HARNESS_MAIN
