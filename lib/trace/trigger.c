// SPDX-License-Identifier: MIT
/*
 * The trigger file of each event: parsing and removing triggers, listing
 * them, and running them on the hit path.
 *
 * A write is one command (the kernel's trigger_process_regex()):
 *
 *	[!]traceon|traceoff|snapshot|stacktrace[:N] [if FILTER]
 *	[!]enable_event|disable_event:SYS:EVENT[:N] [if FILTER]
 *
 * with the kernel's answers: -EINVAL for an unknown command, a bad count,
 * a missing "if", an unknown SYS:EVENT or a filter that does not parse
 * (which also goes to error_log as "event filter parse error"), -ERANGE
 * for a count past unsigned long, -EEXIST for a second trigger of the
 * same type (traceon and traceoff are one type, as are enable_event and
 * disable_event on one target).  "!cmd" removes the trigger of cmd's type
 * whatever its count and filter, and succeeds when there is none.
 *
 * A file with triggers holds a soft-mode reference on itself (the
 * kernel's TRIGGER_MODE): its probe runs even when the event is not
 * enabled, so the triggers fire, and the record is only written when the
 * event is enabled.
 */
#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/trigger.h"

static const struct uks_trigger_cmd *const commands[] = {
	/* The order of the kernel's "# Available triggers:" line. */
	&__uks_trigger_traceon_cmd,
	&__uks_trigger_traceoff_cmd,
	&__uks_trigger_snapshot_cmd,
	&__uks_trigger_stacktrace_cmd,
	&__uks_trigger_enable_event_cmd,
	&__uks_trigger_disable_event_cmd,
};

/* ------------------------------------------------------------ hit path */

/* Not inlined: the stacktrace trigger skips a known number of frames. */
static __attribute__((noinline)) void fire(struct uks_trigger *t)
{
	unsigned long count = __atomic_load_n(&t->count, __ATOMIC_RELAXED);

	if (count != UKS_TRIGGER_UNLIMITED) {
		/* Racy across CPUs, as the kernel's count is. */
		if (!count || (t->cmd->needed && !t->cmd->needed(t)))
			return;
		__atomic_store_n(&t->count, count - 1, __ATOMIC_RELAXED);
	}
	t->cmd->fire(t);
}

/**
 * __uks_trace_triggers_call - the kernel's event_triggers_call()
 * @file:	the event's file (TRIGGER_MODE)
 * @rec:	the record, or NULL when no trigger needs it
 * @len:	its length
 * @cpu:	the CPU filters see
 *
 * Returns the types of the post-commit triggers to run next.
 */
unsigned int __uks_trace_triggers_call(struct uks_event_file *file, const void *rec, size_t len,
				       int cpu)
{
	struct uks_trigger_set *set = __atomic_load_n(&file->triggers, __ATOMIC_ACQUIRE);
	unsigned int post = 0;

	if (!set)
		return 0;
	for (unsigned int i = 0; i < set->nr; i++) {
		struct uks_trigger *t = set->t[i];

		if (rec) {
			struct uks_filter_ctx ctx = { cpu, NULL };

			if (t->filter) {
				ctx.comm = __uks_trace_current_comm();
				if (!__uks_trace_filter_match(t->filter, rec, len, &ctx))
					continue;
			}
			if (t->cmd->post) {
				post |= t->cmd->type;
				continue;
			}
		}
		fire(t);
	}
	return post;
}

void __uks_trace_triggers_post_call(struct uks_event_file *file, unsigned int types)
{
	struct uks_trigger_set *set = __atomic_load_n(&file->triggers, __ATOMIC_ACQUIRE);

	for (unsigned int i = 0; set && i < set->nr; i++)
		if (set->t[i]->cmd->type & types)
			fire(set->t[i]);
}

/* ------------------------------------------------------------ the set */

static void trigger_free(struct uks_trigger *t)
{
	if (!t)
		return;
	if (t->initialized && t->cmd->release)
		t->cmd->release(t);
	if (t->target)
		__uks_trace_file_enable(t->target, false, true);
	__uks_trace_filter_free(t->filter);
	uks_kfree(t->filter_str);
	uks_kfree(t);
}

/* Wait until no hit can still see what was unpublished from @file. */
static void trigger_sync(struct uks_event_file *file)
{
	if (file->call->tp) {
		uks_tracepoint_synchronize(file->call->tp);
	} else {
		/* ftrace:print runs its triggers under tr->lock (marker.c). */
		pthread_mutex_lock(&file->tr->lock);
		pthread_mutex_unlock(&file->tr->lock);
	}
}

/* What the hit path must do for @set (the kernel's update_cond_flag()). */
static unsigned int set_flags(const struct uks_trigger_set *set)
{
	unsigned int flags = set ? UKS_FILE_TRIGGER_MODE : 0;

	for (unsigned int i = 0; set && i < set->nr; i++)
		if (set->t[i]->filter || set->t[i]->cmd->post)
			flags |= UKS_FILE_TRIGGER_COND;
	return flags;
}

/*
 * Publish @file's triggers with @add first and without @drop (either may
 * be NULL).  The first trigger puts the file in soft mode, the last takes
 * it out.  Caller holds event_mutex.  Returns 0, -ENOMEM or reg()'s error.
 */
static int set_replace(struct uks_event_file *file, struct uks_trigger *add,
		       struct uks_trigger *drop)
{
	struct uks_trigger_set *old = file->triggers, *set = NULL;
	unsigned int n = 0, nr = (old ? old->nr : 0) + (add != NULL), need;
	int ret;

	if (nr - (drop != NULL)) {
		set = uks_kmalloc(sizeof(*set) + nr * sizeof(set->t[0]));
		if (!set)
			return -ENOMEM;
		if (add)
			set->t[n++] = add;
		for (unsigned int i = 0; old && i < old->nr; i++)
			if (old->t[i] != drop)
				set->t[n++] = old->t[i];
		set->nr = n;
	}
	if (!old && set) {
		ret = __uks_trace_file_enable(file, true, true);
		if (ret) {
			uks_kfree(set);
			return ret;
		}
	}
	/*
	 * Flags a set needs are raised before it is seen and dropped after
	 * no hit can see the old one: a trigger with a filter never runs
	 * without its record.
	 */
	need = set_flags(set);
	__atomic_fetch_or(&file->flags, need, __ATOMIC_RELEASE);
	__atomic_store_n(&file->triggers, set, __ATOMIC_RELEASE);
	if (old)
		trigger_sync(file);
	__atomic_fetch_and(&file->flags, ~((UKS_FILE_TRIGGER_MODE | UKS_FILE_TRIGGER_COND) & ~need),
			   __ATOMIC_RELEASE);
	uks_kfree(old);
	if (drop)
		trigger_free(drop);
	if (old && !set)
		__uks_trace_file_enable(file, false, true);
	return 0;
}

void __uks_trace_file_triggers_clear(struct uks_event_file *file)
{
	while (file->triggers)
		set_replace(file, NULL, file->triggers->t[0]);
}

void __uks_trace_triggers_clear(struct uks_trace *tr)
{
	struct uks_event_file *file;

	list_for_each_entry(file, &tr->files, list)
		__uks_trace_file_triggers_clear(file);
}

/* ------------------------------------------------------------ parsing */

static char *skip_spaces(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static char *strim(char *s)
{
	char *end;

	s = skip_spaces(s);
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* "N[:...]": the kernel's event_trigger_parse_num() with kstrtoul(…, 0). */
static int parse_count(char *param, unsigned long *count)
{
	char *number = strsep(&param, ":"), *end;
	unsigned long long v;
	int base = 10;

	if (!*number)
		return -EINVAL;
	if (*number == '+')
		number++;
	if (number[0] == '0' && (number[1] == 'x' || number[1] == 'X') &&
	    isxdigit((unsigned char)number[2]))
		base = 16;
	else if (number[0] == '0' && number[1])
		base = 8;
	if (!isxdigit((unsigned char)number[base == 16 ? 2 : 0]))
		return -EINVAL;
	errno = 0;
	v = strtoull(number, &end, base);
	if (*end == '\n' && !end[1])
		end++;
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v > (unsigned long)-1)
		return -ERANGE;
	*count = (unsigned long)v;
	return 0;
}

/* "if FILTER": the kernel's set_trigger_filter(); the filter is on @file's event. */
static int parse_filter(struct uks_event_file *file, char *text, struct uks_trigger *t)
{
	struct uks_filter_error err = { 0 };
	char *s = strsep(&text, " \t");
	size_t n;
	int ret;

	if (strcmp(s, "if") || !text)
		return -EINVAL;
	ret = __uks_trace_filter_compile(text, file->call->all_fields, file->call->nr_all_fields,
					 &t->filter, &err);
	if (ret) {
		if (ret != -ENOMEM)
			__uks_trace_log_err(file->tr, "event filter parse error", text,
					    err.msg ? err.msg : "Error", (unsigned int)err.pos);
		return ret;
	}
	n = strlen(text) + 1;
	t->filter_str = uks_kmalloc(n);
	if (!t->filter_str)
		return -ENOMEM;
	memcpy(t->filter_str, text, n);
	return 0;
}

static struct uks_trigger *find_same(struct uks_event_file *file, const struct uks_trigger *t)
{
	struct uks_trigger_set *set = file->triggers;

	for (unsigned int i = 0; set && i < set->nr; i++)
		if (set->t[i]->cmd->type == t->cmd->type && set->t[i]->target == t->target)
			return set->t[i];
	return NULL;
}

/*
 * The rest of a command after its name: [SYS:EVENT][:N] [if FILTER].
 * Without a target, what does not start with a digit is the filter.
 */
static int parse_command(struct uks_event_file *file, const struct uks_trigger_cmd *cmd,
			 bool remove, char *next)
{
	struct uks_trigger key = { .cmd = cmd }, *t;
	char *param = NULL, *filter = NULL;
	int ret;

	if (cmd->target && !next)
		return -EINVAL;
	if (next && !cmd->target && !isdigit((unsigned char)next[0])) {
		filter = next;
	} else if (next) {
		param = strsep(&next, " \t");
		if (next) {
			filter = skip_spaces(next);
			if (!*filter)
				filter = NULL;
		}
	}
	if (cmd->target) {
		char *system = strsep(&param, ":"), *event;

		if (!param)
			return -EINVAL;
		event = strsep(&param, ":");
		key.target = __uks_trace_find_file(file->tr, system, event);
		if (!key.target)
			return -EINVAL;
	}
	if (remove) {
		t = find_same(file, &key);
		return t ? set_replace(file, NULL, t) : 0;
	}
	t = uks_kzalloc(sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->cmd = cmd;
	t->file = file;
	t->count = UKS_TRIGGER_UNLIMITED;
	ret = param ? parse_count(param, &t->count) : 0;
	if (!ret && filter)
		ret = parse_filter(file, filter, t);
	if (!ret && key.target) {
		/* The target is soft-enabled while the trigger exists. */
		ret = __uks_trace_file_enable(key.target, true, true);
		if (!ret)
			t->target = key.target;
	}
	if (!ret && find_same(file, t))
		ret = -EEXIST;
	if (!ret && cmd->init) {
		ret = cmd->init(t);
		t->initialized = !ret;
	}
	if (!ret)
		ret = set_replace(file, t, NULL);
	if (ret)
		trigger_free(t);
	return ret;
}

/**
 * __uks_trace_trigger_write - one write(2) to events/SYS/EVENT/trigger
 * @file:	the event's file
 * @text:	the bytes written, NUL-terminated (modified)
 *
 * Caller holds event_mutex.  Returns 0 or -errno (see the top comment).
 */
int __uks_trace_trigger_write(struct uks_event_file *file, char *text)
{
	char *next = strim(text), *command;
	bool remove;

	command = strsep(&next, ": \t");
	if (next) {
		next = skip_spaces(next);
		if (!*next)
			next = NULL;
	}
	remove = command[0] == '!';
	if (remove)
		command++;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(commands[i]->name, command))
			return parse_command(file, commands[i], remove, next);
	return -EINVAL;
}

/* ------------------------------------------------------------ listing */

static void show_one(struct uks_seq *s, const struct uks_trigger *t)
{
	unsigned long count = __atomic_load_n(&t->count, __ATOMIC_RELAXED);

	seq_puts(s, t->cmd->name);
	if (t->target)
		seq_printf(s, ":%s:%s", t->target->call->system, t->target->call->name);
	if (count == UKS_TRIGGER_UNLIMITED)
		seq_puts(s, ":unlimited");
	else
		seq_printf(s, ":count=%ld", (long)count);
	if (t->filter_str)
		seq_printf(s, " if %s\n", t->filter_str);
	else
		seq_putc(s, '\n');
}

/**
 * __uks_trace_trigger_show - the trigger file's text
 *
 * The triggers, newest first, or the kernel's help when there is none.
 * Caller holds event_mutex.
 */
void __uks_trace_trigger_show(struct uks_event_file *file, struct uks_seq *s)
{
	const struct uks_trigger_set *set = file->triggers;

	if (set) {
		for (unsigned int i = 0; i < set->nr; i++)
			show_one(s, set->t[i]);
		return;
	}
	seq_puts(s, "# Available triggers:\n#");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		seq_printf(s, " %s", commands[i]->name);
	seq_putc(s, '\n');
}
