// SPDX-License-Identifier: MIT
/*
 * Possible CPUs, the current CPU, and per-CPU data areas (see percpu.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/cpumask.h>
#include "core/percpu.h"

int __uks_rseq_usable;
ptrdiff_t __uks_rseq_off;

/*
 * Also called by the slab allocator's first use, which as a preloaded
 * malloc can come before this constructor has run.
 */
__attribute__((constructor)) void __uks_percpu_detect_rseq(void)
{
	/* Weak: absent with glibc < 2.35; size 0 when the tunable disabled it. */
	if (&__rseq_size && &__rseq_offset && __rseq_size >= 8) {
		__uks_rseq_off = __rseq_offset;
		__uks_rseq_usable = uks_rseq_area()->cpu_id >= 0;
	}
}

static unsigned int nr_cpu_ids;
static pthread_once_t nr_cpu_once = PTHREAD_ONCE_INIT;

/*
 * Read a sysfs CPU list ("0-3,8") into @mask: 0, or -1 if it cannot be
 * read.  No stdio, no sysconf(): this runs inside the first malloc() of a
 * preloaded allocator, and glibc's CPU counting pulls 64 KiB of its text
 * into every process that calls it.
 */
static int read_cpu_list(const char *path, struct uks_cpumask *mask)
{
	char text[4096];
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	if (n > 0) {
		text[n] = 0;
		/* Not strcspn(): its SSE4.2 table would fault in 64 KiB more of libc. */
		for (char *nl = text; *nl; nl++)
			if (*nl == '\n')
				*nl = 0;
		if (uks_cpumask_parse_list(mask, text, 0) == 0 && !uks_cpumask_empty(mask))
			ret = 0;
	}
	close(fd);
	return ret;
}

static void read_possible_cpus(void)
{
	struct uks_cpumask mask;
	int last = -1, cpu;

	if (read_cpu_list("/sys/devices/system/cpu/possible", &mask) == 0)
		uks_for_each_cpu(cpu, &mask)
			last = cpu;
	if (last < 0)
		last = (int)sysconf(_SC_NPROCESSORS_CONF) - 1;
	nr_cpu_ids = last < 0 ? 1 : (unsigned int)last + 1;
}

/**
 * __uks_nr_present_cpus - num_present_cpus(): the CPUs the machine has
 *
 * Return: their number, at least 1.
 */
unsigned int __uks_nr_present_cpus(void)
{
	struct uks_cpumask mask;
	long n;

	if (read_cpu_list("/sys/devices/system/cpu/present", &mask) == 0)
		return uks_cpumask_weight(&mask);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (unsigned int)n : 1;
}

/** uks_nr_cpu_ids - Return: highest possible CPU + 1 (sizes per-CPU data). */
UKS_EXPORT unsigned int uks_nr_cpu_ids(void)
{
	pthread_once(&nr_cpu_once, read_possible_cpus);
	return nr_cpu_ids;
}

int __uks_cpu_slow(void)
{
	int cpu = sched_getcpu();
	unsigned int nr = uks_nr_cpu_ids();

	/* sched_getcpu() only fails without the getcpu syscall; use CPU 0. */
	if (cpu < 0)
		return 0;
	return (unsigned int)cpu < nr ? cpu : (int)(cpu % nr);
}

/**
 * uks_cpu_current - the CPU the calling thread runs on
 *
 * Read from glibc's rseq area when registered, else from sched_getcpu().
 * Return: a CPU number below uks_nr_cpu_ids(); it may be stale at once.
 */
UKS_EXPORT int uks_cpu_current(void)
{
	return uks_this_cpu();
}

/** uks_rseq_active - Return: true if CPU ids come from the rseq area. */
UKS_EXPORT bool uks_rseq_active(void)
{
	return __uks_rseq_usable;
}

int __uks_percpu_alloc(struct uks_percpu *pcp, size_t size)
{
	unsigned int nr = uks_nr_cpu_ids();
	size_t stride = ALIGN_UP(size ? size : 1, (size_t)UKS_CACHELINE);
	void *base;

	if (stride < size || nr > SIZE_MAX / stride)
		return -ENOMEM;
	if (posix_memalign(&base, UKS_CACHELINE, stride * nr))
		return -ENOMEM;
	memset(base, 0, stride * nr);
	pcp->base = base;
	pcp->stride = stride;
	pcp->nr_cpus = nr;
	return 0;
}

void __uks_percpu_free(struct uks_percpu *pcp)
{
	free(pcp->base);
	pcp->base = NULL;
	pcp->nr_cpus = 0;
}
