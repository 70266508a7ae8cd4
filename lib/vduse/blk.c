// SPDX-License-Identifier: MIT
/*
 * virtio-blk requests (virtio 1.x, 5.2.6) on top of the split rings of
 * vring.c and the backends: the device object, the per-queue serve loop
 * and the request state machine.
 *
 * A request: a 16-byte header {le32 type, le32 ioprio, le64 sector} in the
 * device-readable part (it may straddle descriptors), data, and the status
 * byte = the last byte of the last device-writable piece.  IN/OUT need a
 * length that is a multiple of 512, a sector aligned to the logical block
 * size and a range inside the capacity (sectors are always 512 bytes);
 * FLUSH flushes the backend; GET_ID returns the 20-byte serial (the device
 * name, NUL-padded); DISCARD and WRITE_ZEROES carry 1..16 segments
 * {le64 sector, le32 num_sectors, le32 flags}: unknown flags and UNMAP on
 * DISCARD are UNSUPP, ranges out of bounds IOERR.  Everything else UNSUPP.
 * Writes on a read-only device are IOERR.  used.len = bytes written to
 * writable buffers (data + status).
 *
 * Why batches: the serve loop takes every available chain (up to the ring
 * size) before waiting for the backend, so the file backend keeps all of
 * them in flight in io_uring at once, and one interrupt covers the batch.
 *
 * Threads and locks: one thread per queue at a time; queues share nothing
 * but the backend (per-queue contexts) and the slab cache (thread-safe).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/core.h>

#include "core/log.h"
#include "vduse/vduse_int.h"

#define UKS_CREATE_TRACE_POINTS
#include "vduse/events.h"

#define TYPE_MALFORMED 0xffffffffu

/* Copy @len bytes between @buf and the pieces, from byte @skip of the pieces on. */
static size_t iov_copy(const struct iovec *iov, unsigned int n, size_t skip, uint8_t *buf,
		       size_t len, bool to_iov)
{
	size_t done = 0;

	for (unsigned int i = 0; i < n && done < len; i++) {
		uint8_t *piece = iov[i].iov_base;
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		l -= skip;
		if (l > len - done)
			l = len - done;
		if (to_iov)
			memcpy(piece + skip, buf + done, l);
		else
			memcpy(buf + done, piece + skip, l);
		done += l;
		skip = 0;
	}
	return done;
}

size_t __uks_vduse_iov_copy_from(const struct iovec *iov, unsigned int n, size_t skip, void *dst,
				 size_t len)
{
	return iov_copy(iov, n, skip, dst, len, false);
}

size_t __uks_vduse_iov_copy_to(const struct iovec *iov, unsigned int n, size_t skip,
			       const void *src, size_t len)
{
	return iov_copy(iov, n, skip, (uint8_t *)src, len, true);	/* only read from */
}

void __uks_vduse_iov_zero(const struct iovec *iov, unsigned int n)
{
	for (unsigned int i = 0; i < n; i++)
		memset(iov[i].iov_base, 0, iov[i].iov_len);
}

static uint64_t iov_total(const struct iovec *iov, unsigned int n)
{
	uint64_t t = 0;

	for (unsigned int i = 0; i < n; i++)
		t += iov[i].iov_len;
	return t;
}

void __uks_vduse_op_done(struct vduse_op *op, int64_t res)
{
	struct vduse_req *r = op->req;

	if (res < 0 && !r->err)
		r->err = (int)res;
	else if (res >= 0 && (op->kind == VDUSE_OP_READ || op->kind == VDUSE_OP_WRITE) &&
		 (uint64_t)res != op->len && !r->err)
		r->err = -EIO;		/* short transfer */
	r->pending--;
}

/* Drop @skip bytes from the front of the readable pieces (the header). */
static void trim_front(struct iovec **iov, unsigned int *n, size_t skip)
{
	while (*n && skip >= (*iov)->iov_len) {
		skip -= (*iov)->iov_len;
		(*iov)++;
		(*n)--;
	}
	if (*n && skip) {
		(*iov)->iov_base = (uint8_t *)(*iov)->iov_base + skip;
		(*iov)->iov_len -= skip;
	}
}

/* A sector range of @nsec 512-byte sectors inside the device, block aligned? */
static bool range_ok(const struct uks_vduse_blk *blk, uint64_t sector, uint64_t nsec)
{
	uint64_t cap = atomic_load_explicit(&blk->capacity, memory_order_relaxed);
	uint64_t align = blk->p.block_size / 512;

	if ((sector | nsec) & (align - 1))
		return false;
	return sector <= cap && nsec <= cap - sector;
}

static void submit_ops(struct uks_vduse_blk *blk, struct vduse_req *r, unsigned int nops)
{
	r->pending = (int)nops;
	r->err = 0;
	for (unsigned int i = 0; i < nops; i++) {
		r->ops[i].req = r;
		blk->be->ops->submit(blk->be, r->vq->index, &r->ops[i]);
	}
}

static void start_rw(struct uks_vduse_blk *blk, struct vduse_req *r, struct iovec *iov,
		     unsigned int n, bool write)
{
	r->data_len = iov_total(iov, n);
	if (r->data_len % 512 || !range_ok(blk, r->sector, r->data_len / 512) ||
	    (write && blk->p.readonly)) {
		r->status = VIRTIO_BLK_S_IOERR;
		return;
	}
	if (!write)
		r->used_len += (uint32_t)r->data_len;
	if (!r->data_len)
		return;		/* nothing to move: OK */
	r->ops[0] = (struct vduse_op){
		.kind = write ? VDUSE_OP_WRITE : VDUSE_OP_READ,
		.off = r->sector * 512, .len = r->data_len, .iov = iov, .niov = n,
	};
	submit_ops(blk, r, 1);
}

static void start_dwz(struct uks_vduse_blk *blk, struct vduse_req *r, struct iovec *iov,
		      unsigned int n)
{
	struct virtio_blk_discard_write_zeroes seg[VDUSE_MAX_DWZ_SEG];
	uint64_t len = iov_total(iov, n);
	unsigned int nseg = (unsigned int)(len / sizeof(seg[0]));
	bool discard = r->type == VIRTIO_BLK_T_DISCARD;

	if (blk->p.readonly) {
		r->status = VIRTIO_BLK_S_IOERR;
		return;
	}
	if (!len || len % sizeof(seg[0])) {
		r->status = VIRTIO_BLK_S_IOERR;
		return;
	}
	if (nseg > VDUSE_MAX_DWZ_SEG) {
		r->status = VIRTIO_BLK_S_UNSUPP;
		return;
	}
	__uks_vduse_iov_copy_from(iov, n, 0, seg, len);
	r->sector = le64toh(seg[0].sector);
	r->data_len = 0;
	for (unsigned int i = 0; i < nseg; i++) {
		uint64_t s = le64toh(seg[i].sector);
		uint32_t ns = le32toh(seg[i].num_sectors), fl = le32toh(seg[i].flags);

		if ((fl & ~VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP) ||
		    (discard && (fl & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP))) {
			r->status = VIRTIO_BLK_S_UNSUPP;
			return;
		}
		if (ns > VDUSE_MAX_DWZ_SECTORS || !range_ok(blk, s, ns)) {
			r->status = VIRTIO_BLK_S_IOERR;
			return;
		}
		r->ops[i] = (struct vduse_op){
			.kind = discard ? VDUSE_OP_DISCARD :
				(fl & VIRTIO_BLK_WRITE_ZEROES_FLAG_UNMAP) ?
				VDUSE_OP_WRITE_ZEROES_UNMAP : VDUSE_OP_WRITE_ZEROES,
			.off = s * 512, .len = (uint64_t)ns * 512,
		};
		r->data_len += (uint64_t)ns * 512;
	}
	submit_ops(blk, r, nseg);
}

void __uks_vduse_blk_start(struct uks_vduse_blk *blk, struct vduse_req *r)
{
	struct iovec *out = r->iov, *in = r->iov + r->nr_out;
	unsigned int nout = r->nr_out, nin = r->nr_in;
	struct virtio_blk_outhdr hdr;

	r->t_start = uks_trace_vduse_vduse_complete_enabled() ? uks_clock_mono_ns() : 0;
	r->status = VIRTIO_BLK_S_OK;
	r->status_ptr = NULL;
	r->used_len = 0;
	r->pending = 0;
	r->err = 0;
	r->type = TYPE_MALFORMED;
	r->sector = 0;
	r->data_len = 0;
	atomic_fetch_add_explicit(&r->vq->st_requests, 1, memory_order_relaxed);

	/* The status byte: the last byte of the last writable piece. */
	if (r->malformed && r->tail_status) {
		r->status_ptr = r->tail_status;
		r->used_len = 1;
	} else if (nin) {
		struct iovec *last = &in[nin - 1];

		r->status_ptr = (uint8_t *)last->iov_base + last->iov_len - 1;
		if (!--last->iov_len)
			nin--;
		r->used_len = 1;
	}
	if (r->malformed || !r->status_ptr) {
		r->malformed = true;
		r->status = VIRTIO_BLK_S_IOERR;
		atomic_fetch_add_explicit(&r->vq->st_malformed, 1, memory_order_relaxed);
		uks_trace_vduse_vduse_request(r->vq->index, r->type, 0, 0);
		return;
	}
	if (__uks_vduse_iov_copy_from(out, nout, 0, &hdr, sizeof(hdr)) < sizeof(hdr)) {
		r->status = VIRTIO_BLK_S_IOERR;
		uks_trace_vduse_vduse_request(r->vq->index, r->type, 0, 0);
		return;
	}
	trim_front(&out, &nout, sizeof(hdr));
	r->type = le32toh(hdr.type) & ~VIRTIO_BLK_T_BARRIER;
	r->sector = le64toh(hdr.sector);

	switch (r->type) {
	case VIRTIO_BLK_T_IN:
		start_rw(blk, r, in, nin, false);
		break;
	case VIRTIO_BLK_T_OUT:
		start_rw(blk, r, out, nout, true);
		break;
	case VIRTIO_BLK_T_FLUSH:
		r->ops[0] = (struct vduse_op){ .kind = VDUSE_OP_FLUSH };
		submit_ops(blk, r, 1);
		break;
	case VIRTIO_BLK_T_GET_ID: {
		uint64_t room = iov_total(in, nin);
		size_t l = room < VDUSE_ID_BYTES ? (size_t)room : VDUSE_ID_BYTES;

		r->data_len = __uks_vduse_iov_copy_to(in, nin, 0, blk->serial, l);
		r->used_len += (uint32_t)r->data_len;
		break;
	}
	case VIRTIO_BLK_T_DISCARD:
	case VIRTIO_BLK_T_WRITE_ZEROES:
		start_dwz(blk, r, out, nout);
		break;
	default:
		r->status = VIRTIO_BLK_S_UNSUPP;
		break;
	}
	uks_trace_vduse_vduse_request(r->vq->index, r->type, r->sector, (unsigned int)r->data_len);
}

void __uks_vduse_blk_finish(struct uks_vduse_blk *blk, struct vduse_req *r)
{
	struct vduse_vq *vq = r->vq;

	if (r->status == VIRTIO_BLK_S_OK && r->err)
		r->status = VIRTIO_BLK_S_IOERR;
	if (r->status != VIRTIO_BLK_S_OK && r->status_ptr)
		r->used_len = 1;
	if (r->status_ptr)
		__atomic_store_n(r->status_ptr, r->status, __ATOMIC_RELAXED);
	if (r->status == VIRTIO_BLK_S_IOERR)
		atomic_fetch_add_explicit(&vq->st_errors, 1, memory_order_relaxed);
	else if (r->status == VIRTIO_BLK_S_UNSUPP)
		atomic_fetch_add_explicit(&vq->st_unsupp, 1, memory_order_relaxed);
	if (uks_trace_vduse_vduse_complete_enabled())
		uks_trace_vduse_vduse_complete(vq->index, r->type, r->sector,
					       (unsigned int)r->data_len, r->status,
					       r->t_start ? uks_clock_mono_ns() - r->t_start : 0);
	__uks_vduse_vring_push(vq, r->head, r->used_len);
	uks_kmem_cache_free(blk->req_cache, r);
}

UKS_EXPORT int uks_vduse_blk_queue_process(struct uks_vduse_blk *blk, unsigned int q)
{
	struct vduse_vq *vq;
	int total = 0;

	if (q >= blk->p.nr_queues)
		return -EINVAL;
	vq = &blk->vqs[q];
	if (!vq->num)
		return -ENODEV;
	if (vq->broken)
		return -EIO;
	for (;;) {
		uint16_t old = vq->used_idx;
		unsigned int n = 0;
		int ret = 0;

		while (n < vq->num) {
			struct vduse_req *r = uks_kmem_cache_alloc(blk->req_cache);

			if (!r) {
				ret = -ENOMEM;
				break;
			}
			ret = __uks_vduse_vring_pop(blk, vq, r);
			if (ret <= 0) {
				uks_kmem_cache_free(blk->req_cache, r);
				break;
			}
			__uks_vduse_blk_start(blk, r);
			vq->batch[n++] = r;
		}
		if (n) {
			blk->be->ops->drain(blk->be, q);
			for (unsigned int i = 0; i < n; i++)
				__uks_vduse_blk_finish(blk, vq->batch[i]);
			__uks_vduse_vring_notify(blk, vq, old);
			total += (int)n;
		}
		if (ret < 0)
			return ret;
		if (n == vq->num)
			continue;
		if (!__uks_vduse_vring_enable_kicks(vq))
			return total;
	}
}

UKS_EXPORT int uks_vduse_blk_create(const struct uks_vduse_blk_params *p, struct uks_vduse_backend *be,
			 struct uks_vduse_transport *t, struct uks_vduse_blk **out)
{
	struct uks_vduse_blk *blk;
	char cname[96];
	size_t sz;

	if (!p->name || !p->name[0] || strlen(p->name) >= sizeof(blk->name))
		return -EINVAL;
	if (!p->nr_queues || p->nr_queues > VDUSE_MAX_QUEUES || p->nr_queues > be->nr_queues)
		return -EINVAL;
	if (p->queue_size < 2 || p->queue_size > VDUSE_MAX_QUEUE_SIZE ||
	    (p->queue_size & (p->queue_size - 1)))
		return -EINVAL;
	if (p->block_size != 512 && p->block_size != 4096)
		return -EINVAL;
	if (uks_vduse_backend_size(be) % p->block_size)
		return -EINVAL;
	blk = calloc(1, sizeof(*blk) + p->nr_queues * sizeof(blk->vqs[0]));
	if (!blk)
		return -ENOMEM;
	blk->p = *p;
	snprintf(blk->name, sizeof(blk->name), "%s", p->name);
	blk->p.name = blk->name;
	blk->p.readonly = p->readonly || be->readonly;
	/* The serial: the name, NUL-padded, unterminated at 20 bytes. */
	memcpy(blk->serial, blk->name, strnlen(blk->name, sizeof(blk->serial)));
	blk->be = be;
	blk->t = t;
	atomic_init(&blk->capacity, uks_vduse_backend_size(be) / 512);
	blk->max_iov = p->queue_size + VDUSE_EXTRA_IOV;
	sz = sizeof(struct vduse_req) + blk->max_iov * sizeof(struct iovec);
	snprintf(cname, sizeof(cname), "vduse_req-%s", blk->name);
	blk->req_cache = uks_kmem_cache_create(cname, sz, 0, 0, NULL);
	if (!blk->req_cache) {
		free(blk);
		return -ENOMEM;
	}
	for (unsigned int i = 0; i < p->nr_queues; i++) {
		struct vduse_vq *vq = &blk->vqs[i];

		vq->index = i;
		vq->ind = calloc(p->queue_size, sizeof(*vq->ind));
		vq->batch = calloc(p->queue_size, sizeof(*vq->batch));
		if (!vq->ind || !vq->batch) {
			uks_vduse_blk_destroy(blk);
			return -ENOMEM;
		}
	}
	*out = blk;
	return 0;
}

UKS_EXPORT void uks_vduse_blk_destroy(struct uks_vduse_blk *blk)
{
	if (!blk)
		return;
	for (unsigned int i = 0; i < blk->p.nr_queues; i++) {
		free(blk->vqs[i].ind);
		free(blk->vqs[i].batch);
	}
	uks_kmem_cache_destroy(blk->req_cache);
	free(blk);
}

UKS_EXPORT int uks_vduse_blk_queue_start(struct uks_vduse_blk *blk, unsigned int q,
			      const struct uks_vduse_vq_addr *addr)
{
	int ret;

	if (q >= blk->p.nr_queues)
		return -EINVAL;
	ret = __uks_vduse_vring_map(blk, &blk->vqs[q], addr);
	if (ret)
		blk->vqs[q].num = 0;
	return ret;
}

UKS_EXPORT void uks_vduse_blk_queue_stop(struct uks_vduse_blk *blk, unsigned int q)
{
	if (q >= blk->p.nr_queues)
		return;
	blk->vqs[q].num = 0;
	blk->vqs[q].desc = NULL;
	blk->vqs[q].avail = NULL;
	blk->vqs[q].used = NULL;
}

UKS_EXPORT bool uks_vduse_blk_queue_has_work(const struct uks_vduse_blk *blk, unsigned int q)
{
	const struct vduse_vq *vq;

	if (q >= blk->p.nr_queues)
		return false;
	vq = &blk->vqs[q];
	if (!vq->num || vq->broken)
		return false;
	return le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE)) != vq->last_avail;
}

UKS_EXPORT uint16_t uks_vduse_blk_queue_avail_idx(const struct uks_vduse_blk *blk, unsigned int q)
{
	return q < blk->p.nr_queues ? blk->vqs[q].last_avail : 0;
}

UKS_EXPORT void uks_vduse_blk_set_capacity(struct uks_vduse_blk *blk, uint64_t size)
{
	atomic_store_explicit(&blk->capacity, size / 512, memory_order_relaxed);
}

UKS_EXPORT uint64_t uks_vduse_blk_capacity(const struct uks_vduse_blk *blk)
{
	return atomic_load_explicit(&blk->capacity, memory_order_relaxed);
}

UKS_EXPORT void uks_vduse_blk_get_stats(const struct uks_vduse_blk *blk, struct uks_vduse_blk_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (unsigned int i = 0; i < blk->p.nr_queues; i++) {
		const struct vduse_vq *vq = &blk->vqs[i];

		st->requests += atomic_load_explicit(&vq->st_requests, memory_order_relaxed);
		st->errors += atomic_load_explicit(&vq->st_errors, memory_order_relaxed);
		st->unsupported += atomic_load_explicit(&vq->st_unsupp, memory_order_relaxed);
		st->malformed += atomic_load_explicit(&vq->st_malformed, memory_order_relaxed);
		st->irqs += atomic_load_explicit(&vq->st_irqs, memory_order_relaxed);
	}
}
