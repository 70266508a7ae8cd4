// SPDX-License-Identifier: MIT
/*
 * set_event, available_events and the enable files of systems and of the
 * events directory (the kernel's ftrace_set_clr_event() family).
 */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/trace.h"

/*
 * Enable or disable every file matching: @match alone matches an event or
 * a system name; otherwise @sys and @event (NULL: any).  Returns 0 when
 * something matched, -EINVAL when nothing did, or the first reg() error.
 * Caller holds event_mutex.
 */
static int set_clr_event(struct uks_trace *tr, const char *match, const char *sys,
			 const char *event, bool enable)
{
	struct uks_event_file *file;
	int ret = -EINVAL, err;

	if (__uks_trace_sync_files(tr))
		return -ENOMEM;
	list_for_each_entry(file, &tr->files, list) {
		struct uks_event_call *call = file->call;

		if (call->flags & UKS_CALL_IGNORE_ENABLE)
			continue;
		if (match && strcmp(match, call->name) && strcmp(match, call->system))
			continue;
		if (sys && strcmp(sys, call->system))
			continue;
		if (event && strcmp(event, call->name))
			continue;
		err = __uks_trace_file_enable(file, enable, false);
		if (err && err != -EINVAL)
			return err;
		if (ret)
			ret = err;
	}
	return ret;
}

/**
 * __uks_trace_set_event - one token written to set_event
 * @spec:	"sys:event", "sys:*", "*:event", "sys", "event", "!sys:event"
 * @enable:	false to force disabling (the leading '!' also disables)
 *
 * Returns 0 or -EINVAL when no event matched.  Caller holds event_mutex.
 */
int __uks_trace_set_event(struct uks_trace *tr, const char *spec, bool enable)
{
	char buf[256], *colon, *sys = NULL, *event, *match = NULL;

	if (*spec == '!') {
		enable = false;
		spec++;
	}
	if (strlen(spec) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, spec);
	colon = strchr(buf, ':');
	if (colon) {
		*colon = '\0';
		sys = buf;
		event = colon + 1;
		if (!*sys || !strcmp(sys, "*"))
			sys = NULL;
		if (!*event || !strcmp(event, "*"))
			event = NULL;
	} else {
		match = buf;
		event = NULL;
		if (!strcmp(match, "*"))
			match = NULL;
	}
	return set_clr_event(tr, match, sys, event, enable);
}

static void print_name(struct uks_seq *s, const struct uks_event_call *call)
{
	/* Events of the ftrace system are listed without their system. */
	if (strcmp(call->system, "ftrace"))
		seq_printf(s, "%s:", call->system);
	seq_printf(s, "%s\n", call->name);
}

void __uks_trace_show_set_event(struct uks_trace *tr, struct uks_seq *s)
{
	struct uks_event_file *file;

	if (__uks_trace_sync_files(tr))
		return;
	list_for_each_entry(file, &tr->files, list)
		if (file->flags & UKS_FILE_ENABLED)
			print_name(s, file->call);
}

void __uks_trace_show_available_events(struct uks_seq *s)
{
	struct uks_event_call *call;

	__uks_trace_sync_calls();
	list_for_each_entry(call, &__uks_trace_calls, list)
		if (!(call->flags & UKS_CALL_IGNORE_ENABLE))
			print_name(s, call);
}

/* events/enable (@system NULL) and events/SYS/enable writes. */
int __uks_trace_system_enable(struct uks_trace *tr, const char *system, int enable)
{
	if (enable != 0 && enable != 1)
		return -EINVAL;
	return set_clr_event(tr, NULL, system, NULL, enable);
}

/* "0", "1", "X" (mixed) or "?" (no events), as system_enable_read(). */
void __uks_trace_system_enable_str(struct uks_trace *tr, const char *system, struct uks_seq *s)
{
	struct uks_event_system *sys;
	struct uks_event_file *file;
	unsigned int set = 0;

	if (__uks_trace_sync_files(tr))
		return;
	/* events/SYS/enable looks at that system's events only. */
	sys = system ? __uks_trace_find_system(system) : NULL;
	if (sys) {
		struct uks_event_call *call;

		list_for_each_entry(call, &sys->calls, sys_list) {
			file = __uks_trace_file_of_call(tr, call);
			if (!file || (call->flags & UKS_CALL_IGNORE_ENABLE))
				continue;
			set |= 1u << !!(file->flags & UKS_FILE_ENABLED);
			if (set == 3)
				break;
		}
		goto out;
	}
	list_for_each_entry(file, &tr->files, list) {
		if (file->call->flags & UKS_CALL_IGNORE_ENABLE)
			continue;
		if (system && strcmp(system, file->call->system))
			continue;
		set |= 1u << !!(file->flags & UKS_FILE_ENABLED);
		if (set == 3)
			break;
	}
out:
	seq_putc(s, "?01X"[set & 3]);
	seq_putc(s, '\n');
}
