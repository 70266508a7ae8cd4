// SPDX-License-Identifier: MIT
/*
 * The control messages of a /dev/vduse device and the queue threads.
 *
 * The kernel asks, one synchronous request at a time (read(2) of a struct
 * vduse_dev_request, answered by write(2) of a struct vduse_dev_response
 * with the same request_id), and waits up to msg_timeout for the answer:
 *   SET_STATUS    the virtio status byte.  Entering DRIVER_OK starts the
 *                 data path of every ready queue (VDUSE_VQ_GET_INFO, a new
 *                 kick eventfd, one thread); 0 is a reset: queues stopped,
 *                 kick eventfds deassigned, every IOTLB mapping dropped.
 *                 Other values only change the status (virtio core writes
 *                 ACKNOWLEDGE again after each reset).
 *   GET_VQ_STATE  the next available index the device will process.
 *   UPDATE_IOTLB  the driver changed mappings in [start, last]: the queue
 *                 threads are quiesced (their locks held) while the cached
 *                 mappings are dropped and the rings are mapped again.
 *
 * A queue thread owns its ring while it holds its lock; it drops the lock
 * between kicks, which is where the message thread can quiesce it.
 */
#include <endian.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/vduse.h>
#include <linux/virtio_config.h>

#include <uks/core.h>

#include "core/compiler.h"
#include "core/log.h"
#include "vduse/dev.h"

/*
 * After a burst, look at the ring for poll_us before sleeping: the next
 * requests of a busy driver are then served without a kick and a wake-up.
 * The queue lock is taken per look, so the message thread can still
 * quiesce the queue at any moment.
 */
static bool poll_for_work(struct vduse_dev_queue *q)
{
	unsigned int us = q->dev->poll_us;
	uint64_t end;

	if (!us)
		return false;
	end = uks_clock_mono_ns() + us * 1000ull;
	do {
		bool work;

		pthread_mutex_lock(&q->lock);
		work = uks_vduse_blk_queue_has_work(q->dev->blk, q->index);
		pthread_mutex_unlock(&q->lock);
		if (work)
			return true;
		cpu_relax();
	} while (uks_clock_mono_ns() < end);
	return false;
}

static void *queue_thread(void *arg)
{
	struct vduse_dev_queue *q = arg;
	struct uks_vduse_dev *dev = q->dev;
	struct pollfd pfd[2] = { { .fd = q->kick_fd, .events = POLLIN },
				 { .fd = q->stop_fd, .events = POLLIN } };
	bool broken_said = false;

	for (;;) {
		uint64_t kicks;
		int ret;

		/* Serve first: kicks that came before the eventfd was assigned are not lost. */
		pthread_mutex_lock(&q->lock);
		ret = uks_vduse_blk_queue_process(dev->blk, q->index);
		pthread_mutex_unlock(&q->lock);
		if (ret == -EIO && !broken_said) {
			pr_err("vduse: %s: queue %u: the driver broke the ring; waiting for a reset\n",
			       dev->name, q->index);
			broken_said = true;
		}
		if (ret > 0 && poll_for_work(q))
			continue;
		while (poll(pfd, 2, -1) < 0 && errno == EINTR)
			;
		if (pfd[1].revents)
			return NULL;
		if (read(q->kick_fd, &kicks, sizeof(kicks)) < 0 && errno != EAGAIN)
			pr_warn("vduse: %s: queue %u: kick eventfd: %s\n", dev->name, q->index,
				strerror(errno));
	}
}

static int set_kickfd(struct uks_vduse_dev *dev, unsigned int index, int fd)
{
	struct vduse_vq_eventfd ev = { .index = index, .fd = fd };

	return ioctl(dev->dev_fd, VDUSE_VQ_SETUP_KICKFD, &ev) ? -errno : 0;
}

/* After a daemon crash: resume where the used ring says the last one stopped. */
static int used_idx_of(struct uks_vduse_dev *dev, uint64_t used_iova, uint16_t *idx)
{
	uint64_t avail;
	const uint16_t *used = dev->t.ops->map(&dev->t, used_iova, 4, UKS_VDUSE_ACCESS_RO, &avail);

	if (!used || avail < 4)
		return -EFAULT;
	*idx = le16toh(__atomic_load_n(&used[1], __ATOMIC_ACQUIRE));
	return 0;
}

static int start_queue(struct uks_vduse_dev *dev, struct vduse_dev_queue *q, bool resume)
{
	struct vduse_vq_info vi = { .index = q->index };
	int ret;

	if (ioctl(dev->dev_fd, VDUSE_VQ_GET_INFO, &vi))
		return -errno;
	if (!vi.ready)
		return 0;	/* the driver did not enable this queue */
	q->addr = (struct uks_vduse_vq_addr){ .num = vi.num, .desc = vi.desc_addr,
					      .avail = vi.driver_addr, .used = vi.device_addr,
					      .avail_idx = vi.split.avail_index,
					      .features = dev->features };
	if (resume) {
		ret = used_idx_of(dev, vi.device_addr, &q->addr.avail_idx);
		if (ret)
			return ret;
	}
	ret = uks_vduse_blk_queue_start(dev->blk, q->index, &q->addr);
	if (ret) {
		pr_err("vduse: %s: queue %u: ring at desc %#llx, num %u: %s\n", dev->name, q->index,
		       (unsigned long long)vi.desc_addr, vi.num, strerror(-ret));
		return ret;
	}
	q->kick_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	q->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (q->kick_fd < 0 || q->stop_fd < 0) {
		ret = -errno;
		goto fail;
	}
	ret = set_kickfd(dev, q->index, q->kick_fd);
	if (ret)
		goto fail;
	ret = -pthread_create(&q->thread, NULL, queue_thread, q);
	if (ret) {
		set_kickfd(dev, q->index, VDUSE_EVENTFD_DEASSIGN);
		goto fail;
	}
	q->running = true;
	return 0;
fail:
	uks_vduse_blk_queue_stop(dev->blk, q->index);
	if (q->kick_fd >= 0)
		close(q->kick_fd);
	if (q->stop_fd >= 0)
		close(q->stop_fd);
	q->kick_fd = q->stop_fd = -1;
	return ret;
}

int __uks_vduse_dev_start_queues(struct uks_vduse_dev *dev, bool resume)
{
	int ret;

	if (ioctl(dev->dev_fd, VDUSE_DEV_GET_FEATURES, &dev->features))
		return -errno;
	for (unsigned int i = 0; i < dev->p.nr_queues; i++) {
		ret = start_queue(dev, &dev->q[i], resume);
		if (ret) {
			__uks_vduse_dev_stop_queues(dev);
			return ret;
		}
	}
	if (resume)
		dev->status = VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER |
			      VIRTIO_CONFIG_S_FEATURES_OK | VIRTIO_CONFIG_S_DRIVER_OK;
	return 0;
}

void __uks_vduse_dev_stop_queues(struct uks_vduse_dev *dev)
{
	for (unsigned int i = 0; i < dev->p.nr_queues; i++) {
		struct vduse_dev_queue *q = &dev->q[i];
		uint64_t one = 1;

		if (!q->running)
			continue;
		if (write(q->stop_fd, &one, sizeof(one)) == sizeof(one))
			pthread_join(q->thread, NULL);
		else
			pr_err("vduse: %s: queue %u: cannot stop its thread\n", dev->name, i);
		set_kickfd(dev, i, VDUSE_EVENTFD_DEASSIGN);
		close(q->kick_fd);
		close(q->stop_fd);
		q->kick_fd = q->stop_fd = -1;
		q->running = false;
		uks_vduse_blk_queue_stop(dev->blk, i);
	}
}

static int set_status(struct uks_vduse_dev *dev, uint8_t status)
{
	int ret = 0;

	pthread_mutex_lock(&dev->state_lock);
	if ((status & VIRTIO_CONFIG_S_DRIVER_OK) && !(dev->status & VIRTIO_CONFIG_S_DRIVER_OK)) {
		ret = __uks_vduse_dev_start_queues(dev, false);
		if (ret)
			pr_err("vduse: %s: DRIVER_OK, but the data path did not start: %s\n",
			       dev->name, strerror(-ret));
	} else if (!status) {
		__uks_vduse_dev_stop_queues(dev);
		__uks_vduse_iotlb_invalidate(&dev->tlb, 0, UINT64_MAX);
	}
	if (!ret)
		dev->status = status;
	pthread_mutex_unlock(&dev->state_lock);
	return ret;
}

static void update_iotlb(struct uks_vduse_dev *dev, uint64_t start, uint64_t last)
{
	pthread_mutex_lock(&dev->state_lock);
	for (unsigned int i = 0; i < dev->p.nr_queues; i++)
		pthread_mutex_lock(&dev->q[i].lock);
	__uks_vduse_iotlb_invalidate(&dev->tlb, start, last);
	for (unsigned int i = 0; i < dev->p.nr_queues; i++) {
		struct vduse_dev_queue *q = &dev->q[i];

		if (!q->running)
			continue;
		/* The rings may have moved: map them again where the queue stands. */
		q->addr.avail_idx = uks_vduse_blk_queue_avail_idx(dev->blk, i);
		uks_vduse_blk_queue_stop(dev->blk, i);
		if (uks_vduse_blk_queue_start(dev->blk, i, &q->addr))
			pr_err("vduse: %s: queue %u: ring unmapped by an IOTLB update\n",
			       dev->name, i);
	}
	for (unsigned int i = dev->p.nr_queues; i-- > 0;)
		pthread_mutex_unlock(&dev->q[i].lock);
	pthread_mutex_unlock(&dev->state_lock);
}

static void handle(struct uks_vduse_dev *dev, const struct vduse_dev_request *req,
		   struct vduse_dev_response *resp)
{
	resp->result = VDUSE_REQ_RESULT_OK;
	switch (req->type) {
	case VDUSE_SET_STATUS:
		if (set_status(dev, req->s.status))
			resp->result = VDUSE_REQ_RESULT_FAILED;	/* the kernel keeps the old status */
		break;
	case VDUSE_GET_VQ_STATE:
		if (req->vq_state.index >= dev->p.nr_queues) {
			resp->result = VDUSE_REQ_RESULT_FAILED;
			break;
		}
		pthread_mutex_lock(&dev->q[req->vq_state.index].lock);
		resp->vq_state.index = req->vq_state.index;
		resp->vq_state.split.avail_index =
			uks_vduse_blk_queue_avail_idx(dev->blk, req->vq_state.index);
		pthread_mutex_unlock(&dev->q[req->vq_state.index].lock);
		break;
	case VDUSE_UPDATE_IOTLB:
		update_iotlb(dev, req->iova.start, req->iova.last);
		break;
	default:
		pr_warn("vduse: %s: unknown message type %u\n", dev->name, req->type);
		resp->result = VDUSE_REQ_RESULT_FAILED;
	}
}

void *__uks_vduse_dev_msg_thread(void *arg)
{
	struct uks_vduse_dev *dev = arg;
	struct pollfd pfd[2] = { { .fd = dev->dev_fd, .events = POLLIN },
				 { .fd = dev->msg_stop_fd, .events = POLLIN } };

	for (;;) {
		struct vduse_dev_request req;
		struct vduse_dev_response resp;
		ssize_t n;

		if (poll(pfd, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			pr_err("vduse: %s: poll: %s\n", dev->name, strerror(errno));
			return NULL;
		}
		if (pfd[1].revents)
			return NULL;
		if (pfd[0].revents & POLLERR) {
			/* a message timed out: the kernel will not talk to us again */
			pr_err("vduse: %s: the kernel marked the device broken (message timeout)\n",
			       dev->name);
			return NULL;
		}
		n = read(dev->dev_fd, &req, sizeof(req));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n != sizeof(req)) {
			pr_err("vduse: %s: reading a message: %s\n", dev->name,
			       n < 0 ? strerror(errno) : "short read");
			return NULL;
		}
		memset(&resp, 0, sizeof(resp));
		resp.request_id = req.request_id;
		handle(dev, &req, &resp);
		dev->nr_msgs++;
		if (write(dev->dev_fd, &resp, sizeof(resp)) != sizeof(resp))
			pr_err("vduse: %s: answering message %u: %s\n", dev->name, req.request_id,
			       strerror(errno));
	}
}
