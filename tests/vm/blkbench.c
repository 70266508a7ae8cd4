// SPDX-License-Identifier: MIT
/*
 * blkbench: 4 KiB random O_DIRECT reads or writes on a block device through
 * io_uring (liburing) at a fixed queue depth for a fixed time; prints one
 * line "blkbench DEV rw=R qd=N ios=N iops=N p50_us=X p99_us=Y".
 *
 *   blkbench [-w] [-q DEPTH] [-t SECONDS] DEVICE
 *
 * Used inside the tests/vm guest by bench/vduse_vm.sh, once against our
 * vduse-blk device and once against qemu-storage-daemon's, same backend.
 * Every request's latency is kept (submission to completion) and sorted for
 * the percentiles.  Offsets come from a fixed-seed xorshift, so both
 * devices see the same sequence.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"

#if UKS_HAVE_LIBURING
#include <liburing.h>

#define BS 4096
#define MAX_QD 256

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct slot {
	void *buf;
	uint64_t start;
};

int main(int argc, char **argv)
{
	int write_mode = 0, qd = 1, secs = 5, opt, fd, ret;
	uint64_t size, blocks, seed = 0x9e3779b97f4a7c15ULL, *lat, nlat = 0, cap, end;
	struct slot slots[MAX_QD] = { { 0 } };
	struct io_uring ring;

	while ((opt = getopt(argc, argv, "wq:t:")) != -1) {
		switch (opt) {
		case 'w': write_mode = 1; break;
		case 'q': qd = atoi(optarg); break;
		case 't': secs = atoi(optarg); break;
		default: goto usage;
		}
	}
	if (optind != argc - 1 || qd < 1 || qd > MAX_QD || secs < 1) {
usage:
		fprintf(stderr, "usage: blkbench [-w] [-q DEPTH<=%d] [-t SECONDS] DEVICE\n", MAX_QD);
		return 2;
	}
	fd = open(argv[optind], (write_mode ? O_RDWR : O_RDONLY) | O_DIRECT);
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		size = (uint64_t)st.st_size;	/* a file: for trying it out on the host */
	else if (fd >= 0 && ioctl(fd, BLKGETSIZE64, &size) < 0)
		fd = -1;
	if (fd < 0) {
		fprintf(stderr, "blkbench: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	blocks = size / BS;
	if (!blocks) {
		fprintf(stderr, "blkbench: %s: smaller than %d bytes\n", argv[optind], BS);
		return 1;
	}
	ret = io_uring_queue_init((unsigned int)qd, &ring, 0);
	if (ret < 0) {
		fprintf(stderr, "blkbench: io_uring_queue_init: %s\n", strerror(-ret));
		return 1;
	}
	cap = 1u << 22;
	lat = malloc(cap * sizeof(*lat));
	if (!lat)
		return 1;
	for (int i = 0; i < qd; i++) {
		if (posix_memalign(&slots[i].buf, BS, BS))
			return 1;
		memset(slots[i].buf, 0x5a ^ i, BS);
	}

	uint64_t t0 = now_ns(), tlast = t0;

	end = t0 + (uint64_t)secs * 1000000000ULL;
	int inflight = 0, stop = 0;

	for (;;) {
		/* keep the queue full until the time is up */
		while (!stop && inflight < qd) {
			struct io_uring_sqe *sqe;
			int s = -1;

			/* a free slot (start == 0), then its submission entry */
			for (int k = 0; k < qd; k++)
				if (!slots[k].start) { s = k; break; }
			if (s < 0 || !(sqe = io_uring_get_sqe(&ring)))
				break;
			off_t off = (off_t)(xorshift(&seed) % blocks) * BS;

			if (write_mode)
				io_uring_prep_write(sqe, fd, slots[s].buf, BS, off);
			else
				io_uring_prep_read(sqe, fd, slots[s].buf, BS, off);
			io_uring_sqe_set_data(sqe, &slots[s]);
			slots[s].start = now_ns();
			inflight++;
		}
		if (!inflight)
			break;
		ret = io_uring_submit_and_wait(&ring, 1);
		if (ret < 0 && ret != -EINTR) {
			fprintf(stderr, "blkbench: io_uring_submit_and_wait: %s\n", strerror(-ret));
			return 1;
		}
		struct io_uring_cqe *cqe;
		unsigned int head, seen = 0;
		uint64_t t = now_ns();

		io_uring_for_each_cqe(&ring, head, cqe) {
			struct slot *sl = io_uring_cqe_get_data(cqe);

			if (cqe->res != BS) {
				fprintf(stderr, "blkbench: I/O failed: %s\n",
					cqe->res < 0 ? strerror(-cqe->res) : "short transfer");
				return 1;
			}
			if (nlat < cap)
				lat[nlat++] = t - sl->start;
			sl->start = 0;
			inflight--;
			seen++;
		}
		io_uring_cq_advance(&ring, seen);
		tlast = t;
		if (t >= end)
			stop = 1;
	}
	qsort(lat, nlat, sizeof(*lat), cmp_u64);
	printf("blkbench %s rw=%s qd=%d ios=%llu iops=%.0f p50_us=%.1f p99_us=%.1f\n", argv[optind],
	       write_mode ? "randwrite" : "randread", qd, (unsigned long long)nlat,
	       (double)nlat * 1e9 / (double)(tlast - t0 ? tlast - t0 : 1), nlat ? lat[nlat / 2] / 1e3 : 0.0,
	       nlat ? lat[nlat * 99 / 100] / 1e3 : 0.0);
	io_uring_queue_exit(&ring);
	close(fd);
	for (int i = 0; i < qd; i++)
		free(slots[i].buf);
	free(lat);
	return 0;
}
#else
int main(void)
{
	fprintf(stderr, "blkbench: built without liburing (run scripts/deps.sh)\n");
	return 77;
}
#endif
