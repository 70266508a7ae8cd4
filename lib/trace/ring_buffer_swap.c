// SPDX-License-Identifier: MIT
/*
 * Swapping rings between two buffers: the snapshot.
 *
 * The kernel's update_max_tr() swaps the trace array's buffer with its
 * spare, and ring_buffer_swap_cpu() one CPU's buffers; both can rely on
 * writers not being preempted between reserve and commit.  Here a writer
 * may be anywhere, so the swap exchanges each CPU's ring pointer under both
 * CPUs' locks and leaves writers alone:
 *
 *  - a writer loads its CPU's ring once per reservation attempt and
 *    reserves in that ring's tail page by compare-and-swap; if the ring was
 *    swapped away meanwhile, the event lands in the other buffer, complete
 *    (its commit only touches its own page);
 *  - moving to the next page happens under the CPU's lock and checks that
 *    the ring is still the CPU's, so a writer holding a swapped-out ring
 *    never moves that ring's tail: it retries on the CPU's current ring;
 *  - readers look at a CPU's ring only under its lock, so they see it
 *    before or after a swap, never both;
 *  - a ring stays allocated until its buffer is freed or resized, which
 *    the trace layer does only after a grace period (every writer that
 *    could have loaded the ring has committed).
 *
 * Each ring carries its own counters (entries, overrun, ...), which move
 * with it, as the kernel's per-CPU buffer statistics do.  The per-CPU
 * recording switch (tracing_cpumask) stays with the CPU of the live buffer.
 */
#include <errno.h>

#include <uks/slab.h>

#include "core/mem_avail.h"
#include "trace/ring_buffer_impl.h"

/* Pages @rb must gain to take @like's ring sizes, or -EDEADLK (nested in a CPU lock). */
static long pages_to_add(struct uks_rb *rb, struct uks_rb *like)
{
	long add = 0;

	if (rb->nr_cpus != like->nr_cpus)
		return -EINVAL;
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		unsigned int want = __uks_trace_rb_nr_pages(like, i);
		unsigned int have = __uks_trace_rb_nr_pages(rb, i);

		if (!want || !have)
			return -EDEADLK;
		if (want != have)
			add += want;
	}
	return add;
}

/**
 * __uks_trace_rb_resize_like_check - could @rb get @like's ring sizes?
 *
 * The kernel checks the memory of a snapshot buffer before it takes it;
 * see __uks_mem_may_allocate().  Returns 0, -ENOMEM, -EINVAL or -EDEADLK.
 */
int __uks_trace_rb_resize_like_check(struct uks_rb *rb, struct uks_rb *like)
{
	long add = pages_to_add(rb, like);

	if (add < 0)
		return (int)add;
	return add ? __uks_mem_may_allocate_array((size_t)add,
						   UKS_RB_PAGE_SIZE + sizeof(struct rb_page *)) : 0;
}

/**
 * __uks_trace_rb_resize_like - give @rb the ring sizes of @like
 *
 * CPUs whose rings already have the size keep their events.  Callers make
 * sure no writer is inside @rb's rings (__uks_trace_rb_resize()).  Returns
 * 0 or -errno, checked before any page is taken.
 */
int __uks_trace_rb_resize_like(struct uks_rb *rb, struct uks_rb *like)
{
	int ret = __uks_trace_rb_resize_like_check(rb, like);

	for (unsigned int i = 0; !ret && i < rb->nr_cpus; i++) {
		unsigned int want = __uks_trace_rb_nr_pages(like, i);

		if (want != __uks_trace_rb_nr_pages(rb, i))
			ret = __uks_trace_rb_resize(rb, (int)i, (size_t)want * UKS_RB_PAGE_SIZE);
	}
	return ret;
}

/**
 * __uks_trace_rb_swap - exchange the rings of @a and @b
 * @cpu:	one CPU, or -1 for every CPU at once
 * @try:	give up rather than wait for a CPU lock (from a tracepoint hit)
 *
 * Nothing is allocated or freed.  Returns 0, -EINVAL (the buffers differ in
 * CPUs, @cpu does not exist, or its rings differ in size, as
 * ring_buffer_swap_cpu() answers) or -EBUSY (a lock was busy with @try, or
 * this thread already holds a CPU lock: a signal handler nested in a page
 * move or a read).
 */
int __uks_trace_rb_swap(struct uks_rb *a, struct uks_rb *b, int cpu, bool try)
{
	unsigned int first = cpu < 0 ? 0 : (unsigned int)cpu;
	unsigned int end = cpu < 0 ? a->nr_cpus : first + 1;

	if (a->nr_cpus != b->nr_cpus || first >= a->nr_cpus)
		return -EINVAL;
	if (!__uks_trace_rb_lock_pairs(a, b, first, end, try))
		return -EBUSY;
	if (cpu >= 0 && a->cpus[cpu].ring->nr_pages != b->cpus[cpu].ring->nr_pages) {
		__uks_trace_rb_unlock_pairs(a, b, first, end);
		return -EINVAL;
	}
	for (unsigned int i = first; i < end; i++) {
		struct rb_ring *r = a->cpus[i].ring;

		__atomic_store_n(&a->cpus[i].ring, b->cpus[i].ring, __ATOMIC_RELEASE);
		__atomic_store_n(&b->cpus[i].ring, r, __ATOMIC_RELEASE);
	}
	__uks_trace_rb_unlock_pairs(a, b, first, end);
	return 0;
}
