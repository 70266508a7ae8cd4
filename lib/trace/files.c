// SPDX-License-Identifier: MIT
/*
 * The tracefs files: one show/write pair per file, and the tables that
 * name them with the kernel's permission bits.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

#include "trace/tracefs.h"

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

static bool truncating(const struct uks_tracefs_file *f)
{
	return (f->flags & O_ACCMODE) != O_RDONLY && (f->flags & O_TRUNC);
}

/* ------------------------------------------------------------ top level */

static void show_readme(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_puts(s, uks_tracefs_readme);
}

static void show_available_events(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_available_events(s);
}

static void show_nop(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_puts(s, "nop\n");
}

static int write_current_tracer(struct uks_tracefs_file *f, char *text, size_t len)
{
	return strcmp(strip(text), "nop") ? -EINVAL : 0;
}

/* buffer_size_kb, top level or per_cpu/cpuN (TFS_PER_CPU) */
static int buffer_size_cpu(struct uks_tracefs_file *f)
{
	return f->loc.node->flags & TFS_PER_CPU ? f->loc.cpu : -1;
}

static void show_buffer_size(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_buffer_size(f->tr, buffer_size_cpu(f), s);
}

static int write_buffer_size(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long kb;
	int ret = parse_ulong(text, &kb);

	return ret ? ret : uks_trace_set_buffer_size(f->tr, buffer_size_cpu(f), kb);
}

static void show_buffer_total(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_buffer_total(f->tr, s);
}

static int open_dynamic_events(struct uks_tracefs_file *f)
{
	return truncating(f) ? uks_dynamic_events_clear(f->tr) : 0;
}

static int write_dynamic_events(struct uks_tracefs_file *f, char *text, size_t len)
{
	return uks_dynamic_events_write(f->tr, text);
}

static int open_error_log(struct uks_tracefs_file *f)
{
	if (truncating(f))
		uks_trace_clear_error_log(f->tr);
	return 0;
}

static void show_error_log(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_error_log(f->tr, s);
}

static int write_ignored(struct uks_tracefs_file *f, char *text, size_t len)
{
	return 0;
}

static void show_saved_cmdlines(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_saved_cmdlines(s);
}

static void show_cmdlines_size(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_printf(s, "%d\n", uks_trace_cmdlines_size());
}

static int write_cmdlines_size(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	return ret ? ret : uks_trace_set_cmdlines_size(v > 1u << 30 ? -1 : (int)v);
}

static void show_saved_tgids(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_saved_tgids(s);
}

static int open_set_event(struct uks_tracefs_file *f)
{
	if (truncating(f)) {
		pthread_mutex_lock(&uks_event_mutex);
		uks_trace_set_event(f->tr, "*:*", false);
		pthread_mutex_unlock(&uks_event_mutex);
	}
	return 0;
}

static void show_set_event(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_set_event(f->tr, s);
}

/* Tokens separated by white space, each "[!]sys:event" (trace_parser). */
static int write_set_event(struct uks_tracefs_file *f, char *text, size_t len)
{
	char *save = NULL, *tok;
	int ret = 0;

	pthread_mutex_lock(&uks_event_mutex);
	for (tok = strtok_r(text, " \t\n", &save); tok && !ret; tok = strtok_r(NULL, " \t\n", &save))
		ret = uks_trace_set_event(f->tr, tok, true);
	pthread_mutex_unlock(&uks_event_mutex);
	return ret;
}

static int open_event_pid(struct uks_tracefs_file *f)
{
	return truncating(f) ? uks_trace_add_event_pids(f->tr, "", true) : 0;
}

static void show_event_pid(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_event_pids(f->tr, s);
}

static int write_event_pid(struct uks_tracefs_file *f, char *text, size_t len)
{
	return uks_trace_add_event_pids(f->tr, text, false);
}

static void show_trace_clock(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_clock(f->tr, s);
}

static int write_trace_clock(struct uks_tracefs_file *f, char *text, size_t len)
{
	return uks_trace_set_clock(f->tr, strip(text));
}

static int write_trace_marker(struct uks_tracefs_file *f, char *text, size_t len)
{
	int ret = uks_trace_marker_write(f->tr, text, len, f->writer);

	return ret < 0 ? ret : 0;
}

static void show_trace_options(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_show_options(f->tr, s);
}

static int write_trace_options(struct uks_tracefs_file *f, char *text, size_t len)
{
	return uks_trace_write_option(f->tr, strip(text));
}

static void show_tracing_on(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_puts(s, uks_rb_recording(f->tr->rb) ? "1\n" : "0\n");
}

static int write_tracing_on(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (!ret)
		uks_rb_record_on(f->tr->rb, v != 0);
	return ret;
}

static void show_trace_write_only(struct uks_tracefs_file *f, struct uks_seq *s)
{
}

/* ------------------------------------------------------------- events/ */

static void show_events_enable(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_trace_system_enable_str(f->tr, f->loc.sys[0] ? f->loc.sys : NULL, s);
}

static int write_events_enable(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_trace_system_enable(f->tr, f->loc.sys[0] ? f->loc.sys : NULL, v > 1 ? -1 : (int)v);
	pthread_mutex_unlock(&uks_event_mutex);
	return ret;
}

static void show_event_enable(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_file_enable_str(f->loc.file, s);
}

static int write_event_enable(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	if (v > 1)
		return -EINVAL;
	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_file_enable(f->loc.file, v, false);
	pthread_mutex_unlock(&uks_event_mutex);
	return ret;
}

static void show_event_filter(struct uks_tracefs_file *f, struct uks_seq *s)
{
	if (f->loc.file->filter_str)
		uks_seq_printf(s, "%s\n", f->loc.file->filter_str);
	else
		uks_seq_puts(s, "none\n");
}

static int write_event_filter(struct uks_tracefs_file *f, char *text, size_t len)
{
	int ret;

	pthread_mutex_lock(&uks_event_mutex);
	ret = uks_file_set_filter(f->loc.file, text);
	pthread_mutex_unlock(&uks_event_mutex);
	return ret;
}

static void show_event_format(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_call_print_format(s, f->loc.file->call);
}

static void show_event_id(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_printf(s, "%d\n", f->loc.file->call->id);
}

/* ------------------------------------------------------------ options/ */

static void show_option(struct uks_tracefs_file *f, struct uks_seq *s)
{
	uks_seq_puts(s, trace_opt(f->tr, f->loc.opt) ? "1\n" : "0\n");
}

static int write_option(struct uks_tracefs_file *f, char *text, size_t len)
{
	unsigned long v;
	int ret = parse_ulong(text, &v);

	if (ret)
		return ret;
	if (v > 1)
		return -EINVAL;
	uks_trace_set_option(f->tr, f->loc.opt, v);
	return 0;
}

/* ------------------------------------------------------------ per_cpu/ */

static void show_cpu_stats(struct uks_tracefs_file *f, struct uks_seq *s)
{
	struct uks_rb_stats st;
	bool ns = uks_trace_clock_in_ns(uks_rb_clock(f->tr->rb));
	uint64_t now = uks_trace_clock_read(uks_rb_clock(f->tr->rb), &(uint64_t){ 0 });

	uks_rb_stats(f->tr->rb, (unsigned int)f->loc.cpu, &st);
	uks_seq_printf(s, "entries: %llu\n", (unsigned long long)st.entries);
	uks_seq_printf(s, "overrun: %llu\n", (unsigned long long)st.overrun);
	uks_seq_printf(s, "commit overrun: %llu\n", (unsigned long long)st.commit_overrun);
	uks_seq_printf(s, "bytes: %llu\n", (unsigned long long)st.bytes);
	if (ns) {
		uint64_t o = (st.oldest_ts + 500) / 1000, n = (now + 500) / 1000;

		uks_seq_printf(s, "oldest event ts: %5llu.%06llu\n",
			       (unsigned long long)(o / 1000000), (unsigned long long)(o % 1000000));
		uks_seq_printf(s, "now ts: %5llu.%06llu\n",
			       (unsigned long long)(n / 1000000), (unsigned long long)(n % 1000000));
	} else {
		uks_seq_printf(s, "oldest event ts: %llu\n", (unsigned long long)st.oldest_ts);
		uks_seq_printf(s, "now ts: %llu\n", (unsigned long long)now);
	}
	uks_seq_printf(s, "dropped events: %llu\n", (unsigned long long)st.dropped);
	uks_seq_printf(s, "read events: %llu\n", (unsigned long long)st.read);
}

/* ------------------------------------------------------------- tables */

#define SHOW(n, m, sh, wr) { .name = n, .kind = TFS_FILE, .mode = m, .show = sh, .write = wr }

const struct tracefs_node uks_tracefs_root[] = {
	SHOW("README", RO, show_readme, NULL),
	SHOW("available_events", RO, show_available_events, NULL),
	SHOW("available_tracers", RO, show_nop, NULL),
	SHOW("buffer_size_kb", RW, show_buffer_size, write_buffer_size),
	SHOW("buffer_total_size_kb", RO, show_buffer_total, NULL),
	SHOW("current_tracer", RW, show_nop, write_current_tracer),
	{ .name = "dynamic_events", .kind = TFS_FILE, .mode = RW, .open = open_dynamic_events,
	  .show = uks_dynamic_events_show, .write = write_dynamic_events },
	{ .name = "error_log", .kind = TFS_FILE, .mode = RW, .open = open_error_log,
	  .show = show_error_log, .write = write_ignored },
	{ .name = "events", .kind = TFS_DIR_EVENTS, .mode = 0755 },
	{ .name = "instances", .kind = TFS_DIR_INSTANCES, .mode = 0755 },
	{ .name = "options", .kind = TFS_DIR_OPTIONS, .mode = 0755 },
	{ .name = "per_cpu", .kind = TFS_DIR_PER_CPU, .mode = 0755 },
	SHOW("saved_cmdlines", RO, show_saved_cmdlines, NULL),
	SHOW("saved_cmdlines_size", RW, show_cmdlines_size, write_cmdlines_size),
	SHOW("saved_tgids", RO, show_saved_tgids, NULL),
	{ .name = "set_event", .kind = TFS_FILE, .mode = RW, .open = open_set_event,
	  .show = show_set_event, .write = write_set_event },
	{ .name = "set_event_pid", .kind = TFS_FILE, .mode = RW, .open = open_event_pid,
	  .show = show_event_pid, .write = write_event_pid },
	{ .name = "trace", .kind = TFS_FILE, .mode = RW, .open = uks_tracefs_trace_open,
	  .read = uks_tracefs_trace_read, .write = write_ignored,
	  .release = uks_tracefs_trace_release },
	SHOW("trace_clock", RW, show_trace_clock, write_trace_clock),
	{ .name = "trace_marker", .kind = TFS_FILE, .mode = WO, .flags = TFS_RAW_WRITE,
	  .show = show_trace_write_only, .write = write_trace_marker },
	SHOW("trace_options", RW, show_trace_options, write_trace_options),
	{ .name = "trace_pipe", .kind = TFS_FILE, .mode = RO, .open = uks_tracefs_pipe_open,
	  .read = uks_tracefs_pipe_read, .poll = uks_tracefs_pipe_poll,
	  .release = uks_tracefs_pipe_release },
	SHOW("tracing_on", RW, show_tracing_on, write_tracing_on),
	{ 0 }
};

const struct tracefs_node uks_tracefs_events_files[] = {
	SHOW("enable", RW, show_events_enable, write_events_enable),
	{ 0 }
};

const struct tracefs_node uks_tracefs_sys_files[] = {
	SHOW("enable", RW, show_events_enable, write_events_enable),
	{ 0 }
};

const struct tracefs_node uks_tracefs_event_files[] = {
	SHOW("enable", RW, show_event_enable, write_event_enable),
	SHOW("filter", RW, show_event_filter, write_event_filter),
	SHOW("format", RO, show_event_format, NULL),
	SHOW("id", RO, show_event_id, NULL),
	{ 0 }
};

const struct tracefs_node uks_tracefs_cpu_files[] = {
	/* 5.15 creates it 0444 and still resizes on root's write; later kernels 0640. */
	{ .name = "buffer_size_kb", .kind = TFS_FILE, .mode = RW, .flags = TFS_PER_CPU,
	  .show = show_buffer_size, .write = write_buffer_size },
	SHOW("stats", RO, show_cpu_stats, NULL),
	{ .name = "trace", .kind = TFS_FILE, .mode = RW, .flags = TFS_PER_CPU,
	  .open = uks_tracefs_trace_open, .read = uks_tracefs_trace_read,
	  .write = write_ignored, .release = uks_tracefs_trace_release },
	{ .name = "trace_pipe", .kind = TFS_FILE, .mode = RO, .flags = TFS_PER_CPU,
	  .open = uks_tracefs_pipe_open, .read = uks_tracefs_pipe_read,
	  .poll = uks_tracefs_pipe_poll, .release = uks_tracefs_pipe_release },
	{ 0 }
};

const struct tracefs_node uks_tracefs_root_dir = { .name = "", .kind = TFS_DIR_ROOT, .mode = 0755 };
const struct tracefs_node uks_tracefs_sys_dir = { .name = "", .kind = TFS_DIR_SYS, .mode = 0755 };
const struct tracefs_node uks_tracefs_event_dir = { .name = "", .kind = TFS_DIR_EVENT, .mode = 0755 };
const struct tracefs_node uks_tracefs_cpu_dir = { .name = "", .kind = TFS_DIR_CPU, .mode = 0755 };
const struct tracefs_node uks_tracefs_option_file = {
	.name = "", .kind = TFS_FILE, .mode = RW, .show = show_option, .write = write_option,
};
