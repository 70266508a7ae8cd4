/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests that drive a trace instance through its files:
 * rd() reads a whole file into the shared buffer `out` (or "<error N>"),
 * wr() appends like "echo >>", wrt() truncates like "echo >".
 */
#ifndef UKS_TESTS_TRACEFS_IO_H
#define UKS_TESTS_TRACEFS_IO_H

#include <stdio.h>
#include <sys/types.h>

#include <uks/trace.h>

static char out[1 << 20];

static __attribute__((unused)) const char *rd(struct uks_trace *tr, const char *path)
{
	ssize_t n = uks_tracefs_read_all(tr, path, out, sizeof(out));

	if (n < 0)
		snprintf(out, sizeof(out), "<error %zd>", n);
	return out;
}

static __attribute__((unused)) int wr(struct uks_trace *tr, const char *path, const char *text)
{
	return uks_tracefs_write_str(tr, path, text, UKS_TRACEFS_APPEND);
}

static __attribute__((unused)) int wrt(struct uks_trace *tr, const char *path, const char *text)
{
	return uks_tracefs_write_str(tr, path, text, UKS_TRACEFS_TRUNC);
}

#endif
