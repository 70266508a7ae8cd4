/* SPDX-License-Identifier: MIT */
/* The tracefs node tables (files.c) and open-file state (tracefs.c). */
#ifndef UKS_LIB_TRACE_TRACEFS_H
#define UKS_LIB_TRACE_TRACEFS_H

#include <sys/types.h>

#include "trace/instance.h"
#include "trace/trace.h"

#define UKS_TRACEFS_NAME_MAX	128
#define UKS_TRACEFS_WRITE_MAX	4096	/* one page per command */

enum tracefs_kind {
	TFS_DIR_ROOT,
	TFS_DIR_EVENTS,
	TFS_DIR_SYS,
	TFS_DIR_EVENT,
	TFS_DIR_OPTIONS,
	TFS_DIR_PER_CPU,
	TFS_DIR_CPU,
	TFS_DIR_INSTANCES,
	TFS_FIRST_FILE,
	TFS_FILE = TFS_FIRST_FILE,
};

#define TFS_RAW_WRITE	1	/* write handler takes any length (trace_marker) */
#define TFS_PER_CPU	2	/* per_cpu/cpuN/...: only that CPU */

struct uks_tracefs_file;

struct tracefs_node {
	const char *name;
	enum tracefs_kind kind;
	unsigned int mode;
	unsigned int flags;
	int (*open)(struct uks_tracefs_file *f);
	void (*show)(struct uks_tracefs_file *f, struct uks_seq *s);
	ssize_t (*read)(struct uks_tracefs_file *f, void *buf, size_t len);
	int (*write)(struct uks_tracefs_file *f, char *text, size_t len);
	int (*poll)(struct uks_tracefs_file *f);
	void (*release)(struct uks_tracefs_file *f);
};

struct tracefs_loc {
	const struct tracefs_node *node;
	char sys[UKS_TRACEFS_NAME_MAX];
	char event[UKS_TRACEFS_NAME_MAX];
	struct uks_event_file *file;	/* events/SYS/EVENT/... */
	int cpu;			/* per_cpu/cpuN/... */
	int opt;			/* options/NAME */
};

struct uks_tracefs_file {
	struct uks_trace *tr;
	struct tracefs_loc loc;
	int flags;
	struct uks_seq content;
	size_t pos;
	bool shown;
	int interrupted;
	const struct uks_trace_task *writer;	/* during a write: who writes */
	struct uks_trace_iter iter;	/* trace, trace_pipe */
	struct uks_rb_snapshot *snap;	/* trace */
	struct uks_rb_event pending;	/* trace: the next event to print */
	bool have_pending;
	bool header_done;
	void *scratch;			/* trace_pipe: the event, a lookahead */
};

extern const struct tracefs_node uks_tracefs_root[];
extern const struct tracefs_node uks_tracefs_events_files[];
extern const struct tracefs_node uks_tracefs_sys_files[];
extern const struct tracefs_node uks_tracefs_event_files[];
extern const struct tracefs_node uks_tracefs_cpu_files[];
extern const struct tracefs_node uks_tracefs_root_dir, uks_tracefs_sys_dir,
	uks_tracefs_event_dir, uks_tracefs_cpu_dir, uks_tracefs_option_file;

int uks_tracefs_resolve(struct uks_trace *tr, const char *path, struct tracefs_loc *loc);

/* readers.c: trace and trace_pipe */
int uks_tracefs_trace_open(struct uks_tracefs_file *f);
ssize_t uks_tracefs_trace_read(struct uks_tracefs_file *f, void *buf, size_t len);
void uks_tracefs_trace_release(struct uks_tracefs_file *f);
int uks_tracefs_pipe_open(struct uks_tracefs_file *f);
ssize_t uks_tracefs_pipe_read(struct uks_tracefs_file *f, void *buf, size_t len);
int uks_tracefs_pipe_poll(struct uks_tracefs_file *f);
void uks_tracefs_pipe_release(struct uks_tracefs_file *f);

/* dynamic_events.c */
void uks_dynamic_events_show(struct uks_tracefs_file *f, struct uks_seq *s);
int uks_dynamic_events_write(struct uks_trace *tr, char *text);
int uks_dynamic_events_clear(struct uks_trace *tr);
extern const char uks_tracefs_readme[];

#endif
