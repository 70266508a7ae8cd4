// SPDX-License-Identifier: MIT
/*
 * vduse data path, notifications and queues: EVENT_IDX interrupt and kick
 * suppression, VRING_AVAIL_F_NO_INTERRUPT, batches deeper than one, index
 * wrap-around, several queues served concurrently by their own device
 * threads (kick eventfd -> process -> irq eventfd, as with /dev/vduse),
 * and the vduse:vduse_request / vduse:vduse_complete tracepoints.
 */
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include <uks/tracepoint.h>

#include "harness.h"
#include "unit/vduse/rig.h"

static int add_read(struct rig *r, unsigned int q, uint64_t sector, uint64_t buf, uint32_t len,
		    uint64_t st)
{
	struct uks_vduse_emul_seg s[3];
	uint64_t hdr = rig_alloc(r, 16, 0);
	struct virtio_blk_outhdr *h = rig_ptr(r, hdr);

	h->type = htole32(VIRTIO_BLK_T_IN);
	h->sector = htole64(sector);
	s[0] = (struct uks_vduse_emul_seg){ hdr, 16, false };
	s[1] = (struct uks_vduse_emul_seg){ buf, len, true };
	s[2] = (struct uks_vduse_emul_seg){ st, 1, true };
	return uks_vduse_emul_add(r->e, q, s, 3, false);
}

TEST(event_idx_interrupts)
{
	struct rig r;
	uint64_t buf, st;
	uint16_t id;
	uint32_t len;
	uint64_t irq0;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 64, FEAT_EVENT_IDX, 512, false));
	buf = rig_alloc(&r, 512, 0);
	st = rig_alloc(&r, 64, 0);
	/* used_event = 3: four completions in one batch cross it: one interrupt. */
	uks_vduse_emul_set_used_event(r.e, 0, 3);
	for (int i = 0; i < 4; i++)
		ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + i), 0);
	uks_vduse_emul_kick(r.e, 0);
	irq0 = uks_vduse_emul_irqs(r.e, 0);
	ASSERT_EQ(4, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0 + 1, uks_vduse_emul_irqs(r.e, 0));
	/* used_event far ahead: no interrupt for the next two. */
	uks_vduse_emul_set_used_event(r.e, 0, 10);
	for (int i = 0; i < 2; i++)
		ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + i), 0);
	uks_vduse_emul_kick(r.e, 0);
	ASSERT_EQ(2, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0 + 1, uks_vduse_emul_irqs(r.e, 0));
	/* Four more: used goes 6 -> 10, crossing used_event 9? No: event 10 needs used 11. */
	for (int i = 0; i < 4; i++)
		ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + i), 0);
	uks_vduse_emul_kick(r.e, 0);
	ASSERT_EQ(4, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0 + 1, uks_vduse_emul_irqs(r.e, 0));
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st), 0);
	uks_vduse_emul_kick(r.e, 0);
	ASSERT_EQ(1, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0 + 2, uks_vduse_emul_irqs(r.e, 0));	/* used 10 -> 11 crosses 10 */
	for (int i = 0; i < 11; i++)
		ASSERT_EQ(1, uks_vduse_emul_reap(r.e, 0, &id, &len));
	EXPECT_EQ(0, uks_vduse_emul_reap(r.e, 0, &id, &len));
	rig_fini(&r);
}

TEST(event_idx_kicks)
{
	struct rig r;
	uint64_t buf, st;
	uint16_t id;
	uint32_t len;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 64, FEAT_EVENT_IDX, 512, false));
	buf = rig_alloc(&r, 512, 0);
	st = rig_alloc(&r, 64, 0);
	/* The device published avail_event = 0 at start: the first add kicks. */
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st), 0);
	EXPECT_EQ(1, uks_vduse_emul_kick(r.e, 0));
	/* The device has not run: avail_event is still 0, so this add does not kick. */
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + 1), 0);
	EXPECT_EQ(0, uks_vduse_emul_kick(r.e, 0));
	ASSERT_EQ(2, uks_vduse_blk_queue_process(r.blk, 0));
	/* It re-armed at 2: the next add kicks again. */
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + 2), 0);
	EXPECT_EQ(1, uks_vduse_emul_kick(r.e, 0));
	ASSERT_EQ(1, uks_vduse_blk_queue_process(r.blk, 0));
	for (int i = 0; i < 3; i++)
		EXPECT_EQ(1, uks_vduse_emul_reap(r.e, 0, &id, &len));
	rig_fini(&r);
}

TEST(no_interrupt_flag)
{
	struct rig r;
	uint64_t buf, st, irq0;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 8, 0, 512, false));
	buf = rig_alloc(&r, 512, 0);
	st = rig_alloc(&r, 8, 0);
	irq0 = uks_vduse_emul_irqs(r.e, 0);
	uks_vduse_emul_set_no_interrupt(r.e, 0, true);
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st), 0);
	EXPECT_EQ(1, uks_vduse_emul_kick(r.e, 0));
	ASSERT_EQ(1, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0, uks_vduse_emul_irqs(r.e, 0));
	uks_vduse_emul_set_no_interrupt(r.e, 0, false);
	ASSERT_GE(add_read(&r, 0, 0, buf, 512, st + 1), 0);
	uks_vduse_emul_kick(r.e, 0);
	ASSERT_EQ(1, uks_vduse_blk_queue_process(r.blk, 0));
	EXPECT_EQ(irq0 + 1, uks_vduse_emul_irqs(r.e, 0));
	rig_fini(&r);
}

/* Full rings, many times round the 16-bit indices. */
TEST(wraparound)
{
	struct rig r;
	uint64_t bufs, st, hdrs;
	uint16_t id;
	uint32_t len;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 32, FEAT_EVENT_IDX, 512, false));
	bufs = rig_alloc(&r, 8 * 512, 0);
	st = rig_alloc(&r, 8, 0);
	hdrs = rig_alloc(&r, 8 * 16, 0);
	for (int i = 0; i < 8; i++) {
		struct virtio_blk_outhdr *h = rig_ptr(&r, hdrs + 16 * (uint64_t)i);

		h->type = htole32(VIRTIO_BLK_T_IN);
		h->sector = htole64((uint64_t)i);
	}
	for (uint32_t done = 0; done < 70000; done += 8) {
		int heads[8];

		for (int i = 0; i < 8; i++) {
			struct uks_vduse_emul_seg s[3] = {
				{ hdrs + 16 * (uint64_t)i, 16, false },
				{ bufs + 512 * (uint64_t)i, 512, true },
				{ st + (uint64_t)i, 1, true },
			};

			heads[i] = uks_vduse_emul_add(r.e, 0, s, 3, false);
			ASSERT_GE(heads[i], 0);
		}
		uks_vduse_emul_kick(r.e, 0);
		ASSERT_EQ(8, uks_vduse_blk_queue_process(r.blk, 0));
		for (int i = 0; i < 8; i++) {
			ASSERT_EQ(1, uks_vduse_emul_reap(r.e, 0, &id, &len));
			ASSERT_EQ(heads[i], id);
			ASSERT_EQ(513u, len);
		}
		ASSERT_EQ((uint16_t)(done + 8), uks_vduse_blk_queue_avail_idx(r.blk, 0));
	}
	rig_fini(&r);
}

struct arena {
	uint64_t hdr, buf, st;
};

struct qthread {
	struct rig *r;
	unsigned int q;
	volatile int *stop;
	const struct arena *a;
	int failures;
	uint64_t served;
};

/* The device side of one queue: wait for a kick, serve, repeat. */
static void *device_thread(void *arg)
{
	struct qthread *t = arg;
	struct pollfd p = { uks_vduse_emul_kick_fd(t->r->e, t->q), POLLIN, 0 };
	uint64_t v;

	while (!*t->stop) {
		if (poll(&p, 1, 20) <= 0)
			continue;
		if (read(p.fd, &v, sizeof(v)) != sizeof(v))
			continue;
		int n = uks_vduse_blk_queue_process(t->r->blk, t->q);

		if (n < 0)
			t->failures++;
		else
			t->served += (uint64_t)n;
	}
	return NULL;
}

#define QD 32
#define AREA_SECTORS 2048	/* each queue owns 1 MiB of the device */

/* The driver side of one queue: write a pattern at depth 32, read it back. */
static void run_queue(struct qthread *t, const struct arena *a)
{
	struct rig *r = t->r;
	struct pollfd p = { uks_vduse_emul_irq_fd(r->e, t->q), POLLIN, 0 };
	uint64_t base = (uint64_t)t->q * AREA_SECTORS;

	for (int pass = 0; pass < 2; pass++) {
		for (int round = 0; round < AREA_SECTORS / 8 / QD; round++) {
			int heads[QD], got = 0;

			for (int i = 0; i < QD; i++) {
				uint64_t sector = base + (uint64_t)(round * QD + i) * 8;
				struct virtio_blk_outhdr *h = rig_ptr(r, a->hdr + 16 * (uint64_t)i);
				uint8_t *b = rig_ptr(r, a->buf + 4096 * (uint64_t)i);
				struct uks_vduse_emul_seg s[3] = {
					{ a->hdr + 16 * (uint64_t)i, 16, false },
					{ a->buf + 4096 * (uint64_t)i, 4096, pass == 1 },
					{ a->st + (uint64_t)i, 1, true },
				};

				h->type = htole32(pass ? VIRTIO_BLK_T_IN : VIRTIO_BLK_T_OUT);
				h->sector = htole64(sector);
				if (pass == 0)
					fill_pattern(b, 4096, (uint32_t)sector);
				else
					memset(b, 0, 4096);
				*(uint8_t *)rig_ptr(r, a->st + (uint64_t)i) = STATUS_UNSET;
				heads[i] = uks_vduse_emul_add(r->e, t->q, s, 3, i & 1);
				if (heads[i] < 0)
					t->failures++;
			}
			uks_vduse_emul_kick(r->e, t->q);
			while (got < QD) {
				uint16_t id;
				uint32_t len;
				uint64_t v;
				int ret = uks_vduse_emul_reap(r->e, t->q, &id, &len);

				if (ret < 0) {
					t->failures++;
					return;
				}
				if (ret == 0) {
					if (poll(&p, 1, 5000) <= 0) {
						t->failures++;
						return;
					}
					if (read(p.fd, &v, sizeof(v)) < 0)
						t->failures++;
					continue;
				}
				got++;
			}
			for (int i = 0; i < QD; i++) {
				uint64_t sector = base + (uint64_t)(round * QD + i) * 8;
				uint8_t want[4096];

				if (*(uint8_t *)rig_ptr(r, a->st + (uint64_t)i) != VIRTIO_BLK_S_OK)
					t->failures++;
				fill_pattern(want, 4096, (uint32_t)sector);
				if (pass == 1 &&
				    memcmp(want, rig_ptr(r, a->buf + 4096 * (uint64_t)i), 4096))
					t->failures++;
			}
		}
	}
}

static void *queue_driver(void *arg)
{
	struct qthread *t = arg;

	run_queue(t, t->a);
	return NULL;
}

TEST_TIMEOUT(concurrent_queues, 120)
{
	enum { NQ = 4 };
	struct rig r;
	struct qthread dev[NQ], drv[NQ];
	struct arena ar[NQ];
	pthread_t dt[NQ], vt[NQ];
	volatile int stop = 0;
	struct uks_vduse_blk_stats st;

	ASSERT_EQ(0, rig_init(&r, "ram:4M", NQ, 64, FEAT_EVENT_IDX | FEAT_INDIRECT, 512, false));
	for (unsigned int q = 0; q < NQ; q++) {
		ar[q].hdr = rig_alloc(&r, 16 * QD, 0);
		ar[q].buf = uks_vduse_emul_alloc(r.e, 4096 * QD, 4096);
		ar[q].st = rig_alloc(&r, QD, 0);
		ASSERT_NE(0u, ar[q].buf);
		dev[q] = (struct qthread){ &r, q, &stop, &ar[q], 0, 0 };
		drv[q] = (struct qthread){ &r, q, &stop, &ar[q], 0, 0 };
		ASSERT_EQ(0, pthread_create(&dt[q], NULL, device_thread, &dev[q]));
	}
	for (unsigned int q = 0; q < NQ; q++) {
		ASSERT_EQ(0, pthread_create(&vt[q], NULL, queue_driver, &drv[q]));
	}
	for (unsigned int q = 0; q < NQ; q++)
		pthread_join(vt[q], NULL);
	stop = 1;
	for (unsigned int q = 0; q < NQ; q++) {
		pthread_join(dt[q], NULL);
		EXPECT_EQ(0, drv[q].failures);
		EXPECT_EQ(0, dev[q].failures);
		EXPECT_EQ(2u * AREA_SECTORS / 8, dev[q].served);
	}
	uks_vduse_blk_get_stats(r.blk, &st);
	EXPECT_EQ(NQ * 2u * AREA_SECTORS / 8, st.requests);
	EXPECT_EQ(0u, st.errors);
	rig_fini(&r);
}

/* A probe that counts hits and keeps the last record of each event. */
static struct {
	int hits;
	_Alignas(8) uint8_t rec[256];	/* records hold u64 fields */
	size_t len;
} tp_req, tp_done;

static struct uks_tracepoint *tp_found;
static const char *tp_want;

static int tp_match(struct uks_tracepoint *tp, void *arg)
{
	if (!strcmp(tp->system, "vduse") && !strcmp(tp->name, tp_want))
		tp_found = tp;
	return 0;
}

static struct uks_tracepoint *tp_find(const char *name)
{
	tp_found = NULL;
	tp_want = name;
	uks_tracepoint_for_each(tp_match, NULL);
	return tp_found;
}

static void *tp_reserve(void *data, struct uks_tp_iter *hit, size_t len)
{
	(void)hit;
	return len <= 256 ? ((typeof(tp_req) *)data)->rec : NULL;
}

static void tp_commit(void *data, struct uks_tp_iter *hit, void *rec, size_t len)
{
	((typeof(tp_req) *)data)->hits++;
	((typeof(tp_req) *)data)->len = len;
}

TEST(tracepoints)
{
	struct uks_tracepoint *req = tp_find("vduse_request");
	struct uks_tracepoint *done = tp_find("vduse_complete");
	struct uks_tp_probe preq = { tp_reserve, tp_commit, &tp_req };
	struct uks_tp_probe pdone = { tp_reserve, tp_commit, &tp_done };
	char line[256];
	struct rig r;
	uint64_t d;

	ASSERT_NONNULL(req);
	ASSERT_NONNULL(done);
	ASSERT_EQ(0, uks_tracepoint_attach(req, &preq));
	ASSERT_EQ(0, uks_tracepoint_attach(done, &pdone));
	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, false));
	d = rig_alloc(&r, 1024, 0);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 6, d, 1024, false, NULL));
	EXPECT_EQ(1, tp_req.hits);
	EXPECT_EQ(1, tp_done.hits);
	ASSERT_GT(req->print(line, sizeof(line), tp_req.rec), 0);
	EXPECT_STREQ("queue=0 type=1 sector=6 length=1024", line);
	ASSERT_GT(done->print(line, sizeof(line), tp_done.rec), 0);
	EXPECT_EQ(0, strncmp(line, "queue=0 type=1 sector=6 length=1024 status=0 latency=", 52));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 200, d, 512, false, NULL));
	ASSERT_GT(done->print(line, sizeof(line), tp_done.rec), 0);
	EXPECT_EQ(0, strncmp(line, "queue=0 type=0 sector=200 length=512 status=1 ", 46));
	uks_tracepoint_detach(req, &preq);
	uks_tracepoint_detach(done, &pdone);
	rig_fini(&r);
}

TEST_HARNESS_MAIN
