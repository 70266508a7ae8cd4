// SPDX-License-Identifier: MIT
/*
 * error_log: the last 8 command errors of an instance, in the kernel's
 * format, with a caret under the position of the error:
 *
 *	[  123.456789] event_probe: error: Attached event does not exist
 *	  Command: e:foo/bar a.b
 *	                     ^
 */
#include <string.h>

#include <uks/slab.h>

#include "trace/trace.h"

static char *dup_str(const char *s)
{
	size_t n = strlen(s) + 1;
	char *d = uks_kmalloc(n);

	if (d)
		memcpy(d, s, n);
	return d;
}

static void entry_free(struct uks_error_log_entry *e)
{
	uks_kfree(e->loc);
	uks_kfree(e->cmd);
	uks_kfree(e->err);
	memset(e, 0, sizeof(*e));
}

/**
 * __uks_trace_log_err - append an entry (the oldest goes when 8 are kept)
 * @loc:	"event_probe", "trace_kprobe", "event filter parse error", …
 * @cmd:	the command as written
 * @err:	the error text
 * @pos:	offset in @cmd the caret points at
 */
void __uks_trace_log_err(struct uks_trace *tr, const char *loc, const char *cmd,
			 const char *err, unsigned int pos)
{
	struct uks_error_log_entry *e;

	pthread_mutex_lock(&tr->lock);
	e = &tr->errors[tr->next_error];
	entry_free(e);
	e->ts = __uks_trace_clock_read(__uks_trace_rb_clock(tr->rb), &(uint64_t){ 0 });
	e->loc = dup_str(loc);
	e->cmd = dup_str(cmd);
	e->err = dup_str(err);
	e->pos = pos;
	tr->next_error = (tr->next_error + 1) % UKS_ERROR_LOG_MAX;
	if (tr->nr_errors < UKS_ERROR_LOG_MAX)
		tr->nr_errors++;
	pthread_mutex_unlock(&tr->lock);
}

void __uks_trace_show_error_log(struct uks_trace *tr, struct uks_seq *s)
{
	unsigned int first;

	pthread_mutex_lock(&tr->lock);
	first = (tr->next_error + UKS_ERROR_LOG_MAX - tr->nr_errors) % UKS_ERROR_LOG_MAX;
	for (unsigned int i = 0; i < tr->nr_errors; i++) {
		const struct uks_error_log_entry *e = &tr->errors[(first + i) % UKS_ERROR_LOG_MAX];
		uint64_t sec = e->ts / 1000000000u;
		unsigned int usec = (unsigned int)(e->ts % 1000000000u / 1000u);

		if (!e->loc || !e->cmd || !e->err)
			continue;	/* an allocation failed when it was logged */
		seq_printf(s, "[%5llu.%06u] %s: error: %s\n", (unsigned long long)sec, usec,
			   e->loc, e->err);
		seq_printf(s, "  Command: %s\n", e->cmd);
		seq_printf(s, "%*s^\n", (int)(sizeof("  Command: ") - 1 + e->pos), "");
	}
	pthread_mutex_unlock(&tr->lock);
}

void __uks_trace_clear_error_log(struct uks_trace *tr)
{
	pthread_mutex_lock(&tr->lock);
	for (unsigned int i = 0; i < UKS_ERROR_LOG_MAX; i++)
		entry_free(&tr->errors[i]);
	tr->nr_errors = tr->next_error = 0;
	pthread_mutex_unlock(&tr->lock);
}
