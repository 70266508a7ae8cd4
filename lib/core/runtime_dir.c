// SPDX-License-Identifier: MIT
/*
 * The directory that holds uksd's socket and mount point by default.
 *
 * /tmp is shared: anyone may create /tmp/uks-UID before its owner does and
 * put a socket of their own in it, which uks would then talk to and uksd
 * would take for a running uksd.  So a directory there is used only when
 * it is a real directory of the caller's with no access for anyone else.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uks/core.h>

#include "core/compiler.h"

static int refuse(int err, char *why, size_t why_size, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(int err, char *why, size_t why_size, const char *fmt, ...)
{
	va_list ap;

	if (why && why_size) {
		va_start(ap, fmt);
		vsnprintf(why, why_size, fmt, ap);
		va_end(ap);
	}
	return err;
}

/**
 * uks_runtime_dir - the directory for the caller's uksd socket and mount
 * @buf: receives the directory's path
 * @size: size of @buf
 * @flags: %UKS_RUNTIME_DIR_CREATE makes a missing /tmp/uks-UID (mode 0700)
 * @why: receives what is wrong with the directory on failure (may be NULL)
 * @why_size: size of @why
 *
 * /run for root; else $XDG_RUNTIME_DIR (the session's private directory,
 * read with secure_getenv()); else /tmp/uks-UID for the effective uid.
 * The last must be a directory, not a symbolic link, owned by the caller
 * and closed to group and others.
 *
 * Return: 0; -ENOENT if /tmp/uks-UID does not exist and was not to be
 * created; -ENOTDIR if it is not a directory; -EPERM if another user owns
 * it or it is open to others; -ENAMETOOLONG; or mkdir()'s error.  @buf
 * holds the path in every case but -ENAMETOOLONG, @why says what is wrong.
 */
UKS_EXPORT int uks_runtime_dir(char *buf, size_t size, unsigned int flags, char *why,
			       size_t why_size)
{
	const char *rt = secure_getenv("XDG_RUNTIME_DIR");
	uid_t uid = geteuid();
	bool created = false;
	struct stat st;
	int n;

	if (why && why_size)
		why[0] = '\0';
	if (!uid)
		n = snprintf(buf, size, "/run");
	else if (rt && *rt)
		n = snprintf(buf, size, "%s", rt);
	else
		n = snprintf(buf, size, "/tmp/uks-%u", (unsigned int)uid);
	if (n < 0 || (size_t)n >= size)
		return refuse(-ENAMETOOLONG, why, why_size, "path too long");
	if (!uid || (rt && *rt))
		return 0;
	if (flags & UKS_RUNTIME_DIR_CREATE) {
		if (!mkdir(buf, 0700))
			created = true;
		else if (errno != EEXIST)
			return refuse(-errno, why, why_size, "cannot create it: %s",
				      strerror(errno));
	}
	if (lstat(buf, &st))
		return refuse(-errno, why, why_size, "%s", strerror(errno));
	if (S_ISLNK(st.st_mode))
		return refuse(-ENOTDIR, why, why_size, "a symbolic link, not a directory");
	if (!S_ISDIR(st.st_mode))
		return refuse(-ENOTDIR, why, why_size, "not a directory");
	if (st.st_uid != uid)
		return refuse(-EPERM, why, why_size, "owned by uid %u, not by uid %u",
			      (unsigned int)st.st_uid, (unsigned int)uid);
	/* Ours: a umask may have taken more than group and other bits away. */
	if (created && (st.st_mode & 07777) != 0700 && chmod(buf, 0700))
		return refuse(-errno, why, why_size, "cannot make it mode 0700: %s",
			      strerror(errno));
	if (!created && (st.st_mode & 077))
		return refuse(-EPERM, why, why_size, "mode %04o lets other users in (want 0700)",
			      (unsigned int)(st.st_mode & 07777));
	return 0;
}
