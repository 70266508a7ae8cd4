// SPDX-License-Identifier: MIT
/*
 * The emulated kernel side: what VDUSE + virtio_vdpa + virtio_blk give the
 * device, without a kernel.  Guest memory is one MAP_SHARED memfd mapped
 * at IOVA UKS_VDUSE_EMUL_IOVA_BASE (so a forked device process sees the
 * driver's memory, as the daemon sees the kernel's bounce pages); each
 * queue's split ring is laid out as vring_init() does with vq_align 4096
 * (descriptors, then the available ring, the used ring on the next page),
 * followed by one indirect-table slot per descriptor; the rest of memory
 * is handed out by a bump allocator for request buffers.
 *
 * The transport (struct uks_vduse_transport) is what the data path sees:
 * map() accepts exactly [base, base + size) (everything else is unmapped,
 * as an IOVA without an IOTLB entry is), inject_irq() bumps a counter in
 * shared memory and writes the queue's irq eventfd.
 *
 * The driver half follows Linux's virtio_ring.c: free descriptors are
 * linked through a driver-private array (never through the device-visible
 * next fields, which hand-built chains may scramble), avail->idx is
 * published with release, kicks honour VRING_USED_F_NO_NOTIFY or, with
 * EVENT_IDX, vring_need_event(avail_event, new, old); reaping reads
 * used->idx with acquire, checks the returned id is outstanding, and moves
 * used_event to the next index.
 *
 * Threads and locks: map() is read-only and thread-safe; the driver calls
 * of one queue must come from one thread at a time.
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/virtio_ring.h>

#include "vduse/vduse_int.h"

struct emul_queue {
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint64_t desc_iova, avail_iova, used_iova, table_iova;
	uint16_t *next;		/* driver-private free/chain links */
	uint16_t *chain_tail;	/* per head */
	uint16_t *chain_n;	/* per head; 0 = not outstanding */
	uint16_t free_head;
	unsigned int nr_free;
	uint16_t avail_idx;	/* shadow */
	uint16_t kicked_idx;	/* avail idx at the last kick decision */
	uint16_t last_used;
	int kick_fd;
	int irq_fd;
};

struct uks_vduse_emul {
	struct uks_vduse_transport t;
	uint8_t *mem;
	size_t size;
	int memfd;
	size_t brk;
	unsigned int nr_queues, num;
	uint64_t features;
	_Atomic uint64_t *irqs;	/* shared mapping, one per queue */
	struct emul_queue qs[];
};

static void *emul_map(struct uks_vduse_transport *t, uint64_t iova, uint64_t len,
		      unsigned int perm, uint64_t *avail)
{
	struct uks_vduse_emul *e = (struct uks_vduse_emul *)t;

	if (iova < UKS_VDUSE_EMUL_IOVA_BASE || iova - UKS_VDUSE_EMUL_IOVA_BASE >= e->size)
		return NULL;
	*avail = e->size - (iova - UKS_VDUSE_EMUL_IOVA_BASE);
	return e->mem + (iova - UKS_VDUSE_EMUL_IOVA_BASE);
}

static int emul_inject_irq(struct uks_vduse_transport *t, unsigned int q)
{
	struct uks_vduse_emul *e = (struct uks_vduse_emul *)t;
	uint64_t one = 1;

	if (q >= e->nr_queues)
		return -EINVAL;
	atomic_fetch_add_explicit(&e->irqs[q], 1, memory_order_relaxed);
	if (write(e->qs[q].irq_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 0;
}

static const struct uks_vduse_transport_ops emul_ops = {
	.map = emul_map,
	.inject_irq = emul_inject_irq,
};

UKS_EXPORT uint64_t uks_vduse_emul_alloc(struct uks_vduse_emul *e, size_t len, size_t align)
{
	size_t start;

	if (!align || (align & (align - 1)))
		return 0;
	start = (e->brk + align - 1) & ~(align - 1);
	if (start > e->size || len > e->size - start)
		return 0;
	e->brk = start + len;
	return UKS_VDUSE_EMUL_IOVA_BASE + start;
}

UKS_EXPORT void *uks_vduse_emul_ptr(struct uks_vduse_emul *e, uint64_t iova)
{
	if (iova < UKS_VDUSE_EMUL_IOVA_BASE || iova - UKS_VDUSE_EMUL_IOVA_BASE >= e->size)
		return NULL;
	return e->mem + (iova - UKS_VDUSE_EMUL_IOVA_BASE);
}

static int queue_init(struct uks_vduse_emul *e, struct emul_queue *eq)
{
	unsigned int num = e->num;

	eq->desc_iova = uks_vduse_emul_alloc(e, 16ull * num, 4096);
	eq->avail_iova = uks_vduse_emul_alloc(e, 6ull + 2ull * num, 2);
	eq->used_iova = uks_vduse_emul_alloc(e, 6ull + 8ull * num, 4096);
	eq->table_iova = uks_vduse_emul_alloc(e, 16ull * UKS_VDUSE_EMUL_TABLE_MAX * num, 4096);
	if (!eq->desc_iova || !eq->avail_iova || !eq->used_iova || !eq->table_iova)
		return -ENOMEM;
	eq->desc = uks_vduse_emul_ptr(e, eq->desc_iova);
	eq->avail = uks_vduse_emul_ptr(e, eq->avail_iova);
	eq->used = uks_vduse_emul_ptr(e, eq->used_iova);
	eq->next = calloc(num, sizeof(*eq->next));
	eq->chain_tail = calloc(num, sizeof(*eq->chain_tail));
	eq->chain_n = calloc(num, sizeof(*eq->chain_n));
	if (!eq->next || !eq->chain_tail || !eq->chain_n)
		return -ENOMEM;
	for (unsigned int i = 0; i < num; i++)
		eq->next[i] = (uint16_t)(i + 1);
	eq->free_head = 0;
	eq->nr_free = num;
	eq->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	eq->irq_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (eq->kick_fd < 0 || eq->irq_fd < 0)
		return -errno;
	return 0;
}

UKS_EXPORT int uks_vduse_emul_create(size_t mem_size, unsigned int nr_queues, unsigned int num,
			  uint64_t features, struct uks_vduse_emul **out)
{
	struct uks_vduse_emul *e;
	int ret;

	if (!nr_queues || nr_queues > VDUSE_MAX_QUEUES || num < 2 || num > VDUSE_MAX_QUEUE_SIZE ||
	    (num & (num - 1)) || !mem_size)
		return -EINVAL;
	e = calloc(1, sizeof(*e) + nr_queues * sizeof(e->qs[0]));
	if (!e)
		return -ENOMEM;
	e->t.ops = &emul_ops;
	e->size = (mem_size + 4095) & ~(size_t)4095;
	e->nr_queues = nr_queues;
	e->num = num;
	e->features = features;
	e->memfd = -1;
	for (unsigned int i = 0; i < nr_queues; i++)
		e->qs[i].kick_fd = e->qs[i].irq_fd = -1;
	e->memfd = memfd_create("uks-vduse-emul", MFD_CLOEXEC);
	if (e->memfd < 0 || ftruncate(e->memfd, (off_t)e->size)) {
		ret = -errno;
		goto fail;
	}
	e->mem = mmap(NULL, e->size, PROT_READ | PROT_WRITE, MAP_SHARED, e->memfd, 0);
	e->irqs = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (e->mem == MAP_FAILED || e->irqs == MAP_FAILED) {
		ret = -ENOMEM;
		goto fail;
	}
	for (unsigned int i = 0; i < nr_queues; i++) {
		ret = queue_init(e, &e->qs[i]);
		if (ret)
			goto fail;
	}
	*out = e;
	return 0;
fail:
	uks_vduse_emul_destroy(e);
	return ret;
}

UKS_EXPORT void uks_vduse_emul_destroy(struct uks_vduse_emul *e)
{
	if (!e)
		return;
	for (unsigned int i = 0; i < e->nr_queues; i++) {
		struct emul_queue *eq = &e->qs[i];

		if (eq->kick_fd >= 0)
			close(eq->kick_fd);
		if (eq->irq_fd >= 0)
			close(eq->irq_fd);
		free(eq->next);
		free(eq->chain_tail);
		free(eq->chain_n);
	}
	if (e->mem && e->mem != MAP_FAILED)
		munmap(e->mem, e->size);
	if (e->irqs && e->irqs != MAP_FAILED)
		munmap(e->irqs, 4096);
	if (e->memfd >= 0)
		close(e->memfd);
	free(e);
}

UKS_EXPORT struct uks_vduse_transport *uks_vduse_emul_transport(struct uks_vduse_emul *e)
{
	return &e->t;
}

UKS_EXPORT void uks_vduse_emul_vq_addr(struct uks_vduse_emul *e, unsigned int q, struct uks_vduse_vq_addr *a)
{
	struct emul_queue *eq = &e->qs[q];

	a->num = e->num;
	a->desc = eq->desc_iova;
	a->avail = eq->avail_iova;
	a->used = eq->used_iova;
	a->avail_idx = eq->avail_idx;
	a->features = e->features;
}

UKS_EXPORT void *uks_vduse_emul_desc(struct uks_vduse_emul *e, unsigned int q)
{
	return e->qs[q].desc;
}

UKS_EXPORT uint64_t uks_vduse_emul_table(struct uks_vduse_emul *e, unsigned int q, uint16_t head)
{
	return e->qs[q].table_iova + 16ull * UKS_VDUSE_EMUL_TABLE_MAX * head;
}

UKS_EXPORT int uks_vduse_emul_get_desc(struct uks_vduse_emul *e, unsigned int q, unsigned int n,
			    uint16_t *idx)
{
	struct emul_queue *eq = &e->qs[q];

	if (!n || n > eq->nr_free)
		return -ENOSPC;
	for (unsigned int i = 0; i < n; i++) {
		idx[i] = eq->free_head;
		eq->free_head = eq->next[eq->free_head];
	}
	eq->nr_free -= n;
	eq->chain_tail[idx[0]] = idx[n - 1];
	eq->chain_n[idx[0]] = (uint16_t)n;
	return 0;
}

UKS_EXPORT void uks_vduse_emul_publish(struct uks_vduse_emul *e, unsigned int q, uint16_t head)
{
	struct emul_queue *eq = &e->qs[q];

	eq->avail->ring[eq->avail_idx & (e->num - 1)] = htole16(head);
	eq->avail_idx++;
	__atomic_store_n(&eq->avail->idx, htole16(eq->avail_idx), __ATOMIC_RELEASE);
}

static void fill_desc(struct vring_desc *d, uint64_t addr, uint32_t len, uint16_t flags,
		      uint16_t next)
{
	d->addr = htole64(addr);
	d->len = htole32(len);
	d->flags = htole16(flags);
	d->next = htole16(next);
}

UKS_EXPORT int uks_vduse_emul_add(struct uks_vduse_emul *e, unsigned int q,
		       const struct uks_vduse_emul_seg *segs, unsigned int n, bool indirect)
{
	struct emul_queue *eq = &e->qs[q];
	uint16_t idx[UKS_VDUSE_EMUL_TABLE_MAX];
	uint16_t *ids = idx;
	int ret;

	if (!n || (indirect && n > UKS_VDUSE_EMUL_TABLE_MAX))
		return -EINVAL;
	if (indirect) {
		struct vring_desc *t;

		ret = uks_vduse_emul_get_desc(e, q, 1, idx);
		if (ret)
			return ret;
		t = uks_vduse_emul_ptr(e, uks_vduse_emul_table(e, q, idx[0]));
		for (unsigned int i = 0; i < n; i++)
			fill_desc(&t[i], segs[i].iova, segs[i].len,
				  (uint16_t)((segs[i].write ? VRING_DESC_F_WRITE : 0) |
					     (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
				  (uint16_t)(i + 1 < n ? i + 1 : 0));
		fill_desc(&eq->desc[idx[0]], uks_vduse_emul_table(e, q, idx[0]), 16 * n,
			  VRING_DESC_F_INDIRECT, 0);
	} else {
		if (n > UKS_VDUSE_EMUL_TABLE_MAX) {
			ids = malloc(n * sizeof(*ids));
			if (!ids)
				return -ENOMEM;
		}
		ret = uks_vduse_emul_get_desc(e, q, n, ids);
		if (ret) {
			if (ids != idx)
				free(ids);
			return ret;
		}
		for (unsigned int i = 0; i < n; i++)
			fill_desc(&eq->desc[ids[i]], segs[i].iova, segs[i].len,
				  (uint16_t)((segs[i].write ? VRING_DESC_F_WRITE : 0) |
					     (i + 1 < n ? VRING_DESC_F_NEXT : 0)),
				  i + 1 < n ? ids[i + 1] : 0);
	}
	ret = ids[0];
	if (ids != idx)
		free(ids);
	uks_vduse_emul_publish(e, q, (uint16_t)ret);
	return ret;
}

UKS_EXPORT int uks_vduse_emul_kick(struct uks_vduse_emul *e, unsigned int q)
{
	struct emul_queue *eq = &e->qs[q];
	uint16_t old = eq->kicked_idx, new = eq->avail_idx;
	uint64_t one = 1;
	bool need;

	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (e->features & (1ull << VIRTIO_RING_F_EVENT_IDX)) {
		uint16_t ev = le16toh(__atomic_load_n((uint16_t *)&eq->used->ring[e->num],
						      __ATOMIC_RELAXED));

		need = vring_need_event(ev, new, old);
	} else {
		need = !(le16toh(__atomic_load_n(&eq->used->flags, __ATOMIC_RELAXED)) &
			 VRING_USED_F_NO_NOTIFY);
	}
	eq->kicked_idx = new;
	if (!need)
		return 0;
	if (write(eq->kick_fd, &one, sizeof(one)) != sizeof(one))
		return -errno;
	return 1;
}

UKS_EXPORT int uks_vduse_emul_kick_fd(struct uks_vduse_emul *e, unsigned int q)
{
	return e->qs[q].kick_fd;
}

UKS_EXPORT int uks_vduse_emul_irq_fd(struct uks_vduse_emul *e, unsigned int q)
{
	return e->qs[q].irq_fd;
}

UKS_EXPORT uint64_t uks_vduse_emul_irqs(struct uks_vduse_emul *e, unsigned int q)
{
	return atomic_load_explicit(&e->irqs[q], memory_order_relaxed);
}

UKS_EXPORT int uks_vduse_emul_reap(struct uks_vduse_emul *e, unsigned int q, uint16_t *id, uint32_t *len)
{
	struct emul_queue *eq = &e->qs[q];
	struct vring_used_elem el;
	uint16_t head;

	if (le16toh(__atomic_load_n(&eq->used->idx, __ATOMIC_ACQUIRE)) == eq->last_used)
		return 0;
	el.id = __atomic_load_n(&eq->used->ring[eq->last_used & (e->num - 1)].id, __ATOMIC_RELAXED);
	el.len = __atomic_load_n(&eq->used->ring[eq->last_used & (e->num - 1)].len,
				 __ATOMIC_RELAXED);
	eq->last_used++;
	if (e->features & (1ull << VIRTIO_RING_F_EVENT_IDX))
		__atomic_store_n(&eq->avail->ring[e->num], htole16(eq->last_used), __ATOMIC_RELAXED);
	if (le32toh(el.id) >= e->num || !eq->chain_n[le32toh(el.id)])
		return -EIO;
	head = (uint16_t)le32toh(el.id);
	eq->next[eq->chain_tail[head]] = eq->free_head;
	eq->free_head = head;
	eq->nr_free += eq->chain_n[head];
	eq->chain_n[head] = 0;
	*id = head;
	*len = le32toh(el.len);
	return 1;
}

UKS_EXPORT void uks_vduse_emul_set_used_event(struct uks_vduse_emul *e, unsigned int q, uint16_t idx)
{
	__atomic_store_n(&e->qs[q].avail->ring[e->num], htole16(idx), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

UKS_EXPORT void uks_vduse_emul_set_no_interrupt(struct uks_vduse_emul *e, unsigned int q, bool on)
{
	struct emul_queue *eq = &e->qs[q];
	uint16_t f = le16toh(eq->avail->flags);

	f = on ? (uint16_t)(f | VRING_AVAIL_F_NO_INTERRUPT) :
		 (uint16_t)(f & ~VRING_AVAIL_F_NO_INTERRUPT);
	__atomic_store_n(&eq->avail->flags, htole16(f), __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
