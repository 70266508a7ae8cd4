// SPDX-License-Identifier: MIT
/*
 * What uksfs tells the kernel without being asked: poll wake-ups, and the
 * pages of trace_pipe_raw put straight into the page cache so that
 * splice(2) finds them.
 *
 * Poll.  A poll(2) that finds its file not readable leaves its handle
 * here; the notifier thread (fuse.c) checks them every 20 ms and wakes
 * those whose file became readable.
 *
 * Feeding.  Our files are opened with direct_io, so read(2) always
 * reaches us, but FUSE's splice_read goes through the page cache, bounded
 * by the inode's size: with size 0 every splice returns 0, and trace-cmd
 * record (which splices trace_pipe_raw by default) would get its data only
 * from the read at stop, at most the ring buffer's size.  So for a file
 * whose tree hands out whole pages (kfs ->read_pages) the notifier takes
 * each complete page and stores it at the file's end with FUSE's
 * NOTIFY_STORE, which also grows the inode's size: a splice at the
 * reader's offset then returns the pages, as the kernel's does.
 *
 * The fed pages form a log, offset by offset, of which the last
 * FEED_LOG_MAX bytes are kept: a page-cache miss (a page the kernel
 * evicted) is served from it, and so is read(2), which reads at the same
 * offsets: the first read(2) of the fed file stops the feeding, and reads
 * past the log's end are the tree's ordinary ones (partial pages, waiting
 * for events).  Older pages read as empty sub-buffers, and leave the page
 * cache too: a reader that far behind has lost them, as a reader of the
 * kernel's ring buffer loses overwritten pages.
 *
 * One feed per inode, for the open file that came first; a second opener
 * reads the tree directly, and a splice of it sees the first one's pages.
 * At the feed's end its pages leave the page cache, so the next opener
 * starts from an empty file.
 *
 * Lock order: n->lock, then the open file's own (->read_pages, ->poll).
 * NOTIFY_STORE is made without n->lock: it waits for the page's lock,
 * which a READ being answered holds, and that READ takes n->lock.
 */
#include "config.h"

#if UKS_HAVE_FUSE3

#include <errno.h>
#include <string.h>

#include <uks/slab.h>

#include "fs/fuse_notify.h"

#define FEED_LOG_MAX	(1u << 20)	/* bytes of fed pages kept */
#define FEED_LOG_PAGES	256		/* and at most this many pages */
#define FEED_BATCH	64		/* pages stored per file and round */
#define FEED_PAGE_MIN	4096
#define FEED_PAGE_MAX	(1u << 20)
#define FEED_INVAL_STEP	(256u << 10)	/* forget dropped pages by this much */

struct fs_poll {
	struct fuse_pollhandle *ph;
	struct uks_vfs_file *file;
	struct fs_poll *next;
};

struct feed_page {
	off_t off;
	size_t len;
	unsigned char *data;
};

/**
 * struct fs_feed - one file fed to the page cache
 * @ino, @file:	whose
 * @end:	bytes fed: the inode's size as the kernel knows it
 * @polled:	@end when poll last said readable (the next says so once more is fed)
 * @base:	offset of the oldest page kept; before it pages read as empty
 * @forgotten:	the kernel was told to drop its pages before this offset
 * @stored:	@end as far as NOTIFY_STORE has been made
 * @stopped:	a read(2) came: no more feeding
 * @in_round:	has pages being stored, without the lock
 * @dead:	released during a round: the round frees it
 * @log:	the pages kept, oldest at @head, @nr of them, @bytes in all
 * @scratch:	a page buffer of @scratch_len bytes for ->read_pages
 * @round_next:	the next feed with pages to store in this round
 */
struct fs_feed {
	fuse_ino_t ino;
	struct uks_vfs_file *file;
	off_t end, polled, base, forgotten, stored;
	bool stopped, in_round, dead;
	struct feed_page log[FEED_LOG_PAGES];
	unsigned int head, nr;
	size_t bytes;
	unsigned char *scratch;
	size_t scratch_len;
	struct fs_feed *next, *round_next;
};

void __uks_fuse_notify_init(struct fs_notify *n)
{
	n->se = NULL;
	pthread_mutex_init(&n->lock, NULL);
	n->polls = NULL;
	n->feeds = NULL;
}

static void feed_free(struct fs_feed *fd)
{
	for (unsigned int i = 0; i < fd->nr; i++)
		uks_kfree(fd->log[(fd->head + i) % FEED_LOG_PAGES].data);
	uks_kfree(fd->scratch);
	uks_kfree(fd);
}

void __uks_fuse_notify_destroy(struct fs_notify *n)
{
	while (n->polls) {
		struct fs_poll *p = n->polls;

		n->polls = p->next;
		fuse_pollhandle_destroy(p->ph);
		uks_kfree(p);
	}
	while (n->feeds) {
		struct fs_feed *fd = n->feeds;

		n->feeds = fd->next;
		feed_free(fd);
	}
	pthread_mutex_destroy(&n->lock);
}

static struct fs_feed *feed_of_ino(struct fs_notify *n, fuse_ino_t ino)
{
	for (struct fs_feed *fd = n->feeds; fd; fd = fd->next)
		if (fd->ino == ino)
			return fd;
	return NULL;
}

static struct fs_feed *feed_of_file(struct fs_notify *n, const struct uks_vfs_file *f)
{
	for (struct fs_feed *fd = n->feeds; fd; fd = fd->next)
		if (fd->file == f)
			return fd;
	return NULL;
}

/* ------------------------------------------------------------------ polls */

/*
 * Readable: the tree says so (an event waits), or, for a fed file, more
 * was fed since poll last said so (the events may all be in fed pages).
 */
static bool readable(struct fs_notify *n, struct uks_vfs_file *f, bool answer)
{
	struct fs_feed *fd = feed_of_file(n, f);

	if (fd && !fd->stopped && fd->end > fd->polled) {
		if (answer)
			fd->polled = fd->end;
		return true;
	}
	return uks_vfs_poll(f);
}

bool __uks_fuse_poll(struct fs_notify *n, struct uks_vfs_file *f, struct fuse_pollhandle *ph)
{
	struct fs_poll *p = NULL;
	bool ready;

	if (ph)
		p = uks_kzalloc(sizeof(*p));
	pthread_mutex_lock(&n->lock);
	ready = readable(n, f, true);
	if (!ready && p) {
		p->ph = ph;
		p->file = f;
		p->next = n->polls;
		n->polls = p;
		ph = NULL;
		p = NULL;
	}
	pthread_mutex_unlock(&n->lock);
	uks_kfree(p);
	if (ph)
		fuse_pollhandle_destroy(ph);
	return ready;
}

static void wake_polls(struct fs_notify *n)
{
	struct fs_poll **pp, *p;

	pthread_mutex_lock(&n->lock);
	for (pp = &n->polls; (p = *pp);) {
		if (readable(n, p->file, false)) {
			*pp = p->next;
			fuse_lowlevel_notify_poll(p->ph);
			fuse_pollhandle_destroy(p->ph);
			uks_kfree(p);
		} else {
			pp = &p->next;
		}
	}
	pthread_mutex_unlock(&n->lock);
}

/* ------------------------------------------------------------------ feeds */

void __uks_fuse_feed_open(struct fs_notify *n, fuse_ino_t ino, struct uks_vfs_file *f)
{
	struct fs_feed *fd;

	if (!__uks_vfs_has_pages(f))
		return;
	fd = uks_kzalloc(sizeof(*fd));
	if (!fd)
		return;		/* read(2) works; splice sees an empty file */
	fd->ino = ino;
	fd->file = f;
	pthread_mutex_lock(&n->lock);
	if (feed_of_ino(n, ino)) {
		uks_kfree(fd);
	} else {
		fd->next = n->feeds;
		n->feeds = fd;
	}
	pthread_mutex_unlock(&n->lock);
}

void __uks_fuse_notify_release(struct fs_notify *n, struct uks_vfs_file *f)
{
	struct fs_poll **pp, *p;
	struct fs_feed **fp, *fd;
	fuse_ino_t ino = 0;

	pthread_mutex_lock(&n->lock);
	for (pp = &n->polls; (p = *pp);) {
		if (p->file == f) {
			*pp = p->next;
			fuse_pollhandle_destroy(p->ph);
			uks_kfree(p);
		} else {
			pp = &p->next;
		}
	}
	for (fp = &n->feeds; (fd = *fp); fp = &fd->next) {
		if (fd->file != f)
			continue;
		*fp = fd->next;
		if (fd->end)
			ino = fd->ino;
		if (fd->in_round)
			fd->dead = true;	/* the round frees it */
		else
			feed_free(fd);
		break;
	}
	pthread_mutex_unlock(&n->lock);
	/* The next opener starts at offset 0 of an empty file. */
	if (ino)
		fuse_lowlevel_notify_inval_inode(n->se, ino, 0, 0);
}

/* Keep @len bytes of @fd->scratch as the page at @fd->end; false if out of memory. */
static bool log_append(struct fs_feed *fd, size_t len)
{
	struct feed_page *pg;
	unsigned char *data = uks_kmalloc(len);

	if (!data)
		return false;
	memcpy(data, fd->scratch, len);
	while (fd->nr && (fd->nr == FEED_LOG_PAGES || fd->bytes + len > FEED_LOG_MAX)) {
		pg = &fd->log[fd->head];
		fd->bytes -= pg->len;
		uks_kfree(pg->data);
		fd->head = (fd->head + 1) % FEED_LOG_PAGES;
		fd->nr--;
		fd->base = fd->nr ? fd->log[fd->head].off : fd->end;
	}
	pg = &fd->log[(fd->head + fd->nr++) % FEED_LOG_PAGES];
	pg->off = fd->end;
	pg->len = len;
	pg->data = data;
	fd->bytes += len;
	fd->end += (off_t)len;
	if (fd->nr == 1)
		fd->base = pg->off;
	return true;
}

/* The next complete page of @fd's file into its log; its size, or 0. */
static ssize_t take_page(struct fs_feed *fd)
{
	ssize_t got;

	for (;;) {
		if (!fd->scratch) {
			fd->scratch = uks_kmalloc(fd->scratch_len ? fd->scratch_len : FEED_PAGE_MIN);
			if (!fd->scratch)
				return 0;
			if (!fd->scratch_len)
				fd->scratch_len = FEED_PAGE_MIN;
		}
		got = __uks_vfs_read_pages(fd->file, fd->scratch, fd->scratch_len);
		if (got != -EMSGSIZE || fd->scratch_len >= FEED_PAGE_MAX)
			break;
		uks_kfree(fd->scratch);		/* the sub-buffer grew */
		fd->scratch = NULL;
		fd->scratch_len *= 2;
	}
	if (got <= 0 || !log_append(fd, (size_t)got))
		return 0;
	return got;
}

/* Store what @fd fed since its last round (its log is only changed by rounds). */
static void store(struct fs_notify *n, struct fs_feed *fd)
{
	for (unsigned int i = 0; i < fd->nr; i++) {
		struct feed_page *pg = &fd->log[(fd->head + i) % FEED_LOG_PAGES];
		struct fuse_bufvec bv = FUSE_BUFVEC_INIT(pg->len);

		if (pg->off < fd->stored)
			continue;
		bv.buf[0].mem = pg->data;
		/* -ENOENT: the kernel has no inode for it (no one has it open) */
		if (fuse_lowlevel_notify_store(n->se, fd->ino, pg->off, &bv, 0))
			break;
	}
	if (fd->base - fd->forgotten >= (off_t)FEED_INVAL_STEP) {
		fuse_lowlevel_notify_inval_inode(n->se, fd->ino, fd->forgotten,
						 fd->base - fd->forgotten);
		fd->forgotten = fd->base;
	}
}

static void feed_round(struct fs_notify *n)
{
	struct fs_feed *fd, *round = NULL;

	pthread_mutex_lock(&n->lock);
	for (fd = n->feeds; fd; fd = fd->next) {
		for (int i = 0; i < FEED_BATCH && !fd->stopped; i++)
			if (take_page(fd) <= 0)
				break;
		if (fd->end != fd->stored) {
			fd->in_round = true;
			fd->round_next = round;
			round = fd;
		}
	}
	pthread_mutex_unlock(&n->lock);

	for (fd = round; fd; fd = fd->round_next)
		store(n, fd);

	pthread_mutex_lock(&n->lock);
	while ((fd = round)) {
		round = fd->round_next;
		fd->in_round = false;
		fd->stored = fd->end;
		if (fd->dead)
			feed_free(fd);
	}
	pthread_mutex_unlock(&n->lock);
}

void __uks_fuse_notify_tick(struct fs_notify *n)
{
	feed_round(n);
	wake_polls(n);
}

/* Copy [@off, @off + @size) of the log, up to its end; empty pages before its base. */
static size_t log_copy(const struct fs_feed *fd, off_t off, size_t size, char *buf)
{
	size_t done = 0;

	if (off >= fd->end)
		return 0;
	if ((off_t)size > fd->end - off)
		size = (size_t)(fd->end - off);
	if (off < fd->base) {
		done = (size_t)(fd->base - off) < size ? (size_t)(fd->base - off) : size;
		memset(buf, 0, done);
	}
	for (unsigned int i = 0; i < fd->nr && done < size; i++) {
		const struct feed_page *pg = &fd->log[(fd->head + i) % FEED_LOG_PAGES];
		off_t at = off + (off_t)done;
		size_t from, len;

		if (at >= pg->off + (off_t)pg->len)
			continue;
		from = (size_t)(at - pg->off);
		len = pg->len - from < size - done ? pg->len - from : size - done;
		memcpy(buf + done, pg->data + from, len);
		done += len;
	}
	return done;
}

int __uks_fuse_feed_read(struct fs_notify *n, fuse_ino_t ino, struct uks_vfs_file *f,
			 off_t off, size_t size, bool direct, char *buf, size_t *got)
{
	struct fs_feed *fd;

	pthread_mutex_lock(&n->lock);
	fd = feed_of_ino(n, ino);
	if (!fd || (direct && fd->file != f)) {
		pthread_mutex_unlock(&n->lock);
		return 0;
	}
	if (direct) {
		fd->stopped = true;
		if (off >= fd->end) {
			pthread_mutex_unlock(&n->lock);
			return 0;	/* past the log: the tree's own read */
		}
	}
	/* the page cache past the end: nothing yet (a short read: the size is the end) */
	*got = log_copy(fd, off, size, buf);
	pthread_mutex_unlock(&n->lock);
	return 1;
}

off_t __uks_fuse_feed_size(struct fs_notify *n, fuse_ino_t ino, off_t size)
{
	struct fs_feed *fd;

	pthread_mutex_lock(&n->lock);
	fd = feed_of_ino(n, ino);
	if (fd)
		size = fd->end;
	pthread_mutex_unlock(&n->lock);
	return size;
}

#endif
