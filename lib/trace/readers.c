// SPDX-License-Identifier: MIT
/*
 * The trace file (non-consuming: a snapshot taken at open, printed lazily
 * as it is read) and trace_pipe (consuming, blocking, merged across CPUs
 * by timestamp).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/tracefs.h"

static bool per_cpu(const struct uks_tracefs_file *f)
{
	return f->loc.node->flags & TFS_PER_CPU;
}

/* Hand out what is buffered; compact once all of it has been read. */
static size_t copy_out(struct uks_tracefs_file *f, void *buf, size_t len)
{
	size_t avail = f->content.len - f->pos;

	if (len > avail)
		len = avail;
	memcpy(buf, f->content.buf + f->pos, len);
	f->pos += len;
	if (f->pos == f->content.len) {
		uks_seq_reset(&f->content);
		f->pos = 0;
	}
	return len;
}

int uks_tracefs_trace_open(struct uks_tracefs_file *f)
{
	/* "echo > trace": open for writing with O_TRUNC clears the buffer. */
	if ((f->flags & O_ACCMODE) != O_RDONLY && (f->flags & O_TRUNC))
		uks_rb_reset(f->tr->rb);
	if ((f->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	uks_trace_iter_init(f->tr, &f->iter, 0);
	f->snap = uks_rb_snapshot(f->tr->rb);
	return f->snap ? 0 : -ENOMEM;
}

/* The snapshot's next event that this file shows (per_cpu/cpuN/trace: one CPU). */
static bool snap_next(struct uks_tracefs_file *f, struct uks_rb_event *ev)
{
	while (uks_rb_snapshot_next(f->snap, ev))
		if (!per_cpu(f) || ev->cpu == (unsigned int)f->loc.cpu)
			return true;
	return false;
}

ssize_t uks_tracefs_trace_read(struct uks_tracefs_file *f, void *buf, size_t len)
{
	struct uks_rb_event next;

	pthread_mutex_lock(&uks_event_mutex);
	if (!f->header_done) {
		/* One event of lookahead: latency-format wants the next timestamp. */
		f->have_pending = snap_next(f, &f->pending);
		uks_trace_print_header(f->tr, &f->content, &f->iter, !f->have_pending);
		f->header_done = true;
	}
	while (f->content.len - f->pos < len && f->have_pending) {
		bool more = snap_next(f, &next);

		uks_trace_print_event(f->tr, &f->content, &f->iter, &f->pending,
				      more ? next.ts : f->pending.ts);
		f->pending = next;
		f->have_pending = more;
	}
	pthread_mutex_unlock(&uks_event_mutex);
	if (f->content.overflow)
		return -ENOMEM;
	return (ssize_t)copy_out(f, buf, len);
}

void uks_tracefs_trace_release(struct uks_tracefs_file *f)
{
	uks_rb_snapshot_free(f->snap);
}

int uks_tracefs_pipe_open(struct uks_tracefs_file *f)
{
	uks_trace_iter_init(f->tr, &f->iter, 1);
	f->scratch = uks_kmalloc(2 * UKS_RB_PAGE_SIZE);
	return f->scratch ? 0 : -ENOMEM;
}

void uks_tracefs_pipe_release(struct uks_tracefs_file *f)
{
	uks_kfree(f->scratch);
}

/*
 * The CPU holding the oldest unread event among those we read, or -1.
 * Peeks copy events into @buf (one page).
 */
static int oldest_cpu(struct uks_tracefs_file *f, void *buf, uint64_t *ts_out)
{
	struct uks_rb *rb = f->tr->rb;
	unsigned int first = per_cpu(f) ? (unsigned int)f->loc.cpu : 0;
	unsigned int last = per_cpu(f) ? first + 1 : uks_rb_nr_cpus(rb);
	uint64_t best_ts = 0, ts;
	int best = -1;

	for (unsigned int cpu = first; cpu < last; cpu++) {
		if (uks_rb_peek(rb, cpu, buf, UKS_RB_PAGE_SIZE, &ts) > 0 &&
		    (best < 0 || ts < best_ts)) {
			best = (int)cpu;
			best_ts = ts;
		}
	}
	*ts_out = best_ts;
	return best;
}

/* Consume the oldest event over the CPUs we read; false when none. */
static bool consume_oldest(struct uks_tracefs_file *f, struct uks_rb_event *ev)
{
	uint64_t ts;
	int cpu = oldest_cpu(f, f->scratch, &ts), len;

	if (cpu < 0)
		return false;
	len = uks_rb_consume(f->tr->rb, (unsigned int)cpu, f->scratch, UKS_RB_PAGE_SIZE, &ts);
	if (len <= 0)
		return false;
	ev->ts = ts;
	ev->cpu = (unsigned int)cpu;
	ev->len = (unsigned int)len;
	ev->data = f->scratch;
	return true;
}

/* Print @ev; latency-format looks at the next unread event's time. */
static void pipe_print(struct uks_tracefs_file *f, struct uks_rb_event *ev)
{
	uint64_t next_ts = ev->ts, ts;

	/* The second scratch page, so the peek leaves @ev alone. */
	if (f->iter.lat_fmt && oldest_cpu(f, (char *)f->scratch + UKS_RB_PAGE_SIZE, &ts) >= 0)
		next_ts = ts;
	uks_trace_print_event(f->tr, &f->content, &f->iter, ev, next_ts);
}

ssize_t uks_tracefs_pipe_read(struct uks_tracefs_file *f, void *buf, size_t len)
{
	struct uks_rb_event ev;

	for (;;) {
		uint32_t seq = uks_rb_wait_seq(f->tr->rb);
		int ret;

		if (f->content.len > f->pos)
			return (ssize_t)copy_out(f, buf, len);
		pthread_mutex_lock(&uks_event_mutex);
		while (f->content.len < len && consume_oldest(f, &ev))
			pipe_print(f, &ev);
		pthread_mutex_unlock(&uks_event_mutex);
		if (f->content.overflow)
			return -ENOMEM;
		if (f->content.len)
			continue;
		if (f->flags & O_NONBLOCK)
			return -EAGAIN;
		if (__atomic_load_n(&f->interrupted, __ATOMIC_ACQUIRE))
			return -EINTR;
		ret = uks_rb_wait(f->tr->rb, seq, 200);
		if (ret == -EINTR)
			return -EINTR;
	}
}

int uks_tracefs_pipe_poll(struct uks_tracefs_file *f)
{
	return f->content.len > f->pos || !uks_rb_empty(f->tr->rb);
}
