// SPDX-License-Identifier: MIT
/*
 * The file descriptors DAMON keeps open inside a monitored program: the
 * self primitive's userfaultfd, eventfd and /proc files, and the agent's
 * output (libuks-damon-agent.so).
 *
 * The program does not know them.  A daemon that closes every fd above 2
 * at start, or a shell's `exec 3>file`, would cut the monitor off: a
 * closed userfaultfd even hands the program zero pages where its taken
 * pages were, and a reused output fd gets trace lines written into the
 * program's own file.  So each is moved far above the fds programs use
 * (HIDDEN_FD_BASE, as the uffd already was), and recorded here; the
 * agent's close(), close_range() and closefrom() leave recorded fds open
 * (agent.c), as if they were not the program's to close, which they are
 * not.  Every close of a recorded fd forgets it first, so a number the
 * kernel hands out again is the program's.
 *
 * Lock order: none (a fixed table of atomics).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "damon/damon.h"

#define HIDDEN_FD_BASE	512
#define MAX_HIDDEN_FDS	32

static _Atomic int hidden[MAX_HIDDEN_FDS] = { [0 ... MAX_HIDDEN_FDS - 1] = -1 };

/**
 * __uks_damon_fd_move_high - move @fd to HIDDEN_FD_BASE or above
 * @fd: a descriptor of ours; CLOEXEC or not, it stays so
 *
 * Return: the descriptor to use from now on (@fd itself when no higher one
 * is free under RLIMIT_NOFILE, or when @fd is negative).
 */
int __uks_damon_fd_move_high(int fd)
{
	int flags, hi;

	if (fd < 0 || fd >= HIDDEN_FD_BASE)
		return fd;
	flags = fcntl(fd, F_GETFD);
	hi = fcntl(fd, (flags > 0 && (flags & FD_CLOEXEC)) ? F_DUPFD_CLOEXEC : F_DUPFD,
		   HIDDEN_FD_BASE);
	if (hi < 0)
		return fd;
	close(fd);
	return hi;
}

/**
 * __uks_damon_fd_hide - move @fd out of the program's way and record it
 * @fd: a descriptor of ours, in the program's fd table
 *
 * Return: the descriptor to use from now on (see __uks_damon_fd_move_high()).
 */
int __uks_damon_fd_hide(int fd)
{
	fd = __uks_damon_fd_move_high(fd);
	if (fd < 0)
		return fd;
	for (int i = 0; i < MAX_HIDDEN_FDS; i++) {
		int empty = -1;

		if (atomic_compare_exchange_strong(&hidden[i], &empty, fd))
			break;
	}
	return fd;
}

/* Forget @fd (before closing it); nothing if it was not recorded. */
void __uks_damon_fd_unhide(int fd)
{
	if (fd < 0)
		return;
	for (int i = 0; i < MAX_HIDDEN_FDS; i++) {
		int was = fd;

		if (atomic_compare_exchange_strong(&hidden[i], &was, -1))
			return;
	}
}

/* Is @fd one of ours? */
bool __uks_damon_fd_hidden(int fd)
{
	if (fd < 0)
		return false;
	for (int i = 0; i < MAX_HIDDEN_FDS; i++)
		if (atomic_load_explicit(&hidden[i], memory_order_relaxed) == fd)
			return true;
	return false;
}

/* The lowest recorded fd at or above @from, or -1. */
int __uks_damon_fd_next_hidden(int from)
{
	int best = -1;

	for (int i = 0; i < MAX_HIDDEN_FDS; i++) {
		int fd = atomic_load_explicit(&hidden[i], memory_order_relaxed);

		if (fd >= from && (best < 0 || fd < best))
			best = fd;
	}
	return best;
}

/**
 * __uks_damon_close_range_unhidden - close_range(2) of [@first, @last] but
 * the recorded fds, in pieces around each
 * @flags: close_range()'s
 *
 * Return: 0, or -1 with errno set by the first piece that failed.
 */
int __uks_damon_close_range_unhidden(unsigned int first, unsigned int last, int flags)
{
	for (unsigned int from = first;;) {
		int h = from > INT_MAX ? -1 : __uks_damon_fd_next_hidden((int)from);

		if (h < 0 || (unsigned int)h > last)
			return (int)syscall(SYS_close_range, from, last, flags);
		if ((unsigned int)h > from &&
		    syscall(SYS_close_range, from, (unsigned int)h - 1, flags))
			return -1;
		if ((unsigned int)h == last)
			return 0;
		from = (unsigned int)h + 1;
	}
}

/* forget and close */
void __uks_damon_fd_close(int fd)
{
	if (fd < 0)
		return;
	__uks_damon_fd_unhide(fd);
	close(fd);
}
