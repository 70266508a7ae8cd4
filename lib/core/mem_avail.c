// SPDX-License-Identifier: MIT
/*
 * Refusing a size before allocating it.
 *
 * A number a user writes into a file (buffer_size_kb, a per-CPU buffer
 * size, saved_cmdlines_size, DAMON's min/max_nr_regions) can ask for more
 * memory than the machine has.  Allocating it page by page until malloc
 * fails never ends well in user space: with overcommit the process grows
 * until the OOM killer picks it (or a neighbour), and under an rlimit it
 * fails only after using all it may.  The kernel's ring buffer asks
 * si_mem_available() first and fails with -ENOMEM before taking a page;
 * this is the same test for a process:
 *
 *  - MemAvailable of /proc/meminfo, the kernel's own si_mem_available()
 *    estimate of what can be allocated without swapping;
 *  - RLIMIT_AS against VmSize and RLIMIT_DATA against VmData of
 *    /proc/self/status, what the kernel's mmap() and brk() would refuse.
 *
 * It is an estimate taken without a lock, as the kernel's is: it turns
 * away requests that cannot succeed, and callers still handle a failed
 * allocation (allocating the new memory before freeing the old, so a
 * failure leaves the old state in place).  Where /proc cannot be read the
 * corresponding test is skipped rather than refusing everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core/mem_avail.h"

/*
 * The "Key:   N kB" field of a /proc file, in bytes.  Both files are a few
 * KiB; the fields read here come in their first 4 KiB.
 */
static bool proc_kb_field(const char *path, const char *key, uint64_t *bytes)
{
	char buf[4096], *p;
	size_t klen = strlen(key);
	uint64_t v = 0;
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	for (p = buf; strncmp(p, key, klen) || p[klen] != ':'; p++) {
		p = strchr(p, '\n');
		if (!p)
			return false;
	}
	p += klen + 1;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p < '0' || *p > '9')
		return false;
	for (; *p >= '0' && *p <= '9'; p++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *p - '0', &v))
			return false;
	*bytes = v > UINT64_MAX / 1024 ? UINT64_MAX : v * 1024;
	return true;
}

/* Would @used + @bytes pass the soft limit @res? */
static bool over_limit(int res, const char *field, size_t bytes)
{
	struct rlimit rl;
	uint64_t used;

	if (getrlimit(res, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return false;
	if ((uint64_t)bytes > (uint64_t)rl.rlim_cur)
		return true;
	if (!proc_kb_field("/proc/self/status", field, &used))
		return false;
	return used > (uint64_t)rl.rlim_cur - bytes;
}

/**
 * __uks_mem_may_allocate - may this process allocate @bytes more?
 * @bytes:	the size about to be allocated, all of it (every CPU's pages,
 *		every region), before any of it is
 *
 * Compares @bytes with MemAvailable (/proc/meminfo) and, when they are
 * finite, with what RLIMIT_AS and RLIMIT_DATA leave above the process's
 * VmSize and VmData.  Reads two small /proc files: for requests a user
 * makes, not for hot paths.
 *
 * Return: 0, or -ENOMEM when the allocation cannot succeed (or would
 * leave nothing for anyone else).
 */
int __uks_mem_may_allocate(size_t bytes)
{
	uint64_t avail;

	if (!bytes)
		return 0;
	if (proc_kb_field("/proc/meminfo", "MemAvailable", &avail) && (uint64_t)bytes > avail)
		return -ENOMEM;
	if (over_limit(RLIMIT_AS, "VmSize", bytes) || over_limit(RLIMIT_DATA, "VmData", bytes))
		return -ENOMEM;
	return 0;
}
