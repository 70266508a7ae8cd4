/* SPDX-License-Identifier: MIT */
/*
 * The emulated virtio-blk driver of the vduse tests: one struct rig = the
 * emulated kernel side (guest memory + rings), a backend and the device's
 * data path over the emulated transport.  blk_req() builds a request chain
 * the way Linux's virtio_blk does (header, data, status), lets the device
 * serve it and returns the status byte the device wrote.
 */
#ifndef UKS_TESTS_VDUSE_RIG_H
#define UKS_TESTS_VDUSE_RIG_H

#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include <uks/vduse.h>

#define RIG_MEM		(32u << 20)
#define FEAT_EVENT_IDX	(1ull << VIRTIO_RING_F_EVENT_IDX)
#define FEAT_INDIRECT	(1ull << VIRTIO_RING_F_INDIRECT_DESC)
#define STATUS_UNSET	0xa5

struct rig {
	struct uks_vduse_emul *e;
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	unsigned int num;
};

static inline int rig_init_be(struct rig *r, struct uks_vduse_backend *be, unsigned int nq,
			      unsigned int num, uint64_t features, unsigned int bs, bool ro)
{
	struct uks_vduse_blk_params p = {
		.name = "vtest0", .nr_queues = nq, .queue_size = num, .block_size = bs,
		.readonly = ro, .event_idx = true, .indirect = true,
	};
	struct uks_vduse_vq_addr a;
	int ret;

	memset(r, 0, sizeof(*r));
	r->num = num;
	r->be = be;
	ret = uks_vduse_emul_create(RIG_MEM, nq, num, features, &r->e);
	if (ret)
		return ret;
	ret = uks_vduse_blk_create(&p, be, uks_vduse_emul_transport(r->e), &r->blk);
	if (ret)
		return ret;
	for (unsigned int q = 0; q < nq; q++) {
		uks_vduse_emul_vq_addr(r->e, q, &a);
		ret = uks_vduse_blk_queue_start(r->blk, q, &a);
		if (ret)
			return ret;
	}
	return 0;
}

static inline int rig_init(struct rig *r, const char *spec, unsigned int nq, unsigned int num,
			   uint64_t features, unsigned int bs, bool ro)
{
	struct uks_vduse_backend *be;
	int ret = uks_vduse_backend_open(spec, ro, false, nq, &be);

	if (ret)
		return ret;
	return rig_init_be(r, be, nq, num, features, bs, ro);
}

static inline void rig_fini(struct rig *r)
{
	uks_vduse_blk_destroy(r->blk);
	uks_vduse_emul_destroy(r->e);
	uks_vduse_backend_close(r->be);
}

static inline void *rig_ptr(struct rig *r, uint64_t iova)
{
	return uks_vduse_emul_ptr(r->e, iova);
}

static inline uint64_t rig_alloc(struct rig *r, size_t len, uint8_t fill)
{
	uint64_t iova = uks_vduse_emul_alloc(r->e, len, 64);

	if (iova)
		memset(rig_ptr(r, iova), fill, len);
	return iova;
}

/* Kick, serve, reap one: returns the used length or a negative error; checks the id. */
static inline int rig_serve_one(struct rig *r, unsigned int q, int head)
{
	uint16_t id;
	uint32_t len;
	int ret;

	uks_vduse_emul_kick(r->e, q);
	ret = uks_vduse_blk_queue_process(r->blk, q);
	if (ret < 0)
		return ret;
	ret = uks_vduse_emul_reap(r->e, q, &id, &len);
	if (ret <= 0)
		return ret ? ret : -ENODATA;
	if (id != head)
		return -EPROTO;
	return (int)len;
}

/*
 * One virtio-blk request: header, @len data bytes at @data (device-writable
 * for IN/GET_ID), a status byte.  Returns the status, *used = used.len.
 */
static inline int blk_req(struct rig *r, unsigned int q, uint32_t type, uint64_t sector,
			  uint64_t data, uint32_t len, bool indirect, uint32_t *used)
{
	struct uks_vduse_emul_seg s[3];
	uint64_t hdr = rig_alloc(r, 16, 0), st = rig_alloc(r, 1, STATUS_UNSET);
	struct virtio_blk_outhdr *h = rig_ptr(r, hdr);
	bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
	unsigned int n = 0;
	int head, ret;

	h->type = htole32(type);
	h->ioprio = 0;
	h->sector = htole64(sector);
	s[n++] = (struct uks_vduse_emul_seg){ hdr, 16, false };
	if (len)
		s[n++] = (struct uks_vduse_emul_seg){ data, len, in };
	s[n++] = (struct uks_vduse_emul_seg){ st, 1, true };
	head = uks_vduse_emul_add(r->e, q, s, n, indirect);
	if (head < 0)
		return head;
	ret = rig_serve_one(r, q, head);
	if (ret < 0)
		return ret;
	if (used)
		*used = (uint32_t)ret;
	return *(uint8_t *)rig_ptr(r, st);
}

static inline void fill_pattern(uint8_t *p, size_t len, uint32_t seed)
{
	for (size_t i = 0; i < len; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static inline bool all_bytes(const uint8_t *p, size_t len, uint8_t v)
{
	for (size_t i = 0; i < len; i++)
		if (p[i] != v)
			return false;
	return true;
}

#endif
