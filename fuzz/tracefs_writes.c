// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the tracefs command files whose parsers are their own:
 * set_event_pid and set_event_notrace_pid (pid lists), trace_options and
 * options/NAME, events/SYS/filter and trace_marker_raw.  Arbitrary text
 * is written to the file the selector byte names; the write must return
 * 0 or an errno the kernel's file returns, a pid list must read back
 * sorted without repeats, trace_options must keep one line per option,
 * and every event of the system must keep a readable filter.
 *
 * Input: byte 0 = the file (low 3 bits) and O_TRUNC (bit 3), then the text.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>
#include <uks/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char buf[65536];

static void must_read(struct uks_trace *tr, const char *path)
{
	ssize_t n = uks_tracefs_read_all(tr, path, buf, sizeof(buf));

	if (n < 0)
		abort();
}

static void check_pids(struct uks_trace *tr, const char *path)
{
	long last = -1;

	must_read(tr, path);
	for (char *p = buf, *end; *p; p = end + 1) {
		long v = strtol(p, &end, 10);

		if (end == p || *end != '\n' || v <= last)
			abort();
		last = v;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const files[] = {
		"set_event_pid", "set_event_notrace_pid", "trace_options", "options/raw",
		"events/kmem/filter", "trace_marker_raw", "options/event-fork", "set_event_pid",
	};
	static struct uks_trace *tr;
	char text[4200];
	const char *path;
	int ret, how;
	size_t lines = 0;

	if (!size || size - 1 >= sizeof(text))
		return 0;
	if (!tr && uks_trace_create(NULL, &tr))
		abort();
	uks_kfree(uks_kmalloc(8));	/* the kmem system exists */
	path = files[data[0] & 7];
	how = data[0] & 8 ? UKS_TRACEFS_TRUNC : UKS_TRACEFS_APPEND;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	ret = uks_tracefs_write_str(tr, path, text, how);
	switch (ret) {
	case 0: case -EINVAL: case -EPERM: case -ENOMEM: case -EBADF: case -ENODEV:
		break;
	default:
		abort();
	}
	check_pids(tr, "set_event_pid");
	check_pids(tr, "set_event_notrace_pid");
	must_read(tr, "trace_options");
	for (char *p = buf; (p = strchr(p, '\n')); p++)
		lines++;
	if (lines != 28)
		abort();
	must_read(tr, "events/kmem/kmalloc/filter");
	must_read(tr, "trace");
	return 0;
}
