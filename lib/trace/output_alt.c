// SPDX-License-Identifier: MIT
/*
 * The trace_options that replace an event's line in trace and trace_pipe,
 * as the kernel's print_trace_line() picks them: printk-msg-only (a
 * trace_marker line as its bare text), bin, hex, raw.  Events have no
 * raw, hex or binary printer of their own in the kernel (TRACE_EVENT()
 * defines only the text one), so each prints "type: ID"; trace_marker's
 * print event has a raw one, "# IP TEXT", and trace_marker_raw's raw_data
 * prints the same under raw as in its text.
 */
#include <string.h>

#include "trace/trace.h"

struct print_rec {			/* ftrace:print (marker.c) */
	struct uks_trace_entry ent;
	unsigned long ip;
	char buf[];
};

/* The print event's text, its newline included, within the record. */
static void put_print_text(struct uks_seq *s, const struct uks_rb_event *ev)
{
	const struct print_rec *p = ev->data;

	if (ev->len > sizeof(*p))
		seq_putmem(s, p->buf, strnlen(p->buf, ev->len - sizeof(*p)));
}

/* seq_buf_putmem_hex() of one value: its digits high to low and a space. */
static void put_hex(struct uks_seq *s, uint64_t v, int bytes)
{
	seq_printf(s, "%0*llx ", bytes * 2, (unsigned long long)v);
}

/**
 * __uks_trace_print_alt - one event printed by printk-msg-only, bin, hex or raw
 *
 * Returns false when none of them is on, so the line is the usual text.
 */
bool __uks_trace_print_alt(struct uks_trace *tr, struct uks_seq *s, const struct uks_rb_event *ev)
{
	const struct uks_trace_entry *ent = ev->data;
	bool ctx = trace_opt(tr, UKS_OPT_CONTEXT_INFO), known, print;
	int pid = ent->pid, cpu = (int)ev->cpu;
	uint64_t ts = ev->ts;

	print = ent->type == UKS_TRACE_FTRACE_PRINT_ID;
	if (print && trace_opt(tr, UKS_OPT_TRACE_PRINTK) && trace_opt(tr, UKS_OPT_PRINTK_MSG_ONLY)) {
		put_print_text(s, ev);
		return true;
	}
	known = print || __uks_trace_find_call_by_id(ent->type);
	if (trace_opt(tr, UKS_OPT_BIN)) {
		if (ctx) {
			seq_putmem(s, &pid, sizeof(pid));
			seq_putmem(s, &cpu, sizeof(cpu));
			seq_putmem(s, &ts, sizeof(ts));
		}
		if (known)
			seq_printf(s, "type: %d\n", ent->type);
		return true;
	}
	if (trace_opt(tr, UKS_OPT_HEX)) {
		if (ctx) {
			put_hex(s, (uint32_t)pid, 4);
			put_hex(s, (uint32_t)cpu, 4);
			put_hex(s, ts, 8);
		}
		if (known)
			seq_printf(s, "type: %d\n", ent->type);
		seq_putc(s, '\n');
		return true;
	}
	if (trace_opt(tr, UKS_OPT_RAW)) {
		if (ctx)
			seq_printf(s, "%d %d %llu ", pid, cpu, (unsigned long long)ts);
		if (print) {
			seq_printf(s, "# %lx ", ((const struct print_rec *)ev->data)->ip);
			put_print_text(s, ev);
		} else if (ent->type == UKS_TRACE_FTRACE_RAW_DATA_ID && known) {
			/* raw_data's raw printer is its text one */
			__uks_trace_find_call_by_id(ent->type)->print(s, NULL, ev->data, ev->len);
			seq_putc(s, '\n');
		} else if (known) {
			seq_printf(s, "type: %d\n", ent->type);
		} else {
			seq_printf(s, "%d ?\n", ent->type);
		}
		return true;
	}
	return false;
}
