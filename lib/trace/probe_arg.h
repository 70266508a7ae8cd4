/* SPDX-License-Identifier: MIT */
/*
 * Probe fetch arguments (the kernel's trace_probe.c subset used by event
 * probes): parse "NAME=FETCHARG[:TYPE]" words against the fields of the
 * attached event, lay out the probe record, fetch values from an attached
 * record (dereferencing into the writer's process with process_vm_readv),
 * and print them.
 */
#ifndef UKS_LIB_TRACE_PROBE_ARG_H
#define UKS_LIB_TRACE_PROBE_ARG_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/field.h"
#include "core/seq.h"

struct uks_probe_args;

/**
 * struct uks_probe_error - why a fetch argument was rejected
 * @msg:	the kernel's probe error text, e.g. "Invalid type"
 * @arg:	index of the offending word in @argv (-1: not argument specific)
 * @offset:	byte offset within that word the caret points at
 */
struct uks_probe_error {
	const char *msg;
	int arg;
	int offset;
};

/**
 * __uks_trace_probe_args_parse - compile the fetch arguments of an event probe
 * @argc, @argv: the argument words ("fd=$fd", "+0($filename):ustring", …)
 * @fields:	the attached event's fields (common_* included)
 * @nr_fields:	their number
 * @base:	offset in the probe record where the first argument goes (the
 *		probe's common header and __probe_type come before it)
 * @out:	the compiled arguments
 * @err:	filled on failure
 *
 * Returns 0, -EINVAL (syntax, @err set), -ENOENT (no such field, @err set),
 * -E2BIG (too many arguments) or -ENOMEM.
 */
int __uks_trace_probe_args_parse(int argc, const char *const *argv,
				 const struct uks_event_field *fields, size_t nr_fields,
				 unsigned int base, struct uks_probe_args **out,
				 struct uks_probe_error *err);
void __uks_trace_probe_args_free(struct uks_probe_args *pa);

/* The probe record's own fields (offsets include @base) for format/filter. */
const struct uks_event_field *__uks_trace_probe_args_fields(const struct uks_probe_args *pa,
							    size_t *nr);
/* Size of the fixed part of a probe record, header and @base included. */
size_t __uks_trace_probe_args_fixed_size(const struct uks_probe_args *pa);

/*
 * Bytes of dynamic data (strings) the arguments need for @src; 0 when none.
 * @pid is the process whose memory dereferences read.
 */
size_t __uks_trace_probe_args_dynamic_size(const struct uks_probe_args *pa, const void *src,
					   size_t src_len, pid_t pid);
/*
 * Fill the argument part of the probe record @dst (of @dst_len bytes, at
 * least fixed + dynamic size) from the attached record @src.  Failed
 * dereferences store what the kernel stores (zero values, "(fault)" strings).
 */
void __uks_trace_probe_args_store(const struct uks_probe_args *pa, const void *src,
				  size_t src_len, pid_t pid, void *dst, size_t dst_len);

/* Append " name=value" for every argument of the probe record @rec. */
void __uks_trace_probe_args_print(const struct uks_probe_args *pa, const void *rec,
				  size_t rec_len, struct uks_seq *s);

/*
 * Append the print fmt of the probe event as the format file shows it after
 * "print fmt: ", e.g. "(%u) arg1=0x%Lx", REC->__probe_type, REC->arg1 for
 * 5.15, without the trailing newline.
 */
void __uks_trace_probe_args_print_fmt(const struct uks_probe_args *pa, struct uks_seq *s);

/* The original text of argument @i as the dynamic_events listing shows it. */
const char *__uks_trace_probe_args_text(const struct uks_probe_args *pa, int i);
int __uks_trace_probe_args_count(const struct uks_probe_args *pa);
/* Storing them reads the writer's memory (a dereference, a string at an address). */
bool __uks_trace_probe_args_read_memory(const struct uks_probe_args *pa);

#endif
