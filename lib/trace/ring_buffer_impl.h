/* SPDX-License-Identifier: MIT */
/*
 * The ring buffer's internals, shared by the files that implement it
 * (ring_buffer*.c).  Nothing outside those files includes this header.
 * ring_buffer.c's top comment describes the design.
 *
 * A per-CPU buffer is split in two: struct rb_cpu stays with its
 * struct uks_rb for the buffer's lifetime (its lock, the per-CPU
 * recording switch) and points to a struct rb_ring (the pages, the read
 * position, the counters).  Rings move between buffers (the snapshot swap,
 * a resize) by replacing rb_cpu->ring under the CPU's lock; a writer loads
 * the pointer once per reservation, so it always works on one consistent
 * ring, which stays allocated until a grace period after it was replaced.
 */
#ifndef UKS_LIB_TRACE_RING_BUFFER_IMPL_H
#define UKS_LIB_TRACE_RING_BUFFER_IMPL_H

#include <stdbool.h>
#include <stdint.h>

#include "core/compiler.h"
#include "trace/ring_buffer.h"

#define RB_PAGE_CLOSED	0x80000000u	/* write offset: no more reservations */
#define RB_EV_VALID	0x80000000u	/* header state: committed */
#define RB_EV_DISCARD	0x40000000u	/* header state: committed, but not an event */
#define RB_EV_LEN_MASK	0x0000ffffu

struct rb_page {
	uint32_t write;		/* reserved bytes | RB_PAGE_CLOSED */
	uint32_t cpu;
	uint64_t committed;	/* committed bytes (low 32) | events (high 32) */
	uint32_t gen;		/* incarnation: bumped each time the page is reused */
	uint32_t pad0;
	uint64_t pad1;
	unsigned char data[];
};

#define RB_PAGE_DATA	(UKS_RB_PAGE_SIZE - sizeof(struct rb_page))

/*
 * @state is gen << 32 | flags | length: the page's incarnation, so that a
 * header left over from an earlier use of the page never looks committed
 * (pages are reused without being cleared), and RB_EV_VALID set last, by
 * the commit.  The length counts this header.
 */
struct rb_event_hdr {
	uint64_t state;
	uint64_t ts;
};

/* One CPU's pages and what has been read and lost from them. */
struct rb_ring {
	unsigned int head;	/* oldest live page (reader side) */
	unsigned int tail;	/* page being written */
	uint32_t read;		/* read offset in the head page */
	uint32_t read_events;	/* events consumed from the head page */
	unsigned int nr_pages;
	struct rb_page **pages;
	/* under the CPU's lock */
	uint64_t retired_written;	/* events of pages no longer live */
	uint64_t overrun;
	uint64_t read_total;
	/* atomics */
	uint64_t commit_overrun;
	uint64_t dropped;
	uint64_t raw_overrun;		/* under the CPU's lock: overrun at the last raw page */
};

struct rb_cpu {
	int lock;
	uint32_t record_disabled;	/* tracing_cpumask: this CPU records nothing */
	struct rb_ring *ring;		/* replaced under lock; never NULL while live */
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

/*
 * The CPU locks.  rb_lock() returns false when this thread already holds
 * or is taking one (a signal handler nested in a page move or a read): the
 * caller gives up rather than deadlock.
 */
bool __uks_trace_rb_lock(struct rb_cpu *c);
void __uks_trace_rb_unlock(struct rb_cpu *c);
/*
 * CPUs [@first, @end)'s locks in both buffers (the snapshot swap); false
 * when nested, or with @try when one is busy.
 */
bool __uks_trace_rb_lock_pairs(struct uks_rb *a, struct uks_rb *b, unsigned int first,
			       unsigned int end, bool try);
void __uks_trace_rb_unlock_pairs(struct uks_rb *a, struct uks_rb *b, unsigned int first,
				 unsigned int end);

/* A ring of @nr fresh pages for @cpu, and its release. */
struct rb_ring *__uks_trace_rb_ring_alloc(unsigned int cpu, unsigned int nr);
void __uks_trace_rb_ring_free(struct rb_ring *ring);
/* Pages for @bytes (at least 3), 0 when impossible. */
unsigned int __uks_trace_rb_pages_for(size_t bytes);
/* The oldest committed, non-discarded event of @r, under its CPU's lock. */
struct rb_event_hdr *__uks_trace_rb_oldest(struct rb_ring *r);
/* Mark every event of @r read and zero its counters, under its CPU's lock. */
void __uks_trace_rb_ring_reset(struct rb_ring *r);

static inline struct rb_page *rb_page_of(const void *p)
{
	return (struct rb_page *)((uintptr_t)p & ~(uintptr_t)(UKS_RB_PAGE_SIZE - 1));
}

static inline uint32_t rb_ev_len(uint64_t state)
{
	return (uint32_t)state & RB_EV_LEN_MASK;
}

/* The event's state if it was committed in @pg's current use, else 0. */
static inline uint64_t rb_ev_committed(const struct rb_page *pg, const struct rb_event_hdr *hdr)
{
	uint64_t state = __atomic_load_n(&hdr->state, __ATOMIC_ACQUIRE);

	if ((uint32_t)(state >> 32) != __atomic_load_n(&pg->gen, __ATOMIC_RELAXED) ||
	    !(state & RB_EV_VALID))
		return 0;
	return state;
}

static inline uint32_t rb_page_end(const struct rb_page *pg)
{
	return __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE) & ~RB_PAGE_CLOSED;
}

static inline unsigned int rb_page_events(const struct rb_page *pg)
{
	return __atomic_load_n(&pg->committed, __ATOMIC_ACQUIRE) >> 32;
}

/* Closed and every reservation committed: no writer is inside. */
static inline bool rb_page_complete(const struct rb_page *pg)
{
	uint32_t w = __atomic_load_n(&pg->write, __ATOMIC_ACQUIRE);
	uint32_t done = (uint32_t)__atomic_load_n(&pg->committed, __ATOMIC_ACQUIRE);

	return (w & RB_PAGE_CLOSED) && done == (w & ~RB_PAGE_CLOSED);
}

#endif
