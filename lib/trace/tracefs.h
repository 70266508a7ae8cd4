/* SPDX-License-Identifier: MIT */
/*
 * An instance's tracefs files as kfs nodes (lib/core/kfs.h): the tables
 * (files.c), the directories made on demand (tracefs.c) and the readers
 * of trace and trace_pipe (readers.c).
 *
 * Every ref in the tree carries ->obj = the struct uks_trace, ->sub = the
 * event system (events/SYS/...) or the event's file in that instance
 * (events/SYS/EVENT/...), ->idx = the CPU (per_cpu/cpuN/...) or the
 * option's index (options/NAME).
 */
#ifndef UKS_LIB_TRACE_TRACEFS_H
#define UKS_LIB_TRACE_TRACEFS_H

#include <sys/types.h>

#include "core/kfs.h"
#include "trace/instance.h"
#include "trace/trace.h"

#define UKS_TRACEFS_NAME_MAX	128	/* an event or system name (dynamic_events) */
#define UKS_TRACEFS_WRITE_MAX	4096	/* one page per command */

/* struct kfs_node ->data of the files under per_cpu/cpuN: ref->idx is the CPU */
#define TFS_PER_CPU	1
/* ->data of set_event_notrace_pid (set_event_pid shares its ops) */
#define TFS_NOTRACE	2

static inline struct uks_trace *tfs_tr(const struct kfs_open_file *of)
{
	return of->ref.obj;
}

/* Which CPU a file serves: ref->idx under per_cpu/cpuN, else -1 (all). */
static inline int tfs_cpu(const struct kfs_open_file *of)
{
	return of->ref.node->data & TFS_PER_CPU ? (int)of->ref.idx : -1;
}

void __uks_tracefs_root(struct uks_trace *tr, struct kfs_root *root);

/*
 * files.c: the top directory (of the top level, and of instances/NAME,
 * which lacks the files only the top level has), and the subdirectories'
 * nodes
 */
extern const struct kfs_node __uks_tracefs_top, __uks_tracefs_instance;
extern const struct kfs_node __uks_tracefs_sys_dir, __uks_tracefs_ftrace_sys_dir,
	__uks_tracefs_event_dir, __uks_tracefs_ftrace_event_dir, __uks_tracefs_ftrace_print_dir,
	__uks_tracefs_cpu_dir, __uks_tracefs_option_file;
/* Does @tr's options/ have a file for option @name (instances lack a few)? */
bool __uks_tracefs_has_option(const struct uks_trace *tr, const char *name);
/* Is @node a file of events/SYS/EVENT/ (ref->sub is the event's file)? */
bool __uks_tracefs_is_event_file(const struct kfs_node *node);

/*
 * The event file an open file of events/SYS/EVENT/ serves, or NULL when
 * its event was removed since (the kernel's event_file_file(): the file
 * then answers -ENODEV).  Caller holds event_mutex.
 */
static inline struct uks_event_file *tfs_live_file(const struct kfs_open_file *of)
{
	struct uks_event_file *file = of->ref.sub;

	return file->flags & UKS_FILE_FREED ? NULL : file;
}

/* tracefs.c: the ->dir ops of events/, events/SYS/, options/, per_cpu/, instances/ */
extern const struct kfs_dir_ops __uks_tracefs_events_ops, __uks_tracefs_sys_ops,
	__uks_tracefs_options_ops, __uks_tracefs_per_cpu_ops, __uks_tracefs_instances_ops;

/*
 * One write(2) as the kernel's command files take it: more than a page
 * is -EINVAL; @fn gets a NUL-terminated copy and returns 0 or -errno.
 * Returns @len or -errno.
 */
ssize_t __uks_tracefs_command(struct kfs_open_file *of, const char *buf, size_t len,
			      int (*fn)(struct kfs_open_file *of, char *text, size_t len));

/* readers.c: trace (per_cpu/cpuN/trace too) and trace_pipe */
extern const struct kfs_ops __uks_tracefs_trace_ops, __uks_tracefs_pipe_ops;
/* readers.c: snapshot (per_cpu/cpuN/snapshot too) */
extern const struct kfs_ops __uks_tracefs_snapshot_ops;

/* raw.c: trace_pipe_raw, events/header_page, header_event, buffer_subbuf_size_kb */
extern const struct kfs_ops __uks_tracefs_pipe_raw_ops, __uks_tracefs_header_page_ops,
	__uks_tracefs_header_event_ops, __uks_tracefs_subbuf_size_ops,
	__uks_tracefs_printk_formats_ops;

/* marker.c: the task behind @peer (pid, tgid and comm from /proc) */
bool __uks_trace_peer_task(const struct uks_peer *peer, struct uks_trace_task *task);

/* dynamic_events.c */
int __uks_tracefs_dynamic_events_show(struct kfs_open_file *of, struct uks_seq *s);
int __uks_trace_dynamic_events_write(struct uks_trace *tr, char *text);
int __uks_trace_dynamic_events_clear(struct uks_trace *tr);
extern const char __uks_tracefs_readme[];

#endif
