// SPDX-License-Identifier: MIT
/*
 * The snapshot: each instance's spare buffer (the kernel's max_buffer)
 * and the snapshot file's commands.
 *
 * Taking a snapshot swaps the live buffer's rings with the spare's
 * (ring_buffer_swap.c): tracing goes on in the former spare, and the
 * snapshot file shows what was live.  The swap neither allocates nor
 * waits, so the snapshot trigger can take one from a tracepoint hit.
 * Writers that were inside the live buffer during a swap finish in what is
 * now the spare; their events land there, whole.
 *
 * The spare is made at its first use and kept until the instance goes;
 * "freeing" it (echo 0) shrinks it to its smallest, as the kernel resizes
 * max_buffer to one page.  So a reader may hold it without a reference.
 * Shrinking, like any resize, first waits for a grace period: every writer
 * that may have loaded one of its rings has committed.
 *
 * Locking: allocation, free, resize and the file's commands run under
 * event_mutex.  tr->snapshot_busy is a flag, not a lock anybody waits on
 * from a hit: swaps, resizes and frees hold it, and a swap from a hit that
 * finds it held gives up.
 */
#include <errno.h>
#include <sched.h>

#include <uks/slab.h>
#include <uks/tracepoint.h>

#include "trace/snapshot.h"
#include "trace/trace.h"

static bool busy_trylock(struct uks_trace *tr)
{
	return !__atomic_exchange_n(&tr->snapshot_busy, 1, __ATOMIC_ACQUIRE);
}

/* Only from file operations: a hit holds the flag for a swap's length. */
static void busy_lock(struct uks_trace *tr)
{
	while (!busy_trylock(tr))
		sched_yield();
}

static void busy_unlock(struct uks_trace *tr)
{
	__atomic_store_n(&tr->snapshot_busy, 0, __ATOMIC_RELEASE);
}

bool __uks_trace_snapshot_allocated(struct uks_trace *tr)
{
	return __atomic_load_n(&tr->snapshot_allocated, __ATOMIC_ACQUIRE);
}

/**
 * __uks_trace_snapshot_take - swap the live buffer with the spare, from a hit
 *
 * See snapshot.h for what it returns and what it writes when no spare is
 * allocated.
 */
int __uks_trace_snapshot_take(struct uks_trace *tr)
{
	int ret;

	if (!busy_trylock(tr))
		return -EBUSY;
	if (!tr->snapshot_allocated) {
		busy_unlock(tr);
		__uks_trace_puts(tr, __uks_trace_snapshot_caller, "*** SNAPSHOT NOT ALLOCATED ***\n");
		__uks_trace_puts(tr, __uks_trace_snapshot_caller, "*** stopping trace here!   ***\n");
		__uks_trace_rb_record_on(tr->rb, false);
		return -ENODEV;
	}
	ret = __uks_trace_rb_swap(tr->rb, tr->snapshot, -1, true);
	busy_unlock(tr);
	return ret;
}

/*
 * Every writer that may hold a ring of the spare (one swapped out while it
 * reserved) has committed: tracepoint hits by a grace period, trace_marker
 * writers by tr->lock, which they hold from reserve to commit.
 */
static void writers_synchronize(struct uks_trace *tr)
{
	uks_tracepoint_synchronize(NULL);
	pthread_mutex_lock(&tr->lock);
	pthread_mutex_unlock(&tr->lock);
}

/** __uks_trace_snapshot_alloc - see snapshot.h */
int __uks_trace_snapshot_alloc(struct uks_trace *tr)
{
	int ret;

	if (tr->snapshot_allocated)
		return 0;
	if (!tr->snapshot) {
		struct uks_rb *rb;

		ret = __uks_trace_rb_resize_check(tr->rb, -1, 0);
		if (ret)
			return ret;
		rb = __uks_trace_rb_alloc(__uks_trace_rb_nr_cpus(tr->rb), 0);
		if (!rb)
			return -ENOMEM;
		__uks_trace_rb_set_clock(rb, __uks_trace_rb_clock(tr->rb));
		__atomic_store_n(&tr->snapshot, rb, __ATOMIC_RELEASE);
	}
	/* No swap since the last free's grace period: no writer in it. */
	ret = __uks_trace_rb_resize_like(tr->snapshot, tr->rb);
	if (ret)
		return ret;
	__uks_trace_rb_reset(tr->snapshot);
	busy_lock(tr);
	__atomic_store_n(&tr->snapshot_allocated, true, __ATOMIC_RELEASE);
	busy_unlock(tr);
	return 0;
}

/** __uks_trace_snapshot_free - see snapshot.h */
void __uks_trace_snapshot_free(struct uks_trace *tr)
{
	if (!tr->snapshot_allocated)
		return;
	busy_lock(tr);
	__atomic_store_n(&tr->snapshot_allocated, false, __ATOMIC_RELEASE);
	busy_unlock(tr);
	writers_synchronize(tr);
	/* The smallest rings; cannot fail for lack of memory in a way that matters. */
	__uks_trace_rb_resize(tr->snapshot, -1, 0);
}

/**
 * __uks_trace_snapshot_write - the snapshot file's commands
 * @cpu:	per_cpu/cpuN/snapshot's CPU, or -1 for the top file
 * @val:	0 frees (the top file only: -EINVAL per CPU), 1 allocates if
 *		needed and swaps (one CPU's rings for a per-CPU file), any
 *		other value clears the spare (of that CPU) if allocated
 */
int __uks_trace_snapshot_write(struct uks_trace *tr, int cpu, unsigned long val)
{
	int ret;

	switch (val) {
	case 0:
		if (cpu >= 0)
			return -EINVAL;
		__uks_trace_snapshot_free(tr);
		return 0;
	case 1:
		ret = __uks_trace_snapshot_alloc(tr);
		if (ret)
			return ret;
		busy_lock(tr);
		ret = __uks_trace_rb_swap(tr->rb, tr->snapshot, cpu, false);
		busy_unlock(tr);
		return ret;
	default:
		if (tr->snapshot_allocated)
			__uks_trace_rb_reset_cpu(tr->snapshot, cpu);
		return 0;
	}
}

/** __uks_trace_snapshot_help - print_snapshot_help() of the kernel, word for word */
void __uks_trace_snapshot_help(struct uks_trace *tr, int cpu, struct uks_seq *s)
{
	seq_puts(s, __uks_trace_snapshot_allocated(tr) ? "#\n# * Snapshot is allocated *\n#\n" :
							  "#\n# * Snapshot is freed *\n#\n");
	seq_puts(s, "# Snapshot commands:\n");
	if (cpu < 0) {
		seq_puts(s, "# echo 0 > snapshot : Clears and frees snapshot buffer\n"
			    "# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
			    "#                      Takes a snapshot of the main buffer.\n"
			    "# echo 2 > snapshot : Clears snapshot buffer (but does not allocate or free)\n");
	} else {
		seq_puts(s, "# echo 0 > snapshot : Invalid for per_cpu snapshot file.\n"
			    "# echo 1 > snapshot : Allocates snapshot buffer, if not already allocated.\n"
			    "#                      Takes a snapshot of the main buffer for this cpu.\n"
			    "# echo 2 > snapshot : Clears this cpu's snapshot buffer (but does not allocate)\n");
	}
	seq_puts(s, "#                      (Doesn't have to be '2' works with any number that\n"
		    "#                       is not a '0' or '1')\n");
}

/* ---------------------------------------------------- resize, clock, end */

/** __uks_trace_resize_check - could both buffers take @bytes per CPU? */
int __uks_trace_resize_check(struct uks_trace *tr, int cpu, size_t bytes)
{
	size_t both;

	if (!tr->snapshot_allocated)
		return __uks_trace_rb_resize_check(tr->rb, cpu, bytes);
	if (__builtin_mul_overflow(bytes, 2, &both))
		return -ENOMEM;
	return __uks_trace_rb_resize_check(tr->rb, cpu, both);
}

/** __uks_trace_resize_buffers - see snapshot.h */
int __uks_trace_resize_buffers(struct uks_trace *tr, int cpu, size_t bytes)
{
	int ret;

	busy_lock(tr);	/* no swap between the two resizes */
	ret = __uks_trace_rb_resize(tr->rb, cpu, bytes);
	if (!ret && tr->snapshot_allocated)
		ret = __uks_trace_rb_resize(tr->snapshot, cpu, bytes);
	busy_unlock(tr);
	return ret;
}

void __uks_trace_snapshot_set_clock(struct uks_trace *tr)
{
	if (!tr->snapshot)
		return;
	__uks_trace_rb_set_clock(tr->snapshot, __uks_trace_rb_clock(tr->rb));
	__uks_trace_rb_reset(tr->snapshot);
}

void __uks_trace_snapshot_destroy(struct uks_trace *tr)
{
	__uks_trace_rb_free(tr->snapshot);
	tr->snapshot = NULL;
	tr->snapshot_allocated = false;
	uks_kfree(tr->tracing_cpumask);
	tr->tracing_cpumask = NULL;
}
