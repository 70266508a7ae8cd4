/* SPDX-License-Identifier: MIT */
/*
 * A task's /proc/TID files (status and its number fields "Tgid", "PPid";
 * comm) for the layers that follow real processes (tracee, damon, the
 * trace_marker writer) and uksd's ptrace rule.
 * Header-only, so the preload malloc, which links lib/core, carries none.
 */
#ifndef UKS_LIB_CORE_PROC_STATUS_H
#define UKS_LIB_CORE_PROC_STATUS_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

/**
 * proc_task_read - /proc/@tid/@name into @buf, NUL-terminated
 * @tid: any task, a thread or a process
 * @name: the file, e.g. "status" or "comm"
 * @buf: receives the file's text (as much as fits)
 * @size: size of @buf; one read() takes what fits
 *
 * Return: the length read, -ESRCH when the task is gone, or another -errno.
 */
static inline ssize_t proc_task_read(pid_t tid, const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)tid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	return n;
}

/* /proc/@tid/status into @buf; 0, -ESRCH when the task is gone, or -errno. */
static inline int proc_status_read(pid_t tid, char *buf, size_t size)
{
	ssize_t n = proc_task_read(tid, "status", buf, size);

	return n < 0 ? (int)n : 0;
}

/* @tid's comm, without its newline, or "<...>" once the task is gone. */
static inline void proc_comm_read(pid_t tid, char comm[16])
{
	ssize_t n = proc_task_read(tid, "comm", comm, 16);

	if (n <= 0)
		strcpy(comm, "<...>");
	else if (comm[n - 1] == '\n')
		comm[n - 1] = '\0';
}

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
	char key[32], buf[1024], *p;

	snprintf(key, sizeof(key), "\n%s:", field);
	if (proc_status_read(tid, buf, sizeof(buf)))
		return dflt;
	p = strstr(buf, key);
	return p ? (pid_t)strtol(p + strlen(key), NULL, 10) : dflt;
}

#endif /* UKS_LIB_CORE_PROC_STATUS_H */
