// SPDX-License-Identifier: MIT
/*
 * trace_options and options/: the kernel's 6.12 list, in its order, as a
 * kernel built without the function, graph and branch tracers shows it
 * (uks has no function tracing), with the nop tracer's two test options
 * at the end.
 *
 * What each option does in uks:
 *  - verbose, raw, hex, bin, context-info, latency-format, record-cmd,
 *    record-tgid, irq-info: how trace and trace_pipe print, as the kernel.
 *  - overwrite, markers, event-fork: the buffer's mode, trace_marker,
 *    the pid lists following forks (event_pids.c).
 *  - test_nop_accept / test_nop_refuse: the nop tracer's, accepted and
 *    refused (-EINVAL) as the kernel's nop tracer does.
 *  - sym-userobj, sym-addr: how user stacks print (trigger_stack.c).
 *  - kept and shown, acting on nothing uks has: print-parent, sym-offset,
 *    trace_printk, printk-msg-only (trace_printk), disable_on_free
 *    (free_buffer), annotate (per-CPU buffer start notes), block (poll of
 *    trace_pipe), fields, userstacktrace, stacktrace (stack dumps after
 *    events), hash-ptr (%p prints the address as it is) and
 *    pause-on-trace (a reader of trace reads what was in the buffer at
 *    its open, so it needs no pause).  Tools set and restore them; they must exist.
 * trace_printk, printk-msg-only and record-cmd are the top instance's
 * only: an instance's options/ has no file for them, as in the kernel.
 */
#include <errno.h>
#include <string.h>

#include "core/compiler.h"
#include "trace/instance.h"
#include "trace/trace.h"

static const struct {
	int opt;
	const char *name;
	bool top_only;
} options[] = {
	{ UKS_OPT_PRINT_PARENT, "print-parent", false },
	{ UKS_OPT_SYM_OFFSET, "sym-offset", false },
	{ UKS_OPT_SYM_ADDR, "sym-addr", false },
	{ UKS_OPT_VERBOSE, "verbose", false },
	{ UKS_OPT_RAW, "raw", false },
	{ UKS_OPT_HEX, "hex", false },
	{ UKS_OPT_BIN, "bin", false },
	{ UKS_OPT_BLOCK, "block", false },
	{ UKS_OPT_FIELDS, "fields", false },
	{ UKS_OPT_TRACE_PRINTK, "trace_printk", true },
	{ UKS_OPT_ANNOTATE, "annotate", false },
	{ UKS_OPT_USERSTACKTRACE, "userstacktrace", false },
	{ UKS_OPT_SYM_USEROBJ, "sym-userobj", false },
	{ UKS_OPT_PRINTK_MSG_ONLY, "printk-msg-only", true },
	{ UKS_OPT_CONTEXT_INFO, "context-info", false },
	{ UKS_OPT_LATENCY_FORMAT, "latency-format", false },
	{ UKS_OPT_RECORD_CMD, "record-cmd", true },
	{ UKS_OPT_RECORD_TGID, "record-tgid", false },
	{ UKS_OPT_OVERWRITE, "overwrite", false },
	{ UKS_OPT_DISABLE_ON_FREE, "disable_on_free", false },
	{ UKS_OPT_IRQ_INFO, "irq-info", false },
	{ UKS_OPT_MARKERS, "markers", false },
	{ UKS_OPT_EVENT_FORK, "event-fork", false },
	{ UKS_OPT_PAUSE_ON_TRACE, "pause-on-trace", false },
	{ UKS_OPT_HASH_PTR, "hash-ptr", false },
	{ UKS_OPT_STACKTRACE, "stacktrace", false },
	{ UKS_OPT_TEST_NOP_ACCEPT, "test_nop_accept", false },
	{ UKS_OPT_TEST_NOP_REFUSE, "test_nop_refuse", false },
};

/* trace_options lists every option, in instances too. */
void __uks_trace_show_options(struct uks_trace *tr, struct uks_seq *s)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		seq_printf(s, "%s%s\n", trace_opt(tr, options[i].opt) ? "" : "no",
			   options[i].name);
}

static bool has_file(const struct uks_trace *tr, size_t i)
{
	return !tr || !tr->name || !options[i].top_only;
}

/* options/NAME: the option, or -1 when @tr's options/ has no such file. */
int __uks_trace_option_index(const struct uks_trace *tr, const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (!strcmp(options[i].name, name))
			return has_file(tr, i) ? options[i].opt : -1;
	return -1;
}

/* The @i-th file of @tr's options/ (NULL past the last) and its option. */
const char *__uks_trace_option_at(const struct uks_trace *tr, size_t i, int *opt)
{
	for (size_t k = 0; k < ARRAY_SIZE(options); k++) {
		if (!has_file(tr, k))
			continue;
		if (!i--) {
			*opt = options[k].opt;
			return options[k].name;
		}
	}
	return NULL;
}

/**
 * __uks_trace_set_option - turn @opt on or off in @tr
 *
 * Returns 0, or -EINVAL from the nop tracer for test_nop_refuse (asked
 * each time, as the kernel's set_flag()).
 */
int __uks_trace_set_option(struct uks_trace *tr, int opt, bool on)
{
	uint64_t was;

	if (opt == UKS_OPT_TEST_NOP_REFUSE)
		return -EINVAL;
	if (on)
		was = __atomic_fetch_or(&tr->opts, 1ull << opt, __ATOMIC_RELAXED);
	else
		was = __atomic_fetch_and(&tr->opts, ~(1ull << opt), __ATOMIC_RELAXED);
	if (!!(was & (1ull << opt)) == on)
		return 0;
	if (opt == UKS_OPT_EVENT_FORK)
		__uks_trace_event_fork_changed(on);
	if (opt == UKS_OPT_OVERWRITE)
		__uks_trace_rb_set_overwrite(tr->rb, on);
	return 0;
}

/*
 * One trace_options write: "name" or "noname" (the kernel takes the "no"
 * off whatever follows).  0 or -EINVAL.
 */
int __uks_trace_write_option(struct uks_trace *tr, const char *word)
{
	bool on = strncmp(word, "no", 2) != 0;

	for (size_t i = 0; i < ARRAY_SIZE(options); i++)
		if (!strcmp(options[i].name, on ? word : word + 2))
			return __uks_trace_set_option(tr, options[i].opt, on);
	return -EINVAL;
}
