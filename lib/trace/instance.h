/* SPDX-License-Identifier: MIT */
/* Instance settings behind the top-level tracefs files (instance.c). */
#ifndef UKS_LIB_TRACE_INSTANCE_H
#define UKS_LIB_TRACE_INSTANCE_H

#include <stdbool.h>
#include <stddef.h>

#include "core/seq.h"

struct uks_trace;

/* options.c: trace_options and options/ */
void __uks_trace_show_options(struct uks_trace *tr, struct uks_seq *s);
int __uks_trace_option_index(const struct uks_trace *tr, const char *name);
const char *__uks_trace_option_at(const struct uks_trace *tr, size_t i, int *opt);
int __uks_trace_set_option(struct uks_trace *tr, int opt, bool on);
int __uks_trace_write_option(struct uks_trace *tr, const char *word);
void __uks_trace_show_buffer_size(struct uks_trace *tr, int cpu, struct uks_seq *s);
void __uks_trace_show_buffer_total(struct uks_trace *tr, struct uks_seq *s);
int __uks_trace_set_buffer_size(struct uks_trace *tr, int cpu, unsigned long kb);
void __uks_trace_show_clock(struct uks_trace *tr, struct uks_seq *s);
int __uks_trace_set_clock(struct uks_trace *tr, const char *name);

/* instances/NAME of a top level (caller of _find holds event_mutex) */
struct uks_trace *__uks_trace_instance_find(struct uks_trace *top, const char *name);
int __uks_trace_instance_mkdir(struct uks_trace *top, const char *name);
int __uks_trace_instance_rmdir(struct uks_trace *top, const char *name);

#endif
