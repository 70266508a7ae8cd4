/* SPDX-License-Identifier: MIT */
/*
 * uksfs: the kernel's file interface of the uks subsystems, as one tree.
 *
 * A struct uks_vfs is the tree a daemon serves: providers are mounted at
 * the paths the kernel uses (tracefs at "sys/kernel/tracing" and
 * "sys/kernel/debug/tracing", the slab caches at "sys/kernel/slab"), and
 * the directories above them exist implicitly.  Paths are relative to the
 * root, without a leading slash needed.
 *
 *	struct uks_vfs *vfs;
 *	uks_vfs_create(&vfs);
 *	uks_vfs_add_tracefs(vfs, "sys/kernel/tracing", tr);
 *	uks_vfs_add_slab(vfs, "sys/kernel/slab");
 *	uks_fuse_serve(vfs, "/run/uks", NULL, &srv);	-- or uks_sock_serve()
 *
 * Front ends (FUSE, the Unix socket) are thin: open, read, write, close on
 * the same files give the same bytes.  Reads and writes follow the
 * kernel's semantics of each file (one write is one command, O_TRUNC vs
 * O_APPEND, trace_pipe blocks).
 */
#ifndef UKS_FS_H
#define UKS_FS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uks_trace;
struct uks_vfs;
struct uks_vfs_file;

enum uks_vfs_type {
	UKS_VFS_DIR = 1,
	UKS_VFS_REG = 2,
};

/**
 * struct uks_vfs_stat - what stat(2) shows of a node
 * @type:	UKS_VFS_DIR or UKS_VFS_REG
 * @mode:	permission bits as the kernel sets them (0755, 0644, 0444, 0200 ...)
 * @stream:	reads consume (trace_pipe): no offsets, no caching
 */
struct uks_vfs_stat {
	enum uks_vfs_type type;
	unsigned int mode;
	bool stream;
};

int uks_vfs_create(struct uks_vfs **out);
void uks_vfs_destroy(struct uks_vfs *vfs);

/* Serve @tr's tracefs files at @path ("sys/kernel/tracing"). */
int uks_vfs_add_tracefs(struct uks_vfs *vfs, const char *path, struct uks_trace *tr);
/* Serve /sys/kernel/slab/<cache>/<attr> for this process's caches at @path. */
int uks_vfs_add_slab(struct uks_vfs *vfs, const char *path);
/* Serve 5.15's DAMON debugfs files at @path ("sys/kernel/debug/damon");
 * @primitive NULL picks the best available (see <uks/damon.h>). */
int uks_vfs_add_damon(struct uks_vfs *vfs, const char *path, const char *primitive);
/* Serve 6.12's DAMON sysfs files at @path ("sys/kernel/mm/damon/admin"):
 * kdamonds/N/contexts/...; "vaddr" runs on @primitive (NULL: the best
 * available).  Returns 0, -ENOENT / -EOPNOTSUPP (@primitive), -ENOMEM. */
int uks_vfs_add_damon_sysfs(struct uks_vfs *vfs, const char *path, const char *primitive);
/* Serve sys/devices/system/cpu/aarch32_el0 at @path ("sys/devices/system/cpu"):
 * the 32-bit-capable CPUs, read on each open as uks_a32_capable_read() does
 * with @list and @config (both may be NULL). */
int uks_vfs_add_a32(struct uks_vfs *vfs, const char *path, const char *list, const char *config);

/* Returns 0 and fills @st, or -ENOENT / -ENOTDIR / -ENAMETOOLONG. */
int uks_vfs_stat(struct uks_vfs *vfs, const char *path, struct uks_vfs_stat *st);

/**
 * uks_vfs_list - list a directory
 * @fn:		called per entry; a non-zero return stops the walk
 * Returns 0, -ENOENT, -ENOTDIR or what @fn returned.
 */
int uks_vfs_list(struct uks_vfs *vfs, const char *path,
		 int (*fn)(const char *name, const struct uks_vfs_stat *st, void *arg),
		 void *arg);

/**
 * uks_vfs_open - open a file with open(2) flags
 * Returns 0 and the file, -ENOENT, -EISDIR, -EACCES (mode forbids the
 * access), or the error of the file's open (e.g. -EBUSY truncating
 * dynamic_events while a probe is enabled).
 */
int uks_vfs_open(struct uks_vfs *vfs, const char *path, int flags, struct uks_vfs_file **out);

/**
 * uks_vfs_read - read at @off
 * Sequential reads are served from the file's own state; a read at any
 * other offset of a non-stream file re-reads the file from the start, as
 * seq_file does on lseek.  Returns bytes, 0 at the end, or -errno
 * (-EAGAIN with O_NONBLOCK, -EINTR after uks_vfs_interrupt()).
 */
ssize_t uks_vfs_read(struct uks_vfs_file *f, void *buf, size_t len, off_t off);
/* One call is one command.  Returns @len or -errno. */
ssize_t uks_vfs_write(struct uks_vfs_file *f, const void *buf, size_t len);
/*
 * uks_vfs_pwrite - uks_vfs_write() at @off, for front ends that know where
 * the write lands (FUSE passes the file position or pwrite()'s offset).
 * Most files take a command wherever it lands, as most kernel write
 * handlers ignore *ppos; DAMON's debugfs files refuse one past 0
 * (-EINVAL), as 5.15's user_input_str() does.
 */
ssize_t uks_vfs_pwrite(struct uks_vfs_file *f, const void *buf, size_t len, off_t off);
/* Non-zero when a read would not block. */
int uks_vfs_poll(struct uks_vfs_file *f);
/* Make a blocked read of @f return -EINTR (from another thread). */
void uks_vfs_interrupt(struct uks_vfs_file *f);
void uks_vfs_close(struct uks_vfs_file *f);
const struct uks_vfs_stat *uks_vfs_file_stat(const struct uks_vfs_file *f);

/* Convenience: read a whole (non-stream) file into @buf; returns its length. */
ssize_t uks_vfs_read_all(struct uks_vfs *vfs, const char *path, char *buf, size_t len);

/* ------------------------------------------------------------- front ends */

struct uks_server;

/**
 * struct uks_fuse_opts - how to mount
 * @fsname:	the mount's source name (default "uksfs"; "tracefs" lets tools
 *		that look for a tracefs mount by name find it)
 * @allow_other: let other users in (needs user_allow_other for non-root)
 * @threads:	FUSE worker threads (default 64; blocking trace_pipe readers
 *		each hold one)
 * @on_unmounted: called (from a server thread) when the mount goes away
 *		without uks_server_stop(), e.g. after "fusermount3 -u"
 * @arg:	passed to @on_unmounted
 * @set_gid:	give the tracing tree's files the group @gid (tracefs's gid=
 *		mount option) instead of the serving user's
 * @gid:	that group
 */
struct uks_fuse_opts {
	const char *fsname;
	bool allow_other;
	unsigned int threads;
	void (*on_unmounted)(void *arg);
	void *arg;
	bool set_gid;
	gid_t gid;
};

/**
 * uks_fuse_serve - mount @vfs at @mountpoint and serve it from threads
 * Returns 0, -ENOTSUP (built without libfuse3), -ENODEV (no /dev/fuse),
 * -EBUSY (@mountpoint is already a mount), or another -errno.
 */
int uks_fuse_serve(struct uks_vfs *vfs, const char *mountpoint,
		   const struct uks_fuse_opts *opts, struct uks_server **out);

/**
 * uks_sock_serve - serve @vfs on a Unix stream socket at @path (mode 0600)
 * Returns 0, -EADDRINUSE (a live server answers there), or -errno.
 */
int uks_sock_serve(struct uks_vfs *vfs, const char *path, struct uks_server **out);

/*
 * Requests beyond the file operations (op >= UKS_SOCK_EXT) go to the
 * server's handler, which runs in the connection's own thread: it may
 * block (uksd traces a process there) and send frames with uks_sock_send()
 * before returning the status of the final frame (or -EPIPE if the client
 * is gone).  @arg is the request's path field, @data its payload.
 */
#define UKS_SOCK_EXT	64
typedef int (*uks_sock_handler)(int op, const char *arg, const void *data, size_t len,
				int fd, void *ctx);
int uks_sock_serve_ext(struct uks_vfs *vfs, const char *path, uks_sock_handler handler,
		       void *ctx, struct uks_server **out);
/* One data frame to the client of a handler; returns 0 or -EPIPE. */
int uks_sock_send(int fd, const void *buf, size_t len);

/* Stop serving (unmounts a FUSE mount, removes a socket) and free. */
void uks_server_stop(struct uks_server *srv);

/* ------------------------------------------------------ socket client side */

/* The operations of the socket protocol. */
enum uks_sock_op {
	UKS_SOCK_STAT = 1,	/* path -> "d 0755\n" or "f 0644\n" */
	UKS_SOCK_LIST,		/* path -> "d 0755 name\n" per entry */
	UKS_SOCK_READ,		/* path -> the file's bytes, streamed until EOF */
	UKS_SOCK_WRITE,		/* path, flags, bytes -> one write */
};

/**
 * uks_sock_request - one request to a uksd socket
 * @sock:	the socket path
 * @op:		what to do
 * @path:	the file
 * @flags:	open(2) flags for UKS_SOCK_WRITE (O_APPEND or O_TRUNC) and
 *		UKS_SOCK_READ (O_NONBLOCK)
 * @data:	bytes to write
 * @len:	their count
 * @out:	called with each chunk of the answer; non-zero stops
 *
 * Returns 0 or the -errno the server's file returned (or a socket error).
 */
int uks_sock_request(const char *sock, enum uks_sock_op op, const char *path, int flags,
		     const void *data, size_t len,
		     int (*out)(const void *buf, size_t len, void *arg), void *arg);

/**
 * uks_sock_open - start a long-lived request (op >= UKS_SOCK_EXT) and keep
 * the connection
 * @sock:	the socket path
 * @op:		the request (the server's handler must send a data frame first)
 * @arg:	its argument (the path field)
 * @data:	its payload
 * @len:	bytes at @data
 * @first:	set to the handler's first data frame, NUL-terminated, cut to
 *		@first_size - 1 bytes
 * @first_size:	bytes at @first (at least 1)
 * @fdp:	set to the connection, now the caller's to speak the
 *		handler's own protocol on (close it when done)
 *
 * Returns 0, the handler's -errno (its error frame), or a socket error.
 */
int uks_sock_open(const char *sock, int op, const char *arg, const void *data, size_t len,
		  char *first, size_t first_size, int *fdp);

#ifdef __cplusplus
}
#endif

#endif
