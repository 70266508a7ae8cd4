/* SPDX-License-Identifier: MIT */
/*
 * Fetch programs of probe arguments: the part of an eprobe argument before
 * its ":type" ($field, $comm, @addr, immediates, +|-[u]OFFS(...)
 * dereferences), compiled by probe_fetch.c and used by probe_arg.c, which
 * owns the types, names and record layout.
 */
#ifndef UKS_LIB_TRACE_PROBE_FETCH_H
#define UKS_LIB_TRACE_PROBE_FETCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "trace/field.h"

struct pa_fetch;

/* Leading digits of @s (0x hex, 0 octal) into @out; returns their count, 0 on overflow. */
size_t __uks_probe_parse_ulong(const char *s, uint64_t *out);
/* The whole of @s as a number (base 0); false if anything else is there. */
bool __uks_probe_kstrtoul(const char *s, uint64_t *out);

/*
 * Compile @arg (modified in place) found at byte @offs of the command.
 * Returns 0, or -EINVAL with @msg and @caret (the error_log position) set.
 */
int __uks_probe_fetch_parse(char *arg, int offs, const struct uks_event_field *fields,
			    size_t nr_fields, struct pa_fetch **out, const char **msg,
			    int *caret);
/* Number of dereferences; 0 for a plain field or immediate. */
int __uks_probe_fetch_depth(const struct pa_fetch *f);
/* True when the value is text already held ($comm, an immediate string). */
bool __uks_probe_fetch_is_text(const struct pa_fetch *f);
/* Set what to store: @size bytes (or a string), @count elements, bitfield shifts. */
void __uks_probe_fetch_shape(struct pa_fetch *f, unsigned int size, bool string,
			     unsigned int count, int lshift, int rshift);
/* String bytes this argument needs for the source record (faults take none). */
size_t __uks_probe_fetch_size(const struct pa_fetch *f, const uint8_t *src,
			      size_t src_len, pid_t pid);
/* Run the fetch: read from @src (and @pid's memory), write at @offset of @rec. */
void __uks_probe_fetch_store(const struct pa_fetch *f, const uint8_t *src, size_t src_len,
			     pid_t pid, uint8_t *rec, size_t rec_len, unsigned int offset,
			     size_t *dyn);
void __uks_probe_fetch_free(struct pa_fetch *f);

#endif
