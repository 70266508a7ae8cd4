// SPDX-License-Identifier: MIT
/*
 * The virtio-blk feature bits and config space uks offers (virtio 1.x,
 * 5.2.3-5.2.4), as VDUSE_CREATE_DEV takes them: little-endian, the layout
 * of struct virtio_blk_config up to write_zeroes_may_unmap/unused1 (60
 * bytes, like qemu-storage-daemon; the driver reads zeroes beyond).
 *
 * Why these values: seg_max = queue_size - 2 leaves room for the header and
 * the status descriptor in a chain of at most queue_size descriptors (the
 * ring validates exactly that); no SIZE_MAX (any segment size); topology
 * from the logical block size; discard/write-zeroes limits the request
 * code enforces.  VIRTIO_F_ACCESS_PLATFORM is mandatory for VDUSE and
 * VIRTIO_BLK_F_CONFIG_WCE forbidden (the kernel rejects it).
 *
 * No state, no threads, no locks.
 */
#include <endian.h>
#include <stddef.h>
#include <string.h>
#include <linux/virtio_config.h>

#include "vduse/vduse_int.h"

/* The offsets of the reference (virtio-blk-offsets.txt), checked against the uAPI header. */
_Static_assert(offsetof(struct virtio_blk_config, capacity) == 0, "capacity");
_Static_assert(offsetof(struct virtio_blk_config, size_max) == 8, "size_max");
_Static_assert(offsetof(struct virtio_blk_config, seg_max) == 12, "seg_max");
_Static_assert(offsetof(struct virtio_blk_config, blk_size) == 20, "blk_size");
_Static_assert(offsetof(struct virtio_blk_config, physical_block_exp) == 24, "pbe");
_Static_assert(offsetof(struct virtio_blk_config, min_io_size) == 26, "min_io_size");
_Static_assert(offsetof(struct virtio_blk_config, opt_io_size) == 28, "opt_io_size");
_Static_assert(offsetof(struct virtio_blk_config, wce) == 32, "wce");
_Static_assert(offsetof(struct virtio_blk_config, num_queues) == 34, "num_queues");
_Static_assert(offsetof(struct virtio_blk_config, max_discard_sectors) == 36, "mds");
_Static_assert(offsetof(struct virtio_blk_config, max_discard_seg) == 40, "mdseg");
_Static_assert(offsetof(struct virtio_blk_config, discard_sector_alignment) == 44, "dsa");
_Static_assert(offsetof(struct virtio_blk_config, max_write_zeroes_sectors) == 48, "mwzs");
_Static_assert(offsetof(struct virtio_blk_config, max_write_zeroes_seg) == 52, "mwzseg");
_Static_assert(offsetof(struct virtio_blk_config, write_zeroes_may_unmap) == 56, "wzmu");

#define CONFIG_SIZE 60

UKS_EXPORT uint64_t uks_vduse_blk_features(const struct uks_vduse_blk_params *p)
{
	uint64_t f = 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_ACCESS_PLATFORM |
		     1ull << VIRTIO_BLK_F_SEG_MAX | 1ull << VIRTIO_BLK_F_BLK_SIZE |
		     1ull << VIRTIO_BLK_F_TOPOLOGY | 1ull << VIRTIO_BLK_F_FLUSH;

	if (!p->readonly)
		f |= 1ull << VIRTIO_BLK_F_DISCARD | 1ull << VIRTIO_BLK_F_WRITE_ZEROES;
	else
		f |= 1ull << VIRTIO_BLK_F_RO;
	if (p->nr_queues > 1)
		f |= 1ull << VIRTIO_BLK_F_MQ;
	if (p->event_idx)
		f |= 1ull << VIRTIO_RING_F_EVENT_IDX;
	if (p->indirect)
		f |= 1ull << VIRTIO_RING_F_INDIRECT_DESC;
	return f;
}

UKS_EXPORT size_t uks_vduse_blk_config_size(void)
{
	return CONFIG_SIZE;
}

UKS_EXPORT size_t uks_vduse_blk_config(const struct uks_vduse_blk_params *p, uint64_t capacity_bytes,
			    void *buf)
{
	struct virtio_blk_config c;
	unsigned int lbs = p->block_size ? p->block_size : 512;

	memset(&c, 0, sizeof(c));
	c.capacity = htole64(capacity_bytes / 512);
	c.seg_max = htole32(p->queue_size - 2);
	c.blk_size = htole32(lbs);
	c.physical_block_exp = 0;
	c.alignment_offset = 0;
	c.min_io_size = htole16(1);
	c.opt_io_size = htole32(1);
	c.num_queues = htole16((uint16_t)p->nr_queues);
	c.max_discard_sectors = htole32(VDUSE_MAX_DWZ_SECTORS);
	c.max_discard_seg = htole32(VDUSE_MAX_DWZ_SEG);
	c.discard_sector_alignment = htole32(lbs / 512);
	c.max_write_zeroes_sectors = htole32(VDUSE_MAX_DWZ_SECTORS);
	c.max_write_zeroes_seg = htole32(VDUSE_MAX_DWZ_SEG);
	c.write_zeroes_may_unmap = 1;
	memcpy(buf, &c, CONFIG_SIZE);
	return CONFIG_SIZE;
}
