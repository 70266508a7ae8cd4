// SPDX-License-Identifier: MIT
/*
 * Non-consuming reads of the ring buffer (the trace and snapshot files): a
 * private copy of every unread event of every CPU, taken under each CPU's
 * lock, then merged in timestamp order without holding any lock.
 */
#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/ring_buffer_impl.h"

struct snap_cpu {
	unsigned char *buf;	/* copied events: struct rb_event_hdr + payload */
	size_t len;
	size_t pos;
};

struct uks_rb_snapshot {
	unsigned int nr_cpus;
	struct snap_cpu cpus[];
};

/* Copy every committed, unread, non-discarded event of @c's ring. */
static int snap_cpu_copy(struct rb_cpu *c, struct snap_cpu *s)
{
	struct rb_ring *r = c->ring;
	unsigned int page = r->head;
	uint32_t off = r->read;

	s->buf = uks_kmalloc((size_t)r->nr_pages * RB_PAGE_DATA);
	if (!s->buf)
		return -ENOMEM;
	for (;;) {
		struct rb_page *pg = r->pages[page];
		uint32_t end = rb_page_end(pg);
		bool stop = false;

		while (off < end) {
			struct rb_event_hdr *hdr = (struct rb_event_hdr *)(pg->data + off);
			uint64_t state = rb_ev_committed(pg, hdr);

			if (!state) {
				stop = true;	/* later events may be ahead of this one */
				break;
			}
			if (!(state & RB_EV_DISCARD)) {
				memcpy(s->buf + s->len, hdr, rb_ev_len(state));
				s->len += rb_ev_len(state);
			}
			off += rb_ev_len(state);
		}
		if (stop || page == __atomic_load_n(&r->tail, __ATOMIC_ACQUIRE))
			break;
		page = (page + 1) % r->nr_pages;
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

		if (!__uks_trace_rb_lock(c)) {
			__uks_trace_rb_snapshot_free(snap);
			return NULL;
		}
		ret = snap_cpu_copy(c, &snap->cpus[i]);
		__uks_trace_rb_unlock(c);
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
	snap->cpus[best_cpu].pos += rb_ev_len(best->state);
	ev->ts = best->ts;
	ev->cpu = best_cpu;
	ev->len = rb_ev_len(best->state) - sizeof(*best);
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
