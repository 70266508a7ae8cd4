/* SPDX-License-Identifier: MIT */
/* Events the tracefs tests fire. */
#ifndef UKS_TESTS_TRACEFS_EVENTS_H
#define UKS_TESTS_TRACEFS_EVENTS_H

#include <uks/tracepoint.h>

UKS_TRACE_EVENT(uks_test, open,
	UKS_TP_PROTO(int fd, const char *filename, unsigned long flags),
	UKS_TP_ARGS(fd, filename, flags),
	UKS_TP_FIELDS(
		(field, int, fd, fd),
		(string, filename, filename),
		(field, const char *, name_ptr, filename),
		(field, unsigned long, flags, flags)),
	UKS_TP_PRINTK("fd=%d filename=%s flags=0x%lx", REC->fd, __get_str(filename), REC->flags))

UKS_TRACE_EVENT(uks_test, tick,
	UKS_TP_PROTO(unsigned int n, const char *comm),
	UKS_TP_ARGS(n, comm),
	UKS_TP_FIELDS(
		(field, unsigned int, n, n),
		(array, char, comm, 16, comm)),
	UKS_TP_PRINTK("n=%u comm=%s", REC->n, REC->comm))

UKS_TRACE_EVENT(uks_other, ping,
	UKS_TP_PROTO(long v),
	UKS_TP_ARGS(v),
	UKS_TP_FIELDS((field, long, v, v)),
	UKS_TP_PRINTK("v=%ld", REC->v))

#endif
