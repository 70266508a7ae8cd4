// SPDX-License-Identifier: MIT
/*
 * vduse data path, malformed chains: loops, indices out of the table,
 * addresses outside the mapped IOVA range (below, straddling the end,
 * wrapping), zero lengths, readable-after-writable, too many descriptors,
 * and broken indirect tables.  For each: the chain comes back on the used
 * ring with its head, IOERR is in the last byte of the last writable
 * buffer that validated (used.len 1) or nothing is written (used.len 0),
 * and no other byte of the chain's memory, nor the end of guest memory,
 * changed.  Ring-level corruption stops the queue until it is restarted.
 */
#include <stdlib.h>

#include "harness.h"
#include "unit/vduse/rig.h"

#define NUM 16
#define ARENA 65536

struct mctx {
	struct rig r;
	uint64_t arena, hdr, data, st, tail;
	uint8_t *snap, *tail_snap;
};

static void mctx_init(struct th_result *_th_r, struct mctx *m, uint64_t features)
{
	struct virtio_blk_outhdr h = { htole32(VIRTIO_BLK_T_IN), 0, htole64(0) };

	ASSERT_EQ(0, rig_init(&m->r, "ram:1M", 1, NUM, features, 512, false));
	m->arena = rig_alloc(&m->r, ARENA, 0x3c);
	m->hdr = m->arena;
	m->data = m->arena + 4096;
	m->st = m->arena + 8192;
	memcpy(rig_ptr(&m->r, m->hdr), &h, sizeof(h));
	*(uint8_t *)rig_ptr(&m->r, m->st) = STATUS_UNSET;
	m->tail = UKS_VDUSE_EMUL_IOVA_BASE + RIG_MEM - 4096;
	m->snap = malloc(ARENA);
	m->tail_snap = malloc(4096);
	ASSERT_NONNULL(m->snap);
	ASSERT_NONNULL(m->tail_snap);
}

static void mctx_fini(struct mctx *m)
{
	free(m->snap);
	free(m->tail_snap);
	rig_fini(&m->r);
}

static struct vring_desc *D(struct mctx *m)
{
	return uks_vduse_emul_desc(m->r.e, 0);
}

static void set(struct vring_desc *d, uint64_t addr, uint32_t len, uint16_t flags, uint16_t next)
{
	d->addr = htole64(addr);
	d->len = htole32(len);
	d->flags = htole16(flags);
	d->next = htole16(next);
}

/*
 * Publish @head, serve, and check: returned with used.len @want_len; if
 * @status_iova, IOERR there; every other arena byte and the last page of
 * guest memory unchanged.
 */
static void expect_rejected(struct th_result *_th_r, struct mctx *m, uint16_t head,
			    uint64_t status_iova, uint32_t want_len)
{
	struct uks_vduse_blk_stats before, after;
	uint8_t *a = rig_ptr(&m->r, m->arena);
	uint16_t id;
	uint32_t len;

	memcpy(m->snap, a, ARENA);
	memcpy(m->tail_snap, rig_ptr(&m->r, m->tail), 4096);
	uks_vduse_blk_get_stats(m->r.blk, &before);
	uks_vduse_emul_publish(m->r.e, 0, head);
	uks_vduse_emul_kick(m->r.e, 0);
	ASSERT_EQ(1, uks_vduse_blk_queue_process(m->r.blk, 0));
	ASSERT_EQ(1, uks_vduse_emul_reap(m->r.e, 0, &id, &len));
	EXPECT_EQ(head, id);
	EXPECT_EQ(want_len, len);
	if (status_iova) {
		EXPECT_EQ(VIRTIO_BLK_S_IOERR, *(uint8_t *)rig_ptr(&m->r, status_iova));
		m->snap[status_iova - m->arena] = VIRTIO_BLK_S_IOERR;
	}
	EXPECT_EQ(0, memcmp(m->snap, a, ARENA));
	EXPECT_EQ(0, memcmp(m->tail_snap, rig_ptr(&m->r, m->tail), 4096));
	uks_vduse_blk_get_stats(m->r.blk, &after);
	EXPECT_EQ(before.requests + 1, after.requests);
	/* Restore the status byte for the next case. */
	*(uint8_t *)rig_ptr(&m->r, m->st) = STATUS_UNSET;
}

/* A good request after the bad ones: the queue still works. */
static void expect_queue_alive(struct th_result *_th_r, struct mctx *m)
{
	uint64_t d = rig_alloc(&m->r, 512, 0);

	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&m->r, 0, VIRTIO_BLK_T_IN, 0, d, 512, false, NULL));
}

TEST(loops)
{
	struct mctx m;
	uint16_t i[3];

	mctx_init(_th_r, &m, 0);
	/* hdr -> status -> status -> ... (self loop on the writable one) */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[1]);
	expect_rejected(_th_r, &m, i[0], m.st, 1);
	/* hdr -> status -> hdr (readable after writable on the way round) */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[0]);
	expect_rejected(_th_r, &m, i[0], m.st, 1);
	/* hdr -> hdr -> ... : nothing writable, nothing written */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 1, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[0]);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

TEST(index_out_of_table)
{
	struct mctx m;
	uint16_t i[2];

	mctx_init(_th_r, &m, 0);
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 1, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, NUM);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, 0xffff);
	expect_rejected(_th_r, &m, i[0], m.st, 1);
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

TEST(addresses_outside_iova_range)
{
	static const uint64_t end = UKS_VDUSE_EMUL_IOVA_BASE + RIG_MEM;
	const uint64_t bad[][2] = {
		{ 0, 512 }, { 0x1000, 512 }, { UKS_VDUSE_EMUL_IOVA_BASE - 256, 512 },
		{ end - 256, 512 }, { end, 512 }, { UINT64_MAX - 100, 512 },
		{ UINT64_MAX - 511, 512 }, { end - 4096, 0xffffffffu },
	};
	struct mctx m;
	uint16_t i[3];

	mctx_init(_th_r, &m, 0);
	for (unsigned int k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		/* IN into a bad buffer: the chain's final descriptor still gets IOERR. */
		ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 3, i));
		set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
		set(&D(&m)[i[1]], bad[k][0], (uint32_t)bad[k][1],
		    VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[2]);
		set(&D(&m)[i[2]], m.st, 1, VRING_DESC_F_WRITE, 0);
		expect_rejected(_th_r, &m, i[0], m.st, 1);
		/* A bad header address (16 bytes from a start inside memory would fit). */
		ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
		set(&D(&m)[i[0]], bad[k][0] >= UKS_VDUSE_EMUL_IOVA_BASE && bad[k][0] < end ?
				  end - 8 : bad[k][0], 16, VRING_DESC_F_NEXT, i[1]);
		set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE, 0);
		expect_rejected(_th_r, &m, i[0], m.st, 1);
		/* A bad buffer and a status that is not writable: nothing is written. */
		ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 3, i));
		set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
		set(&D(&m)[i[1]], bad[k][0], (uint32_t)bad[k][1], VRING_DESC_F_NEXT, i[2]);
		set(&D(&m)[i[2]], 0x1000, 1, VRING_DESC_F_WRITE, 0);	/* unmapped */
		expect_rejected(_th_r, &m, i[0], 0, 0);
		/* Status after a good data buffer, then a bad one: IOERR at the data's end. */
		ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 3, i));
		set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
		set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[2]);
		set(&D(&m)[i[2]], bad[k][0], (uint32_t)bad[k][1], VRING_DESC_F_WRITE, 0);
		expect_rejected(_th_r, &m, i[0], m.st, 1);
	}
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

TEST(zero_length_and_order)
{
	struct mctx m;
	uint16_t i[3];

	mctx_init(_th_r, &m, 0);
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 3, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.data, 0, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[2]);
	set(&D(&m)[i[2]], m.st, 1, VRING_DESC_F_WRITE, 0);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	set(&D(&m)[i[0]], m.hdr, 0, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE, 0);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	/* readable after writable */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 3, i));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE | VRING_DESC_F_NEXT, i[2]);
	set(&D(&m)[i[2]], m.data, 512, 0, 0);
	expect_rejected(_th_r, &m, i[0], m.st, 1);
	/* no writable byte at all: returned with nothing written */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 1, i));
	set(&D(&m)[i[0]], m.hdr, 16, 0, 0);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	/* a header shorter than 16 bytes: a request error, not a chain error */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	set(&D(&m)[i[0]], m.hdr, 8, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], m.st, 1, VRING_DESC_F_WRITE, 0);
	expect_rejected(_th_r, &m, i[0], m.st, 1);
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

TEST(too_many_descriptors)
{
	struct mctx m;
	struct uks_vduse_emul_seg s[NUM];
	uint16_t i[1];
	uint64_t t;
	struct vring_desc *tab;
	int head;

	mctx_init(_th_r, &m, FEAT_INDIRECT);
	/* A direct chain of exactly NUM descriptors is fine. */
	s[0] = (struct uks_vduse_emul_seg){ m.hdr, 16, false };
	for (int k = 1; k < NUM - 1; k++)
		s[k] = (struct uks_vduse_emul_seg){ m.data + 512 * (uint64_t)(k - 1), 512, true };
	s[NUM - 1] = (struct uks_vduse_emul_seg){ m.st, 1, true };
	head = uks_vduse_emul_add(m.r.e, 0, s, NUM, false);
	ASSERT_GE(head, 0);
	EXPECT_EQ((NUM - 2) * 512 + 1, rig_serve_one(&m.r, 0, head));
	EXPECT_EQ(VIRTIO_BLK_S_OK, *(uint8_t *)rig_ptr(&m.r, m.st));
	*(uint8_t *)rig_ptr(&m.r, m.st) = STATUS_UNSET;
	/* An indirect table larger than the ring is refused before it is read. */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 1, i));
	t = uks_vduse_emul_table(m.r.e, 0, i[0]);
	tab = rig_ptr(&m.r, t);
	set(&tab[0], m.hdr, 16, VRING_DESC_F_NEXT, 1);
	for (int k = 1; k < 2 * NUM; k++)
		set(&tab[k], m.st, 1, VRING_DESC_F_WRITE | (k + 1 < 2 * NUM ? VRING_DESC_F_NEXT : 0),
		    (uint16_t)(k + 1));
	set(&D(&m)[i[0]], t, 16 * 2 * NUM, VRING_DESC_F_INDIRECT, 0);
	expect_rejected(_th_r, &m, i[0], 0, 0);
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

/* Build an indirect chain in head's slot: hdr, status; then let @fn break it. */
static uint16_t indirect_chain(struct th_result *_th_r, struct mctx *m, struct vring_desc **tab)
{
	uint16_t i[1];
	uint64_t t;

	i[0] = 0;
	EXPECT_EQ(0, uks_vduse_emul_get_desc(m->r.e, 0, 1, i));
	t = uks_vduse_emul_table(m->r.e, 0, i[0]);
	*tab = rig_ptr(&m->r, t);
	set(&(*tab)[0], m->hdr, 16, VRING_DESC_F_NEXT, 1);
	set(&(*tab)[1], m->st, 1, VRING_DESC_F_WRITE, 0);
	set(&D(m)[i[0]], t, 32, VRING_DESC_F_INDIRECT, 0);
	return i[0];
}

TEST(indirect_tables)
{
	struct mctx m;
	struct vring_desc *tab;
	uint16_t h, i[2];

	mctx_init(_th_r, &m, FEAT_INDIRECT);
	/* The good one first. */
	h = indirect_chain(_th_r, &m, &tab);
	((struct virtio_blk_outhdr *)rig_ptr(&m.r, m.hdr))->type = htole32(VIRTIO_BLK_T_FLUSH);
	uks_vduse_emul_publish(m.r.e, 0, h);
	EXPECT_EQ(1, rig_serve_one(&m.r, 0, h));
	EXPECT_EQ(VIRTIO_BLK_S_OK, *(uint8_t *)rig_ptr(&m.r, m.st));
	((struct virtio_blk_outhdr *)rig_ptr(&m.r, m.hdr))->type = htole32(VIRTIO_BLK_T_IN);
	*(uint8_t *)rig_ptr(&m.r, m.st) = STATUS_UNSET;
	/* INDIRECT together with NEXT */
	h = indirect_chain(_th_r, &m, &tab);
	D(&m)[h].flags = htole16(VRING_DESC_F_INDIRECT | VRING_DESC_F_NEXT);
	expect_rejected(_th_r, &m, h, 0, 0);
	/* a table inside a table */
	h = indirect_chain(_th_r, &m, &tab);
	set(&tab[1], uks_vduse_emul_table(m.r.e, 0, h), 32, VRING_DESC_F_INDIRECT, 0);
	expect_rejected(_th_r, &m, h, 0, 0);
	/* lengths: not a multiple of 16, zero */
	h = indirect_chain(_th_r, &m, &tab);
	D(&m)[h].len = htole32(24);
	expect_rejected(_th_r, &m, h, 0, 0);
	h = indirect_chain(_th_r, &m, &tab);
	D(&m)[h].len = 0;
	expect_rejected(_th_r, &m, h, 0, 0);
	/* the table itself outside the IOVA range, or straddling its end */
	h = indirect_chain(_th_r, &m, &tab);
	D(&m)[h].addr = htole64(0x2000);
	expect_rejected(_th_r, &m, h, 0, 0);
	h = indirect_chain(_th_r, &m, &tab);
	D(&m)[h].addr = htole64(UKS_VDUSE_EMUL_IOVA_BASE + RIG_MEM - 16);
	expect_rejected(_th_r, &m, h, 0, 0);
	/* next outside the table; a loop inside it */
	h = indirect_chain(_th_r, &m, &tab);
	tab[1].flags = htole16(VRING_DESC_F_WRITE | VRING_DESC_F_NEXT);
	tab[1].next = htole16(2);
	expect_rejected(_th_r, &m, h, m.st, 1);
	h = indirect_chain(_th_r, &m, &tab);
	tab[1].flags = htole16(VRING_DESC_F_WRITE | VRING_DESC_F_NEXT);
	tab[1].next = htole16(1);
	expect_rejected(_th_r, &m, h, m.st, 1);
	/* an indirect descriptor after direct ones is legal (it ends the chain) */
	ASSERT_EQ(0, uks_vduse_emul_get_desc(m.r.e, 0, 2, i));
	tab = rig_ptr(&m.r, uks_vduse_emul_table(m.r.e, 0, i[0]));
	set(&D(&m)[i[0]], m.hdr, 16, VRING_DESC_F_NEXT, i[1]);
	set(&D(&m)[i[1]], uks_vduse_emul_table(m.r.e, 0, i[0]), 16, VRING_DESC_F_INDIRECT, 0);
	set(&tab[0], m.st, 1, VRING_DESC_F_WRITE, 0);
	uks_vduse_emul_publish(m.r.e, 0, i[0]);
	EXPECT_EQ(1, rig_serve_one(&m.r, 0, i[0]));
	EXPECT_EQ(VIRTIO_BLK_S_OK, *(uint8_t *)rig_ptr(&m.r, m.st));	/* IN of 0 bytes */
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);

	/* Without VIRTIO_RING_F_INDIRECT_DESC negotiated, an indirect descriptor is malformed. */
	mctx_init(_th_r, &m, 0);
	h = indirect_chain(_th_r, &m, &tab);
	expect_rejected(_th_r, &m, h, 0, 0);
	expect_queue_alive(_th_r, &m);
	mctx_fini(&m);
}

TEST(broken_rings)
{
	struct mctx m;
	struct uks_vduse_vq_addr a;
	struct vring_avail *av;

	mctx_init(_th_r, &m, 0);
	/* A head outside the table stops the queue. */
	uks_vduse_emul_publish(m.r.e, 0, NUM + 3);
	EXPECT_EQ(-EIO, uks_vduse_blk_queue_process(m.r.blk, 0));
	EXPECT_EQ(-EIO, uks_vduse_blk_queue_process(m.r.blk, 0));
	mctx_fini(&m);

	mctx_init(_th_r, &m, 0);
	uks_vduse_emul_vq_addr(m.r.e, 0, &a);
	av = rig_ptr(&m.r, a.avail);
	av->idx = htole16(NUM + 1);	/* more chains than the ring holds */
	EXPECT_EQ(-EIO, uks_vduse_blk_queue_process(m.r.blk, 0));
	/* After a reset (stop + start at the driver's index), it serves again. */
	av->idx = 0;
	uks_vduse_blk_queue_stop(m.r.blk, 0);
	EXPECT_EQ(-ENODEV, uks_vduse_blk_queue_process(m.r.blk, 0));
	ASSERT_EQ(0, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	expect_queue_alive(_th_r, &m);
	/* Ring areas that are not mapped, misaligned or of a bad size. */
	a.desc = 0x1000;
	EXPECT_EQ(-EFAULT, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	EXPECT_EQ(-ENODEV, uks_vduse_blk_queue_process(m.r.blk, 0));
	uks_vduse_emul_vq_addr(m.r.e, 0, &a);
	a.used = UKS_VDUSE_EMUL_IOVA_BASE + RIG_MEM - 64;
	EXPECT_EQ(-EFAULT, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	uks_vduse_emul_vq_addr(m.r.e, 0, &a);
	a.desc += 8;
	EXPECT_EQ(-EINVAL, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	uks_vduse_emul_vq_addr(m.r.e, 0, &a);
	a.num = 12;
	EXPECT_EQ(-EINVAL, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	a.num = 2 * NUM;	/* larger than the queue size offered */
	EXPECT_EQ(-EINVAL, uks_vduse_blk_queue_start(m.r.blk, 0, &a));
	mctx_fini(&m);
}

TEST_HARNESS_MAIN
