// SPDX-License-Identifier: MIT
/*
 * uksfs over a Unix stream socket, for places without FUSE (containers
 * without /dev/fuse) and for the uks CLI.
 *
 * Protocol: one request per connection.  The client sends a header
 * {magic, op, flags, path length, data length}, the path and the data;
 * the server answers with frames {status, length} + bytes: data frames
 * (status 0), then an end frame (status 0, length 0) or an error frame
 * (status -errno).  UKS_SOCK_READ streams the file until its end, which
 * for trace_pipe is when the client goes away (or, with O_NONBLOCK, when
 * it is empty).  The bytes are those of the VFS, so a file reads the same
 * through FUSE and through the socket.
 *
 * The socket is created mode 0600 in a directory the caller made private:
 * only its owner can talk to the daemon, as without allow_other on FUSE.
 * Files are opened and written for the peer (SO_PEERCRED), so a socket
 * shared with other users still lets none act on a process it could not
 * ptrace (DAMON's target_ids), and trace_marker lines carry its pid.
 *
 * Lock order: srv->lock (the list of connections) is a leaf.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/slab.h>
#include <uks/trace.h>

#include "core/compiler.h"
#include "fs/server.h"
#include "fs/vfs.h"

#define SOCK_MAGIC	0x314b5355u	/* "USK1" little-endian */
#define SOCK_CHUNK	65536
#define SOCK_MAX_DATA	(1u << 20)	/* one write: tracefs takes less anyway */
#define MAX_CONNS	64

struct sock_req {
	uint32_t magic;
	uint32_t op;
	int32_t flags;
	uint32_t path_len;
	uint64_t data_len;
};

struct sock_frame {
	int32_t status;
	uint32_t len;
};

struct sock_srv {
	struct uks_server srv;
	struct uks_vfs *vfs;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	int fd;
	pthread_t accept_thread;
	pthread_mutex_t lock;
	pthread_cond_t idle;
	int conns[MAX_CONNS];
	int nr_conns;
	int stopping;
	uks_sock_handler handler;
	void *ctx;
};

struct conn {
	struct sock_srv *srv;
	int fd;
};

static int full_write(int fd, const void *buf, size_t len)
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

static int full_read(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n ? -errno : -EPIPE;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static int send_frame(int fd, int status, const void *buf, size_t len)
{
	struct sock_frame fr = { status, (uint32_t)len };
	int ret = full_write(fd, &fr, sizeof(fr));

	return ret || !len ? ret : full_write(fd, buf, len);
}

/* Has the client hung up?  Waits up to @ms for it. */
static bool client_gone(int fd, int ms)
{
	struct pollfd p = { fd, POLLIN | POLLRDHUP, 0 };

	return poll(&p, 1, ms) > 0 && (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLIN));
}

static int serve_read(struct sock_srv *s, int fd, const char *path, int flags,
		      const struct uks_peer *peer)
{
	bool nonblock = flags & O_NONBLOCK;
	struct uks_vfs_file *f;
	char *buf = uks_kmalloc(SOCK_CHUNK);
	off_t off = 0;
	int ret;

	if (!buf)
		return -ENOMEM;
	/* Non-blocking underneath: we wait here, watching the client. */
	ret = __uks_vfs_open_as(s->vfs, path, O_RDONLY | O_NONBLOCK, peer, &f);
	if (ret) {
		uks_kfree(buf);
		return ret;
	}
	for (;;) {
		ssize_t n = uks_vfs_read(f, buf, SOCK_CHUNK, off);

		if (n > 0) {
			off += n;
			ret = send_frame(fd, 0, buf, (size_t)n);
			if (ret)
				break;
			continue;
		}
		if (n == -EAGAIN && !nonblock) {
			if (__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE) || client_gone(fd, 50)) {
				ret = -EPIPE;
				break;
			}
			continue;
		}
		ret = n == -EAGAIN ? 0 : (int)n;
		break;
	}
	uks_vfs_close(f);
	uks_kfree(buf);
	return ret;
}

static int serve_write(struct sock_srv *s, const char *path, int flags, const char *data,
		       size_t len, const struct uks_peer *peer)
{
	struct uks_vfs_file *f;
	ssize_t n;
	int ret = __uks_vfs_open_as(s->vfs, path, O_WRONLY | (flags & (O_APPEND | O_TRUNC)), peer,
				    &f);

	if (ret)
		return ret;
	/* "echo -n > x": open alone */
	n = len ? __uks_vfs_pwrite_as(f, data, len, -1, peer) : 0;
	uks_vfs_close(f);
	return n < 0 ? (int)n : 0;
}

struct list_out {
	char *buf;
	size_t len, cap;
};

static int list_line(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	struct list_out *lo = arg;
	size_t need = strlen(name) + 16;

	if (lo->len + need > lo->cap) {
		size_t cap = lo->cap ? 2 * lo->cap + need : 4096;
		char *p = uks_krealloc(lo->buf, cap);

		if (!p)
			return -ENOMEM;
		lo->buf = p;
		lo->cap = cap;
	}
	lo->len += (size_t)snprintf(lo->buf + lo->len, lo->cap - lo->len, "%c %04o %s\n",
				    st->type == UKS_VFS_DIR ? 'd' : 'f', st->mode & 07777, name);
	return 0;
}

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct sock_srv *s = c->srv;
	struct sock_req rq;
	char path[VFS_PATH_MAX], *data = NULL;
	struct uks_peer peer = { 0 };
	struct ucred cred;
	socklen_t clen = sizeof(cred);
	int ret, fd = c->fd;

	uks_kfree(c);
	uks_trace_set_thread_cmdline(false);	/* a thread per connection */
	ret = getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) ? -errno : 0;
	if (!ret) {
		peer.pid = cred.pid;
		peer.uid = cred.uid;
		peer.gid = cred.gid;
		ret = full_read(fd, &rq, sizeof(rq));
	}
	if (!ret && (rq.magic != SOCK_MAGIC || rq.path_len >= sizeof(path) ||
		     rq.data_len > SOCK_MAX_DATA))
		ret = -EPROTO;
	if (!ret)
		ret = full_read(fd, path, rq.path_len);
	if (!ret) {
		path[rq.path_len] = '\0';
		data = uks_kmalloc(rq.data_len + 1);
		ret = data ? full_read(fd, data, rq.data_len) : -ENOMEM;
	}
	if (!ret) {
		switch (rq.op) {
		case UKS_SOCK_STAT: {
			struct uks_vfs_stat st;
			char line[32];

			ret = uks_vfs_stat(s->vfs, path, &st);
			if (!ret)
				ret = send_frame(fd, 0, line,
						 (size_t)snprintf(line, sizeof(line), "%c %04o\n",
								  st.type == UKS_VFS_DIR ? 'd' : 'f',
								  st.mode & 07777));
			break;
		}
		case UKS_SOCK_LIST: {
			struct list_out lo = { 0 };

			ret = uks_vfs_list(s->vfs, path, list_line, &lo);
			for (size_t o = 0; !ret && o < lo.len; o += SOCK_CHUNK)
				ret = send_frame(fd, 0, lo.buf + o,
						 lo.len - o < SOCK_CHUNK ? lo.len - o : SOCK_CHUNK);
			uks_kfree(lo.buf);
			break;
		}
		case UKS_SOCK_READ:
			ret = serve_read(s, fd, path, rq.flags, &peer);
			break;
		case UKS_SOCK_WRITE:
			ret = serve_write(s, path, rq.flags, data, rq.data_len, &peer);
			break;
		default:
			if (rq.op >= UKS_SOCK_EXT && s->handler) {
				data[rq.data_len] = '\0';
				ret = s->handler((int)rq.op, path, data, rq.data_len, fd, s->ctx);
			} else {
				ret = -EOPNOTSUPP;
			}
		}
	}
	if (ret != -EPIPE)
		send_frame(fd, ret < 0 ? ret : 0, NULL, 0);
	uks_kfree(data);
	pthread_mutex_lock(&s->lock);
	for (int i = 0; i < s->nr_conns; i++) {
		if (s->conns[i] == fd) {
			s->conns[i] = s->conns[--s->nr_conns];
			break;
		}
	}
	close(fd);
	pthread_cond_broadcast(&s->idle);
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

static void *accept_main(void *arg)
{
	struct sock_srv *s = arg;

	for (;;) {
		int fd = accept4(s->fd, NULL, NULL, SOCK_CLOEXEC);
		struct conn *c;
		pthread_t t;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (__atomic_load_n(&s->stopping, __ATOMIC_ACQUIRE))
				return NULL;
			continue;	/* EMFILE and friends: try again */
		}
		pthread_mutex_lock(&s->lock);
		if (s->nr_conns == MAX_CONNS || s->stopping) {
			pthread_mutex_unlock(&s->lock);
			send_frame(fd, -EBUSY, NULL, 0);
			close(fd);
			continue;
		}
		s->conns[s->nr_conns++] = fd;
		pthread_mutex_unlock(&s->lock);
		c = uks_kmalloc(sizeof(*c));
		if (c) {
			c->srv = s;
			c->fd = fd;
		}
		if (!c || pthread_create(&t, NULL, conn_main, c)) {
			uks_kfree(c);
			pthread_mutex_lock(&s->lock);
			s->conns[--s->nr_conns] = -1;
			pthread_mutex_unlock(&s->lock);
			close(fd);
			continue;
		}
		pthread_detach(t);
	}
}

static void sock_stop(struct uks_server *srv)
{
	struct sock_srv *s = (struct sock_srv *)srv;

	pthread_mutex_lock(&s->lock);
	__atomic_store_n(&s->stopping, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < s->nr_conns; i++)
		shutdown(s->conns[i], SHUT_RDWR);
	pthread_mutex_unlock(&s->lock);
	shutdown(s->fd, SHUT_RDWR);
	pthread_join(s->accept_thread, NULL);
	close(s->fd);
	unlink(s->path);
	pthread_mutex_lock(&s->lock);
	while (s->nr_conns)
		pthread_cond_wait(&s->idle, &s->lock);
	pthread_mutex_unlock(&s->lock);
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	uks_kfree(s);
}

static int sock_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/** uks_sock_send - see <uks/fs.h> */
UKS_EXPORT int uks_sock_send(int fd, const void *buf, size_t len)
{
	for (size_t o = 0; o < len; o += SOCK_CHUNK) {
		int ret = send_frame(fd, 0, (const char *)buf + o,
				     len - o < SOCK_CHUNK ? len - o : SOCK_CHUNK);

		if (ret)
			return ret;
	}
	return 0;
}

/** uks_sock_serve - see <uks/fs.h> */
UKS_EXPORT int uks_sock_serve(struct uks_vfs *vfs, const char *path, struct uks_server **out)
{
	return uks_sock_serve_ext(vfs, path, NULL, NULL, out);
}

/** uks_sock_serve_ext - see <uks/fs.h> */
UKS_EXPORT int uks_sock_serve_ext(struct uks_vfs *vfs, const char *path,
				  uks_sock_handler handler, void *ctx, struct uks_server **out)
{
	struct sockaddr_un sa;
	struct sock_srv *s;
	mode_t old;
	int ret = sock_addr(path, &sa), probe;

	if (ret)
		return ret;
	/* A live server answers: refuse.  A stale socket file is replaced. */
	probe = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe >= 0) {
		if (!connect(probe, (struct sockaddr *)&sa, sizeof(sa))) {
			close(probe);
			return -EADDRINUSE;
		}
		close(probe);
	}
	unlink(path);
	s = uks_kzalloc(sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->vfs = vfs;
	s->handler = handler;
	s->ctx = ctx;
	strcpy(s->path, path);
	pthread_mutex_init(&s->lock, NULL);
	pthread_cond_init(&s->idle, NULL);
	s->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->fd < 0) {
		ret = -errno;
		goto fail;
	}
	old = umask(0177);
	ret = bind(s->fd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!ret && chmod(path, 0600))
		ret = -errno;
	if (!ret && listen(s->fd, 16))
		ret = -errno;
	if (!ret)
		ret = -pthread_create(&s->accept_thread, NULL, accept_main, s);
	if (ret) {
		close(s->fd);
		unlink(path);
		goto fail;
	}
	s->srv.stop = sock_stop;
	*out = &s->srv;
	return 0;
fail:
	pthread_mutex_destroy(&s->lock);
	pthread_cond_destroy(&s->idle);
	uks_kfree(s);
	return ret;
}

/** uks_server_stop - see <uks/fs.h> */
UKS_EXPORT void uks_server_stop(struct uks_server *srv)
{
	if (srv)
		srv->stop(srv);
}

/** uks_sock_request - see <uks/fs.h> */
UKS_EXPORT int uks_sock_request(const char *sock, enum uks_sock_op op, const char *path,
				int flags, const void *data, size_t len,
				int (*out)(const void *buf, size_t len, void *arg), void *arg)
{
	struct sock_req rq = { SOCK_MAGIC, (uint32_t)op, flags, 0, len };
	struct sockaddr_un sa;
	char *buf = NULL;
	int fd, ret = sock_addr(sock, &sa);

	if (ret)
		return ret;
	if (strlen(path) >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	rq.path_len = (uint32_t)strlen(path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		goto out;
	}
	ret = full_write(fd, &rq, sizeof(rq));
	if (!ret)
		ret = full_write(fd, path, rq.path_len);
	if (!ret && len)
		ret = full_write(fd, data, len);
	buf = uks_kmalloc(SOCK_CHUNK);
	if (!ret && !buf)
		ret = -ENOMEM;
	while (!ret) {
		struct sock_frame fr;

		ret = full_read(fd, &fr, sizeof(fr));
		if (ret)
			break;
		if (fr.status < 0 || fr.len > SOCK_CHUNK) {
			ret = fr.status < 0 ? fr.status : -EPROTO;
			break;
		}
		if (!fr.len)
			break;		/* the end */
		ret = full_read(fd, buf, fr.len);
		if (!ret && out && out(buf, fr.len, arg))
			break;		/* the caller has enough */
	}
out:
	uks_kfree(buf);
	close(fd);
	return ret;
}

/** uks_sock_open - see <uks/fs.h> */
UKS_EXPORT int uks_sock_open(const char *sock, int op, const char *arg, const void *data,
			     size_t len, char *first, size_t first_size, int *fdp)
{
	struct sock_req rq = { SOCK_MAGIC, (uint32_t)op, 0, 0, len };
	struct sockaddr_un sa;
	struct sock_frame fr;
	int fd, ret = sock_addr(sock, &sa);

	*fdp = -1;
	if (ret)
		return ret;
	if (op < UKS_SOCK_EXT || first_size == 0)
		return -EINVAL;
	if (strlen(arg) >= VFS_PATH_MAX)
		return -ENAMETOOLONG;
	rq.path_len = (uint32_t)strlen(arg);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = full_write(fd, &rq, sizeof(rq));
	if (!ret)
		ret = full_write(fd, arg, rq.path_len);
	if (!ret && len)
		ret = full_write(fd, data, len);
	if (!ret)
		ret = full_read(fd, &fr, sizeof(fr));
	if (!ret && (fr.status < 0 || !fr.len || fr.len > SOCK_CHUNK))
		ret = fr.status < 0 ? fr.status : -EPROTO;
	/* The first data frame, cut to @first_size - 1 bytes and terminated. */
	for (uint32_t got = 0; !ret && got < fr.len; ) {
		char c[256];
		uint32_t n = fr.len - got < sizeof(c) ? fr.len - got : (uint32_t)sizeof(c);

		ret = full_read(fd, c, n);
		if (!ret && got < first_size - 1)
			memcpy(first + got, c, got + n < first_size - 1 ? n : first_size - 1 - got);
		got += n;
		first[got < first_size - 1 ? got : first_size - 1] = '\0';
	}
	if (ret) {
		close(fd);
		return ret;
	}
	*fdp = fd;
	return 0;
}
