/* SPDX-License-Identifier: MIT */
/*
 * May a caller of uksd trace a pid?  The kernel's ptrace access rule
 * (__ptrace_may_access()), applied on behalf of a peer that uksd knows by
 * its credentials (SO_PEERCRED on the socket, the FUSE request's context),
 * for every request that names a pid: a peer may trace or read a task only
 * if it could ptrace it itself.
 */
#ifndef UKS_LIB_CORE_PTRACE_ACCESS_H
#define UKS_LIB_CORE_PTRACE_ACCESS_H

#include <sys/types.h>

/**
 * struct uks_peer - who asks: the credentials of a socket peer or of the
 * task behind a FUSE request
 * @pid:	its pid (thread id for FUSE), or 0 when unknown
 * @uid:	its uid (SO_PEERCRED: the effective uid at connect())
 * @gid:	its gid
 */
struct uks_peer {
	pid_t pid;
	uid_t uid;
	gid_t gid;
};

int __uks_ptrace_may_access(const struct uks_peer *peer, pid_t target);
int __uks_peer_has_cap(const struct uks_peer *peer, unsigned int cap);

#endif
