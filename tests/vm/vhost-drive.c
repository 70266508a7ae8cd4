// SPDX-License-Identifier: MIT
/*
 * vhost-drive: a minimal virtio-blk driver in user space over
 * /dev/vhost-vdpa-N, to reach the parts of our VDUSE device that
 * virtio_vdpa never exercises.  With vhost-vdpa the driver's memory is
 * described to the kernel with IOTLB messages, and VDUSE forwards every
 * change to the device as VDUSE_UPDATE_IOTLB; VHOST_GET_VRING_BASE becomes
 * VDUSE_GET_VQ_STATE.  Runs inside the tests/vm guest, prints TAP.
 *
 *   vhost-drive /dev/vhost-vdpa-0
 *
 * Memory: two memfd areas (vhost-vdpa + VDUSE need file-backed memory: the
 * device maps the same file), one for the ring and the first buffers at
 * IOVA 0x10000000, one mapped only later at IOVA 0x20000000.  Checks:
 * write + read back through the first area; a request into the second area
 * before it is mapped fails with IOERR (and the device survives); after the
 * IOTLB update it works; after an invalidate + update of the first area
 * (the rings' cached mappings dropped and remade) requests still work;
 * VHOST_GET_VRING_BASE returns the number of requests taken; reset.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/vhost.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ring.h>
#include <poll.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#define NUM		16
#define AREA		(1u << 20)
#define IOVA_A		0x10000000ull
#define IOVA_B		0x20000000ull
/* layout of area A */
#define OFF_DESC	0x0000
#define OFF_AVAIL	0x1000
#define OFF_USED	0x2000
#define OFF_HDR		0x3000
#define OFF_STATUS	0x3100
#define OFF_DATA	0x4000

static int fd, kick, call, tests, failed;
static uint8_t *a, *b;
static uint16_t avail_idx, used_seen;

static void __attribute__((format(printf, 2, 3))) check(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d ", cond ? "ok" : "not ok", ++tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failed += !cond;
}

static uint8_t *area(size_t len)
{
	int m = memfd_create("vhost-drive", MFD_CLOEXEC);
	void *p;

	if (m < 0 || ftruncate(m, (off_t)len))
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m, 0);
	close(m);
	if (p == MAP_FAILED)
		return NULL;
	memset(p, 0, len);
	return p;
}

static int iotlb(uint8_t type, uint64_t iova, uint64_t size, void *uaddr)
{
	struct vhost_msg_v2 msg = { .type = VHOST_IOTLB_MSG_V2 };

	msg.iotlb.iova = iova;
	msg.iotlb.size = size;
	msg.iotlb.uaddr = (uint64_t)(uintptr_t)uaddr;
	msg.iotlb.perm = VHOST_ACCESS_RW;
	msg.iotlb.type = type;
	return write(fd, &msg, sizeof(msg)) == sizeof(msg) ? 0 : -errno;
}

static int set_status(uint8_t s)
{
	return ioctl(fd, VHOST_VDPA_SET_STATUS, &s) ? -errno : 0;
}

/* One request: header + data buffer (at @data_iova) + status; returns the status or -errno. */
static int request(uint32_t type, uint64_t sector, uint64_t data_iova, uint32_t len)
{
	struct vring_desc *desc = (struct vring_desc *)(a + OFF_DESC);
	struct vring_avail *av = (struct vring_avail *)(a + OFF_AVAIL);
	struct vring_used *used = (struct vring_used *)(a + OFF_USED);
	struct virtio_blk_outhdr *h = (struct virtio_blk_outhdr *)(a + OFF_HDR);
	struct pollfd p = { .fd = call, .events = POLLIN };
	uint64_t one = 1, v;

	h->type = htole32(type);
	h->ioprio = 0;
	h->sector = htole64(sector);
	a[OFF_STATUS] = 0xff;
	desc[0] = (struct vring_desc){ htole64(IOVA_A + OFF_HDR), htole32(16), htole16(VRING_DESC_F_NEXT), htole16(1) };
	desc[1] = (struct vring_desc){ htole64(data_iova), htole32(len),
				       htole16(VRING_DESC_F_NEXT | (type == VIRTIO_BLK_T_IN ? VRING_DESC_F_WRITE : 0)),
				       htole16(2) };
	desc[2] = (struct vring_desc){ htole64(IOVA_A + OFF_STATUS), htole32(1), htole16(VRING_DESC_F_WRITE), 0 };
	av->ring[avail_idx % NUM] = 0;
	__atomic_store_n(&av->idx, htole16(++avail_idx), __ATOMIC_RELEASE);
	if (write(kick, &one, sizeof(one)) != sizeof(one))
		return -errno;
	for (int tries = 0; tries < 50; tries++) {
		if (le16toh(__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE)) != used_seen)
			break;
		if (poll(&p, 1, 100) > 0 && read(call, &v, sizeof(v)) < 0)
			return -errno;
	}
	if (le16toh(__atomic_load_n(&used->idx, __ATOMIC_ACQUIRE)) == used_seen)
		return -ETIMEDOUT;
	used_seen++;
	return a[OFF_STATUS];
}

static int setup(void)
{
	uint64_t features, want = 1ull << VIRTIO_F_VERSION_1 | 1ull << VIRTIO_F_ACCESS_PLATFORM |
				  1ull << VIRTIO_BLK_F_FLUSH | 1ull << VIRTIO_BLK_F_BLK_SIZE;
	uint64_t backend = 1ull << VHOST_BACKEND_F_IOTLB_MSG_V2;
	struct vhost_vring_state num = { 0, NUM }, base = { 0, 0 }, enable = { 0, 1 };
	struct vhost_vring_addr addr = { .index = 0, .desc_user_addr = IOVA_A + OFF_DESC,
					 .avail_user_addr = IOVA_A + OFF_AVAIL,
					 .used_user_addr = IOVA_A + OFF_USED };
	struct vhost_vring_file kf = { 0, -1 }, cf = { 0, -1 };
	uint32_t id = 0;

	if (ioctl(fd, VHOST_SET_OWNER) || ioctl(fd, VHOST_SET_BACKEND_FEATURES, &backend))
		return -errno;
	if (ioctl(fd, VHOST_VDPA_GET_DEVICE_ID, &id) || id != 2)
		return -ENODEV;
	set_status(0);
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER);
	if (ioctl(fd, VHOST_GET_FEATURES, &features))
		return -errno;
	features &= want;
	if (ioctl(fd, VHOST_SET_FEATURES, &features))
		return -errno;
	set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK);
	if (iotlb(VHOST_IOTLB_UPDATE, IOVA_A, AREA, a))
		return -errno;
	kick = eventfd(0, EFD_CLOEXEC);
	call = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	kf.fd = kick;
	cf.fd = call;
	if (ioctl(fd, VHOST_SET_VRING_NUM, &num) || ioctl(fd, VHOST_SET_VRING_BASE, &base) ||
	    ioctl(fd, VHOST_SET_VRING_ADDR, &addr) || ioctl(fd, VHOST_SET_VRING_KICK, &kf) ||
	    ioctl(fd, VHOST_SET_VRING_CALL, &cf) || ioctl(fd, VHOST_VDPA_SET_VRING_ENABLE, &enable))
		return -errno;
	return set_status(VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			  VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK);
}

int main(int argc, char **argv)
{
	struct vhost_vring_state base = { 0, 0 };
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: vhost-drive /dev/vhost-vdpa-N\n");
		return 2;
	}
	a = area(AREA);
	b = area(AREA);
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	check(fd >= 0 && a && b, "open %s: %s", argv[1], fd < 0 ? strerror(errno) : "ok");
	if (fd < 0 || !a || !b)
		return 1;
	ret = setup();
	check(ret == 0, "vhost-vdpa set up (features, IOTLB update of area A, ring, DRIVER_OK): %s",
	      strerror(-ret));
	if (ret)
		return 1;

	for (int i = 0; i < 4096; i++)
		a[OFF_DATA + i] = (uint8_t)(i * 7 + 1);
	ret = request(VIRTIO_BLK_T_OUT, 8, IOVA_A + OFF_DATA, 4096);
	check(ret == VIRTIO_BLK_S_OK, "write 4 KiB from area A: status %d", ret);
	memset(a + OFF_DATA + 4096, 0, 4096);
	ret = request(VIRTIO_BLK_T_IN, 8, IOVA_A + OFF_DATA + 4096, 4096);
	check(ret == VIRTIO_BLK_S_OK && !memcmp(a + OFF_DATA, a + OFF_DATA + 4096, 4096),
	      "read it back into area A: status %d, same bytes", ret);

	ret = request(VIRTIO_BLK_T_IN, 8, IOVA_B, 4096);
	check(ret == VIRTIO_BLK_S_IOERR, "a buffer at an IOVA nobody mapped: IOERR (status %d)", ret);
	ret = iotlb(VHOST_IOTLB_UPDATE, IOVA_B, AREA, b);
	check(ret == 0, "IOTLB update maps area B (the device gets VDUSE_UPDATE_IOTLB): %s",
	      strerror(-ret));
	ret = request(VIRTIO_BLK_T_IN, 8, IOVA_B, 4096);
	check(ret == VIRTIO_BLK_S_OK && !memcmp(a + OFF_DATA, b, 4096),
	      "after the update, a read into area B works: status %d", ret);

	ret = iotlb(VHOST_IOTLB_INVALIDATE, IOVA_A, AREA, a);
	if (!ret)
		ret = iotlb(VHOST_IOTLB_UPDATE, IOVA_A, AREA, a);
	check(ret == 0, "invalidate + update of area A (the rings' mappings change): %s",
	      strerror(-ret));
	memset(a + OFF_DATA + 4096, 0, 4096);
	ret = request(VIRTIO_BLK_T_IN, 8, IOVA_A + OFF_DATA + 4096, 4096);
	check(ret == VIRTIO_BLK_S_OK && !memcmp(a + OFF_DATA, a + OFF_DATA + 4096, 4096),
	      "requests still work on the remapped rings: status %d", ret);

	ret = ioctl(fd, VHOST_GET_VRING_BASE, &base) ? -errno : 0;
	check(ret == 0 && base.num == avail_idx,
	      "VHOST_GET_VRING_BASE (VDUSE_GET_VQ_STATE) = %u, requests taken %u", base.num, avail_idx);
	ret = set_status(0);
	check(ret == 0, "reset: %s", strerror(-ret));
	close(fd);
	printf("1..%d\n", tests);
	return failed ? 1 : 0;
}
