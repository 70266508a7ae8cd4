/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU trace ring buffer.  See ring_buffer.c for the design.
 */
#ifndef UKS_LIB_TRACE_RING_BUFFER_H
#define UKS_LIB_TRACE_RING_BUFFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define UKS_RB_PAGE_SIZE	4096u

struct uks_rb;

/* Trace clocks (trace_clock); the first one is the default. */
enum uks_trace_clock {
	UKS_CLOCK_LOCAL,
	UKS_CLOCK_GLOBAL,
	UKS_CLOCK_COUNTER,
	UKS_CLOCK_UPTIME,
	UKS_CLOCK_PERF,
	UKS_CLOCK_MONO,
	UKS_CLOCK_MONO_RAW,
	UKS_CLOCK_BOOT,
	UKS_CLOCK_X86_TSC,
	UKS_NR_CLOCKS,
};

extern const char *const __uks_trace_clock_names[UKS_NR_CLOCKS];
/* Does the clock count nanoseconds (printed as sec.usec)? */
bool __uks_trace_clock_in_ns(enum uks_trace_clock clock);
uint64_t __uks_trace_clock_read(enum uks_trace_clock clock, uint64_t *counter);
void __uks_trace_clock_init(void);

/* Per-CPU statistics, as per_cpu/cpuN/stats shows them. */
struct uks_rb_stats {
	uint64_t entries;	/* unread events in the buffer */
	uint64_t overrun;	/* events lost by overwriting */
	uint64_t commit_overrun;	/* events lost to a writer still in the oldest page */
	uint64_t bytes;		/* unread bytes */
	uint64_t oldest_ts;	/* timestamp of the oldest unread event, 0 if none */
	uint64_t dropped;	/* events refused because the buffer was full */
	uint64_t read;		/* events consumed by readers */
	uint64_t written;	/* events committed, ever (entries + overrun + read) */
};

/* One event as readers see it. */
struct uks_rb_event {
	uint64_t ts;
	unsigned int cpu;
	unsigned int len;	/* payload bytes (rounded up to 8) */
	const void *data;	/* the record: struct uks_trace_entry first */
};

struct uks_rb *__uks_trace_rb_alloc(unsigned int nr_cpus, size_t bytes_per_cpu);
void __uks_trace_rb_free(struct uks_rb *rb);
/*
 * Change the size of one CPU's buffer, or of all (@cpu < 0); their contents
 * are discarded.  0, -EINVAL (no such CPU) or -ENOMEM, checked before any
 * page is taken, and then every old page and event is still there.
 */
int __uks_trace_rb_resize(struct uks_rb *rb, int cpu, size_t bytes_per_cpu);
int __uks_trace_rb_resize_check(const struct uks_rb *rb, int cpu, size_t bytes_per_cpu);
unsigned int __uks_trace_rb_nr_cpus(const struct uks_rb *rb);
/* Pages in @cpu's ring now. */
unsigned int __uks_trace_rb_nr_pages(struct uks_rb *rb, unsigned int cpu);
/* Let @cpu record or not (tracing_cpumask); its events are dropped uncounted. */
void __uks_trace_rb_record_cpu(struct uks_rb *rb, unsigned int cpu, bool on);
void __uks_trace_rb_set_overwrite(struct uks_rb *rb, bool overwrite);
void __uks_trace_rb_set_clock(struct uks_rb *rb, enum uks_trace_clock clock);
enum uks_trace_clock __uks_trace_rb_clock(const struct uks_rb *rb);
/* Recording on/off (tracing_on): reserve fails while off. */
void __uks_trace_rb_record_on(struct uks_rb *rb, bool on);
bool __uks_trace_rb_recording(const struct uks_rb *rb);

/* Largest payload one event can have. */
size_t __uks_trace_rb_max_event(void);

/*
 * Writers.  reserve returns space for @len bytes on the caller's CPU (set in
 * *@cpu), or NULL (off, full in non-overwrite mode, too big, nested in the
 * buffer's lock).  Every successful reserve must be followed by commit or
 * discard of the same pointer, from the same thread.
 */
void *__uks_trace_rb_reserve(struct uks_rb *rb, size_t len, unsigned int *cpu);
/* The same, stamped with @ts, a reading of __uks_trace_rb_now() (shared by a hit). */
void *__uks_trace_rb_reserve_at(struct uks_rb *rb, size_t len, uint64_t ts, unsigned int *cpu);
uint64_t __uks_trace_rb_now(struct uks_rb *rb);
void __uks_trace_rb_commit(struct uks_rb *rb, void *data);
void __uks_trace_rb_discard(struct uks_rb *rb, void *data);
/* The CPU whose buffer a reserved event is in. */
unsigned int __uks_trace_rb_event_cpu(const void *data);

/*
 * Consuming reads (trace_pipe): copy the oldest event of @cpu into @buf.
 * peek leaves it, consume removes it.  Return the payload length, 0 when
 * the CPU's buffer is empty, -ENOSPC when @cap is too small.
 */
int __uks_trace_rb_peek(struct uks_rb *rb, unsigned int cpu, void *buf, size_t cap, uint64_t *ts);
int __uks_trace_rb_consume(struct uks_rb *rb, unsigned int cpu, void *buf, size_t cap,
			   uint64_t *ts);
bool __uks_trace_rb_empty(struct uks_rb *rb);
/* Many events under one lock (trace_pipe_raw); see ring_buffer_batch.c. */
typedef bool (*uks_rb_take_fn)(void *arg, uint64_t ts, const void *data, unsigned int len);
int __uks_trace_rb_consume_batch(struct uks_rb *rb, unsigned int cpu, uks_rb_take_fn take,
				 void *arg, uint64_t *lost);

/*
 * Blocking: wait until an event is committed after @seq was read with
 * __uks_trace_rb_wait_seq(), or @timeout_ms passes (-1: forever).  Returns 0,
 * -ETIMEDOUT or -EINTR.
 */
uint32_t __uks_trace_rb_wait_seq(struct uks_rb *rb);
int __uks_trace_rb_wait(struct uks_rb *rb, uint32_t seq, int timeout_ms);
/* The same, ended early only by an event of @cpu (< 0: any CPU). */
int __uks_trace_rb_wait_cpu(struct uks_rb *rb, int cpu, uint32_t seq, int timeout_ms);
/* Wake every waiter (used when a reader is being shut down). */
void __uks_trace_rb_wake_all(struct uks_rb *rb);

/*
 * Snapshot for non-consuming readers (trace): a private copy of every
 * unread event of every CPU, merged in timestamp order.
 */
struct uks_rb_snapshot;
struct uks_rb_snapshot *__uks_trace_rb_snapshot(struct uks_rb *rb);
/* The next event in timestamp order, false at the end. */
bool __uks_trace_rb_snapshot_next(struct uks_rb_snapshot *snap, struct uks_rb_event *ev);
void __uks_trace_rb_snapshot_free(struct uks_rb_snapshot *snap);

void __uks_trace_rb_stats(struct uks_rb *rb, unsigned int cpu, struct uks_rb_stats *st);
/* Remove every event of every CPU (echo > trace); stats keep counting. */
void __uks_trace_rb_reset(struct uks_rb *rb);
/* The same for one CPU (@cpu >= 0) or all (-1). */
void __uks_trace_rb_reset_cpu(struct uks_rb *rb, int cpu);
/*
 * The snapshot (ring_buffer_swap.c): exchange the rings of one CPU (@cpu)
 * or of all (-1) between two buffers of the same CPUs without allocating;
 * @try gives up (-EBUSY) rather than wait for a lock.  0, -EINVAL, -EBUSY.
 */
int __uks_trace_rb_swap(struct uks_rb *a, struct uks_rb *b, int cpu, bool try);
/* Give @rb the ring sizes of @like (memory checked first; contents of resized CPUs go). */
int __uks_trace_rb_resize_like(struct uks_rb *rb, struct uks_rb *like);
/* Could it?  0 or -ENOMEM, as __uks_trace_rb_resize_check(). */
int __uks_trace_rb_resize_like_check(struct uks_rb *rb, struct uks_rb *like);

/* Clock reading at allocation or the last reset (latency-format times). */
uint64_t __uks_trace_rb_time_start(const struct uks_rb *rb);

#endif
