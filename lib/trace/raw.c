// SPDX-License-Identifier: MIT
/*
 * The binary side of tracefs: per_cpu/cpuN/trace_pipe_raw (one CPU's
 * events consumed a page at a time, in the kernel's page layout), the
 * layout's description in events/header_page and events/header_event,
 * buffer_subbuf_size_kb (the size of those pages) and printk_formats.
 *
 * A raw read fills a page with the oldest events of its CPU under one
 * lock (__uks_trace_rb_consume_batch()), in the layout the kernel's
 * ring_buffer_read_page() leaves: partial pages when the reader catches up
 * with the writers, the count of events overwritten since the previous
 * page flagged in the commit word.  A read shorter than the page takes
 * only the events that fit in it, and the rest of the page comes with the
 * next reads, as in the kernel.
 *
 * Pages for splice(2) (->read_pages): only complete pages, as the kernel's
 * splice hands out, so the page being filled stays with the open file
 * between calls and takes the CPU's events as they come.  A read after
 * that starts with it, however full it is (trace-cmd's last read at stop).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/ring_buffer_raw.h"
#include "trace/tracefs.h"

#define SUBBUF_MAX_ORDER	7	/* 128 system pages, the kernel's limit */

static uint32_t subbuf_size(const struct uks_trace *tr)
{
	return UKS_RB_PAGE_SIZE << __atomic_load_n(&tr->subbuf_order, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ trace_pipe_raw */

struct raw_reader {
	struct uks_trace *tr;
	unsigned int cpu;
	unsigned char *page;
	uint32_t alloc;		/* bytes at @page */
	uint32_t size;		/* the page being handed out */
	uint32_t pos;		/* bytes of it already read; == size: none */
	int interrupted;
	struct uks_rb_page_writer w;
	/* the page ->read_pages fills */
	unsigned char *feed;
	struct uks_rb_page_writer fw;
	uint64_t feed_lost;
	bool filling;
	bool feed_full;
};

static bool take_event(void *arg, uint64_t ts, const void *data, unsigned int len)
{
	return __uks_trace_rb_page_add(arg, ts, data, len);
}

/*
 * Fill a page of @cap bytes (at most the sub-buffer).  Returns the events
 * in it, 0 when the CPU had none, or -errno.
 */
static int raw_fill(struct raw_reader *r, uint32_t cap)
{
	uint64_t lost = 0;
	int n;

	__uks_trace_rb_page_start(&r->w, r->page, cap);
	n = __uks_trace_rb_consume_batch(r->tr->rb, r->cpu, take_event, &r->w, &lost);
	if (n <= 0)
		return n;
	__uks_trace_rb_page_finish(&r->w, lost);
	return n;
}

static int raw_open(struct kfs_open_file *of)
{
	struct raw_reader *r = uks_kzalloc(sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->tr = tfs_tr(of);
	r->cpu = (unsigned int)of->ref.idx;
	of->priv = r;
	return 0;
}

static void raw_release(struct kfs_open_file *of)
{
	struct raw_reader *r = of->priv;

	if (r) {
		uks_kfree(r->page);
		uks_kfree(r->feed);
		uks_kfree(r);
	}
}

static ssize_t raw_read(struct kfs_open_file *of, void *buf, size_t len)
{
	struct raw_reader *r = of->priv;
	uint32_t size = subbuf_size(r->tr), cap;

	if (!len)
		return 0;
	if (r->pos < r->size)
		goto copy;
	if (r->alloc != size) {
		uks_kfree(r->page);
		r->alloc = 0;
		r->page = uks_kmalloc(size);
		if (!r->page)
			return -ENOMEM;
		r->alloc = size;
	}
	/* Like ring_buffer_read_page(): no room for an event past the header. */
	if (len <= RB_PAGE_HDR)
		return 0;
	if (r->filling && r->fw.events && r->fw.size == size) {
		/* the events ->read_pages took come first, in their page */
		__uks_trace_rb_page_finish(&r->fw, r->feed_lost);
		memcpy(r->page, r->feed, size);
		r->filling = false;
		r->size = size;
		r->pos = 0;
		goto copy;
	}
	r->filling = false;
	cap = len < size ? (uint32_t)len : size;
	for (;;) {
		uint32_t seq = __uks_trace_rb_wait_seq(r->tr->rb);
		int ret = raw_fill(r, cap);

		if (ret < 0)
			return ret;
		if (ret > 0)
			break;
		if (__atomic_load_n(&of->flags, __ATOMIC_RELAXED) & O_NONBLOCK)
			return -EAGAIN;
		if (__atomic_load_n(&r->interrupted, __ATOMIC_ACQUIRE))
			return -EINTR;
		if (__uks_trace_rb_wait_cpu(r->tr->rb, (int)r->cpu, seq, 200) == -EINTR)
			return -EINTR;
	}
	/* The rest of a short page reads as zeroes, as the kernel's spare page. */
	if (cap < size)
		memset(r->page + cap, 0, size - cap);
	r->size = size;
	r->pos = 0;
copy:
	if (len > r->size - r->pos)
		len = r->size - r->pos;
	memcpy(buf, r->page + r->pos, len);
	r->pos += (uint32_t)len;
	return (ssize_t)len;
}

static bool feed_event(void *arg, uint64_t ts, const void *data, unsigned int len)
{
	struct raw_reader *r = arg;

	if (__uks_trace_rb_page_add(&r->fw, ts, data, len))
		return true;
	r->feed_full = true;
	return false;
}

static ssize_t raw_read_pages(struct kfs_open_file *of, void *buf, size_t len)
{
	struct raw_reader *r = of->priv;
	uint32_t size = subbuf_size(r->tr);
	uint64_t lost = 0;
	int n;

	if (len < size)
		return -EMSGSIZE;
	if (r->pos < r->size)
		return 0;		/* a read is handing a page out: it goes first */
	if (!r->feed || r->fw.size != size) {
		uks_kfree(r->feed);
		r->filling = false;
		r->fw.size = 0;
		r->feed = uks_kmalloc(size);
		if (!r->feed)
			return -ENOMEM;
		r->fw.size = size;
	}
	if (!r->filling) {
		__uks_trace_rb_page_start(&r->fw, r->feed, size);
		r->feed_lost = 0;
		r->filling = true;
	}
	r->feed_full = false;
	n = __uks_trace_rb_consume_batch(r->tr->rb, r->cpu, feed_event, r, &lost);
	if (n < 0)
		return n;
	r->feed_lost += lost;
	/* an event that cannot fit even an empty page would stall the CPU: the kernel has none */
	if (!r->feed_full || !r->fw.events)
		return 0;
	__uks_trace_rb_page_finish(&r->fw, r->feed_lost);
	memcpy(buf, r->feed, size);
	r->filling = false;
	return size;
}

static int raw_poll(struct kfs_open_file *of)
{
	struct raw_reader *r = of->priv;

	/* A peek with no room answers -ENOSPC when there is an event. */
	return r->pos < r->size || (r->filling && r->fw.events) ||
	       __uks_trace_rb_peek(r->tr->rb, r->cpu, NULL, 0, NULL) == -ENOSPC;
}

static void raw_interrupt(struct kfs_open_file *of)
{
	struct raw_reader *r = of->priv;

	__atomic_store_n(&r->interrupted, 1, __ATOMIC_RELEASE);
	__uks_trace_rb_wake_all(r->tr->rb);
}

const struct kfs_ops __uks_tracefs_pipe_raw_ops = {
	.open = raw_open,
	.read = raw_read,
	.poll = raw_poll,
	.interrupt = raw_interrupt,
	.read_pages = raw_read_pages,
	.release = raw_release,
};

/* ------------------------------------------------------- the page's layout */

/* x86-64's text: local_t is a long, and "overwrite" is the commit word's top bits. */
static int show_header_page(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_printf(s, "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
		      "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
		      "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
		      "\tfield: char data;\toffset:16;\tsize:%u;\tsigned:0;\n",
		   subbuf_size(tfs_tr(of)) - RB_PAGE_HDR);
	return 0;
}

static int show_header_event(struct kfs_open_file *of, struct uks_seq *s)
{
	(void)of;
	seq_printf(s, "# compressed entry header\n"
		      "\ttype_len    :    5 bits\n"
		      "\ttime_delta  :   27 bits\n"
		      "\tarray       :   32 bits\n"
		      "\n"
		      "\tpadding     : type == %u\n"
		      "\ttime_extend : type == %u\n"
		      "\ttime_stamp : type == %u\n"
		      "\tdata max type_len  == %u\n",
		   RB_TYPE_PADDING, RB_TYPE_TIME_EXTEND, RB_TYPE_TIME_STAMP, RB_MAX_SMALL_DATA / 4);
	return 0;
}

const struct kfs_ops __uks_tracefs_header_page_ops = { .show = show_header_page };
const struct kfs_ops __uks_tracefs_header_event_ops = { .show = show_header_event };

/* ---------------------------------------------------- buffer_subbuf_size_kb */

static int show_subbuf_size(struct kfs_open_file *of, struct uks_seq *s)
{
	seq_printf(s, "%u\n", subbuf_size(tfs_tr(of)) / 1024);
	return 0;
}

/* kstrtoul(…, 10): an optional '+', digits, one optional newline. */
static int parse_kstrtoul(const char *text, size_t len, unsigned long *val)
{
	unsigned long v = 0;
	size_t i = 0;

	if (len && text[len - 1] == '\n')
		len--;
	if (i < len && text[i] == '+')
		i++;
	if (i == len)
		return -EINVAL;
	for (; i < len; i++) {
		if (text[i] < '0' || text[i] > '9')
			return -EINVAL;
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, text[i] - '0', &v))
			return -ERANGE;
	}
	*val = v;
	return 0;
}

/*
 * As the kernel: the size is rounded up to whole system pages and to a
 * power of two of them, 1 to 128 pages (0 and more are -EINVAL); a new
 * size empties the buffer.
 */
static int write_subbuf_size(struct kfs_open_file *of, char *text, size_t len)
{
	struct uks_trace *tr = tfs_tr(of);
	unsigned long kb, pages;
	unsigned int order = 0;
	int ret = parse_kstrtoul(text, len, &kb);

	if (ret)
		return ret;
	pages = kb / (UKS_RB_PAGE_SIZE / 1024) + !!(kb % (UKS_RB_PAGE_SIZE / 1024));
	if (!pages || pages > 1ul << SUBBUF_MAX_ORDER)
		return -EINVAL;
	while ((1ul << order) < pages)
		order++;
	if (order != __atomic_load_n(&tr->subbuf_order, __ATOMIC_RELAXED)) {
		__atomic_store_n(&tr->subbuf_order, order, __ATOMIC_RELAXED);
		__uks_trace_rb_reset(tr->rb);
	}
	return 0;
}

static ssize_t write_subbuf_size_cmd(struct kfs_open_file *of, const char *buf, size_t len,
				     off_t off, const struct kfs_caller *caller)
{
	(void)off;
	(void)caller;
	return __uks_tracefs_command(of, buf, len, write_subbuf_size);
}

const struct kfs_ops __uks_tracefs_subbuf_size_ops = {
	.show = show_subbuf_size, .write = write_subbuf_size_cmd,
};

/* ----------------------------------------------------------- printk_formats */

/* trace_printk() format strings; the library has no trace_printk(). */
static int show_printk_formats(struct kfs_open_file *of, struct uks_seq *s)
{
	(void)of;
	(void)s;
	return 0;
}

const struct kfs_ops __uks_tracefs_printk_formats_ops = { .show = show_printk_formats };
