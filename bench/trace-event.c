// SPDX-License-Identifier: MIT
/*
 * Event tracing costs, in one process and one run:
 *
 *   empty         the loop alone (subtracted from everything below)
 *   disabled      a disabled tracepoint call site (a load and a branch)
 *   enabled       one event with a 64-byte payload written to the ring buffer
 *   filtered      the same with a one-predicate filter that keeps it
 *   eprobe        the same plus an eprobe on the event fetching two fields
 *   marker        a trace_marker write through the tracefs API (for scale)
 *
 * against the real peer, LTTng-UST, in the same process and run:
 *
 *   lttng off     a disabled LTTng-UST tracepoint (bench:off)
 *   lttng on      bench:event64, the same seven uint64_t fields, recorded by
 *                 a real session: an lttng-sessiond started for the run
 *                 (or a running one reused, with a session of our own), a
 *                 snapshot session (LTTng's overwrite mode, mirroring uks's
 *                 default overwrite ring, so no consumer I/O in the loop),
 *                 per-UID buffers of 4 x 1 MiB sub-buffers per CPU (uks:
 *                 buffer_size_kb 4096 per CPU), and a snapshot taken at the
 *                 end to show the events were recorded.
 *
 * The run has a private LTTNG_HOME in /tmp (set before an exec of itself,
 * since liblttng-ust reads it in its constructor), removed at the end
 * unless UKS_BENCH_KEEP=1.  As root, lttng-sessiond and liblttng-ust meet
 * in /var/run/lttng whatever LTTNG_HOME says.
 *
 * and the readers: raw consumption (__uks_trace_rb_consume) and trace_pipe text,
 * in events per second.  Figures are medians of interleaved runs (every
 * variant, LTTng's too, once per round); uks/lttng ratios below 1 mean uks
 * is faster.  The targets are printed MET / NOT MET, and the
 * kernel ring buffer's published ~288 ns per event stays as an anchor.
 * Without LTTng-UST (headers at build time; lttng-sessiond and lttng at
 * run time) the bench runs and says "LTTng-UST: unavailable (reason)".
 * UKS_BENCH_SCALE multiplies the work.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

#include "trace/ring_buffer.h"
#include "trace/trace.h"

#ifndef UKS_HAVE_LTTNG_UST
#define UKS_HAVE_LTTNG_UST 0
#endif
#if UKS_HAVE_LTTNG_UST
#include <lttng/ust-version.h>
#include "trace-lttng-tp.h"
#endif

#include "bench_event64.h"

UKS_TRACE_EVENT(bench, off,
	UKS_TP_PROTO(uint64_t a),
	UKS_TP_ARGS(a),
	UKS_TP_FIELDS((field, uint64_t, a, a)),
	UKS_TP_PRINTK("a=%lu", (unsigned long)REC->a))

#define RUNS 7

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static long scale(void)
{
	const char *s = getenv("UKS_BENCH_SCALE");
	long v = s ? atol(s) : 1;

	return v > 0 ? v : 1;
}

static struct uks_trace *tr;
static long iters;

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "trace-event: %s: %s\n", what, strerror(-ret));
		exit(1);
	}
}

static __attribute__((noinline)) double run_empty(void)
{
	double t0 = now_ns();

	for (long i = 0; i < iters; i++)
		__asm__ __volatile__("" : : "r"(i) : "memory");
	return (now_ns() - t0) / iters;
}

static __attribute__((noinline)) double run_disabled(void)
{
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		uks_trace_bench_off((uint64_t)i);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return (now_ns() - t0) / iters;
}

static __attribute__((noinline)) double run_event(void)
{
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		uks_trace_bench_event64((uint64_t)i, 2, 3, 4, 5, 6, 7);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return (now_ns() - t0) / iters;
}

static double run_marker(void)
{
	struct uks_tracefs_file *f;
	double t0;
	long n = iters / 10;

	must(uks_tracefs_open(tr, "trace_marker", O_WRONLY, &f), "open trace_marker");
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		uks_tracefs_write(f, "hello marker 1234567890", 23);
	t0 = (now_ns() - t0) / n;
	uks_tracefs_close(f);
	return t0;
}

/* ------------------------------------------------------------------------
 * The LTTng-UST peer: a real session around the same loops.
 */
static char lttng_why[320];	/* why the peer is unavailable; "" if it is up */
static char lttng_note[160];	/* how it runs (own or reused sessiond, snapshot size) */

#if UKS_HAVE_LTTNG_UST
#define LTTNG_WAIT_MS 10000

static const char *lttng_dir;	/* private LTTNG_HOME: logs and snapshot output */
static char lttng_session[64];
static pid_t sessiond_pid;	/* our lttng-sessiond, 0 if we reuse one */
static bool lttng_started;
static volatile sig_atomic_t sessiond_ready;

static void on_sessiond_ready(int sig)
{
	sessiond_ready = 1;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000L };

	nanosleep(&ts, NULL);
}

/* The last line of the log @name in lttng_dir, for error messages. */
static const char *log_tail(const char *name)
{
	static char line[160];
	char path[PATH_MAX], buf[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", lttng_dir, name);
	line[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return line;
	while (fgets(buf, sizeof(buf), f))
		if (buf[0] != '\n')
			memcpy(line, buf, sizeof(buf));
	fclose(f);
	line[strcspn(line, "\n")] = '\0';
	return line;
}

/* Start argv with stdout/stderr appended to lttng_dir/@log; its pid or -errno. */
static pid_t spawn(const char *const argv[], const char *log)
{
	char path[PATH_MAX];
	pid_t pid;

	snprintf(path, sizeof(path), "%s/%s", lttng_dir, log);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int in = open("/dev/null", O_RDONLY);
		int out = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

		if (in >= 0)
			dup2(in, 0);
		if (out >= 0) {
			dup2(out, 1);
			dup2(out, 2);
		}
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

/* Run "lttng --no-sessiond ARGS..." to completion; its exit status or -1. */
static int lttng_run(const char *const argv[])
{
	int st;
	pid_t pid = spawn(argv, "lttng.log");

	if (pid < 0)
		return -1;
	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}
#define LTTNG(...) lttng_run((const char *const[]){ "lttng", "--no-sessiond", __VA_ARGS__, NULL })

static bool lttng_fail(const char *what, int status)
{
	snprintf(lttng_why, sizeof(lttng_why), "%s: %s%s%s", what,
		 status == 127 ? "command not found (scripts/deps.sh installs lttng-tools)" :
		 "failed", status == 127 ? "" : ": ", status == 127 ? "" : log_tail("lttng.log"));
	return false;
}

static bool start_sessiond(void)
{
	static const char *const argv[] = { "lttng-sessiond", "--no-kernel", "--sig-parent", NULL };
	struct sigaction sa = { .sa_handler = on_sessiond_ready };
	int st;

	sigaction(SIGUSR1, &sa, NULL);
	sessiond_pid = spawn(argv, "sessiond.log");
	if (sessiond_pid < 0) {
		sessiond_pid = 0;
		return lttng_fail("fork lttng-sessiond", -1);
	}
	for (int ms = 0; !sessiond_ready; ms += 10) {
		if (waitpid(sessiond_pid, &st, WNOHANG) == sessiond_pid) {
			sessiond_pid = 0;
			if (WIFEXITED(st) && WEXITSTATUS(st) == 127)
				snprintf(lttng_why, sizeof(lttng_why),
					 "lttng-sessiond not found (scripts/deps.sh installs lttng-tools)");
			else
				snprintf(lttng_why, sizeof(lttng_why),
					 "lttng-sessiond exited (status %#x): %s", st,
					 log_tail("sessiond.log"));
			return false;
		}
		if (ms >= LTTNG_WAIT_MS) {
			snprintf(lttng_why, sizeof(lttng_why),
				 "lttng-sessiond not ready after %d ms: %s", LTTNG_WAIT_MS,
				 log_tail("sessiond.log"));
			return false;
		}
		sleep_ms(10);
	}
	return true;
}

/*
 * Bring up the session.  The tracepoint provider registered with
 * liblttng-ust before main(); a sessiond started now wakes the library's
 * listener threads, which register this process, so "enabled" is awaited.
 */
static bool lttng_up(void)
{
	char out[PATH_MAX];
	int st;

	snprintf(lttng_session, sizeof(lttng_session), "uks-bench-%d", (int)getpid());
	snprintf(out, sizeof(out), "%s/snapshot", lttng_dir);
	if (LTTNG("list") == 0) {
		snprintf(lttng_note, sizeof(lttng_note),
			 "a running lttng-sessiond (session %s)", lttng_session);
	} else {
		if (!start_sessiond())
			return false;
		snprintf(lttng_note, sizeof(lttng_note), "own lttng-sessiond pid %d",
			 (int)sessiond_pid);
	}
	st = LTTNG("create", lttng_session, "--snapshot", "-o", out);
	if (st)
		return lttng_fail("lttng create --snapshot", st);
	lttng_started = true;
	st = LTTNG("enable-channel", "-u", "-s", lttng_session, "--buffers-uid", "--overwrite",
		   "--subbuf-size=1M", "--num-subbuf=4", "bench");
	if (st)
		return lttng_fail("lttng enable-channel", st);
	st = LTTNG("enable-event", "-u", "-s", lttng_session, "-c", "bench", "bench:event64");
	if (st)
		return lttng_fail("lttng enable-event", st);
	st = LTTNG("start", lttng_session);
	if (st)
		return lttng_fail("lttng start", st);
	for (int ms = 0; !lttng_ust_tracepoint_enabled(bench, event64); ms += 10) {
		if (ms >= LTTNG_WAIT_MS) {
			snprintf(lttng_why, sizeof(lttng_why),
				 "bench:event64 not enabled in this process %d ms after lttng start "
				 "(the app did not register with lttng-sessiond)", LTTNG_WAIT_MS);
			return false;
		}
		sleep_ms(10);
	}
	if (lttng_ust_tracepoint_enabled(bench, off)) {
		snprintf(lttng_why, sizeof(lttng_why),
			 "bench:off is enabled by another session; no disabled peer to measure");
		return false;
	}
	return true;
}

static off_t snapshot_bytes;

static int add_size(const char *path, const struct stat *st, int type, struct FTW *fb)
{
	if (type == FTW_F)
		snapshot_bytes += st->st_size;
	return 0;
}

static int remove_one(const char *path, const struct stat *st, int type, struct FTW *fb)
{
	remove(path);
	return 0;
}

/* Take a snapshot, so the figures are known to come from recorded events. */
static void lttng_snapshot(void)
{
	char out[PATH_MAX];

	if (LTTNG("snapshot", "record", "-s", lttng_session)) {
		snprintf(lttng_note + strlen(lttng_note), sizeof(lttng_note) - strlen(lttng_note),
			 "; snapshot record failed: %s", log_tail("lttng.log"));
		return;
	}
	snprintf(out, sizeof(out), "%s/snapshot", lttng_dir);
	nftw(out, add_size, 16, FTW_PHYS);
	snprintf(lttng_note + strlen(lttng_note), sizeof(lttng_note) - strlen(lttng_note),
		 "; snapshot at the end: %lld KiB of trace", (long long)snapshot_bytes / 1024);
}

/* Stop and destroy the session, end our sessiond, remove the directory. */
static void lttng_down(void)
{
	int st;

	if (lttng_started) {
		LTTNG("stop", lttng_session);
		LTTNG("destroy", lttng_session);
		lttng_started = false;
	}
	if (sessiond_pid > 0) {
		kill(sessiond_pid, SIGTERM);
		for (int ms = 0; waitpid(sessiond_pid, &st, WNOHANG) != sessiond_pid; ms += 10) {
			if (ms == 5000)
				kill(sessiond_pid, SIGKILL);
			sleep_ms(10);
		}
		sessiond_pid = 0;
	}
	if (lttng_dir && !getenv("UKS_BENCH_KEEP"))
		nftw(lttng_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/*
 * liblttng-ust reads LTTNG_HOME in its constructor, so a private one needs
 * a fresh exec: make the directory, set it, and run this program again.
 */
static void lttng_private_home(char **argv)
{
	char dir[] = "/tmp/uks-bench-lttng.XXXXXX";

	lttng_dir = getenv("UKS_BENCH_LTTNG_DIR");
	if (lttng_dir)
		return;
	if (!mkdtemp(dir)) {
		snprintf(lttng_why, sizeof(lttng_why), "mkdtemp: %s", strerror(errno));
		return;
	}
	setenv("UKS_BENCH_LTTNG_DIR", dir, 1);
	setenv("LTTNG_HOME", dir, 1);
	execv("/proc/self/exe", argv);
	snprintf(lttng_why, sizeof(lttng_why), "re-exec with LTTNG_HOME: %s", strerror(errno));
	rmdir(dir);
}

static void lttng_setup(char **argv)
{
	lttng_private_home(argv);
	if (lttng_why[0])
		return;
	atexit(lttng_down);
	if (!lttng_up()) {
		lttng_down();
		if (!lttng_why[0])
			snprintf(lttng_why, sizeof(lttng_why), "unknown failure");
	}
}

static __attribute__((noinline)) double run_lttng_disabled(void)
{
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		lttng_ust_tracepoint(bench, off, (uint64_t)i);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return (now_ns() - t0) / iters;
}

static __attribute__((noinline)) double run_lttng_event(void)
{
	double t0 = now_ns();

	for (long i = 0; i < iters; i++) {
		lttng_ust_tracepoint(bench, event64, (uint64_t)i, 2, 3, 4, 5, 6, 7);
		__asm__ __volatile__("" : : "r"(i) : "memory");
	}
	return (now_ns() - t0) / iters;
}
#define LTTNG_VERSION_TEXT "LTTng-UST " LTTNG_UST_VERSION
#else
static void lttng_setup(char **argv)
{
	snprintf(lttng_why, sizeof(lttng_why),
		 "built without it (pkg-config lttng-ust not found; scripts/deps.sh installs "
		 "liblttng-ust-dev)");
}

static void lttng_snapshot(void)
{
}

static double run_lttng_disabled(void)
{
	return NAN;
}

static double run_lttng_event(void)
{
	return NAN;
}
#define LTTNG_VERSION_TEXT "LTTng-UST"
#endif

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

enum {
	V_EMPTY, V_DISABLED, V_ENABLED, V_FILTERED, V_EPROBE, V_MARKER,
	V_LTTNG_DISABLED, V_LTTNG_ENABLED, NR_V
};
static const char *const names[NR_V] = {
	"empty loop", "disabled tracepoint", "enabled, 64-byte payload",
	"enabled + one-predicate filter", "enabled + eprobe (2 args)", "trace_marker write",
	"LTTng-UST disabled tracepoint", "LTTng-UST enabled, same 7 x u64",
};

static void setup(int v)
{
	static const char *const on = "1", *const off = "0";

	must(uks_tracefs_write_str(tr, "trace", "", UKS_TRACEFS_TRUNC), "clear");
	must(uks_tracefs_write_str(tr, "events/bench/event64/enable",
				   v >= V_ENABLED && v <= V_EPROBE ? on : off, 0), "enable");
	must(uks_tracefs_write_str(tr, "events/bench/event64/filter",
				   v == V_FILTERED ? "a != 123456789" : "0", 0), "filter");
	must(uks_tracefs_write_str(tr, "events/eprobes/ep/enable", v == V_EPROBE ? on : off, 0),
	     "eprobe");
	/* Each variant measures what it says: the call sites see the switch. */
	if (uks_trace_bench_event64_enabled() != (v >= V_ENABLED && v <= V_EPROBE) ||
	    uks_trace_bench_off_enabled()) {
		fprintf(stderr, "trace-event: %s: bench/event64 or bench/off in the wrong state\n",
			names[v]);
		exit(1);
	}
}

static double run(int v)
{
	setup(v);
	switch (v) {
	case V_EMPTY:
		return run_empty();
	case V_DISABLED:
		return run_disabled();
	case V_MARKER:
		return run_marker();
	case V_LTTNG_DISABLED:
		return run_lttng_disabled();
	case V_LTTNG_ENABLED:
		return run_lttng_event();
	default:
		return run_event();
	}
}

static void target(const char *what, double value, double limit, const char *unit)
{
	printf("  %-52s %8.2f %-3s (target <= %g): %s\n", what, value, unit, limit,
	       value <= limit ? "MET" : "NOT MET");
}

/* Reader throughput: fill the buffer, then drain it. */
static void readers(void)
{
	struct uks_tracefs_file *f;
	char buf[65536], rec[256];
	long n = 0, events = 0;
	double t0, raw, text;
	ssize_t got;

	setup(V_ENABLED);
	for (long i = 0; i < 20000; i++)
		uks_trace_bench_event64((uint64_t)i, 2, 3, 4, 5, 6, 7);
	t0 = now_ns();
	for (unsigned int cpu = 0; cpu < __uks_trace_rb_nr_cpus(tr->rb); cpu++)
		while (__uks_trace_rb_consume(tr->rb, cpu, rec, sizeof(rec), NULL) > 0)
			n++;
	raw = n / ((now_ns() - t0) / 1e9);

	for (long i = 0; i < 20000; i++)
		uks_trace_bench_event64((uint64_t)i, 2, 3, 4, 5, 6, 7);
	must(uks_tracefs_open(tr, "trace_pipe", O_RDONLY | O_NONBLOCK, &f), "open trace_pipe");
	t0 = now_ns();
	while ((got = uks_tracefs_read(f, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < got; i++)
			events += buf[i] == '\n';
	text = events / ((now_ns() - t0) / 1e9);
	uks_tracefs_close(f);
	printf("\nreaders (events of %ld consumed)\n", n);
	printf("  %-40s %12.0f events/s\n", "raw consume (__uks_trace_rb_consume)", raw);
	printf("  %-40s %12.0f events/s (%ld lines)\n", "trace_pipe text", text, events);
}

/*
 * One line of the uks vs LTTng-UST table: the ratio of the net costs.  Two
 * disabled sites are one load and one branch each, under 1 ns, where the
 * sign of the difference changes from run to run on a busy box; then the
 * line says so and gives the ratio of whole iterations, loop included.
 */
static void versus(const char *what, int u, int l, const double *net, const double *med)
{
	printf("  %-24s uks %7.2f ns  lttng %7.2f ns  uks/lttng ", what, net[u], net[l]);
	if (net[u] < 1 && net[l] < 1)
		printf("%.2fx per iteration, loop included (both < 1 ns: equal within noise)\n",
		       med[u] / med[l]);
	else
		printf("%.2fx\n", net[u] / net[l]);
}

int main(int argc, char **argv)
{
	double samples[NR_V][RUNS], med[NR_V], net[NR_V];
	bool lttng;

	lttng_setup(argv);
	lttng = !lttng_why[0];
	iters = 2000000 * scale();
	must(uks_trace_create(NULL, &tr), "create");
	must(uks_tracefs_write_str(tr, "buffer_size_kb", "4096", 0), "buffer_size_kb");
	must(uks_tracefs_write_str(tr, "dynamic_events", "e:ep bench/event64 x=$a y=$b:u32",
				   UKS_TRACEFS_APPEND), "eprobe");
	for (int r = 0; r < RUNS; r++)
		for (int v = 0; v < NR_V; v++)
			samples[v][r] = v >= V_LTTNG_DISABLED && !lttng ? NAN : run(v);
	for (int v = 0; v < NR_V; v++) {
		qsort(samples[v], RUNS, sizeof(double), cmp);
		med[v] = samples[v][RUNS / 2];
		net[v] = v == V_EMPTY ? med[v] : med[v] - med[V_EMPTY];
	}
	if (lttng)
		lttng_snapshot();
	printf("trace-event: ns per call, median of %d interleaved runs of %ld calls\n", RUNS,
	       iters);
	printf("  %-40s %10s %12s\n", "variant", "ns", "x kernel");
	for (int v = 0; v < NR_V; v++) {
		if (v >= V_LTTNG_DISABLED && !lttng)
			continue;
		printf("  %-40s %10.2f %12.3f\n", names[v], net[v], net[v] / 288.0);
	}
	printf("  (empty loop subtracted; x kernel: ratio to the kernel ring buffer's published\n"
	       "   ~288 ns per event, not measured here)\n\n");
	if (lttng) {
		printf("uks vs %s, measured above in the same run (%s)\n", LTTNG_VERSION_TEXT,
		       lttng_note);
		printf("  LTTng: snapshot session = overwrite mode like uks's default ring, per-UID\n"
		       "  buffers 4 x 1 MiB per CPU (uks: 4096 KiB per CPU); < 1.00x: uks is faster\n");
		versus("disabled tracepoint", V_DISABLED, V_LTTNG_DISABLED, net, med);
		versus("enabled event, 7 x u64", V_ENABLED, V_LTTNG_ENABLED, net, med);
		printf("\n");
	} else {
		printf("LTTng-UST: unavailable (%s)\n\n", lttng_why);
	}
	target("enabled event, 64-byte payload", net[V_ENABLED], 60, "ns");
	target("disabled tracepoint", net[V_DISABLED], 1, "ns");
	target("added cost of a one-predicate filter", med[V_FILTERED] - med[V_ENABLED], 30, "ns");
	target("added cost of an eprobe on the event", med[V_EPROBE] - med[V_ENABLED], 60, "ns");
	readers();
	must(uks_tracefs_write_str(tr, "events/eprobes/ep/enable", "0", 0), "eprobe off");
	uks_trace_destroy(tr);
	return 0;
}
