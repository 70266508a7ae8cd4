// SPDX-License-Identifier: MIT
/*
 * The self primitive's pause handshake (see self.c's top): what keeps a
 * fork()'s child from copying the program with a page the monitor took
 * away, which the child, with no monitor to give it back, would read as
 * zeros (its stack first: a return to address 0).
 *
 * A pause (the fork handler, or the agent around an mremap()), with the
 * thread's signals blocked, counts itself in `self_fork.pauses` before it
 * looks at anything shared, then looks for the running monitor,
 * `self_fork.active`; if there is one it counts in that monitor's
 * `forking` too, wakes it and waits for its window to close.  A monitor
 * opens a window (takes pages) only after it has published itself in
 * `active`, set `window` and then seen `pauses` at 0, and stops taking
 * pages as soon as it sees a pause.  All of these are sequentially
 * consistent, so either a pause sees the monitor (and waits for its
 * window), or the monitor sees the pause (and takes nothing until it
 * ends).  The count of pauses is for a monitor that starts while a fork
 * is already past its look-up: it used to open its first window while
 * that fork copied the address space.  The monitor thread's own pause (a
 * callback that forks) closes the window itself.
 *
 * A monitor's cleanup hides it (`active` = NULL) and then waits for the
 * pauses that still hold it: `entering` covers the moment between a
 * pause's look-up and its count in `forking`.  So a thread must not stop
 * a monitor while it holds a pause (say, from another fork handler of
 * its own that runs before ours resumes).
 *
 * fork()'s handlers are registered by the first monitor: glibc runs a
 * fork's prepare and parent handlers under one lock, so a registration
 * never lands between a pause and its resume.  _Fork() and a raw clone()
 * run no handlers and are not covered.
 *
 * Lock order: none; atomics and the monitor's futex only.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/futex.h>

#include "core/compiler.h"
#include "core/log.h"
#include "damon/self/self.h"

/*
 * The monitor reads `pauses` inside its window, where it must not touch a
 * page it may have taken: __uks_damon_self_fork_vars() gives self_init()
 * their page to leave out (a program linking libuks.a has them in its own
 * .bss, which is monitored).
 */
static struct {
	struct self_state *active;	/* one self context per process */
	unsigned int pauses;		/* in progress, with a monitor or not */
	unsigned int entering;		/* between reading active and counting in */
} self_fork;
static pthread_once_t self_atfork_once = PTHREAD_ONCE_INIT;
static __thread unsigned int self_pause_depth;	/* this thread's pauses, nested */
static __thread struct self_state *self_paused;	/* and in this monitor's forking */

/**
 * __uks_damon_self_pause - give every taken page back and take none until
 * __uks_damon_self_resume(): before fork(), and around calls that need
 * whole mappings (mremap() of a range that a per-page registration split).
 *
 * Any thread may call it; it waits for the monitor thread (futex), which
 * keeps serving faults meanwhile, also the caller's own.
 */
void __uks_damon_self_pause(void)
{
	struct self_state *st;
	sigset_t all, old;
	uint64_t one = 1;

	/*
	 * No signal handler of this thread may fork (or pause) halfway: it
	 * would find the depth raised and go on before the window closed.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (self_pause_depth++)
		goto out;	/* nested: the outer pause holds the monitor */
	__atomic_add_fetch(&self_fork.pauses, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&self_fork.entering, 1, __ATOMIC_SEQ_CST);
	st = __atomic_load_n(&self_fork.active, __ATOMIC_SEQ_CST);
	if (!st || st->tid == (pid_t)syscall(SYS_gettid)) {
		__atomic_sub_fetch(&self_fork.entering, 1, __ATOMIC_SEQ_CST);
		/* the monitor itself: an after_sampling callback runs in its window */
		if (st && __atomic_load_n(&st->window, __ATOMIC_SEQ_CST))
			__uks_damon_self_close_window(st);
		goto out;
	}
	__atomic_add_fetch(&st->forking, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&self_fork.entering, 1, __ATOMIC_SEQ_CST);
	self_paused = st;	/* resume() leaves this one, even if the monitor ended since */
	/*
	 * Wake the monitor.  Should the program have closed the eventfd (a
	 * raw system call), the monitor still sees the pause when its
	 * sampling interval ends, and closes the window then.
	 */
	if (write(st->evfd, &one, sizeof(one)) < 0)
		pr_debug("damon self: pause without the eventfd: %s", strerror(errno));
	while (__atomic_load_n(&st->window, __ATOMIC_SEQ_CST))
		syscall(SYS_futex, &st->window, FUTEX_WAIT, 1, NULL, NULL, 0);
out:
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/** __uks_damon_self_resume - end a __uks_damon_self_pause() */
void __uks_damon_self_resume(void)
{
	struct self_state *st = self_paused;

	if (!self_pause_depth || --self_pause_depth)
		return;		/* unpaired, or an inner pause's */
	/*
	 * Not self_fork.active: the monitor may have ended meanwhile (a
	 * callback stopped it), and its cleanup clears that first and then
	 * waits for this very count to drop.
	 */
	self_paused = NULL;
	if (st)
		__atomic_sub_fetch(&st->forking, 1, __ATOMIC_SEQ_CST);
	__atomic_sub_fetch(&self_fork.pauses, 1, __ATOMIC_SEQ_CST);
}

/* The child has no monitor thread: it must not use the parent's uffd. */
static void self_postfork_child(void)
{
	struct self_state *st = self_fork.active;

	/* the child has no monitor to resume, and none of the other pausers */
	self_paused = NULL;
	self_pause_depth = 0;
	__atomic_store_n(&self_fork.pauses, 0, __ATOMIC_SEQ_CST);
	__atomic_store_n(&self_fork.entering, 0, __ATOMIC_SEQ_CST);
	if (!st)
		return;
	/* the child's table is a copy of the forking thread's, the program's */
	__uks_damon_fd_close(st->evfd);
	if (!st->own_table) {
		__uks_damon_fd_close(st->uffd);
		__uks_damon_fd_close(st->pagemap_fd);
		__uks_damon_fd_close(st->mem_fd);
	}
	self_fork.active = NULL;
}

static void self_register_atfork(void)
{
	pthread_atfork(__uks_damon_self_pause, __uks_damon_self_resume, self_postfork_child);
}

/**
 * __uks_damon_self_fork_vars - where the pause counts are
 * @start:	set to their first byte
 * @end:	set past their last
 */
void __uks_damon_self_fork_vars(unsigned long *start, unsigned long *end)
{
	*start = (unsigned long)&self_fork;
	*end = (unsigned long)(&self_fork + 1);
}

/**
 * __uks_damon_self_claim - the fork handlers registered, and no monitor yet
 *
 * Return: 0, or -EBUSY while another self context runs.
 */
int __uks_damon_self_claim(void)
{
	pthread_once(&self_atfork_once, self_register_atfork);
	return __atomic_load_n(&self_fork.active, __ATOMIC_ACQUIRE) ? -EBUSY : 0;
}

/**
 * __uks_damon_self_publish - make @st the process's monitor, for the pauses
 * @st:	the new monitor's state, before it takes any page
 *
 * Return: 0, or -EBUSY when another monitor got there first.
 */
int __uks_damon_self_publish(struct self_state *st)
{
	struct self_state *none = NULL;

	return __atomic_compare_exchange_n(&self_fork.active, &none, st, false, __ATOMIC_SEQ_CST,
					   __ATOMIC_SEQ_CST) ? 0 : -EBUSY;
}

/**
 * __uks_damon_self_pausing - may the monitor open a window?
 *
 * Call after setting st->window: then a pause that this misses waits
 * for the window to close.  Return: whether a pause is in progress.
 */
bool __uks_damon_self_pausing(void)
{
	return __atomic_load_n(&self_fork.pauses, __ATOMIC_SEQ_CST) != 0;
}

/**
 * __uks_damon_self_unpublish - hide @st from new pauses and wait for
 * those that hold it (its window closed already), before it is freed
 * @st:	the ending monitor's state
 */
void __uks_damon_self_unpublish(struct self_state *st)
{
	__atomic_store_n(&self_fork.active, NULL, __ATOMIC_SEQ_CST);
	/*
	 * Wait for the pauses that read self_fork.active before it was
	 * cleared to count in, then for them to leave (freeing st under one
	 * crashed a forking test in the guest).  A pause counted in
	 * `entering` after this read sees NULL.
	 */
	while (__atomic_load_n(&self_fork.entering, __ATOMIC_SEQ_CST))
		usleep(1000);
	while (__atomic_load_n(&st->forking, __ATOMIC_SEQ_CST))
		usleep(1000);
}
