// SPDX-License-Identifier: MIT
/*
 * Traced programs behave as untraced: exit codes and deaths by signal
 * reach run(), caught signals are delivered, job control works through a
 * traced parent (group-stop left to it with PTRACE_LISTEN), forks, execs
 * and threads are followed and their sched:/task: events carry the right
 * pids.  Every test runs three times: with the session as the tracer,
 * with a keeper process holding the tracees and relaying their stops, and
 * with a keeper stepping them (no seccomp filter).
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include <uks/trace.h>
#include <uks/tracee.h>

#include "harness.h"
#include "unit/tracefs_io.h"
#include "unit/tracee/helper.h"

FIXTURE(proc) {
	struct uks_trace *tr;
	struct uks_tracee_session *s;
};

FIXTURE_VARIANT(proc) {
	unsigned int flags;
};

FIXTURE_VARIANT_ADD(proc, direct) { .flags = 0 };
FIXTURE_VARIANT_ADD(proc, keeper) { .flags = UKS_TRACEE_KEEPER };
FIXTURE_VARIANT_ADD(proc, keeper_step) { .flags = UKS_TRACEE_KEEPER | UKS_TRACEE_NO_SECCOMP };

FIXTURE_SETUP(proc)
{
	struct uks_tracee_opts o = { .sz = sizeof(o), .flags = variant->flags };
	const char *why = tracee_unsupported();

	if (why)
		SKIP(return, "%s", why);
	ASSERT_EQ(0, uks_tracee_session_create(&o, &self->s));
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
}

FIXTURE_TEARDOWN(proc)
{
	uks_tracee_session_destroy(self->s);
	if (self->tr) {
		wr(self->tr, "events/enable", "0");
		uks_tracefs_write_str(self->tr, "dynamic_events", "", UKS_TRACEFS_TRUNC);
		uks_trace_destroy(self->tr);
	}
}

static int run_sh(struct uks_tracee_session *s, const char *script)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
	int status = -1;

	if (uks_tracee_spawn(s, argv, NULL) || uks_tracee_run(s, &status))
		return -1;
	return status;
}

TEST_F(proc, exit_code_propagates)
{
	int status;

	ASSERT_EQ(0, wr(self->tr, "set_event", "syscalls:sys_enter_exit_group"));
	status = run_sh(self->s, "exit 3");
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(3, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(rd(self->tr, "trace"), "sys_exit_group(error_code: 3)\n"));
}

TEST_F(proc, death_by_signal_is_reported)
{
	int status;

	ASSERT_EQ(0, wr(self->tr, "set_event", "syscalls:sys_enter_kill"));
	status = run_sh(self->s, "kill -TERM $$; exit 0");
	ASSERT_TRUE(WIFSIGNALED(status));
	EXPECT_EQ(SIGTERM, WTERMSIG(status));
}

TEST_F(proc, caught_signal_is_delivered)
{
	struct uks_tracee_stats st;
	int status = -1;

	ASSERT_EQ(0, wr(self->tr, "set_event", "syscalls:sys_enter_kill syscalls:sys_exit_kill"));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("sigusr1"), NULL));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(42, WEXITSTATUS(status));
	uks_tracee_get_stats(self->s, &st);
	EXPECT_GE(st.signals, 1);
	rd(self->tr, "trace");
	EXPECT_NE(NULL, strstr(out, ", sig: a)\n"));
	EXPECT_NE(NULL, strstr(out, "sys_kill -> 0x0\n"));
}

TEST_F(proc, job_control_through_a_traced_parent)
{
	struct uks_tracee_stats st;
	int status = -1;

	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("stop"), NULL));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(9, WEXITSTATUS(status));
	uks_tracee_get_stats(self->s, &st);
	EXPECT_GE(st.group_stops, 1);
}

TEST_F(proc, fork_exec_and_grandchild_are_followed)
{
	struct uks_trace *tr = self->tr;
	char expect[4300];
	int status = -1;
	pid_t pid;

	ASSERT_EQ(0, wr(tr, "set_event", "sched:sched_process_fork sched:sched_process_exec "
			"sched:sched_process_exit task:task_newtask"));
	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/enable", "1"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/filter", "file ~ \"/uks-tracee/*\""));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("fork"), &pid));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	rd(tr, "trace");
	snprintf(expect, sizeof(expect), "sched_process_exec: filename=%s pid=%d old_pid=%d\n",
		 helper_exe, (int)pid, (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
	/* comm is the binary's name: "process" */
	snprintf(expect, sizeof(expect), "sched_process_fork: comm=process pid=%d child_comm=process "
		 "child_pid=", (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
	EXPECT_NE(NULL, strstr(out, "task_newtask: pid="));
	EXPECT_NE(NULL, strstr(out, " clone_flags=1200000 oom_score_adj="));	/* glibc fork() */
	/* the grandchild's open was traced, under its own pid */
	EXPECT_NE(NULL, strstr(out, "eopen: (syscalls.sys_enter_openat) file=\"/uks-tracee/grandchild\""));
	snprintf(expect, sizeof(expect), "sched_process_exit: comm=process pid=%d prio=120\n", (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
	{
		/* fork events: three processes, two forks, the grandchild's pid opens */
		const char *f1 = strstr(out, "child_pid="), *f2 = f1 ? strstr(f1 + 1, "child_pid=") : NULL;
		int g = f2 ? atoi(f2 + 10) : 0;

		ASSERT_NE(NULL, f2);
		snprintf(expect, sizeof(expect), "process-%d", g);
		const char *open_line = strstr(out, "file=\"/uks-tracee/grandchild\"");
		const char *gl = strstr(out, expect);

		EXPECT_NE(NULL, gl);
		EXPECT_TRUE(gl && open_line && gl < open_line);
	}
}

TEST_F(proc, threads_are_followed)
{
	struct uks_trace *tr = self->tr;
	int status = -1;
	pid_t pid;
	char expect[64];

	ASSERT_EQ(0, wr(tr, "set_event", "task:task_newtask"));
	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/enable", "1"));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("threads"), &pid));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rd(tr, "trace");
	EXPECT_NE(NULL, strstr(out, "file=\"/uks-tracee/thread\""));
	/* pthread_create: CLONE_VM|FS|FILES|SIGHAND|THREAD|SYSVSEM|SETTLS|PARENT_SETTID|CHILD_CLEARTID */
	EXPECT_NE(NULL, strstr(out, "clone_flags=3d0f00"));
	snprintf(expect, sizeof(expect), "process-%d ", (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
}

TEST_F(proc, prctl_rename_and_exec_rename)
{
	struct uks_trace *tr = self->tr;
	int status = -1;
	pid_t pid;
	char expect[96];

	ASSERT_EQ(0, wr(tr, "set_event", "task:task_rename"));
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv("rename"), &pid));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	rd(tr, "trace");
	snprintf(expect, sizeof(expect), "task_rename: pid=%d oldcomm=process newcomm=renamed "
		 "oom_score_adj=", (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));
	snprintf(expect, sizeof(expect), "task_rename: pid=%d oldcomm=process newcomm=process",
		 (int)pid);
	EXPECT_NE(NULL, strstr(out, expect));	/* exec renames too (__set_task_comm) */
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/*
 * Through a keeper, stops no eprobe needs stopped are resumed before the
 * session sees them: their events must be the same, in the same order, with
 * the right return values (an eprobe storing a field does not make them
 * wait); the openat stops an eprobe reads a string at must still wait
 * (the string is overwritten right after the call).
 */
TEST_F(proc, resumed_early_stops_write_the_same_events)
{
	struct uks_trace *tr = self->tr;
	struct uks_tracee_stats st;
	char expect[128], mode[32];
	const char *pos;
	int status = -1, n = 100;

	ASSERT_EQ(0, wr(tr, "buffer_size_kb", "4096"));
	ASSERT_EQ(0, wr(tr, "set_event", "syscalls:sys_enter_dup2 syscalls:sys_exit_dup2"));
	ASSERT_EQ(0, wr(tr, "dynamic_events",
			"e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/enable", "1"));
	ASSERT_EQ(0, wr(tr, "events/esys/eopen/filter", "file ~ \"/uks-tracee/*\""));
	/* fields of the record only: no reason to wait */
	ASSERT_EQ(0, wr(tr, "dynamic_events", "e:esys/edup syscalls/sys_enter_dup2 fd=$newfd:u32"));
	ASSERT_EQ(0, wr(tr, "events/esys/edup/enable", "1"));
	snprintf(mode, sizeof(mode), "dup2 %d", n);
	ASSERT_EQ(0, uks_tracee_spawn(self->s, helper_argv(mode), NULL));
	ASSERT_EQ(0, uks_tracee_run(self->s, &status));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	rd(tr, "trace");
	pos = out;
	for (int i = 0; i < n && pos; i++) {
		snprintf(expect, sizeof(expect), "sys_dup2(oldfd: 0, newfd: %x)\n", 64 + i);
		pos = strstr(pos, expect);
		EXPECT_NE(NULL, pos);
		if (!pos)
			break;
		snprintf(expect, sizeof(expect), "edup: (syscalls.sys_enter_dup2) fd=%d\n", 64 + i);
		pos = strstr(pos, expect);
		EXPECT_NE(NULL, pos);
		if (!pos)
			break;
		snprintf(expect, sizeof(expect), "sys_dup2 -> 0x%x\n", 64 + i);
		pos = strstr(pos, expect);
		EXPECT_NE(NULL, pos);
		if (!pos)
			break;
		snprintf(expect, sizeof(expect), "file=\"/uks-tracee/fast-%d\"\n", i);
		pos = strstr(pos, expect);
		EXPECT_NE(NULL, pos);
	}
	EXPECT_EQ(0, count(out, "XXXX"));
	if (pos) {
		pos = strstr(pos, "sys_dup2(oldfd: ffffffff, newfd: 40)\n");
		EXPECT_NE(NULL, pos);
	}
	if (pos)
		EXPECT_NE(NULL, strstr(pos, "sys_dup2 -> 0xfffffffffffffff7\n"));
	EXPECT_EQ(n + 1, count(out, "sys_dup2("));
	EXPECT_EQ(n + 1, count(out, "sys_dup2 -> "));
	EXPECT_EQ(n, count(out, "file=\"/uks-tracee/fast-"));
	uks_tracee_get_stats(self->s, &st);
	if (!(variant->flags & UKS_TRACEE_KEEPER)) {
		EXPECT_EQ(0ul, st.resumed_early);
	} else if (!(variant->flags & UKS_TRACEE_NO_SECCOMP)) {
		/* every dup2 stop, entry and exit, and no openat stop went by early */
		EXPECT_EQ(2ul * (unsigned long)(n + 1), st.resumed_early);
	} else {
		/* stepped: every call stops; the n openat entries waited */
		EXPECT_GE(st.resumed_early, 2ul * (unsigned long)(n + 1));
		EXPECT_LE(st.resumed_early + (unsigned long)n, st.syscall_stops);
	}
}

TEST_F(proc, sched_and_task_formats_match_the_kernel)
{
	rd(self->tr, "events/sched/sched_process_exec/format");
	EXPECT_NE(NULL, strstr(out, "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n"
		"\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:1;\n"
		"\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
		"\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
		"REC->old_pid\n"));
	rd(self->tr, "events/sched/sched_process_fork/format");
	EXPECT_NE(NULL, strstr(out, "\tfield:char parent_comm[16];\toffset:8;\tsize:16;\tsigned:1;\n"
		"\tfield:pid_t parent_pid;\toffset:24;\tsize:4;\tsigned:1;\n"
		"\tfield:char child_comm[16];\toffset:28;\tsize:16;\tsigned:1;\n"
		"\tfield:pid_t child_pid;\toffset:44;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"comm=%s pid=%d child_comm=%s child_pid=%d\", REC->parent_comm, "
		"REC->parent_pid, REC->child_comm, REC->child_pid\n"));
	rd(self->tr, "events/task/task_newtask/format");
	EXPECT_NE(NULL, strstr(out, "\tfield:unsigned long clone_flags;\toffset:32;\tsize:8;\tsigned:0;\n"
		"\tfield:short oom_score_adj;\toffset:40;\tsize:2;\tsigned:1;\n"));
	rd(self->tr, "events/sched/sched_process_exit/format");
	EXPECT_NE(NULL, strstr(out, "\tfield:int prio;\toffset:28;\tsize:4;\tsigned:1;\n\n"
		"print fmt: \"comm=%s pid=%d prio=%d\", REC->comm, REC->pid, REC->prio\n"));
}

TEST_HARNESS_MAIN
