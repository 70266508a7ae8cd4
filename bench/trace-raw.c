// SPDX-License-Identifier: MIT
/*
 * The two consuming readers side by side, in events per second: trace_pipe
 * (text, every CPU merged by time) and per_cpu/cpuN/trace_pipe_raw (the
 * kernel's binary pages, what trace-cmd record reads), both through the
 * tracefs file API on the same events: 20,000 bench/event64 records (64-byte
 * payload) written on one pinned CPU, then drained with O_NONBLOCK reads of
 * 64 KiB (text) or one page (raw).  The raw reader's figure includes
 * walking each page to count its events, as a consumer must.  Medians of
 * interleaved rounds; the ratio raw/text is checked against 10.
 * UKS_BENCH_SCALE multiplies the rounds; UKS_BENCH_CPU picks the CPU.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

#include "bench_cpu.h"
#include "trace/ring_buffer_raw.h"

#include "bench_event64.h"

#define EVENTS	20000
#define ROUNDS	9

static struct uks_trace *tr;

static void must(int ret, const char *what)
{
	if (ret < 0) {
		fprintf(stderr, "trace-raw: %s: error %d\n", what, ret);
		exit(1);
	}
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void fill(void)
{
	must(uks_tracefs_write_str(tr, "trace", "", UKS_TRACEFS_TRUNC), "clear");
	for (long i = 0; i < EVENTS; i++)
		uks_trace_bench_event64((uint64_t)i, 2, 3, 4, 5, 6, 7);
}

static double text_rate(long *seen)
{
	static char buf[65536];
	struct uks_tracefs_file *f;
	long events = 0;
	ssize_t got;
	double t0;

	fill();
	must(uks_tracefs_open(tr, "trace_pipe", O_RDONLY | O_NONBLOCK, &f), "open trace_pipe");
	t0 = now_s();
	while ((got = uks_tracefs_read(f, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			events += buf[i] == '\n';
	t0 = now_s() - t0;
	uks_tracefs_close(f);
	*seen = events;
	return events / t0;
}

static double raw_rate(int cpu, long *seen)
{
	static unsigned char page[4096];
	struct uks_tracefs_file *f;
	char path[64];
	long events = 0;
	double t0;

	fill();
	snprintf(path, sizeof(path), "per_cpu/cpu%d/trace_pipe_raw", cpu);
	must(uks_tracefs_open(tr, path, O_RDONLY | O_NONBLOCK, &f), "open trace_pipe_raw");
	t0 = now_s();
	while (uks_tracefs_read(f, page, sizeof(page)) == sizeof(page)) {
		struct uks_rb_page_reader r;
		const void *data;
		uint32_t len;
		uint64_t ts;

		must(__uks_trace_rb_page_open(&r, page, sizeof(page)), "page");
		while (__uks_trace_rb_page_next(&r, &ts, &data, &len) == 1)
			events++;
	}
	t0 = now_s() - t0;
	uks_tracefs_close(f);
	*seen = events;
	return events / t0;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(void)
{
	const char *s = getenv("UKS_BENCH_SCALE");
	int rounds = ROUNDS * (s && atoi(s) > 0 ? atoi(s) : 1), cpu = bench_cpu();
	double *text = calloc(rounds, sizeof(double)), *raw = calloc(rounds, sizeof(double));
	long nt = 0, nr = 0;

	if (cpu < 0 || bench_pin(cpu) || !text || !raw) {
		fprintf(stderr, "trace-raw: cannot pin to a CPU\n");
		return 1;
	}
	must(uks_trace_create(NULL, &tr), "create");
	must(uks_tracefs_write_str(tr, "buffer_size_kb", "4096", 0), "buffer_size_kb");
	must(uks_tracefs_write_str(tr, "events/bench/event64/enable", "1", 0), "enable");
	for (int r = 0; r < rounds; r++) {
		text[r] = text_rate(&nt);
		raw[r] = raw_rate(cpu, &nr);
		if (nt != EVENTS || nr != EVENTS) {
			fprintf(stderr, "trace-raw: read %ld text and %ld raw events of %d\n", nt, nr,
				EVENTS);
			return 1;
		}
	}
	qsort(text, rounds, sizeof(double), cmp);
	qsort(raw, rounds, sizeof(double), cmp);
	printf("trace-raw: consuming readers, %d events of 64 bytes on CPU %d, median of %d rounds\n",
	       EVENTS, cpu, rounds);
	printf("  %-36s %12.0f events/s\n", "trace_pipe (text)", text[rounds / 2]);
	printf("  %-36s %12.0f events/s\n", "per_cpu/cpuN/trace_pipe_raw (pages)", raw[rounds / 2]);
	printf("  raw/text %.1fx (target >= 10): %s\n", raw[rounds / 2] / text[rounds / 2],
	       raw[rounds / 2] >= 10 * text[rounds / 2] ? "MET" : "NOT MET");
	uks_trace_destroy(tr);
	free(text);
	free(raw);
	return 0;
}
