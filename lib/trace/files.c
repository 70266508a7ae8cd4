// SPDX-License-Identifier: MIT
/*
 * The tracefs files: one show/write pair per file, and the kfs tables that
 * name them with the kernel's permission bits.  A file's objects come from
 * its ref (tracefs.h): the instance, the event's file, the CPU, the option.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "core/compiler.h"
#include "trace/snapshot.h"
#include "trace/tracefs.h"
#include "trace/trigger.h"

#define RW	0644
#define RO	0444
#define WO	0220

static char *strip(char *s)
{
	char *end;

	while (isspace((unsigned char)*s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char)end[-1]))
		*--end = '\0';
	return s;
}

/* kstrtoul(…, 10) on a written value: digits and an optional newline. */
static int parse_ulong(char *text, unsigned long *val)
{
	char *s = strip(text), *end;

	if (!isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	*val = strtoul(s, &end, 10);
	if (*end || errno)
		return -EINVAL;
	return 0;
}

static bool truncating(const struct kfs_open_file *of)
{
	return (of->flags & O_ACCMODE) != O_RDONLY && (of->flags & O_TRUNC);
}

static struct uks_event_file *tfs_file(const struct kfs_open_file *of)
{
	return of->ref.sub;
}

/*
 * A command file's kfs write: the page limit and a NUL-terminated copy
 * (__uks_tracefs_command()), then @fn.
 */
#define COMMAND(fn)								\
	static ssize_t fn##_cmd(struct kfs_open_file *of, const char *buf, size_t len,	\
				off_t off, const struct kfs_caller *caller)	\
	{									\
		(void)off;	/* a command, wherever it lands */		\
		(void)caller;							\
		return __uks_tracefs_command(of, buf, len, fn);			\
	}

/* ------------------------------------------------------------ top level */

static int show_readme(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, __uks_tracefs_readme);
	return 0;
}

static int show_available_events(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_available_events(s);
	return 0;
}

static int show_nop(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, "nop\n");
	return 0;
}

static int write_current_tracer(struct kfs_open_file *of, char *text, size_t len)
{
	return strcmp(strip(text), "nop") ? -EINVAL : 0;
}
COMMAND(write_current_tracer)

/* buffer_size_kb, top level or per_cpu/cpuN (TFS_PER_CPU) */
static int show_buffer_size(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_buffer_size(tfs_tr(of), tfs_cpu(of), s);
	return 0;
}

static int write_buffer_size(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long kb;
	int ret = parse_ulong(text, &kb);

	return ret ? ret : __uks_trace_set_buffer_size(tfs_tr(of), tfs_cpu(of), kb);
}
COMMAND(write_buffer_size)

static int show_buffer_total(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_buffer_total(tfs_tr(of), s);
	return 0;
}

static int open_dynamic_events(struct kfs_open_file *of)
{
	return truncating(of) ? __uks_trace_dynamic_events_clear(tfs_tr(of)) : 0;
}

static int write_dynamic_events(struct kfs_open_file *of, char *text, size_t len)
{
	return __uks_trace_dynamic_events_write(tfs_tr(of), text);
}
COMMAND(write_dynamic_events)

static int open_error_log(struct kfs_open_file *of)
{
	if (truncating(of))
		__uks_trace_clear_error_log(tfs_tr(of));
	return 0;
}

static int show_error_log(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_error_log(tfs_tr(of), s);
	return 0;
}

static int write_ignored(struct kfs_open_file *of, char *text, size_t len)
{
	return 0;
}
COMMAND(write_ignored)

static int show_saved_cmdlines(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_saved_cmdlines(s);
	return 0;
}

static int show_cmdlines_size(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_printf(s, "%d\n", __uks_trace_cmdlines_size());
	return 0;
}

static int write_cmdlines_size(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	return ret ? ret : __uks_trace_set_cmdlines_size(v > 1u << 30 ? -1 : (int)v);
}
COMMAND(write_cmdlines_size)

static int show_saved_tgids(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_saved_tgids(s);
	return 0;
}

static int open_set_event(struct kfs_open_file *of)
{
	if (truncating(of)) {
		pthread_mutex_lock(&__uks_trace_event_mutex);
		__uks_trace_set_event(tfs_tr(of), "*:*", false);
		pthread_mutex_unlock(&__uks_trace_event_mutex);
	}
	return 0;
}

static int show_set_event(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_set_event(tfs_tr(of), s);
	return 0;
}

/* Tokens separated by white space, each "[!]sys:event" (trace_parser). */
static int write_set_event(struct kfs_open_file *of, char *text, size_t len)
{
	char *save = NULL, *tok;
	int ret = 0;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	for (tok = strtok_r(text, " \t\n", &save); tok && !ret; tok = strtok_r(NULL, " \t\n", &save))
		ret = __uks_trace_set_event(tfs_tr(of), tok, true);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_set_event)

/* set_event_pid and set_event_notrace_pid (KFS node ->data TFS_NOTRACE) */
static bool notrace_file(const struct kfs_open_file *of)
{
	return of->ref.node->data & TFS_NOTRACE;
}

static int open_event_pid(struct kfs_open_file *of)
{
	return truncating(of) ? __uks_trace_write_event_pids(tfs_tr(of), notrace_file(of), "", true)
			      : 0;
}

static int show_event_pid(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_event_pids(tfs_tr(of), notrace_file(of), s);
	return 0;
}

static int write_event_pid(struct kfs_open_file *of, char *text, size_t len)
{
	return __uks_trace_write_event_pids(tfs_tr(of), notrace_file(of), text, false);
}
COMMAND(write_event_pid)

static int show_trace_clock(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_clock(tfs_tr(of), s);
	return 0;
}

static int write_trace_clock(struct kfs_open_file *of, char *text, size_t len)
{
	return __uks_trace_set_clock(tfs_tr(of), strip(text));
}
COMMAND(write_trace_clock)

/*
 * trace_marker takes what one event holds (the count it returns) and credits
 * the writer: the task its caller names (uks_tracefs_write_as()), else the
 * task behind the write's peer (a FUSE request, a socket client), else
 * the calling thread.
 */
static ssize_t write_trace_marker(struct kfs_open_file *of, const char *buf, size_t len,
				  off_t off, const struct kfs_caller *caller)
{
	const struct uks_trace_task *who = caller->arg;
	struct uks_trace_task task;
	int ret;

	(void)off;
	if (!who && __uks_trace_peer_task(caller->peer, &task))
		who = &task;
	ret = __uks_trace_marker_write(tfs_tr(of), buf, len, who);
	return ret;
}

/* trace_marker_raw: binary records, whole or refused; credited as trace_marker */
static ssize_t write_trace_marker_raw(struct kfs_open_file *of, const char *buf, size_t len,
				      off_t off, const struct kfs_caller *caller)
{
	const struct uks_trace_task *who = caller->arg;
	struct uks_trace_task task;

	(void)off;
	if (!who && __uks_trace_peer_task(caller->peer, &task))
		who = &task;
	return __uks_trace_marker_raw_write(tfs_tr(of), buf, len, who);
}

static int show_trace_options(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_options(tfs_tr(of), s);
	return 0;
}

/* One option per write, in the kernel's 64-byte buffer. */
static int write_trace_options(struct kfs_open_file *of, char *text, size_t len)
{
	return len >= 64 ? -EINVAL : __uks_trace_write_option(tfs_tr(of), strip(text));
}
COMMAND(write_trace_options)

static int show_tracing_on(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, __uks_trace_rb_recording(tfs_tr(of)->rb) ? "1\n" : "0\n");
	return 0;
}

static int write_tracing_on(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (!ret)
		__uks_trace_rb_record_on(tfs_tr(of)->rb, v != 0);
	return ret;
}
COMMAND(write_tracing_on)

/* ------------------------------------------------------------- events/ */

/*
 * events/enable and events/SYS/enable.  The system goes away with its last
 * event, so an open file keeps its name (->priv), checked against the
 * live systems at open: a system's enable then acts by name, as before
 * the directory went.
 */
static int open_events_enable(struct kfs_open_file *of)
{
	struct uks_event_system *sys;
	int ret = -ENOENT;

	of->priv = NULL;
	if (!of->ref.sub)
		return 0;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	list_for_each_entry(sys, &__uks_trace_systems, list) {
		if (sys == of->ref.sub) {
			size_t n = strlen(sys->name) + 1;

			of->priv = uks_kmalloc(n);
			ret = of->priv ? 0 : -ENOMEM;
			if (of->priv)
				memcpy(of->priv, sys->name, n);
			break;
		}
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}

static void release_events_enable(struct kfs_open_file *of)
{
	uks_kfree(of->priv);
}

static int show_events_enable(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_system_enable_str(tfs_tr(of), of->priv, s);
	return 0;
}

static int write_events_enable(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = __uks_trace_system_enable(tfs_tr(of), of->priv, v > 1 ? -1 : (int)v);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_events_enable)

/* events/SYS/filter: the system's name in ->priv, as its enable file */
static int show_sys_filter(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, __uks_trace_sys_filter_default);
	return 0;
}

static int write_sys_filter(struct kfs_open_file *of, char *text, size_t len)
{
	int ret;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = __uks_trace_system_set_filter(tfs_tr(of), of->priv, text);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_sys_filter)

static int show_event_enable(struct kfs_open_file *of, struct uks_seq *s)
{
	if (!tfs_live_file(of))
		return -ENODEV;
	__uks_trace_file_enable_str(tfs_file(of), s);
	return 0;
}

static int write_event_enable(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	if (v > 1)
		return -EINVAL;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = tfs_live_file(of) ? __uks_trace_file_enable(tfs_file(of), v, false) : -ENODEV;
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_event_enable)

static int show_event_filter(struct kfs_open_file *of, struct uks_seq *s)
{
	if (!tfs_live_file(of))
		return -ENODEV;
	if (tfs_file(of)->filter_str)
		seq_printf(s, "%s\n", tfs_file(of)->filter_str);
	else
		seq_puts(s, "none\n");
	return 0;
}

static int write_event_filter(struct kfs_open_file *of, char *text, size_t len)
{
	int ret;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = tfs_live_file(of) ? __uks_trace_file_set_filter(tfs_file(of), text) : -ENODEV;
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_event_filter)

static int show_event_trigger(struct kfs_open_file *of, struct uks_seq *s)
{
	if (!tfs_live_file(of))
		return -ENODEV;
	__uks_trace_trigger_show(tfs_file(of), s);
	return 0;
}

static int write_event_trigger(struct kfs_open_file *of, char *text, size_t len)
{
	int ret;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = tfs_live_file(of) ? __uks_trace_trigger_write(tfs_file(of), text) : -ENODEV;
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret;
}
COMMAND(write_event_trigger)

static int show_event_format(struct kfs_open_file *of, struct uks_seq *s)
{
	if (!tfs_live_file(of))
		return -ENODEV;
	__uks_trace_call_print_format(s, tfs_file(of)->call);
	return 0;
}

static int show_event_id(struct kfs_open_file *of, struct uks_seq *s)
{
	if (!tfs_live_file(of))
		return -ENODEV;
	seq_printf(s, "%d\n", tfs_file(of)->call->id);
	return 0;
}

/* ------------------------------------------------------------ options/ */

static int show_option(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_puts(s, trace_opt(tfs_tr(of), (int)of->ref.idx) ? "1\n" : "0\n");
	return 0;
}

static int write_option(struct kfs_open_file *of, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	if (v > 1)
		return -EINVAL;
	/* Only a change reaches the option (the nop tracer's refusal too). */
	if (trace_opt(tfs_tr(of), (int)of->ref.idx) == (v == 1))
		return 0;
	return __uks_trace_set_option(tfs_tr(of), (int)of->ref.idx, v);
}
COMMAND(write_option)

/* ------------------------------------------------------------ per_cpu/ */

static int show_cpu_stats(struct kfs_open_file *of, struct uks_seq *s)
{
	struct uks_trace *tr = tfs_tr(of);
	struct uks_rb_stats st;
	bool ns = __uks_trace_clock_in_ns(__uks_trace_rb_clock(tr->rb));
	uint64_t now = __uks_trace_clock_read(__uks_trace_rb_clock(tr->rb), &(uint64_t){ 0 });

	__uks_trace_rb_stats(tr->rb, (unsigned int)of->ref.idx, &st);
	seq_printf(s, "entries: %llu\n", (unsigned long long)st.entries);
	seq_printf(s, "overrun: %llu\n", (unsigned long long)st.overrun);
	seq_printf(s, "commit overrun: %llu\n", (unsigned long long)st.commit_overrun);
	seq_printf(s, "bytes: %llu\n", (unsigned long long)st.bytes);
	if (ns) {
		uint64_t o = (st.oldest_ts + 500) / 1000, n = (now + 500) / 1000;

		seq_printf(s, "oldest event ts: %5llu.%06llu\n",
			   (unsigned long long)(o / 1000000), (unsigned long long)(o % 1000000));
		seq_printf(s, "now ts: %5llu.%06llu\n",
			   (unsigned long long)(n / 1000000), (unsigned long long)(n % 1000000));
	} else {
		seq_printf(s, "oldest event ts: %llu\n", (unsigned long long)st.oldest_ts);
		seq_printf(s, "now ts: %llu\n", (unsigned long long)now);
	}
	seq_printf(s, "dropped events: %llu\n", (unsigned long long)st.dropped);
	seq_printf(s, "read events: %llu\n", (unsigned long long)st.read);
	return 0;
}

/* ------------------------------------------------------------- tables */

static const struct kfs_ops readme_ops = { .show = show_readme };
static const struct kfs_ops available_events_ops = { .show = show_available_events };
static const struct kfs_ops available_tracers_ops = { .show = show_nop };
static const struct kfs_ops buffer_size_ops = {
	.show = show_buffer_size, .write = write_buffer_size_cmd,
};
static const struct kfs_ops buffer_total_ops = { .show = show_buffer_total };
static const struct kfs_ops current_tracer_ops = {
	.show = show_nop, .write = write_current_tracer_cmd,
};
static const struct kfs_ops dynamic_events_ops = {
	.open = open_dynamic_events, .show = __uks_tracefs_dynamic_events_show,
	.write = write_dynamic_events_cmd,
};
static const struct kfs_ops error_log_ops = {
	.open = open_error_log, .show = show_error_log, .write = write_ignored_cmd,
};
static const struct kfs_ops saved_cmdlines_ops = { .show = show_saved_cmdlines };
static const struct kfs_ops cmdlines_size_ops = {
	.show = show_cmdlines_size, .write = write_cmdlines_size_cmd,
};
static const struct kfs_ops saved_tgids_ops = { .show = show_saved_tgids };
static const struct kfs_ops set_event_ops = {
	.open = open_set_event, .show = show_set_event, .write = write_set_event_cmd,
};
static const struct kfs_ops event_pid_ops = {
	.open = open_event_pid, .show = show_event_pid, .write = write_event_pid_cmd,
};
static const struct kfs_ops trace_clock_ops = {
	.show = show_trace_clock, .write = write_trace_clock_cmd,
};
static const struct kfs_ops trace_marker_ops = { .write = write_trace_marker };
static const struct kfs_ops trace_marker_raw_ops = { .write = write_trace_marker_raw };
static const struct kfs_ops trace_options_ops = {
	.show = show_trace_options, .write = write_trace_options_cmd,
};
static const struct kfs_ops tracing_on_ops = {
	.show = show_tracing_on, .write = write_tracing_on_cmd,
};
static const struct kfs_ops events_enable_ops = {
	.open = open_events_enable, .show = show_events_enable,
	.write = write_events_enable_cmd, .release = release_events_enable,
};
static const struct kfs_ops sys_filter_ops = {
	.open = open_events_enable, .show = show_sys_filter,
	.write = write_sys_filter_cmd, .release = release_events_enable,
};
static const struct kfs_ops event_enable_ops = {
	.show = show_event_enable, .write = write_event_enable_cmd,
};
static const struct kfs_ops event_filter_ops = {
	.show = show_event_filter, .write = write_event_filter_cmd,
};
static const struct kfs_ops event_format_ops = { .show = show_event_format };
static const struct kfs_ops event_trigger_ops = {
	.show = show_event_trigger, .write = write_event_trigger_cmd,
};
static const struct kfs_ops event_id_ops = { .show = show_event_id };
static const struct kfs_ops option_ops = { .show = show_option, .write = write_option_cmd };
static const struct kfs_ops cpu_stats_ops = { .show = show_cpu_stats };

static int show_tracing_cpumask(struct kfs_open_file *of, struct uks_seq *s)
{
	__uks_trace_show_cpumask(tfs_tr(of), s);
	return 0;
}

static ssize_t write_tracing_cpumask(struct kfs_open_file *of, const char *buf, size_t len,
				     off_t off, const struct kfs_caller *caller)
{
	int ret = __uks_trace_write_cpumask(tfs_tr(of), buf, len);

	(void)off;
	(void)caller;
	return ret ? ret : (ssize_t)len;
}

static const struct kfs_ops tracing_cpumask_ops = {
	.show = show_tracing_cpumask,
	.write = write_tracing_cpumask,
};

#define PIPE(data_)	{ .name = "trace_pipe", .mode = S_IFREG | RO, .flags = KFS_STREAM,	\
			  .ops = &__uks_tracefs_pipe_ops, .data = (data_) }

/* events/SYS/ of every system but ftrace, whose directory has no files of its own */
static const struct kfs_node sys_files[] = {
	KFS_FILE("enable", RW, &events_enable_ops),
	KFS_FILE("filter", RW, &sys_filter_ops),
	{ 0 }
};

/* events/: "enable" and the ring buffer's page and event headers, then the systems */
static const struct kfs_node events_files[] = {
	KFS_FILE("enable", RW, &events_enable_ops),
	KFS_FILE("header_event", RO, &__uks_tracefs_header_event_ops),
	KFS_FILE("header_page", RO, &__uks_tracefs_header_page_ops),
	{ 0 }
};

static const struct kfs_node top_files[] = {
	KFS_FILE("README", RO, &readme_ops),
	KFS_FILE("available_events", RO, &available_events_ops),
	KFS_FILE("available_tracers", RO, &available_tracers_ops),
	KFS_FILE("buffer_size_kb", RW, &buffer_size_ops),
	KFS_FILE("buffer_total_size_kb", RO, &buffer_total_ops),
	KFS_FILE("buffer_subbuf_size_kb", 0640, &__uks_tracefs_subbuf_size_ops),
	KFS_FILE("current_tracer", RW, &current_tracer_ops),
	KFS_FILE("dynamic_events", RW, &dynamic_events_ops),
	KFS_FILE("error_log", RW, &error_log_ops),
	KFS_DIR("events", 0755, &__uks_tracefs_events_ops, events_files),
	KFS_DIR("instances", 0755, &__uks_tracefs_instances_ops, NULL),
	KFS_DIR("options", 0755, &__uks_tracefs_options_ops, NULL),
	KFS_DIR("per_cpu", 0755, &__uks_tracefs_per_cpu_ops, NULL),
	KFS_FILE("printk_formats", RO, &__uks_tracefs_printk_formats_ops),
	KFS_FILE("saved_cmdlines", RO, &saved_cmdlines_ops),
	KFS_FILE("saved_cmdlines_size", RW, &cmdlines_size_ops),
	KFS_FILE("saved_tgids", RO, &saved_tgids_ops),
	KFS_FILE("set_event", RW, &set_event_ops),
	{ .name = "set_event_notrace_pid", .mode = S_IFREG | RW, .ops = &event_pid_ops,
	  .data = TFS_NOTRACE },
	KFS_FILE("set_event_pid", RW, &event_pid_ops),
	KFS_FILE("snapshot", RW, &__uks_tracefs_snapshot_ops),
	KFS_FILE("trace", RW, &__uks_tracefs_trace_ops),
	KFS_FILE("trace_clock", RW, &trace_clock_ops),
	KFS_FILE("trace_marker", WO, &trace_marker_ops),
	KFS_FILE("trace_marker_raw", WO, &trace_marker_raw_ops),
	KFS_FILE("trace_options", RW, &trace_options_ops),
	PIPE(0),
	KFS_FILE("tracing_cpumask", RW, &tracing_cpumask_ops),
	KFS_FILE("tracing_on", RW, &tracing_on_ops),
	{ 0 }
};

static const struct kfs_node event_files[] = {
	KFS_FILE("enable", RW, &event_enable_ops),
	KFS_FILE("filter", RW, &event_filter_ops),
	KFS_FILE("format", RO, &event_format_ops),
	KFS_FILE("id", RO, &event_id_ops),
	KFS_FILE("trigger", RW, &event_trigger_ops),
	{ 0 }
};

/*
 * ftrace's own events cannot be enabled or filtered: print has its id and
 * triggers (6.x), the others (kernel_stack, raw_data) only their format.
 */
static const struct kfs_node ftrace_print_files[] = {
	KFS_FILE("format", RO, &event_format_ops),
	KFS_FILE("id", RO, &event_id_ops),
	KFS_FILE("trigger", RW, &event_trigger_ops),
	{ 0 }
};

static const struct kfs_node ftrace_event_files[] = {
	KFS_FILE("format", RO, &event_format_ops),
	{ 0 }
};

static const struct kfs_node cpu_files[] = {
	/* 5.15 creates it 0444 and still resizes on root's write; later kernels 0640. */
	{ .name = "buffer_size_kb", .mode = S_IFREG | RW, .ops = &buffer_size_ops,
	  .data = TFS_PER_CPU },
	{ .name = "snapshot", .mode = S_IFREG | RW, .ops = &__uks_tracefs_snapshot_ops,
	  .data = TFS_PER_CPU },
	KFS_FILE("stats", RO, &cpu_stats_ops),
	{ .name = "trace", .mode = S_IFREG | RW, .ops = &__uks_tracefs_trace_ops,
	  .data = TFS_PER_CPU },
	PIPE(TFS_PER_CPU),
	{ .name = "trace_pipe_raw", .mode = S_IFREG | RO, .flags = KFS_STREAM,
	  .ops = &__uks_tracefs_pipe_raw_ops, .data = TFS_PER_CPU },
	{ 0 }
};

bool __uks_tracefs_is_event_file(const struct kfs_node *node)
{
#define IN_TABLE(t) (node >= (t) && node < (t) + ARRAY_SIZE(t) - 1)
	return IN_TABLE(event_files) || IN_TABLE(ftrace_print_files) || IN_TABLE(ftrace_event_files);
#undef IN_TABLE
}

/*
 * The files the kernel makes for the top level only (tracer_init_tracefs()
 * and the tracers' and probes' own init, 5.15 and 6.12): an instance's
 * directory has the rest of top_files[].  By name, so a row added to
 * top_files[] for one of them stays out of instances without more ado.
 */
static const char *const top_only[] = {
	"README", "available_events", "available_filter_functions",
	"available_filter_functions_addrs", "dyn_ftrace_total_info", "dynamic_events",
	"enabled_functions", "function_profile_enabled", "instances", "kprobe_events",
	"kprobe_profile", "printk_formats", "saved_cmdlines", "saved_cmdlines_size",
	"saved_tgids", "stack_max_size", "stack_trace", "stack_trace_filter",
	"synthetic_events", "touched_functions", "trace_stat", "tracing_max_latency",
	"tracing_thresh", "uprobe_events", "uprobe_profile", "user_events_data",
	"user_events_status",
};

/* Options only the top level has a file of in options/ (TOP_LEVEL_TRACE_FLAGS). */
static const char *const top_only_options[] = {
	"printk-msg-only", "record-cmd", "trace_printk",
};

static bool in_list(const char *const *list, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(list[i], name))
			return true;
	return false;
}

/* Has the directory of @tr's options/ a file for option @name? */
bool __uks_tracefs_has_option(const struct uks_trace *tr, const char *name)
{
	return !tr->name || !in_list(top_only_options, ARRAY_SIZE(top_only_options), name);
}

static bool instance_has(const struct kfs_ref *dir, const struct kfs_node *child)
{
	return !in_list(top_only, ARRAY_SIZE(top_only), child->name);
}

static const struct kfs_dir_ops instance_ops = { .has = instance_has };

/* The top level's directory, and an instance's (instances/NAME). */
const struct kfs_node __uks_tracefs_top = KFS_DIR("", 0755, NULL, top_files);
const struct kfs_node __uks_tracefs_instance = KFS_DIR("", 0755, &instance_ops, top_files);
const struct kfs_node __uks_tracefs_sys_dir = KFS_DIR("", 0755, &__uks_tracefs_sys_ops, sys_files);
const struct kfs_node __uks_tracefs_ftrace_sys_dir = KFS_DIR("", 0755, &__uks_tracefs_sys_ops, NULL);
const struct kfs_node __uks_tracefs_event_dir = KFS_DIR("", 0755, NULL, event_files);
const struct kfs_node __uks_tracefs_ftrace_event_dir = KFS_DIR("", 0755, NULL, ftrace_event_files);
const struct kfs_node __uks_tracefs_ftrace_print_dir = KFS_DIR("", 0755, NULL, ftrace_print_files);
const struct kfs_node __uks_tracefs_cpu_dir = KFS_DIR("", 0755, NULL, cpu_files);
const struct kfs_node __uks_tracefs_option_file = KFS_FILE("", RW, &option_ops);
