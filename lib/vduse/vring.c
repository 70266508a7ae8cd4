// SPDX-License-Identifier: MIT
/*
 * Split virtqueues, device side (virtio 1.x, 2.7): take chains from the
 * available ring, validate them, turn them into host iovecs through the
 * transport, and return them on the used ring with the interrupt decision
 * of VIRTIO_RING_F_EVENT_IDX or VRING_AVAIL_F_NO_INTERRUPT.
 *
 * Why this shape: the rings live in memory the driver keeps writing, so
 * every descriptor is read exactly once into a local copy (an indirect
 * table is snapshotted whole) and nothing read from the ring is trusted:
 * indices are bounded by the table they index, chains by the table size
 * (a longer chain has a loop), lengths must be non-zero, addresses must
 * translate through the transport for their whole length with the access
 * the descriptor implies, readable descriptors must precede writable ones,
 * and an indirect descriptor may neither carry NEXT nor appear inside a
 * table.  A chain that fails any of these becomes a "malformed" request
 * answered IOERR: nothing but the status byte is ever touched.  The status
 * byte is the last byte of the chain's final descriptor when only a buffer
 * address was bad (the rest of the chain is still walked, unmapped, to
 * find it), else the last validated writable byte, else there is none.  A ring that is itself inconsistent (avail.idx
 * more than num ahead, a head outside the table) stops the queue.
 *
 * Memory order: acquire on avail->idx before reading ring entries and
 * descriptors; release on used->idx after the used elements (and the data);
 * a full fence between publishing used->idx or avail_event and reading the
 * driver's used_event / avail->idx.
 *
 * Threads and locks: one thread per queue at a time, no locks.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "core/log.h"
#include "vduse/vduse_int.h"

static inline uint16_t *used_event_ptr(struct vduse_vq *vq)
{
	return &vq->avail->ring[vq->num];
}

static inline uint16_t *avail_event_ptr(struct vduse_vq *vq)
{
	return (uint16_t *)&vq->used->ring[vq->num];
}

static void *map_whole(struct uks_vduse_blk *blk, uint64_t iova, uint64_t len, unsigned int perm)
{
	uint64_t avail = 0;
	void *p = blk->t->ops->map(blk->t, iova, len, perm, &avail);

	return p && avail >= len ? p : NULL;
}

int __uks_vduse_vring_map(struct uks_vduse_blk *blk, struct vduse_vq *vq,
			  const struct uks_vduse_vq_addr *a)
{
	unsigned int num = a->num;

	if (num < 2 || num > blk->p.queue_size || (num & (num - 1)))
		return -EINVAL;
	if ((a->desc & 15) || (a->avail & 1) || (a->used & 3))
		return -EINVAL;
	vq->desc = map_whole(blk, a->desc, 16ull * num, UKS_VDUSE_ACCESS_RO);
	vq->avail = map_whole(blk, a->avail, 6ull + 2ull * num, UKS_VDUSE_ACCESS_RO);
	vq->used = map_whole(blk, a->used, 6ull + 8ull * num, UKS_VDUSE_ACCESS_RW);
	if (!vq->desc || !vq->avail || !vq->used)
		return -EFAULT;
	vq->num = num;
	vq->last_avail = a->avail_idx;
	vq->used_idx = le16toh(__atomic_load_n(&vq->used->idx, __ATOMIC_ACQUIRE));
	vq->event_idx = a->features & (1ull << VIRTIO_RING_F_EVENT_IDX);
	vq->indirect = a->features & (1ull << VIRTIO_RING_F_INDIRECT_DESC);
	vq->broken = false;
	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), htole16(vq->last_avail), __ATOMIC_RELAXED);
	return 0;
}

/*
 * Append [iova, iova+len) as host pieces; -EFAULT if any byte is unmapped,
 * -E2BIG if out of iovecs.  All or nothing: a failing descriptor adds no piece.
 */
static int add_pieces(struct uks_vduse_blk *blk, struct vduse_req *r, uint64_t iova,
		      uint32_t len, bool write)
{
	unsigned int perm = write ? UKS_VDUSE_ACCESS_WO : UKS_VDUSE_ACCESS_RO;
	unsigned int n = r->nr_out + r->nr_in, out0 = r->nr_out, in0 = r->nr_in;

	if (iova + len - 1 < iova)
		return -EFAULT;		/* wraps around the IOVA space */
	while (len) {
		uint64_t avail = 0;
		void *p = blk->t->ops->map(blk->t, iova, len, perm, &avail);

		if (!p || !avail || n >= blk->max_iov) {
			/* Drop this descriptor's pieces: none of it is used, not even its end. */
			r->nr_out = out0;
			r->nr_in = in0;
			return !p || !avail ? -EFAULT : -E2BIG;
		}
		if (avail > len)
			avail = len;
		r->iov[n].iov_base = p;
		r->iov[n].iov_len = avail;
		n++;
		if (write)
			r->nr_in++;
		else
			r->nr_out++;
		iova += avail;
		len -= (uint32_t)avail;
	}
	return 0;
}

/* Snapshot an indirect table of @n entries at @iova into vq->ind. */
static int copy_table(struct uks_vduse_blk *blk, struct vduse_vq *vq, uint64_t iova,
		      unsigned int n)
{
	uint8_t *dst = (uint8_t *)vq->ind;
	uint64_t len = 16ull * n;

	if (iova + len - 1 < iova)
		return -EFAULT;
	while (len) {
		uint64_t avail = 0;
		void *p = blk->t->ops->map(blk->t, iova, len, UKS_VDUSE_ACCESS_RO, &avail);

		if (!p || !avail)
			return -EFAULT;
		if (avail > len)
			avail = len;
		memcpy(dst, p, avail);
		dst += avail;
		iova += avail;
		len -= avail;
	}
	return 0;
}

/*
 * The last byte of the chain's final descriptor, if it is writable and
 * maps: where a chain with a bad buffer in its middle still gets its IOERR.
 */
static uint8_t *tail_status(struct uks_vduse_blk *blk, uint64_t iova, uint32_t len)
{
	uint64_t avail = 0;

	if (iova + len - 1 < iova)
		return NULL;
	return blk->t->ops->map(blk->t, iova + len - 1, 1, UKS_VDUSE_ACCESS_WO, &avail);
}

static int walk_chain(struct uks_vduse_blk *blk, struct vduse_vq *vq, struct vduse_req *r)
{
	const struct vring_desc *table = vq->desc;
	unsigned int tsize = vq->num, count = 0, idx = r->head;
	bool in_table = false;
	int fault = 0;		/* a buffer did not map: walk on to find the status byte */

	r->tail_status = NULL;
	for (;;) {
		struct vring_desc d;
		bool faulted_here = false;
		uint16_t flags;
		uint32_t len;
		int ret;

		memcpy(&d, &table[idx], sizeof(d));	/* one read of driver memory */
		if (++count > tsize)
			return -ELOOP;	/* longer than its table: a loop */
		flags = le16toh(d.flags);
		len = le32toh(d.len);
		if (flags & VRING_DESC_F_INDIRECT) {
			if (in_table || !vq->indirect || (flags & VRING_DESC_F_NEXT))
				return -EINVAL;
			if (!len || len % 16 || len / 16 > vq->num)
				return -EINVAL;
			ret = copy_table(blk, vq, le64toh(d.addr), len / 16);
			if (ret)
				return ret;
			table = vq->ind;
			tsize = len / 16;
			idx = 0;
			count = 0;
			in_table = true;
			continue;
		}
		if (!len)
			return -EINVAL;
		if (!(flags & VRING_DESC_F_WRITE) && r->nr_in)
			return -EINVAL;	/* readable after writable */
		if (!fault) {
			ret = add_pieces(blk, r, le64toh(d.addr), len, flags & VRING_DESC_F_WRITE);
			if (ret == -EFAULT)
				fault = ret, faulted_here = true;
			else if (ret)
				return ret;
		}
		if (!(flags & VRING_DESC_F_NEXT)) {
			if (fault && !faulted_here && (flags & VRING_DESC_F_WRITE))
				r->tail_status = tail_status(blk, le64toh(d.addr), len);
			return fault;
		}
		idx = le16toh(d.next);
		if (idx >= tsize)
			return -EINVAL;
	}
}

int __uks_vduse_vring_pop(struct uks_vduse_blk *blk, struct vduse_vq *vq, struct vduse_req *r)
{
	uint16_t avail_idx, head;
	int ret;

	if (vq->broken || !vq->num)
		return -EIO;
	avail_idx = le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE));
	if (avail_idx == vq->last_avail)
		return 0;
	if ((uint16_t)(avail_idx - vq->last_avail) > vq->num) {
		pr_err("vduse %s: queue %u: avail.idx %u is %u ahead of %u (ring of %u)\n",
		       blk->name, vq->index, avail_idx, (uint16_t)(avail_idx - vq->last_avail),
		       vq->last_avail, vq->num);
		vq->broken = true;
		return -EIO;
	}
	head = le16toh(__atomic_load_n(&vq->avail->ring[vq->last_avail & (vq->num - 1)],
				       __ATOMIC_RELAXED));
	if (head >= vq->num) {
		pr_err("vduse %s: queue %u: head %u outside a ring of %u\n", blk->name,
		       vq->index, head, vq->num);
		vq->broken = true;
		return -EIO;
	}
	vq->last_avail++;
	r->vq = vq;
	r->head = head;
	r->malformed = false;
	r->nr_out = r->nr_in = 0;
	ret = walk_chain(blk, vq, r);
	if (ret) {
		pr_debug("vduse %s: queue %u: chain %u rejected (%d)\n", blk->name, vq->index,
			 head, ret);
		r->malformed = true;
	}
	return 1;
}

void __uks_vduse_vring_push(struct vduse_vq *vq, uint16_t head, uint32_t len)
{
	struct vring_used_elem *e = &vq->used->ring[vq->used_idx & (vq->num - 1)];

	__atomic_store_n(&e->id, htole32(head), __ATOMIC_RELAXED);
	__atomic_store_n(&e->len, htole32(len), __ATOMIC_RELAXED);
	vq->used_idx++;
}

void __uks_vduse_vring_notify(struct uks_vduse_blk *blk, struct vduse_vq *vq, uint16_t old)
{
	uint16_t new = vq->used_idx;
	bool need;

	__atomic_store_n(&vq->used->idx, htole16(new), __ATOMIC_RELEASE);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (vq->event_idx) {
		uint16_t ev = le16toh(__atomic_load_n(used_event_ptr(vq), __ATOMIC_RELAXED));

		need = vring_need_event(ev, new, old);
	} else {
		need = !(le16toh(__atomic_load_n(&vq->avail->flags, __ATOMIC_RELAXED)) &
			 VRING_AVAIL_F_NO_INTERRUPT);
	}
	if (need && blk->t->ops->inject_irq(blk->t, vq->index) == 0)
		atomic_fetch_add_explicit(&vq->st_irqs, 1, memory_order_relaxed);
}

bool __uks_vduse_vring_enable_kicks(struct vduse_vq *vq)
{
	uint16_t idx;

	if (vq->event_idx)
		__atomic_store_n(avail_event_ptr(vq), htole16(vq->last_avail), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	idx = le16toh(__atomic_load_n(&vq->avail->idx, __ATOMIC_ACQUIRE));
	return idx != vq->last_avail;
}
