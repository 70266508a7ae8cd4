// SPDX-License-Identifier: MIT
/*
 * The IOTLB mapping cache of the real transport.
 *
 * What the data path calls an address is an IOVA of the vDPA device.  The
 * kernel hands out the memory behind an IOVA range on request
 * (VDUSE_IOTLB_GET_FD: the IOTLB entry that overlaps the range, plus a file
 * to mmap at the entry's offset); with virtio_vdpa there are two kinds of
 * entries: one per coherent allocation (the rings) and one for the bounce
 * area [0, bounce_size) that holds every streaming buffer.  A miss costs an
 * ioctl and an mmap, so entries stay mapped until the kernel says they
 * changed (VDUSE_UPDATE_IOTLB) or the device is reset.
 *
 * Locking: lookups take the read side of @lock and may run on every queue
 * thread at once; a miss takes the write side to insert.  Invalidation takes
 * the write side too, but a pointer handed out by a lookup lives beyond the
 * lock, so dev.c quiesces the queue threads (holds every queue mutex)
 * around __uks_vduse_iotlb_invalidate(); that is the lock order:
 * queue mutexes -> iotlb lock.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/vduse.h>

#include "core/log.h"
#include "vduse/dev.h"

/* A mapping the driver may not have made: the kernel's default is 2048 entries. */
#define IOTLB_MAX_ENTRIES	256

static int prot_of(unsigned int perm)
{
	switch (perm) {
	case VDUSE_ACCESS_RO:
		return PROT_READ;
	case VDUSE_ACCESS_WO:
		return PROT_WRITE;
	case VDUSE_ACCESS_RW:
		return PROT_READ | PROT_WRITE;
	}
	return PROT_NONE;
}

void __uks_vduse_iotlb_init(struct vduse_iotlb *tlb, int dev_fd)
{
	memset(tlb, 0, sizeof(*tlb));
	tlb->dev_fd = dev_fd;
	pthread_rwlock_init(&tlb->lock, NULL);
}

static const struct vduse_iotlb_map *find(const struct vduse_iotlb *tlb, uint64_t iova)
{
	for (unsigned int i = 0; i < tlb->nr; i++)
		if (iova >= tlb->maps[i].start && iova <= tlb->maps[i].last)
			return &tlb->maps[i];
	return NULL;
}

/* Ask the kernel for the entry holding @iova and map it; write lock held. */
static const struct vduse_iotlb_map *fault_in(struct vduse_iotlb *tlb, uint64_t iova)
{
	struct vduse_iotlb_entry e = { .start = iova, .last = iova };
	struct vduse_iotlb_map *m;
	uint64_t len;
	void *p;
	int fd;

	if (tlb->nr == tlb->cap) {
		unsigned int cap = tlb->cap ? tlb->cap * 2 : 8;

		if (cap > IOTLB_MAX_ENTRIES)
			return NULL;
		m = realloc(tlb->maps, cap * sizeof(*m));
		if (!m)
			return NULL;
		tlb->maps = m;
		tlb->cap = cap;
	}
	fd = ioctl(tlb->dev_fd, VDUSE_IOTLB_GET_FD, &e);
	if (fd < 0)
		return NULL;	/* EINVAL: nothing mapped there */
	len = e.last - e.start + 1;
	if (e.last < e.start || iova < e.start || iova > e.last || !prot_of(e.perm) ||
	    len > (1ull << 40)) {
		close(fd);
		pr_warn("vduse: the kernel returned an unusable IOTLB entry [%#llx, %#llx] perm %u\n",
			(unsigned long long)e.start, (unsigned long long)e.last, e.perm);
		return NULL;
	}
	p = mmap(NULL, len, prot_of(e.perm), MAP_SHARED, fd, (off_t)e.offset);
	close(fd);	/* the mapping keeps the file */
	if (p == MAP_FAILED) {
		pr_warn("vduse: mmap of IOTLB entry [%#llx, %#llx]: %s\n",
			(unsigned long long)e.start, (unsigned long long)e.last, strerror(errno));
		return NULL;
	}
	m = &tlb->maps[tlb->nr++];
	*m = (struct vduse_iotlb_map){ .start = e.start, .last = e.last, .perm = e.perm,
				       .addr = p, .len = len };
	tlb->faults++;
	return m;
}

void *__uks_vduse_iotlb_map(struct vduse_iotlb *tlb, uint64_t iova, uint64_t len, unsigned int perm,
			    uint64_t *avail)
{
	const struct vduse_iotlb_map *m;
	void *p = NULL;

	pthread_rwlock_rdlock(&tlb->lock);
	m = find(tlb, iova);
	if (!m) {
		pthread_rwlock_unlock(&tlb->lock);
		pthread_rwlock_wrlock(&tlb->lock);
		m = find(tlb, iova);	/* another queue may have faulted it in */
		if (!m)
			m = fault_in(tlb, iova);
	}
	/* The entry must allow every access asked for (RO entries refuse writes). */
	if (m && (m->perm & perm) == perm) {
		uint64_t left = m->last - iova + 1;

		*avail = left < len ? left : len;
		p = (uint8_t *)m->addr + (iova - m->start);
	}
	pthread_rwlock_unlock(&tlb->lock);
	return p;
}

void __uks_vduse_iotlb_invalidate(struct vduse_iotlb *tlb, uint64_t start, uint64_t last)
{
	pthread_rwlock_wrlock(&tlb->lock);
	for (unsigned int i = 0; i < tlb->nr;) {
		struct vduse_iotlb_map *m = &tlb->maps[i];

		if (m->last < start || m->start > last) {
			i++;
			continue;
		}
		munmap(m->addr, m->len);
		*m = tlb->maps[--tlb->nr];
		tlb->invalidations++;
	}
	pthread_rwlock_unlock(&tlb->lock);
}

void __uks_vduse_iotlb_fini(struct vduse_iotlb *tlb)
{
	__uks_vduse_iotlb_invalidate(tlb, 0, UINT64_MAX);
	free(tlb->maps);
	tlb->maps = NULL;
	tlb->cap = 0;
	pthread_rwlock_destroy(&tlb->lock);
}
