// SPDX-License-Identifier: MIT
/*
 * What a trigger costs on its event's hit path, in one process and run,
 * rounds interleaved, medians per variant, one CPU (UKS_BENCH_CPU):
 *
 *   plain         one enabled event, 64-byte payload, no trigger
 *   traceon       the same with a "traceon" trigger (tracing is on: the
 *                 trigger runs and changes nothing), fired before the record
 *   traceon if    "traceon if a == 1" that never matches: the record is
 *                 made first and the trigger's filter runs on it
 *   soft traceon  the event not enabled, only the "traceon" trigger: the
 *                 probe runs the trigger and writes nothing
 *
 * Each line prints ns per event with the loop subtracted, and the delta
 * and ratio against plain; the target is at most +30 ns for one trigger.
 * UKS_BENCH_SCALE multiplies the work.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

#include "bench_cpu.h"

#include "bench_event64.h"

#define ROUNDS		9
#define EVENT		"events/bench/event64/"

enum { V_EMPTY, V_PLAIN, V_TRACEON, V_TRACEON_IF, V_SOFT, NR_V };
static const char *const names[NR_V] = {
	"empty loop", "plain enabled event", "+ traceon trigger",
	"+ traceon if a == 1 (no match)", "soft: traceon only, not enabled",
};

static struct uks_trace *tr;
static long iters;

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "trace-trigger: %s: %s\n", what, strerror(-ret));
		exit(1);
	}
}

static void setup(int v)
{
	must(uks_tracefs_write_str(tr, "trace", "", UKS_TRACEFS_TRUNC), "clear");
	must(uks_tracefs_write_str(tr, EVENT "trigger", "!traceon", 0), "untrigger");
	must(uks_tracefs_write_str(tr, EVENT "enable", v == V_PLAIN || v == V_TRACEON ||
				   v == V_TRACEON_IF ? "1" : "0", 0), "enable");
	if (v == V_TRACEON || v == V_SOFT)
		must(uks_tracefs_write_str(tr, EVENT "trigger", "traceon", 0), "trigger");
	if (v == V_TRACEON_IF)
		must(uks_tracefs_write_str(tr, EVENT "trigger", "traceon if a == 1", 0), "trigger");
}

static __attribute__((noinline)) double run(int v)
{
	double t0;

	setup(v);
	t0 = now_ns();
	for (long i = 2; i < iters + 2; i++) {
		if (v != V_EMPTY)
			uks_trace_bench_event64((uint64_t)i, 2, 3, 4, 5, 6, 7);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return (now_ns() - t0) / iters;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int main(void)
{
	const char *s = getenv("UKS_BENCH_SCALE");
	double t[NR_V][ROUNDS], med[NR_V];
	int cpu = bench_cpu();

	if (cpu < 0 || bench_pin(cpu)) {
		fprintf(stderr, "trace-trigger: cannot run on the chosen CPU\n");
		return 1;
	}
	iters = 2000000L * (s && atol(s) > 0 ? atol(s) : 1);
	must(uks_trace_create(NULL, &tr), "create");
	must(uks_tracefs_write_str(tr, "buffer_size_kb", "4096", 0), "buffer_size_kb");
	run(V_PLAIN);	/* warm up: pages, probe arrays */
	for (int r = 0; r < ROUNDS; r++)
		for (int v = 0; v < NR_V; v++)
			t[v][r] = run(v);
	for (int v = 0; v < NR_V; v++) {
		qsort(t[v], ROUNDS, sizeof(double), cmp);
		med[v] = t[v][ROUNDS / 2];
	}
	printf("trace-trigger: CPU %d, %ld events per variant, %d rounds, medians\n", cpu, iters,
	       ROUNDS);
	printf("  %-34s %9s %10s %8s\n", "variant", "ns/event", "vs plain", "ratio");
	for (int v = V_PLAIN; v < NR_V; v++) {
		double net = med[v] - med[V_EMPTY], base = med[V_PLAIN] - med[V_EMPTY];

		printf("  %-34s %9.2f %+9.2f %8.3f\n", names[v], net, net - base, net / base);
	}
	for (int v = V_TRACEON; v <= V_TRACEON_IF; v++) {
		double d = med[v] - med[V_PLAIN];

		printf("  target: %s <= +30 ns: %+.2f ns %s\n", names[v], d,
		       d <= 30 ? "MET" : "NOT MET");
	}
	uks_trace_destroy(tr);
	return 0;
}
