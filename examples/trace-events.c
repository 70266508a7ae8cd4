// SPDX-License-Identifier: MIT
/*
 * Event tracing end to end, through the same files a kernel user would
 * write: define an event, put an event probe with a filter on it that
 * follows a pointer into this process, add the allocator's kmem:kmalloc
 * (filtered) and a trace_marker line, then print the trace, the probe's
 * format, dynamic_events and the error_log entry of a bad filter.
 * Run: build/examples/trace-events
 */
#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <uks/slab.h>
#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

UKS_TRACE_EVENT(demo, open,
	UKS_TP_PROTO(int fd, const char *name, unsigned int flags),
	UKS_TP_ARGS(fd, name, flags),
	UKS_TP_FIELDS(
		(field, int, fd, fd),
		(field, const char *, name, name),
		(field, unsigned int, flags, flags)),
	UKS_TP_PRINTK("fd=%d name=%p flags=0x%x", REC->fd, REC->name, REC->flags))

static char buf[1 << 16];

static void cat(struct uks_trace *tr, const char *path)
{
	ssize_t n = uks_tracefs_read_all(tr, path, buf, sizeof(buf) - 1);

	printf("$ cat %s\n", path);
	if (n < 0) {
		printf("(error %zd)\n", n);
		return;
	}
	buf[n] = '\0';
	fputs(buf, stdout);
}

static void echo(struct uks_trace *tr, const char *text, const char *path, int how)
{
	int ret = uks_tracefs_write_str(tr, path, text, how);

	printf("$ echo '%s' %s %s%s\n", text, how == UKS_TRACEFS_APPEND ? ">>" : ">", path,
	       ret ? "   # write error" : "");
}

int main(void)
{
	static const char *const files[] = { "/etc/hostname", "/etc/passwd", "/nonexistent" };
	struct uks_trace *tr;

	if (uks_trace_create(NULL, &tr))
		return 1;
	echo(tr, "e:opened demo/open file=+0($name):ustring fd=$fd:s32", "dynamic_events",
	     UKS_TRACEFS_APPEND);
	echo(tr, "fd >= 0", "events/eprobes/opened/filter", UKS_TRACEFS_TRUNC);
	echo(tr, "1", "events/eprobes/opened/enable", UKS_TRACEFS_TRUNC);
	echo(tr, "bytes_req >= 1000", "events/kmem/kmalloc/filter", UKS_TRACEFS_TRUNC);
	echo(tr, "kmem:kmalloc", "set_event", UKS_TRACEFS_APPEND);

	for (unsigned int i = 0; i < 3; i++) {
		int fd = open(files[i], O_RDONLY);

		uks_trace_demo_open(fd, files[i], i);
		if (fd >= 0)
			close(fd);
	}
	uks_kfree(uks_kmalloc(100));
	uks_kfree(uks_kmalloc(3000));
	echo(tr, "hello from user space", "trace_marker", UKS_TRACEFS_APPEND);
	echo(tr, "0", "events/kmem/enable", UKS_TRACEFS_TRUNC);
	printf("\n");
	cat(tr, "trace");
	printf("\n");
	cat(tr, "dynamic_events");
	cat(tr, "events/eprobes/opened/enable");
	cat(tr, "events/demo/open/enable");
	printf("\n");
	cat(tr, "events/eprobes/opened/format");
	printf("\n");
	echo(tr, "fd == 1 && nosuchfield < 3", "events/demo/open/filter", UKS_TRACEFS_TRUNC);
	cat(tr, "events/demo/open/filter");
	cat(tr, "error_log");
	echo(tr, "", "dynamic_events", UKS_TRACEFS_TRUNC);	/* -EBUSY: still enabled */
	echo(tr, "0", "events/enable", UKS_TRACEFS_TRUNC);
	echo(tr, "", "dynamic_events", UKS_TRACEFS_TRUNC);
	uks_trace_destroy(tr);
	return 0;
}
