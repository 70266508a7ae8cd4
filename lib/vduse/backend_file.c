// SPDX-License-Identifier: MIT
/*
 * The file backend: a regular file or a block device, read and written
 * through io_uring (liburing), one ring per queue so queues never share a
 * submission path.  O_DIRECT on request (the driver's buffers then need
 * the alignment the file system wants; misaligned requests fail IOERR).
 *
 * Mapping: READ/WRITE -> readv/writev at the byte offset; FLUSH -> fsync
 * with IORING_FSYNC_DATASYNC (fdatasync) marked IOSQE_IO_DRAIN, so it
 * starts only after every write submitted before it on that ring has
 * completed; DISCARD and WRITE_ZEROES with UNMAP -> fallocate(PUNCH_HOLE|
 * KEEP_SIZE); WRITE_ZEROES -> fallocate(ZERO_RANGE|KEEP_SIZE), falling back
 * to writing zeroes where the file system does not support it.  A discard
 * the file system cannot do succeeds (it is advisory).
 *
 * Durability: a write acknowledged before a FLUSH that was acknowledged is
 * on stable storage (fdatasync returned); tests/unit/vduse/crash.c kills
 * the device process after such a pair and reads the file.
 *
 * Without liburing (config.h says so) the same ops run synchronously with
 * preadv/pwritev/fdatasync/fallocate.
 *
 * Threads and locks: queue q's ring is used only by the thread serving q.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include "config.h"
#include "core/log.h"
#include "vduse/vduse_int.h"

#if UKS_HAVE_LIBURING
#include <liburing.h>
#endif

#define RING_DEPTH_MAX 1024

struct file_queue {
#if UKS_HAVE_LIBURING
	struct io_uring ring;
	bool ring_ok;
#endif
	unsigned int inflight;
};

struct file_backend {
	struct uks_vduse_backend be;
	int fd;
	bool blockdev;
	struct file_queue *qs;
};

static const uint8_t zero_page[4096];

/* Write zeroes with pwrite (the fallback of ZERO_RANGE). */
static int64_t write_zeroes_sync(int fd, uint64_t off, uint64_t len)
{
	while (len) {
		size_t l = len < sizeof(zero_page) ? (size_t)len : sizeof(zero_page);
		ssize_t n = pwrite(fd, zero_page, l, (off_t)off);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

static int fallocate_mode(const struct vduse_op *op)
{
	if (op->kind == VDUSE_OP_WRITE_ZEROES)
		return FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE;
	return FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
}

/* Complete @op with result @res, applying the fallbacks of the file comment. */
static void file_complete(struct file_backend *fb, struct vduse_op *op, int64_t res)
{
	if (res == -EOPNOTSUPP || res == -EINVAL) {
		if (op->kind == VDUSE_OP_DISCARD) {
			res = 0;
		} else if (op->kind == VDUSE_OP_WRITE_ZEROES ||
			   op->kind == VDUSE_OP_WRITE_ZEROES_UNMAP) {
			res = write_zeroes_sync(fb->fd, op->off, op->len);
		}
	}
	if (res > 0 && op->kind != VDUSE_OP_READ && op->kind != VDUSE_OP_WRITE)
		res = 0;
	__uks_vduse_op_done(op, res);
}

static int64_t file_sync_op(struct file_backend *fb, struct vduse_op *op)
{
	ssize_t n;

	switch (op->kind) {
	case VDUSE_OP_READ:
		n = preadv(fb->fd, op->iov, (int)op->niov, (off_t)op->off);
		return n < 0 ? -errno : n;
	case VDUSE_OP_WRITE:
		n = pwritev(fb->fd, op->iov, (int)op->niov, (off_t)op->off);
		return n < 0 ? -errno : n;
	case VDUSE_OP_FLUSH:
		return fdatasync(fb->fd) ? -errno : 0;
	default:
		return fallocate(fb->fd, fallocate_mode(op), (off_t)op->off, (off_t)op->len) ?
			-errno : 0;
	}
}

#if UKS_HAVE_LIBURING
static void file_reap(struct file_backend *fb, struct file_queue *fq, bool wait)
{
	while (fq->inflight) {
		struct io_uring_cqe *cqe;
		int ret = wait ? io_uring_wait_cqe(&fq->ring, &cqe) : io_uring_peek_cqe(&fq->ring, &cqe);

		if (ret == -EINTR)
			continue;
		if (ret)
			break;
		file_complete(fb, io_uring_cqe_get_data(cqe), cqe->res);
		io_uring_cqe_seen(&fq->ring, cqe);
		fq->inflight--;
	}
}
#endif

static void file_submit(struct uks_vduse_backend *be, unsigned int q, struct vduse_op *op)
{
	struct file_backend *fb = (struct file_backend *)be;
	struct file_queue *fq = &fb->qs[q];
#if UKS_HAVE_LIBURING
	struct io_uring_sqe *sqe;

	if (!fq->ring_ok)
		goto sync;
	sqe = io_uring_get_sqe(&fq->ring);
	if (!sqe) {
		io_uring_submit(&fq->ring);
		file_reap(fb, fq, false);
		sqe = io_uring_get_sqe(&fq->ring);
	}
	while (!sqe) {		/* ring full of in-flight ops: wait for one */
		io_uring_submit_and_wait(&fq->ring, 1);
		file_reap(fb, fq, false);
		sqe = io_uring_get_sqe(&fq->ring);
	}
	switch (op->kind) {
	case VDUSE_OP_READ:
		io_uring_prep_readv(sqe, fb->fd, op->iov, op->niov, op->off);
		break;
	case VDUSE_OP_WRITE:
		io_uring_prep_writev(sqe, fb->fd, op->iov, op->niov, op->off);
		break;
	case VDUSE_OP_FLUSH:
		io_uring_prep_fsync(sqe, fb->fd, IORING_FSYNC_DATASYNC);
		sqe->flags |= IOSQE_IO_DRAIN;
		break;
	default:
		io_uring_prep_fallocate(sqe, fb->fd, fallocate_mode(op), op->off, op->len);
		break;
	}
	io_uring_sqe_set_data(sqe, op);
	fq->inflight++;
	return;
sync:
#endif
	(void)fq;
	file_complete(fb, op, file_sync_op(fb, op));
}

static void file_drain(struct uks_vduse_backend *be, unsigned int q)
{
#if UKS_HAVE_LIBURING
	struct file_backend *fb = (struct file_backend *)be;
	struct file_queue *fq = &fb->qs[q];

	if (!fq->inflight)
		return;
	io_uring_submit(&fq->ring);
	file_reap(fb, fq, true);
#endif
}

static int file_resize(struct uks_vduse_backend *be, uint64_t size)
{
	struct file_backend *fb = (struct file_backend *)be;

	if (fb->blockdev || be->readonly)
		return -EOPNOTSUPP;
	if (ftruncate(fb->fd, (off_t)size))
		return -errno;
	atomic_store_explicit(&be->size, size, memory_order_relaxed);
	return 0;
}

static void file_close(struct uks_vduse_backend *be)
{
	struct file_backend *fb = (struct file_backend *)be;

#if UKS_HAVE_LIBURING
	for (unsigned int i = 0; i < be->nr_queues; i++)
		if (fb->qs[i].ring_ok)
			io_uring_queue_exit(&fb->qs[i].ring);
#endif
	free(fb->qs);
	close(fb->fd);
	free(fb);
}

static const struct vduse_be_ops file_ops = {
	.kind = "file",
	.submit = file_submit,
	.drain = file_drain,
	.resize = file_resize,
	.close = file_close,
};

int __uks_vduse_backend_file_open(const char *path, bool readonly, bool direct,
				  unsigned int nr_queues, struct uks_vduse_backend **out)
{
	struct file_backend *fb;
	struct stat st;
	uint64_t size;
	int fd;

	fd = open(path, (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC | (direct ? O_DIRECT : 0));
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int e = -errno;

		close(fd);
		return e;
	}
	if (S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size)) {
			int e = -errno;

			close(fd);
			return e;
		}
	} else if (S_ISREG(st.st_mode)) {
		size = (uint64_t)st.st_size;
	} else {
		close(fd);
		return -EINVAL;
	}
	if (!size || size % 512) {
		close(fd);
		return -EINVAL;
	}
	fb = calloc(1, sizeof(*fb));
	if (fb)
		fb->qs = calloc(nr_queues, sizeof(*fb->qs));
	if (!fb || !fb->qs) {
		free(fb);
		close(fd);
		return -ENOMEM;
	}
	fb->fd = fd;
	fb->blockdev = S_ISBLK(st.st_mode);
	fb->be.ops = &file_ops;
	fb->be.readonly = readonly;
	fb->be.nr_queues = nr_queues;
	atomic_init(&fb->be.size, size);
#if UKS_HAVE_LIBURING
	for (unsigned int i = 0; i < nr_queues; i++) {
		int ret = io_uring_queue_init(RING_DEPTH_MAX, &fb->qs[i].ring, 0);

		if (ret) {
			pr_warn("vduse: %s: io_uring unavailable (%d), synchronous I/O", path, ret);
			continue;
		}
		fb->qs[i].ring_ok = true;
	}
#endif
	*out = &fb->be;
	return 0;
}
