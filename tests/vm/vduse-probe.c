// SPDX-License-Identifier: MIT
/*
 * vduse-probe: what the guest kernel's VDUSE itself does, checked through
 * the raw uAPI (<linux/vduse.h> ioctls on /dev/vduse/control and
 * /dev/vduse/NAME) and the vDPA generic-netlink family, with none of our
 * device code in between.  Runs inside the tests/vm guest (as root) and
 * prints TAP.
 *
 * Phases:
 *  1. API version negotiation; CREATE_DEV with each invalid configuration
 *     the kernel must refuse with EINVAL; a valid create; duplicate name.
 *  2. The device node: exclusive open (second open EBUSY), ioctls that need
 *     an attached/DRIVER_OK device fail with EINVAL before, DESTROY_DEV with
 *     the node open is EBUSY, attach before VQ_SETUP is EINVAL.
 *  3. Attach over netlink with vdpa driver autoprobe off (no driver binds,
 *     so no I/O reaches a device that has no data path): DESTROY_DEV while
 *     attached is EBUSY, DEV_DEL works, a second DEV_DEL is ENODEV.
 *  4. Attach with autoprobe on and capacity 0: virtio_vdpa and virtio_blk
 *     bind (a zero-sized disk issues no requests), the status sequence seen
 *     by the message thread ends in DRIVER_OK, the negotiated features and
 *     virtqueue info are sane, IRQ injection is now allowed; detach resets.
 *
 * A message thread answers every control request (SET_STATUS, GET_VQ_STATE,
 * UPDATE_IOTLB) with success and records the statuses; it must run before
 * VDPA_CMD_DEV_NEW, which waits for those answers.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/vdpa.h>
#include <linux/vduse.h>
#include <linux/virtio_blk.h>
#include <linux/virtio_config.h>
#include <linux/virtio_ids.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEV_NAME "uksprobe0"
#define FEAT_BASE ((1ULL << VIRTIO_F_ACCESS_PLATFORM) | (1ULL << VIRTIO_F_VERSION_1))

static int tap_n, tap_failed;

static void __attribute__((format(printf, 2, 3))) check(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	if (!cond)
		tap_failed++;
	printf("%sok %d ", cond ? "" : "not ", tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

/* check that RET (an ioctl/syscall result, -1 + errno on failure) is -WANT */
static void expect_errno(int ret, int err, int want, const char *what)
{
	check(ret == -1 && err == want, "%s -> %s (got %d, %s)", what,
	      want ? strerror(want) : "0", ret, ret ? strerror(err) : "success");
}

static void expect_ok(int ret, int err, const char *what)
{
	check(ret >= 0, "%s succeeds (got %d%s%s)", what, ret, ret < 0 ? ", " : "",
	      ret < 0 ? strerror(err) : "");
}

#define EXPECT_ERRNO(call, want, what) do { int _r = (call); expect_errno(_r, errno, want, what); } while (0)
#define EXPECT_OK(call, what) do { int _r = (call); expect_ok(_r, errno, what); } while (0)

/* ------------------------------------------------------------ config */

static struct vduse_dev_config *make_config(const char *name, unsigned long long capacity,
					    size_t extra)
{
	size_t size = sizeof(struct vduse_dev_config) + sizeof(struct virtio_blk_config) + extra;
	struct vduse_dev_config *c = calloc(1, size);
	struct virtio_blk_config blk = { .capacity = capacity, .blk_size = 512 };

	if (!c)
		abort();
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->device_id = VIRTIO_ID_BLOCK;
	c->vendor_id = 0;
	c->features = FEAT_BASE | (1ULL << VIRTIO_BLK_F_BLK_SIZE);
	c->vq_num = 1;
	c->vq_align = 4096;
	c->config_size = sizeof(blk);
	memcpy(c->config, &blk, sizeof(blk));
	return c;
}

/* ------------------------------------------------------------ netlink */

struct nlreq {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	char attrs[512];
};

static void put_attr(struct nlreq *r, unsigned short type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)((char *)r + NLMSG_ALIGN(r->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	r->nh.nlmsg_len = NLMSG_ALIGN(r->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Send R and wait for its ack; returns 0 or -errno.  REPLY (if non-NULL)
 * receives the first data message. */
static int nl_transact(int fd, struct nlreq *r, char *reply, size_t rlen)
{
	static unsigned int seq;
	char buf[8192];
	ssize_t n;

	r->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	r->nh.nlmsg_seq = ++seq;
	if (send(fd, r, r->nh.nlmsg_len, 0) < 0)
		return -errno;
	for (;;) {
		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0)
			return -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != r->nh.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				struct nlmsgerr *e = NLMSG_DATA(h);

				return e->error;
			}
			if (reply)
				memcpy(reply, h, h->nlmsg_len < rlen ? h->nlmsg_len : rlen);
		}
	}
}

static int vdpa_family(int fd)
{
	struct nlreq r = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN), .nlmsg_type = GENL_ID_CTRL },
			   .gh = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
	char reply[4096] = { 0 };
	struct nlmsghdr *h = (struct nlmsghdr *)reply;
	int ret;

	put_attr(&r, CTRL_ATTR_FAMILY_NAME, VDPA_GENL_NAME, sizeof(VDPA_GENL_NAME));
	ret = nl_transact(fd, &r, reply, sizeof(reply));
	if (ret < 0)
		return ret;
	if (h->nlmsg_len < NLMSG_LENGTH(GENL_HDRLEN))
		return -EPROTO;
	int left = h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);
	struct nlattr *a = (struct nlattr *)((char *)NLMSG_DATA(h) + GENL_HDRLEN);

	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN && a->nla_len <= left) {
		if (a->nla_type == CTRL_ATTR_FAMILY_ID)
			return *(unsigned short *)((char *)a + NLA_HDRLEN);
		left -= NLA_ALIGN(a->nla_len);
		a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return -ENOENT;
}

static int nl_fd, nl_family;

/* VDPA_CMD_DEV_NEW / DEV_DEL for the vduse management device: 0 or -errno */
static int vdpa_dev(int cmd, const char *name)
{
	struct nlreq r = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				   .nlmsg_type = (unsigned short)nl_family },
			   .gh = { .cmd = (unsigned char)cmd, .version = VDPA_GENL_VERSION } };

	if (cmd == VDPA_CMD_DEV_NEW)
		put_attr(&r, VDPA_ATTR_MGMTDEV_DEV_NAME, "vduse", sizeof("vduse"));
	put_attr(&r, VDPA_ATTR_DEV_NAME, name, strlen(name) + 1);
	return nl_transact(nl_fd, &r, NULL, 0);
}

/* ------------------------------------------------------------ messages */

struct msgloop {
	int fd, stop[2];
	pthread_t thread;
	pthread_mutex_t lock;
	unsigned char status[32];
	int nstatus, nmsgs;
};

static void *msgloop_run(void *arg)
{
	struct msgloop *m = arg;
	struct pollfd p[2] = { { .fd = m->fd, .events = POLLIN }, { .fd = m->stop[0], .events = POLLIN } };

	for (;;) {
		struct vduse_dev_request req;
		struct vduse_dev_response resp;

		if (poll(p, 2, -1) < 0 || p[1].revents)
			break;
		if (!(p[0].revents & POLLIN)) {
			if (p[0].revents & (POLLERR | POLLHUP))
				break;
			continue;
		}
		if (read(m->fd, &req, sizeof(req)) != sizeof(req))
			continue;
		memset(&resp, 0, sizeof(resp));
		resp.request_id = req.request_id;
		resp.result = VDUSE_REQ_RESULT_OK;
		pthread_mutex_lock(&m->lock);
		m->nmsgs++;
		if (req.type == VDUSE_SET_STATUS && m->nstatus < (int)sizeof(m->status))
			m->status[m->nstatus++] = req.s.status;
		pthread_mutex_unlock(&m->lock);
		if (req.type == VDUSE_GET_VQ_STATE)
			resp.vq_state.split.avail_index = 0;
		if (write(m->fd, &resp, sizeof(resp)) != sizeof(resp))
			break;
	}
	return NULL;
}

static int msgloop_start(struct msgloop *m, int fd)
{
	memset(m, 0, sizeof(*m));
	m->fd = fd;
	pthread_mutex_init(&m->lock, NULL);
	if (pipe(m->stop) < 0)
		return -errno;
	return -pthread_create(&m->thread, NULL, msgloop_run, m);
}

static void msgloop_stop(struct msgloop *m)
{
	if (write(m->stop[1], "x", 1) != 1)
		abort();
	pthread_join(m->thread, NULL);
	close(m->stop[0]);
	close(m->stop[1]);
}

static int last_status(struct msgloop *m)
{
	int s;

	pthread_mutex_lock(&m->lock);
	s = m->nstatus ? m->status[m->nstatus - 1] : -1;
	pthread_mutex_unlock(&m->lock);
	return s;
}

/* ------------------------------------------------------------ helpers */

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY), ret = 0;

	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static int path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static int ctl_create(int ctl, struct vduse_dev_config *c)
{
	int r = ioctl(ctl, VDUSE_CREATE_DEV, c);

	free(c);
	return r;
}

static int ctl_destroy(int ctl, const char *name)
{
	char buf[VDUSE_NAME_MAX] = { 0 };

	snprintf(buf, sizeof(buf), "%s", name);
	return ioctl(ctl, VDUSE_DESTROY_DEV, buf);
}

/* ------------------------------------------------------------ phases */

static void bad_configs(int ctl)
{
	struct vduse_dev_config *c;

	c = make_config("uksbad", 2048, 0);
	c->features &= ~(1ULL << VIRTIO_F_ACCESS_PLATFORM);
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV without VIRTIO_F_ACCESS_PLATFORM");
	c = make_config("uksbad", 2048, 0);
	c->features |= 1ULL << VIRTIO_BLK_F_CONFIG_WCE;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV of a block device with VIRTIO_BLK_F_CONFIG_WCE");
	c = make_config("uksbad", 2048, 0);
	c->vq_align = 0;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with vq_align 0");
	c = make_config("uksbad", 2048, 0);
	c->vq_align = 3000;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with vq_align 3000 (not a power of two)");
	c = make_config("uksbad", 2048, 0);
	c->vq_align = 2 * (unsigned int)sysconf(_SC_PAGESIZE);
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with vq_align 2 * PAGE_SIZE");
	c = make_config("uksbad", 2048, 0);
	c->reserved[3] = 1;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with a non-zero reserved word");
	c = make_config("", 2048, 0);
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with an empty name");
	c = make_config("uksbad", 2048, 0);
	c->device_id = VIRTIO_ID_CONSOLE;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV of a console device (unsupported type)");
	c = make_config("uksbad", 2048, 0);
	c->vq_num = 0x10000;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with vq_num 65536");
	c = make_config("uksbad", 2048, (size_t)sysconf(_SC_PAGESIZE));
	c->config_size = (unsigned int)sysconf(_SC_PAGESIZE) + 1;
	EXPECT_ERRNO(ctl_create(ctl, c), EINVAL, "CREATE_DEV with config_size PAGE_SIZE + 1");
	check(!path_exists("/dev/vduse/uksbad"), "no /dev/vduse/uksbad after the rejected creates");
}

static void before_attach(int ctl, int dev)
{
	struct vduse_iotlb_entry e = { .start = 0, .last = 4095 };
	unsigned long long feat = ~0ULL;
	unsigned int idx = 0;

	EXPECT_ERRNO(open("/dev/vduse/" DEV_NAME, O_RDWR), EBUSY, "second open of /dev/vduse/" DEV_NAME);
	EXPECT_OK(ioctl(dev, VDUSE_DEV_GET_FEATURES, &feat), "VDUSE_DEV_GET_FEATURES before attach");
	check(feat == 0, "driver features are 0 before attach (got %#llx)", feat);
	EXPECT_ERRNO(ioctl(dev, VDUSE_IOTLB_GET_FD, &e), EINVAL, "VDUSE_IOTLB_GET_FD before attach");
	EXPECT_ERRNO(ioctl(dev, VDUSE_VQ_INJECT_IRQ, &idx), EINVAL, "VDUSE_VQ_INJECT_IRQ before DRIVER_OK");
	EXPECT_ERRNO(ioctl(dev, VDUSE_DEV_INJECT_CONFIG_IRQ), EINVAL,
		     "VDUSE_DEV_INJECT_CONFIG_IRQ before DRIVER_OK");
	EXPECT_ERRNO(ctl_destroy(ctl, DEV_NAME), EBUSY, "DESTROY_DEV while /dev/vduse/" DEV_NAME " is open");
	int r = vdpa_dev(VDPA_CMD_DEV_NEW, DEV_NAME);

	check(r == -EINVAL, "VDPA_CMD_DEV_NEW before VDUSE_VQ_SETUP -> EINVAL (got %s)", strerror(-r));
	struct vduse_vq_config vq = { .index = 1, .max_size = 256 };

	EXPECT_ERRNO(ioctl(dev, VDUSE_VQ_SETUP, &vq), EINVAL, "VDUSE_VQ_SETUP of queue 1 on a 1-queue device");
	vq.index = 0;
	EXPECT_OK(ioctl(dev, VDUSE_VQ_SETUP, &vq), "VDUSE_VQ_SETUP of queue 0, 256 entries");
	r = vdpa_dev(VDPA_CMD_DEV_NEW, "uksnosuchdev");
	check(r == -EINVAL, "VDPA_CMD_DEV_NEW of a name VDUSE does not know -> EINVAL (got %s)",
	      strerror(-r));
}

static void attach_unbound(int ctl, int *dev)
{
	struct msgloop m;
	int r;

	check(write_file("/sys/bus/vdpa/drivers_autoprobe", "0") == 0, "vdpa drivers_autoprobe set to 0");
	check(msgloop_start(&m, *dev) == 0, "message thread started");
	r = vdpa_dev(VDPA_CMD_DEV_NEW, DEV_NAME);
	check(r == 0, "VDPA_CMD_DEV_NEW " DEV_NAME " (no driver bound) succeeds (got %s)", strerror(-r));
	check(path_exists("/sys/bus/vdpa/devices/" DEV_NAME), "/sys/bus/vdpa/devices/" DEV_NAME " exists");
	check(!path_exists("/sys/bus/vdpa/devices/" DEV_NAME "/driver"), "no vdpa driver bound to it");
	msgloop_stop(&m);
	close(*dev);
	EXPECT_ERRNO(ctl_destroy(ctl, DEV_NAME), EBUSY, "DESTROY_DEV while attached (device node closed)");
	/* the daemon side reconnects: detaching may send messages */
	*dev = open("/dev/vduse/" DEV_NAME, O_RDWR);
	EXPECT_OK(*dev, "reopen /dev/vduse/" DEV_NAME " while attached");
	if (*dev < 0 || msgloop_start(&m, *dev) < 0)
		return;
	r = vdpa_dev(VDPA_CMD_DEV_DEL, DEV_NAME);
	check(r == 0, "VDPA_CMD_DEV_DEL " DEV_NAME " succeeds (got %s)", strerror(-r));
	r = vdpa_dev(VDPA_CMD_DEV_DEL, DEV_NAME);
	check(r == -ENODEV, "second VDPA_CMD_DEV_DEL -> ENODEV (got %s)", strerror(-r));
	check(!path_exists("/sys/bus/vdpa/devices/" DEV_NAME), "vdpa device gone after DEV_DEL");
	msgloop_stop(&m);
	close(*dev);
	*dev = -1;
	check(write_file("/sys/bus/vdpa/drivers_autoprobe", "1") == 0, "vdpa drivers_autoprobe back to 1");
}

static void attach_bound(int ctl)
{
	static const unsigned char want[] = { 0, VIRTIO_CONFIG_S_ACKNOWLEDGE,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK,
		VIRTIO_CONFIG_S_ACKNOWLEDGE | VIRTIO_CONFIG_S_DRIVER | VIRTIO_CONFIG_S_FEATURES_OK |
			VIRTIO_CONFIG_S_DRIVER_OK };
	struct vduse_vq_config vq = { .index = 0, .max_size = 256 };
	struct vduse_vq_info info = { .index = 0 };
	unsigned long long feat = 0;
	unsigned int idx = 0;
	struct msgloop m;
	char seq[128] = "";
	int dev, r;

	EXPECT_OK(ctl_create(ctl, make_config(DEV_NAME, 0, 0)), "CREATE_DEV " DEV_NAME " again, capacity 0");
	dev = open("/dev/vduse/" DEV_NAME, O_RDWR);
	EXPECT_OK(dev, "open /dev/vduse/" DEV_NAME);
	if (dev < 0)
		return;
	EXPECT_OK(ioctl(dev, VDUSE_VQ_SETUP, &vq), "VDUSE_VQ_SETUP of queue 0");
	write_file("/sys/class/vduse/" DEV_NAME "/msg_timeout", "10");
	check(msgloop_start(&m, dev) == 0, "message thread started");
	r = vdpa_dev(VDPA_CMD_DEV_NEW, DEV_NAME);
	check(r == 0, "VDPA_CMD_DEV_NEW with autoprobe on succeeds (got %s)", strerror(-r));
	check(path_exists("/sys/bus/vdpa/drivers/virtio_vdpa/" DEV_NAME), "virtio_vdpa bound to " DEV_NAME);
	pthread_mutex_lock(&m.lock);
	for (int i = 0; i < m.nstatus; i++)
		snprintf(seq + strlen(seq), sizeof(seq) - strlen(seq), " %#x", m.status[i]);
	int same = m.nstatus == (int)sizeof(want) && !memcmp(m.status, want, sizeof(want));
	pthread_mutex_unlock(&m.lock);
	check(same, "SET_STATUS sequence is 0 ACK DRIVER FEATURES_OK DRIVER_OK (got%s)", seq);
	EXPECT_OK(ioctl(dev, VDUSE_DEV_GET_FEATURES, &feat), "VDUSE_DEV_GET_FEATURES after DRIVER_OK");
	check((feat & FEAT_BASE) == FEAT_BASE, "negotiated features include VERSION_1 and ACCESS_PLATFORM (%#llx)",
	      feat);
	check(!(feat & ~(FEAT_BASE | (1ULL << VIRTIO_BLK_F_BLK_SIZE))),
	      "no feature beyond those offered was negotiated (%#llx)", feat);
	EXPECT_OK(ioctl(dev, VDUSE_VQ_GET_INFO, &info), "VDUSE_VQ_GET_INFO of queue 0");
	check(info.ready == 1 && info.num > 0 && info.num <= 256 && (info.num & (info.num - 1)) == 0,
	      "queue 0 is ready with a power-of-two size <= 256 (ready %u, num %u)", info.ready, info.num);
	check(info.desc_addr && info.driver_addr > info.desc_addr && info.device_addr > info.driver_addr,
	      "ring IOVAs ordered desc < driver < device (%#llx %#llx %#llx)",
	      (unsigned long long)info.desc_addr, (unsigned long long)info.driver_addr,
	      (unsigned long long)info.device_addr);
	struct vduse_iotlb_entry e = { .start = info.desc_addr, .last = info.desc_addr };
	int mfd = ioctl(dev, VDUSE_IOTLB_GET_FD, &e);

	check(mfd >= 0 && e.start <= info.desc_addr && e.last >= info.device_addr,
	      "VDUSE_IOTLB_GET_FD finds one entry covering the ring (%#llx-%#llx)",
	      (unsigned long long)e.start, (unsigned long long)e.last);
	if (mfd >= 0)
		close(mfd);
	EXPECT_OK(ioctl(dev, VDUSE_VQ_INJECT_IRQ, &idx), "VDUSE_VQ_INJECT_IRQ after DRIVER_OK");
	EXPECT_OK(ioctl(dev, VDUSE_DEV_INJECT_CONFIG_IRQ), "VDUSE_DEV_INJECT_CONFIG_IRQ after DRIVER_OK");
	check(path_exists("/sys/bus/vdpa/devices/" DEV_NAME "/virtio1") ||
	      path_exists("/sys/bus/vdpa/devices/" DEV_NAME "/virtio0") ||
	      path_exists("/sys/bus/vdpa/devices/" DEV_NAME "/virtio2"),
	      "a virtio device was registered under the vdpa device");
	EXPECT_ERRNO(ctl_destroy(ctl, DEV_NAME), EBUSY, "DESTROY_DEV while bound to virtio_vdpa");
	r = vdpa_dev(VDPA_CMD_DEV_DEL, DEV_NAME);
	check(r == 0, "VDPA_CMD_DEV_DEL of the bound device succeeds (got %s)", strerror(-r));
	int s = last_status(&m);

	check(s == 0 || s == VIRTIO_CONFIG_S_ACKNOWLEDGE,
	      "detach reset the device (last status %#x)", (unsigned int)s);
	msgloop_stop(&m);
	close(dev);
	EXPECT_OK(ctl_destroy(ctl, DEV_NAME), "DESTROY_DEV after detach and close");
	check(!path_exists("/dev/vduse/" DEV_NAME), "/dev/vduse/" DEV_NAME " removed");
}

/* vduse-probe attach|detach NAME: the netlink half alone, for peers such
 * as qemu-storage-daemon's vduse-blk export (no vdpa tool in the guest). */
static int attach_cmd(const char *cmd, const char *name)
{
	int r;

	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	nl_family = nl_fd < 0 ? -errno : vdpa_family(nl_fd);
	if (nl_family < 0) {
		fprintf(stderr, "vduse-probe: vdpa netlink family: %s\n", strerror(-nl_family));
		return 1;
	}
	r = vdpa_dev(!strcmp(cmd, "attach") ? VDPA_CMD_DEV_NEW : VDPA_CMD_DEV_DEL, name);
	if (r < 0) {
		fprintf(stderr, "vduse-probe: %s %s: %s\n", cmd, name, strerror(-r));
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long long ver = ~0ULL;
	int ctl, dev;

	if (argc == 3 && (!strcmp(argv[1], "attach") || !strcmp(argv[1], "detach")))
		return attach_cmd(argv[1], argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: vduse-probe            (TAP checks of the kernel's VDUSE)\n"
				"       vduse-probe attach|detach NAME\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("TAP version 13\n");
	ctl = open("/dev/vduse/control", O_RDWR);
	check(ctl >= 0, "open /dev/vduse/control (%s)", ctl < 0 ? strerror(errno) : "ok");
	if (ctl < 0) {
		printf("1..%d\n", tap_n);
		return 1;
	}
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	nl_family = nl_fd < 0 ? -errno : vdpa_family(nl_fd);
	check(nl_family > 0, "generic netlink family \"vdpa\" resolved (%d)", nl_family);

	EXPECT_OK(ioctl(ctl, VDUSE_GET_API_VERSION, &ver), "VDUSE_GET_API_VERSION");
	check(ver == VDUSE_API_VERSION, "API version is %d (got %llu)", VDUSE_API_VERSION, ver);
	ver = 99;
	EXPECT_ERRNO(ioctl(ctl, VDUSE_SET_API_VERSION, &ver), EINVAL, "VDUSE_SET_API_VERSION 99");
	ver = VDUSE_API_VERSION;
	EXPECT_OK(ioctl(ctl, VDUSE_SET_API_VERSION, &ver), "VDUSE_SET_API_VERSION 0");

	bad_configs(ctl);
	EXPECT_OK(ctl_create(ctl, make_config(DEV_NAME, 2048, 0)), "CREATE_DEV " DEV_NAME " (valid block config)");
	EXPECT_ERRNO(ctl_create(ctl, make_config(DEV_NAME, 2048, 0)), EEXIST, "CREATE_DEV of a duplicate name");
	check(path_exists("/sys/class/vduse/" DEV_NAME "/msg_timeout"), "/sys/class/vduse/" DEV_NAME "/msg_timeout exists");
	check(write_file("/sys/class/vduse/" DEV_NAME "/msg_timeout", "5") == 0, "msg_timeout set to 5 s");
	dev = open("/dev/vduse/" DEV_NAME, O_RDWR);
	EXPECT_OK(dev, "open /dev/vduse/" DEV_NAME);
	if (dev >= 0 && nl_family > 0) {
		before_attach(ctl, dev);
		attach_unbound(ctl, &dev);
		EXPECT_OK(ctl_destroy(ctl, DEV_NAME), "DESTROY_DEV after DEV_DEL");
		check(!path_exists("/dev/vduse/" DEV_NAME), "/dev/vduse/" DEV_NAME " removed");
		attach_bound(ctl);
	}
	printf("1..%d\n", tap_n);
	return tap_failed ? 1 : 0;
}
