// SPDX-License-Identifier: MIT
/*
 * The null backend: a device of a given size that stores nothing, like
 * null_blk with memory_backed=0: writes, flushes, discards succeed at
 * once, reads succeed and leave the driver's buffers as they were.  Used
 * to measure the data path alone.  No state beyond the size, no locks.
 */
#include <errno.h>
#include <stdlib.h>

#include "vduse/vduse_int.h"

static void null_submit(struct uks_vduse_backend *be, unsigned int q, struct vduse_op *op)
{
	__uks_vduse_op_done(op, (int64_t)op->len);
}

static void null_drain(struct uks_vduse_backend *be, unsigned int q)
{
}

static int null_resize(struct uks_vduse_backend *be, uint64_t size)
{
	atomic_store_explicit(&be->size, size, memory_order_relaxed);
	return 0;
}

static void null_close(struct uks_vduse_backend *be)
{
	free(be);
}

static const struct vduse_be_ops null_ops = {
	.kind = "null",
	.submit = null_submit,
	.drain = null_drain,
	.resize = null_resize,
	.close = null_close,
};

int __uks_vduse_backend_null_open(uint64_t size, struct uks_vduse_backend **out)
{
	struct uks_vduse_backend *be = calloc(1, sizeof(*be));

	if (!be)
		return -ENOMEM;
	be->ops = &null_ops;
	atomic_init(&be->size, size);
	*out = be;
	return 0;
}
