// SPDX-License-Identifier: MIT
/**
 * @file vduse-emul.c - virtio-blk requests through uks's VDUSE device, with
 * the kernel's side emulated.
 *
 * What `uks vduse-blk` does with /dev/vduse, on a machine without it: the
 * device (uks_vduse_blk over a file backend) runs in a process of its own
 * and waits on the queue's kick eventfd; this process is the driver
 * (virtio_blk over virtio_vdpa): it puts request chains on the split ring
 * in guest memory (a shared memfd, as the kernel's bounce pages are shared
 * with the VDUSE daemon), kicks, waits for the interrupt eventfd and reaps
 * the used ring.  Each write is then checked in the backing file itself.
 *
 * Compile with: gcc -Wall vduse-emul.c $(pkg-config --cflags --libs uks)
 * Run:          ./a.out [FILE]   (default: a temporary file, removed after)
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include <uks/vduse.h>

#define DISK_SIZE	(1u << 20)
#define SECTOR		512

static const struct uks_vduse_blk_params params = {
	.name = "vdemo0", .nr_queues = 1, .queue_size = 64, .block_size = SECTOR,
	.event_idx = true, .indirect = true,
};

/* The device process: serve the queue at every kick until @stop_fd is readable. */
static int device_main(struct uks_vduse_emul *e, const char *spec, int stop_fd)
{
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	struct uks_vduse_blk_stats st;
	struct uks_vduse_vq_addr a;
	struct pollfd p[2] = { { uks_vduse_emul_kick_fd(e, 0), POLLIN, 0 }, { stop_fd, POLLIN, 0 } };
	uint64_t v;
	int ret;

	ret = uks_vduse_backend_open(spec, false, false, 1, &be);
	if (!ret)
		ret = uks_vduse_blk_create(&params, be, uks_vduse_emul_transport(e), &blk);
	if (!ret) {
		uks_vduse_emul_vq_addr(e, 0, &a);	/* what VDUSE_VQ_GET_INFO tells */
		ret = uks_vduse_blk_queue_start(blk, 0, &a);
	}
	if (ret) {
		fprintf(stderr, "device: %s\n", strerror(-ret));
		return 1;
	}
	while (poll(p, 2, -1) >= 0 && !(p[1].revents & (POLLIN | POLLHUP))) {
		if (p[0].revents & POLLIN && read(p[0].fd, &v, sizeof(v)) == sizeof(v))
			uks_vduse_blk_queue_process(blk, 0);
	}
	uks_vduse_blk_get_stats(blk, &st);
	printf("device: %llu requests, %llu IOERR, %llu UNSUPP, %llu malformed, %llu interrupts\n",
	       (unsigned long long)st.requests, (unsigned long long)st.errors,
	       (unsigned long long)st.unsupported, (unsigned long long)st.malformed,
	       (unsigned long long)st.irqs);
	fflush(stdout);
	uks_vduse_blk_destroy(blk);
	uks_vduse_backend_close(be);
	return 0;
}

static const char *status_name(uint8_t s)
{
	return s == VIRTIO_BLK_S_OK ? "OK" : s == VIRTIO_BLK_S_IOERR ? "IOERR" :
	       s == VIRTIO_BLK_S_UNSUPP ? "UNSUPP" : "(no status)";
}

/*
 * The driver: one request as virtio_blk builds it (header, data, status),
 * made available, kicked, and reaped after the interrupt.  Returns the
 * status byte, or -1 if the device did not answer.
 */
static int request(struct uks_vduse_emul *e, uint32_t type, uint64_t sector, uint64_t data,
		   uint32_t len, uint32_t *used)
{
	uint64_t hdr = uks_vduse_emul_alloc(e, 16, 16), st = uks_vduse_emul_alloc(e, 1, 1);
	struct virtio_blk_outhdr *h = uks_vduse_emul_ptr(e, hdr);
	bool in = type == VIRTIO_BLK_T_IN || type == VIRTIO_BLK_T_GET_ID;
	struct uks_vduse_emul_seg s[3];
	struct pollfd irq = { uks_vduse_emul_irq_fd(e, 0), POLLIN, 0 };
	unsigned int n = 0;
	uint16_t id;
	uint64_t v;
	int head;

	if (!hdr || !st)
		return -1;
	h->type = htole32(type);
	h->ioprio = 0;
	h->sector = htole64(sector);
	*(uint8_t *)uks_vduse_emul_ptr(e, st) = 0xff;
	s[n++] = (struct uks_vduse_emul_seg){ hdr, 16, false };
	if (len)
		s[n++] = (struct uks_vduse_emul_seg){ data, len, in };
	s[n++] = (struct uks_vduse_emul_seg){ st, 1, true };
	head = uks_vduse_emul_add(e, 0, s, n, false);
	if (head < 0)
		return -1;
	uks_vduse_emul_kick(e, 0);
	while (uks_vduse_emul_reap(e, 0, &id, used) != 1) {
		if (poll(&irq, 1, 10000) != 1 || read(irq.fd, &v, sizeof(v)) != sizeof(v))
			return -1;
	}
	return id == head ? *(uint8_t *)uks_vduse_emul_ptr(e, st) : -1;
}

int main(int argc, char **argv)
{
	char tmpl[] = "/tmp/uks-vduse-demo.XXXXXX", spec[PATH_MAX + 8], id[VIRTIO_BLK_ID_BYTES + 1];
	const char *file = argc > 1 ? argv[1] : NULL;
	uint8_t *buf, back[4096];
	struct uks_vduse_emul *e;
	uint64_t data;
	uint32_t used;
	int fd, stop[2], status, ret, fails = 0;
	pid_t dev;

	fd = file ? open(file, O_RDWR | O_CREAT, 0600) : mkstemp(tmpl);
	if (fd < 0 || ftruncate(fd, DISK_SIZE)) {
		perror(file ? file : tmpl);
		return 1;
	}
	file = file ? file : tmpl;
	snprintf(spec, sizeof(spec), "file:%s", file);
	ret = uks_vduse_emul_create(4u << 20, 1, params.queue_size,
				    1ull << VIRTIO_RING_F_EVENT_IDX, &e);
	if (ret || pipe(stop)) {
		fprintf(stderr, "emulated kernel side: %s\n", strerror(ret ? -ret : errno));
		return 1;
	}
	printf("device %s: virtio-blk, 1 queue of %u, %u-byte sectors, %u KiB on %s,\n"
	       "  offering features %#llx\n", params.name, params.queue_size, SECTOR,
	       DISK_SIZE >> 10, spec, (unsigned long long)uks_vduse_blk_features(&params));
	fflush(stdout);
	dev = fork();
	if (dev == 0) {
		close(stop[1]);
		_exit(device_main(e, spec, stop[0]));
	}
	close(stop[0]);
	printf("  device process %d; driver (this process) %d\n", (int)dev, (int)getpid());
	data = uks_vduse_emul_alloc(e, 4096, 4096);
	buf = uks_vduse_emul_ptr(e, data);

	/* GET_ID: the serial, as /sys/block/vdX/serial shows it */
	memset(buf, 0, VIRTIO_BLK_ID_BYTES);
	ret = request(e, VIRTIO_BLK_T_GET_ID, 0, data, VIRTIO_BLK_ID_BYTES, &used);
	memcpy(id, buf, VIRTIO_BLK_ID_BYTES);
	id[VIRTIO_BLK_ID_BYTES] = '\0';
	printf("  GET_ID                      -> %s, serial \"%s\"\n", status_name((uint8_t)ret), id);
	fails += ret != VIRTIO_BLK_S_OK || strcmp(id, params.name);

	/* OUT: 4 KiB at sector 8, then the file itself must hold it */
	for (int i = 0; i < 4096; i++)
		buf[i] = (uint8_t)(i * 7 + 3);
	memcpy(back, buf, sizeof(back));
	ret = request(e, VIRTIO_BLK_T_OUT, 8, data, 4096, &used);
	printf("  OUT   sector 8, 4096 bytes  -> %s", status_name((uint8_t)ret));
	{
		uint8_t f[4096];
		bool same = pread(fd, f, sizeof(f), 8 * SECTOR) == (ssize_t)sizeof(f) &&
			    !memcmp(f, back, sizeof(f));

		printf(", %s at offset 4096 of the file\n", same ? "found" : "NOT found");
		fails += ret != VIRTIO_BLK_S_OK || !same;
	}

	/* IN: read it back into a cleared buffer */
	memset(buf, 0, 4096);
	ret = request(e, VIRTIO_BLK_T_IN, 8, data, 4096, &used);
	printf("  IN    sector 8, 4096 bytes  -> %s, %s\n", status_name((uint8_t)ret),
	       !memcmp(buf, back, 4096) ? "the bytes written" : "OTHER bytes");
	fails += ret != VIRTIO_BLK_S_OK || memcmp(buf, back, 4096);

	ret = request(e, VIRTIO_BLK_T_FLUSH, 0, 0, 0, &used);
	printf("  FLUSH                       -> %s\n", status_name((uint8_t)ret));
	fails += ret != VIRTIO_BLK_S_OK;

	/* the kernel's answers to what a device must refuse */
	ret = request(e, VIRTIO_BLK_T_IN, DISK_SIZE / SECTOR, data, 4096, &used);
	snprintf(spec, sizeof(spec), "IN    sector %u (the end)", DISK_SIZE / SECTOR);
	printf("  %-28s-> %s\n", spec, status_name((uint8_t)ret));
	fails += ret != VIRTIO_BLK_S_IOERR;
	ret = request(e, 0xff, 0, 0, 0, &used);
	printf("  type 0xff                   -> %s\n", status_name((uint8_t)ret));
	fails += ret != VIRTIO_BLK_S_UNSUPP;

	printf("  interrupts the driver took: %llu\n",
	       (unsigned long long)uks_vduse_emul_irqs(e, 0));
	fflush(stdout);
	close(stop[1]);			/* the device prints its counters and exits */
	if (waitpid(dev, &status, 0) != dev || !WIFEXITED(status) || WEXITSTATUS(status))
		fails++;
	uks_vduse_emul_destroy(e);
	close(fd);
	if (argc < 2)
		unlink(tmpl);
	return fails ? 1 : 0;
}
