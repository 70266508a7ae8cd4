// SPDX-License-Identifier: MIT
/*
 * uksd: the uks daemon.  It owns a trace instance (and, as they land, the
 * other subsystems' state) and serves one file tree, uksfs, with the
 * kernel's paths: sys/kernel/tracing (tracefs, also at
 * sys/kernel/debug/tracing as on kernels with debugfs) and sys/kernel/slab
 * (the daemon's own caches).  Front ends: a FUSE mount and a Unix socket
 * (for the uks CLI, and where /dev/fuse is missing), the same bytes
 * through both.
 *
 * Life cycle: signals are blocked before any thread starts and taken with
 * sigwait() by the main thread, so SIGTERM/SIGINT unmount and remove the
 * socket however busy the servers are.  With --daemon the parent returns
 * only once the child serves (or with the child's error), so scripts can
 * use the mount right after "uksd --daemon" returns.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <grp.h>
#include <pthread.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <syslog.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/trace.h>
#include <uks/tracee.h>
#include <uks/uks.h>

#include "uksd.h"

struct options {
	char mount[PATH_MAX];
	char sock[PATH_MAX];
	const char *pid_file;
	const char *fsname;
	bool set_gid;
	gid_t gid;
	bool fuse, socket, daemon, use_syslog, allow_other, once;
};

static bool use_syslog;

static void say(int prio, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(int prio, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (use_syslog) {
		vsyslog(prio, fmt, ap);
	} else {
		fputs("uksd: ", stderr);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
}

static void log_to_syslog(enum uks_log_level level, const char *msg, void *arg)
{
	static const int prio[] = { LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG };

	(void)arg;
	syslog(prio[level < 4 ? level : 3], "%s", msg);
}

static void usage(FILE *out)
{
	fputs("Usage: uksd [OPTIONS]\n"
	      "\n"
	      "Serve the uks file tree (sys/kernel/tracing, sys/kernel/debug/tracing,\n"
	      "sys/kernel/slab) through FUSE and a Unix socket.\n"
	      "\n"
	      "  -m, --mount DIR       FUSE mount point (default $XDG_RUNTIME_DIR/uks, else\n"
	      "                        /tmp/uks-UID/uks; /run/uks for root)\n"
	      "  -s, --socket PATH     socket (default $XDG_RUNTIME_DIR/uks.sock, else\n"
	      "                        /tmp/uks-UID/uks.sock; /run/uks.sock for root)\n"
	      "      --no-fuse         serve the socket only\n"
	      "      --no-socket       serve the FUSE mount only\n"
	      "      --fsname NAME     the mount's source name (default uksfs; \"tracefs\"\n"
	      "                        lets tools that look for tracefs by name find it)\n"
	      "      --allow-other     let other users into the mount\n"
	      "      --gid GID         the tracing files' group (tracefs's gid= mount\n"
	      "                        option): a number or a group name\n"
	      "  -d, --daemon          detach; return once serving (then log to syslog)\n"
	      "  -p, --pid-file PATH   write the daemon's pid there\n"
	      "      --syslog          log to syslog instead of stderr\n"
	      "      --once            start, report and exit (for scripts and tests)\n"
	      "  -h, --help, -V, --version\n"
	      "\n"
	      "Stops cleanly (unmounts, removes the socket) on SIGTERM or SIGINT.\n"
	      "Exit status: 0 clean stop, 1 could not serve, 2 bad usage.  See uksd(8).\n",
	      out);
}

/* The paths not given: in uks_runtime_dir(), which must be safe to use. */
static int default_paths(struct options *o)
{
	bool need = (o->fuse && !o->mount[0]) || (o->socket && !o->sock[0]);
	char rt[PATH_MAX - 16], why[256];
	int ret;

	if (!need)
		return 0;
	ret = uks_runtime_dir(rt, sizeof(rt), UKS_RUNTIME_DIR_CREATE, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "uksd: %s: %s: not serving from it (remove it, or pass "
				"--socket and --mount)\n", rt, why);
		return 1;
	}
	if (!o->mount[0])
		snprintf(o->mount, sizeof(o->mount), "%s/uks", rt);
	if (!o->sock[0])
		snprintf(o->sock, sizeof(o->sock), "%s/uks.sock", rt);
	return 0;
}

/* A gid as tracefs's gid= takes it (a number; -1 is none), or a group's name. */
static int parse_gid(const char *s, gid_t *gid)
{
	unsigned long long v;
	struct group *gr;
	char *end;

	if (!*s)
		return -EINVAL;
	if (*s >= '0' && *s <= '9') {
		errno = 0;
		v = strtoull(s, &end, 10);
		if (errno || *end || v >= (gid_t)-1)
			return -EINVAL;
		*gid = (gid_t)v;
		return 0;
	}
	gr = getgrnam(s);
	if (!gr)
		return -EINVAL;
	*gid = gr->gr_gid;
	return 0;
}

static int parse(int argc, char **argv, struct options *o)
{
	enum { NO_FUSE = 256, NO_SOCKET, FSNAME, ALLOW_OTHER, SYSLOG, ONCE, GID };
	static const struct option opts[] = {
		{ "mount", required_argument, NULL, 'm' },
		{ "socket", required_argument, NULL, 's' },
		{ "no-fuse", no_argument, NULL, NO_FUSE },
		{ "no-socket", no_argument, NULL, NO_SOCKET },
		{ "fsname", required_argument, NULL, FSNAME },
		{ "allow-other", no_argument, NULL, ALLOW_OTHER },
		{ "gid", required_argument, NULL, GID },
		{ "daemon", no_argument, NULL, 'd' },
		{ "pid-file", required_argument, NULL, 'p' },
		{ "syslog", no_argument, NULL, SYSLOG },
		{ "once", no_argument, NULL, ONCE },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->fuse = o->socket = true;
	while ((c = getopt_long(argc, argv, "m:s:dp:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
		case 's':
			if (strlen(optarg) >= PATH_MAX) {
				fprintf(stderr, "uksd: path too long: %s\n", optarg);
				return 2;
			}
			strcpy(c == 'm' ? o->mount : o->sock, optarg);
			break;
		case NO_FUSE: o->fuse = false; break;
		case NO_SOCKET: o->socket = false; break;
		case FSNAME: o->fsname = optarg; break;
		case ALLOW_OTHER: o->allow_other = true; break;
		case GID:
			if (parse_gid(optarg, &o->gid)) {
				fprintf(stderr, "uksd: --gid: not a group number or name: '%s'\n",
					optarg);
				return 2;
			}
			o->set_gid = true;
			break;
		case 'd': o->daemon = true; break;
		case 'p': o->pid_file = optarg; break;
		case SYSLOG: o->use_syslog = true; break;
		case ONCE: o->once = true; break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("uksd %s\n", uks_version());
			exit(0);
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "uksd: unexpected argument: %s\n", argv[optind]);
		return 2;
	}
	if (!o->fuse && !o->socket) {
		fputs("uksd: --no-fuse and --no-socket leave nothing to serve\n", stderr);
		return 2;
	}
	return default_paths(o);
}

/* mkdir -p for the directory part of @path, private to the owner. */
static int make_parent(const char *path)
{
	char dir[PATH_MAX], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

struct daemon_state {
	struct uks_trace *tr;
	struct uks_vfs *vfs;
	struct uks_server *fuse, *sock;
};

/* Unmounted from outside (fusermount3 -u): stop as if told to. */
static void on_unmounted(void *arg)
{
	(void)arg;
	say(LOG_INFO, "the mount went away");
	kill(getpid(), SIGTERM);
}

/* Why uks_fuse_serve() found no FUSE: no libfuse3, or /dev/fuse's state. */
static const char *fuse_missing(int ret)
{
	static char why[96];

	if (ret == -ENOTSUP)
		return "built without libfuse3";
	if (access("/dev/fuse", F_OK))
		return "no /dev/fuse";
	if (access("/dev/fuse", R_OK | W_OK)) {
		snprintf(why, sizeof(why), "/dev/fuse: %s", strerror(errno));
		return why;
	}
	return "/dev/fuse refused the mount";
}

static int start(const struct options *o, struct daemon_state *d)
{
	int ret = uks_trace_create(NULL, &d->tr);

	if (!ret)
		ret = uks_vfs_create(&d->vfs);
	if (!ret)
		ret = uks_vfs_add_tracefs(d->vfs, "sys/kernel/tracing", d->tr);
	if (!ret)
		ret = uks_vfs_add_tracefs(d->vfs, "sys/kernel/debug/tracing", d->tr);
	if (!ret)
		ret = uks_vfs_add_slab(d->vfs, "sys/kernel/slab");
	if (!ret)
		ret = uks_vfs_add_damon(d->vfs, "sys/kernel/debug/damon", NULL);
	if (!ret)
		ret = uks_vfs_add_damon_sysfs(d->vfs, "sys/kernel/mm/damon/admin", NULL);
	if (!ret)
		ret = uks_vfs_add_a32(d->vfs, "sys/devices/system/cpu", NULL, NULL);
	if (ret) {
		say(LOG_ERR, "cannot set up the file tree: %s", strerror(-ret));
		return ret;
	}
	/* syscalls:*, sched:*, task:* exist before anyone looks at events/. */
	ret = uks_tracee_register_events();
	if (ret)
		say(LOG_WARNING, "no system-call events: %s", strerror(-ret));
	if (o->socket) {
		ret = make_parent(o->sock);
		if (!ret)
			ret = uks_sock_serve_ext(d->vfs, o->sock, uksd_handle_request, NULL, &d->sock);
		if (ret == -EADDRINUSE) {
			say(LOG_ERR, "%s: another uksd already serves this socket", o->sock);
			return ret;
		}
		if (ret) {
			say(LOG_ERR, "%s: cannot serve the socket: %s", o->sock, strerror(-ret));
			return ret;
		}
	}
	if (o->fuse) {
		struct uks_fuse_opts fo = { o->fsname, o->allow_other, 0, on_unmounted, NULL,
					    o->set_gid, o->gid };

		if (mkdir(o->mount, 0700) && errno != EEXIST) {
			ret = -errno;
		} else {
			ret = uks_fuse_serve(d->vfs, o->mount, &fo, &d->fuse);
		}
		if (ret == -EBUSY)
			say(LOG_ERR, "%s: already a mount point (another uksd? "
				     "'fusermount3 -u %s' removes a dead one)", o->mount, o->mount);
		else if (ret == -ENOTSUP || ret == -ENODEV)
			say(LOG_ERR, "%s: FUSE is not available (%s); use --no-fuse and the "
				     "socket", o->mount, fuse_missing(ret));
		else if (ret)
			say(LOG_ERR, "%s: cannot mount: %s", o->mount, strerror(-ret));
		if (ret)
			return ret;
		uksd_tracing_set_mount(o->mount);
	}
	return 0;
}

static void stop(struct daemon_state *d)
{
	uksd_stop_tracing();
	uks_server_stop(d->fuse);
	uks_server_stop(d->sock);
	uks_vfs_destroy(d->vfs);
	if (d->tr)
		uks_trace_destroy(d->tr);
}

/* Fork; the parent waits on a pipe for the child's "serving" or error byte. */
static int daemonize(int *ready_fd)
{
	int p[2];
	pid_t pid;
	char status = 1;

	if (pipe(p))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		if (read(p[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(p[0]);
	setsid();
	*ready_fd = p[1];
	return 0;
}

/*
 * Tell the waiting parent how the start went.  Once detached and serving,
 * the standard streams go to /dev/null (a caller capturing our output must
 * not wait on us) and messages go to syslog.
 */
static void report_ready(int ready_fd, char status)
{
	int null;

	if (ready_fd < 0)
		return;
	if (write(ready_fd, &status, 1) != 1)
		say(LOG_WARNING, "cannot tell the parent: %s", strerror(errno));
	close(ready_fd);
	if (status)
		return;
	if (!use_syslog) {
		openlog("uksd", LOG_PID, LOG_DAEMON);
		uks_set_log_fn(log_to_syslog, NULL);
		use_syslog = true;
	}
	null = open("/dev/null", O_RDWR);
	if (null < 0)
		return;
	dup2(null, 0);
	dup2(null, 1);
	dup2(null, 2);
	if (null > 2)
		close(null);
}

int main(int argc, char **argv)
{
	struct daemon_state d = { 0 };
	struct options o;
	sigset_t set;
	int ret, sig = 0, ready_fd = -1;
	FILE *pf;

	ret = parse(argc, argv, &o);
	if (ret)
		return ret;
	use_syslog = o.use_syslog;
	if (use_syslog) {
		openlog("uksd", LOG_PID, LOG_DAEMON);
		uks_set_log_fn(log_to_syslog, NULL);
	}
	if (o.daemon && daemonize(&ready_fd)) {
		say(LOG_ERR, "cannot detach: %s", strerror(errno));
		return 1;
	}
	/* Before any thread exists, so that only sigwait() below sees them. */
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &set, NULL);

	ret = start(&o, &d);
	if (ret) {
		stop(&d);
		report_ready(ready_fd, 1);
		return 1;
	}
	if (o.pid_file) {
		pf = fopen(o.pid_file, "w");
		if (!pf || fprintf(pf, "%d\n", (int)getpid()) < 0 || fclose(pf))
			say(LOG_WARNING, "%s: cannot write the pid file", o.pid_file);
	}
	say(LOG_INFO, "serving%s%s%s%s (uks %s, %u possible CPUs, cpu ids via %s)",
	    o.fuse ? " at " : "", o.fuse ? o.mount : "",
	    !o.socket ? "" : o.fuse ? " and on " : " on ", o.socket ? o.sock : "",
	    uks_version(), uks_nr_cpu_ids(),
	    uks_rseq_active() ? "rseq" : "sched_getcpu");
	report_ready(ready_fd, 0);
	if (!o.once) {
		while (sigwait(&set, &sig) == 0 && sig == SIGHUP)
			;	/* nothing to reload yet */
	}
	say(LOG_INFO, "stopping%s%s", sig ? " on " : "", sig ? strsignal(sig) : "");
	stop(&d);
	if (o.pid_file)
		unlink(o.pid_file);
	return 0;
}
