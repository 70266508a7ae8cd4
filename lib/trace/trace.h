/* SPDX-License-Identifier: MIT */
/*
 * uks event tracing: the internal model.
 *
 * What: the kernel's trace_events machinery for user space.  Events
 * ("calls", the kernel's trace_event_call) are global, as in the kernel:
 * every static tracepoint registered with lib/core/tracepoint.c becomes a
 * call when a trace instance first looks, and dynamic events (eprobes) are
 * added through dynamic_events.  Each trace instance (struct uks_trace,
 * the kernel's trace_array) has its own ring buffer, options, error_log,
 * and one event file (the kernel's trace_event_file) per call with the
 * enable state and filter.
 *
 * How an event gets written: enabling an event file attaches a probe to
 * the call's tracepoint.  On a hit the probe reserves ring-buffer space,
 * fills the common header, the tracepoint fills the fields, and the probe's
 * commit runs the file's filter and commits or discards.  Nothing on that
 * path takes a lock or allocates.
 *
 * Each tracefs file is a struct kfs_node (lib/core/kfs.h; the tables are
 * in files.c) with ->show producing the whole content (made at the first
 * read, served by offset, as seq_file does) and ->write taking one
 * write(2)'s bytes.
 *
 * Lock order: event_mutex (global: calls, dynamic events, enabling) ->
 * tr->lock (instance options, error_log) -> ring-buffer CPU locks (leaf).
 * The tracepoint registry lock is a leaf taken under event_mutex.
 */
#ifndef UKS_LIB_TRACE_TRACE_H
#define UKS_LIB_TRACE_TRACE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <uks/trace.h>
#include <uks/tracepoint.h>

#include "core/list.h"
#include "trace/event_pids.h"
#include "trace/field.h"
#include "trace/filter.h"
#include "trace/name_index.h"
#include "trace/ring_buffer.h"
#include "core/seq.h"

#define UKS_TRACE_DEFAULT_BUF_KB	1408	/* the kernel's default per CPU */
#define UKS_ERROR_LOG_MAX		8
#define UKS_MAX_FILTER_STR		4096
#define UKS_TRACE_FTRACE_PRINT_ID	5	/* TRACE_PRINT in the kernel */
#define UKS_TRACE_FTRACE_RAW_DATA_ID	18	/* TRACE_RAW_DATA (5.15 and 6.12) */

extern pthread_mutex_t __uks_trace_event_mutex;
extern struct list_head __uks_trace_traces;

enum {
	UKS_CALL_DYNAMIC	= 1 << 0,	/* created through dynamic_events */
	UKS_CALL_EPROBE		= 1 << 1,
	UKS_CALL_IGNORE_ENABLE	= 1 << 2,	/* ftrace internal (print) */
	UKS_CALL_OWN_LINE	= 1 << 3,	/* no "name: " before the text */
};

struct uks_event_call;
struct uks_event_file;

/* How a call prints its records after "name: " (without the newline). */
typedef void (*uks_call_print_fn)(struct uks_seq *s, const struct uks_event_call *call,
				  const void *rec, size_t len);

/*
 * A system: the events/SYS directory.  It exists while it has calls and
 * indexes them by name, so a lookup of events/SYS/EVENT costs two hash
 * lookups and a listing walks only its own calls.
 */
struct uks_event_system {
	struct list_head list;		/* __uks_trace_systems, in creation order */
	struct uks_index_node node;	/* the index of systems by name */
	struct list_head calls;		/* in the order they were added */
	struct uks_index by_name;
	char *name;
};

struct uks_event_call {
	struct list_head list;		/* __uks_trace_calls, under event_mutex */
	char *system;
	char *name;
	struct uks_event_system *sys;	/* once added */
	struct list_head sys_list;	/* sys->calls */
	struct uks_index_node name_node;	/* sys->by_name */
	struct uks_index_node id_node;	/* the index of calls by ID */
	struct list_head files;		/* its file in each instance */
	int id;
	unsigned int flags;
	struct uks_tracepoint *tp;	/* where files attach their probes */
	/*
	 * The call's own fields, then the generic ones (CPU, cpu, COMM, comm),
	 * then common_*: the order in which the kernel looks a filter's field
	 * names up.
	 */
	struct uks_event_field *all_fields;
	size_t nr_fields;		/* own fields */
	size_t nr_all_fields;
	uks_call_print_fn print;
	void (*print_fmt)(struct uks_seq *s, const struct uks_event_call *call);
	/* Enable/disable @file; NULL: attach the file's probe to @tp. */
	int (*reg)(struct uks_event_file *file, bool enable);
	int refcnt;			/* eprobes attached to this call */
	void *priv;			/* eprobe state for eprobe calls */
	unsigned long generation;	/* bumped when the call is replaced */
};

#define UKS_NR_GENERIC_FIELDS	4
#define UKS_NR_COMMON_FIELDS	4

/* The common_* fields of a call. */
static inline const struct uks_event_field *call_common_fields(const struct uks_event_call *call)
{
	return call->all_fields + call->nr_fields + UKS_NR_GENERIC_FIELDS;
}

/*
 * Event file flags (the kernel's EVENT_FILE_FL_*).  ENABLED: the probe is
 * on the tracepoint (also in soft mode); SOFT_MODE: held by eprobes,
 * triggers on it and enable_event/disable_event triggers naming it;
 * SOFT_DISABLED: the probe runs but writes no record.  Changed with
 * atomic operations: triggers flip SOFT_DISABLED from the hit path.
 */
enum {
	UKS_FILE_ENABLED	= 1 << 0,
	UKS_FILE_SOFT_MODE	= 1 << 1,
	UKS_FILE_SOFT_DISABLED	= 1 << 2,
	UKS_FILE_TRIGGER_MODE	= 1 << 3,	/* has triggers */
	UKS_FILE_TRIGGER_COND	= 1 << 4,	/* a trigger needs the record */
	UKS_FILE_FREED		= 1 << 5,	/* removed; open files answer -ENODEV */
};

struct uks_trigger_set;

struct uks_event_file {
	struct list_head list;		/* tr->files */
	struct list_head call_list;	/* call->files */
	struct uks_trace *tr;
	struct uks_event_call *call;
	unsigned int flags;
	int sm_ref;			/* soft-mode references */
	bool attached;			/* our probe is on call->tp */
	struct uks_filter *filter;	/* read on the hit path (atomic) */
	char *filter_str;
	void *probe_priv;		/* eprobe: the instance's runtime state */
	/*
	 * The instance's list holds one reference, each open file of
	 * events/SYS/EVENT/ one more (taken under event_mutex): a removed
	 * file is UKS_FILE_FREED and its memory goes with the last one.
	 */
	int ref;
	struct uks_trigger_set *triggers;	/* trigger.c; read on the hit path */
};

struct uks_error_log_entry {
	uint64_t ts;
	char *loc;
	char *cmd;
	char *err;
	unsigned int pos;
};

/* Instance options (trace_options) uks implements. */
enum {
	UKS_OPT_PRINT_PARENT,
	UKS_OPT_SYM_OFFSET,
	UKS_OPT_SYM_ADDR,
	UKS_OPT_VERBOSE,
	UKS_OPT_RAW,
	UKS_OPT_HEX,
	UKS_OPT_BIN,
	UKS_OPT_BLOCK,
	UKS_OPT_CONTEXT_INFO,
	UKS_OPT_LATENCY_FORMAT,
	UKS_OPT_RECORD_CMD,
	UKS_OPT_RECORD_TGID,
	UKS_OPT_OVERWRITE,
	UKS_OPT_DISABLE_ON_FREE,
	UKS_OPT_IRQ_INFO,
	UKS_OPT_MARKERS,
	UKS_OPT_EVENT_FORK,
	UKS_OPT_PAUSE_ON_TRACE,
	UKS_OPT_FIELDS,
	UKS_OPT_TRACE_PRINTK,
	UKS_OPT_ANNOTATE,
	UKS_OPT_USERSTACKTRACE,
	UKS_OPT_SYM_USEROBJ,
	UKS_OPT_PRINTK_MSG_ONLY,
	UKS_OPT_HASH_PTR,
	UKS_OPT_STACKTRACE,
	UKS_OPT_TEST_NOP_ACCEPT,	/* the nop tracer's own two options */
	UKS_OPT_TEST_NOP_REFUSE,
	UKS_NR_OPTS,
};

/* The kernel's TRACE_DEFAULT_FLAGS (options.c has what each one does here). */
#define UKS_TRACE_DEFAULT_OPTS						\
	((1ull << UKS_OPT_PRINT_PARENT) | (1ull << UKS_OPT_TRACE_PRINTK) |	\
	 (1ull << UKS_OPT_ANNOTATE) | (1ull << UKS_OPT_CONTEXT_INFO) |	\
	 (1ull << UKS_OPT_RECORD_CMD) | (1ull << UKS_OPT_OVERWRITE) |	\
	 (1ull << UKS_OPT_IRQ_INFO) | (1ull << UKS_OPT_MARKERS) |	\
	 (1ull << UKS_OPT_HASH_PTR))

struct uks_trace {
	struct list_head list;		/* __uks_trace_traces, under event_mutex */
	char *name;			/* NULL for the top level */
	pthread_mutex_t lock;
	struct uks_rb *rb;
	size_t *buffer_kb;		/* buffer_size_kb per CPU, as written; event_mutex */
	bool buffer_expanded;
	uint64_t opts;			/* bit per UKS_OPT_* */
	struct list_head files;		/* one struct uks_event_file per call, under event_mutex */
	struct uks_error_log_entry errors[UKS_ERROR_LOG_MAX];
	unsigned int nr_errors, next_error;
	struct uks_pid_list *event_pids;	/* set_event_pid; NULL: all (event_pids.c) */
	struct uks_pid_list *notrace_pids;	/* set_event_notrace_pid; NULL: none */
	int opens;			/* open files: rmdir says EBUSY */
	/* instances/: made by mkdir below a top level, which owns them */
	struct uks_trace *parent;	/* the top level, for an instance of it */
	struct list_head instances;	/* a top level's instances, under event_mutex */
	struct list_head instance_list;	/* in parent->instances */
	unsigned int nr_instances, max_instances;
	struct uks_event_file *marker_file;	/* ftrace:print's, for its triggers */
	/*
	 * The spare buffer (snapshot.c): made at the first use and kept, at
	 * its smallest while freed, as the kernel keeps max_buffer.
	 */
	struct uks_rb *snapshot;	/* set once under event_mutex */
	bool snapshot_allocated;	/* under snapshot_busy */
	int snapshot_busy;		/* a swap, resize or free is under way */
	unsigned long *tracing_cpumask;	/* nr_cpu_ids bits; NULL: every CPU */
	/*
	 * Its owner (the top level's creator, or its instances/ list) holds
	 * one reference, each open file one more: an instance rmdir removed
	 * while a flushed file of it was not yet released goes with that
	 * file's release.
	 */
	int ref;
	unsigned int subbuf_order;	/* buffer_subbuf_size_kb: 4 KiB << order */
};

/* How many instances one top level may have (mkdir says -ENOSPC past it). */
#define UKS_TRACE_MAX_INSTANCES	64

static inline bool trace_opt(const struct uks_trace *tr, int opt)
{
	return __atomic_load_n(&tr->opts, __ATOMIC_RELAXED) & (1ull << opt);
}

/* instance.c */
void __uks_trace_get(struct uks_trace *tr);
void __uks_trace_put(struct uks_trace *tr);

/* events.c */
int __uks_trace_sync_calls(void);
struct uks_event_call *__uks_trace_find_call(const char *system, const char *name);
struct uks_event_call *__uks_trace_find_call_by_id(int id);
struct uks_event_system *__uks_trace_find_system(const char *name);
struct uks_event_call *__uks_trace_call_alloc(const char *system, const char *name,
					      const struct uks_event_field *fields,
					      size_t nr_fields);
int __uks_trace_call_add(struct uks_event_call *call);
void __uks_trace_call_remove(struct uks_event_call *call);
void __uks_trace_call_free(struct uks_event_call *call);
void __uks_trace_call_print_format(struct uks_seq *s, const struct uks_event_call *call);
bool uks_call_is_enabled_anywhere(const struct uks_event_call *call);
extern struct list_head __uks_trace_calls;
extern struct list_head __uks_trace_systems;

/* event_file.c */
int __uks_trace_sync_files(struct uks_trace *tr);
/* Files of a new call in every instance, of every call in a new instance. */
int __uks_trace_call_files_alloc(struct uks_event_call *call);
int __uks_trace_files_alloc(struct uks_trace *tr);
struct uks_event_file *__uks_trace_find_file(struct uks_trace *tr, const char *system,
					     const char *name);
struct uks_event_file *__uks_trace_file_of_call(struct uks_trace *tr, struct uks_event_call *call);
int __uks_trace_file_enable(struct uks_event_file *file, bool enable, bool soft);
int __uks_trace_file_set_filter(struct uks_event_file *file, const char *text);
void __uks_trace_file_replace_filter(struct uks_event_file *file, struct uks_filter *filter,
				     char *str);
void __uks_trace_file_enable_str(struct uks_event_file *file, struct uks_seq *s);
void __uks_trace_file_free(struct uks_event_file *file);
/* An open file's reference (get under event_mutex; put anywhere). */
void __uks_trace_file_get(struct uks_event_file *file);
void __uks_trace_file_put(struct uks_event_file *file);
/* Files of @call in every instance: are any enabled; free them all. */
bool __uks_trace_call_files_busy(struct uks_event_call *call);
void __uks_trace_call_files_free(struct uks_event_call *call);
/* Fill the common header of a record written by this thread. */
void __uks_trace_fill_entry(struct uks_trace *tr, struct uks_trace_entry *ent, int type);
uint64_t __uks_trace_hit_ts(struct uks_tp_iter *hit, struct uks_rb *rb);
pid_t __uks_trace_current_tid(void);
pid_t __uks_trace_current_tgid(void);
/* Set while a record of this instance is printed (output.c). */
extern __thread const struct uks_trace *__uks_trace_printing __attribute__((tls_model("initial-exec")));
/* A hit on @file: its triggers, then @tr's buffer (or scratch for triggers). */
bool __uks_trace_file_skip_hit(struct uks_event_file *file, unsigned int flags);
void *__uks_trace_file_reserve(struct uks_trace *tr, struct uks_event_file *file, size_t len,
			       uint64_t ts, unsigned int *cpu);
/* Commit @rec to @tr's buffer unless @file's filter rejects it. */
void __uks_trace_commit_filtered(struct uks_trace *tr, struct uks_event_file *file,
				 void *rec, size_t len, unsigned int cpu);

/* cmdlines.c: pid -> comm and pid -> tgid, as saved_cmdlines/saved_tgids */
void __uks_trace_save_cmdline(pid_t pid, const char *comm);
bool __uks_trace_find_cmdline(pid_t pid, char comm[16]);
void __uks_trace_save_tgid(pid_t pid, pid_t tgid);
pid_t __uks_trace_find_tgid(pid_t pid);
void __uks_trace_show_saved_cmdlines(struct uks_seq *s);
void __uks_trace_show_saved_tgids(struct uks_seq *s);
int __uks_trace_cmdlines_size(void);
int __uks_trace_set_cmdlines_size(int size);
/* The comm of the calling thread, cached per thread. */
const char *__uks_trace_current_comm(void);
void __uks_trace_note_current(struct uks_trace *tr);

/* output.c: how one reader prints, fixed at open as the kernel's iter_flags */
struct uks_trace_iter {
	bool lat_fmt;		/* latency-format was on */
	bool in_ns;		/* the clock counts nanoseconds */
	unsigned long idx;	/* index of the next entry (verbose lines) */
	struct uks_rb *rb;	/* the buffer shown: tr->rb, or the snapshot */
};
void __uks_trace_iter_init(struct uks_trace *tr, struct uks_trace_iter *it,
			   unsigned long first_idx);
void __uks_trace_print_header(struct uks_trace *tr, struct uks_seq *s,
			      const struct uks_trace_iter *it, bool empty);
void __uks_trace_print_event(struct uks_trace *tr, struct uks_seq *s, struct uks_trace_iter *it,
			     const struct uks_rb_event *ev, uint64_t next_ts);
/* output_alt.c: printk-msg-only, bin, hex, raw */
bool __uks_trace_print_alt(struct uks_trace *tr, struct uks_seq *s, const struct uks_rb_event *ev);

/* error_log.c */
void __uks_trace_log_err(struct uks_trace *tr, const char *loc, const char *cmd,
			 const char *err, unsigned int pos);
void __uks_trace_show_error_log(struct uks_trace *tr, struct uks_seq *s);
void __uks_trace_clear_error_log(struct uks_trace *tr);

/* set_event.c */
int __uks_trace_set_event(struct uks_trace *tr, const char *spec, bool enable);
void __uks_trace_show_set_event(struct uks_trace *tr, struct uks_seq *s);
void __uks_trace_show_available_events(struct uks_seq *s);
int __uks_trace_system_enable(struct uks_trace *tr, const char *system, int enable);
void __uks_trace_system_enable_str(struct uks_trace *tr, const char *system, struct uks_seq *s);

/* system_filter.c: events/SYS/filter */
extern const char __uks_trace_sys_filter_default[];
int __uks_trace_system_set_filter(struct uks_trace *tr, const char *system, char *text);

/* marker.c */
int __uks_trace_marker_write(struct uks_trace *tr, const char *buf, size_t len,
			     const struct uks_trace_task *writer);
int __uks_trace_marker_raw_write(struct uks_trace *tr, const void *buf, size_t len,
				 const struct uks_trace_task *writer);
extern struct uks_event_call *__uks_trace_ftrace_print_call;
/*
 * Write @text as an ftrace:print record credited to @caller (printed as the
 * kernel prints its ip), as trace_array_puts() does.  Lock-free: for a
 * tracepoint hit.  0 or -EBADF (not recorded).
 */
int __uks_trace_puts(struct uks_trace *tr, const char *caller, const char *text);
extern const char __uks_trace_snapshot_caller[];
int __uks_trace_marker_init(void);

#endif
