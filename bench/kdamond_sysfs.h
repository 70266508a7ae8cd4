/* SPDX-License-Identifier: MIT */
/*
 * The kernel's own DAMON as a peer in the DAMON benchmarks: one kdamond
 * with one context, driven through DAMON's sysfs interface
 * (/sys/kernel/mm/damon/admin, Linux 5.18+), on the operations set the
 * kernel has: vaddr on a given process where built in, else paddr (all of
 * physical memory).  Shared by bench/damon_overhead (monitor CPU) and
 * bench/damon_self_overhead (the monitored program's slowdown).
 *
 * Only a machine with no kdamond configured is used (nr_kdamonds 0):
 * one that someone else set up is left alone.
 */
#ifndef UKS_BENCH_KDAMOND_SYSFS_H
#define UKS_BENCH_KDAMOND_SYSFS_H

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#define KDAMOND		"/sys/kernel/mm/damon/admin/kdamonds"

/* Write @s to @path: 0 or -errno; async-signal-safe (see kd_on_fatal_signal()). */
static inline int kd_write(const char *path, const char *s)
{
	size_t len = strlen(s);
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, s, len) != (ssize_t)len)
		ret = -errno;
	close(fd);
	return ret;
}

static inline int kd_put(const char *path, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static inline int kd_put(const char *path, const char *fmt, ...)
{
	char buf[128];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return kd_write(path, buf);
}

/* Read @path into @buf as a string: 0, or -1 if it could not be read. */
static inline int kd_read(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	buf[0] = '\0';
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

static inline long kd_get_long(const char *path)
{
	char buf[64];

	return kd_read(path, buf, sizeof(buf)) ? -1 : strtol(buf, NULL, 10);
}

/*
 * User + system CPU seconds from a /proc stat file: /proc/PID/stat for a
 * process (a kdamond), /proc/self/task/TID/stat for one of our threads.
 * -1 on error.
 */
static inline double kd_stat_cpu_s(const char *path)
{
	char buf[1024], *p;
	unsigned long ut, st;

	if (kd_read(path, buf, sizeof(buf)))
		return -1;
	p = strrchr(buf, ')');
	/* after ") ": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime */
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static inline double kd_proc_cpu_s(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	return kd_stat_cpu_s(path);
}

/* Set while the kdamond is ours: a fatal signal must not leave it behind. */
static volatile sig_atomic_t kd_owned;

/* Turn the kdamond off and remove it. */
static inline void kdamond_off(void)
{
	kd_write(KDAMOND "/0/state", "off");
	kd_write(KDAMOND "/nr_kdamonds", "0");
	kd_owned = 0;
}

/*
 * A kdamond left running would make every later run see "a kdamond
 * already set up" and leave the kernel peer out, so a fatal signal turns
 * it off first, then takes its default action.
 */
static inline void kd_on_fatal_signal(int sig)
{
	if (kd_owned)
		kdamond_off();
	signal(sig, SIG_DFL);
	raise(sig);
}

static inline void kd_catch_fatal_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGABRT, SIGSEGV, SIGBUS };

	for (unsigned int i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], kd_on_fatal_signal);
}

/**
 * kdamond_on - start the kernel's DAMON on @pid
 * @pid:	the target of vaddr
 * @attrs:	sampling, aggregation and update intervals (us), min and max
 *		regions, as DAMON's debugfs attrs file orders them
 * @want_vaddr:	fail unless the kernel has vaddr (no fallback to paddr)
 * @ops:	gets "vaddr" or "paddr", what runs
 *
 * Return: the kdamond's pid, or -1: no sysfs interface, not root, a
 * kdamond already configured, or the operations set missing.
 */
static inline long kdamond_on(pid_t pid, const unsigned long attrs[5], int want_vaddr,
			      char *ops, size_t len)
{
	static const char *const attr_file[5] = {
		"intervals/sample_us", "intervals/aggr_us", "intervals/update_us",
		"nr_regions/min", "nr_regions/max",
	};
	const char *c = KDAMOND "/0/contexts/0";
	char path[256], avail[128];
	long kpid;

	if (access(KDAMOND "/nr_kdamonds", W_OK) || kd_get_long(KDAMOND "/nr_kdamonds") != 0)
		return -1;
	kd_catch_fatal_signals();
	kd_owned = 1;
	if (kd_put(KDAMOND "/nr_kdamonds", "1") || kd_put(KDAMOND "/0/contexts/nr_contexts", "1"))
		goto fail;
	/* The kernel accepts any name in "operations"; avail_operations says what is built. */
	snprintf(path, sizeof(path), "%s/avail_operations", c);
	kd_read(path, avail, sizeof(avail));	/* empty if unreadable: then no ops */
	snprintf(ops, len, "%s", strstr(avail, "vaddr") ? "vaddr" : "paddr");
	snprintf(path, sizeof(path), "%s/operations", c);
	if ((want_vaddr && strcmp(ops, "vaddr")) || !strstr(avail, ops) || kd_put(path, "%s", ops))
		goto fail;
	snprintf(path, sizeof(path), "%s/targets/nr_targets", c);
	if (kd_put(path, "1"))
		goto fail;
	if (!strcmp(ops, "vaddr")) {
		snprintf(path, sizeof(path), "%s/targets/0/pid_target", c);
		if (kd_put(path, "%d", (int)pid))
			goto fail;
	}
	for (int i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "%s/monitoring_attrs/%s", c, attr_file[i]);
		if (kd_put(path, "%lu", attrs[i]))
			goto fail;
	}
	if (kd_put(KDAMOND "/0/state", "on"))
		goto fail;
	usleep(200000);
	kpid = kd_get_long(KDAMOND "/0/pid");
	if (kpid > 0)
		return kpid;
fail:
	kdamond_off();
	return -1;
}

#endif
