// SPDX-License-Identifier: MIT
/*
 * The log sink.  One per process, like libbpf_set_print() and
 * fuse_set_log_func(): it is configuration, not state, and it is read with
 * one atomic load so it may be changed while other threads log.
 */
#include <stdarg.h>
#include <stdio.h>

#include "core/compiler.h"
#include "core/log.h"

struct log_sink {
	uks_log_fn fn;
	void *arg;
};

static const struct log_sink default_sink = { uks_log_stderr, NULL };
static struct log_sink user_sink;
static const struct log_sink *_Atomic current_sink = &default_sink;

/**
 * uks_log_stderr - the default sink: errors and warnings to stderr
 * @level: severity; INFO and DEBUG are dropped
 * @msg: the message
 * @arg: unused
 */
UKS_EXPORT void uks_log_stderr(enum uks_log_level level, const char *msg, void *arg)
{
	static const char *const names[] = { "error", "warning", "info", "debug" };

	if (level <= UKS_LOG_WARN)
		fprintf(stderr, "uks: %s: %s\n", names[level], msg);
}

/**
 * uks_set_log_fn - route every uks library message to @fn
 * @fn: the sink; NULL silences the libraries
 * @arg: passed to @fn unchanged
 *
 * Not meant to be called concurrently with itself.
 */
UKS_EXPORT void uks_set_log_fn(uks_log_fn fn, void *arg)
{
	static const struct log_sink silent = { NULL, NULL };

	if (!fn) {
		current_sink = &silent;
		return;
	}
	current_sink = &default_sink;	/* never expose a half-written sink */
	user_sink.fn = fn;
	user_sink.arg = arg;
	current_sink = &user_sink;
}

void __uks_log(enum uks_log_level level, const char *fmt, ...)
{
	const struct log_sink *sink = current_sink;
	char msg[1024];
	va_list ap;
	int len;

	if (!sink->fn)
		return;
	va_start(ap, fmt);
	len = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* sinks get one message without its newline, whichever way it was written */
	if (len > 0 && (size_t)len < sizeof(msg) && msg[len - 1] == '\n')
		msg[len - 1] = 0;
	sink->fn(level, msg, sink->arg);
}
