// SPDX-License-Identifier: MIT
/*
 * trace_marker: a write becomes an ftrace:print event (ID 5, as in the
 * kernel), printed as "tracing_mark_write: <text>".  Markers are not
 * enabled or filtered per event; the "markers" option gates them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uks/slab.h>

#include "core/proc_status.h"
#include "trace/tracefs.h"

#define TRACE_MARKER_MAX	4096

struct print_entry {
	struct uks_trace_entry ent;
	unsigned long ip;
	char buf[];
};

static const struct uks_event_field print_fields[] = {
	{ "unsigned long", "ip", 8, 8, false, UKS_FILTER_OTHER },
	{ "char[]", "buf", 16, 0, true, UKS_FILTER_STATIC_STRING },
};

struct uks_event_call *__uks_trace_ftrace_print_call;

static void print_print(struct uks_seq *s, const struct uks_event_call *call,
			const void *rec, size_t len)
{
	const struct print_entry *e = rec;
	size_t max = len - sizeof(*e), n = strnlen(e->buf, max);

	/* The text keeps its newline; the line's own newline follows. */
	if (n && e->buf[n - 1] == '\n')
		n--;
	seq_puts(s, "tracing_mark_write: ");
	seq_putmem(s, e->buf, n);
}

static void print_print_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	seq_puts(s, "\"%ps: %s\", (void *)REC->ip, REC->buf");
}

/* Caller holds event_mutex. */
int __uks_trace_marker_init(void)
{
	struct uks_event_call *call;

	if (__uks_trace_ftrace_print_call)
		return 0;
	call = __uks_trace_call_alloc("ftrace", "print", print_fields, 2);
	if (!call)
		return -ENOMEM;
	call->id = UKS_TRACE_FTRACE_PRINT_ID;
	call->flags = UKS_CALL_IGNORE_ENABLE;
	call->print = print_print;
	call->print_fmt = print_print_fmt;
	if (__uks_trace_call_add(call)) {
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	__uks_trace_ftrace_print_call = call;
	return 0;
}

/**
 * __uks_trace_marker_write - the trace_marker file's write
 * @writer:	the task the line is credited to (NULL: this thread)
 *
 * Returns the bytes taken (a line longer than an event holds is cut there,
 * as by the kernel, and the writer goes on with the rest), -EINVAL
 * (markers option off), -EBADF (recording off, as the kernel's when the
 * ring buffer refuses), or -ENOMEM.
 */
int __uks_trace_marker_write(struct uks_trace *tr, const char *buf, size_t len,
			     const struct uks_trace_task *writer)
{
	struct print_entry *e;
	size_t size, max = __uks_trace_rb_max_event() - sizeof(*e) - 2;
	unsigned int cpu;
	size_t n = len, written;

	if (!trace_opt(tr, UKS_OPT_MARKERS))
		return -EINVAL;
	if (n > TRACE_MARKER_MAX)
		n = TRACE_MARKER_MAX;
	if (n > max)
		n = max;
	size = sizeof(*e) + n + 2;	/* room for an added newline and NUL */
	if (writer)
		uks_trace_set_task(writer);
	if (trace_opt(tr, UKS_OPT_RECORD_CMD) || trace_opt(tr, UKS_OPT_RECORD_TGID))
		__uks_trace_note_current(tr);
	/* tr->lock keeps buffer_size_kb from swapping pages under us. */
	pthread_mutex_lock(&tr->lock);
	e = __uks_trace_rb_reserve(tr->rb, size, &cpu);
	if (!e) {
		pthread_mutex_unlock(&tr->lock);
		if (writer)
			uks_trace_set_task(NULL);
		return -EBADF;
	}
	__uks_trace_fill_entry(tr, &e->ent, UKS_TRACE_FTRACE_PRINT_ID);
	if (writer)
		uks_trace_set_task(NULL);
	e->ip = 0;
	memcpy(e->buf, buf, n);
	written = n;	/* the kernel's answer: a longer write goes on in another */
	if (!n || e->buf[n - 1] != '\n')
		e->buf[n++] = '\n';
	e->buf[n] = '\0';
	__uks_trace_rb_commit(tr->rb, e);
	pthread_mutex_unlock(&tr->lock);
	return (int)written;
}

/**
 * __uks_trace_peer_task - the task behind a file's writer
 * @peer:	who writes (a FUSE request's thread, a socket's client), or NULL
 * @task:	filled: its thread id, process id and comm
 *
 * A trace_marker line written for a client carries the client's pid and
 * comm, not the serving thread's.  Returns false when @peer names no
 * task (the calling thread writes for itself).
 */
bool __uks_trace_peer_task(const struct uks_peer *peer, struct uks_trace_task *task)
{
	if (!peer || peer->pid <= 0)
		return false;
	memset(task, 0, sizeof(*task));
	task->pid = peer->pid;
	task->tgid = proc_status_pid(peer->pid, "Tgid", peer->pid);
	proc_comm_read(peer->pid, task->comm);
	return true;
}
