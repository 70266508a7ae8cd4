// SPDX-License-Identifier: MIT
/*
 * The session's side of a keeper (keeper.c, relay.h): starting one for a
 * spawn or an attach (UKS_TRACEE_KEEPER), taking its stops instead of
 * waitpid(), and answering loop.c's ptrace() calls from them.  The keeper
 * is told which system-call stops it may resume itself (relay.h) whenever
 * the set of probes on the tracepoints changed.
 *
 * Lock order: none (one thread owns the session).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/tracee.h>

#include "trace/writer_sync.h"
#include "tracee/events.h"
#include "tracee/internal.h"

static int read_int(int fd, int *v)
{
	size_t got = 0;

	while (got < sizeof(*v)) {
		ssize_t n = read(fd, (char *)v + got, sizeof(*v) - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		got += (size_t)n;
	}
	return 0;
}

/*
 * Fork a keeper; @start runs in it (and never returns) with the keeper's
 * end of the socket and @arg, and sends a pid or -errno first.  The keeper
 * is allocated here, before the fork: the child of a threaded caller
 * should not allocate.
 */
static int start_keeper(struct uks_tracee_session *s,
			void (*start)(int fd, struct uks_tracee_keeper *k, void *arg), void *arg,
			unsigned int kflags, pid_t *first)
{
	struct uks_tracee_keeper *k = __uks_tracee_keeper_alloc(kflags);
	int sv[2], msg, ret;
	pid_t kp;

	if (!k)
		return -ENOMEM;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv)) {
		ret = -errno;
		__uks_tracee_keeper_free(k);
		return ret;
	}
	kp = fork();
	if (kp < 0) {
		ret = -errno;
		close(sv[0]);
		close(sv[1]);
		__uks_tracee_keeper_free(k);
		return ret;
	}
	if (kp == 0) {
		close(sv[0]);
		start(sv[1], k, arg);
		_exit(1);
	}
	close(sv[1]);
	__uks_tracee_keeper_free(k);
	ret = read_int(sv[0], &msg);
	if (!ret && msg <= 0)
		ret = msg ? msg : -EPROTO;
	if (ret) {
		close(sv[0]);
		while (waitpid(kp, NULL, 0) < 0 && errno == EINTR)
			;
		return ret;
	}
	s->relayed = true;
	s->relay_step = !(kflags & UKS_TRACEE_KEEP_FILTERED);
	__uks_tracee_relay_open(s, sv[0]);
	s->keeper = kp;
	*first = (pid_t)msg;
	return 0;
}

struct spawn_args {
	const char *path;
	char *const *argv;
	const struct sock_fprog *prog;
	bool step;
};

static void keeper_spawn(int fd, struct uks_tracee_keeper *k, void *arg)
{
	struct spawn_args *a = arg;

	__uks_tracee_keeper_spawn(k, fd, a->path, a->argv, a->prog, a->step);
}

static void keeper_attach(int fd, struct uks_tracee_keeper *k, void *arg)
{
	pid_t pid = *(pid_t *)arg;
	int ret = __uks_tracee_keeper_seize(k, pid);
	int msg = ret ? ret : pid;

	if (write(fd, &msg, sizeof(msg)) != sizeof(msg) || ret)
		_exit(1);
	uks_tracee_keeper_run(k, fd, -1);
	_exit(0);
}

/* Spawn @path through a keeper; @child is set to the command's pid. */
int __uks_tracee_start_kept(struct uks_tracee_session *s, const char *path, char *const argv[],
			    const struct sock_fprog *prog, bool step, pid_t *child)
{
	struct spawn_args sa = { path, argv, prog, step };

	return start_keeper(s, keeper_spawn, &sa, step ? 0 : UKS_TRACEE_KEEP_FILTERED, child);
}

/* Attach to @pid through a keeper (stepped unless it installs our filter). */
int __uks_tracee_attach_kept(struct uks_tracee_session *s, pid_t pid, bool step)
{
	pid_t first;

	return start_keeper(s, keeper_attach, &pid, step ? 0 : UKS_TRACEE_KEEP_FILTERED, &first);
}

static void policy_set(uint64_t *map, long nr)
{
	map[nr / 64] |= 1ull << (nr % 64);
}

/*
 * Which stops loop.c needs to see stopped, and which exits it wants; see
 * syscall_enter() and syscall_exit() there.  Execve's filename and the
 * prctl(PR_SET_NAME) rename are read from the tracee; eprobes may read its
 * memory and stacktrace triggers its stack.  Everything else is written from the message.
 */
static void policy_make(struct uks_tracee_session *s, struct relay_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->step = s->relay_step;
	__uks_tracee_syscall_read(p->sync_enter, p->sync_exit, RELAY_NR_SYSCALLS);
	policy_set(p->sync_enter, SYS_execve);
	policy_set(p->sync_enter, SYS_execveat);
	policy_set(p->sync_exit, SYS_prctl);
	if (__uks_tracee_sched_on(UKS_TRACEE_TASK_RENAME))
		policy_set(p->sync_enter, SYS_prctl);
	for (long nr = 0; nr < RELAY_NR_SYSCALLS; nr++)
		if (__uks_tracee_syscall_exit_on(nr))
			policy_set(p->want_exit, nr);
}

/* A new policy when the probes changed since the last one (or none yet). */
static void policy_update(struct uks_tracee_session *s)
{
	unsigned long gen = __uks_tracepoint_generation();
	struct {
		struct relay_cmd c;
		struct relay_policy p;
	} msg = { { RELAY_POLICY, 0, 0, 0 }, { 0 } };

	if (s->relay_fd < 0 || (s->policy_sent && gen == s->policy_gen))
		return;
	policy_make(s, &msg.p);
	msg.p.gen = gen;
	if (send(s->relay_fd, &msg, sizeof(msg), MSG_NOSIGNAL) != sizeof(msg))
		return;		/* the keeper is gone: its EOF is read next */
	s->policy_sent = true;
	s->policy_gen = gen;
}

/*
 * Sessions with a keeper, for the writers that changed the probes: such a
 * write wakes each session (@wake_fd), which sends its keeper a policy at
 * once, and returns when every keeper has acknowledged one made at the
 * write's generation or later.  A keeper that does not answer (stopped by
 * a debugger, say) must not hang every writer: the wait is bounded.
 */
#define SYNC_WAIT_MS	2000

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sync_cond;
static pthread_once_t sync_once = PTHREAD_ONCE_INIT;
static struct uks_tracee_session *sync_list;

static bool gen_before(unsigned long a, unsigned long b)
{
	return (long)(a - b) < 0;
}

static bool behind(const struct uks_tracee_session *s, unsigned long gen)
{
	return !s->acked || gen_before(s->acked_gen, gen);
}

static void relay_sync(unsigned long gen)
{
	const uint64_t one = 1;
	struct timespec until;
	bool wait;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += SYNC_WAIT_MS / 1000;
	until.tv_nsec += SYNC_WAIT_MS % 1000 * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&sync_lock);
	for (struct uks_tracee_session *s = sync_list; s; s = s->sync_next)
		if (behind(s, gen) && !pthread_equal(s->owner, pthread_self()) &&
		    write(s->wake_fd, &one, sizeof(one)) < 0)
			continue;	/* the counter is full: it is woken already */
	do {
		wait = false;
		for (struct uks_tracee_session *s = sync_list; s; s = s->sync_next)
			wait |= behind(s, gen) && !pthread_equal(s->owner, pthread_self());
	} while (wait && pthread_cond_timedwait(&sync_cond, &sync_lock, &until) == 0);
	pthread_mutex_unlock(&sync_lock);
}

static void sync_init(void)
{
	pthread_condattr_t a;

	pthread_condattr_init(&a);
	pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	pthread_cond_init(&sync_cond, &a);
	pthread_condattr_destroy(&a);
	__uks_tracepoint_set_sync(relay_sync);
}

/* @s talks to its keeper on @fd from now on, in this thread. */
void __uks_tracee_relay_open(struct uks_tracee_session *s, int fd)
{
	s->relay_fd = fd;
	s->owner = pthread_self();
	s->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (s->wake_fd < 0)
		return;		/* the policy follows the next stop only */
	pthread_once(&sync_once, sync_init);
	pthread_mutex_lock(&sync_lock);
	s->sync_next = sync_list;
	sync_list = s;
	pthread_mutex_unlock(&sync_lock);
}

/* The keeper is gone or let go: no writer waits for it any more. */
void __uks_tracee_relay_close(struct uks_tracee_session *s)
{
	if (s->relay_fd < 0)
		return;
	close(s->relay_fd);
	s->relay_fd = -1;
	if (s->wake_fd < 0)
		return;
	pthread_mutex_lock(&sync_lock);
	for (struct uks_tracee_session **p = &sync_list; *p; p = &(*p)->sync_next) {
		if (*p == s) {
			*p = s->sync_next;
			break;
		}
	}
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_lock);
	close(s->wake_fd);
	s->wake_fd = -1;
}

/* The keeper's acknowledgement of a policy. */
static void policy_acked(struct uks_tracee_session *s, unsigned long gen)
{
	pthread_mutex_lock(&sync_lock);
	if (!s->acked || gen_before(s->acked_gen, gen)) {
		s->acked = true;
		s->acked_gen = gen;
	}
	pthread_cond_broadcast(&sync_cond);
	pthread_mutex_unlock(&sync_lock);
}

/*
 * Until @relay_fd has bytes: a wake from a writer sends a policy first.
 * 1 when readable, 0 when not (@hang false), -EINTR on a signal.
 */
static int relay_poll(struct uks_tracee_session *s, bool hang)
{
	struct pollfd p[2] = { { s->relay_fd, POLLIN, 0 }, { s->wake_fd, POLLIN, 0 } };
	uint64_t v;

	for (;;) {
		int n = poll(p, s->wake_fd >= 0 ? 2 : 1, hang ? -1 : 0);

		if (n < 0 && errno == EINTR)
			return -EINTR;
		if (n < 0)
			return 1;	/* let read() report it */
		if (s->wake_fd >= 0 && (p[1].revents & POLLIN)) {
			if (read(s->wake_fd, &v, sizeof(v)) < 0)
				v = 0;	/* taken by an earlier read: nothing to do */
			policy_update(s);
		}
		if (p[0].revents)
			return 1;
		if (!hang && !(p[1].revents & POLLIN))
			return 0;
	}
}

/*
 * The next stop from the keeper.  EOF: the keeper exited, every tracee is
 * gone (-ECHILD).  A signal before a message starts gives -EINTR.
 */
int __uks_tracee_relay_wait(struct uks_tracee_session *s, int flags)
{
	struct relay_stop *m = &s->cur;
	int ret;

next:
	if (s->relay_fd < 0)
		return -ECHILD;
	if (s->rlen < sizeof(*m)) {
		ret = relay_poll(s, !(flags & UKS_TRACEE_NOHANG) || s->rlen);
		if (ret <= 0 && !s->rlen)
			return ret;
	}
	while (s->rlen < sizeof(*m)) {
		ssize_t n = read(s->relay_fd, s->rbuf + s->rlen, sizeof(s->rbuf) - s->rlen);

		if (n < 0 && errno == EINTR && !s->rlen)
			return -EINTR;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			__uks_tracee_relay_close(s);
			s->rlen = 0;
			m->tid = 0;
			return -ECHILD;
		}
		s->rlen += (size_t)n;
	}
	memcpy(m, s->rbuf, sizeof(*m));
	s->rlen -= sizeof(*m);
	memmove(s->rbuf, s->rbuf + sizeof(*m), s->rlen);
	if (m->type == RELAY_POLICY && m->tid == 0) {
		policy_acked(s, (unsigned long)m->eventmsg);
		goto next;
	}
	if (m->type != RELAY_STOP || m->tid <= 0)
		return -EPROTO;
	policy_update(s);
	if (!(m->flags & RELAY_RESUMED))
		return __uks_tracee_handle(s, m->tid, m->status);
	s->stats.resumed_early++;
	__uks_trace_writer_running(true);
	ret = __uks_tracee_handle(s, m->tid, m->status);
	__uks_trace_writer_running(false);
	return ret;
}

/* ptrace() for a stop the keeper sent: its answers, or its resume. */
static long relay_ptrace(struct uks_tracee_session *s, int req, pid_t tid, void *addr, void *data)
{
	const struct relay_stop *m = &s->cur;
	struct relay_cmd c = { RELAY_RESUME, tid, req, (int)(long)data };
	int err = ESRCH;

	switch (req) {
	case PTRACE_GET_SYSCALL_INFO:
		if (tid != m->tid || m->info_ret <= 0)
			break;
		memcpy(data, &m->info, (size_t)addr < (size_t)m->info_ret ? (size_t)addr
									     : (size_t)m->info_ret);
		return m->info_ret;
	case PTRACE_GETEVENTMSG:
		if (tid != m->tid || m->eventmsg_ret)
			break;
		*(unsigned long *)data = (unsigned long)m->eventmsg;
		return 0;
	case PTRACE_GETREGS: {
		/* only what the clone flags and an unwinder read */
		struct user_regs_struct *regs = data;

		if (tid != m->tid || m->regs_ret)
			break;
		memset(regs, 0, sizeof(*regs));
		regs->orig_rax = m->orig_rax;
		regs->rdi = m->rdi;
		regs->rbp = m->rbp;
		return 0;
	}
	case PTRACE_CONT:
	case PTRACE_SYSCALL:
	case PTRACE_LISTEN:
	case PTRACE_DETACH:
		if (tid == m->tid && (m->flags & RELAY_RESUMED))
			return 0;	/* the keeper resumed it already */
		if (s->relay_fd >= 0 && send(s->relay_fd, &c, sizeof(c), MSG_NOSIGNAL) == sizeof(c))
			return 0;
		break;
	default:
		err = EIO;
		break;
	}
	errno = err;
	return -1;
}

/** __uks_tracee_ptrace - ptrace() of the session's tracees: direct or through the keeper */
long __uks_tracee_ptrace(struct uks_tracee_session *s, int req, pid_t tid, void *addr, void *data)
{
	if (s->relayed)
		return relay_ptrace(s, req, tid, addr, data);
	return ptrace((enum __ptrace_request)req, tid, addr, data);
}

