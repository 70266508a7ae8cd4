// SPDX-License-Identifier: MIT
/*
 * libuks-damon-agent.so: DAMON inside the monitored process.
 *
 * Loaded with LD_PRELOAD (or linked), its constructor starts one DAMON
 * context on the process itself with the "self" primitive (per-page reads
 * and writes with userfaultfd, lib/damon/self/self.c) when the environment asks
 * for it, and its destructor stops it (every page is given back first):
 *
 *	UKS_DAMON_AGENT_FD=N	 write each aggregation as binary packets
 *				 (lib/damon/record/record_packets.c) to fd N:
 *				 `uks damon record --primitive self` reads
 *				 them from a pipe
 *	UKS_DAMON_AGENT_OUT=FILE write damo's binary record to FILE
 *	UKS_DAMON_AGENT_ATTRS="sample aggr update min max" (us; default
 *				 damo's 5000 100000 1000000 10 1000)
 *	UKS_DAMON_AGENT_VERBOSE=1 print the self primitive's counts at exit
 *
 * Without FD or OUT it does nothing, as in a setuid or setgid program
 * started by another user: the settings are read with secure_getenv().
 * The process that first loads the agent records its pid in
 * UKS_DAMON_AGENT_PID: the programs it executes
 * (same pid: `env`, `timeout`, `sh -c 'exec ...'` chains) are monitored in
 * turn, on the same fd, while processes it forks or spawns (another pid)
 * are not; a fork child also closes its copy of the output at once.  (A
 * posix_spawn() child keeps the inherited fd open until it exits, so
 * `uks damon record` ends when the last of them does.)  With OUT, each
 * program image rewrites FILE: it holds the last image's record.
 * The monitor thread ("kdamond.0") is the only thread the agent adds.
 * Output is written at each aggregation, when no page is taken away.
 *
 * Lock order: none (the callback runs in the monitor thread; the
 * constructor and destructor run before and after it).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon.h>
#include <uks/damon_record.h>

#include "damon/damon.h"
#include "damon/record/record.h"

struct agent {
	struct uks_damon_ctx *ctx;
	struct uks_damon_rec_writer *w;
	int fd;			/* packets, or the record file */
	dev_t fd_dev;		/* what @fd was when it was ours */
	ino_t fd_ino;
	bool fd_lost;		/* the program closed or replaced it */
	bool child;
	bool verbose;
};

static struct agent agent = { .fd = -1 };

static void agent_err(const char *what, int err)
{
	dprintf(2, "uks-damon-agent: %s: %s\n", what, strerror(err));
}

/*
 * Is the output still the file we were given?  A raw close_range() system
 * call, or a dup2() onto it, gets past the wrappers below; writing on
 * would put our records into whatever the program opened there.
 */
static bool output_is_ours(struct agent *a)
{
	struct stat st;

	if (a->fd_lost)
		return false;
	if (fstat(a->fd, &st) || st.st_dev != a->fd_dev || st.st_ino != a->fd_ino) {
		a->fd_lost = true;
		dprintf(2, "uks-damon-agent: the program closed or replaced the agent's output "
			"(fd %d): monitoring stops\n", a->fd);
		__uks_damon_fd_unhide(a->fd);
		a->fd = -1;
		return false;
	}
	return true;
}

static int put_target(struct uks_damon_target *t, void *arg)
{
	struct agent *a = arg;
	unsigned int nr = uks_damon_target_nr_regions(t);
	struct uks_damon_region_info *ri;
	struct timespec now;
	int64_t ts;
	int n;

	if (!nr)
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ts = (int64_t)now.tv_sec * 1000000000LL + now.tv_nsec;
	if (!a->w) {
		/* to the microsecond, as trace_pipe: records are alike whichever primitive */
		__uks_damon_rec_packets_put(a->fd, t, ts - ts % 1000);
		return 0;
	}
	ri = calloc(nr, sizeof(*ri));
	if (!ri)
		return 0;
	n = uks_damon_target_regions(t, ri, nr);
	for (int i = 0; i < n; i++) {
		struct uks_damon_agg_event ev = {
			.ts_ns = ts,
			.target_id = uks_damon_target_id(t),
			.nr_regions = (uint32_t)n,
			.start = ri[i].start,
			.end = ri[i].end,
			.nr_accesses = ri[i].nr_accesses,
		};

		uks_damon_rec_writer_event(a->w, &ev);
	}
	free(ri);
	return 0;
}

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct agent *a = uks_damon_callback_private(ctx);

	if (!output_is_ours(a))
		return 1;	/* nowhere to report: stop, every page given back */
	uks_damon_for_each_target(ctx, put_target, a);
	return 0;
}

/*
 * The program's close(), close_range() and closefrom() leave DAMON's own
 * descriptors open (lib/damon/self/fd_guard.c): to the program they are not
 * open files of its own, so close() says EBADF.  Calls inside glibc (a
 * posix_spawn() close action) and raw system calls go past these;
 * output_is_ours() notices what they do to the output.
 */
extern int __close(int fd);

__attribute__((visibility("default"))) int close(int fd)
{
	if (__uks_damon_fd_hidden(fd)) {
		errno = EBADF;
		return -1;
	}
	return __close(fd);
}

__attribute__((visibility("default"))) int close_range(unsigned int first, unsigned int last,
							int flags)
{
	if (first > last) {
		errno = EINVAL;
		return -1;
	}
	return __uks_damon_close_range_unhidden(first, last, flags);
}

__attribute__((visibility("default"))) void closefrom(int lowfd)
{
	DIR *d;
	struct dirent *e;

	if (lowfd < 0)
		lowfd = 0;
	if (!close_range((unsigned int)lowfd, ~0U, 0) || errno != ENOSYS)
		return;
	d = opendir("/proc/self/fd");	/* before Linux 5.9 */
	if (!d)
		return;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd >= lowfd && fd != dirfd(d))
			close(fd);
	}
	closedir(d);
}

/*
 * mremap() needs its old range inside one mapping, and registering a
 * sampled page splits its mapping in three: without this wrapper an
 * mremap() of a range holding a sampled page would fail with EFAULT.
 * The wrapper closes the sampling window around the call (every page
 * back, registrations gone, mappings merged again).  glibc's realloc()
 * calls its internal __mremap; when that fails it falls back to
 * malloc + copy + free, so it still works, only slower.
 */
__attribute__((visibility("default"))) void *mremap(void *old, size_t old_len,
						     size_t new_len, int flags, ...)
{
	void *new_addr = NULL;
	long r;

	if (flags & MREMAP_FIXED) {
		va_list ap;

		va_start(ap, flags);
		new_addr = va_arg(ap, void *);
		va_end(ap);
	}
	__uks_damon_self_pause();
	r = syscall(SYS_mremap, old, old_len, new_len, flags, new_addr);
	__uks_damon_self_resume();
	return r == -1 ? MAP_FAILED : (void *)r;
}

static void agent_fork_child(void)
{
	agent.child = true;
	__uks_damon_fd_close(agent.fd);
	agent.fd = -1;
}

__attribute__((constructor)) static void agent_start(void)
{
	const char *fdv = secure_getenv("UKS_DAMON_AGENT_FD");
	const char *out = secure_getenv("UKS_DAMON_AGENT_OUT");
	const char *at = secure_getenv("UKS_DAMON_AGENT_ATTRS");
	unsigned long v[5] = { 5000, 100000, 1000000, 10, 1000 };
	struct uks_damon_callback cb = { .priv = &agent,
					 .after_aggregation = after_aggregation };
	unsigned long pid = (unsigned long)getpid();
	struct stat fst;
	char why[256];
	int err;

	if ((!fdv || !*fdv) && (!out || !*out))
		return;
	agent.verbose = secure_getenv("UKS_DAMON_AGENT_VERBOSE") != NULL;
	const char *pidv = secure_getenv("UKS_DAMON_AGENT_PID");
	char pidtext[24];

	if (pidv && atol(pidv) != (long)getpid())
		return;		/* spawned by a monitored process: not ours */
	snprintf(pidtext, sizeof(pidtext), "%ld", (long)getpid());
	setenv("UKS_DAMON_AGENT_PID", pidtext, 1);
	if (at && sscanf(at, "%lu %lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5)
		agent_err("UKS_DAMON_AGENT_ATTRS", EINVAL);
	if (fdv && *fdv) {
		char fdtext[16];

		/* inherited across exec, on purpose: a new number goes to the next image */
		agent.fd = __uks_damon_fd_hide(atoi(fdv));
		snprintf(fdtext, sizeof(fdtext), "%d", agent.fd);
		setenv("UKS_DAMON_AGENT_FD", fdtext, 1);
	} else {
		agent.fd = __uks_damon_fd_hide(open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
						    0644));
		if (agent.fd < 0) {
			agent_err(out, errno);
			return;
		}
		err = uks_damon_rec_writer_create(agent.fd, UKS_DAMON_RECFMT_VERSION, &agent.w);
		if (err) {
			agent_err("record writer", -err);
			return;
		}
	}
	if (!fstat(agent.fd, &fst)) {
		agent.fd_dev = fst.st_dev;
		agent.fd_ino = fst.st_ino;
	}
	if (uks_damon_primitive_available("self", why, sizeof(why))) {
		dprintf(2, "uks-damon-agent: %s\n", why);
		return;
	}
	err = uks_damon_ctx_create(&agent.ctx);
	if (!err)
		err = uks_damon_set_attrs(agent.ctx, v[0], v[1], v[2], v[3], v[4]);
	if (!err)
		err = uks_damon_set_primitive(agent.ctx, "self");
	if (!err)
		err = uks_damon_set_targets(agent.ctx, &pid, 1);
	if (!err) {
		uks_damon_set_callback(agent.ctx, &cb);
		pthread_atfork(NULL, NULL, agent_fork_child);
		err = uks_damon_start(&agent.ctx, 1);
	}
	if (!err)	/* main() may close every fd: the monitor's table first */
		__uks_damon_wait_primitive_ready(agent.ctx);
	if (err)
		agent_err("cannot start DAMON", -err);
}

__attribute__((destructor)) static void agent_stop(void)
{
	if (!agent.ctx || agent.child)
		return;
	if (uks_damon_is_running(agent.ctx))
		uks_damon_stop(&agent.ctx, 1);
	if (agent.verbose) {
		struct uks_damon_self_stats st;

		uks_damon_self_stats(&st);
		dprintf(2, "uks-damon-agent: %s mode, %lu samples, %lu sampled pages, %lu taken, "
			"%lu faults, %lu refused, %lu dropped, %lu cut, %lu lost, %lu huge\n",
			uks_damon_self_mode(), st.samples, st.sampled, st.taken, st.faults,
			st.refused, st.dropped, st.cut, st.lost, st.huge);
	}
	if (agent.w && !agent.fd_lost)	/* else its fd is no longer the record file */
		uks_damon_rec_writer_finish(agent.w, NULL);
	agent.w = NULL;
	__uks_damon_fd_close(agent.fd);
	agent.fd = -1;
	uks_damon_ctx_destroy(agent.ctx);
	agent.ctx = NULL;
}
