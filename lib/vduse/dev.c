// SPDX-License-Identifier: MIT
/*
 * The real transport: a uks virtio-blk data path served through the
 * kernel's /dev/vduse (VDUSE, Linux 5.15+; tested against Debian's 6.12).
 *
 * Life of a device:
 *   create   /dev/vduse/control: VDUSE_SET_API_VERSION 0, VDUSE_CREATE_DEV
 *            (features, virtio-blk config space, vq_num, vq_align 4096);
 *            /dev/vduse/NAME opened (one opener only); VDUSE_VQ_SETUP for
 *            every queue; the message thread started (dev_msg.c).
 *   attach   (netlink.c, by anyone) the kernel sends SET_STATUS messages;
 *            at DRIVER_OK dev_msg.c starts one thread per ready queue.
 *   serve    queue threads wait on their kick eventfd and run
 *            uks_vduse_blk_queue_process(); addresses go through the IOTLB
 *            cache (iotlb.c); interrupts are VDUSE_VQ_INJECT_IRQ.
 *   destroy  threads stopped, IOTLB unmapped, node closed, DESTROY_DEV (the
 *            kernel refuses while the device is attached: -EBUSY).
 *
 * Threads: the caller's; the message thread; one thread per started queue.
 * Lock order: dev->state_lock -> queue locks (in index order) -> IOTLB lock.
 * The message thread is the only one that starts or stops queues.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>
#include <linux/vduse.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>

#include "core/log.h"
#include "vduse/dev.h"

static void *dev_map(struct uks_vduse_transport *t, uint64_t iova, uint64_t len,
		     unsigned int perm, uint64_t *avail)
{
	struct uks_vduse_dev *dev = (struct uks_vduse_dev *)t;

	return __uks_vduse_iotlb_map(&dev->tlb, iova, len, perm, avail);
}

static int dev_inject_irq(struct uks_vduse_transport *t, unsigned int q)
{
	struct uks_vduse_dev *dev = (struct uks_vduse_dev *)t;
	uint32_t index = q;

	/* EINVAL after a reset raced with the completion: the driver is gone. */
	return ioctl(dev->dev_fd, VDUSE_VQ_INJECT_IRQ, &index) ? -errno : 0;
}

static const struct uks_vduse_transport_ops dev_ops = {
	.map = dev_map,
	.inject_irq = dev_inject_irq,
};

static int ctl_create(int ctl, const struct uks_vduse_blk_params *p, uint64_t capacity)
{
	size_t cfg_len = uks_vduse_blk_config_size();
	struct vduse_dev_config *c = calloc(1, sizeof(*c) + cfg_len);
	int ret;

	if (!c)
		return -ENOMEM;
	snprintf(c->name, sizeof(c->name), "%s", p->name);
	c->device_id = VIRTIO_ID_BLOCK;
	c->vendor_id = 0;
	c->features = uks_vduse_blk_features(p);
	c->vq_num = p->nr_queues;
	c->vq_align = 4096;	/* the kernel wants a power of two in [4, PAGE_SIZE] */
	c->config_size = (uint32_t)uks_vduse_blk_config(p, capacity, c->config);
	ret = ioctl(ctl, VDUSE_CREATE_DEV, c) ? -errno : 0;
	free(c);
	return ret;
}

static int ctl_destroy(int ctl, const char *name)
{
	char buf[VDUSE_NAME_MAX] = { 0 };

	snprintf(buf, sizeof(buf), "%s", name);
	return ioctl(ctl, VDUSE_DESTROY_DEV, buf) ? -errno : 0;
}

/* devtmpfs makes the node at once; udev (if any) may take a moment to settle it. */
static int open_node(const char *name)
{
	char path[300];

	snprintf(path, sizeof(path), "/dev/vduse/%s", name);
	for (int tries = 0;; tries++) {
		int fd = open(path, O_RDWR | O_CLOEXEC);

		if (fd >= 0)
			return fd;
		if ((errno != ENOENT && errno != EACCES) || tries == 50)
			return -errno;
		nanosleep(&(struct timespec){ .tv_nsec = 20 * 1000 * 1000 }, NULL);
	}
}

static int setup_queues(struct uks_vduse_dev *dev)
{
	for (unsigned int i = 0; i < dev->p.nr_queues; i++) {
		struct vduse_vq_config vc = { .index = i, .max_size = (uint16_t)dev->p.queue_size };

		if (ioctl(dev->dev_fd, VDUSE_VQ_SETUP, &vc))
			return -errno;
	}
	return 0;
}

/* Reconnect: was the device running when its previous daemon died? */
static bool driver_was_running(struct uks_vduse_dev *dev)
{
	uint64_t features = 0;

	if (ioctl(dev->dev_fd, VDUSE_DEV_GET_FEATURES, &features) || !features)
		return false;
	for (unsigned int i = 0; i < dev->p.nr_queues; i++) {
		struct vduse_vq_info vi = { .index = i };

		if (!ioctl(dev->dev_fd, VDUSE_VQ_GET_INFO, &vi) && vi.ready)
			return true;
	}
	return false;
}

static struct uks_vduse_dev *dev_alloc(const struct uks_vduse_blk_params *p,
				       struct uks_vduse_backend *be)
{
	struct uks_vduse_dev *dev = calloc(1, sizeof(*dev) + p->nr_queues * sizeof(dev->q[0]));

	if (!dev)
		return NULL;
	dev->t.ops = &dev_ops;
	snprintf(dev->name, sizeof(dev->name), "%s", p->name);
	dev->p = *p;
	dev->p.name = dev->name;
	dev->be = be;
	dev->ctl_fd = dev->dev_fd = dev->msg_stop_fd = -1;
	pthread_mutex_init(&dev->state_lock, NULL);
	for (unsigned int i = 0; i < p->nr_queues; i++) {
		dev->q[i].dev = dev;
		dev->q[i].index = i;
		dev->q[i].kick_fd = dev->q[i].stop_fd = -1;
		pthread_mutex_init(&dev->q[i].lock, NULL);
	}
	return dev;
}

static void dev_free(struct uks_vduse_dev *dev)
{
	for (unsigned int i = 0; i < dev->p.nr_queues; i++)
		pthread_mutex_destroy(&dev->q[i].lock);
	pthread_mutex_destroy(&dev->state_lock);
	if (dev->msg_stop_fd >= 0)
		close(dev->msg_stop_fd);
	if (dev->dev_fd >= 0)
		close(dev->dev_fd);
	if (dev->ctl_fd >= 0)
		close(dev->ctl_fd);
	free(dev);
}

UKS_EXPORT int uks_vduse_dev_create(const struct uks_vduse_blk_params *p,
				    struct uks_vduse_backend *be, unsigned int flags,
				    struct uks_vduse_dev **out)
{
	uint64_t api = 0;
	bool created = false;
	struct uks_vduse_dev *dev;
	int ret;

	if (!p || !p->name || !p->name[0] || strlen(p->name) >= VDUSE_NAME_MAX ||
	    strchr(p->name, '/') || (flags & ~UKS_VDUSE_DEV_RECONNECT))
		return -EINVAL;
	dev = dev_alloc(p, be);
	if (!dev)
		return -ENOMEM;
	/* The data path first: it validates the parameters before the kernel sees them. */
	ret = uks_vduse_blk_create(&dev->p, be, &dev->t, &dev->blk);
	if (ret)
		goto fail;
	dev->ctl_fd = open("/dev/vduse/control", O_RDWR | O_CLOEXEC);
	if (dev->ctl_fd < 0) {
		ret = -errno;
		pr_err("vduse: /dev/vduse/control: %s%s\n", strerror(errno),
		       errno == ENOENT ? " (load the vduse module)" : "");
		goto fail;
	}
	if (ioctl(dev->ctl_fd, VDUSE_SET_API_VERSION, &api)) {
		ret = -errno;
		goto fail;
	}
	ret = ctl_create(dev->ctl_fd, &dev->p, uks_vduse_backend_size(be));
	if (ret == -EEXIST && (flags & UKS_VDUSE_DEV_RECONNECT)) {
		dev->reconnected = true;
	} else if (ret) {
		pr_err("vduse: VDUSE_CREATE_DEV %s: %s\n", dev->name, strerror(-ret));
		goto fail;
	} else {
		created = true;
	}
	dev->dev_fd = open_node(dev->name);
	if (dev->dev_fd < 0) {
		ret = dev->dev_fd;
		pr_err("vduse: /dev/vduse/%s: %s%s\n", dev->name, strerror(-ret),
		       ret == -EBUSY ? " (another process serves it)" : "");
		goto fail;
	}
	ret = setup_queues(dev);
	if (ret)
		goto fail;
	__uks_vduse_iotlb_init(&dev->tlb, dev->dev_fd);
	dev->msg_stop_fd = eventfd(0, EFD_CLOEXEC);
	if (dev->msg_stop_fd < 0) {
		ret = -errno;
		goto fail_tlb;
	}
	if (dev->reconnected && driver_was_running(dev)) {
		ret = __uks_vduse_dev_start_queues(dev, true);
		if (ret)
			goto fail_tlb;
	}
	ret = -pthread_create(&dev->msg_thread, NULL, __uks_vduse_dev_msg_thread, dev);
	if (ret) {
		__uks_vduse_dev_stop_queues(dev);
		goto fail_tlb;
	}
	dev->msg_running = true;
	*out = dev;
	return 0;

fail_tlb:
	__uks_vduse_iotlb_fini(&dev->tlb);
fail:
	if (dev->dev_fd >= 0) {
		close(dev->dev_fd);
		dev->dev_fd = -1;
	}
	if (created)
		ctl_destroy(dev->ctl_fd, dev->name);
	if (dev->blk)
		uks_vduse_blk_destroy(dev->blk);
	dev_free(dev);
	return ret;
}

UKS_EXPORT int uks_vduse_dev_destroy(struct uks_vduse_dev *dev)
{
	int ret;

	if (!dev)
		return 0;
	if (dev->msg_running) {
		uint64_t one = 1;

		if (write(dev->msg_stop_fd, &one, sizeof(one)) != sizeof(one))
			pr_warn("vduse: %s: cannot stop the message thread: %s\n", dev->name,
				strerror(errno));
		pthread_join(dev->msg_thread, NULL);
	}
	__uks_vduse_dev_stop_queues(dev);
	__uks_vduse_iotlb_fini(&dev->tlb);
	close(dev->dev_fd);
	dev->dev_fd = -1;
	ret = ctl_destroy(dev->ctl_fd, dev->name);
	if (ret)
		pr_warn("vduse: VDUSE_DESTROY_DEV %s: %s%s\n", dev->name, strerror(-ret),
			ret == -EBUSY ? " (still attached to the vdpa bus)" : "");
	uks_vduse_blk_destroy(dev->blk);
	dev_free(dev);
	return ret;
}

UKS_EXPORT void uks_vduse_dev_set_poll(struct uks_vduse_dev *dev, unsigned int us)
{
	dev->poll_us = us;
}

UKS_EXPORT bool uks_vduse_dev_reconnected(const struct uks_vduse_dev *dev)
{
	return dev->reconnected;
}

UKS_EXPORT uint8_t uks_vduse_dev_status(struct uks_vduse_dev *dev)
{
	uint8_t s;

	pthread_mutex_lock(&dev->state_lock);
	s = dev->status;
	pthread_mutex_unlock(&dev->state_lock);
	return s;
}

UKS_EXPORT void uks_vduse_dev_get_stats(const struct uks_vduse_dev *dev,
					struct uks_vduse_blk_stats *st)
{
	uks_vduse_blk_get_stats(dev->blk, st);
}

UKS_EXPORT int uks_vduse_dev_resize(struct uks_vduse_dev *dev, uint64_t size)
{
	/* struct vduse_config_data ends in a flexible array: build it in a buffer */
	union {
		struct vduse_config_data hdr;
		uint8_t bytes[sizeof(struct vduse_config_data) + sizeof(uint64_t)];
	} cfg;
	uint64_t capacity = htole64(size / 512);
	int ret;

	if (!size || size % dev->p.block_size)
		return -EINVAL;
	/*
	 * The RAM backend may move its memory: no queue may be copying while
	 * it does, so the queues are quiesced (lock order: state, queues).
	 */
	pthread_mutex_lock(&dev->state_lock);
	for (unsigned int i = 0; i < dev->p.nr_queues; i++)
		pthread_mutex_lock(&dev->q[i].lock);
	ret = uks_vduse_backend_resize(dev->be, size);
	if (!ret)
		uks_vduse_blk_set_capacity(dev->blk, size);
	for (unsigned int i = dev->p.nr_queues; i-- > 0;)
		pthread_mutex_unlock(&dev->q[i].lock);
	if (ret)
		goto out;
	/* capacity is the first field of struct virtio_blk_config, in 512-byte sectors */
	cfg.hdr.offset = 0;
	cfg.hdr.length = sizeof(capacity);
	memcpy(cfg.hdr.buffer, &capacity, sizeof(capacity));
	if (ioctl(dev->dev_fd, VDUSE_DEV_SET_CONFIG, &cfg))
		ret = -errno;
	else if ((dev->status & VIRTIO_CONFIG_S_DRIVER_OK) &&
		 ioctl(dev->dev_fd, VDUSE_DEV_INJECT_CONFIG_IRQ))
		ret = -errno;
out:
	pthread_mutex_unlock(&dev->state_lock);
	return ret;
}

UKS_EXPORT int uks_vduse_set_msg_timeout(const char *name, unsigned int seconds)
{
	char path[320], text[16];
	int fd, len, ret = 0;

	if (!name || !name[0] || strchr(name, '/'))
		return -EINVAL;
	snprintf(path, sizeof(path), "/sys/class/vduse/%s/msg_timeout", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	len = snprintf(text, sizeof(text), "%u\n", seconds);
	if (write(fd, text, (size_t)len) != len)
		ret = -errno;
	close(fd);
	return ret;
}
