/* SPDX-License-Identifier: MIT */
/* uksd internals shared by its files. */
#ifndef UKS_DAEMON_UKSD_H
#define UKS_DAEMON_UKSD_H

#include <stddef.h>

#include <uks/fs.h>

/* Socket requests of uksd beyond files (the uks CLI sends them). */
enum uksd_op {
	/*
	 * From a keeper that has seized the pid (uks_tracee_keeper_create);
	 * arg: pid, data: "" or "filtered"; frame "attached [MOUNT]\n", then
	 * the connection carries the keeper's relay (lib/tracee/relay.h).
	 */
	UKSD_OP_TRACE_ATTACH = UKS_SOCK_EXT + 1,
	/* -> the seccomp program for the events enabled now (uks_tracee_filter) */
	UKSD_OP_TRACE_FILTER = UKS_SOCK_EXT + 2,
};

int uksd_handle_request(int op, const char *arg, const void *data, size_t len, int fd,
			void *ctx);
/* The FUSE mount, told to uks trace so that it can say where the trace is. */
void uksd_tracing_set_mount(const char *mount);
/* Release whatever is being traced (its keeper runs on) and let its request end. */
void uksd_stop_tracing(void);

#endif
