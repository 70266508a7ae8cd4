// SPDX-License-Identifier: MIT
/*
 * The trace file (non-consuming: a snapshot taken at open, printed lazily
 * as it is read) and trace_pipe (consuming, blocking, merged across CPUs
 * by timestamp).  Both are kfs ->read files: their lines are made a read's
 * worth at a time into the open file's own buffer (struct reader, ->priv),
 * which hands out what a short read left over; kfs keeps the offsets.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/snapshot.h"
#include "trace/tracefs.h"

/* An open trace or trace_pipe. */
struct reader {
	struct uks_trace *tr;
	int cpu;			/* per_cpu/cpuN: N; else -1 */
	struct uks_seq content;		/* lines made, not read yet from @pos */
	size_t pos;
	int interrupted;
	struct uks_trace_iter iter;
	struct uks_rb_snapshot *snap;	/* trace */
	struct uks_rb_event pending;	/* trace: the next event to print */
	bool have_pending;
	bool header_done;
	void *scratch;			/* trace_pipe: the event, a lookahead */
};

static struct reader *reader_new(struct kfs_open_file *of)
{
	struct reader *r = uks_kzalloc(sizeof(*r));

	if (r) {
		r->tr = tfs_tr(of);
		r->cpu = tfs_cpu(of);
	}
	return r;
}

static void reader_free(struct reader *r)
{
	if (!r)
		return;
	__uks_trace_rb_snapshot_free(r->snap);
	uks_kfree(r->scratch);
	seq_free(&r->content);
	uks_kfree(r);
}

/* Hand out what is buffered; compact once all of it has been read. */
static size_t copy_out(struct reader *r, void *buf, size_t len)
{
	size_t avail = r->content.len - r->pos;

	if (len > avail)
		len = avail;
	if (len)
		memcpy(buf, r->content.buf + r->pos, len);
	r->pos += len;
	if (r->pos == r->content.len) {
		seq_reset(&r->content);
		r->pos = 0;
	}
	return len;
}

static int trace_open(struct kfs_open_file *of)
{
	struct reader *r;

	/* "echo > trace": open for writing with O_TRUNC clears the buffer. */
	if ((of->flags & O_ACCMODE) != O_RDONLY && (of->flags & O_TRUNC))
		__uks_trace_rb_reset(tfs_tr(of)->rb);
	of->priv = NULL;
	if ((of->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	r = reader_new(of);
	if (!r)
		return -ENOMEM;
	__uks_trace_iter_init(r->tr, &r->iter, 0);
	r->snap = __uks_trace_rb_snapshot(r->tr->rb);
	if (!r->snap) {
		reader_free(r);
		return -ENOMEM;
	}
	of->priv = r;
	return 0;
}

/* The snapshot's next event that this file shows (per_cpu/cpuN/trace: one CPU). */
static bool snap_next(struct reader *r, struct uks_rb_event *ev)
{
	while (__uks_trace_rb_snapshot_next(r->snap, ev))
		if (r->cpu < 0 || ev->cpu == (unsigned int)r->cpu)
			return true;
	return false;
}

static ssize_t trace_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct reader *r = of->priv;
	struct uks_rb_event next;

	pthread_mutex_lock(&__uks_trace_event_mutex);
	if (!r->header_done) {
		/* One event of lookahead: latency-format wants the next timestamp. */
		r->have_pending = snap_next(r, &r->pending);
		__uks_trace_print_header(r->tr, &r->content, &r->iter, !r->have_pending);
		r->header_done = true;
	}
	while (r->content.len - r->pos < len && r->have_pending) {
		bool more = snap_next(r, &next);

		__uks_trace_print_event(r->tr, &r->content, &r->iter, &r->pending,
					more ? next.ts : r->pending.ts);
		r->pending = next;
		r->have_pending = more;
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	if (r->content.overflow)
		return -ENOMEM;
	return (ssize_t)copy_out(r, buf, len);
}

/*
 * snapshot (and per_cpu/cpuN/snapshot): the spare buffer read as "trace"
 * is, the kernel's help in place of the header while it shows no event.
 * Made at open under event_mutex, which a free of the spare takes too.
 */
static int snapshot_open(struct kfs_open_file *of)
{
	struct uks_trace *tr = tfs_tr(of);
	struct reader *r;
	int ret = 0;

	of->priv = NULL;
	if ((of->flags & O_ACCMODE) == O_WRONLY)
		return 0;
	r = reader_new(of);
	if (!r)
		return -ENOMEM;
	__uks_trace_iter_init(tr, &r->iter, 0);
	pthread_mutex_lock(&__uks_trace_event_mutex);
	if (__uks_trace_snapshot_allocated(tr)) {
		r->iter.rb = tr->snapshot;	/* kept for the instance's life */
		r->snap = __uks_trace_rb_snapshot(tr->snapshot);
		if (!r->snap)
			ret = -ENOMEM;
		else
			r->have_pending = snap_next(r, &r->pending);
	}
	if (!ret && r->have_pending) {
		__uks_trace_print_header(tr, &r->content, &r->iter, false);
	} else if (!ret) {
		seq_puts(&r->content, "# tracer: nop\n#\n");
		__uks_trace_snapshot_help(tr, r->cpu, &r->content);
	}
	r->header_done = true;
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	if (ret) {
		reader_free(r);
		return ret;
	}
	of->priv = r;
	return 0;
}

/*
 * kstrtoul_from_user(…, 10): the kernel copies at most 66 bytes, then
 * wants digits (an optional '+') and at most one newline.
 */
static int parse_kstrtoul(const char *buf, size_t len, unsigned long *val)
{
	char text[67], *p = text;
	unsigned long v = 0;

	if (len > sizeof(text) - 1)
		len = sizeof(text) - 1;
	memcpy(text, buf, len);
	text[len] = '\0';
	if (*p == '+')
		p++;
	if (!*p || *p == '\n')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (~0ul - (unsigned long)(*p - '0')) / 10)
			return -ERANGE;
		v = v * 10 + (unsigned long)(*p - '0');
	}
	if (*p == '\n')
		p++;
	if (*p)		/* a NUL ends the text, as the kernel's string */
		return -EINVAL;
	*val = v;
	return 0;
}

static ssize_t snapshot_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			      const struct kfs_caller *caller)
{
	unsigned long val;
	int ret = parse_kstrtoul(buf, len, &val);

	(void)off;
	(void)caller;
	if (ret)
		return ret;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	ret = __uks_trace_snapshot_write(tfs_tr(of), tfs_cpu(of), val);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return ret ? ret : (ssize_t)len;
}

/* Writing "trace" does nothing but the truncation its open did. */
static int write_nothing(struct kfs_open_file *of, char *text, size_t len)
{
	return 0;
}

static ssize_t trace_write(struct kfs_open_file *of, const char *buf, size_t len, off_t off,
			   const struct kfs_caller *caller)
{
	(void)off;
	(void)caller;
	return __uks_tracefs_command(of, buf, len, write_nothing);
}

static void reader_release(struct kfs_open_file *of)
{
	reader_free(of->priv);
}

static int pipe_open(struct kfs_open_file *of)
{
	struct reader *r = reader_new(of);

	if (!r)
		return -ENOMEM;
	__uks_trace_iter_init(r->tr, &r->iter, 1);
	r->scratch = uks_kmalloc(2 * UKS_RB_PAGE_SIZE);
	if (!r->scratch) {
		reader_free(r);
		return -ENOMEM;
	}
	of->priv = r;
	return 0;
}

/*
 * The CPU holding the oldest unread event among those we read, or -1.
 * Peeks copy events into @buf (one page).
 */
static int oldest_cpu(struct reader *r, void *buf, uint64_t *ts_out)
{
	struct uks_rb *rb = r->tr->rb;
	unsigned int first = r->cpu >= 0 ? (unsigned int)r->cpu : 0;
	unsigned int last = r->cpu >= 0 ? first + 1 : __uks_trace_rb_nr_cpus(rb);
	uint64_t best_ts = 0, ts;
	int best = -1;

	for (unsigned int cpu = first; cpu < last; cpu++) {
		if (__uks_trace_rb_peek(rb, cpu, buf, UKS_RB_PAGE_SIZE, &ts) > 0 &&
		    (best < 0 || ts < best_ts)) {
			best = (int)cpu;
			best_ts = ts;
		}
	}
	*ts_out = best_ts;
	return best;
}

/* Consume the oldest event over the CPUs we read; false when none. */
static bool consume_oldest(struct reader *r, struct uks_rb_event *ev)
{
	uint64_t ts;
	int cpu = oldest_cpu(r, r->scratch, &ts), len;

	if (cpu < 0)
		return false;
	len = __uks_trace_rb_consume(r->tr->rb, (unsigned int)cpu, r->scratch, UKS_RB_PAGE_SIZE,
				     &ts);
	if (len <= 0)
		return false;
	ev->ts = ts;
	ev->cpu = (unsigned int)cpu;
	ev->len = (unsigned int)len;
	ev->data = r->scratch;
	return true;
}

/* Print @ev; latency-format looks at the next unread event's time. */
static void pipe_print(struct reader *r, struct uks_rb_event *ev)
{
	uint64_t next_ts = ev->ts, ts;

	/* The second scratch page, so the peek leaves @ev alone. */
	if (r->iter.lat_fmt && oldest_cpu(r, (char *)r->scratch + UKS_RB_PAGE_SIZE, &ts) >= 0)
		next_ts = ts;
	__uks_trace_print_event(r->tr, &r->content, &r->iter, ev, next_ts);
}

static ssize_t pipe_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct reader *r = of->priv;
	struct uks_rb_event ev;

	for (;;) {
		uint32_t seq = __uks_trace_rb_wait_seq(r->tr->rb);
		int ret;

		if (r->content.len > r->pos)
			return (ssize_t)copy_out(r, buf, len);
		pthread_mutex_lock(&__uks_trace_event_mutex);
		while (r->content.len < len && consume_oldest(r, &ev))
			pipe_print(r, &ev);
		pthread_mutex_unlock(&__uks_trace_event_mutex);
		if (r->content.overflow)
			return -ENOMEM;
		if (r->content.len)
			continue;
		if (__atomic_load_n(&of->flags, __ATOMIC_RELAXED) & O_NONBLOCK)
			return -EAGAIN;
		if (__atomic_load_n(&r->interrupted, __ATOMIC_ACQUIRE))
			return -EINTR;
		ret = __uks_trace_rb_wait_cpu(r->tr->rb, r->cpu, seq, 200);
		if (ret == -EINTR)
			return -EINTR;
	}
}

static int pipe_poll(struct kfs_open_file *of)
{
	struct reader *r = of->priv;

	return r->content.len > r->pos || !__uks_trace_rb_empty(r->tr->rb);
}

/* From another thread than the blocked reader's: it returns -EINTR. */
static void pipe_interrupt(struct kfs_open_file *of)
{
	struct reader *r = of->priv;

	__atomic_store_n(&r->interrupted, 1, __ATOMIC_RELEASE);
	__uks_trace_rb_wake_all(r->tr->rb);
}

const struct kfs_ops __uks_tracefs_trace_ops = {
	.open = trace_open,
	.read = trace_read,
	.write = trace_write,
	.release = reader_release,
};

const struct kfs_ops __uks_tracefs_snapshot_ops = {
	.open = snapshot_open,
	.read = trace_read,
	.write = snapshot_write,
	.release = reader_release,
};

const struct kfs_ops __uks_tracefs_pipe_ops = {
	.open = pipe_open,
	.read = pipe_read,
	.poll = pipe_poll,
	.interrupt = pipe_interrupt,
	.release = reader_release,
};
