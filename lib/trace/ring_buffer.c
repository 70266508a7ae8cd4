// SPDX-License-Identifier: MIT
/*
 * The trace ring buffer: one ring of 4 KiB pages per CPU.
 *
 * The kernel's ring buffer relies on writers not being preempted between
 * reserve and commit.  Threads are preempted and migrate at any time, so
 * here a per-CPU buffer is multi-producer: a writer reserves space in the
 * CPU's current ("tail") page with one compare-and-swap on the page's write
 * offset, fills it, and commits by storing the event's header word last
 * (release).  Writers of the same CPU, a writer preempted by another thread,
 * a writer that migrated after picking its CPU, and a signal handler nested
 * in a writer all just reserve different ranges; none of them can corrupt
 * another's event.  Readers stop at the first event not yet committed.
 * Pages are reused without clearing them: each header carries the page's
 * generation, so a header left from an earlier use never reads as
 * committed.
 *
 * Moving to the next page is the slow path and takes the CPU's buffer lock,
 * a spinlock that readers also take while they copy events out.  In
 * overwrite mode (the default) a full ring drops its oldest page, counting
 * its unread events as overrun; if some writer is still filling that page
 * the new event is dropped instead and counted as commit overrun, which is
 * exactly when the kernel counts one.  With overwrite off, a full ring
 * refuses new events and counts them as dropped.  A thread that already
 * holds or is taking the lock (a signal handler interrupting a page move
 * or a read on the same thread) gives up the event rather than deadlock.
 *
 * Each page counts its committed bytes and events in one 64-bit word, so a
 * commit is one atomic add; the per-CPU totals are derived from the pages
 * when stats are read.  Page memory comes from uks kmalloc (4 KiB objects
 * are naturally aligned, so an event finds its page by masking).
 *
 * Each CPU's pages, read position and counters form a ring (struct rb_ring,
 * ring_buffer_impl.h) that the CPU points to; the snapshot swaps rings
 * between two buffers (ring_buffer_swap.c).
 *
 * Lock order: cpu_buffer->lock is a leaf (the swap takes two, in address
 * order).
 */
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uks/core.h>
#include <uks/slab.h>

#include "core/compiler.h"
#include "core/mem_avail.h"
#include "core/percpu.h"
#include "trace/origin.h"
#include "trace/ring_buffer_impl.h"

static __thread int rb_lock_depth __attribute__((tls_model("initial-exec")));

static bool rb_trylock(struct rb_cpu *c)
{
	return !__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE);
}

static void rb_spin(struct rb_cpu *c)
{
	unsigned int spins = 0;

	while (!rb_trylock(c)) {
		while (__atomic_load_n(&c->lock, __ATOMIC_RELAXED)) {
			if (++spins > 200)
				sched_yield();
			else
				cpu_relax();
		}
	}
}

/*
 * rb_lock_depth covers the whole time from the first attempt to take a lock
 * to the release of the last one: a signal handler landing between a
 * successful exchange and the mark (or between the mark's clearing and the
 * release) would otherwise spin forever on its own thread's lock.  While
 * this thread only waits for a lock, a nested handler gives up its event
 * too, as it would inside the lock.  The signal fences keep the compiler
 * from moving the mark across the lock word's accesses.
 */
static void rb_depth_enter(void)
{
	rb_lock_depth = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
}

static void rb_depth_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	rb_lock_depth = 0;
}

/* Returns false when this thread already holds a buffer lock (nesting). */
bool __uks_trace_rb_lock(struct rb_cpu *c)
{
	if (rb_lock_depth)
		return false;
	rb_depth_enter();
	rb_spin(c);
	return true;
}

void __uks_trace_rb_unlock(struct rb_cpu *c)
{
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
	rb_depth_leave();
}

/*
 * The locks of CPUs [@first, @end) of two buffers, @a's then @b's.  Only
 * the snapshot swap takes more than one, and its callers serialise swaps
 * between the same two buffers, so the order matters only among them.
 * With @try a busy lock makes it give up (a swap from a tracepoint hit
 * never waits); false too when this thread already holds a CPU lock.
 */
bool __uks_trace_rb_lock_pairs(struct uks_rb *a, struct uks_rb *b, unsigned int first,
			       unsigned int end, bool try)
{
	unsigned int n = 2 * (end - first), i;

	if (rb_lock_depth)
		return false;
	rb_depth_enter();
	for (i = 0; i < n; i++) {
		struct uks_rb *rb = i < n / 2 ? a : b;
		struct rb_cpu *c = &rb->cpus[first + i % (n / 2)];

		if (!try)
			rb_spin(c);
		else if (!rb_trylock(c))
			break;
	}
	if (i < n) {
		while (i--)
			__atomic_store_n(&(i < n / 2 ? a : b)->cpus[first + i % (n / 2)].lock, 0,
					 __ATOMIC_RELEASE);
		rb_depth_leave();
		return false;
	}
	return true;
}

void __uks_trace_rb_unlock_pairs(struct uks_rb *a, struct uks_rb *b, unsigned int first,
				 unsigned int end)
{
	for (unsigned int i = first; i < end; i++) {
		__atomic_store_n(&a->cpus[i].lock, 0, __ATOMIC_RELEASE);
		__atomic_store_n(&b->cpus[i].lock, 0, __ATOMIC_RELEASE);
	}
	rb_depth_leave();
}

#define rb_lock		__uks_trace_rb_lock
#define rb_unlock	__uks_trace_rb_unlock

static void page_reset(struct rb_page *pg)
{
	__atomic_store_n(&pg->gen, pg->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->committed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->write, 0, __ATOMIC_RELEASE);
}

void __uks_trace_rb_ring_free(struct rb_ring *ring)
{
	if (!ring)
		return;
	for (unsigned int i = 0; ring->pages && i < ring->nr_pages; i++)
		uks_kfree(ring->pages[i]);
	uks_kfree(ring->pages);
	uks_kfree(ring);
}

struct rb_ring *__uks_trace_rb_ring_alloc(unsigned int cpu, unsigned int nr)
{
	struct rb_ring *ring = uks_kzalloc(sizeof(*ring));

	if (!ring)
		return NULL;
	ring->pages = uks_kcalloc(nr, sizeof(*ring->pages));
	if (!ring->pages) {
		uks_kfree(ring);
		return NULL;
	}
	for (; ring->nr_pages < nr; ring->nr_pages++) {
		struct rb_page *pg = uks_kmalloc(UKS_RB_PAGE_SIZE);

		if (!pg) {
			__uks_trace_rb_ring_free(ring);
			return NULL;
		}
		/* Cleared once: no stale header may carry the first generation. */
		memset(pg, 0, UKS_RB_PAGE_SIZE);
		pg->cpu = cpu;
		page_reset(pg);
		ring->pages[ring->nr_pages] = pg;
	}
	return ring;
}

/* The kernel keeps at least two pages per CPU; we want one spare too. */
unsigned int __uks_trace_rb_pages_for(size_t bytes)
{
	size_t n = bytes / UKS_RB_PAGE_SIZE + !!(bytes % UKS_RB_PAGE_SIZE);

	return n < 3 ? 3 : n > UINT_MAX / 2 ? 0 : (unsigned int)n;	/* 0: impossible */
}

/**
 * __uks_trace_rb_alloc - allocate a ring buffer
 * @nr_cpus:	number of per-CPU buffers
 * @bytes_per_cpu: size of each (rounded up to whole pages, at least 3)
 *
 * Returns the buffer (recording, overwrite mode, local clock) or NULL.
 */
struct uks_rb *__uks_trace_rb_alloc(unsigned int nr_cpus, size_t bytes_per_cpu)
{
	struct uks_rb *rb = nr_cpus ? uks_kzalloc(sizeof(*rb)) : NULL;

	if (!rb)
		return NULL;
	rb->cpus = uks_kmalloc_aligned(nr_cpus * sizeof(*rb->cpus), UKS_CACHELINE);
	if (rb->cpus)
		memset(rb->cpus, 0, nr_cpus * sizeof(*rb->cpus));
	rb->nr_cpus = nr_cpus;
	rb->overwrite = true;
	rb->recording = true;
	if (!rb->cpus || __uks_trace_rb_resize(rb, -1, bytes_per_cpu)) {
		__uks_trace_rb_free(rb);
		return NULL;
	}
	rb->time_start = __uks_trace_clock_read(rb->clock, &rb->counter);
	return rb;
}

void __uks_trace_rb_free(struct uks_rb *rb)
{
	if (!rb)
		return;
	for (unsigned int i = 0; rb->cpus && i < rb->nr_cpus; i++)
		__uks_trace_rb_ring_free(rb->cpus[i].ring);
	uks_kfree(rb->cpus);
	uks_kfree(rb);
}

/* Could __uks_trace_rb_resize() get its memory?  See __uks_mem_may_allocate(). */
int __uks_trace_rb_resize_check(const struct uks_rb *rb, int cpu, size_t bytes_per_cpu)
{
	size_t nr = __uks_trace_rb_pages_for(bytes_per_cpu), cpus = cpu < 0 ? rb->nr_cpus : 1;

	if (cpu >= 0 && (unsigned int)cpu >= rb->nr_cpus)
		return -EINVAL;
	if (!nr)
		return -ENOMEM;
	return __uks_mem_may_allocate_array(cpus * nr, UKS_RB_PAGE_SIZE + sizeof(struct rb_page *));
}

/*
 * Resizing replaces whole rings; callers make sure no writer is attached
 * (the trace layer detaches its probes first), as the kernel does by
 * disabling recording and synchronizing.  Like the kernel's, it checks the
 * memory first and allocates every new ring before touching an old one, so
 * a refused or failed resize leaves each CPU's pages and events as they were.
 */
int __uks_trace_rb_resize(struct uks_rb *rb, int cpu, size_t bytes_per_cpu)
{
	unsigned int first = cpu < 0 ? 0 : (unsigned int)cpu;
	unsigned int end = cpu < 0 ? rb->nr_cpus : first + 1;
	unsigned int nr = __uks_trace_rb_pages_for(bytes_per_cpu), i;
	struct rb_ring **fresh;
	int ret = __uks_trace_rb_resize_check(rb, cpu, bytes_per_cpu);

	if (ret)
		return ret;
	fresh = uks_kcalloc(end - first, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	for (i = first; i < end; i++) {
		fresh[i - first] = __uks_trace_rb_ring_alloc(i, nr);
		if (!fresh[i - first]) {
			while (i-- > first)
				__uks_trace_rb_ring_free(fresh[i - first]);
			uks_kfree(fresh);
			return -ENOMEM;
		}
	}
	for (i = first; i < end; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		struct rb_ring *old;

		rb_lock(c);
		old = c->ring;
		__atomic_store_n(&c->ring, fresh[i - first], __ATOMIC_RELEASE);
		rb_unlock(c);
		__uks_trace_rb_ring_free(old);
	}
	uks_kfree(fresh);
	return 0;
}

/* The number of pages of @cpu's ring (0 if no such CPU). */
unsigned int __uks_trace_rb_nr_pages(struct uks_rb *rb, unsigned int cpu)
{
	unsigned int nr = 0;

	if (cpu < rb->nr_cpus && rb_lock(&rb->cpus[cpu])) {
		nr = rb->cpus[cpu].ring->nr_pages;
		rb_unlock(&rb->cpus[cpu]);
	}
	return nr;
}

/** __uks_trace_rb_record_cpu - let @cpu record or not (tracing_cpumask) */
void __uks_trace_rb_record_cpu(struct uks_rb *rb, unsigned int cpu, bool on)
{
	if (cpu < rb->nr_cpus)
		__atomic_store_n(&rb->cpus[cpu].record_disabled, !on, __ATOMIC_RELEASE);
}

uint64_t __uks_trace_rb_time_start(const struct uks_rb *rb) { return READ_ONCE(rb->time_start); }
unsigned int __uks_trace_rb_nr_cpus(const struct uks_rb *rb) { return rb->nr_cpus; }
enum uks_trace_clock __uks_trace_rb_clock(const struct uks_rb *rb) { return rb->clock; }

void __uks_trace_rb_set_overwrite(struct uks_rb *rb, bool overwrite)
{
	WRITE_ONCE(rb->overwrite, overwrite);
}

void __uks_trace_rb_set_clock(struct uks_rb *rb, enum uks_trace_clock clock)
{
	WRITE_ONCE(rb->clock, clock);
}

void __uks_trace_rb_record_on(struct uks_rb *rb, bool on)
{
	__atomic_store_n(&rb->recording, on, __ATOMIC_RELEASE);
}

bool __uks_trace_rb_recording(const struct uks_rb *rb)
{
	return __atomic_load_n(&rb->recording, __ATOMIC_ACQUIRE);
}

size_t __uks_trace_rb_max_event(void) { return RB_PAGE_DATA - sizeof(struct rb_event_hdr); }

/*
 * Make the page after @tail of @r the write page.  Returns 0 (retry the
 * reservation) or -ENOSPC (the event is lost and has been counted).
 */
static int rb_move_tail(struct uks_rb *rb, struct rb_cpu *c, struct rb_ring *r, unsigned int tail)
{
	unsigned int next;
	struct rb_page *pg;

	if (!rb_lock(c)) {
		__atomic_add_fetch(&r->commit_overrun, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	/*
	 * Another writer moved it, the ring was swapped out (the snapshot)
	 * while we were reserving in it, or (a writer preempted across a whole
	 * lap of the ring) the page was reused and is the open tail page again.
	 */
	if (c->ring != r || __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) != tail ||
	    !(__atomic_load_n(&r->pages[tail]->write, __ATOMIC_ACQUIRE) & RB_PAGE_CLOSED))
		goto out;
	next = (tail + 1) % r->nr_pages;
	if (next == r->head) {
		pg = r->pages[next];
		if (!READ_ONCE(rb->overwrite)) {
			__atomic_add_fetch(&r->dropped, 1, __ATOMIC_RELAXED);
			rb_unlock(c);
			return -ENOSPC;
		}
		if (!rb_page_complete(pg)) {
			__atomic_add_fetch(&r->commit_overrun, 1, __ATOMIC_RELAXED);
			rb_unlock(c);
			return -ENOSPC;
		}
		r->overrun += rb_page_events(pg) - r->read_events;
		r->read_total += r->read_events;
		r->retired_written += rb_page_events(pg);
		r->head = (next + 1) % r->nr_pages;
		r->read = r->read_events = 0;
	}
	page_reset(r->pages[next]);
	__atomic_store_n(&r->tail, next, __ATOMIC_RELEASE);
out:
	rb_unlock(c);
	return 0;
}

static void *rb_reserve(struct uks_rb *rb, size_t len, const uint64_t *ts, unsigned int *cpu_out)
{
	uint32_t total = ALIGN_UP((uint32_t)(sizeof(struct rb_event_hdr) + len), 8u);
	struct rb_event_hdr *hdr;
	struct rb_page *pg;
	struct rb_cpu *c;
	struct rb_ring *r;
	uint32_t w;
	int cpu;

	if (unlikely(!__atomic_load_n(&rb->recording, __ATOMIC_RELAXED)))
		return NULL;
	if (unlikely(len > __uks_trace_rb_max_event()))
		return NULL;
	cpu = unlikely(__uks_trace_origin_cpu1) ? (int)__uks_trace_origin_cpu1 - 1 : uks_this_cpu();
	if (unlikely(cpu < 0 || (unsigned int)cpu >= rb->nr_cpus))
		cpu = 0;
	c = &rb->cpus[cpu];
	/* Not in tracing_cpumask: dropped and counted nowhere, as the kernel's. */
	if (unlikely(__atomic_load_n(&c->record_disabled, __ATOMIC_RELAXED)))
		return NULL;
	for (;;) {
		unsigned int tail;

		/* One ring per attempt: a swap between loads cannot mix two. */
		r = __atomic_load_n(&c->ring, __ATOMIC_ACQUIRE);
		tail = __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE);
		pg = r->pages[tail];
		w = __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE);
		if (likely(!(w & RB_PAGE_CLOSED))) {
			if (likely(w + total <= RB_PAGE_DATA)) {
				if (__atomic_compare_exchange_n(&pg->write, &w, w + total, false,
								__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
					break;
				continue;
			}
			/* Doesn't fit: close the page; whoever wins, move on. */
			__atomic_compare_exchange_n(&pg->write, &w, w | RB_PAGE_CLOSED, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			continue;
		}
		if (rb_move_tail(rb, c, r, tail))
			return NULL;
	}
	hdr = (struct rb_event_hdr *)(pg->data + w);
	__atomic_store_n(&hdr->state, (uint64_t)__atomic_load_n(&pg->gen, __ATOMIC_RELAXED) << 32 |
			 total, __ATOMIC_RELAXED);
	hdr->ts = ts ? *ts : __uks_trace_clock_read(rb->clock, &rb->counter);
	*cpu_out = (unsigned int)cpu;
	return hdr + 1;
}

/**
 * __uks_trace_rb_reserve - reserve space for an event on this CPU
 * @rb:		the buffer
 * @len:	payload bytes
 * @cpu_out:	set to the CPU whose buffer was used
 *
 * The event is stamped with the buffer's clock.  Returns the payload to
 * fill, or NULL (recording off, too big, full with overwrite off, oldest
 * page busy, or nested in this thread's buffer lock).
 */
void *__uks_trace_rb_reserve(struct uks_rb *rb, size_t len, unsigned int *cpu_out)
{
	return rb_reserve(rb, len, NULL, cpu_out);
}

/**
 * __uks_trace_rb_reserve_at - __uks_trace_rb_reserve() with a timestamp read by the caller
 * @ts:		a reading of this buffer's clock (__uks_trace_rb_now())
 *
 * Lets the records of one tracepoint hit share one clock reading.
 */
void *__uks_trace_rb_reserve_at(struct uks_rb *rb, size_t len, uint64_t ts, unsigned int *cpu_out)
{
	return rb_reserve(rb, len, &ts, cpu_out);
}

/** __uks_trace_rb_now - read the buffer's trace clock */
uint64_t __uks_trace_rb_now(struct uks_rb *rb)
{
	return __uks_trace_clock_read(READ_ONCE(rb->clock), &rb->counter);
}

static void rb_wake(struct uks_rb *rb)
{
	if (unlikely(__atomic_load_n(&rb->waiters, __ATOMIC_SEQ_CST)))
		__uks_trace_rb_wake_all(rb);
}

static void rb_finish(struct uks_rb *rb, void *data, uint32_t flags)
{
	struct rb_event_hdr *hdr = (struct rb_event_hdr *)data - 1;
	struct rb_page *pg = rb_page_of(hdr);
	uint64_t state = __atomic_load_n(&hdr->state, __ATOMIC_RELAXED);
	uint32_t total = rb_ev_len(state);

	__atomic_store_n(&hdr->state, state | RB_EV_VALID | flags, __ATOMIC_RELEASE);
	__atomic_add_fetch(&pg->committed, total | (uint64_t)!flags << 32, __ATOMIC_RELEASE);
	if (!flags)
		rb_wake(rb);
}

unsigned int __uks_trace_rb_event_cpu(const void *data)
{
	return rb_page_of(data)->cpu;
}

/** __uks_trace_rb_commit - publish a reserved event */
void __uks_trace_rb_commit(struct uks_rb *rb, void *data)
{
	rb_finish(rb, data, 0);
}

/** __uks_trace_rb_discard - give a reserved event back (filtered out); readers skip it */
void __uks_trace_rb_discard(struct uks_rb *rb, void *data)
{
	rb_finish(rb, data, RB_EV_DISCARD);
}

/*
 * Find the oldest committed event of @r under its CPU's lock, skipping
 * discarded ones and finished pages.  Returns its header or NULL.
 */
struct rb_event_hdr *__uks_trace_rb_oldest(struct rb_ring *r)
{
	for (;;) {
		struct rb_page *pg = r->pages[r->head];
		uint32_t end = rb_page_end(pg);

		while (r->read < end) {
			struct rb_event_hdr *hdr = (struct rb_event_hdr *)(pg->data + r->read);
			uint64_t state = rb_ev_committed(pg, hdr);

			if (!state)
				return NULL;	/* reserved, not committed yet */
			if (!(state & RB_EV_DISCARD))
				return hdr;
			r->read += rb_ev_len(state);
		}
		if (r->head == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE) || !rb_page_complete(pg))
			return NULL;
		r->read_total += r->read_events;
		r->retired_written += rb_page_events(pg);
		r->head = (r->head + 1) % r->nr_pages;
		r->read = r->read_events = 0;
	}
}

#define rb_oldest	__uks_trace_rb_oldest

static int rb_copy_oldest(struct uks_rb *rb, unsigned int cpu, void *buf, size_t cap,
			  uint64_t *ts, bool consume)
{
	struct rb_cpu *c;
	struct rb_event_hdr *hdr;
	int len = 0;

	if (cpu >= rb->nr_cpus)
		return -EINVAL;
	c = &rb->cpus[cpu];
	if (!rb_lock(c))
		return -EDEADLK;
	hdr = rb_oldest(c->ring);
	if (hdr) {
		len = (int)(rb_ev_len(hdr->state) - sizeof(*hdr));
		if ((size_t)len > cap) {
			len = -ENOSPC;
		} else {
			memcpy(buf, hdr + 1, len);
			if (ts)
				*ts = hdr->ts;
			if (consume) {
				c->ring->read += rb_ev_len(hdr->state);
				c->ring->read_events++;
			}
		}
	}
	rb_unlock(c);
	return len;
}

/** __uks_trace_rb_peek - copy the oldest unread event of @cpu; see ring_buffer.h */
int __uks_trace_rb_peek(struct uks_rb *rb, unsigned int cpu, void *buf, size_t cap, uint64_t *ts)
{
	return rb_copy_oldest(rb, cpu, buf, cap, ts, false);
}

/** __uks_trace_rb_consume - copy and remove the oldest unread event of @cpu */
int __uks_trace_rb_consume(struct uks_rb *rb, unsigned int cpu, void *buf, size_t cap, uint64_t *ts)
{
	return rb_copy_oldest(rb, cpu, buf, cap, ts, true);
}

bool __uks_trace_rb_empty(struct uks_rb *rb)
{
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		bool found;

		if (!rb_lock(c))
			return false;
		found = rb_oldest(c->ring) != NULL;
		rb_unlock(c);
		if (found)
			return false;
	}
	return true;
}

uint32_t __uks_trace_rb_wait_seq(struct uks_rb *rb)
{
	return __atomic_load_n(&rb->wake_seq, __ATOMIC_ACQUIRE);
}

/**
 * __uks_trace_rb_wait - sleep until an event is committed
 * @rb:		the buffer
 * @seq:	__uks_trace_rb_wait_seq() read before finding the buffer empty
 * @timeout_ms: -1 for no timeout
 *
 * Writers only pay for the wakeup when a reader is registered as waiting.
 * Returns 0, -ETIMEDOUT or -EINTR.
 */
int __uks_trace_rb_wait(struct uks_rb *rb, uint32_t seq, int timeout_ms)
{
	struct timespec ts, *tsp = NULL;
	long ret;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	__atomic_add_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
	/* An event committed between the caller's check and here: don't sleep. */
	if (!__uks_trace_rb_empty(rb) || __atomic_load_n(&rb->wake_seq, __ATOMIC_SEQ_CST) != seq) {
		__atomic_sub_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
		return 0;
	}
	ret = syscall(SYS_futex, &rb->wake_seq, FUTEX_WAIT_PRIVATE, seq, tsp, NULL, 0);
	__atomic_sub_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
	if (ret < 0 && errno == ETIMEDOUT)
		return -ETIMEDOUT;
	if (ret < 0 && errno == EINTR)
		return -EINTR;
	return 0;
}

void __uks_trace_rb_wake_all(struct uks_rb *rb)
{
	__atomic_add_fetch(&rb->wake_seq, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &rb->wake_seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

/* ---------------------------------------------------------------- stats */

void __uks_trace_rb_stats(struct uks_rb *rb, unsigned int cpu, struct uks_rb_stats *st)
{
	struct rb_event_hdr *oldest;
	uint64_t live = 0, bytes = 0;
	unsigned int page;
	struct rb_ring *r;
	struct rb_cpu *c;

	memset(st, 0, sizeof(*st));
	if (cpu >= rb->nr_cpus || !rb_lock(&rb->cpus[cpu]))
		return;
	c = &rb->cpus[cpu];
	r = c->ring;
	oldest = rb_oldest(r);
	st->oldest_ts = oldest ? oldest->ts : 0;
	for (page = r->head;; page = (page + 1) % r->nr_pages) {
		uint64_t committed = __atomic_load_n(&r->pages[page]->committed, __ATOMIC_ACQUIRE);

		live += committed >> 32;
		bytes += (uint32_t)committed;
		if (page == r->tail)
			break;
	}
	st->written = r->retired_written + live;
	st->overrun = r->overrun;
	st->read = r->read_total + r->read_events;
	st->entries = st->written - st->overrun - st->read;
	st->bytes = bytes - r->read;
	st->commit_overrun = __atomic_load_n(&r->commit_overrun, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&r->dropped, __ATOMIC_RELAXED);
	rb_unlock(c);
}

/* Drop every unread event of @r and zero its counters, under its CPU's lock. */
void __uks_trace_rb_ring_reset(struct rb_ring *r)
{
	struct rb_event_hdr *hdr;
	uint64_t live = 0;

	while ((hdr = rb_oldest(r))) {
		r->read += rb_ev_len(hdr->state);
		r->read_events++;
	}
	/*
	 * The kernel zeroes the counters.  Ours are derived from the live
	 * pages, so offset them (unsigned arithmetic wraps).
	 */
	for (unsigned int p = r->head;; p = (p + 1) % r->nr_pages) {
		live += rb_page_events(r->pages[p]);
		if (p == r->tail)
			break;
	}
	r->retired_written = -live;
	r->read_total = -(uint64_t)r->read_events;
	r->overrun = r->raw_overrun = 0;
	__atomic_store_n(&r->commit_overrun, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&r->dropped, 0, __ATOMIC_RELAXED);
}

/**
 * __uks_trace_rb_reset - drop every unread event (echo > trace)
 * @cpu:	one CPU, or -1 for all
 *
 * Events are marked read, not erased, so a writer inside a page is never
 * disturbed.  Afterwards every counter reads 0, as in the kernel.
 */
void __uks_trace_rb_reset_cpu(struct uks_rb *rb, int cpu)
{
	if (cpu < 0)
		WRITE_ONCE(rb->time_start, __uks_trace_clock_read(rb->clock, &rb->counter));
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *c = &rb->cpus[i];

		if ((cpu >= 0 && i != (unsigned int)cpu) || !rb_lock(c))
			continue;
		__uks_trace_rb_ring_reset(c->ring);
		rb_unlock(c);
	}
}

void __uks_trace_rb_reset(struct uks_rb *rb)
{
	__uks_trace_rb_reset_cpu(rb, -1);
}
