// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the vduse split-ring parser and request code: the
 * input is a descriptor table, an available ring (heads, idx) and the
 * contents of guest memory (headers, indirect tables, segments), served by
 * the real data path over the emulated transport.  Invariants checked on
 * every input: queue_process returns a count or -EIO (broken ring, and
 * then no used element is added), never more completions than chains
 * made available, every used id is an index of the ring, used.len never
 * exceeds the writable bytes of the ring's whole memory, and the device
 * never writes the descriptor table or the available ring.  ASan/UBSan
 * catch any access outside the emulated memory.  Built and run by
 * `make fuzz`; tests/unit/vduse/garbage.c runs the same function on
 * pseudo-random inputs in every `make check`.
 */
#include <endian.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/virtio_ring.h>

#include <uks/vduse.h>

#define FZ_NUM 16
#define FZ_MEM (256u * 1024)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz_state {
	struct uks_vduse_emul *e;
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	uint8_t *snap;
};

static struct fz_state *fz_get(void)
{
	static struct fz_state s;
	struct uks_vduse_blk_params p = { .name = "fz", .nr_queues = 1, .queue_size = FZ_NUM,
					  .block_size = 512, .event_idx = true, .indirect = true };

	if (s.e)
		return &s;
	if (uks_vduse_emul_create(FZ_MEM, 1, FZ_NUM,
				  1ull << VIRTIO_RING_F_EVENT_IDX | 1ull << VIRTIO_RING_F_INDIRECT_DESC,
				  &s.e) ||
	    uks_vduse_backend_open("ram:64K", false, false, 1, &s.be) ||
	    uks_vduse_blk_create(&p, s.be, uks_vduse_emul_transport(s.e), &s.blk))
		abort();
	s.snap = malloc(16 * FZ_NUM + 6 + 2 * FZ_NUM);
	if (!s.snap)
		abort();
	return &s;
}

/*
 * Map a raw 64-bit address onto the guest memory after the rings and a
 * page past its end.  (Buffers overlapping the rings are the driver
 * corrupting its own rings: mapped memory the device may legally write,
 * so they would only break this target's invariants.)
 */
#define FZ_DATA (UKS_VDUSE_EMUL_IOVA_BASE + 8192)
static uint64_t fz_addr(uint64_t raw)
{
	if (raw >> 63)
		return raw;		/* keep the wild ones */
	return FZ_DATA + raw % (UKS_VDUSE_EMUL_IOVA_BASE + FZ_MEM + 4096 - FZ_DATA);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz_state *s = fz_get();
	struct uks_vduse_vq_addr a;
	struct vring_desc *desc;
	struct vring_avail *avail;
	struct vring_used *used;
	uint8_t *mem;
	size_t off = 0;
	uint16_t nr_avail;
	int ret;

	if (size < 2)
		return 0;
	uks_vduse_emul_vq_addr(s->e, 0, &a);
	desc = uks_vduse_emul_ptr(s->e, a.desc);
	avail = uks_vduse_emul_ptr(s->e, a.avail);
	used = uks_vduse_emul_ptr(s->e, a.used);
	/* Reset the ring: the device restarts at avail index 0. */
	memset(used, 0, 6 + 8 * FZ_NUM);
	nr_avail = (uint16_t)(data[off++] % (FZ_NUM + 3));
	avail->flags = 0;
	avail->idx = htole16(nr_avail);
	for (unsigned int i = 0; i < FZ_NUM + 1; i++, off += 1)
		avail->ring[i] = htole16(off < size ? (uint16_t)(data[off] % (FZ_NUM + 2)) : 0);
	for (unsigned int i = 0; i < FZ_NUM; i++) {
		uint8_t raw[16] = { 0 };

		if (off < size)
			memcpy(raw, data + off, size - off < 16 ? size - off : 16);
		off += 16;
		memcpy(&desc[i], raw, 16);
		desc[i].addr = htole64(fz_addr(le64toh(desc[i].addr)));
		desc[i].len = htole32(le32toh(desc[i].len) % 70000);
		desc[i].next = htole16(le16toh(desc[i].next) % (FZ_NUM + 2));
	}
	/* The rest of the input is guest memory after the rings (headers, tables). */
	mem = uks_vduse_emul_ptr(s->e, a.used + 4096);
	if (off < size) {
		size_t room = FZ_MEM - (size_t)(a.used + 4096 - UKS_VDUSE_EMUL_IOVA_BASE);
		size_t l = size - off < room ? size - off : room;

		memcpy(mem, data + off, l);
	}
	memcpy(s->snap, desc, 16 * FZ_NUM);
	memcpy(s->snap + 16 * FZ_NUM, avail, 6 + 2 * FZ_NUM);
	a.avail_idx = 0;
	if (a.used + 4096 != FZ_DATA || uks_vduse_blk_queue_start(s->blk, 0, &a))
		abort();
	ret = uks_vduse_blk_queue_process(s->blk, 0);
	if (ret < 0 && ret != -EIO)
		abort();
	if (ret > nr_avail)
		abort();
	if (ret >= 0 && le16toh(used->idx) != (uint16_t)ret)
		abort();
	for (int i = 0; i < (int)le16toh(used->idx) && i < FZ_NUM; i++) {
		if (le32toh(used->ring[i].id) >= FZ_NUM || le32toh(used->ring[i].len) > FZ_MEM)
			abort();
	}
	if (memcmp(s->snap, desc, 16 * FZ_NUM) ||
	    memcmp(s->snap + 16 * FZ_NUM, avail, 4 + 2 * FZ_NUM))
		abort();
	uks_vduse_blk_queue_stop(s->blk, 0);
	return 0;
}
