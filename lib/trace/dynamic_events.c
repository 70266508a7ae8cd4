// SPDX-License-Identifier: MIT
/*
 * dynamic_events: create, list and remove dynamic events.  uks has one
 * kind, event probes:
 *
 *	e[:[GRP/]NAME] SYS/EVENT [NAME=FETCHARG[:TYPE] ...]	(SYS.EVENT too)
 *	-:[GRP/]NAME [SYS/EVENT [ARGS]]
 *
 * One write may hold several commands, one per line; '#' starts a comment.
 * Parse errors go to error_log under "event_probe" with the caret where
 * the kernel puts it (the word index plus the offset inside the word).
 * Where 5.15 failed without a message (attached event missing or not
 * named with its system, unknown field) we log the messages 6.0 added.
 * Default names follow 5.15: "e sched/sched_switch" creates
 * eprobes/sched_sched_switch (6.1 changed the default to the attached
 * event's name).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/eprobe.h"
#include "trace/tracefs.h"

#define MAX_EVENT_NAME_LEN	64
#define MAX_ARGV		(128 + 2)
#define EPROBE_GROUP		"eprobes"
#define LOG_LOC			"event_probe"

struct cmd_log {
	struct uks_trace *tr;
	int argc;
	char **argv;
};

/* Log @msg with the caret at word @index, byte @offset (trace_probe_log_err). */
static void log_err(const struct cmd_log *log, int index, int offset, const char *msg)
{
	struct uks_seq cmd = UKS_SEQ_INIT;
	int pos = 0;

	for (int i = 0; i < log->argc; i++) {
		if (i)
			seq_putc(&cmd, ' ');
		if (i < index)
			pos += (int)strlen(log->argv[i]) + 1;
		seq_puts(&cmd, log->argv[i]);
	}
	if (!cmd.overflow)
		__uks_trace_log_err(log->tr, LOG_LOC, cmd.buf ? cmd.buf : "", msg,
				    (unsigned int)(pos + offset));
	seq_free(&cmd);
}

static bool is_good_name(const char *name)
{
	if (!isalpha((unsigned char)*name) && *name != '_')
		return false;
	while (*++name)
		if (!isalnum((unsigned char)*name) && *name != '_')
			return false;
	return true;
}

/*
 * Split "[GROUP/]EVENT" (or GROUP.EVENT) in place, checking both names as
 * traceprobe_parse_event_name() does.  @offset is where @text starts in
 * its word, for the caret.
 */
static int parse_event_name(const struct cmd_log *log, int index, char *text, int offset,
			    char **group, char **event, bool may_omit_event)
{
	char *slash = strchr(text, '/');

	if (!slash)
		slash = strchr(text, '.');
	*group = NULL;
	if (slash) {
		if (slash == text) {
			log_err(log, index, offset, "Group name is not specified");
			return -EINVAL;
		}
		if (slash - text + 1 > MAX_EVENT_NAME_LEN) {
			log_err(log, index, offset, "Group name is too long");
			return -EINVAL;
		}
		*slash = '\0';
		if (!is_good_name(text)) {
			*slash = '/';
			log_err(log, index, offset,
				"Group name must follow the same rules as C identifiers");
			return -EINVAL;
		}
		*group = text;
		offset += (int)(slash - text) + 1;
		text = slash + 1;
	}
	*event = text;
	if (!*text && slash && may_omit_event) {
		*event = NULL;		/* "GRP." or "GRP/": the caller decides */
		return 0;
	}
	if (!*text) {
		log_err(log, index, offset, "Event name is not specified");
		return -EINVAL;
	}
	if (strlen(text) > MAX_EVENT_NAME_LEN) {
		log_err(log, index, offset, "Event name is too long");
		return -EINVAL;
	}
	if (!is_good_name(text)) {
		log_err(log, index, offset, "Event name must follow the same rules as C identifiers");
		return -EINVAL;
	}
	return 0;
}

static void sanitize_event_name(char *name)
{
	for (; *name; name++)
		if (!isalnum((unsigned char)*name) && *name != '_')
			*name = '_';
}

/* An event an eprobe may attach to (not ftrace internal, not an eprobe). */
static struct uks_event_call *find_attach_target(const char *sys, const char *event)
{
	struct uks_event_call *call = __uks_trace_find_call(sys, event);

	if (!call || (call->flags & (UKS_CALL_IGNORE_ENABLE | UKS_CALL_EPROBE)) || !call->tp)
		return NULL;
	return call;
}

/*
 * "if FILTER" (6.1): the words after "if", joined by spaces, compiled
 * against the attached event's fields.  Nothing after "if" is logged past
 * the end of the command, as the kernel; a filter that does not compile
 * is logged as the filter files log theirs.
 */
static int parse_filter(const struct cmd_log *log, int idx, struct uks_event_call *attached,
			struct uks_filter **out)
{
	struct uks_filter_error err = { 0 };
	struct uks_seq text = UKS_SEQ_INIT;
	int ret;

	if (idx >= log->argc) {
		log_err(log, idx, 0, "No filter rule after 'if'");
		return -EINVAL;
	}
	for (int i = idx; i < log->argc; i++)
		seq_printf(&text, "%s%s", i > idx ? " " : "", log->argv[i]);
	if (text.overflow) {
		seq_free(&text);
		return -ENOMEM;
	}
	ret = __uks_trace_filter_compile(text.buf, attached->all_fields, attached->nr_all_fields,
					 out, &err);
	if (ret && ret != -ENOMEM)
		__uks_trace_log_err(log->tr, "event filter parse error", text.buf,
				    err.msg ? err.msg : "Error", (unsigned int)err.pos);
	seq_free(&text);
	return ret;
}

/* @argv is parsed in place; @orig keeps the words as written, for the log. */
static int create_eprobe(struct uks_trace *tr, int argc, char **argv, char **orig)
{
	struct cmd_log log = { tr, argc, orig };
	char *group = NULL, *event = NULL, *sys = NULL, *sys_event = NULL;
	char default_group[] = EPROBE_GROUP;
	char name_buf[MAX_EVENT_NAME_LEN + 1];
	struct uks_probe_error perr = { 0 };
	struct uks_event_call *attached, *call;
	struct uks_filter *filter = NULL;
	int ret, filter_idx = 0;

	if (argc < 2) {
		log_err(&log, 0, 0, "This requires both group and event name to attach");
		return -EINVAL;
	}
	if (argv[0][1] == ':') {
		ret = parse_event_name(&log, 0, &argv[0][2], 2, &group, &event, true);
		if (ret)
			return ret;
	} else if (argv[0][1]) {
		return -EINVAL;		/* "ex ..." is not a command */
	}
	/* As 6.x: any fault in the attach target ends with this line too. */
	ret = parse_event_name(&log, 1, argv[1], 0, &sys, &sys_event, true);
	if (ret || !sys || !sys_event) {
		log_err(&log, 1, 0, "This requires both group and event name to attach");
		return -EINVAL;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "if")) {
			filter_idx = i + 1;
			argc = i;
			break;
		}
	}
	if (!event && group) {
		event = sys_event;	/* "e:GRP/ ...": the attached event's name (6.1) */
	} else if (!event) {
		snprintf(name_buf, sizeof(name_buf), "%s", orig[1]);
		sanitize_event_name(name_buf);
		event = name_buf;
	}
	if (!group)
		group = default_group;

	attached = find_attach_target(sys, sys_event);
	if (!attached) {
		log_err(&log, 1, 0, "Attached event does not exist");
		return -ENODEV;
	}
	if (filter_idx) {
		ret = parse_filter(&log, filter_idx, attached, &filter);
		if (ret)
			return ret;
	}
	/* The arguments are checked before the name is found taken, as the kernel. */
	ret = __uks_trace_eprobe_create(group, event, attached, argc - 2,
					(const char *const *)argv + 2, &call, &perr);
	if (ret) {
		__uks_trace_filter_free(filter);
		if (ret != -ENOMEM)
			log_err(&log, perr.arg >= 0 ? perr.arg + 2 : 0, perr.arg >= 0 ? perr.offset : 0,
				perr.msg ? perr.msg : "Invalid argument");
		return ret;
	}
	((struct uks_eprobe *)call->priv)->filter = filter;
	ret = __uks_trace_call_add(call);
	if (ret) {
		__uks_trace_eprobe_free(call);
		if (ret == -EEXIST)
			log_err(&log, 0, 0, "Given group/event name is already used by another event");
		return ret;
	}
	attached->refcnt++;
	return 0;
}

static bool eprobe_matches(struct uks_event_call *call, const char *group, const char *event,
			   int argc, char **argv)
{
	struct uks_eprobe *ep = call->priv;
	char target[2 * UKS_TRACEFS_NAME_MAX + 2];

	if (!(call->flags & UKS_CALL_EPROBE) || strcmp(call->name, event))
		return false;
	if (group && strcmp(call->system, group))
		return false;
	if (argc < 1)
		return true;
	/* The attached event must match exactly (a later fix: 5.15 compared a prefix). */
	snprintf(target, sizeof(target), "%s/%s", ep->attached->system, ep->attached->name);
	if (strcmp(argv[0], target)) {
		snprintf(target, sizeof(target), "%s.%s", ep->attached->system, ep->attached->name);
		if (strcmp(argv[0], target))
			return false;
	}
	for (int i = 1; i < argc; i++) {
		const char *text = __uks_trace_probe_args_text(ep->args, i - 1);

		if (!text || strcmp(text, argv[i]))
			return false;
	}
	return argc - 1 == __uks_trace_probe_args_count(ep->args) || argc == 1;
}

static void eprobe_destroy(struct uks_event_call *call)
{
	struct uks_eprobe *ep = call->priv;

	__uks_trace_call_files_free(call);
	__uks_trace_call_remove(call);
	ep->attached->refcnt--;
	__uks_trace_eprobe_free(call);
}

/* "-:GRP/ [SYS/EVENT [ARGS]]" (6.0): every matching eprobe of the group. */
static int remove_group(const char *group, int argc, char **argv)
{
	struct uks_event_system *sys = __uks_trace_find_system(group);
	struct uks_event_call *call, *tmp;
	int found = 0;

	if (!sys)
		return -ENOENT;
	list_for_each_entry(call, &sys->calls, sys_list)
		if (eprobe_matches(call, group, call->name, argc - 1, argv + 1) &&
		    (__uks_trace_call_files_busy(call) || call->refcnt))
			return -EBUSY;
	/* The last event removed frees the system: stop at it. */
	for (call = list_first_entry(&sys->calls, struct uks_event_call, sys_list);
	     &call->sys_list != &sys->calls; call = tmp) {
		bool last = call->sys_list.next == &sys->calls;

		tmp = list_next_entry(call, sys_list);
		if (eprobe_matches(call, group, call->name, argc - 1, argv + 1)) {
			eprobe_destroy(call);
			found++;
		}
		if (last)
			break;
	}
	return found ? 0 : -ENOENT;
}

/* "-:[GRP/]NAME [SYS/EVENT [ARGS]]": remove matching eprobes. */
static int remove_event(int argc, char **argv)
{
	struct uks_event_system *sys, *stmp;
	struct uks_event_call *call;
	char *group = NULL, *event;
	int found = 0;

	if (argv[0][1] != ':')
		return -EINVAL;
	event = &argv[0][2];
	if (strchr(event, '/')) {
		group = event;
		event = strchr(event, '/');
		*event++ = '\0';
	}
	if (!*event && !group)
		return -EINVAL;
	if (!*event)
		return remove_group(group, argc, argv);
	/* Found by name in each system (or the one named), not by a scan of all events. */
	list_for_each_entry_safe(sys, stmp, &__uks_trace_systems, list) {
		if (group && strcmp(sys->name, group))
			continue;
		call = __uks_trace_find_call(sys->name, event);
		if (!call || !eprobe_matches(call, group, event, argc - 1, argv + 1))
			continue;
		if (__uks_trace_call_files_busy(call) || call->refcnt)
			return -EBUSY;
		eprobe_destroy(call);	/* may free @sys */
		found++;
	}
	return found ? 0 : -ENOENT;
}

/*
 * Removing dynamic events clears every instance's buffer, so no record of
 * a type that no longer exists is left to print ("Unknown type").  That is
 * what later kernels do (trace_dynevent.c); 5.15 kept the records.
 */
static void reset_all_buffers(void)
{
	struct uks_trace *tr;

	list_for_each_entry(tr, &__uks_trace_traces, list)
		__uks_trace_rb_reset(tr->rb);
}

static int run_command(struct uks_trace *tr, char *line)
{
	char *argv[MAX_ARGV], *orig[MAX_ARGV], *save = NULL, *word, *copy;
	int argc = 0, ret;
	size_t len = strlen(line);

	/* Words are parsed in place; keep an untouched copy for error_log. */
	copy = uks_kmalloc(2 * len + 2);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, line, len + 1);
	for (word = strtok_r(copy, " \t", &save); word; word = strtok_r(NULL, " \t", &save)) {
		if (argc == MAX_ARGV) {
			uks_kfree(copy);
			__uks_trace_log_err(tr, LOG_LOC, line, "Too many arguments are specified",
					    0);
			return -E2BIG;
		}
		argv[argc++] = word;
	}
	if (!argc) {
		uks_kfree(copy);
		return 0;
	}
	{
		char *o = copy + len + 1;

		for (int i = 0; i < argc; i++) {
			size_t n = strlen(argv[i]) + 1;

			memcpy(o, argv[i], n);
			orig[i] = o;
			o += n;
		}
	}
	if (argv[0][0] == '-') {
		ret = remove_event(argc, argv);
		reset_all_buffers();
	}
	else if (argv[0][0] == 'e')
		ret = create_eprobe(tr, argc, argv, orig);
	else
		ret = -EINVAL;	/* kprobes, uprobes and synthetic events are not supported */
	uks_kfree(copy);
	return ret;
}

/**
 * __uks_trace_dynamic_events_write - one write to dynamic_events
 * Returns 0 or the first command's error.
 */
int __uks_trace_dynamic_events_write(struct uks_trace *tr, char *text)
{
	char *save = NULL, *line;
	int ret = 0;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = __uks_trace_sync_calls();
	for (line = strtok_r(text, "\n", &save); line && !ret; line = strtok_r(NULL, "\n", &save)) {
		char *hash = strchr(line, '#');

		if (hash)
			*hash = '\0';
		ret = run_command(tr, line);
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}

/* "> dynamic_events": all or nothing, -EBUSY if any is in use. */
int __uks_trace_dynamic_events_clear(struct uks_trace *tr)
{
	struct uks_event_call *call, *tmp;
	int ret = 0;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	list_for_each_entry(call, &__uks_trace_calls, list) {
		if ((call->flags & UKS_CALL_DYNAMIC) &&
		    (__uks_trace_call_files_busy(call) || call->refcnt)) {
			ret = -EBUSY;
			goto out;
		}
	}
	list_for_each_entry_safe(call, tmp, &__uks_trace_calls, list)
		if (call->flags & UKS_CALL_EPROBE)
			eprobe_destroy(call);
out:
	reset_all_buffers();
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}

/* The dynamic_events file's text: one line per eprobe.  Under event_mutex. */
int __uks_tracefs_dynamic_events_show(struct kfs_open_file *of, struct uks_seq *s)
{
	struct uks_event_call *call;

	list_for_each_entry(call, &__uks_trace_calls, list)
		if (call->flags & UKS_CALL_EPROBE)
			__uks_trace_eprobe_show(s, call);
	return 0;
}
