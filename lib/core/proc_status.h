/* SPDX-License-Identifier: MIT */
/*
 * A task's number fields from /proc/TID/status ("Tgid", "PPid"), for the
 * layers that follow real processes (tracee, damon).  Header-only, so the
 * preload malloc, which links lib/core, carries none of it.
 */
#ifndef UKS_LIB_CORE_PROC_STATUS_H
#define UKS_LIB_CORE_PROC_STATUS_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/**
 * proc_status_pid - a pid-valued field of /proc/@tid/status
 * @tid: any task, a thread or a process
 * @field: the field's name without its colon, e.g. "Tgid"
 * @dflt: returned when the task or the field is gone
 *
 * The fields wanted here come before the first KiB of the file (Name is
 * at most 64 bytes escaped), so one read() is enough.
 */
static inline pid_t proc_status_pid(pid_t tid, const char *field, pid_t dflt)
{
	char path[64], key[32], buf[1024], *p;
	ssize_t n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	snprintf(key, sizeof(key), "\n%s:", field);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
	}
	if (n <= 0)
		return dflt;
	buf[n] = '\0';
	p = strstr(buf, key);
	return p ? (pid_t)strtol(p + strlen(key), NULL, 10) : dflt;
}

#endif /* UKS_LIB_CORE_PROC_STATUS_H */
