// SPDX-License-Identifier: MIT
/*
 * Readers of one CPU: taking many events under one lock (the page
 * writer of trace_pipe_raw) and waiting for that CPU's events only.
 * Built on the ring's internals (ring_buffer_impl.h).
 */
#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "trace/ring_buffer_impl.h"

/**
 * __uks_trace_rb_consume_batch - hand the oldest events of @cpu to @take
 * @take:	gets each event in buffer order; false leaves it unread and stops
 * @lost:	events overwritten since the last batch read of this CPU
 *
 * Returns the number of events consumed or -errno.
 */
int __uks_trace_rb_consume_batch(struct uks_rb *rb, unsigned int cpu, uks_rb_take_fn take,
				 void *arg, uint64_t *lost)
{
	struct rb_event_hdr *hdr;
	struct rb_ring *r;
	struct rb_cpu *c;
	int n = 0;

	if (cpu >= rb->nr_cpus)
		return -EINVAL;
	c = &rb->cpus[cpu];
	if (!__uks_trace_rb_lock(c))
		return -EDEADLK;
	r = c->ring;
	while ((hdr = __uks_trace_rb_oldest(r)) &&
	       take(arg, hdr->ts, hdr + 1, rb_ev_len(hdr->state) - sizeof(*hdr))) {
		r->read += rb_ev_len(hdr->state);
		r->read_events++;
		n++;
	}
	*lost = r->overrun - r->raw_overrun;
	r->raw_overrun = r->overrun;
	__uks_trace_rb_unlock(c);
	return n;
}

/* The CPU's buffer has an event (not consumed, not discarded). */
static bool cpu_has_event(struct uks_rb *rb, unsigned int cpu)
{
	struct rb_cpu *c = &rb->cpus[cpu];
	bool found;

	if (!__uks_trace_rb_lock(c))
		return true;
	found = __uks_trace_rb_oldest(c->ring) != NULL;
	__uks_trace_rb_unlock(c);
	return found;
}

/**
 * __uks_trace_rb_wait_cpu - __uks_trace_rb_wait() for a reader of one CPU (@cpu >= 0)
 *
 * Events on other CPUs do not end the wait early, so a reader of an empty
 * CPU sleeps while another CPU's events wait for their own reader.
 */
int __uks_trace_rb_wait_cpu(struct uks_rb *rb, int cpu, uint32_t seq, int timeout_ms)
{
	struct timespec ts = { timeout_ms / 1000, (long)(timeout_ms % 1000) * 1000000 };
	long ret;

	if (cpu < 0 || (unsigned int)cpu >= rb->nr_cpus)
		return __uks_trace_rb_wait(rb, seq, timeout_ms);
	__atomic_add_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
	/* An event committed between the caller's check and here: don't sleep. */
	if (cpu_has_event(rb, (unsigned int)cpu) ||
	    __atomic_load_n(&rb->wake_seq, __ATOMIC_SEQ_CST) != seq) {
		__atomic_sub_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	ret = syscall(SYS_futex, &rb->wake_seq, FUTEX_WAIT_PRIVATE, seq,
		      timeout_ms >= 0 ? &ts : NULL, NULL, 0);
	__atomic_sub_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
	if (ret < 0 && errno == ETIMEDOUT)
		return -ETIMEDOUT;
	if (ret < 0 && errno == EINTR)
		return -EINTR;
	return 0;
}
