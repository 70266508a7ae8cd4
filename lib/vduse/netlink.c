// SPDX-License-Identifier: MIT
/*
 * Attach and detach: the vDPA generic-netlink family ("vdpa", version 1),
 * spoken directly (no libnl, no iproute2's vdpa tool).
 *
 * A transaction is one request with NLM_F_ACK on a fresh NETLINK_GENERIC
 * socket; the answer is the kernel's NLMSG_ERROR (error 0 is the ack).
 * The family id is resolved first with CTRL_CMD_GETFAMILY.  DEV_NEW names
 * the management device "vduse" and the new vdpa device, which must carry
 * the VDUSE device's name; the kernel then runs the virtio status dance
 * with our message thread before it answers, so never call this from that
 * thread.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <linux/genetlink.h>
#include <linux/netlink.h>
#include <linux/vdpa.h>

#include "vduse/vduse_int.h"

struct nl_msg {
	struct nlmsghdr nh;
	struct genlmsghdr gh;
	uint8_t attrs[512];
};

static int put_string(struct nl_msg *m, uint16_t type, const char *s)
{
	size_t len = strlen(s) + 1;
	size_t at = NLMSG_ALIGN(m->nh.nlmsg_len);
	struct nlattr *a = (struct nlattr *)((uint8_t *)m + at);

	if (at + NLA_HDRLEN + NLA_ALIGN(len) > sizeof(*m))
		return -ENAMETOOLONG;
	a->nla_type = type;
	a->nla_len = (uint16_t)(NLA_HDRLEN + len);
	memcpy((uint8_t *)a + NLA_HDRLEN, s, len);
	m->nh.nlmsg_len = (uint32_t)(at + NLA_ALIGN(a->nla_len));
	return 0;
}

/* The u16 family id in a CTRL_CMD_NEWFAMILY answer, or -EPROTO. */
static int family_id_of(const struct nlmsghdr *h)
{
	const uint8_t *p = (const uint8_t *)NLMSG_DATA(h) + GENL_HDRLEN;
	long left = (long)h->nlmsg_len - NLMSG_LENGTH(GENL_HDRLEN);

	while (left >= NLA_HDRLEN) {
		const struct nlattr *a = (const struct nlattr *)p;

		if (a->nla_len < NLA_HDRLEN || a->nla_len > left)
			break;
		if (a->nla_type == CTRL_ATTR_FAMILY_ID && a->nla_len >= NLA_HDRLEN + 2) {
			uint16_t id;

			memcpy(&id, p + NLA_HDRLEN, sizeof(id));
			return id;
		}
		left -= NLA_ALIGN(a->nla_len);
		p += NLA_ALIGN(a->nla_len);
	}
	return -EPROTO;
}

/*
 * Send @m, wait for its ack.  Return the kernel's 0/-errno; with @family,
 * the family id found in the data answer.
 */
static int transact(int fd, struct nl_msg *m, int *family)
{
	static const struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	uint8_t buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
	int found = -ENOENT;

	m->nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	m->nh.nlmsg_seq = 1;
	if (sendto(fd, m, m->nh.nlmsg_len, 0, (const struct sockaddr *)&kernel, sizeof(kernel)) < 0)
		return -errno;
	for (;;) {
		ssize_t n = recv(fd, buf, sizeof(buf), 0);

		if (n < 0)
			return errno == EAGAIN ? -ETIMEDOUT : -errno;
		for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
		     h = NLMSG_NEXT(h, n)) {
			if (h->nlmsg_seq != m->nh.nlmsg_seq)
				continue;
			if (h->nlmsg_type == NLMSG_ERROR) {
				const struct nlmsgerr *e = NLMSG_DATA(h);

				if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
					return -EPROTO;
				if (!e->error && family)
					*family = found;
				return e->error ? e->error : (family && found < 0 ? found : 0);
			}
			if (family)
				found = family_id_of(h);
		}
	}
}

static int vdpa_cmd(uint8_t cmd, const char *name)
{
	/* DEV_NEW waits for the device's SET_STATUS answers: at most msg_timeout each. */
	struct timeval tmo = { .tv_sec = 120 };
	struct nl_msg m = { .nh = { .nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN),
				    .nlmsg_type = GENL_ID_CTRL },
			    .gh = { .cmd = CTRL_CMD_GETFAMILY, .version = 1 } };
	int fd, family = -ENOENT, ret;

	if (!name || !name[0])
		return -EINVAL;
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_GENERIC);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	ret = put_string(&m, CTRL_ATTR_FAMILY_NAME, VDPA_GENL_NAME);
	if (!ret)
		ret = transact(fd, &m, &family);
	if (ret) {
		close(fd);
		return ret == -ENOENT || ret == -EPROTO ? -ENOENT : ret;
	}
	memset(&m, 0, sizeof(m));
	m.nh.nlmsg_len = NLMSG_LENGTH(GENL_HDRLEN);
	m.nh.nlmsg_type = (uint16_t)family;
	m.gh.cmd = cmd;
	m.gh.version = VDPA_GENL_VERSION;
	ret = cmd == VDPA_CMD_DEV_NEW ? put_string(&m, VDPA_ATTR_MGMTDEV_DEV_NAME, "vduse") : 0;
	if (!ret)
		ret = put_string(&m, VDPA_ATTR_DEV_NAME, name);
	if (!ret)
		ret = transact(fd, &m, NULL);
	close(fd);
	return ret;
}

UKS_EXPORT int uks_vduse_vdpa_attach(const char *name)
{
	return vdpa_cmd(VDPA_CMD_DEV_NEW, name);
}

UKS_EXPORT int uks_vduse_vdpa_detach(const char *name)
{
	return vdpa_cmd(VDPA_CMD_DEV_DEL, name);
}
