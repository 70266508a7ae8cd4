// SPDX-License-Identifier: MIT
/*
 * The keeper: a small process that holds the ptrace attachment of traced
 * processes on behalf of a session living elsewhere (uksd's tracer thread,
 * or uks trace --embedded), so that the tracee runs on correctly whatever
 * happens to that session.
 *
 * Why a process of its own: a command under our seccomp filter gets ENOSYS
 * from every SECCOMP_RET_TRACE call once no tracer is attached, and a
 * filter can never be removed.  So the tracer must outlive the session:
 * the keeper is started by the uks trace side (the caller's credentials:
 * the kernel applies its own ptrace rule and Yama to it), sits in its own
 * session ignoring the terminal's and the usual termination signals, and
 * does nothing but waitpid() and ptrace().
 *
 * Relayed: each waitpid() result goes up to the session with what the
 * session will ask of the stop (relay.h); the keeper then waits for the
 * session's resume request and makes it.  Memory is read by the session
 * itself (process_vm_readv) while the thread is still stopped.  System-call
 * stops the session's policy lets go are resumed here before they are sent
 * up (RELAY_RESUMED): a traced call then costs no round trip.  Those are
 * sent in batches, so the session wakes once for many: when
 * KEEPER_BATCH have piled up, before any other message (order is kept),
 * and when no stop came for KEEPER_FLUSH_MS.
 *
 * Pass-through: once the session is gone (EOF or an error on its socket,
 * or RELAY_RELEASE) the keeper resumes every stop as if nobody watched: a
 * syscall, seccomp or event stop goes on, a signal-delivery-stop gets its
 * signal, a group-stop is left with PTRACE_LISTEN.  Filtered tracees stay
 * attached until they have all exited (detaching would fail their traced
 * calls); stepped ones (attached, no filter) are detached.  The keeper
 * exits when waitpid() has no tracee left.
 *
 * Front: one byte per fact to the process the user sees, if any:
 * UKS_TRACEE_KEEPER_LOST when the session went away while tracees ran,
 * UKS_TRACEE_KEEPER_DONE when the first traced pid has exited.  A front
 * that hangs up makes the keeper release stepped tracees (uks trace -p
 * ended); filtered ones are traced on.
 *
 * Lock order: none (one thread).
 */
#include <dirent.h>
#include <linux/audit.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/slab.h>
#include <uks/tracee.h>

#include "core/compiler.h"
#include "tracee/internal.h"
#include "tracee/relay.h"

#define KEEPER_ENTRIES	1024
#define KEEPER_BATCH	32
#define KEEPER_FLUSH_MS	1

/**
 * struct uks_tracee_keeper - the keeper's state
 * @root:	the first traced pid (its exit is told to the front)
 * @filtered:	the tracees run a seccomp filter: never detach them
 * @releasing:	detaching every stepped tracee at its next stop
 * @seizing:	in uks_tracee_keeper_create(): remember every thread
 * @consumer:	the session's socket, or -1 once it is gone
 * @front:	the front's pipe, or -1
 * @tids:	threads traced (stepped mode: the ones to detach)
 * @nr_tids:	entries in @tids
 * @cap_tids:	its size
 * @policy_on:	@policy came from the session: the fast path is open
 * @policy:	which system-call stops may be resumed here (relay.h)
 * @entry:	per thread (by tid modulo the size), the number of the call
 *		its last entry stop was for, so its exit stop can be judged;
 *		a thread not found there waits for the session
 * @pend:	resumed stops not sent yet
 * @nr_pend:	entries in @pend
 */
struct uks_tracee_keeper {
	pid_t root;
	bool filtered;
	bool releasing;
	bool seizing;
	int consumer;
	int front;
	pid_t *tids;
	int nr_tids;
	int cap_tids;
	bool policy_on;
	struct relay_policy policy;
	struct {
		pid_t tid;
		int32_t nr;
	} entry[KEEPER_ENTRIES];
	struct relay_stop pend[KEEPER_BATCH];
	int nr_pend;
};

static void track(struct uks_tracee_keeper *k, pid_t tid)
{
	pid_t *n;

	if (k->filtered && !k->seizing)
		return;		/* never detached: nothing to remember */
	for (int i = 0; i < k->nr_tids; i++)
		if (k->tids[i] == tid)
			return;
	if (k->nr_tids == k->cap_tids) {
		int cap = k->cap_tids ? 2 * k->cap_tids : 16;

		n = uks_krealloc(k->tids, (size_t)cap * sizeof(*n));
		if (!n)
			return;	/* it is detached when the keeper exits */
		k->tids = n;
		k->cap_tids = cap;
	}
	k->tids[k->nr_tids++] = tid;
}

static void untrack(struct uks_tracee_keeper *k, pid_t tid)
{
	for (int i = 0; i < k->nr_tids; i++) {
		if (k->tids[i] == tid) {
			k->tids[i] = k->tids[--k->nr_tids];
			return;
		}
	}
}

static void front_say(struct uks_tracee_keeper *k, char what)
{
	if (k->front >= 0 && write(k->front, &what, 1) != 1) {
		close(k->front);
		k->front = -1;
	}
}

/* Stepped tracees: interrupt them all; each is detached at its next stop. */
static void release(struct uks_tracee_keeper *k)
{
	if (k->filtered || k->releasing)
		return;
	k->releasing = true;
	for (int i = 0; i < k->nr_tids; i++)
		ptrace(PTRACE_INTERRUPT, k->tids[i], 0, 0);
}

/* The session is gone (or let go): pass-through from now on. */
static void lose(struct uks_tracee_keeper *k)
{
	if (k->consumer < 0)
		return;
	close(k->consumer);
	k->consumer = -1;
	k->nr_pend = 0;
	front_say(k, UKS_TRACEE_KEEPER_LOST);
	release(k);
}

static bool stop_signal(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

/* Resume @tid's stop as an untraced run would go on, or detach it. */
static void pass_through(struct uks_tracee_keeper *k, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), ev = status >> 16;
	bool delivery = ev == 0 && sig != (SIGTRAP | 0x80);

	if (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK || ev == PTRACE_EVENT_CLONE) {
		unsigned long child;

		/* auto-attached: it stops on its own and is handled then */
		if (!ptrace(PTRACE_GETEVENTMSG, tid, 0, &child))
			track(k, (pid_t)child);
	}
	if (k->releasing) {
		ptrace(PTRACE_DETACH, tid, 0, delivery ? sig : 0);
		untrack(k, tid);
	} else if (ev == PTRACE_EVENT_STOP && stop_signal(sig)) {
		ptrace(PTRACE_LISTEN, tid, 0, 0);	/* group-stop: stay stopped */
	} else {
		ptrace(PTRACE_CONT, tid, 0, delivery ? sig : 0);
	}
}

static int send_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, (char *)buf + got, len - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

static void flush(struct uks_tracee_keeper *k);

/*
 * The session's next request; a policy is taken in here and acknowledged
 * (after the stops resumed under the old one): the write that changed the
 * probes waits for that.
 */
static int read_cmd(struct uks_tracee_keeper *k, struct relay_cmd *c)
{
	struct relay_policy p;
	struct relay_stop ack;

	if (read_all(k->consumer, c, sizeof(*c)))
		return -EPIPE;
	if (c->type == RELAY_POLICY) {
		if (read_all(k->consumer, &p, sizeof(p)))
			return -EPIPE;
		k->policy = p;
		k->policy_on = true;
		flush(k);
		memset(&ack, 0, sizeof(ack));
		ack.type = RELAY_POLICY;
		ack.eventmsg = p.gen;
		if (k->consumer < 0 || send_all(k->consumer, &ack, sizeof(ack)))
			return -EPIPE;
	}
	return 0;
}

static bool policy_bit(const uint64_t *map, unsigned long nr)
{
	return map[nr / 64] >> (nr % 64) & 1;
}

/*
 * The request that resumes a system-call stop the policy lets go, or -1
 * when the stop must wait for the session.
 */
static int fast_request(struct uks_tracee_keeper *k, const struct relay_stop *m)
{
	const struct __ptrace_syscall_info *i = &m->info;
	unsigned int slot = (unsigned int)m->tid % KEEPER_ENTRIES;
	const struct relay_policy *p = &k->policy;
	int step = p->step ? PTRACE_SYSCALL : PTRACE_CONT;
	unsigned long nr;

	if (m->info_ret <= 0)
		return -1;
	switch (i->op) {
	case PTRACE_SYSCALL_INFO_SECCOMP:
	case PTRACE_SYSCALL_INFO_ENTRY:
		nr = i->op == PTRACE_SYSCALL_INFO_SECCOMP ? i->seccomp.nr : i->entry.nr;
		if (i->arch != AUDIT_ARCH_X86_64 || nr >= RELAY_NR_SYSCALLS) {
			k->entry[slot].tid = 0;
			return -1;
		}
		k->entry[slot].tid = m->tid;
		k->entry[slot].nr = (int32_t)nr;
		if (!k->policy_on || policy_bit(p->sync_enter, nr))
			return -1;
		return policy_bit(p->want_exit, nr) ? PTRACE_SYSCALL : step;
	case PTRACE_SYSCALL_INFO_EXIT:
		if (k->entry[slot].tid != m->tid)
			return -1;
		k->entry[slot].tid = 0;
		if (!k->policy_on || policy_bit(p->sync_exit, (unsigned long)k->entry[slot].nr))
			return -1;
		return step;
	default:
		return -1;
	}
}

/* Send the resumed stops not sent yet. */
static void flush(struct uks_tracee_keeper *k)
{
	if (!k->nr_pend || k->consumer < 0)
		return;
	if (send_all(k->consumer, k->pend, (size_t)k->nr_pend * sizeof(k->pend[0])))
		lose(k);
	k->nr_pend = 0;
}

static void fill_regs(struct relay_stop *m, pid_t tid)
{
	struct user_regs_struct regs;

	memset(&regs, 0, sizeof(regs));
	m->regs_ret = ptrace(PTRACE_GETREGS, tid, 0, &regs) ? -errno : 0;
	m->orig_rax = regs.orig_rax;
	m->rdi = regs.rdi;
	m->rbp = regs.rbp;
}

/* What the session will want from this stop, read while it lasts. */
static void fill_stop(struct relay_stop *m, pid_t tid, int status)
{
	int sig = WSTOPSIG(status), ev = status >> 16;

	memset(m, 0, sizeof(*m));
	m->type = RELAY_STOP;
	m->tid = tid;
	m->status = status;
	m->info_ret = m->eventmsg_ret = m->regs_ret = -ENODATA;
	if (!WIFSTOPPED(status))
		return;
	if (sig == (SIGTRAP | 0x80) || (sig == SIGTRAP && ev == PTRACE_EVENT_SECCOMP)) {
		long n = ptrace(PTRACE_GET_SYSCALL_INFO, tid, sizeof(m->info), &m->info);

		m->info_ret = n < 0 ? -errno : (int32_t)n;
	}
	if (sig == SIGTRAP && (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
			       ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_EXEC)) {
		unsigned long msg = 0;

		m->eventmsg_ret = ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) ? -errno : 0;
		m->eventmsg = msg;
	}
	if (sig == SIGTRAP && (ev == PTRACE_EVENT_FORK || ev == PTRACE_EVENT_VFORK ||
			       ev == PTRACE_EVENT_CLONE))
		fill_regs(m, tid);
}

/* One waitpid() result: up to the session, or handled here. */
static void on_wait(struct uks_tracee_keeper *k, pid_t tid, int status)
{
	struct relay_stop m;
	struct relay_cmd c;
	int req;

	if (!WIFSTOPPED(status)) {
		untrack(k, tid);
		if (k->entry[(unsigned int)tid % KEEPER_ENTRIES].tid == tid)
			k->entry[(unsigned int)tid % KEEPER_ENTRIES].tid = 0;
		flush(k);
		if (k->consumer >= 0) {
			fill_stop(&m, tid, status);
			if (send_all(k->consumer, &m, sizeof(m)))
				lose(k);
		}
		if (tid == k->root)
			front_say(k, UKS_TRACEE_KEEPER_DONE);
		return;
	}
	track(k, tid);
	if (k->consumer >= 0) {
		fill_stop(&m, tid, status);
		req = k->releasing ? -1 : fast_request(k, &m);
		if (req >= 0 && !ptrace((enum __ptrace_request)req, tid, 0, 0)) {
			m.flags |= RELAY_RESUMED;
			k->pend[k->nr_pend++] = m;
			if (k->nr_pend == KEEPER_BATCH)
				flush(k);
			return;
		}
		flush(k);
		/* a system-call stop that waits: its events may unwind its stack */
		if (m.info_ret > 0 && m.regs_ret)
			fill_regs(&m, tid);
		if (k->consumer >= 0 && send_all(k->consumer, &m, sizeof(m)))
			lose(k);
		/* Exactly one resume per stop; a half-sent one is not made. */
		while (k->consumer >= 0) {
			if (read_cmd(k, &c) || c.type == RELAY_RELEASE) {
				lose(k);
				break;
			}
			if (c.type != RELAY_RESUME)
				continue;
			if (c.req == PTRACE_DETACH)
				untrack(k, c.tid);
			ptrace((enum __ptrace_request)c.req, c.tid, 0, (long)c.data);
			if (c.tid == tid)
				return;
		}
	}
	pass_through(k, tid, status);
}

/* Messages while no stop is pending: RELEASE or a policy; all that came. */
static void on_consumer(struct uks_tracee_keeper *k)
{
	struct pollfd p = { k->consumer, POLLIN, 0 };
	struct relay_cmd c;

	do {
		if (read_cmd(k, &c) || c.type == RELAY_RELEASE) {
			lose(k);
			return;
		}
		if (c.type == RELAY_RESUME)
			ptrace((enum __ptrace_request)c.req, c.tid, 0, (long)c.data);
	} while (poll(&p, 1, 0) > 0);
}

/* Seize and interrupt the threads of @pid not yet seized; how many were new. */
static int seize_threads(struct uks_tracee_keeper *k, pid_t pid, int *err)
{
	char path[64];
	struct dirent *de;
	int added = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d) {
		*err = errno == ENOENT ? -ESRCH : -errno;
		return 0;
	}
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);

		bool known = false;

		for (int i = 0; i < k->nr_tids; i++)
			known |= k->tids[i] == tid;
		if (tid <= 0 || known)
			continue;
		if (ptrace(PTRACE_SEIZE, tid, 0, TRACEE_PTRACE_OPTS)) {
			/* gone, or auto-attached through a clone already */
			if (tid == pid && errno != ESRCH)
				*err = -errno;
			continue;
		}
		ptrace(PTRACE_INTERRUPT, tid, 0, 0);
		track(k, tid);
		added++;
	}
	closedir(d);
	return added;
}

/* Out of the terminal's way: own session, no stdio, deaf to ^C and kill. */
static void become_keeper(void)
{
	static const int ignored[] = { SIGINT, SIGQUIT, SIGTERM, SIGHUP, SIGPIPE, SIGTSTP,
				       SIGTTIN, SIGTTOU, SIGUSR1, SIGUSR2 };
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);

	setsid();
	for (size_t i = 0; i < ARRAY_SIZE(ignored); i++)
		signal(ignored[i], SIG_IGN);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
}

/* A keeper's state, allocated before the fork that starts it. */
struct uks_tracee_keeper *__uks_tracee_keeper_alloc(unsigned int flags)
{
	struct uks_tracee_keeper *k = uks_kzalloc(sizeof(*k));

	if (!k)
		return NULL;
	k->filtered = flags & UKS_TRACEE_KEEP_FILTERED;
	k->consumer = k->front = -1;
	k->cap_tids = 16;
	k->tids = uks_kcalloc((size_t)k->cap_tids, sizeof(*k->tids));
	if (!k->tids) {
		uks_kfree(k);
		return NULL;
	}
	return k;
}

void __uks_tracee_keeper_free(struct uks_tracee_keeper *k)
{
	uks_kfree(k->tids);
	uks_kfree(k);
}

/* Become a keeper and seize every thread of @pid; 0 or -errno. */
int __uks_tracee_keeper_seize(struct uks_tracee_keeper *k, pid_t pid)
{
	int err = 0, rounds = 0;

	become_keeper();
	k->root = pid;
	/* re-read until no new thread shows up: threads may be starting */
	k->seizing = true;
	while (seize_threads(k, pid, &err) > 0 && !err && ++rounds < 100)
		;
	k->seizing = false;
	if (k->filtered)
		k->nr_tids = 0;
	return err;
}

/**
 * uks_tracee_keeper_create - make this process a keeper and attach to @pid
 * @pid:	the process; every thread is seized and interrupted
 * @flags:	UKS_TRACEE_KEEP_FILTERED when the process runs, or is about
 *		to install, a filter from uks_tracee_filter()
 * @out:	the keeper, for uks_tracee_keeper_run()
 *
 * For a process forked for the purpose: it moves to a session of its own,
 * ignores SIGINT, SIGTERM, SIGHUP, SIGPIPE and the job-control signals,
 * and gets /dev/null as stdin, stdout and stderr.  The tracees are seized
 * without PTRACE_O_EXITKILL.  Returns 0, -ESRCH, -EPERM (the kernel's
 * ptrace rule) or -ENOMEM.
 */
UKS_EXPORT int uks_tracee_keeper_create(pid_t pid, unsigned int flags,
					struct uks_tracee_keeper **out)
{
	struct uks_tracee_keeper *k;
	int err;

	*out = NULL;
	if (pid <= 0 || (flags & ~UKS_TRACEE_KEEP_FILTERED))
		return -EINVAL;
	k = __uks_tracee_keeper_alloc(flags);
	if (!k)
		return -ENOMEM;
	err = __uks_tracee_keeper_seize(k, pid);
	if (err) {
		__uks_tracee_keeper_free(k);
		return err;
	}
	*out = k;
	return 0;
}

/* SIGCHLD does not queue: one read empties the signalfd. */
static void sigfd_clear(int fd)
{
	struct signalfd_siginfo si;

	if (read(fd, &si, sizeof(si)) != sizeof(si))
		return;		/* nothing pending: poll() woke for another fd */
}

/**
 * uks_tracee_keeper_run - relay the tracees' stops until they are all gone
 * @k:		keeper (freed on return)
 * @consumer_fd: the session's stream socket (closed on return)
 * @front_fd:	where UKS_TRACEE_KEEPER_LOST and _DONE are written, or -1
 *
 * Returns 0 once no tracee is left.
 */
UKS_EXPORT int uks_tracee_keeper_run(struct uks_tracee_keeper *k, int consumer_fd, int front_fd)
{
	sigset_t chld;
	unsigned int busy = 0;
	int sigfd, ready;

	k->consumer = consumer_fd;
	k->front = front_fd;
	/* SIGCHLD (sent to a tracer for every stop and exit) wakes poll() */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	sigfd = signalfd(-1, &chld, SFD_NONBLOCK | SFD_CLOEXEC);
	for (;;) {
		struct pollfd p[3] = {
			{ sigfd, POLLIN, 0 },
			{ k->consumer, POLLIN, 0 },
			{ k->front, 0, 0 },	/* hang-up only */
		};
		int status;
		pid_t pid = waitpid(-1, &status, __WALL | WNOHANG);

		if (pid > 0) {
			on_wait(k, pid, status);
			/* a tracee that stops all the time must not hide the fds */
			if (++busy % 16)
				continue;
		} else if (pid < 0 && errno == EINTR) {
			continue;
		} else if (pid < 0) {
			break;		/* ECHILD: every tracee is gone */
		}
		if (sigfd < 0)
			p[0].fd = -1;
		ready = poll(p, 3, pid > 0 ? 0 : k->nr_pend ? KEEPER_FLUSH_MS : sigfd < 0 ? 100 : -1);
		if (ready < 0)
			continue;
		if (ready == 0 && pid <= 0)
			flush(k);	/* the tracees are quiet: let the session see */
		if (sigfd >= 0 && (p[0].revents & POLLIN))
			sigfd_clear(sigfd);
		if (k->consumer >= 0 && p[1].revents)
			on_consumer(k);
		if (k->front >= 0 && p[2].revents) {
			close(k->front);
			k->front = -1;
			if (!k->filtered)
				lose(k);	/* uks trace -p ended: let them go */
		}
	}
	if (sigfd >= 0)
		close(sigfd);
	if (k->consumer >= 0)
		close(k->consumer);
	if (k->front >= 0)
		close(k->front);
	__uks_tracee_keeper_free(k);
	return 0;
}

/**
 * __uks_tracee_keeper_spawn - the keeper side of a session's spawn: start the
 * command as our child, hold it, and relay to the session at @fd
 *
 * @k:		the keeper's state (from __uks_tracee_keeper_alloc(), before the fork)
 *
 * Runs in the keeper process (forked by the session); the command is
 * forked before the keeper leaves the caller's session, so it keeps the
 * terminal's process group.  Sends the command's pid (or -errno) as an
 * int, then relays.  Never returns.
 */
void __uks_tracee_keeper_spawn(struct uks_tracee_keeper *k, int fd, const char *path,
			       char *const argv[], const struct sock_fprog *prog, bool step)
{
	extern char **environ;
	int p[2], msg;
	pid_t child;

	if (pipe2(p, O_CLOEXEC))
		goto fail;
	child = fork();
	if (child < 0)
		goto fail;
	if (child == 0) {
		char c;
		ssize_t n;

		close(p[1]);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(127);
		close(p[0]);
		if (prog && __uks_tracee_seccomp_install(prog))
			_exit(126);
		execve(path, argv, environ);
		_exit(errno == ENOENT ? 127 : 126);	/* as a shell */
	}
	close(p[0]);
	become_keeper();
	k->root = child;
	if (ptrace(PTRACE_SEIZE, child, 0, TRACEE_PTRACE_OPTS)) {
		msg = -errno;
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		send_all(fd, &msg, sizeof(msg));
		_exit(1);
	}
	/* Stepping needs a first stop to start PTRACE_SYSCALL from. */
	if (step)
		ptrace(PTRACE_INTERRUPT, child, 0, 0);
	track(k, child);
	msg = child;
	if (send_all(fd, &msg, sizeof(msg)) || write(p[1], "g", 1) != 1) {
		kill(child, SIGKILL);
		_exit(1);
	}
	close(p[1]);
	uks_tracee_keeper_run(k, fd, -1);
	_exit(0);
fail:
	msg = -errno;
	send_all(fd, &msg, sizeof(msg));
	_exit(1);
}
