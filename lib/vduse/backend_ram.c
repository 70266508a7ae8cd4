// SPDX-License-Identifier: MIT
/*
 * The RAM backend: the device is an anonymous private mapping (pages
 * appear on first write; discard and write-zeroes-with-unmap give them
 * back with MADV_DONTNEED, which also makes them read as zeroes).
 *
 * Threads and locks: requests on different queues copy concurrently with
 * no lock (overlapping concurrent writes are the driver's business, as on
 * any disk).  Resize moves the mapping (mremap), so it must run while no
 * queue is being served: uks_vduse_dev_resize() quiesces the queue threads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "vduse/vduse_int.h"

struct ram_backend {
	struct uks_vduse_backend be;
	uint8_t *mem;
	size_t len;
};

static void ram_zero(struct ram_backend *rb, uint64_t off, uint64_t len, bool unmap)
{
	uint64_t start = (off + 4095) & ~4095ull, end = (off + len) & ~4095ull;

	if (!unmap || end <= start) {
		memset(rb->mem + off, 0, len);
		return;
	}
	memset(rb->mem + off, 0, start - off);
	madvise(rb->mem + start, end - start, MADV_DONTNEED);
	memset(rb->mem + end, 0, off + len - end);
}

static void ram_submit(struct uks_vduse_backend *be, unsigned int q, struct vduse_op *op)
{
	struct ram_backend *rb = (struct ram_backend *)be;
	uint64_t off = op->off, done = 0;

	if (op->off > rb->len || op->len > rb->len - op->off) {
		__uks_vduse_op_done(op, -EIO);	/* capacity was checked; a shrink raced */
		return;
	}
	switch (op->kind) {
	case VDUSE_OP_READ:
	case VDUSE_OP_WRITE:
		for (unsigned int i = 0; i < op->niov; i++) {
			size_t l = op->iov[i].iov_len;

			if (op->kind == VDUSE_OP_READ)
				memcpy(op->iov[i].iov_base, rb->mem + off, l);
			else
				memcpy(rb->mem + off, op->iov[i].iov_base, l);
			off += l;
			done += l;
		}
		__uks_vduse_op_done(op, (int64_t)done);
		return;
	case VDUSE_OP_DISCARD:
	case VDUSE_OP_WRITE_ZEROES_UNMAP:
		ram_zero(rb, op->off, op->len, true);
		break;
	case VDUSE_OP_WRITE_ZEROES:
		ram_zero(rb, op->off, op->len, false);
		break;
	default:	/* FLUSH: nothing is volatile beyond RAM itself */
		break;
	}
	__uks_vduse_op_done(op, 0);
}

static void ram_drain(struct uks_vduse_backend *be, unsigned int q)
{
}

static int ram_resize(struct uks_vduse_backend *be, uint64_t size)
{
	struct ram_backend *rb = (struct ram_backend *)be;
	void *p = mremap(rb->mem, rb->len, (size_t)size, MREMAP_MAYMOVE);

	if (p == MAP_FAILED)
		return -ENOMEM;
	rb->mem = p;
	rb->len = (size_t)size;
	atomic_store_explicit(&be->size, size, memory_order_relaxed);
	return 0;
}

static void ram_close(struct uks_vduse_backend *be)
{
	struct ram_backend *rb = (struct ram_backend *)be;

	munmap(rb->mem, rb->len);
	free(rb);
}

static const struct vduse_be_ops ram_ops = {
	.kind = "ram",
	.submit = ram_submit,
	.drain = ram_drain,
	.resize = ram_resize,
	.close = ram_close,
};

int __uks_vduse_backend_ram_open(uint64_t size, struct uks_vduse_backend **out)
{
	struct ram_backend *rb;

	if (size > SIZE_MAX / 2)
		return -EINVAL;
	rb = calloc(1, sizeof(*rb));
	if (!rb)
		return -ENOMEM;
	rb->mem = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (rb->mem == MAP_FAILED) {
		free(rb);
		return -ENOMEM;
	}
	rb->len = (size_t)size;
	rb->be.ops = &ram_ops;
	atomic_init(&rb->be.size, size);
	*out = &rb->be;
	return 0;
}
