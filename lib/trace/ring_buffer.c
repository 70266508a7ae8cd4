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
 * holds the lock (a signal handler interrupting a page move or a read on
 * the same thread) gives up the event rather than deadlock.
 *
 * Each page counts its committed bytes and events in one 64-bit word, so a
 * commit is one atomic add; the per-CPU totals are derived from the pages
 * when stats are read.  Page memory comes from uks kmalloc (4 KiB objects
 * are naturally aligned, so an event finds its page by masking).
 *
 * Lock order: cpu_buffer->lock is a leaf.
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
#include "trace/ring_buffer.h"

#define PAGE_CLOSED	0x80000000u	/* write offset: no more reservations */
#define EV_VALID	0x80000000u	/* header state: committed */
#define EV_DISCARD	0x40000000u	/* header state: committed, but not an event */
#define EV_LEN_MASK	0x0000ffffu

struct rb_page {
	uint32_t write;		/* reserved bytes | PAGE_CLOSED */
	uint32_t cpu;
	uint64_t committed;	/* committed bytes (low 32) | events (high 32) */
	uint32_t gen;		/* incarnation: bumped each time the page is reused */
	uint32_t pad0;
	uint64_t pad1;
	unsigned char data[];
};

#define PAGE_DATA	(UKS_RB_PAGE_SIZE - sizeof(struct rb_page))

/*
 * @state is gen << 32 | flags | length: the page's incarnation, so that a
 * header left over from an earlier use of the page never looks committed
 * (pages are reused without being cleared), and EV_VALID set last, by the
 * commit.  The length counts this header.
 */
struct rb_event_hdr {
	uint64_t state;
	uint64_t ts;
};

struct rb_cpu {
	int lock;
	unsigned int head;	/* oldest live page (reader side) */
	unsigned int tail;	/* page being written */
	uint32_t read;		/* read offset in the head page */
	uint32_t read_events;	/* events consumed from the head page */
	unsigned int nr_pages;
	struct rb_page **pages;
	/* under lock */
	uint64_t retired_written;	/* events of pages no longer live */
	uint64_t overrun;
	uint64_t read_total;
	uint64_t raw_overrun;		/* overrun at the last raw page read */
	/* atomics */
	uint64_t commit_overrun;
	uint64_t dropped;
} __cacheline_aligned;

struct uks_rb {
	unsigned int nr_cpus;
	bool overwrite;
	bool recording;
	enum uks_trace_clock clock;
	uint64_t counter;	/* the "counter" clock */
	uint64_t time_start;	/* clock reading at the last reset */
	uint32_t wake_seq;	/* futex word: bumped when a waiter is woken */
	int waiters;
	struct rb_cpu *cpus;
};

static __thread int rb_lock_depth __attribute__((tls_model("initial-exec")));

static bool rb_trylock(struct rb_cpu *c)
{
	return !__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE);
}

/* Returns false when this thread already holds a buffer lock (nesting). */
static bool rb_lock(struct rb_cpu *c)
{
	unsigned int spins = 0;

	if (rb_lock_depth)
		return false;
	while (!rb_trylock(c)) {
		while (__atomic_load_n(&c->lock, __ATOMIC_RELAXED)) {
			if (++spins > 200)
				sched_yield();
			else
				cpu_relax();
		}
	}
	rb_lock_depth = 1;
	return true;
}

static void rb_unlock(struct rb_cpu *c)
{
	rb_lock_depth = 0;
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
}

static struct rb_page *page_of(const void *p)
{
	return (struct rb_page *)((uintptr_t)p & ~(uintptr_t)(UKS_RB_PAGE_SIZE - 1));
}

static void page_reset(struct rb_page *pg)
{
	__atomic_store_n(&pg->gen, pg->gen + 1, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->committed, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&pg->write, 0, __ATOMIC_RELEASE);
}

static uint32_t ev_len(uint64_t state)
{
	return (uint32_t)state & EV_LEN_MASK;
}

/* The event's state if it was committed in @pg's current use, else 0. */
static uint64_t ev_committed(const struct rb_page *pg, const struct rb_event_hdr *hdr)
{
	uint64_t state = __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE);

	if ((uint32_t)(state >> 32) != __atomic_load_n(&pg->gen, __ATOMIC_RELAXED) ||
	    !(state & EV_VALID))
		return 0;
	return state;
}

static uint32_t page_end(const struct rb_page *pg)
{
	return __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE) & ~PAGE_CLOSED;
}

static unsigned int page_events(const struct rb_page *pg)
{
	return __atomic_load_n(&pg->committed, __ATOMIC_ACQUIRE) >> 32;
}

/* Closed and every reservation committed: no writer is inside. */
static bool page_complete(const struct rb_page *pg)
{
	uint32_t w = __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE);
	uint32_t done = (uint32_t)__atomic_load_n(&pg->committed, __ATOMIC_ACQUIRE);

	return (w & PAGE_CLOSED) && done == (w & ~PAGE_CLOSED);
}

static void pages_free(struct rb_page **pages, unsigned int nr)
{
	for (unsigned int i = 0; pages && i < nr; i++)
		uks_kfree(pages[i]);
	uks_kfree(pages);
}

static struct rb_page **pages_alloc(unsigned int cpu, unsigned int nr)
{
	struct rb_page **pages = uks_kcalloc(nr, sizeof(*pages));

	for (unsigned int i = 0; pages && i < nr; i++) {
		pages[i] = uks_kmalloc(UKS_RB_PAGE_SIZE);
		if (!pages[i]) {
			pages_free(pages, i);
			return NULL;
		}
		/* Cleared once: no stale header may carry the first generation. */
		memset(pages[i], 0, UKS_RB_PAGE_SIZE);
		pages[i]->cpu = cpu;
		page_reset(pages[i]);
	}
	return pages;
}

/* The kernel keeps at least two pages per CPU; we want one spare too. */
static unsigned int pages_for(size_t bytes)
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
		uks_kfree(rb->cpus);
		uks_kfree(rb);
		return NULL;
	}
	rb->time_start = __uks_trace_clock_read(rb->clock, &rb->counter);
	return rb;
}

void __uks_trace_rb_free(struct uks_rb *rb)
{
	if (!rb)
		return;
	for (unsigned int i = 0; i < rb->nr_cpus; i++)
		pages_free(rb->cpus[i].pages, rb->cpus[i].nr_pages);
	uks_kfree(rb->cpus);
	uks_kfree(rb);
}

/* Could __uks_trace_rb_resize() get its memory?  See __uks_mem_may_allocate(). */
int __uks_trace_rb_resize_check(const struct uks_rb *rb, int cpu, size_t bytes_per_cpu)
{
	size_t nr = pages_for(bytes_per_cpu), cpus = cpu < 0 ? rb->nr_cpus : 1;

	if (cpu >= 0 && (unsigned int)cpu >= rb->nr_cpus)
		return -EINVAL;
	if (!nr)
		return -ENOMEM;
	return __uks_mem_may_allocate_array(cpus * nr, UKS_RB_PAGE_SIZE + sizeof(struct rb_page *));
}

/*
 * Resizing swaps whole page arrays; callers make sure no writer is attached
 * (the trace layer detaches its probes first), as the kernel does by
 * disabling recording and synchronizing.  Like the kernel's, it checks the
 * memory first and allocates every new ring before touching an old one, so
 * a refused or failed resize leaves each CPU's pages and events as they were.
 */
int __uks_trace_rb_resize(struct uks_rb *rb, int cpu, size_t bytes_per_cpu)
{
	unsigned int first = cpu < 0 ? 0 : (unsigned int)cpu;
	unsigned int end = cpu < 0 ? rb->nr_cpus : first + 1, nr = pages_for(bytes_per_cpu), i;
	struct rb_page ***fresh;
	int ret = __uks_trace_rb_resize_check(rb, cpu, bytes_per_cpu);

	if (ret)
		return ret;
	fresh = uks_kcalloc(end - first, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	for (i = first; i < end; i++) {
		fresh[i - first] = pages_alloc(i, nr);
		if (!fresh[i - first]) {
			while (i-- > first)
				pages_free(fresh[i - first], nr);
			uks_kfree(fresh);
			return -ENOMEM;
		}
	}
	for (i = first; i < end; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		struct rb_page **old = c->pages;
		unsigned int old_nr = c->nr_pages;

		rb_lock(c);
		c->pages = fresh[i - first];
		c->nr_pages = nr;
		c->head = c->tail = 0;
		c->read = c->read_events = 0;
		c->retired_written = c->overrun = c->read_total = c->raw_overrun = 0;
		__atomic_store_n(&c->commit_overrun, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->dropped, 0, __ATOMIC_RELAXED);
		rb_unlock(c);
		pages_free(old, old_nr);
	}
	uks_kfree(fresh);
	return 0;
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

size_t __uks_trace_rb_max_event(void) { return PAGE_DATA - sizeof(struct rb_event_hdr); }

/*
 * Make the page after @tail the write page.  Returns 0 (retry the
 * reservation) or -ENOSPC (the event is lost and has been counted).
 */
static int rb_move_tail(struct uks_rb *rb, struct rb_cpu *c, unsigned int tail)
{
	unsigned int next;
	struct rb_page *pg;

	if (!rb_lock(c)) {
		__atomic_add_fetch(&c->commit_overrun, 1, __ATOMIC_RELAXED);
		return -ENOSPC;
	}
	/*
	 * Another writer moved it, or (a writer preempted across a whole lap of
	 * the ring) the page was reused and is the open tail page again.
	 */
	if (__atomic_load_n(&c->tail, __ATOMIC_ACQUIRE) != tail ||
	    !(__atomic_load_n(&c->pages[tail]->write, __ATOMIC_ACQUIRE) & PAGE_CLOSED))
		goto out;
	next = (tail + 1) % c->nr_pages;
	if (next == c->head) {
		pg = c->pages[next];
		if (!READ_ONCE(rb->overwrite)) {
			__atomic_add_fetch(&c->dropped, 1, __ATOMIC_RELAXED);
			rb_unlock(c);
			return -ENOSPC;
		}
		if (!page_complete(pg)) {
			__atomic_add_fetch(&c->commit_overrun, 1, __ATOMIC_RELAXED);
			rb_unlock(c);
			return -ENOSPC;
		}
		c->overrun += page_events(pg) - c->read_events;
		c->read_total += c->read_events;
		c->retired_written += page_events(pg);
		c->head = (next + 1) % c->nr_pages;
		c->read = c->read_events = 0;
	}
	page_reset(c->pages[next]);
	__atomic_store_n(&c->tail, next, __ATOMIC_RELEASE);
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
	uint32_t w;
	int cpu;

	if (unlikely(!__atomic_load_n(&rb->recording, __ATOMIC_RELAXED)))
		return NULL;
	if (unlikely(len > __uks_trace_rb_max_event()))
		return NULL;
	cpu = uks_this_cpu();
	if (unlikely(cpu < 0 || (unsigned int)cpu >= rb->nr_cpus))
		cpu = 0;
	c = &rb->cpus[cpu];
	for (;;) {
		unsigned int tail = __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE);

		pg = c->pages[tail];
		w = __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE);
		if (likely(!(w & PAGE_CLOSED))) {
			if (likely(w + total <= PAGE_DATA)) {
				if (__atomic_compare_exchange_n(&pg->write, &w, w + total, false,
								__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
					break;
				continue;
			}
			/* Doesn't fit: close the page; whoever wins, move on. */
			__atomic_compare_exchange_n(&pg->write, &w, w | PAGE_CLOSED, false,
						    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
			continue;
		}
		if (rb_move_tail(rb, c, tail))
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
	struct rb_page *pg = page_of(hdr);
	uint64_t state = __atomic_load_n(&hdr->state, __ATOMIC_RELAXED);
	uint32_t total = ev_len(state);

	__atomic_store_n(&hdr->state, state | EV_VALID | flags, __ATOMIC_RELEASE);
	__atomic_add_fetch(&pg->committed, total | (uint64_t)!flags << 32, __ATOMIC_RELEASE);
	if (!flags)
		rb_wake(rb);
}

unsigned int __uks_trace_rb_event_cpu(const void *data)
{
	return page_of(data)->cpu;
}

/** __uks_trace_rb_commit - publish a reserved event */
void __uks_trace_rb_commit(struct uks_rb *rb, void *data)
{
	rb_finish(rb, data, 0);
}

/** __uks_trace_rb_discard - give a reserved event back (filtered out); readers skip it */
void __uks_trace_rb_discard(struct uks_rb *rb, void *data)
{
	rb_finish(rb, data, EV_DISCARD);
}

/*
 * Find the oldest committed event of @c under its lock, skipping discarded
 * ones and finished pages.  Returns its header or NULL.
 */
static struct rb_event_hdr *rb_oldest(struct rb_cpu *c)
{
	for (;;) {
		struct rb_page *pg = c->pages[c->head];
		uint32_t end = page_end(pg);

		while (c->read < end) {
			struct rb_event_hdr *hdr = (struct rb_event_hdr *)(pg->data + c->read);
			uint64_t state = ev_committed(pg, hdr);

			if (!state)
				return NULL;	/* reserved, not committed yet */
			if (!(state & EV_DISCARD))
				return hdr;
			c->read += ev_len(state);
		}
		if (c->head == __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE) || !page_complete(pg))
			return NULL;
		c->read_total += c->read_events;
		c->retired_written += page_events(pg);
		c->head = (c->head + 1) % c->nr_pages;
		c->read = c->read_events = 0;
	}
}

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
	hdr = rb_oldest(c);
	if (hdr) {
		len = (int)(ev_len(hdr->state) - sizeof(*hdr));
		if ((size_t)len > cap) {
			len = -ENOSPC;
		} else {
			memcpy(buf, hdr + 1, len);
			if (ts)
				*ts = hdr->ts;
			if (consume) {
				c->read += ev_len(hdr->state);
				c->read_events++;
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

/**
 * __uks_trace_rb_consume_batch - hand the oldest events of @cpu to @take
 * @take:	gets each event in buffer order; false leaves it unread and stops
 * @lost:	events overwritten since the last batch read of this CPU
 *
 * For page readers (trace_pipe_raw), which take many events under one lock.
 * Returns the number of events consumed or -errno.
 */
int __uks_trace_rb_consume_batch(struct uks_rb *rb, unsigned int cpu, uks_rb_take_fn take,
				 void *arg, uint64_t *lost)
{
	struct rb_event_hdr *hdr;
	struct rb_cpu *c;
	int n = 0;

	if (cpu >= rb->nr_cpus)
		return -EINVAL;
	c = &rb->cpus[cpu];
	if (!rb_lock(c))
		return -EDEADLK;
	while ((hdr = rb_oldest(c)) &&
	       take(arg, hdr->ts, hdr + 1, ev_len(hdr->state) - sizeof(*hdr))) {
		c->read += ev_len(hdr->state);
		c->read_events++;
		n++;
	}
	*lost = c->overrun - c->raw_overrun;
	c->raw_overrun = c->overrun;
	rb_unlock(c);
	return n;
}

bool __uks_trace_rb_empty(struct uks_rb *rb)
{
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		bool found;

		if (!rb_lock(c))
			return false;
		found = rb_oldest(c) != NULL;
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
	return __uks_trace_rb_wait_cpu(rb, -1, seq, timeout_ms);
}

/* The CPU's buffer has an event (not consumed, not discarded). */
static bool rb_cpu_has_event(struct uks_rb *rb, unsigned int cpu)
{
	struct rb_cpu *c = &rb->cpus[cpu];
	bool found;

	if (!rb_lock(c))
		return true;
	found = rb_oldest(c) != NULL;
	rb_unlock(c);
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
	struct timespec ts, *tsp = NULL;
	long ret;

	if (timeout_ms >= 0) {
		ts.tv_sec = timeout_ms / 1000;
		ts.tv_nsec = (long)(timeout_ms % 1000) * 1000000;
		tsp = &ts;
	}
	__atomic_add_fetch(&rb->waiters, 1, __ATOMIC_SEQ_CST);
	/* An event committed between the caller's check and here: don't sleep. */
	if ((cpu < 0 ? !__uks_trace_rb_empty(rb) : rb_cpu_has_event(rb, (unsigned int)cpu)) ||
	    __atomic_load_n(&rb->wake_seq, __ATOMIC_SEQ_CST) != seq) {
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

/* ---------------------------------------------------------------- snapshot */

struct snap_cpu {
	unsigned char *buf;	/* copied events: struct rb_event_hdr + payload */
	size_t len;
	size_t pos;
};

struct uks_rb_snapshot {
	unsigned int nr_cpus;
	struct snap_cpu cpus[];
};

/* Copy every committed, unread, non-discarded event of @c. */
static int snap_cpu_copy(struct rb_cpu *c, struct snap_cpu *s)
{
	unsigned int page = c->head;
	uint32_t off = c->read;

	s->buf = uks_kmalloc((size_t)c->nr_pages * PAGE_DATA);
	if (!s->buf)
		return -ENOMEM;
	for (;;) {
		struct rb_page *pg = c->pages[page];
		uint32_t end = page_end(pg);
		bool stop = false;

		while (off < end) {
			struct rb_event_hdr *hdr = (struct rb_event_hdr *)(pg->data + off);
			uint64_t state = ev_committed(pg, hdr);

			if (!state) {
				stop = true;	/* later events may be ahead of this one */
				break;
			}
			if (!(state & EV_DISCARD)) {
				memcpy(s->buf + s->len, hdr, ev_len(state));
				s->len += ev_len(state);
			}
			off += ev_len(state);
		}
		if (stop || page == __atomic_load_n(&c->tail, __ATOMIC_ACQUIRE))
			break;
		page = (page + 1) % c->nr_pages;
		off = 0;
	}
	return 0;
}

/**
 * __uks_trace_rb_snapshot - copy all unread events for a non-consuming reader
 * Returns the snapshot or NULL (no memory, or called nested in a reader).
 */
struct uks_rb_snapshot *__uks_trace_rb_snapshot(struct uks_rb *rb)
{
	struct uks_rb_snapshot *snap;

	snap = uks_kzalloc(sizeof(*snap) + rb->nr_cpus * sizeof(snap->cpus[0]));
	if (!snap)
		return NULL;
	snap->nr_cpus = rb->nr_cpus;
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		int ret;

		if (!rb_lock(c)) {
			__uks_trace_rb_snapshot_free(snap);
			return NULL;
		}
		ret = snap_cpu_copy(c, &snap->cpus[i]);
		rb_unlock(c);
		if (ret) {
			__uks_trace_rb_snapshot_free(snap);
			return NULL;
		}
	}
	return snap;
}

bool __uks_trace_rb_snapshot_next(struct uks_rb_snapshot *snap, struct uks_rb_event *ev)
{
	struct rb_event_hdr *best = NULL;
	unsigned int best_cpu = 0;

	for (unsigned int i = 0; i < snap->nr_cpus; i++) {
		struct snap_cpu *s = &snap->cpus[i];
		struct rb_event_hdr *hdr;

		if (s->pos >= s->len)
			continue;
		hdr = (struct rb_event_hdr *)(s->buf + s->pos);
		if (!best || hdr->ts < best->ts) {
			best = hdr;
			best_cpu = i;
		}
	}
	if (!best)
		return false;
	snap->cpus[best_cpu].pos += ev_len(best->state);
	ev->ts = best->ts;
	ev->cpu = best_cpu;
	ev->len = ev_len(best->state) - sizeof(*best);
	ev->data = best + 1;
	return true;
}

void __uks_trace_rb_snapshot_free(struct uks_rb_snapshot *snap)
{
	if (!snap)
		return;
	for (unsigned int i = 0; i < snap->nr_cpus; i++)
		uks_kfree(snap->cpus[i].buf);
	uks_kfree(snap);
}

/* ---------------------------------------------------------------- stats */

void __uks_trace_rb_stats(struct uks_rb *rb, unsigned int cpu, struct uks_rb_stats *st)
{
	struct rb_cpu *c = &rb->cpus[cpu];
	uint64_t live = 0, bytes = 0;
	struct rb_event_hdr *oldest;
	unsigned int page;

	memset(st, 0, sizeof(*st));
	if (cpu >= rb->nr_cpus || !rb_lock(c))
		return;
	oldest = rb_oldest(c);
	st->oldest_ts = oldest ? oldest->ts : 0;
	for (page = c->head;; page = (page + 1) % c->nr_pages) {
		uint64_t committed = __atomic_load_n(&c->pages[page]->committed, __ATOMIC_ACQUIRE);

		live += committed >> 32;
		bytes += (uint32_t)committed;
		if (page == c->tail)
			break;
	}
	st->written = c->retired_written + live;
	st->overrun = c->overrun;
	st->read = c->read_total + c->read_events;
	st->entries = st->written - st->overrun - st->read;
	st->bytes = bytes - c->read;
	rb_unlock(c);
	st->commit_overrun = __atomic_load_n(&c->commit_overrun, __ATOMIC_RELAXED);
	st->dropped = __atomic_load_n(&c->dropped, __ATOMIC_RELAXED);
}

/**
 * __uks_trace_rb_reset - drop every unread event (echo > trace)
 *
 * Events are marked read, not erased, so a writer inside a page is never
 * disturbed.  Afterwards every counter reads 0, as in the kernel.
 */
void __uks_trace_rb_reset(struct uks_rb *rb)
{
	WRITE_ONCE(rb->time_start, __uks_trace_clock_read(rb->clock, &rb->counter));
	for (unsigned int i = 0; i < rb->nr_cpus; i++) {
		struct rb_cpu *c = &rb->cpus[i];
		struct rb_event_hdr *hdr;
		uint64_t live;

		if (!rb_lock(c))
			continue;
		while ((hdr = rb_oldest(c))) {
			c->read += ev_len(hdr->state);
			c->read_events++;
		}
		/*
		 * The kernel zeroes the counters.  Ours are derived from the
		 * live pages, so offset them (unsigned arithmetic wraps).
		 */
		live = 0;
		for (unsigned int p = c->head;; p = (p + 1) % c->nr_pages) {
			live += page_events(c->pages[p]);
			if (p == c->tail)
				break;
		}
		c->retired_written = -live;
		c->read_total = -(uint64_t)c->read_events;
		c->overrun = c->raw_overrun = 0;
		__atomic_store_n(&c->commit_overrun, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->dropped, 0, __ATOMIC_RELAXED);
		rb_unlock(c);
	}
}
