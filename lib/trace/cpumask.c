// SPDX-License-Identifier: MIT
/*
 * tracing_cpumask: the CPUs an instance records on.  A CPU taken out of
 * the mask stops recording in the instance's live buffer, as the kernel's
 * ring_buffer_record_disable_cpu(): its events are refused at reserve and
 * counted nowhere.  The switch belongs to the CPU of the live buffer, not
 * to its pages, so a snapshot swap does not carry it into the spare (the
 * kernel once lost CPUs that way; snapshot1.tc checks it).
 */
#include <errno.h>
#include <string.h>

#include <uks/cpumask.h>
#include <uks/slab.h>

#include "core/bitmap.h"
#include "trace/snapshot.h"
#include "trace/trace.h"

/* The kernel's answer for a mask longer than it can allocate (KMALLOC_MAX_SIZE). */
#define CPUMASK_WRITE_MAX	(4u << 20)

/* Masks here have nr_cpu_ids bits, at most UKS_CPUMASK_MAX_CPUS. */
#define MASK_LONGS	BITS_TO_LONGS(UKS_CPUMASK_MAX_CPUS)

static unsigned int nr_cpus(struct uks_trace *tr)
{
	unsigned int nr = __uks_trace_rb_nr_cpus(tr->rb);

	return nr < UKS_CPUMASK_MAX_CPUS ? nr : UKS_CPUMASK_MAX_CPUS;
}

void __uks_trace_show_cpumask(struct uks_trace *tr, struct uks_seq *s)
{
	static const size_t size = UKS_CPUMASK_MAX_CPUS / 4 + UKS_CPUMASK_MAX_CPUS / 32 + 2;
	unsigned int nr = nr_cpus(tr);
	unsigned long mask[MASK_LONGS];
	char *buf = uks_kmalloc(size);

	if (!buf)
		return;
	/* kfs calls ->show under the tree's lock, event_mutex. */
	bitmap_zero(mask, nr);
	if (tr->tracing_cpumask)
		memcpy(mask, tr->tracing_cpumask, BITS_TO_LONGS(nr) * sizeof(long));
	else
		bitmap_set(mask, 0, nr);
	if (bitmap_print_hex(mask, nr, buf, size) >= 0)
		seq_printf(s, "%s\n", buf);
	uks_kfree(buf);
}

/**
 * __uks_trace_write_cpumask - tracing_cpumask's write
 *
 * Returns 0, or as the kernel: -EINVAL for an empty write or a character
 * that is no hex digit, -EOVERFLOW for a CPU past nr_cpu_ids or a chunk
 * too long (core/bitmap_hex.c), -ENOMEM.
 */
int __uks_trace_write_cpumask(struct uks_trace *tr, const char *buf, size_t len)
{
	unsigned int nr = nr_cpus(tr);
	unsigned long fresh[MASK_LONGS];
	int ret;

	if (!len || len > CPUMASK_WRITE_MAX)
		return -EINVAL;
	ret = bitmap_parse_hex(buf, len, fresh, nr);
	if (ret)
		return ret;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	if (!tr->tracing_cpumask) {
		tr->tracing_cpumask = uks_kmalloc(BITS_TO_LONGS(nr) * sizeof(unsigned long));
		if (!tr->tracing_cpumask) {
			pthread_mutex_unlock(&__uks_trace_event_mutex);
			return -ENOMEM;
		}
		bitmap_zero(tr->tracing_cpumask, nr);
		bitmap_set(tr->tracing_cpumask, 0, nr);
	}
	for (unsigned int cpu = 0; cpu < nr; cpu++) {
		bool on = test_bit(cpu, fresh);

		if (on != test_bit(cpu, tr->tracing_cpumask))
			__uks_trace_rb_record_cpu(tr->rb, cpu, on);
	}
	for (unsigned int i = 0; i < BITS_TO_LONGS(nr); i++)
		tr->tracing_cpumask[i] = fresh[i];
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return 0;
}
