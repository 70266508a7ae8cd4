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
#include "trace/trigger.h"

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

/* Writers of print records other than trace_marker, by the kernel's function names. */
const char __uks_trace_snapshot_caller[] = "tracing_snapshot_instance_cond";

static const char *print_caller(unsigned long ip)
{
	if (ip == (unsigned long)__uks_trace_snapshot_caller)
		return __uks_trace_snapshot_caller;
	return "tracing_mark_write";
}

static void print_print(struct uks_seq *s, const struct uks_event_call *call,
			const void *rec, size_t len)
{
	const struct print_entry *e = rec;
	size_t max = len - sizeof(*e), n = strnlen(e->buf, max);

	/* The text keeps its newline; the line's own newline follows. */
	if (n && e->buf[n - 1] == '\n')
		n--;
	seq_puts(s, print_caller(e->ip));
	seq_puts(s, ": ");
	seq_putmem(s, e->buf, n);
}

static void print_print_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	seq_puts(s, "\"%ps: %s\", (void *)REC->ip, REC->buf");
}

static int raw_data_init(void);

/* Caller holds event_mutex. */
int __uks_trace_marker_init(void)
{
	struct uks_event_call *call;

	if (__uks_trace_ftrace_print_call)
		return 0;
	if (raw_data_init())
		return -ENOMEM;
	call = __uks_trace_call_alloc("ftrace", "print", print_fields, 2);
	if (!call)
		return -ENOMEM;
	call->id = UKS_TRACE_FTRACE_PRINT_ID;
	call->flags = UKS_CALL_IGNORE_ENABLE;
	call->print = print_print;
	call->print_fmt = print_print_fmt;
	/* Set first: each instance's file of it is its marker_file. */
	__uks_trace_ftrace_print_call = call;
	if (__uks_trace_call_add(call)) {
		__uks_trace_ftrace_print_call = NULL;
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	return 0;
}

/**
 * __uks_trace_marker_write - the trace_marker file's write
 * @writer:	the task the line is credited to (NULL: this thread)
 *
 * A line longer than an event can hold is cut, and, as the kernel, the
 * write takes only what went in: the writer's next write(2) carries the
 * rest as a line of its own.  Returns the bytes taken, -EINVAL (markers
 * option off), -EBADF (recording off, as the kernel's when the ring
 * buffer refuses), or -ENOMEM.
 */
int __uks_trace_marker_write(struct uks_trace *tr, const char *buf, size_t len,
			     const struct uks_trace_task *writer)
{
	struct uks_event_file *file = __atomic_load_n(&tr->marker_file, __ATOMIC_ACQUIRE);
	unsigned int post = 0;
	struct print_entry *e;
	size_t size, max = __uks_trace_rb_max_event() - sizeof(*e) - 2;
	unsigned int cpu;
	size_t n = len, end;

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
	end = n;
	if (file && __atomic_load_n(&file->triggers, __ATOMIC_ACQUIRE)) {
		/* Triggers see the text as written: no newline added yet. */
		e->buf[end] = '\0';
		post = __uks_trace_triggers_call(file, e, size, (int)cpu);
	}
	if (!end || e->buf[end - 1] != '\n')
		e->buf[end++] = '\n';
	e->buf[end] = '\0';
	__uks_trace_rb_commit(tr->rb, e);
	/* Under tr->lock: removing a trigger of ftrace:print waits for it. */
	if (post)
		__uks_trace_triggers_post_call(file, post);
	pthread_mutex_unlock(&tr->lock);
	return (int)n;
}

/** __uks_trace_puts - see trace.h */
int __uks_trace_puts(struct uks_trace *tr, const char *caller, const char *text)
{
	size_t n = strlen(text);
	struct print_entry *e;
	unsigned int cpu;

	e = __uks_trace_rb_reserve(tr->rb, sizeof(*e) + n + 1, &cpu);
	if (!e)
		return -EBADF;
	__uks_trace_fill_entry(tr, &e->ent, UKS_TRACE_FTRACE_PRINT_ID);
	e->ip = (unsigned long)caller;
	memcpy(e->buf, text, n + 1);
	__uks_trace_rb_commit(tr->rb, e);
	return 0;
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

/* ------------------------------------------------------ trace_marker_raw */

/*
 * trace_marker_raw: binary records, an unsigned int tag then the data,
 * written as ftrace:raw_data (TRACE_RAW_DATA).  The kernel reserves room
 * for "<faulted>" after the tag however short the data; the room past the
 * data reads as zeroes here.
 */
struct raw_entry {
	struct uks_trace_entry ent;
	unsigned int id;
	char buf[];
};

#define FAULT_SIZE_ID	(sizeof("<faulted>") - 1 + sizeof(unsigned int))

static const struct uks_event_field raw_fields[] = {
	{ "unsigned int", "id", 8, 4, false, UKS_FILTER_OTHER },
	{ "char[]", "buf", 12, 0, false, UKS_FILTER_STATIC_STRING },
};

static void print_raw_data(struct uks_seq *s, const struct uks_event_call *call,
			   const void *rec, size_t len)
{
	const struct raw_entry *e = rec;

	seq_printf(s, "# %x buf:", e->id);
	for (size_t i = sizeof(*e); i < len; i++)
		seq_printf(s, " %02x", ((const unsigned char *)rec)[i]);
}

static void print_raw_data_fmt(struct uks_seq *s, const struct uks_event_call *call)
{
	seq_puts(s, "\"id:%04x %08x\", REC->id, (int)REC->buf[0]");
}

/* Caller holds event_mutex. */
static int raw_data_init(void)
{
	struct uks_event_call *call;

	if (__uks_trace_find_call_by_id(UKS_TRACE_FTRACE_RAW_DATA_ID))
		return 0;
	call = __uks_trace_call_alloc("ftrace", "raw_data", raw_fields, 2);
	if (!call)
		return -ENOMEM;
	call->id = UKS_TRACE_FTRACE_RAW_DATA_ID;
	call->flags = UKS_CALL_IGNORE_ENABLE;
	call->print = print_raw_data;
	call->print_fmt = print_raw_data_fmt;
	if (__uks_trace_call_add(call)) {
		__uks_trace_call_free(call);
		return -ENOMEM;
	}
	return 0;
}

/**
 * __uks_trace_marker_raw_write - the trace_marker_raw file's write
 * @writer:	the task the record is credited to (NULL: this thread)
 *
 * Returns @len, or -EINVAL (markers off, shorter than the tag, larger than
 * an event), -EBADF (recording off) or -ENOMEM, as the kernel answers.
 */
int __uks_trace_marker_raw_write(struct uks_trace *tr, const void *buf, size_t len,
				 const struct uks_trace_task *writer)
{
	size_t size = sizeof(struct raw_entry) + len;
	struct raw_entry *e;
	unsigned int cpu;

	if (!trace_opt(tr, UKS_OPT_MARKERS) || len < sizeof(unsigned int))
		return -EINVAL;
	if (len < FAULT_SIZE_ID)
		size += FAULT_SIZE_ID - len;
	if (size > __uks_trace_rb_max_event())
		return -EINVAL;
	if (writer)
		uks_trace_set_task(writer);
	if (trace_opt(tr, UKS_OPT_RECORD_CMD) || trace_opt(tr, UKS_OPT_RECORD_TGID))
		__uks_trace_note_current(tr);
	pthread_mutex_lock(&tr->lock);
	e = __uks_trace_rb_reserve(tr->rb, size, &cpu);
	if (e)
		__uks_trace_fill_entry(tr, &e->ent, UKS_TRACE_FTRACE_RAW_DATA_ID);
	if (writer)
		uks_trace_set_task(NULL);
	if (!e) {
		pthread_mutex_unlock(&tr->lock);
		return -EBADF;
	}
	/* The reservation is rounded up to 8 bytes: all of it reads as zeroes. */
	memset((char *)e + sizeof(e->ent), 0, ((size + 7) & ~(size_t)7) - sizeof(e->ent));
	memcpy(&e->id, buf, len);
	__uks_trace_rb_commit(tr->rb, e);
	pthread_mutex_unlock(&tr->lock);
	return (int)len;
}
