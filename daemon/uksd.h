/* SPDX-License-Identifier: MIT */
/* uksd internals shared by its files. */
#ifndef UKS_DAEMON_UKSD_H
#define UKS_DAEMON_UKSD_H

#include <stddef.h>

#include <uks/fs.h>

/* Socket requests of uksd beyond files (the uks CLI sends them). */
enum uksd_op {
	/* arg: pid, data: "" or "filtered"; frames: "attached\n", then the end */
	UKSD_OP_TRACE_ATTACH = UKS_SOCK_EXT + 1,
	/* -> the seccomp program for the events enabled now (uks_tracee_filter) */
	UKSD_OP_TRACE_FILTER = UKS_SOCK_EXT + 2,
};

int uksd_handle_request(int op, const char *arg, const void *data, size_t len, int fd,
			void *ctx);
/* Detach from whatever is being traced and let its request end. */
void uksd_stop_tracing(void);

#endif
