// SPDX-License-Identifier: MIT
/*
 * Crash consistency of the file backend: the device runs in its own
 * process (it shares only guest memory and the eventfds with the driver,
 * as the VDUSE daemon shares bounce pages with the kernel); the driver
 * writes, waits for the write and a FLUSH to be acknowledged, SIGKILLs the
 * device, and reads the file: every acknowledged byte must be there.
 * A second round does the same with O_DIRECT where the file system has it.
 */
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "unit/vduse/rig.h"

#define LEN (256 * 1024)

static void serve_forever(struct uks_vduse_emul *e, const char *spec, bool direct)
{
	struct uks_vduse_blk_params p = { .name = "crash0", .nr_queues = 1, .queue_size = 64,
					  .block_size = 4096, .event_idx = true, .indirect = true };
	struct uks_vduse_backend *be;
	struct uks_vduse_blk *blk;
	struct uks_vduse_vq_addr a;
	struct pollfd pfd = { uks_vduse_emul_kick_fd(e, 0), POLLIN, 0 };
	uint64_t v;

	if (uks_vduse_backend_open(spec, false, direct, 1, &be) ||
	    uks_vduse_blk_create(&p, be, uks_vduse_emul_transport(e), &blk))
		_exit(3);
	uks_vduse_emul_vq_addr(e, 0, &a);
	if (uks_vduse_blk_queue_start(blk, 0, &a))
		_exit(4);
	for (;;) {
		if (poll(&pfd, 1, -1) < 0 || read(pfd.fd, &v, sizeof(v)) < 0)
			continue;
		if (uks_vduse_blk_queue_process(blk, 0) < 0)
			_exit(5);
	}
}

/* Submit one request from the driver process and wait for its completion. */
static int submit_wait(struct uks_vduse_emul *e, uint32_t type, uint64_t sector, uint64_t buf,
		       uint32_t len)
{
	uint64_t hdr = uks_vduse_emul_alloc(e, 16, 16), st = uks_vduse_emul_alloc(e, 1, 1);
	struct virtio_blk_outhdr *h = uks_vduse_emul_ptr(e, hdr);
	struct uks_vduse_emul_seg s[3] = { { hdr, 16, false }, { buf, len, false }, { st, 1, true } };
	struct pollfd pfd = { uks_vduse_emul_irq_fd(e, 0), POLLIN, 0 };
	uint16_t id;
	uint32_t used;
	uint64_t v;
	int head, ret;

	h->type = htole32(type);
	h->ioprio = 0;
	h->sector = htole64(sector);
	*(uint8_t *)uks_vduse_emul_ptr(e, st) = STATUS_UNSET;
	if (len)
		head = uks_vduse_emul_add(e, 0, s, 3, false);
	else
		head = uks_vduse_emul_add(e, 0, (struct uks_vduse_emul_seg[]){ s[0], s[2] }, 2, false);
	if (head < 0)
		return head;
	uks_vduse_emul_kick(e, 0);
	for (;;) {
		ret = uks_vduse_emul_reap(e, 0, &id, &used);
		if (ret < 0)
			return ret;
		if (ret == 1)
			break;
		if (poll(&pfd, 1, 10000) <= 0)
			return -ETIMEDOUT;
		if (read(pfd.fd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			return -errno;
	}
	if (id != head)
		return -EPROTO;
	return *(uint8_t *)uks_vduse_emul_ptr(e, st);
}

static void crash_round(struct th_result *_th_r, const char *path, bool direct)
{
	struct uks_vduse_emul *e;
	char spec[128];
	uint64_t buf;
	uint8_t *got;
	pid_t pid;
	int fd, status;

	snprintf(spec, sizeof(spec), "file:%s", path);
	ASSERT_EQ(0, uks_vduse_emul_create(8u << 20, 1, 64, FEAT_EVENT_IDX | FEAT_INDIRECT, &e));
	buf = uks_vduse_emul_alloc(e, LEN, 4096);
	fill_pattern(uks_vduse_emul_ptr(e, buf), LEN, direct ? 77 : 78);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0)
		serve_forever(e, spec, direct);
	EXPECT_EQ(VIRTIO_BLK_S_OK, submit_wait(e, VIRTIO_BLK_T_OUT, 64, buf, LEN));
	EXPECT_EQ(VIRTIO_BLK_S_OK, submit_wait(e, VIRTIO_BLK_T_FLUSH, 0, 0, 0));
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	got = malloc(LEN);
	ASSERT_NONNULL(got);
	fd = open(path, O_RDONLY);
	ASSERT_GE(fd, 0);
	EXPECT_EQ(LEN, pread(fd, got, LEN, 64 * 512));
	EXPECT_EQ(0, memcmp(got, uks_vduse_emul_ptr(e, buf), LEN));
	close(fd);
	free(got);
	uks_vduse_emul_destroy(e);
}

TEST_TIMEOUT(flush_survives_sigkill, 60)
{
	char path[] = "/var/tmp/uks-vduse-crash-XXXXXX";
	int fd = mkstemp(path);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, 4 << 20));
	close(fd);
	crash_round(_th_r, path, false);
	/* O_DIRECT, if this file system has it. */
	fd = open(path, O_RDWR | O_DIRECT);
	if (fd >= 0) {
		close(fd);
		crash_round(_th_r, path, true);
	} else {
		TH_LOG("no O_DIRECT here (%s): buffered round only", strerror(errno));
	}
	unlink(path);
}

TEST_HARNESS_MAIN
