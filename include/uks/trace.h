/* SPDX-License-Identifier: MIT */
/*
 * uks event tracing: trace instances and the tracefs file interface.
 *
 * A trace instance is what the kernel calls a trace array: a ring buffer
 * per CPU, options, an error log and the enable/filter state of every
 * event.  Its files (trace, trace_pipe, set_event, events/SYS/EVENT/enable,
 * dynamic_events, ...) are reached by path, relative to the tracefs root,
 * and take and return exactly the bytes the kernel's files would:
 *
 *	struct uks_trace *tr;
 *	uks_trace_create(NULL, &tr);
 *	uks_tracefs_write_str(tr, "set_event", "kmem:kmalloc", UKS_TRACEFS_APPEND);
 *	... run code ...
 *	char buf[65536];
 *	uks_tracefs_read_all(tr, "trace", buf, sizeof(buf));
 *
 * For a file system (uksfs) the open/read/write/close calls map one to
 * one onto FUSE's: open with the open(2) flags (O_TRUNC and O_APPEND mean
 * what they mean to the kernel), one write is one command, reads of
 * trace_pipe block unless O_NONBLOCK.
 *
 * Events: define static events with UKS_TRACE_EVENT() (<uks/tracepoint.h>);
 * every instance sees every registered event.
 */
#ifndef UKS_TRACE_H
#define UKS_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uks_trace;
struct uks_tracefs_file;

/**
 * uks_trace_create - create a trace instance
 * @name:	NULL for a top-level instance, else the instance name
 * @out:	the instance
 *
 * Returns 0 or -ENOMEM, -EINVAL (bad name).  Instances are independent:
 * tests may create one each.  A named one has the files of a kernel
 * instance (no README, dynamic_events, instances/, ...); a top-level one
 * has instances/, where mkdir makes more.
 */
int uks_trace_create(const char *name, struct uks_trace **out);

/**
 * uks_trace_destroy - free an instance, with the instances made in its
 * instances/ (its files must be closed)
 */
void uks_trace_destroy(struct uks_trace *tr);

/* uks_tracefs_list() entry types */
enum uks_tracefs_type {
	UKS_TRACEFS_DIR,
	UKS_TRACEFS_REG,
};

/**
 * uks_tracefs_stat - what is at @path
 * @tr:		instance
 * @path:	relative path ("" is the root), no leading slash needed
 * @mode:	set to the permission bits the kernel uses (0444, 0644, 0755…)
 *
 * Returns UKS_TRACEFS_DIR, UKS_TRACEFS_REG or -ENOENT.
 */
int uks_tracefs_stat(struct uks_trace *tr, const char *path, unsigned int *mode);

/**
 * uks_tracefs_list - list a directory
 * @fn:		called for each entry with its name and type; non-zero stops
 * Returns 0, -ENOENT, -ENOTDIR, or what @fn returned.
 */
int uks_tracefs_list(struct uks_trace *tr, const char *path,
		     int (*fn)(const char *name, enum uks_tracefs_type type, void *arg),
		     void *arg);

/**
 * uks_tracefs_open - open a file
 * @flags:	open(2) flags: O_RDONLY/O_WRONLY/O_RDWR, O_TRUNC, O_APPEND,
 *		O_NONBLOCK
 * Returns 0 and the file in @out, or -ENOENT, -EISDIR, -EACCES, -ENOMEM,
 * or the error of the truncation the kernel does at open (e.g. -EBUSY
 * from "> dynamic_events" with an enabled event).
 */
int uks_tracefs_open(struct uks_trace *tr, const char *path, int flags,
		     struct uks_tracefs_file **out);
/* Returns bytes read, 0 at end, or -errno (-EAGAIN, -EINTR for trace_pipe). */
ssize_t uks_tracefs_read(struct uks_tracefs_file *f, void *buf, size_t len);
/* One call is one command.  Returns @len or -errno. */
ssize_t uks_tracefs_write(struct uks_tracefs_file *f, const void *buf, size_t len);
struct uks_trace_task;
/**
 * uks_tracefs_write_as - uks_tracefs_write() on behalf of another task
 * @task:	who writes (NULL: the calling thread)
 *
 * What the write records itself (a trace_marker line) carries @task's pid
 * and comm, as the kernel credits the writing task; events the calling
 * thread fires meanwhile stay its own.  For servers that write for a
 * client, such as uksd for a FUSE request.
 */
ssize_t uks_tracefs_write_as(struct uks_tracefs_file *f, const void *buf, size_t len,
			     const struct uks_trace_task *task);
/* O_NONBLOCK of @f changed after open (fcntl): reads follow @nonblock. */
void uks_tracefs_set_nonblock(struct uks_tracefs_file *f, bool nonblock);
/* Non-zero when a read would not block (for poll). */
int uks_tracefs_poll(struct uks_tracefs_file *f);
/* Interrupt a blocked trace_pipe read on @f (it returns -EINTR). */
void uks_tracefs_interrupt(struct uks_tracefs_file *f);
void uks_tracefs_close(struct uks_tracefs_file *f);

/**
 * struct uks_trace_task - the task an event is written for
 * @pid:	thread id (common_pid, and whose memory eprobes dereference)
 * @tgid:	its process id (saved_tgids, record-tgid)
 * @comm:	its name (saved_cmdlines)
 */
struct uks_trace_task {
	pid_t pid;
	pid_t tgid;
	char comm[16];
};

/**
 * uks_trace_set_task - write this thread's next events as another task
 * @task:	the task, or NULL for the calling thread again
 *
 * For event sources that report for another process, such as a ptrace
 * tracer firing a tracee's syscall events while it is stopped: the records
 * carry @task's pid and comm, set_event_pid and filters on comm see it,
 * and eprobe dereferences read @task's memory.  @task must stay valid
 * until reset.
 */
void uks_trace_set_task(const struct uks_trace_task *task);

/**
 * uks_trace_set_thread_cmdline - whether this thread's comm is saved
 * @save:	false keeps the calling thread out of saved_cmdlines
 *
 * For a server's short-lived worker threads: each new thread id would
 * take a slot of the small table and evict a traced program's comm (its
 * lines then print as "<...>-PID").  Their events still carry their pid.
 */
void uks_trace_set_thread_cmdline(bool save);

/* Convenience wrappers: one open, one read loop or one write, close. */
#define UKS_TRACEFS_APPEND	1
#define UKS_TRACEFS_TRUNC	2
ssize_t uks_tracefs_read_all(struct uks_trace *tr, const char *path, char *buf, size_t len);
int uks_tracefs_write_str(struct uks_trace *tr, const char *path, const char *str, int how);

#ifdef __cplusplus
}
#endif

#endif
