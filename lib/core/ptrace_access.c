// SPDX-License-Identifier: MIT
/*
 * The kernel's ptrace access rule for uksd's peers.
 *
 * __ptrace_may_access() lets a caller attach to a task when the task is in
 * its own thread group, or when the caller's uid matches the task's real,
 * effective and saved uid (and likewise the gids) and the task is dumpable;
 * CAP_SYS_PTRACE overrides both.  From outside the two tasks those facts
 * are read from /proc: the Uid/Gid lines of the target's status, CapEff of
 * the caller's, and dumpability from the owner of /proc/PID/status, which the
 * kernel gives to root while the task is not dumpable (task_dump_owner()).
 *
 * Yama's ptrace_scope is left to the kernel: it applies when the caller's
 * own tracer attaches (uks trace attaches with the caller's credentials).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/proc_status.h"
#include "core/ptrace_access.h"

#define CAP_SYS_PTRACE_BIT	19

/* The four ids of a "Uid:" or "Gid:" line: real, effective, saved, fs. */
static int status_ids(const char *status, const char *key, unsigned long ids[4])
{
	const char *p = strstr(status, key);

	if (!p)
		return -ESRCH;
	p += strlen(key);
	for (int i = 0; i < 4; i++) {
		char *end;

		ids[i] = strtoul(p, &end, 10);
		if (end == p)
			return -ESRCH;
		p = end;
	}
	return 0;
}

/**
 * __uks_peer_has_cap - whether a peer holds a capability in its effective set
 * @peer: the peer; without a pid, a uid of 0 is taken as holding all
 * @cap: the capability's number (CAP_SYS_PTRACE is 19)
 */
int __uks_peer_has_cap(const struct uks_peer *peer, unsigned int cap)
{
	char buf[4096];
	const char *p;

	if (!peer->pid)
		return peer->uid == 0;
	if (proc_status_read(peer->pid, buf, sizeof(buf)))
		return 0;
	p = strstr(buf, "\nCapEff:");
	if (!p || cap >= 64)
		return 0;
	return (strtoull(p + 8, NULL, 16) >> cap) & 1;
}

/**
 * __uks_ptrace_may_access - the kernel's ptrace rule for a peer and a task
 * @peer: who asks
 * @target: the pid (or thread id) named in the request
 *
 * Return: 0 if @peer could ptrace @target itself, -EPERM if it could not,
 * -ESRCH if there is no such task.
 */
int __uks_ptrace_may_access(const struct uks_peer *peer, pid_t target)
{
	unsigned long uids[4], gids[4];
	char buf[4096], path[64];
	struct stat st;
	int err;

	if (target <= 0)
		return -ESRCH;
	err = proc_status_read(target, buf, sizeof(buf));
	if (err)
		return err;
	if (peer->pid && peer->pid == target)
		return 0;
	if (status_ids(buf, "\nUid:", uids) || status_ids(buf, "\nGid:", gids))
		return -ESRCH;
	if (__uks_peer_has_cap(peer, CAP_SYS_PTRACE_BIT))
		return 0;
	for (int i = 0; i < 3; i++)
		if (uids[i] != peer->uid || gids[i] != peer->gid)
			return -EPERM;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)target);
	if (stat(path, &st))
		return -ESRCH;
	if (st.st_uid != (uid_t)uids[1])
		return -EPERM;		/* not dumpable: its proc files belong to root */
	return 0;
}
