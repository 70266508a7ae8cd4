/* SPDX-License-Identifier: MIT */
/*
 * Shared by the tests of sizes a user writes: the process's /proc numbers
 * (VmSize, VmData, VmHWM, MemAvailable) in bytes, and a soft RLIMIT_AS or
 * RLIMIT_DATA set to what the process uses now plus some headroom, so a
 * request that got past the memory check would fail at that limit instead
 * of taking the machine's memory.  The tests run in forked children: a
 * limit ends with its test.
 */
#ifndef UKS_TESTS_MEM_LIMIT_H
#define UKS_TESTS_MEM_LIMIT_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define MIB	(1ull << 20)

/* The "Key: N kB" field of @path in bytes, 0 if missing. */
static __attribute__((unused)) uint64_t proc_kb(const char *path, const char *key)
{
	char buf[8192], *p;
	size_t klen = strlen(key);
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	for (p = buf; p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ':')
			return strtoull(p + klen + 1, NULL, 10) * 1024;
	return 0;
}

static __attribute__((unused)) uint64_t self_kb(const char *key)
{
	return proc_kb("/proc/self/status", key);
}

/* Soft @res (RLIMIT_AS or RLIMIT_DATA) = the matching Vm field + @headroom. */
static __attribute__((unused)) int limit_to_now_plus(int res, uint64_t headroom)
{
	uint64_t used = self_kb(res == RLIMIT_AS ? "VmSize" : "VmData");
	struct rlimit rl;

	if (!used || getrlimit(res, &rl))
		return -1;
	rl.rlim_cur = used + headroom;
	return setrlimit(res, &rl);
}

/* Lift the soft limit back to the hard one. */
static __attribute__((unused)) int unlimit(int res)
{
	struct rlimit rl;

	if (getrlimit(res, &rl))
		return -1;
	rl.rlim_cur = rl.rlim_max;
	return setrlimit(res, &rl);
}

#endif
