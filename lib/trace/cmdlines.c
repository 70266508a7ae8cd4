// SPDX-License-Identifier: MIT
/*
 * saved_cmdlines and saved_tgids: the pid -> comm and pid -> tgid maps the
 * trace output uses to print "comm-pid" (record-cmd) and the TGID column
 * (record-tgid).  Like the kernel's, they are global and small (128
 * comms by default, saved_cmdlines_size); a thread's comm is recorded the
 * first time it writes an event.  The table is a leaf under its own lock
 * because writers fill it from the hit path once per thread.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/mem_avail.h"
#include "trace/trace.h"

#define DEFAULT_CMDLINES	128
#define MAX_CMDLINES		32768	/* PID_MAX_DEFAULT */
#define NR_TGIDS		4096

struct cmdline {
	pid_t pid;
	char comm[16];
};

static pthread_mutex_t cmdline_lock = PTHREAD_MUTEX_INITIALIZER;
static struct cmdline cmdlines_default[DEFAULT_CMDLINES];
static struct cmdline *cmdlines = cmdlines_default;
static int nr_cmdlines = DEFAULT_CMDLINES;
static int next_cmdline;
static struct { pid_t pid, tgid; } tgids[NR_TGIDS];

/* Per thread: tid (cached: gettid is a system call) and whether saved. */
static __thread pid_t cur_tid __attribute__((tls_model("initial-exec")));
static __thread char cur_comm[16] __attribute__((tls_model("initial-exec")));
static __thread unsigned int cur_saved_gen __attribute__((tls_model("initial-exec")));
static unsigned int cmdline_gen = 1;	/* bumped when the table is resized */
/* Cleared for server worker threads: never saved (uks_trace_set_thread_cmdline). */
static __thread bool cur_nosave __attribute__((tls_model("initial-exec")));
/* Set while this thread writes events on behalf of another task. */
static __thread const struct uks_trace_task *cur_task __attribute__((tls_model("initial-exec")));

static void reset_after_fork(void)
{
	cur_tid = 0;
	cur_saved_gen = 0;
}

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;
static void register_atfork(void)
{
	pthread_atfork(NULL, NULL, reset_after_fork);
}

/**
 * uks_trace_set_task - see <uks/trace.h>
 */
UKS_EXPORT void uks_trace_set_task(const struct uks_trace_task *task)
{
	cur_task = task;
}

/**
 * uks_trace_set_thread_cmdline - see <uks/trace.h>
 */
UKS_EXPORT void uks_trace_set_thread_cmdline(bool save)
{
	cur_nosave = !save;
}

pid_t __uks_trace_current_tid(void)
{
	if (__builtin_expect(cur_task != NULL, 0))
		return cur_task->pid;
	if (__builtin_expect(!cur_tid, 0)) {
		pthread_once(&atfork_once, register_atfork);
		cur_tid = (pid_t)syscall(SYS_gettid);
	}
	return cur_tid;
}

/* The thread group of the task written for: a tracee's, or this process. */
pid_t __uks_trace_current_tgid(void)
{
	if (__builtin_expect(cur_task != NULL, 0))
		return cur_task->tgid;
	return getpid();
}

const char *__uks_trace_current_comm(void)
{
	if (__builtin_expect(cur_task != NULL, 0))
		return cur_task->comm;
	if (!cur_comm[0])
		prctl(PR_GET_NAME, cur_comm, 0, 0, 0);
	return cur_comm;
}

void __uks_trace_save_cmdline(pid_t pid, const char *comm)
{
	pthread_mutex_lock(&cmdline_lock);
	for (int i = 0; i < nr_cmdlines; i++) {
		if (cmdlines[i].pid == pid) {
			strncpy(cmdlines[i].comm, comm, 15);
			pthread_mutex_unlock(&cmdline_lock);
			return;
		}
	}
	cmdlines[next_cmdline].pid = pid;
	strncpy(cmdlines[next_cmdline].comm, comm, 15);
	cmdlines[next_cmdline].comm[15] = '\0';
	next_cmdline = (next_cmdline + 1) % nr_cmdlines;
	pthread_mutex_unlock(&cmdline_lock);
}

bool __uks_trace_find_cmdline(pid_t pid, char comm[16])
{
	bool found = false;

	if (pid == 0) {		/* the kernel's idle task */
		strcpy(comm, "<idle>");
		return true;
	}
	pthread_mutex_lock(&cmdline_lock);
	for (int i = 0; i < nr_cmdlines; i++) {
		if (cmdlines[i].pid == pid) {
			memcpy(comm, cmdlines[i].comm, 16);
			found = true;
			break;
		}
	}
	pthread_mutex_unlock(&cmdline_lock);
	if (!found)
		strcpy(comm, "<...>");
	return found;
}

void __uks_trace_save_tgid(pid_t pid, pid_t tgid)
{
	unsigned int slot = (unsigned int)pid % NR_TGIDS;

	__atomic_store_n(&tgids[slot].tgid, tgid, __ATOMIC_RELAXED);
	__atomic_store_n(&tgids[slot].pid, pid, __ATOMIC_RELEASE);
}

pid_t __uks_trace_find_tgid(pid_t pid)
{
	unsigned int slot = (unsigned int)pid % NR_TGIDS;

	if (pid <= 0 || __atomic_load_n(&tgids[slot].pid, __ATOMIC_ACQUIRE) != pid)
		return -1;
	return __atomic_load_n(&tgids[slot].tgid, __ATOMIC_RELAXED);
}

/* Record this thread's comm (once per thread and table size) and tgid. */
void __uks_trace_note_current(struct uks_trace *tr)
{
	unsigned int gen = __atomic_load_n(&cmdline_gen, __ATOMIC_RELAXED);

	if (__builtin_expect(cur_task != NULL, 0)) {
		/* Another task each time: a traced process's event is slow anyway. */
		__uks_trace_save_cmdline(cur_task->pid, cur_task->comm);
		__uks_trace_save_tgid(cur_task->pid, cur_task->tgid);
		return;
	}
	if (__builtin_expect(cur_saved_gen == gen, 1) || cur_nosave)
		return;
	cur_saved_gen = gen;
	__uks_trace_save_cmdline(__uks_trace_current_tid(), __uks_trace_current_comm());
	__uks_trace_save_tgid(__uks_trace_current_tid(), getpid());
}

void __uks_trace_show_saved_cmdlines(struct uks_seq *s)
{
	pthread_mutex_lock(&cmdline_lock);
	for (int i = 0; i < nr_cmdlines; i++)
		if (cmdlines[i].pid > 0)
			seq_printf(s, "%d %s\n", cmdlines[i].pid, cmdlines[i].comm);
	pthread_mutex_unlock(&cmdline_lock);
}

void __uks_trace_show_saved_tgids(struct uks_seq *s)
{
	for (int i = 0; i < NR_TGIDS; i++) {
		pid_t pid = __atomic_load_n(&tgids[i].pid, __ATOMIC_ACQUIRE);

		if (pid > 0)
			seq_printf(s, "%d %d\n", pid, tgids[i].tgid);
	}
}

int __uks_trace_cmdlines_size(void)
{
	return nr_cmdlines;
}

/*
 * saved_cmdlines_size: 1..PID_MAX_DEFAULT, else -EINVAL (the kernel's
 * rule).  The new table is allocated before the old one is dropped, so
 * -ENOMEM leaves the old size and entries.
 */
int __uks_trace_set_cmdlines_size(int size)
{
	struct cmdline *fresh, *old;

	if (size < 1 || size > MAX_CMDLINES)
		return -EINVAL;
	if (__uks_mem_may_allocate_array((size_t)size, sizeof(*fresh)))
		return -ENOMEM;
	fresh = uks_kcalloc(size, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	pthread_mutex_lock(&cmdline_lock);
	old = cmdlines;
	cmdlines = fresh;
	nr_cmdlines = size;
	next_cmdline = 0;
	__atomic_add_fetch(&cmdline_gen, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&cmdline_lock);
	if (old != cmdlines_default)
		uks_kfree(old);
	return 0;
}
