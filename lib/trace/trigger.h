/* SPDX-License-Identifier: MIT */
/*
 * Event triggers (the kernel's trace_events_trigger.c, without hist): the
 * events/SYS/EVENT/trigger file, commands that run when their event is hit.
 *
 * A file's triggers are an array replaced whole under event_mutex and
 * read on the hit path without a lock; a replaced array and a removed
 * trigger are freed after a tracepoint grace period.  The file's flags
 * say what the hit path must do (UKS_FILE_TRIGGER_MODE: there are
 * triggers; UKS_FILE_TRIGGER_COND: one of them needs the record, so the
 * record is built even when the event is soft-disabled).
 */
#ifndef UKS_LIB_TRACE_TRIGGER_H
#define UKS_LIB_TRACE_TRIGGER_H

#include "trace/trace.h"

/* Trigger types (the kernel's enum event_trigger_type): one of each per file. */
enum {
	UKS_TRIGGER_TRACE_ONOFF		= 1 << 0,
	UKS_TRIGGER_SNAPSHOT		= 1 << 1,
	UKS_TRIGGER_STACKTRACE		= 1 << 2,
	UKS_TRIGGER_EVENT_ENABLE	= 1 << 3,
};

#define UKS_TRIGGER_UNLIMITED	((unsigned long)-1)

struct uks_trigger;

/**
 * struct uks_trigger_cmd - a trigger command (the kernel's event_command)
 * @name:	as written: "traceon", "enable_event", ...
 * @type:	UKS_TRIGGER_*; a file holds one trigger of a type (one per
 *		target event for enable_event/disable_event)
 * @post:	runs after the event's record is committed (stacktrace)
 * @target:	takes SYS:EVENT before the count (enable_event/disable_event)
 * @init:	on registration, under event_mutex (may fail)
 * @fire:	the action, on the hit path: no lock, no allocation
 * @needed:	with a count, whether @fire would change anything (the
 *		count is only spent then); NULL: always
 */
struct uks_trigger_cmd {
	const char *name;
	unsigned int type;
	bool post;
	bool target;
	int (*init)(struct uks_trigger *t);
	void (*release)(struct uks_trigger *t);	/* undoes a successful init */
	void (*fire)(struct uks_trigger *t);
	bool (*needed)(const struct uks_trigger *t);
};

/* One trigger (the kernel's event_trigger_data). */
struct uks_trigger {
	const struct uks_trigger_cmd *cmd;
	struct uks_event_file *file;	/* the event it is on */
	struct uks_event_file *target;	/* enable_event/disable_event */
	unsigned long count;		/* UKS_TRIGGER_UNLIMITED or what is left */
	struct uks_filter *filter;	/* on the event's record */
	char *filter_str;
	bool initialized;		/* cmd->init succeeded */
};

/* A file's triggers, newest first (as the kernel lists and runs them). */
struct uks_trigger_set {
	unsigned int nr;
	struct uks_trigger *t[];
};

/* trigger.c */
int __uks_trace_trigger_write(struct uks_event_file *file, char *text);
void __uks_trace_trigger_show(struct uks_event_file *file, struct uks_seq *s);
/* Remove every trigger of @tr's files (before its files go).  event_mutex. */
void __uks_trace_triggers_clear(struct uks_trace *tr);
/* Remove @file's triggers.  Caller holds event_mutex. */
void __uks_trace_file_triggers_clear(struct uks_event_file *file);

/*
 * The hit path.  With @rec NULL every trigger fires (none needs the
 * record); otherwise those whose filter passes, and the post-commit ones
 * are only collected: their types are returned for the post call.
 */
unsigned int __uks_trace_triggers_call(struct uks_event_file *file, const void *rec, size_t len,
				       int cpu);
void __uks_trace_triggers_post_call(struct uks_event_file *file, unsigned int types);

/* trigger_cmds.c */
extern const struct uks_trigger_cmd __uks_trigger_traceon_cmd, __uks_trigger_traceoff_cmd,
	__uks_trigger_snapshot_cmd, __uks_trigger_enable_event_cmd,
	__uks_trigger_disable_event_cmd;

/* trigger_stack.c */
extern const struct uks_trigger_cmd __uks_trigger_stacktrace_cmd;
int __uks_trace_stack_init(void);

#endif
