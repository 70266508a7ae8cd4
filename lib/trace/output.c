// SPDX-License-Identifier: MIT
/*
 * Text output of the trace and trace_pipe files, as Linux 5.15 prints it:
 * the header of print_func_help_header[_irq]() and one line per event
 * from trace_print_context() plus the event's own text.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "trace/trace.h"

static unsigned int online_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	return n > 0 ? (unsigned int)n : 1;
}

/** uks_trace_print_header - the comment block at the top of "trace" */
void uks_trace_print_header(struct uks_trace *tr, struct uks_seq *s)
{
	static const char space[] = "            ";
	bool tgid = trace_opt(tr, UKS_OPT_RECORD_TGID);
	uint64_t entries = 0, total = 0;
	int prec = tgid ? 12 : 2;

	for (unsigned int cpu = 0; cpu < uks_rb_nr_cpus(tr->rb); cpu++) {
		struct uks_rb_stats st;

		uks_rb_stats(tr->rb, cpu, &st);
		entries += st.entries;
		total += st.entries + st.overrun;
	}
	uks_seq_puts(s, "# tracer: nop\n#\n");
	uks_seq_printf(s, "# entries-in-buffer/entries-written: %llu/%llu   #P:%u\n",
		       (unsigned long long)entries, (unsigned long long)total, online_cpus());
	uks_seq_puts(s, "#\n");
	if (!trace_opt(tr, UKS_OPT_IRQ_INFO)) {
		uks_seq_printf(s, "#           TASK-PID    %s CPU#     TIMESTAMP  FUNCTION\n",
			       tgid ? "   TGID   " : "");
		uks_seq_printf(s, "#              | |      %s   |         |         |\n",
			       tgid ? "     |    " : "");
		return;
	}
	uks_seq_printf(s, "#                            %.*s  _-----=> irqs-off\n", prec, space);
	uks_seq_printf(s, "#                            %.*s / _----=> need-resched\n", prec, space);
	uks_seq_printf(s, "#                            %.*s| / _---=> hardirq/softirq\n", prec, space);
	uks_seq_printf(s, "#                            %.*s|| / _--=> preempt-depth\n", prec, space);
	uks_seq_printf(s, "#                            %.*s||| / _-=> migrate-disable\n", prec, space);
	uks_seq_printf(s, "#                            %.*s|||| /     delay\n", prec, space);
	uks_seq_printf(s, "#           TASK-PID  %.*s CPU#  |||||  TIMESTAMP  FUNCTION\n", prec,
		       "     TGID   ");
	uks_seq_printf(s, "#              | |    %.*s   |   |||||     |         |\n", prec,
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
	uks_seq_printf(s, "%c%c%c", irqs_off, resched, hardsoft);
	if (ent->preempt_count & 0xf)
		uks_seq_printf(s, "%x", ent->preempt_count & 0xf);
	else
		uks_seq_putc(s, '.');
	if (ent->preempt_count & 0xf0)
		uks_seq_printf(s, "%x", ent->preempt_count >> 4);
	else
		uks_seq_putc(s, '.');
}

static struct uks_event_call *call_by_id(int id)
{
	struct uks_event_call *call;

	list_for_each_entry(call, &uks_calls, list)
		if (call->id == id)
			return call;
	return NULL;
}

/**
 * uks_trace_print_event - one line of trace/trace_pipe
 * Caller holds event_mutex (the call list must not change underneath).
 */
void uks_trace_print_event(struct uks_trace *tr, struct uks_seq *s,
			   const struct uks_rb_event *ev)
{
	const struct uks_trace_entry *ent = ev->data;
	struct uks_event_call *call = call_by_id(ent->type);
	char comm[16];

	if (trace_opt(tr, UKS_OPT_CONTEXT_INFO)) {
		if (trace_opt(tr, UKS_OPT_RECORD_CMD))
			uks_trace_find_cmdline(ent->pid, comm);
		else
			strcpy(comm, "<...>");
		uks_seq_printf(s, "%16s-%-7d ", comm, ent->pid);
		if (trace_opt(tr, UKS_OPT_RECORD_TGID)) {
			pid_t tgid = uks_trace_find_tgid(ent->pid);

			if (tgid < 0)
				uks_seq_puts(s, "(-------) ");
			else
				uks_seq_printf(s, "(%7d) ", tgid);
		}
		uks_seq_printf(s, "[%03u] ", ev->cpu);
		if (trace_opt(tr, UKS_OPT_IRQ_INFO))
			print_lat_fmt(s, ent);
		if (uks_trace_clock_in_ns(uks_rb_clock(tr->rb))) {
			uint64_t usecs = (ev->ts + 500) / 1000;

			uks_seq_printf(s, " %5lu.%06lu: ", (unsigned long)(usecs / 1000000),
				       (unsigned long)(usecs % 1000000));
		} else {
			uks_seq_printf(s, " %12llu: ", (unsigned long long)ev->ts);
		}
	}
	if (!call) {
		uks_seq_printf(s, "Unknown type %d\n", ent->type);
		return;
	}
	if (!(call->flags & UKS_CALL_IGNORE_ENABLE) && !(call->flags & UKS_CALL_EPROBE))
		uks_seq_printf(s, "%s: ", call->name);
	call->print(s, call, ev->data, ev->len);
	uks_seq_putc(s, '\n');
}
