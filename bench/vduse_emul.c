// SPDX-License-Identifier: MIT
/*
 * The vduse virtio-blk data path through the
 * emulated kernel side, one thread.  4 KiB random reads and writes at
 * queue depth 1 and 32 on the null and ram backends.
 *
 * Per batch the emulated driver puts QD chains (header, 4 KiB, status) on
 * the available ring, the device serves the ring (uks_vduse_blk_queue_
 * process: pop, validate, translate, run on the backend, push, interrupt
 * decision) and the driver reaps.  Two notification modes:
 *
 *   poll     the device polls the ring and the driver polls the used ring
 *            (VRING_AVAIL_F_NO_INTERRUPT): no system calls, the data path alone
 *   eventfd  a kick eventfd write + read and an interrupt eventfd write +
 *            read per batch, as the daemon does with /dev/vduse
 *
 * Reported: requests/s of the whole loop (driver + device on one core),
 * requests/s of the device alone (time inside queue_process), and batch
 * latency percentiles (add to reap, p50/p99).  The target: >= 1 M 4 KiB
 * requests/s per core on null (device alone, poll mode, QD 32) — MET / NOT
 * MET.  No peer exists for an emulated kernel side; the physical reference
 * is a plain memcpy of 4 KiB between random offsets of the same RAM area,
 * and the ram backend is printed as a ratio against it.
 * UKS_BENCH_SCALE multiplies the work.
 */
#include <endian.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_ring.h>

#include <uks/vduse.h>

#define QD_MAX 32
#define BS 4096
#define RAM_SIZE (256ull << 20)

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t rng = 0x243f6a8885a308d3ull;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct result {
	double rps, dev_rps, p50_us, p99_us;
};

struct setup {
	struct uks_vduse_emul *e;
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	uint64_t hdr, buf, st;
};

static int setup(struct setup *s, const char *spec, bool eventfd)
{
	struct uks_vduse_blk_params p = { .name = "bench0", .nr_queues = 1, .queue_size = 256,
					  .block_size = 512, .event_idx = true, .indirect = true };
	struct uks_vduse_vq_addr a;

	if (uks_vduse_emul_create(8u << 20, 1, 256, 1ull << VIRTIO_RING_F_EVENT_IDX, &s->e) ||
	    uks_vduse_backend_open(spec, false, false, 1, &s->be) ||
	    uks_vduse_blk_create(&p, s->be, uks_vduse_emul_transport(s->e), &s->blk))
		return -1;
	uks_vduse_emul_vq_addr(s->e, 0, &a);
	if (uks_vduse_blk_queue_start(s->blk, 0, &a))
		return -1;
	s->hdr = uks_vduse_emul_alloc(s->e, 16 * QD_MAX, 64);
	s->buf = uks_vduse_emul_alloc(s->e, (size_t)BS * QD_MAX, 4096);
	s->st = uks_vduse_emul_alloc(s->e, QD_MAX, 64);
	if (!eventfd)
		uks_vduse_emul_set_used_event(s->e, 0, 0x8000);	/* no interrupts */
	return 0;
}

static void teardown(struct setup *s)
{
	uks_vduse_blk_destroy(s->blk);
	uks_vduse_backend_close(s->be);
	uks_vduse_emul_destroy(s->e);
}

/*
 * One batch of @qd 4 KiB requests: random sectors, or from @seq_sector on
 * when it is not UINT64_MAX.  Adds the device's own time to *@dev_ns.
 */
static int one_batch(struct setup *s, bool write, unsigned int qd, bool eventfd, uint64_t nsec,
		     uint64_t seq_sector, uint64_t *dev_ns)
{
	int kfd = uks_vduse_emul_kick_fd(s->e, 0), ifd = uks_vduse_emul_irq_fd(s->e, 0);
	unsigned int got = 0;
	uint64_t t1, v;
	uint16_t id;
	uint32_t len;

	for (unsigned int i = 0; i < qd; i++) {
		struct virtio_blk_outhdr *h = uks_vduse_emul_ptr(s->e, s->hdr + 16 * i);
		struct uks_vduse_emul_seg sg[3] = {
			{ s->hdr + 16 * i, 16, false },
			{ s->buf + (uint64_t)BS * i, BS, !write },
			{ s->st + i, 1, true },
		};

		h->type = htole32(write ? VIRTIO_BLK_T_OUT : VIRTIO_BLK_T_IN);
		h->sector = htole64(seq_sector != UINT64_MAX ? (seq_sector + 8 * i) % nsec
							     : (next_rand() % (nsec / 8)) * 8);
		if (uks_vduse_emul_add(s->e, 0, sg, 3, false) < 0)
			return -1;
	}
	if (eventfd) {
		uks_vduse_emul_kick(s->e, 0);
		if (read(kfd, &v, sizeof(v)) != sizeof(v))
			return -1;
	}
	t1 = now_ns();
	if (uks_vduse_blk_queue_process(s->blk, 0) != (int)qd)
		return -1;
	*dev_ns += now_ns() - t1;
	if (eventfd && read(ifd, &v, sizeof(v)) != sizeof(v))
		return -1;
	while (got < qd) {
		if (uks_vduse_emul_reap(s->e, 0, &id, &len) != 1)
			return -1;
		got++;
	}
	return *(uint8_t *)uks_vduse_emul_ptr(s->e, s->st) == VIRTIO_BLK_S_OK ? 0 : -1;
}

static int run(const char *spec, bool write, unsigned int qd, bool eventfd, uint64_t nreq,
	       struct result *res)
{
	uint64_t nsec, dev_ns = 0, *lat, nb = nreq / qd, t_all;
	struct setup s;

	if (setup(&s, spec, eventfd))
		return -1;
	nsec = uks_vduse_backend_size(s.be) / 512;
	lat = calloc(nb, sizeof(*lat));
	if (!lat)
		return -1;
	/*
	 * Precondition a RAM disk as one would a real one: write it whole first,
	 * so the measurement is of copies, not of the first-touch page faults of
	 * fresh anonymous memory (the memcpy reference pre-touches too).
	 */
	if (!strncmp(spec, "ram:", 4))
		for (uint64_t sec = 0; sec < nsec; sec += 8 * QD_MAX)
			if (one_batch(&s, true, QD_MAX, false, nsec, sec, &dev_ns))
				return -1;
	dev_ns = 0;
	t_all = now_ns();
	for (uint64_t b = 0; b < nb; b++) {
		uint64_t t0 = now_ns();

		if (one_batch(&s, write, qd, eventfd, nsec, UINT64_MAX, &dev_ns))
			return -1;
		lat[b] = now_ns() - t0;
	}
	t_all = now_ns() - t_all;
	qsort(lat, nb, sizeof(*lat), cmp_u64);
	res->rps = (double)(nb * qd) * 1e9 / (double)t_all;
	res->dev_rps = (double)(nb * qd) * 1e9 / (double)dev_ns;
	res->p50_us = (double)lat[nb / 2] / 1000.0;
	res->p99_us = (double)lat[nb * 99 / 100] / 1000.0;
	free(lat);
	teardown(&s);
	return 0;
}

/* The physical reference: memcpy of 4 KiB between random places of a RAM area. */
static double memcpy_rps(uint64_t n)
{
	uint8_t *area = malloc(RAM_SIZE), *buf = aligned_alloc(4096, BS * QD_MAX);
	uint64_t t, sink = 0;

	if (!area || !buf)
		return 0;
	memset(area, 1, RAM_SIZE);
	memset(buf, 2, BS * QD_MAX);
	t = now_ns();
	for (uint64_t i = 0; i < n; i++) {
		uint64_t off = (next_rand() % (RAM_SIZE / BS)) * BS;

		if (i & 1)
			memcpy(area + off, buf + (i % QD_MAX) * BS, BS);
		else
			memcpy(buf + (i % QD_MAX) * BS, area + off, BS);
		__asm__ volatile("" : : "r"(area), "r"(buf) : "memory");
		sink += buf[i % BS];
	}
	t = now_ns() - t;
	free(area);
	free(buf);
	return sink == 0xffffffffffffffffull ? 0 : (double)n * 1e9 / (double)t;
}

int main(void)
{
	const char *scale_s = getenv("UKS_BENCH_SCALE");
	double scale = scale_s ? atof(scale_s) : 1.0;
	uint64_t n = (uint64_t)(400000 * (scale > 0 ? scale : 1.0));
	static const char *const specs[] = { "null:16G", "ram:256M" };
	static const unsigned int qds[] = { 1, 32 };
	double target = 0, ram_best = 0, ref;
	struct result r;

	printf("vduse data path, emulated kernel side, 1 thread, 4 KiB random I/O, %llu requests each\n",
	       (unsigned long long)n);
	printf("%-9s %-5s %-3s %-8s %12s %12s %9s %9s\n", "backend", "op", "qd", "notify",
	       "req/s", "device req/s", "p50 us", "p99 us");
	for (unsigned int b = 0; b < 2; b++)
		for (unsigned int w = 0; w < 2; w++)
			for (unsigned int q = 0; q < 2; q++)
				for (unsigned int ev = 0; ev < 2; ev++) {
					if (run(specs[b], w, qds[q], ev, n, &r)) {
						printf("%s: run failed\n", specs[b]);
						return 1;
					}
					printf("%-9s %-5s %-3u %-8s %12.0f %12.0f %9.2f %9.2f\n",
					       specs[b], w ? "write" : "read", qds[q],
					       ev ? "eventfd" : "poll", r.rps, r.dev_rps,
					       r.p50_us, r.p99_us);
					if (b == 0 && q == 1 && !ev && !w)
						target = r.dev_rps;
					if (b == 1 && q == 1 && !ev && r.rps > ram_best)
						ram_best = r.rps;
				}
	ref = memcpy_rps(n);
	printf("reference: memcpy of 4 KiB at random offsets of 256 MiB: %.0f /s\n", ref);
	printf("ratio ram backend (qd 32, poll, whole loop) / memcpy reference: %.2f\n",
	       ref > 0 ? ram_best / ref : 0);
	printf("target: >= 1000000 4 KiB requests/s per core on null (device, qd 32, poll): "
	       "%.0f  %s\n", target, target >= 1e6 ? "MET" : "NOT MET");
	return 0;
}
