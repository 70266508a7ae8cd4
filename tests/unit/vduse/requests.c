// SPDX-License-Identifier: MIT
/*
 * vduse data path, well-formed requests: every virtio-blk request type
 * through the emulated kernel side (same split rings, same transport
 * calls as /dev/vduse), checking every status byte, every used.len and
 * every data byte, on the ram, null and file backends.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "unit/vduse/rig.h"

#define SZ (1u << 20)

TEST(write_read_roundtrip)
{
	struct rig r;
	uint32_t used;
	uint64_t w, rd;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 64, FEAT_EVENT_IDX | FEAT_INDIRECT, 512, false));
	w = rig_alloc(&r, 8192, 0);
	rd = rig_alloc(&r, 8192, 0xee);
	fill_pattern(rig_ptr(&r, w), 8192, 1);
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 8, w, 8192, false, &used));
	EXPECT_EQ(1u, used);
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 8, rd, 8192, false, &used));
	EXPECT_EQ(8193u, used);
	EXPECT_EQ(0, memcmp(rig_ptr(&r, w), rig_ptr(&r, rd), 8192));
	/* Untouched sectors read as zeroes; the last sector is readable. */
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 0, rd, 4096, false, NULL));
	EXPECT_TRUE(all_bytes(rig_ptr(&r, rd), 4096, 0));
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, SZ / 512 - 1, rd, 512, false,
					   NULL));
	/* A zero-length read is fine. */
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 0, 0, 0, false, &used));
	EXPECT_EQ(1u, used);
	rig_fini(&r);
}

TEST(indirect_roundtrip)
{
	struct rig r;
	uint64_t w, rd;
	uint32_t used;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 16, FEAT_INDIRECT, 512, false));
	w = rig_alloc(&r, 65536, 0);
	rd = rig_alloc(&r, 65536, 0);
	fill_pattern(rig_ptr(&r, w), 65536, 7);
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 100, w, 65536, true, &used));
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 100, rd, 65536, true, &used));
	EXPECT_EQ(65537u, used);
	EXPECT_EQ(0, memcmp(rig_ptr(&r, w), rig_ptr(&r, rd), 65536));
	rig_fini(&r);
}

/* Header split 3+13, data in odd pieces, status as the last byte of a data descriptor. */
TEST(split_descriptors)
{
	struct rig r;
	uint64_t hdr, d1, d2, d3, rd;
	struct virtio_blk_outhdr h = { htole32(VIRTIO_BLK_T_OUT), 0, htole64(3) };
	uint8_t expect[2048];
	uint16_t id;
	uint32_t len;
	int head;

	ASSERT_EQ(0, rig_init(&r, "ram:1M", 1, 64, 0, 512, false));
	hdr = rig_alloc(&r, 16, 0);
	memcpy(rig_ptr(&r, hdr), &h, 16);
	d1 = rig_alloc(&r, 100, 0);
	d2 = rig_alloc(&r, 1000, 0);
	d3 = rig_alloc(&r, 948, 0);
	fill_pattern(rig_ptr(&r, d1), 100, 3);
	fill_pattern(rig_ptr(&r, d2), 1000, 4);
	fill_pattern(rig_ptr(&r, d3), 948, 5);
	memcpy(expect, rig_ptr(&r, d1), 100);
	memcpy(expect + 100, rig_ptr(&r, d2), 1000);
	memcpy(expect + 1100, rig_ptr(&r, d3), 948);
	{
		struct uks_vduse_emul_seg s[] = {
			{ hdr, 3, false }, { hdr + 3, 13, false }, { d1, 100, false },
			{ d2, 1000, false }, { d3, 948, false }, { rig_alloc(&r, 1, 9), 1, true },
		};

		head = uks_vduse_emul_add(r.e, 0, s, 6, false);
		ASSERT_GE(head, 0);
		ASSERT_EQ(1, rig_serve_one(&r, 0, head));
		ASSERT_EQ(VIRTIO_BLK_S_OK, *(uint8_t *)rig_ptr(&r, s[5].iova));
	}
	/* Read back into 1024 + 1025 bytes: the status is the last byte of the second. */
	h.type = htole32(VIRTIO_BLK_T_IN);
	memcpy(rig_ptr(&r, hdr), &h, 16);
	rd = rig_alloc(&r, 2049, 0x11);
	{
		struct uks_vduse_emul_seg s[] = {
			{ hdr, 16, false }, { rd, 1024, true }, { rd + 1024, 1025, true },
		};

		head = uks_vduse_emul_add(r.e, 0, s, 3, false);
		uks_vduse_emul_kick(r.e, 0);
		ASSERT_EQ(1, uks_vduse_blk_queue_process(r.blk, 0));
		ASSERT_EQ(1, uks_vduse_emul_reap(r.e, 0, &id, &len));
		EXPECT_EQ(head, id);
		EXPECT_EQ(2049u, len);
		EXPECT_EQ(0, memcmp(expect, rig_ptr(&r, rd), 2048));
		EXPECT_EQ(VIRTIO_BLK_S_OK, ((uint8_t *)rig_ptr(&r, rd))[2048]);
	}
	rig_fini(&r);
}

TEST(flush_get_id_unsupported)
{
	struct rig r;
	uint64_t id;
	uint32_t used;
	static const uint32_t bad_types[] = { 2, 3, 5, 14, 15, 99, 0x7fffffff };

	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, false));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false, &used));
	EXPECT_EQ(1u, used);
	/* BARRIER is masked, as qemu-storage-daemon does: a barrier flush is a flush. */
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_FLUSH | VIRTIO_BLK_T_BARRIER, 0, 0,
					   0, false, NULL));
	id = rig_alloc(&r, 20, 0xff);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_GET_ID, 0, id, 20, false, &used));
	EXPECT_EQ(21u, used);
	EXPECT_EQ(0, memcmp(rig_ptr(&r, id), "vtest0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 20));
	id = rig_alloc(&r, 8, 0xff);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_GET_ID, 0, id, 4, false, &used));
	EXPECT_EQ(5u, used);
	EXPECT_EQ(0, memcmp(rig_ptr(&r, id), "vtes\xff\xff\xff\xff", 8));
	for (unsigned int i = 0; i < sizeof(bad_types) / sizeof(bad_types[0]); i++) {
		uint64_t d = rig_alloc(&r, 512, 0x5a);

		EXPECT_EQ(VIRTIO_BLK_S_UNSUPP, blk_req(&r, 0, bad_types[i], 0, d, 512, false,
						       &used));
		EXPECT_EQ(1u, used);
		EXPECT_TRUE(all_bytes(rig_ptr(&r, d), 512, 0x5a));
	}
	{
		struct uks_vduse_blk_stats st;

		uks_vduse_blk_get_stats(r.blk, &st);
		EXPECT_EQ(7u, st.unsupported);
		EXPECT_EQ(11u, st.requests);
		EXPECT_EQ(0u, st.errors);
	}
	rig_fini(&r);
}

TEST(sector_bounds)
{
	struct rig r;
	uint64_t d;
	uint32_t used;

	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, false));
	d = rig_alloc(&r, 4096, 0x77);
	/* 128 sectors: a read of 2 sectors at 127 crosses the end. */
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 127, d, 1024, false, &used));
	EXPECT_EQ(1u, used);
	EXPECT_TRUE(all_bytes(rig_ptr(&r, d), 4096, 0x77));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 128, d, 512, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 128, d, 512, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, UINT64_MAX, d, 512, false,
					      NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_OUT, UINT64_MAX - 1, d, 1024,
					      false, NULL));
	/* Lengths must be whole sectors. */
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 0, d, 511, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 0, d, 1000, false, NULL));
	EXPECT_TRUE(all_bytes(rig_ptr(&r, d), 4096, 0x77));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 127, d, 512, false, NULL));
	rig_fini(&r);

	/* 4096-byte blocks: sectors must be 8-aligned, lengths whole blocks. */
	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 4096, false));
	d = rig_alloc(&r, 4096, 0x77);
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 1, d, 4096, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 8, d, 512, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 8, d, 4096, false, NULL));
	rig_fini(&r);
}

TEST(readonly_device)
{
	struct rig r;
	uint64_t d, seg;
	struct virtio_blk_discard_write_zeroes *s;

	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, true));
	d = rig_alloc(&r, 512, 1);
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 0, d, 512, false, NULL));
	seg = rig_alloc(&r, 16, 0);
	s = rig_ptr(&r, seg);
	s->sector = 0;
	s->num_sectors = htole32(1);
	s->flags = 0;
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_DISCARD, 0, seg, 16, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, seg, 16, false,
					      NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 0, d, 512, false, NULL));
	EXPECT_TRUE(all_bytes(rig_ptr(&r, d), 512, 0));
	EXPECT_TRUE(uks_vduse_blk_features(&(struct uks_vduse_blk_params){
		.nr_queues = 1, .queue_size = 8, .block_size = 512, .readonly = true }) &
		(1ull << VIRTIO_BLK_F_RO));
	rig_fini(&r);
}

static uint64_t segs(struct rig *r, unsigned int n, const struct virtio_blk_discard_write_zeroes *v)
{
	uint64_t iova = rig_alloc(r, 16 * n, 0);

	memcpy(rig_ptr(r, iova), v, 16 * n);
	return iova;
}

#define SEG(s, n, f) { htole64(s), htole32(n), htole32(f) }

static void dwz_checks(struct th_result *_th_r, struct rig *r)
{
	uint64_t w = rig_alloc(r, 16384, 0), rd = rig_alloc(r, 16384, 0x33);
	struct virtio_blk_discard_write_zeroes one[] = { SEG(2, 4, 0) };
	struct virtio_blk_discard_write_zeroes unmap[] = { SEG(8, 8, 1) };
	struct virtio_blk_discard_write_zeroes two[] = { SEG(20, 1, 0), SEG(24, 2, 1) };
	struct virtio_blk_discard_write_zeroes badflag[] = { SEG(0, 1, 2) };
	struct virtio_blk_discard_write_zeroes oob[] = { SEG(0, 1, 0), SEG(127, 2, 0) };
	struct virtio_blk_discard_write_zeroes many[17];
	uint8_t *exp = malloc(16384);

	ASSERT_NONNULL(exp);
	fill_pattern(rig_ptr(r, w), 16384, 42);
	memcpy(exp, rig_ptr(r, w), 16384);
	ASSERT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_OUT, 0, w, 16384, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, segs(r, 1, one),
					   16, false, NULL));
	memset(exp + 2 * 512, 0, 4 * 512);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, segs(r, 1, unmap),
					   16, false, NULL));
	memset(exp + 8 * 512, 0, 8 * 512);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, segs(r, 2, two),
					   32, false, NULL));
	memset(exp + 20 * 512, 0, 512);
	memset(exp + 24 * 512, 0, 1024);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_IN, 0, rd, 16384, false, NULL));
	EXPECT_EQ(0, memcmp(exp, rig_ptr(r, rd), 16384));
	/* DISCARD: the ram and file backends read discarded sectors as zeroes. */
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_DISCARD, 0, segs(r, 1, one), 16,
					   false, NULL));
	/* Rejections. */
	EXPECT_EQ(VIRTIO_BLK_S_UNSUPP, blk_req(r, 0, VIRTIO_BLK_T_DISCARD, 0, segs(r, 1, unmap),
					       16, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_UNSUPP, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0,
					       segs(r, 1, badflag), 16, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, segs(r, 2, oob),
					      32, false, NULL));
	for (int i = 0; i < 17; i++)
		many[i] = (struct virtio_blk_discard_write_zeroes)SEG((uint64_t)i, 1, 0);
	EXPECT_EQ(VIRTIO_BLK_S_UNSUPP, blk_req(r, 0, VIRTIO_BLK_T_DISCARD, 0, segs(r, 17, many),
					       17 * 16, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(r, 0, VIRTIO_BLK_T_DISCARD, 0, segs(r, 1, one), 15,
					      false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(r, 0, VIRTIO_BLK_T_WRITE_ZEROES, 0, 0, 0, false,
					      NULL));
	/* None of the rejected ones changed anything (sectors 2..5 were discarded). */
	memset(exp + 2 * 512, 0, 4 * 512);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(r, 0, VIRTIO_BLK_T_IN, 0, rd, 16384, false, NULL));
	EXPECT_EQ(0, memcmp(exp, rig_ptr(r, rd), 16384));
	free(exp);
}

TEST(discard_write_zeroes_ram)
{
	struct rig r;

	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, false));
	dwz_checks(_th_r, &r);
	rig_fini(&r);
}

static int make_file(char *path, size_t size)
{
	int fd;

	strcpy(path, "/tmp/uks-vduse-XXXXXX");
	fd = mkstemp(path);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

TEST(file_backend)
{
	char path[64], spec[80];
	struct rig r;
	uint64_t w;
	uint8_t buf[4096];
	int fd;

	ASSERT_EQ(0, make_file(path, 65536));
	snprintf(spec, sizeof(spec), "file:%s", path);
	ASSERT_EQ(0, rig_init(&r, spec, 1, 8, 0, 512, false));
	dwz_checks(_th_r, &r);
	w = rig_alloc(&r, 4096, 0);
	fill_pattern(rig_ptr(&r, w), 4096, 99);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 64, w, 4096, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false, NULL));
	fd = open(path, O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(4096, pread(fd, buf, 4096, 64 * 512));
	EXPECT_EQ(0, memcmp(buf, rig_ptr(&r, w), 4096));
	close(fd);
	rig_fini(&r);
	unlink(path);
}

TEST(file_backend_direct)
{
	char path[64], spec[80];
	struct uks_vduse_backend *be;
	struct rig r;
	uint64_t w, rd;
	int ret;

	/* O_DIRECT needs a file system that has it (/var/tmp rather than a tmpfs /tmp). */
	strcpy(path, "/var/tmp/uks-vduse-direct-XXXXXX");
	ret = mkstemp(path);
	ASSERT_GE(ret, 0);
	close(ret);
	ASSERT_EQ(0, truncate(path, 1 << 20));
	snprintf(spec, sizeof(spec), "file:%s", path);
	ret = uks_vduse_backend_open(spec, false, true, 1, &be);
	if (ret == -EINVAL) {
		unlink(path);
		SKIP(return, "no O_DIRECT on this file system");
	}
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, rig_init_be(&r, be, 1, 8, 0, 4096, false));
	w = uks_vduse_emul_alloc(r.e, 8192, 4096);
	rd = uks_vduse_emul_alloc(r.e, 8192, 4096);
	fill_pattern(rig_ptr(&r, w), 8192, 5);
	ret = blk_req(&r, 0, VIRTIO_BLK_T_OUT, 16, w, 8192, false, NULL);
	EXPECT_EQ(VIRTIO_BLK_S_OK, ret);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_FLUSH, 0, 0, 0, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 16, rd, 8192, false, NULL));
	EXPECT_EQ(0, memcmp(rig_ptr(&r, w), rig_ptr(&r, rd), 8192));
	rig_fini(&r);
	unlink(path);
}

TEST(null_backend)
{
	struct rig r;
	uint64_t d;

	ASSERT_EQ(0, rig_init(&r, "null:1G", 1, 8, 0, 512, false));
	d = rig_alloc(&r, 4096, 0x42);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 0, d, 4096, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, (1u << 21) - 8, d, 4096, false,
					   NULL));
	EXPECT_TRUE(all_bytes(rig_ptr(&r, d), 4096, 0x42));	/* null: buffers untouched */
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 1u << 21, d, 512, false,
					      NULL));
	rig_fini(&r);
}

TEST(config_space)
{
	struct uks_vduse_blk_params p = { .name = "x", .nr_queues = 4, .queue_size = 256,
					  .block_size = 4096, .event_idx = true, .indirect = true };
	uint8_t c[128];
	uint64_t f = uks_vduse_blk_features(&p), cap;
	uint32_t v32;
	uint16_t v16;

	memset(c, 0xff, sizeof(c));
	ASSERT_EQ(60u, uks_vduse_blk_config(&p, 1ull << 30, c));
	EXPECT_EQ(0xff, c[60]);
	memcpy(&cap, c, 8);
	EXPECT_EQ(1ull << 21, le64toh(cap));
	memcpy(&v32, c + 12, 4);
	EXPECT_EQ(254u, le32toh(v32));		/* seg_max */
	memcpy(&v32, c + 20, 4);
	EXPECT_EQ(4096u, le32toh(v32));	/* blk_size */
	memcpy(&v16, c + 34, 2);
	EXPECT_EQ(4u, le16toh(v16));		/* num_queues */
	memcpy(&v32, c + 44, 4);
	EXPECT_EQ(8u, le32toh(v32));		/* discard_sector_alignment */
	EXPECT_EQ(1, c[56]);			/* write_zeroes_may_unmap */
	EXPECT_TRUE(f & (1ull << 33));		/* ACCESS_PLATFORM: VDUSE requires it */
	EXPECT_TRUE(f & (1ull << 32));
	EXPECT_FALSE(f & (1ull << VIRTIO_BLK_F_CONFIG_WCE));	/* VDUSE rejects it */
	EXPECT_TRUE(f & (1ull << VIRTIO_BLK_F_MQ));
	EXPECT_TRUE(f & FEAT_EVENT_IDX);
	EXPECT_TRUE(f & FEAT_INDIRECT);
	EXPECT_TRUE(f & (1ull << VIRTIO_BLK_F_FLUSH));
}

TEST(resize_capacity)
{
	struct rig r;
	uint64_t w, rd;

	ASSERT_EQ(0, rig_init(&r, "ram:64K", 1, 8, 0, 512, false));
	w = rig_alloc(&r, 512, 0);
	rd = rig_alloc(&r, 512, 0);
	fill_pattern(rig_ptr(&r, w), 512, 11);
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 127, w, 512, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 200, w, 512, false, NULL));
	ASSERT_EQ(0, uks_vduse_backend_resize(r.be, 256 * 1024));
	uks_vduse_blk_set_capacity(r.blk, uks_vduse_backend_size(r.be));
	EXPECT_EQ(512u, uks_vduse_blk_capacity(r.blk));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_OUT, 200, w, 512, false, NULL));
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 127, rd, 512, false, NULL));
	EXPECT_EQ(0, memcmp(rig_ptr(&r, w), rig_ptr(&r, rd), 512));	/* data kept */
	EXPECT_EQ(VIRTIO_BLK_S_OK, blk_req(&r, 0, VIRTIO_BLK_T_IN, 200, rd, 512, false, NULL));
	EXPECT_EQ(0, memcmp(rig_ptr(&r, w), rig_ptr(&r, rd), 512));
	ASSERT_EQ(0, uks_vduse_backend_resize(r.be, 32 * 1024));
	uks_vduse_blk_set_capacity(r.blk, uks_vduse_backend_size(r.be));
	EXPECT_EQ(VIRTIO_BLK_S_IOERR, blk_req(&r, 0, VIRTIO_BLK_T_IN, 64, rd, 512, false, NULL));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_resize(r.be, 1000));
	rig_fini(&r);
}

TEST(parse_size_and_specs)
{
	uint64_t v;
	struct uks_vduse_backend *be;

	EXPECT_EQ(0, uks_vduse_parse_size("4096", &v));
	EXPECT_EQ(4096u, v);
	EXPECT_EQ(0, uks_vduse_parse_size("64K", &v));
	EXPECT_EQ(65536u, v);
	EXPECT_EQ(0, uks_vduse_parse_size("3m", &v));
	EXPECT_EQ(3u << 20, v);
	EXPECT_EQ(0, uks_vduse_parse_size("2G", &v));
	EXPECT_EQ(2ull << 30, v);
	EXPECT_EQ(-EINVAL, uks_vduse_parse_size("", &v));
	EXPECT_EQ(-EINVAL, uks_vduse_parse_size("12KB", &v));
	EXPECT_EQ(-EINVAL, uks_vduse_parse_size("-1", &v));
	EXPECT_EQ(-EINVAL, uks_vduse_parse_size("1X", &v));
	EXPECT_EQ(-ERANGE, uks_vduse_parse_size("99999999999999999999", &v));
	EXPECT_EQ(-ERANGE, uks_vduse_parse_size("17179869184G", &v));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_open("disk:1M", false, false, 1, &be));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_open("ram:1000", false, false, 1, &be));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_open("ram:0", false, false, 1, &be));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_open("file:", false, false, 1, &be));
	EXPECT_EQ(-ENOENT, uks_vduse_backend_open("file:/nonexistent/x", false, false, 1, &be));
	EXPECT_EQ(-EINVAL, uks_vduse_backend_open("file:/dev/null", false, false, 1, &be));
}

TEST_HARNESS_MAIN
