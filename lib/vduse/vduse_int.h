/* SPDX-License-Identifier: MIT */
/*
 * lib/vduse internals shared by the data path files (vring.c, blk.c,
 * backend_*.c) and the transports (dev.c/iotlb.c, emul.c).
 *
 * Object model: a struct uks_vduse_blk owns nr_queues struct vduse_vq; each
 * chain taken from a ring becomes a struct vduse_req (from the device's own
 * slab cache, iovecs inline), which issues one or more struct vduse_op to the
 * backend; the backend completes ops synchronously (ram, null) or from
 * ops->drain() (file: io_uring).  A queue is served by one thread at a
 * time, so nothing in struct vduse_vq is locked; the backend keeps one
 * context per queue for the same reason.
 */
#ifndef UKS_LIB_VDUSE_INT_H
#define UKS_LIB_VDUSE_INT_H

#include <stdatomic.h>
#include <stdint.h>
#include <sys/uio.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include <uks/slab.h>
#include <uks/vduse.h>

#include "core/compiler.h"

_Static_assert(sizeof(struct vring_desc) == 16, "vring_desc");
_Static_assert(sizeof(struct vring_used_elem) == 8, "vring_used_elem");
_Static_assert(sizeof(struct virtio_blk_outhdr) == 16, "virtio_blk_outhdr");
_Static_assert(sizeof(struct virtio_blk_discard_write_zeroes) == 16, "discard_write_zeroes");

/* Device limits that also go into the config space. */
#define VDUSE_MAX_QUEUES	64
#define VDUSE_MAX_QUEUE_SIZE	32768
#define VDUSE_MAX_DWZ_SEG	16		/* max_discard_seg, max_write_zeroes_seg */
#define VDUSE_MAX_DWZ_SECTORS	(1u << 22)	/* 2 GiB per request */
#define VDUSE_EXTRA_IOV		8		/* iovecs beyond one per descriptor */
#define VDUSE_ID_BYTES		20		/* VIRTIO_BLK_ID_BYTES */

/* ------------------------------------------------------------ backend */

enum vduse_op_kind {
	VDUSE_OP_READ,
	VDUSE_OP_WRITE,
	VDUSE_OP_FLUSH,
	VDUSE_OP_DISCARD,
	VDUSE_OP_WRITE_ZEROES,		/* zeroes written, space kept */
	VDUSE_OP_WRITE_ZEROES_UNMAP,	/* zeroes read back, space may be freed */
};

struct vduse_req;

/* One backend operation: a byte range of the device and, for READ/WRITE, iovecs. */
struct vduse_op {
	struct vduse_req *req;
	uint8_t kind;
	uint64_t off;
	uint64_t len;
	struct iovec *iov;
	unsigned int niov;
};

struct vduse_be_ops {
	const char *kind;
	/* Queue @op on queue @q; complete it now or later with __uks_vduse_op_done(). */
	void (*submit)(struct uks_vduse_backend *be, unsigned int q, struct vduse_op *op);
	/* Complete every op submitted on queue @q (file: wait for io_uring). */
	void (*drain)(struct uks_vduse_backend *be, unsigned int q);
	int (*resize)(struct uks_vduse_backend *be, uint64_t size);
	void (*close)(struct uks_vduse_backend *be);
};

struct uks_vduse_backend {
	const struct vduse_be_ops *ops;
	_Atomic uint64_t size;
	bool readonly;
	unsigned int nr_queues;
};

/* @res: bytes transferred (checked against op->len) or -errno. */
void __uks_vduse_op_done(struct vduse_op *op, int64_t res);

int __uks_vduse_backend_ram_open(uint64_t size, struct uks_vduse_backend **out);
int __uks_vduse_backend_null_open(uint64_t size, struct uks_vduse_backend **out);
int __uks_vduse_backend_file_open(const char *path, bool readonly, bool direct,
				  unsigned int nr_queues, struct uks_vduse_backend **out);

/* ------------------------------------------------------------ ring */

struct vduse_vq {
	unsigned int index;
	unsigned int num;		/* 0: stopped */
	bool event_idx;
	bool indirect;
	bool broken;
	struct vring_desc *desc;	/* host views of the three ring areas */
	struct vring_avail *avail;
	struct vring_used *used;
	uint16_t last_avail;		/* next avail slot to take */
	uint16_t used_idx;		/* shadow of used->idx */
	struct vring_desc *ind;		/* snapshot of an indirect table (num entries) */
	struct vduse_req **batch;	/* num entries */
	/* statistics (written by the queue thread, read with relaxed loads) */
	_Atomic uint64_t st_requests, st_errors, st_unsupp, st_malformed, st_irqs;
};

/*
 * One chain.  iov[0..nr_out) are the device-readable pieces, then
 * iov[nr_out..nr_out+nr_in) the device-writable ones.
 */
struct vduse_req {
	struct vduse_vq *vq;
	uint16_t head;
	bool malformed;
	uint8_t status;
	uint32_t type;
	uint64_t sector;
	uint64_t data_len;
	uint8_t *status_ptr;		/* last writable byte, NULL if none */
	uint8_t *tail_status;		/* malformed: the final descriptor's last byte */
	uint32_t used_len;		/* bytes written into writable buffers */
	int pending;			/* ops not yet done */
	int err;			/* first op error */
	uint64_t t_start;
	unsigned int nr_out, nr_in;
	struct vduse_op ops[VDUSE_MAX_DWZ_SEG];
	struct iovec iov[];
};

struct uks_vduse_blk {
	struct uks_vduse_blk_params p;
	char name[64];
	char serial[VDUSE_ID_BYTES];
	struct uks_vduse_backend *be;
	struct uks_vduse_transport *t;
	_Atomic uint64_t capacity;	/* in 512-byte sectors */
	unsigned int max_iov;		/* iovecs per request */
	unsigned int max_descs;		/* descriptors per chain (direct + indirect) */
	struct uks_kmem_cache *req_cache;
	struct vduse_vq vqs[];
};

/*
 * vring.c: take one chain.  Return 1 with @r filled (r->malformed set if
 * the chain failed validation), 0 if the ring is empty, -EIO if the ring
 * itself is unusable (the queue is then marked broken).
 */
int __uks_vduse_vring_pop(struct uks_vduse_blk *blk, struct vduse_vq *vq, struct vduse_req *r);
void __uks_vduse_vring_push(struct vduse_vq *vq, uint16_t head, uint32_t len);
/* Publish used->idx and inject the interrupt unless suppressed; @old: used idx before. */
void __uks_vduse_vring_notify(struct uks_vduse_blk *blk, struct vduse_vq *vq, uint16_t old);
/* EVENT_IDX: publish avail_event; return true if more chains arrived meanwhile. */
bool __uks_vduse_vring_enable_kicks(struct vduse_vq *vq);
int __uks_vduse_vring_map(struct uks_vduse_blk *blk, struct vduse_vq *vq,
			  const struct uks_vduse_vq_addr *a);

/* blk.c: start the request @r describes (its ops go to the backend). */
void __uks_vduse_blk_start(struct uks_vduse_blk *blk, struct vduse_req *r);
/* blk.c: write the status, fill the used element, trace, free @r. */
void __uks_vduse_blk_finish(struct uks_vduse_blk *blk, struct vduse_req *r);

/* Copy helpers over a piece list (partial reads across mapping boundaries). */
size_t __uks_vduse_iov_copy_from(const struct iovec *iov, unsigned int n, size_t skip, void *dst,
				 size_t len);
size_t __uks_vduse_iov_copy_to(const struct iovec *iov, unsigned int n, size_t skip,
			       const void *src, size_t len);
void __uks_vduse_iov_zero(const struct iovec *iov, unsigned int n);

#endif
