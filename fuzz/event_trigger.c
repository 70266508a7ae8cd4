// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the event trigger parser (lib/trace/trigger*.c).  Each
 * line of the input is written to an event's trigger file; a write must
 * return 0 or one of the kernel's errnos for that file, and the file must
 * then list either the help text or triggers in the kernel's form, each
 * of which, written back with "!", removes itself.  The event (and with
 * it every trigger) is fired after the writes, enabled or not, so the hit
 * path runs on what the parser built; at the end the file is back to its
 * help text.
 *
 * Input: byte 0 = flags (bit 0 enable the event, bit 1 fire the target
 * events too), then the lines.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

UKS_TRACE_EVENT(fz, hit,
	UKS_TP_PROTO(int n, const char *s),
	UKS_TP_ARGS(n, s),
	UKS_TP_FIELDS((field, int, n, n), (string, s, s)),
	UKS_TP_PRINTK("n=%d s=%s", REC->n, __get_str(s)))

UKS_TRACE_EVENT(fz, other,
	UKS_TP_PROTO(long v),
	UKS_TP_ARGS(v),
	UKS_TP_FIELDS((field, long, v, v)),
	UKS_TP_PRINTK("v=%ld", REC->v))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define TRIGGER	"events/fz/hit/trigger"
#define HELP	"# Available triggers:\n"

static char listing[65536], scratch[65536];

static void check_errno(int ret)
{
	switch (ret) {
	case 0: case -EINVAL: case -EEXIST: case -ERANGE: case -ENOSPC: case -E2BIG:
		return;
	default:
		abort();
	}
}

static void must_read(struct uks_trace *tr, const char *path, char *buf, size_t len)
{
	ssize_t n = uks_tracefs_read_all(tr, path, buf, len - 1);

	if (n < 0)
		abort();
	buf[n] = '\0';
}

/* Each listed trigger, written back with "!", must go. */
static void remove_all(struct uks_trace *tr)
{
	char line[4200];

	must_read(tr, TRIGGER, listing, sizeof(listing));
	if (!strncmp(listing, HELP, strlen(HELP)))
		return;
	for (char *p = listing; *p;) {
		size_t n = strcspn(p, "\n");

		if (n + 2 > sizeof(line))
			abort();
		line[0] = '!';
		memcpy(line + 1, p, n);
		line[n + 1] = '\0';
		if (uks_tracefs_write_str(tr, TRIGGER, line, UKS_TRACEFS_APPEND))
			abort();
		p += n + (p[n] == '\n');
	}
	must_read(tr, TRIGGER, listing, sizeof(listing));
	if (strncmp(listing, HELP, strlen(HELP)))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct uks_trace *tr;
	char *text, *p;
	uint8_t flags;

	if (!tr && uks_trace_create(NULL, &tr))
		abort();
	if (!size)
		return 0;
	flags = data[0];
	text = malloc(size);
	if (!text)
		return 0;
	memcpy(text, data + 1, size - 1);
	text[size - 1] = '\0';
	if (uks_tracefs_write_str(tr, "events/fz/hit/enable", flags & 1 ? "1" : "0", 0))
		abort();
	for (p = text; *p;) {
		size_t n = strcspn(p, "\n");
		char c = p[n];

		p[n] = '\0';
		check_errno(uks_tracefs_write_str(tr, TRIGGER, p, UKS_TRACEFS_APPEND));
		p[n] = c;
		p += n + (c == '\n');
	}
	must_read(tr, TRIGGER, listing, sizeof(listing));
	uks_trace_fz_hit(1, "x");
	uks_trace_fz_hit(2, NULL);
	if (flags & 2)
		uks_trace_fz_other(3);
	must_read(tr, "trace", scratch, sizeof(scratch));
	remove_all(tr);
	if (uks_tracefs_write_str(tr, "events/fz/hit/enable", "0", 0) ||
	    uks_tracefs_write_str(tr, "tracing_on", "1", 0) ||
	    uks_tracefs_write_str(tr, "trace", "", UKS_TRACEFS_TRUNC))
		abort();
	free(text);
	return 0;
}
