// SPDX-License-Identifier: MIT
/*
 * Text output of the trace and trace_pipe files, as Linux 5.15 prints it:
 * the header of print_func_help_header[_irq]() and one line per event
 * from trace_print_context() plus the event's own text; with the
 * latency-format option, print_trace_header()/print_lat_help_header() and
 * trace_print_lat_context() (relative times in us and a delay mark taken
 * from the gap to the next event), in their verbose variants too.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "trace/trace.h"

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/** __uks_trace_iter_init - fix how a reader prints, as the kernel does at open */
void __uks_trace_iter_init(struct uks_trace *tr, struct uks_trace_iter *it, unsigned long first_idx)
{
	it->lat_fmt = trace_opt(tr, UKS_OPT_LATENCY_FORMAT);
	it->in_ns = __uks_trace_clock_in_ns(__uks_trace_rb_clock(tr->rb));
	it->idx = first_idx;
	it->rb = tr->rb;
}

static void count_entries(struct uks_rb *rb, uint64_t *entries, uint64_t *total)
{
	*entries = *total = 0;
	for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(rb); cpu++) {
		struct uks_rb_stats st;

		__uks_trace_rb_stats(rb, cpu, &st);
		*entries += st.entries;
		*total += st.entries + st.overrun;
	}
}

/*
 * print_trace_header() for the nop tracer: no latency was ever saved, so
 * the per-CPU data it shows (CPU 0's max-latency task) is all zero.  User
 * threads can be preempted anywhere, hence "M:preempt".
 */
static void print_lat_header(struct uks_trace *tr, struct uks_seq *s, struct uks_rb *rb)
{
	struct utsname uts;
	uint64_t entries, total;

	if (uname(&uts))
		strcpy(uts.release, "unknown");
	count_entries(rb, &entries, &total);
	seq_printf(s, "# nop latency trace v1.1.5 on %s\n", uts.release);
	seq_puts(s, "# --------------------------------------------------------------------\n");
	seq_printf(s, "# latency: 0 us, #%llu/%llu, CPU#0 | (M:preempt VP:0, KP:0, SP:0 HP:0 #P:%u)\n",
		   (unsigned long long)entries, (unsigned long long)total, online_cpus());
	seq_puts(s, "#    -----------------\n");
	seq_puts(s, "#    | task: -0 (uid:0 nice:0 policy:0 rt_prio:0)\n");
	seq_puts(s, "#    -----------------\n");
	seq_puts(s, "#\n");
	if (trace_opt(tr, UKS_OPT_VERBOSE))
		return;
	/* 5.15 text: 5.17 renamed irqs-off to irqs-off/BH-disabled. */
	seq_puts(s, "#                    _------=> CPU#            \n"
			"#                   / _-----=> irqs-off        \n"
			"#                  | / _----=> need-resched    \n"
			"#                  || / _---=> hardirq/softirq \n"
			"#                  ||| / _--=> preempt-depth   \n"
			"#                  |||| / _-=> migrate-disable \n"
			"#                  ||||| /     delay           \n"
			"#  cmd     pid     |||||| time  |   caller     \n"
			"#     \\   /        ||||||  \\    |    /       \n");
}

/**
 * __uks_trace_print_header - the comment block at the top of "trace"
 * @empty:	the reader has no event to show (latency-format prints less)
 */
void __uks_trace_print_header(struct uks_trace *tr, struct uks_seq *s,
			      const struct uks_trace_iter *it, bool empty)
{
	static const char space[] = "            ";
	bool tgid = trace_opt(tr, UKS_OPT_RECORD_TGID);
	uint64_t entries, total;
	int prec = tgid ? 12 : 2;

	seq_puts(s, "# tracer: nop\n#\n");
	if (!trace_opt(tr, UKS_OPT_CONTEXT_INFO))
		return;
	if (it->lat_fmt) {
		if (!empty)
			print_lat_header(tr, s, it->rb);
		return;
	}
	if (trace_opt(tr, UKS_OPT_VERBOSE))
		return;
	count_entries(it->rb, &entries, &total);
	seq_printf(s, "# entries-in-buffer/entries-written: %llu/%llu   #P:%u\n",
		   (unsigned long long)entries, (unsigned long long)total, online_cpus());
	seq_puts(s, "#\n");
	if (!trace_opt(tr, UKS_OPT_IRQ_INFO)) {
		seq_printf(s, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n",
			   tgid ? "   TGID   " : "");
		seq_printf(s, "#              | |      %s   |         |         |\n",
			   tgid ? "     |    " : "");
		return;
	}
	seq_printf(s, "#                            %.*s  _-----=> irqs-off\n", prec, space);
	seq_printf(s, "#                            %.*s / _----=> need-resched\n", prec, space);
	seq_printf(s, "#                            %.*s| / _---=> hardirq/softirq\n", prec, space);
	seq_printf(s, "#                            %.*s|| / _--=> preempt-depth\n", prec, space);
	seq_printf(s, "#                            %.*s||| / _-=> migrate-disable\n", prec, space);
	seq_printf(s, "#                            %.*s|||| /     delay\n", prec, space);
	seq_printf(s, "#           TASK-PID  %.*s CPU#  |||||  TIMESTAMP  FUNCTION\n", prec,
		   "     TGID   ");
	seq_printf(s, "#              | |    %.*s   |   |||||     |         |\n", prec,
		   "       |    ");
}

/* The five flag characters of trace_print_lat_fmt() (5.15). */
static void print_lat_fmt(struct uks_seq *s, const struct uks_trace_entry *ent)
{
	unsigned int f = ent->flags;
	bool hard = f & UKS_TRACE_FLAG_HARDIRQ, soft = f & UKS_TRACE_FLAG_SOFTIRQ;
	bool nmi = f & UKS_TRACE_FLAG_NMI;
	char irqs_off, resched, hardsoft;

	irqs_off = f & UKS_TRACE_FLAG_IRQS_OFF ? 'd' :
		   f & UKS_TRACE_FLAG_IRQS_NOSUPPORT ? 'X' : '.';
	switch (f & (UKS_TRACE_FLAG_NEED_RESCHED | UKS_TRACE_FLAG_PREEMPT_RESCHED)) {
	case UKS_TRACE_FLAG_NEED_RESCHED | UKS_TRACE_FLAG_PREEMPT_RESCHED:
		resched = 'N';
		break;
	case UKS_TRACE_FLAG_NEED_RESCHED:
		resched = 'n';
		break;
	case UKS_TRACE_FLAG_PREEMPT_RESCHED:
		resched = 'p';
		break;
	default:
		resched = '.';
	}
	hardsoft = nmi && hard ? 'Z' : nmi ? 'z' : hard && soft ? 'H' : hard ? 'h' : soft ? 's' : '.';
	seq_printf(s, "%c%c%c", irqs_off, resched, hardsoft);
	if (ent->preempt_count & 0xf)
		seq_printf(s, "%x", ent->preempt_count & 0xf);
	else
		seq_putc(s, '.');
	if (ent->preempt_count & 0xf0)
		seq_printf(s, "%x", ent->preempt_count >> 4);
	else
		seq_putc(s, '.');
}

/* trace_find_mark(): how long until the next event, at a glance. */
static char delay_mark(uint64_t delta_ns)
{
	static const struct { uint64_t ns; char sym; } marks[] = {
		{ 1000000000ull, '$' }, { 100000000ull, '@' }, { 10000000ull, '*' },
		{ 1000000ull, '#' }, { 100000ull, '!' }, { 10000ull, '+' },
	};

	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++)
		if (delta_ns > marks[i].ns)
			return marks[i].sym;
	return ' ';
}

static uint64_t ns_to_us(uint64_t ns)
{
	return (ns + 500) / 1000;
}

/* trace_print_lat_context(): the latency-format line prefix. */
static void print_lat_context(struct uks_trace *tr, struct uks_seq *s,
			      const struct uks_trace_iter *it,
			      const struct uks_rb_event *ev, uint64_t next_ts)
{
	const struct uks_trace_entry *ent = ev->data;
	uint64_t abs_ts = ev->ts - __uks_trace_rb_time_start(it->rb), rel_ts = next_ts - ev->ts;
	bool verbose = trace_opt(tr, UKS_OPT_VERBOSE);
	char comm[16];

	__uks_trace_find_cmdline(ent->pid, comm);
	if (verbose) {
		seq_printf(s, "%16s %7d %3u %d %08x %08lx ", comm, ent->pid, ev->cpu,
			   ent->flags, ent->preempt_count & 0xf, it->idx);
	} else {
		seq_printf(s, "%8.8s-%-7d %3u", comm, ent->pid, ev->cpu);
		print_lat_fmt(s, ent);
	}
	if (it->in_ns) {
		abs_ts = ns_to_us(abs_ts);
		rel_ts = ns_to_us(rel_ts);
	}
	if (verbose && it->in_ns)
		seq_printf(s, "[%08llx] %llu.%03llums (+%llu.%03llums): ",
			   (unsigned long long)ns_to_us(ev->ts),
			   (unsigned long long)(abs_ts / 1000),
			   (unsigned long long)(abs_ts % 1000),
			   (unsigned long long)(rel_ts / 1000),
			   (unsigned long long)(rel_ts % 1000));
	else if (verbose)
		seq_printf(s, "[%016llx] %lld (+%lld): ", (unsigned long long)ev->ts,
			   (long long)abs_ts, (long long)rel_ts);
	else if (it->in_ns)
		seq_printf(s, " %4lldus%c: ", (long long)abs_ts, delay_mark(rel_ts * 1000));
	else
		seq_printf(s, " %4lld: ", (long long)abs_ts);
}

/* trace_print_context(): the default line prefix. */
static void print_context(struct uks_trace *tr, struct uks_seq *s,
			  const struct uks_trace_iter *it, const struct uks_rb_event *ev)
{
	const struct uks_trace_entry *ent = ev->data;
	char comm[16];

	__uks_trace_find_cmdline(ent->pid, comm);
	seq_printf(s, "%16s-%-7d ", comm, ent->pid);
	if (trace_opt(tr, UKS_OPT_RECORD_TGID)) {
		pid_t tgid = __uks_trace_find_tgid(ent->pid);

		if (tgid <= 0)
			seq_puts(s, "(-------) ");
		else
			seq_printf(s, "(%7d) ", tgid);
	}
	seq_printf(s, "[%03u] ", ev->cpu);
	if (trace_opt(tr, UKS_OPT_IRQ_INFO))
		print_lat_fmt(s, ent);
	if (it->in_ns) {
		uint64_t usecs = ns_to_us(ev->ts);

		seq_printf(s, " %5lu.%06lu: ", (unsigned long)(usecs / 1000000),
			   (unsigned long)(usecs % 1000000));
	} else {
		seq_printf(s, " %12llu: ", (unsigned long long)ev->ts);
	}
}

/* The instance whose records are being printed (printers that follow its options). */
__thread const struct uks_trace *__uks_trace_printing __attribute__((tls_model("initial-exec")));

/**
 * __uks_trace_print_event - one line of trace/trace_pipe
 * @it:		the reader's print state; its entry index advances
 * @ev:		the event
 * @next_ts:	timestamp of the event the reader shows next, or @ev's own
 *		when there is none (latency-format delay marks)
 *
 * Caller holds event_mutex (the call list must not change underneath).
 */
void __uks_trace_print_event(struct uks_trace *tr, struct uks_seq *s, struct uks_trace_iter *it,
			     const struct uks_rb_event *ev, uint64_t next_ts)
{
	const struct uks_trace_entry *ent = ev->data;
	struct uks_event_call *call = __uks_trace_find_call_by_id(ent->type);

	if (__uks_trace_print_alt(tr, s, ev)) {
		it->idx++;
		return;
	}
	if (trace_opt(tr, UKS_OPT_CONTEXT_INFO)) {
		if (it->lat_fmt)
			print_lat_context(tr, s, it, ev, next_ts);
		else
			print_context(tr, s, it, ev);
	}
	it->idx++;
	if (!call) {
		seq_printf(s, "Unknown type %d\n", ent->type);
		return;
	}
	if (!(call->flags & (UKS_CALL_IGNORE_ENABLE | UKS_CALL_EPROBE | UKS_CALL_OWN_LINE)))
		seq_printf(s, "%s: ", call->name);
	__uks_trace_printing = tr;
	call->print(s, call, ev->data, ev->len);
	__uks_trace_printing = NULL;
	seq_putc(s, '\n');
}
