// SPDX-License-Identifier: MIT
/*
 * events/SYS/filter: one filter written for every event of a system, as
 * the kernel's apply_subsystem_event_filter() does it.
 *
 * Each event of the system in the instance gets the filter compiled
 * against its own fields.  An event the text does not compile for (a field
 * it lacks, or any parse error) loses its old filter: it then filters
 * nothing and its filter file shows the text, a caret at 0 and "Couldn't
 * find or set field in one of a subsystem's events", which also goes to
 * error_log, once per such event.  The write itself succeeds whenever the
 * system has events.  "0" clears every event's filter.  The system's own
 * file always reads back the kernel's "### global filter ###" text: a
 * system filter that took keeps no text of its own.
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/trace.h"

#define BAD_SUBSYS_FILTER	"Couldn't find or set field in one of a subsystem's events"

const char __uks_trace_sys_filter_default[] =
	"### global filter ###\n"
	"# Use this to set filters for multiple events.\n"
	"# Only events with the given fields will be affected.\n"
	"# If no events are modified, an error message will be displayed here\n";

static char *dup_text(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);
	char *d = uks_kmalloc(a + b + 1);

	if (d) {
		memcpy(d, s, a);
		memcpy(d + a, suffix, b + 1);
	}
	return d;
}

/* One event's share of a system filter.  0 or -ENOMEM (nothing changed). */
static int set_one(struct uks_event_file *file, const char *text)
{
	struct uks_filter_error err = { 0 };
	struct uks_filter *filter = NULL;
	char *shown;
	int ret;

	ret = __uks_trace_filter_compile(text, file->call->all_fields, file->call->nr_all_fields,
					 &filter, &err);
	if (ret == -ENOMEM)
		return ret;
	shown = dup_text(text, ret ? "\n^\nparse_error: " BAD_SUBSYS_FILTER "\n" : "");
	if (!shown) {
		__uks_trace_filter_free(filter);
		return -ENOMEM;
	}
	if (ret)
		__uks_trace_log_err(file->tr, "event filter parse error", text,
				    BAD_SUBSYS_FILTER, 0);
	__uks_trace_file_replace_filter(file, ret ? NULL : filter, shown);
	return 0;
}

/**
 * __uks_trace_system_set_filter - a write to events/@system/filter
 * @tr:		the instance
 * @system:	the system's name (it may have gone since the open)
 * @text:	the bytes written, NUL-terminated; trailing white space is
 *		cut in place, leading white space stays in the filter's text
 *
 * Caller holds event_mutex.  Returns 0, -ENODEV when the system has no
 * events left, or -ENOMEM (events done before it keep their new filter).
 */
int __uks_trace_system_set_filter(struct uks_trace *tr, const char *system, char *text)
{
	struct uks_event_system *sys = __uks_trace_find_system(system);
	struct uks_event_call *call;
	size_t n = strlen(text);
	const char *word = text;
	bool any = false;

	while (n && isspace((unsigned char)text[n - 1]))
		text[--n] = '\0';
	while (isspace((unsigned char)*word))
		word++;
	if (!sys)
		return -ENODEV;
	list_for_each_entry(call, &sys->calls, sys_list) {
		struct uks_event_file *file = __uks_trace_file_of_call(tr, call);
		int ret = 0;

		if (!file)
			continue;
		any = true;
		if (!strcmp(word, "0"))
			__uks_trace_file_replace_filter(file, NULL, NULL);
		else
			ret = set_one(file, text);
		if (ret)
			return ret;
	}
	return any ? 0 : -ENODEV;
}
