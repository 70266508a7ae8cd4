/* SPDX-License-Identifier: MIT */
/*
 * Event filters: the 5.15 filter language compiled into a predicate program
 * and run against a record before it is committed.
 */
#ifndef UKS_LIB_TRACE_FILTER_H
#define UKS_LIB_TRACE_FILTER_H

#include <stdbool.h>
#include <stddef.h>

#include "trace/field.h"

struct uks_filter;

/* What a filter may look at besides the record itself. */
struct uks_filter_ctx {
	int cpu;		/* the CPU of the buffer the record goes to */
	const char *comm;	/* the writer's comm (for COMM/comm) */
};

/**
 * struct uks_filter_error - why a filter string was rejected
 * @msg:	the kernel's message text, e.g. "Field not found"
 * @pos:	byte offset in the filter string the caret points at
 */
struct uks_filter_error {
	const char *msg;
	int pos;
};

/**
 * __uks_trace_filter_compile - parse @text against an event's fields
 * @text:	the filter string (trailing newline/whitespace allowed)
 * @fields:	every field a filter may name: common_*, the generic CPU, cpu,
 *		COMM, comm, and the event's own fields
 * @nr_fields:	number of @fields
 * @out:	the compiled filter on success
 * @err:	filled on failure
 *
 * Returns 0, or -EINVAL (parse error, @err set), -ENOMEM, -ENOSPC (too many
 * predicates, @err set).  The fields array must outlive the filter.
 */
int __uks_trace_filter_compile(const char *text, const struct uks_event_field *fields,
			       size_t nr_fields, struct uks_filter **out,
			       struct uks_filter_error *err);

/* Returns true when the record passes (is to be kept). */
bool __uks_trace_filter_match(const struct uks_filter *filter, const void *rec,
			      size_t rec_len, const struct uks_filter_ctx *ctx);

void __uks_trace_filter_free(struct uks_filter *filter);

#endif
