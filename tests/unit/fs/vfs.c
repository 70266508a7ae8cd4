// SPDX-License-Identifier: MIT
/*
 * uksfs without FUSE: the VFS tree (paths, synthetic directories, modes,
 * permission checks, read offsets, one write per command) and the socket
 * front end (the same bytes, the file's errno, a second server refused),
 * so machines without /dev/fuse still test everything but the mount.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/slab.h>
#include <uks/trace.h>

#include "harness.h"

FIXTURE(vfs) {
	struct uks_trace *tr;
	struct uks_vfs *vfs;
	char dir[64];
};

FIXTURE_SETUP(vfs)
{
	ASSERT_EQ(0, uks_trace_create(NULL, &self->tr));
	ASSERT_EQ(0, uks_vfs_create(&self->vfs));
	ASSERT_EQ(0, uks_vfs_add_tracefs(self->vfs, "sys/kernel/tracing", self->tr));
	ASSERT_EQ(0, uks_vfs_add_tracefs(self->vfs, "/sys/kernel/debug/tracing/", self->tr));
	ASSERT_EQ(0, uks_vfs_add_slab(self->vfs, "sys/kernel/slab"));
	strcpy(self->dir, "/tmp/uks-vfs-XXXXXX");
	ASSERT_NE(NULL, mkdtemp(self->dir));
}

FIXTURE_TEARDOWN(vfs)
{
	char sock[96];

	snprintf(sock, sizeof(sock), "%s/sock", self->dir);
	unlink(sock);
	rmdir(self->dir);
	uks_vfs_destroy(self->vfs);
	uks_trace_destroy(self->tr);
}

struct names {
	char buf[4096];
};

static int collect(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	struct names *n = arg;

	snprintf(n->buf + strlen(n->buf), sizeof(n->buf) - strlen(n->buf), "%s%s ", name,
		 st->type == UKS_VFS_DIR ? "/" : "");
	return 0;
}

TEST_F(vfs, paths_and_synthetic_directories)
{
	struct uks_vfs_stat st;
	struct names n = { "" };

	ASSERT_EQ(-EEXIST, uks_vfs_add_slab(self->vfs, "sys//kernel/slab"));
	ASSERT_EQ(0, uks_vfs_list(self->vfs, "", collect, &n));
	ASSERT_STREQ("sys/ ", n.buf);
	n.buf[0] = '\0';
	ASSERT_EQ(0, uks_vfs_list(self->vfs, "/sys/./kernel", collect, &n));
	ASSERT_STREQ("tracing/ debug/ slab/ ", n.buf);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/debug", &st));
	ASSERT_EQ(UKS_VFS_DIR, st.type);
	ASSERT_EQ(0755, st.mode);
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sys/kernel/tracing/../../../etc", &st));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sys/nosuch", &st));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sy", &st));
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/tracing/trace_pipe", &st));
	ASSERT_EQ(UKS_VFS_REG, st.type);
	ASSERT_EQ(0444, st.mode);
	ASSERT_TRUE(st.stream);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/tracing/trace_marker", &st));
	ASSERT_EQ(0220, st.mode);
	ASSERT_FALSE(st.stream);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/slab/kmalloc-64/object_size", &st));
	ASSERT_EQ(0400, st.mode);
	ASSERT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/slab/kmalloc-64/min_partial", &st));
	ASSERT_EQ(0600, st.mode);
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sys/kernel/slab/kmalloc-64/nosuch", &st));
	ASSERT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sys/kernel/slab/nosuch-cache", &st));
}

/* A '/' in a cache name is '!' in its directory's, as sysfs has it. */
TEST_F(vfs, slab_names_with_a_slash)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("t_vfs/slash", 72, 0, 0, NULL);
	struct uks_vfs_stat st;
	struct names n = { "" };
	char text[32];
	ssize_t len;

	ASSERT_NONNULL(s);
	ASSERT_EQ(0, uks_vfs_list(self->vfs, "sys/kernel/slab", collect, &n));
	EXPECT_NONNULL(strstr(n.buf, " t_vfs!slash/ "));
	EXPECT_EQ(0, uks_vfs_stat(self->vfs, "sys/kernel/slab/t_vfs!slash", &st));
	EXPECT_EQ(UKS_VFS_DIR, st.type);
	len = uks_vfs_read_all(self->vfs, "sys/kernel/slab/t_vfs!slash/object_size", text,
			       sizeof(text) - 1);
	ASSERT_EQ(3, len);
	text[len] = '\0';
	EXPECT_STREQ("72\n", text);
	EXPECT_EQ(-ENOENT, uks_vfs_stat(self->vfs, "sys/kernel/slab/t_vfs!other", &st));
	EXPECT_EQ(0, uks_kmem_cache_destroy(s));
}

TEST_F(vfs, open_modes_reads_and_writes)
{
	struct uks_vfs_file *f;
	char a[64], b[64];
	ssize_t n;

	ASSERT_EQ(-EISDIR, uks_vfs_open(self->vfs, "sys/kernel", O_RDONLY, &f));
	ASSERT_EQ(-EISDIR, uks_vfs_open(self->vfs, "sys/kernel/tracing/events", O_RDONLY, &f));
	ASSERT_EQ(-EACCES, uks_vfs_open(self->vfs, "sys/kernel/tracing/trace_marker", O_RDONLY, &f));
	ASSERT_EQ(-EACCES, uks_vfs_open(self->vfs, "sys/kernel/tracing/README", O_WRONLY, &f));
	ASSERT_EQ(-ENOENT, uks_vfs_open(self->vfs, "sys/kernel/tracing/nosuch", O_RDONLY, &f));

	/* The same file through both tracefs mounts. */
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/set_event", O_WRONLY | O_APPEND, &f));
	ASSERT_EQ(13, uks_vfs_write(f, "kmem:kmalloc\n", 13));
	ASSERT_EQ(-EBADF, uks_vfs_read(f, a, sizeof(a), 0));
	uks_vfs_close(f);
	n = uks_vfs_read_all(self->vfs, "sys/kernel/debug/tracing/set_event", a, sizeof(a) - 1);
	ASSERT_EQ(13, n);
	a[n] = '\0';
	ASSERT_STREQ("kmem:kmalloc\n", a);

	/* Offsets: continuing, then going back re-reads from the start. */
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/trace_options", O_RDONLY, &f));
	ASSERT_EQ(10, uks_vfs_read(f, a, 10, 0));
	ASSERT_EQ(10, uks_vfs_read(f, a + 10, 10, 10));
	ASSERT_EQ(20, uks_vfs_read(f, b, 20, 0));
	ASSERT_EQ(0, memcmp(a, b, 20));
	ASSERT_EQ(5, uks_vfs_read(f, b, 5, 3));
	ASSERT_EQ(0, memcmp(a + 3, b, 5));
	ASSERT_EQ(0, uks_vfs_read(f, b, 5, 100000));
	uks_vfs_close(f);

	/* A bad command is the file's errno; the file stays usable. */
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/trace_clock", O_WRONLY, &f));
	ASSERT_EQ(-EINVAL, uks_vfs_write(f, "nosuchclock\n", 12));
	ASSERT_EQ(5, uks_vfs_write(f, "mono\n", 5));
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/slab/kmalloc-64/min_partial", O_WRONLY, &f));
	ASSERT_EQ(-EINVAL, uks_vfs_write(f, "x\n", 2));
	uks_vfs_close(f);

	/* trace_pipe with O_NONBLOCK on an empty buffer. */
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/set_event", O_WRONLY | O_TRUNC, &f));
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/trace", O_WRONLY | O_TRUNC, &f));
	uks_vfs_close(f);
	ASSERT_EQ(0, uks_vfs_open(self->vfs, "sys/kernel/tracing/trace_pipe", O_RDONLY | O_NONBLOCK, &f));
	ASSERT_EQ(0, uks_vfs_poll(f));
	ASSERT_EQ(-EAGAIN, uks_vfs_read(f, a, sizeof(a), 0));
	uks_vfs_close(f);
}

struct sink {
	char buf[1 << 16];
	size_t len;
};

static int sink(const void *buf, size_t len, void *arg)
{
	struct sink *s = arg;

	if (s->len + len >= sizeof(s->buf))
		return 1;
	memcpy(s->buf + s->len, buf, len);
	s->len += len;
	s->buf[s->len] = '\0';
	return 0;
}

TEST_F(vfs, socket_front_end)
{
	struct uks_server *srv, *again;
	static struct sink got, want;
	char sock[96];
	ssize_t n;

	snprintf(sock, sizeof(sock), "%s/sock", self->dir);
	ASSERT_EQ(0, uks_sock_serve(self->vfs, sock, &srv));
	ASSERT_EQ(-EADDRINUSE, uks_sock_serve(self->vfs, sock, &again));
	ASSERT_EQ(0, access(sock, R_OK | W_OK));

	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/tracing/README", 0, NULL, 0,
				      sink, &got));
	n = uks_vfs_read_all(self->vfs, "sys/kernel/tracing/README", want.buf, sizeof(want.buf));
	ASSERT_EQ((ssize_t)got.len, n);
	ASSERT_EQ(0, memcmp(got.buf, want.buf, got.len));

	got.len = 0;
	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_STAT, "sys/kernel/tracing/trace", 0, NULL, 0,
				      sink, &got));
	ASSERT_STREQ("f 0644\n", got.buf);
	got.len = 0;
	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_LIST, "sys/kernel", 0, NULL, 0, sink, &got));
	ASSERT_STREQ("d 0755 tracing\nd 0755 debug\nd 0755 slab\n", got.buf);

	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_WRITE, "sys/kernel/tracing/set_event", O_TRUNC,
				      "kmem:kfree\n", 11, NULL, NULL));
	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_WRITE, "sys/kernel/tracing/set_event", O_APPEND,
				      "kmem:kmalloc\n", 13, NULL, NULL));
	got.len = 0;
	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/tracing/set_event", 0, NULL, 0,
				      sink, &got));
	ASSERT_TRUE(strstr(got.buf, "kmem:kfree\n") && strstr(got.buf, "kmem:kmalloc\n"));

	ASSERT_EQ(-EINVAL, uks_sock_request(sock, UKS_SOCK_WRITE, "sys/kernel/tracing/trace_clock",
					    O_TRUNC, "nosuch\n", 7, NULL, NULL));
	ASSERT_EQ(-ENOENT, uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/nosuch", 0, NULL, 0,
					    sink, &got));
	ASSERT_EQ(-EACCES, uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/tracing/trace_marker",
					    0, NULL, 0, sink, &got));
	ASSERT_EQ(-EOPNOTSUPP, uks_sock_request(sock, UKS_SOCK_EXT + 9, "x", 0, NULL, 0, NULL, NULL));
	/* An empty trace_pipe read with O_NONBLOCK ends instead of waiting. */
	ASSERT_EQ(0, uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/tracing/trace_pipe",
				      O_NONBLOCK, NULL, 0, sink, &got));
	uks_server_stop(srv);
	ASSERT_NE(0, access(sock, F_OK));
	ASSERT_EQ(-ENOENT, uks_sock_request(sock, UKS_SOCK_STAT, "sys", 0, NULL, 0, NULL, NULL));
}

TEST_HARNESS_MAIN
