// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the dynamic_events parser (lib/trace/dynamic_events.c
 * and the probe arguments it hands on).  Arbitrary text is written to
 * dynamic_events of a trace instance; the write must return 0 or one of
 * the errnos the kernel's file returns, a failed write must leave
 * error_log well formed, and whatever got defined must list back in a form
 * that redefines the same probes.  With the right selector byte the
 * probes are also enabled and fed kmem:kmalloc/kfree events, so the fetch
 * code runs on real records.  Every input ends with a truncate, which must
 * remove everything again.
 *
 * Input: byte 0 = flags (bit 0 truncate before writing, bit 1 enable and
 * fire, bit 2 one write per line instead of one write), then the text.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>
#include <uks/trace.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char listing[65536], again[65536], scratch[65536];

static void check_errno(int ret)
{
	switch (ret) {
	case 0: case -EINVAL: case -ENOENT: case -EEXIST: case -ENODEV:
	case -EBUSY: case -ENOMEM: case -E2BIG: case -ENOSPC: case -ERANGE:
		return;
	default:
		abort();
	}
}

static ssize_t must_read(struct uks_trace *tr, const char *path, char *buf, size_t len)
{
	ssize_t n = uks_tracefs_read_all(tr, path, buf, len - 1);

	if (n < 0)
		abort();
	buf[n] = '\0';
	return n;
}

static void write_text(struct uks_trace *tr, const char *text, bool per_line)
{
	char line[4096];

	if (!per_line) {
		check_errno(uks_tracefs_write_str(tr, "dynamic_events", text, UKS_TRACEFS_APPEND));
		return;
	}
	while (*text) {
		size_t n = strcspn(text, "\n");

		if (n < sizeof(line)) {
			memcpy(line, text, n);
			line[n] = '\0';
			check_errno(uks_tracefs_write_str(tr, "dynamic_events", line,
							  UKS_TRACEFS_APPEND));
		}
		text += n + (text[n] == '\n');
	}
}

static void fire(struct uks_trace *tr)
{
	/* Every event, so every probe (whatever its group) records too. */
	if (uks_tracefs_write_str(tr, "events/enable", "1", UKS_TRACEFS_TRUNC))
		abort();
	for (int i = 0; i < 4; i++)
		uks_kfree(uks_kmalloc(16u << i));
	must_read(tr, "trace", scratch, sizeof(scratch));
	/* Enabled probes cannot be removed: the truncate must say so. */
	if (strstr(listing, "e:") &&
	    uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC) != -EBUSY)
		abort();
	if (uks_tracefs_write_str(tr, "events/enable", "0", UKS_TRACEFS_TRUNC))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_trace *tr;
	char *text;

	if (!tr && uks_trace_create(NULL, &tr))
		abort();
	if (!size)
		return 0;
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';

	if (data[0] & 1)
		check_errno(uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC));
	write_text(tr, text, data[0] & 4);
	must_read(tr, "error_log", scratch, sizeof(scratch));
	must_read(tr, "dynamic_events", listing, sizeof(listing));

	/* The listing is a valid command list that defines the same probes. */
	if (uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC))
		abort();
	if (listing[0] && uks_tracefs_write_str(tr, "dynamic_events", listing, UKS_TRACEFS_APPEND))
		abort();
	must_read(tr, "dynamic_events", again, sizeof(again));
	if (strcmp(listing, again))
		abort();

	if (data[0] & 2)
		fire(tr);
	if (uks_tracefs_write_str(tr, "dynamic_events", "", UKS_TRACEFS_TRUNC))
		abort();
	if (must_read(tr, "dynamic_events", scratch, sizeof(scratch)) != 0)
		abort();
	free(text);
	return 0;
}
