// SPDX-License-Identifier: MIT
/*
 * uks vduse-blk: serve a virtio-blk device through /dev/vduse, and the
 * commands that act on a running one (attach, detach, resize, stats).
 *
 * The serving process is the daemon: it creates the device, optionally
 * attaches it to the vdpa bus, prints "vduse-blk NAME: ready" and then waits
 * for SIGTERM/SIGINT (detach, destroy, exit 0) or for a command on its
 * control socket.  That socket is an abstract unix socket named
 * "uks-vduse-blk/NAME" (nothing to clean up after a crash; a restarted
 * daemon binds it again), one request line per connection, answered by one
 * line that starts with "ok" or "error"; only root or the daemon's own user
 * may talk to it (SO_PEERCRED).
 *
 * attach and detach do not need the daemon: they are netlink requests
 * that the daemon's message thread answers from the kernel side.
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <uks/uks.h>
#include <uks/vduse.h>

#include "cli.h"

static void vduse_blk_usage(FILE *out)
{
	fputs("Usage: uks vduse-blk --name NAME --backend SPEC [OPTIONS]\n"
	      "       uks vduse-blk attach|detach NAME\n"
	      "       uks vduse-blk resize NAME SIZE\n"
	      "       uks vduse-blk stats NAME\n"
	      "\n"
	      "Serve a virtio-blk device from user space through the kernel's /dev/vduse\n"
	      "(modules vduse, vdpa, virtio_vdpa, virtio_blk).  The process serves until\n"
	      "SIGTERM or SIGINT, then detaches and destroys the device.\n"
	      "\n"
	      "  --name NAME          VDUSE and vdpa device name\n"
	      "  --backend SPEC       file:PATH (file or block device, io_uring), ram:SIZE, null:SIZE\n"
	      "                       (SIZE: bytes with an optional K, M, G or T suffix)\n"
	      "  --queues N           virtqueues, one serving thread each (default 1)\n"
	      "  --queue-size N       ring entries, a power of two up to 32768 (default 256)\n"
	      "  --block-size N       logical block size, 512 or 4096 (default 512)\n"
	      "  --readonly           offer a read-only disk\n"
	      "  --direct             file backend: O_DIRECT\n"
	      "  --attach             add the vdpa device on the vduse bus once ready\n"
	      "  --reconnect          if the device exists (its daemon died), take it over\n"
	      "  --msg-timeout SECS   the kernel's wait for our answers (default: kernel's, 30)\n"
	      "  --poll-us US         after a burst, poll the ring this long before sleeping on\n"
	      "                       the kick eventfd (default 50; 0: sleep at once)\n"
	      "\n"
	      "attach/detach: VDPA_CMD_DEV_NEW/DEL over generic netlink (CAP_NET_ADMIN).\n"
	      "resize: new capacity through the serving daemon (config interrupt to the driver).\n"
	      "stats: the daemon's request counters.  See uks(1) and docs/VDUSE.md.\n",
	      out);
}

static void log_to_stderr(enum uks_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)arg;
	fprintf(stderr, "uks vduse-blk: %s\n", msg);
}

static socklen_t ctl_addr(const char *name, struct sockaddr_un *sa)
{
	int len;

	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	/* abstract: sun_path[0] = 0, the name follows without a terminator */
	len = snprintf(sa->sun_path + 1, sizeof(sa->sun_path) - 1, "uks-vduse-blk/%s", name);
	if (len < 0 || (size_t)len >= sizeof(sa->sun_path) - 1)
		return 0;
	return (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + (size_t)len);
}

/* ------------------------------------------------------------ the daemon */

struct daemon {
	struct uks_vduse_dev *dev;
	struct uks_vduse_backend *be;
	const char *name;
};

static void ctl_answer(struct daemon *d, int fd)
{
	char req[256], resp[512];
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	ssize_t n;

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ||
	    (cred.uid != 0 && cred.uid != getuid())) {
		snprintf(resp, sizeof(resp), "error %d permission denied\n", -EPERM);
		goto out;
	}
	n = recv(fd, req, sizeof(req) - 1, 0);
	if (n <= 0)
		return;
	req[n] = 0;
	req[strcspn(req, "\n")] = 0;
	if (!strncmp(req, "resize ", 7)) {
		uint64_t size;
		int ret = uks_vduse_parse_size(req + 7, &size);

		if (!ret)
			ret = uks_vduse_dev_resize(d->dev, size);
		if (ret)
			snprintf(resp, sizeof(resp), "error %d %s\n", ret, strerror(-ret));
		else
			snprintf(resp, sizeof(resp), "ok %llu sectors\n",
				 (unsigned long long)(size / 512));
	} else if (!strcmp(req, "stats")) {
		struct uks_vduse_blk_stats st;

		uks_vduse_dev_get_stats(d->dev, &st);
		snprintf(resp, sizeof(resp),
			 "ok status %#x requests %llu errors %llu unsupported %llu malformed %llu irqs %llu\n",
			 uks_vduse_dev_status(d->dev), (unsigned long long)st.requests,
			 (unsigned long long)st.errors, (unsigned long long)st.unsupported,
			 (unsigned long long)st.malformed, (unsigned long long)st.irqs);
	} else {
		snprintf(resp, sizeof(resp), "error %d unknown request\n", -EINVAL);
	}
out:
	if (send(fd, resp, strlen(resp), MSG_NOSIGNAL) < 0)
		fprintf(stderr, "uks vduse-blk: control socket: %s\n", strerror(errno));
}

/* Wait for a signal or a control request; 0 after SIGTERM/SIGINT. */
static int serve(struct daemon *d, int sigfd, int lfd)
{
	struct pollfd pfd[2] = { { .fd = sigfd, .events = POLLIN }, { .fd = lfd, .events = POLLIN } };

	for (;;) {
		if (poll(pfd, lfd >= 0 ? 2 : 1, -1) < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (pfd[0].revents) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si))
				fprintf(stderr, "uks vduse-blk: %s: %s, shutting down\n", d->name,
					strsignal((int)si.ssi_signo));
			return 0;
		}
		if (lfd >= 0 && pfd[1].revents) {
			int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);

			if (fd >= 0) {
				ctl_answer(d, fd);
				close(fd);
			}
		}
	}
}

static int parse_uint(const char *opt, const char *text, unsigned int *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || end == text || *end || v > 65536) {
		fprintf(stderr, "uks vduse-blk: %s: not a number: '%s'\n", opt, text);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

static int run_daemon(int argc, char **argv)
{
	enum { OPT_QUEUES = 256, OPT_QSIZE, OPT_BSIZE, OPT_READONLY, OPT_DIRECT, OPT_ATTACH,
	       OPT_RECONNECT, OPT_TIMEOUT, OPT_POLL };
	static const struct option opts[] = {
		{ "name", required_argument, NULL, 'n' },
		{ "backend", required_argument, NULL, 'b' },
		{ "queues", required_argument, NULL, OPT_QUEUES },
		{ "queue-size", required_argument, NULL, OPT_QSIZE },
		{ "block-size", required_argument, NULL, OPT_BSIZE },
		{ "readonly", no_argument, NULL, OPT_READONLY },
		{ "direct", no_argument, NULL, OPT_DIRECT },
		{ "attach", no_argument, NULL, OPT_ATTACH },
		{ "reconnect", no_argument, NULL, OPT_RECONNECT },
		{ "msg-timeout", required_argument, NULL, OPT_TIMEOUT },
		{ "poll-us", required_argument, NULL, OPT_POLL },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct uks_vduse_blk_params p = { .nr_queues = 1, .queue_size = 256, .block_size = 512,
					  .event_idx = true, .indirect = true };
	const char *spec = NULL;
	bool direct = false, attach = false, attached = false;
	unsigned int flags = 0, timeout = 0, poll_us = 50;
	bool set_timeout = false;
	struct daemon d = { 0 };
	struct sockaddr_un sa;
	socklen_t salen;
	sigset_t sigs;
	int c, ret, sigfd = -1, lfd = -1, status = 1;

	optind = 1;
	while ((c = getopt_long(argc, argv, "n:b:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': p.name = optarg; break;
		case 'b': spec = optarg; break;
		case OPT_QUEUES: if (parse_uint("--queues", optarg, &p.nr_queues)) return 2; break;
		case OPT_QSIZE: if (parse_uint("--queue-size", optarg, &p.queue_size)) return 2; break;
		case OPT_BSIZE: if (parse_uint("--block-size", optarg, &p.block_size)) return 2; break;
		case OPT_READONLY: p.readonly = true; break;
		case OPT_DIRECT: direct = true; break;
		case OPT_ATTACH: attach = true; break;
		case OPT_RECONNECT: flags |= UKS_VDUSE_DEV_RECONNECT; break;
		case OPT_TIMEOUT:
			if (parse_uint("--msg-timeout", optarg, &timeout))
				return 2;
			set_timeout = true;
			break;
		case OPT_POLL: if (parse_uint("--poll-us", optarg, &poll_us)) return 2; break;
		case 'h': vduse_blk_usage(stdout); return 0;
		default: vduse_blk_usage(stderr); return 2;
		}
	}
	if (!p.name || !spec || optind != argc) {
		fprintf(stderr, "uks vduse-blk: --name and --backend are required\n");
		vduse_blk_usage(stderr);
		return 2;
	}
	if (p.block_size != 512 && p.block_size != 4096) {
		fprintf(stderr, "uks vduse-blk: --block-size must be 512 or 4096\n");
		return 2;
	}
	if (!p.nr_queues || p.nr_queues > 64 || p.queue_size < 2 || p.queue_size > 32768 ||
	    (p.queue_size & (p.queue_size - 1))) {
		fprintf(stderr, "uks vduse-blk: --queues is 1..64, --queue-size a power of two 2..32768\n");
		return 2;
	}
	d.name = p.name;
	salen = ctl_addr(p.name, &sa);
	if (!salen) {
		fprintf(stderr, "uks vduse-blk: name too long: %s\n", p.name);
		return 2;
	}
	uks_set_log_fn(log_to_stderr, NULL);
	/* Signals become readable on a signalfd; every thread made later inherits the mask. */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGTERM);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	sigfd = signalfd(-1, &sigs, SFD_CLOEXEC);
	if (sigfd < 0) {
		fprintf(stderr, "uks vduse-blk: signalfd: %s\n", strerror(errno));
		return 1;
	}
	ret = uks_vduse_backend_open(spec, p.readonly, direct, p.nr_queues, &d.be);
	if (ret) {
		fprintf(stderr, "uks vduse-blk: backend %s: %s\n", spec, strerror(-ret));
		goto out;
	}
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, salen) || listen(lfd, 8)) {
		fprintf(stderr, "uks vduse-blk: control socket @%s: %s%s\n", sa.sun_path + 1,
			strerror(errno), errno == EADDRINUSE ? " (a daemon serves this name)" : "");
		goto out;
	}
	ret = uks_vduse_dev_create(&p, d.be, flags, &d.dev);
	if (ret) {
		fprintf(stderr, "uks vduse-blk: %s: cannot create the device: %s%s\n", p.name,
			strerror(-ret),
			ret == -EEXIST ? " (it exists: --reconnect takes it over)" : "");
		goto out;
	}
	uks_vduse_dev_set_poll(d.dev, poll_us);
	if (set_timeout && (ret = uks_vduse_set_msg_timeout(p.name, timeout)))
		fprintf(stderr, "uks vduse-blk: msg_timeout: %s\n", strerror(-ret));
	if (attach) {
		ret = uks_vduse_vdpa_attach(p.name);
		if (ret && !(ret == -EEXIST && uks_vduse_dev_reconnected(d.dev))) {
			fprintf(stderr, "uks vduse-blk: %s: attach: %s\n", p.name, strerror(-ret));
			goto out;
		}
		attached = true;
	}
	printf("vduse-blk %s: ready (%s, %llu bytes, %u queue%s of %u%s%s)\n", p.name, spec,
	       (unsigned long long)uks_vduse_backend_size(d.be), p.nr_queues,
	       p.nr_queues == 1 ? "" : "s", p.queue_size, attached ? ", attached" : "",
	       uks_vduse_dev_reconnected(d.dev) ? ", reconnected" : "");
	fflush(stdout);
	ret = serve(&d, sigfd, lfd);
	if (ret)
		fprintf(stderr, "uks vduse-blk: %s: %s\n", p.name, strerror(-ret));
	status = ret ? 1 : 0;
out:
	if (d.dev) {
		/* whoever attached it, it must be detached before the kernel destroys it */
		ret = uks_vduse_vdpa_detach(p.name);
		if (ret && ret != -ENODEV && ret != -ENOENT)
			fprintf(stderr, "uks vduse-blk: %s: detach: %s\n", p.name, strerror(-ret));
		if (uks_vduse_dev_destroy(d.dev))
			status = 1;
	}
	if (d.be)
		uks_vduse_backend_close(d.be);
	if (lfd >= 0)
		close(lfd);
	close(sigfd);
	return status;
}

/* ------------------------------------------------------------ the commands */

static int ctl_request(const char *name, const char *req)
{
	struct sockaddr_un sa;
	socklen_t salen = ctl_addr(name, &sa);
	char resp[512];
	ssize_t n;
	int fd;

	if (!salen) {
		fprintf(stderr, "uks vduse-blk: name too long: %s\n", name);
		return 2;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, salen)) {
		fprintf(stderr, "uks vduse-blk: %s: no daemon serves it (%s)\n", name,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 3;
	}
	if (send(fd, req, strlen(req), MSG_NOSIGNAL) < 0 || (n = recv(fd, resp, sizeof(resp) - 1, 0)) <= 0) {
		fprintf(stderr, "uks vduse-blk: %s: the daemon did not answer\n", name);
		close(fd);
		return 1;
	}
	close(fd);
	resp[n] = 0;
	if (strncmp(resp, "ok", 2)) {
		fprintf(stderr, "uks vduse-blk: %s: %s", name, resp);
		return 1;
	}
	if (resp[2] == ' ')
		fputs(resp + 3, stdout);
	return 0;
}

static int netlink_cmd(const char *cmd, const char *name)
{
	int ret = !strcmp(cmd, "attach") ? uks_vduse_vdpa_attach(name) : uks_vduse_vdpa_detach(name);

	if (ret) {
		fprintf(stderr, "uks vduse-blk: %s %s: %s%s\n", cmd, name, strerror(-ret),
			ret == -ENOENT ? " (no vdpa netlink family: load the vdpa module)" : "");
		return 1;
	}
	return 0;
}

/* -1: run the subcommand; else the exit status after its help or a usage error */
static int sub_args(int argc, char **argv, int want, const char *args, const char *help)
{
	if (argc > 2 && !strcmp(argv[2], "-h")) {
		printf("Usage: uks vduse-blk %s %s\n%s", argv[1], args, help);
		return 0;
	}
	if (argc != want || argv[2][0] == '-') {
		fprintf(stderr, "uks vduse-blk %s: %s\nUsage: uks vduse-blk %s %s\n", argv[1],
			argc < want ? "missing argument" : argc > want ? "too many arguments"
								 : "unknown option",
			argv[1], args);
		return 2;
	}
	return -1;
}

int cli_vduse_blk(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	int ret;

	if (sub && (!strcmp(sub, "attach") || !strcmp(sub, "detach"))) {
		ret = sub_args(argc, argv, 3, "NAME", !strcmp(sub, "attach") ?
			       "Add the vDPA device of the running vduse-blk NAME to the vdpa bus\n"
			       "(the kernel's netlink; needs the vdpa module).\n" :
			       "Remove the vDPA device NAME from the vdpa bus.\n");
		return ret >= 0 ? ret : netlink_cmd(sub, argv[2]);
	}
	if (sub && !strcmp(sub, "stats")) {
		ret = sub_args(argc, argv, 3, "NAME",
			       "Print the request counts of the running vduse-blk NAME.\n"
			       "Exit status 3 when no vduse-blk NAME is running.\n");
		return ret >= 0 ? ret : ctl_request(argv[2], "stats\n");
	}
	if (sub && !strcmp(sub, "resize")) {
		char req[128];
		uint64_t size;

		ret = sub_args(argc, argv, 4, "NAME SIZE",
			       "Change the capacity of the running vduse-blk NAME (SIZE with K, M, G,\n"
			       "T suffixes) and tell the driver with a config interrupt.\n");
		if (ret >= 0)
			return ret;
		if (uks_vduse_parse_size(argv[3], &size)) {
			fprintf(stderr, "uks vduse-blk resize: not a size: '%s'\n"
					"Usage: uks vduse-blk resize NAME SIZE\n", argv[3]);
			return 2;
		}
		snprintf(req, sizeof(req), "resize %llu\n", (unsigned long long)size);
		return ctl_request(argv[2], req);
	}
	return run_daemon(argc, argv);
}
