// SPDX-License-Identifier: MIT
/*
 * libuks-malloc.so against its peers, each allocator a drop-in LD_PRELOAD
 * in a process of its own: glibc (no preload), jemalloc, mimalloc,
 * tcmalloc (minimal) and uks.
 *
 * Patterns (each run by "malloc-peers --worker PATTERN", which prints the
 * nanoseconds of its timed part and exits non-zero if a self-check fails):
 *
 *   pair64    malloc(64)/free in a hot loop: the per-thread fast path.
 *   free64    48 x malloc(64), then the 48 frees, repeated: only the frees
 *             are timed, by the TSC, leaving out runs a preemption hit
 *             (see run_free64()): the free fast path alone.
 *   allfree   100k x 64 B allocated, then all freed, repeated: slab/page
 *             refill and release, freelist walks over cold memory.
 *   prodcons  a producer thread allocates (16..512 B), a consumer thread
 *             frees, through an SPSC ring: remote frees, cross-thread
 *             return of memory, and the RSS that costs.
 *   larson    2 server threads replace random slots (8..1000 B) of their
 *             own 1000-slot arrays; every epoch the arrays pass to fresh
 *             threads, so objects are freed by threads that did not
 *             allocate them and thread caches die constantly.
 *   scratch   each of 2 threads frees an object the main thread allocated,
 *             then allocates/writes/frees 8 B repeatedly: passive false
 *             sharing (an allocator that hands both threads the same cache
 *             line is slow).
 *   mixed     a 20000-pointer working set replaced at random with a
 *             mostly-small size mix (to 64 KiB), calloc and realloc
 *             grow/shrink: general-purpose behaviour and fragmentation.
 *   grow      one buffer appended to in 64 KiB steps up to 128 MiB with
 *             realloc(), then halved back down: a log or a download read
 *             into memory.  Allocators that move a big block's pages with
 *             mremap() instead of copying its bytes keep this linear.
 *
 * Reading the results: every allocator runs each pattern R times
 * (UKS_BENCH_RUNS, default 7: with 3, the medians of this project's
 * loaded 2-CPU VM moved a ratio by up to 0.3 between identical runs), the
 * allocators interleaved round-robin with a rotating start so drift on the
 * box hits all of them alike, after one untimed warm-up round
 * (UKS_BENCH_WARMUP=0: none).  The time targets are judged on the median
 * of the per-round quotients (uks's time over the peer's in the same
 * round; see paired_ratio()), the quotient of the medians printed beside
 * it; on this VM every allocator's time in a pattern can move 1.5-2x
 * between the rounds of one invocation.  The table
 * gives median wall time of the timed part, its ratio to glibc and to
 * mimalloc (lower is better, < 1.00 is faster), the median peak RSS of the
 * whole worker process from wait4() and its ratio to glibc.  The ratios are
 * the result; absolute numbers depend on the box.  "malloc-peers PATTERN..."
 * runs only those patterns; UKS_BENCH_VERBOSE=1 lists every run's time
 * and RSS as it ends (to see a bimodal box).  UKS_BENCH_SCALE=N
 * multiplies the work, UKS_MALLOC_SO overrides the uks library path.
 * glibc's prodcons time is bimodal (its arena lock: ~0.3 s or ~2.5 s on
 * 2 CPUs), so there the ratio to mimalloc is the stable one.
 *
 * The single-threaded patterns (pair64, free64, allfree, mixed, grow) run pinned
 * to one CPU, the one the driver starts on or UKS_BENCH_CPU=N (=any: no
 * pinning): this project's VM has two vCPUs of different speeds, and
 * unpinned workers of mixed landed on either, glibc's alternating between
 * about 260 and 410 ms from one run to the next.  The threaded patterns
 * need both CPUs and are not pinned.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_cpu.h"

#include "malloc_patterns.h"

#define MAX_RUNS 31
#define PATHSZ (PATH_MAX + 64)

extern char **environ;

/* ------------------------------------------------------------ driver */
struct pattern {
	const char *name;
	uint64_t (*run)(void);
	bool threads;	/* runs threads: the worker is not pinned to one CPU */
};

static const struct pattern patterns[] = {
	{ "pair64", run_pair64, false },  { "free64", run_free64, false },
	{ "allfree", run_allfree, false },
	{ "prodcons", run_prodcons, true }, { "larson", run_larson, true },
	{ "scratch", run_scratch, true },  { "mixed", run_mixed, false },
	{ "grow", run_grow, false },
};
#define NPAT ((int)(sizeof(patterns) / sizeof(patterns[0])))

enum { A_GLIBC, A_JEMALLOC, A_MIMALLOC, A_TCMALLOC, A_UKS, NALLOC };

struct allocator {
	const char *name;
	char path[PATHSZ];	/* empty: no preload (glibc) */
	int present;
	double ms[NPAT][MAX_RUNS];
	double rss[NPAT][MAX_RUNS];	/* KiB */
	double med_ms[NPAT], med_rss[NPAT];
};

static struct allocator allocs[NALLOC];
static char self_exe[PATH_MAX];

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of @v[0..n), sorted in @tmp; @v keeps its run order. */
static double median(const double *v, long n, double *tmp)
{
	memcpy(tmp, v, (size_t)n * sizeof(*tmp));
	qsort(tmp, (size_t)n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

/*
 * The median over the rounds of uks's time over @peer's in the same round:
 * a round runs every allocator within a second or two, so a box that
 * drifts between a fast and a slow state over tens of seconds moves both
 * sides of each quotient alike, where a quotient of medians can take its
 * numerator from a slow round and its denominator from a fast one.
 */
static double paired_ratio(int p, int peer, long runs)
{
	double q[MAX_RUNS], tmp[MAX_RUNS];

	for (long r = 0; r < runs; r++)
		q[r] = allocs[A_UKS].ms[p][r] / allocs[peer].ms[p][r];
	return median(q, runs, tmp);
}

static long env_long(const char *name, long def, long max)
{
	const char *s = getenv(name);
	long v = s ? atol(s) : def;

	if (v <= 0)
		v = def;
	return v > max ? max : v;
}

/* The child's environment: ours without LD_PRELOAD, plus the allocator's. */
static char **child_env(const char *preload, char *buf, size_t bufsz)
{
	size_t n = 0, j = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + 2, sizeof(*env));
	if (!env)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11))
			env[j++] = environ[i];
	if (preload[0]) {
		snprintf(buf, bufsz, "LD_PRELOAD=%s", preload);
		env[j++] = buf;
	}
	env[j] = NULL;
	return env;
}

/* The CPU single-threaded workers run on (-1: anywhere); see the top. */
static int worker_cpu = -1;

/* bench_cpu(), or -1 with UKS_BENCH_CPU=any. */
static int choose_worker_cpu(void)
{
	const char *want = getenv("UKS_BENCH_CPU");

	return want && !strcmp(want, "any") ? -1 : bench_cpu();
}

/* Run one worker; 0 on success with *ns and *rss_kib filled in. */
static int run_worker(const struct allocator *al, const struct pattern *pat, double *ms,
		      double *rss_kib)
{
	const char *pattern = pat->name;
	char envbuf[PATHSZ + 16], out[64];
	char *argv[] = { self_exe, (char *)"--worker", (char *)pattern, NULL };
	char **env = child_env(al->path, envbuf, sizeof(envbuf));
	struct rusage ru;
	size_t len = 0;
	int fd[2], status;
	pid_t pid;
	ssize_t r;
	char *end;
	unsigned long long ns;

	if (!env || pipe(fd)) {
		perror("malloc-peers: pipe");
		free(env);
		return -1;
	}
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		if (!pat->threads && worker_cpu >= 0)
			bench_pin(worker_cpu);
		dup2(fd[1], STDOUT_FILENO);
		close(fd[0]);
		close(fd[1]);
		execve(self_exe, argv, env);
		_exit(127);
	}
	free(env);
	close(fd[1]);
	if (pid < 0) {
		perror("malloc-peers: fork");
		close(fd[0]);
		return -1;
	}
	while (len < sizeof(out) - 1) {
		r = read(fd[0], out + len, sizeof(out) - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	out[len] = '\0';
	close(fd[0]);
	while (wait4(pid, &status, 0, &ru) < 0)
		if (errno != EINTR) {
			perror("malloc-peers: wait4");
			return -1;
		}
	if (WIFSIGNALED(status)) {
		printf("FAIL: %s/%s: worker killed by signal %d (%s)\n", al->name,
		       pattern, WTERMSIG(status), strsignal(WTERMSIG(status)));
		return -1;
	}
	if (WEXITSTATUS(status)) {
		printf("FAIL: %s/%s: worker exited with status %d%s\n", al->name,
		       pattern, WEXITSTATUS(status),
		       WEXITSTATUS(status) == 2 ? " (self-check failed)" : "");
		return -1;
	}
	ns = strtoull(out, &end, 10);
	if (end == out || ns == 0) {
		printf("FAIL: %s/%s: worker printed no time\n", al->name, pattern);
		return -1;
	}
	*ms = (double)ns / 1e6;
	*rss_kib = (double)ru.ru_maxrss;
	return 0;
}

static void setup_allocators(void)
{
	static const char *const names[NALLOC] = { "glibc", "jemalloc", "mimalloc",
						   "tcmalloc", "uks" };
	static const char *const libs[NALLOC] = {
		"", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2",
		"/usr/lib/x86_64-linux-gnu/libmimalloc.so.2",
		"/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4", NULL,
	};
	const char *uks = getenv("UKS_MALLOC_SO");
	char guess[PATHSZ];

	for (int a = 0; a < NALLOC; a++) {
		allocs[a].name = names[a];
		if (libs[a])
			snprintf(allocs[a].path, sizeof(allocs[a].path), "%s", libs[a]);
	}
	if (uks && uks[0]) {
		snprintf(guess, sizeof(guess), "%s", uks);
	} else {
		char dir[PATH_MAX];
		char *slash;

		snprintf(dir, sizeof(dir), "%s", self_exe);
		slash = strrchr(dir, '/');
		if (slash)
			*slash = '\0';
		snprintf(guess, sizeof(guess), "%s/../libuks-malloc.so", dir);
	}
	if (!realpath(guess, allocs[A_UKS].path))
		snprintf(allocs[A_UKS].path, sizeof(allocs[A_UKS].path), "%s", guess);
	for (int a = 0; a < NALLOC; a++) {
		allocs[a].present = !allocs[a].path[0] || access(allocs[a].path, R_OK) == 0;
		if (!allocs[a].present)
			printf("skipped: %s (%s missing)\n", allocs[a].name, allocs[a].path);
	}
}

static void print_ratio(double num, double den, int ok)
{
	if (ok && den > 0)
		printf(" %10.2fx", num / den);
	else
		printf(" %11s", "n/a");
}

/* @of_medians: the quotient of the medians, shown beside a paired @ratio */
static void target(const char *pat, const char *what, double limit, double ratio,
		   double of_medians, int ok)
{
	if (!ok) {
		printf("  uks %-9s %-24s n/a (allocator missing or failed)\n", pat, what);
		return;
	}
	/* three decimals: 1.104 must not read as a met 1.10 */
	printf("  uks %-9s %-24s %-7s (%.3fx", pat, what, ratio <= limit ? "MET" : "NOT MET",
	       ratio);
	if (of_medians > 0)
		printf(" per round; %.3fx of the medians", of_medians);
	printf(")\n");
}

/* The index of the pattern called @name, or -1. */
static int pattern_index(const char *name)
{
	for (int p = 0; p < NPAT; p++)
		if (!strcmp(name, patterns[p].name))
			return p;
	return -1;
}

/* Is pattern @p one of the command line's (all when there are none)? */
static int wanted(int p, int argc, char **argv)
{
	if (argc < 2)
		return 1;
	for (int i = 1; i < argc; i++)
		if (pattern_index(argv[i]) == p)
			return 1;
	return 0;
}

static int driver(int argc, char **argv)
{
	long runs = env_long("UKS_BENCH_RUNS", 7, MAX_RUNS);
	const char *w = getenv("UKS_BENCH_WARMUP"), *v = getenv("UKS_BENCH_VERBOSE");
	long warmup = w && !strcmp(w, "0") ? 0 : 1;
	int verbose = v && v[0] && strcmp(v, "0");
	int failed[NALLOC][NPAT] = { { 0 } }, nfail = 0, order[NALLOC], n = 0;

	if (!realpath("/proc/self/exe", self_exe)) {
		perror("malloc-peers: /proc/self/exe");
		return 1;
	}
	setup_allocators();
	for (int a = 0; a < NALLOC; a++)
		if (allocs[a].present)
			order[n++] = a;
	worker_cpu = choose_worker_cpu();
	printf("malloc-peers: %ld run(s) per allocator and pattern, scale %ld, uks = %s\n",
	       runs, scale, allocs[A_UKS].present ? allocs[A_UKS].path : "(missing)");
	if (worker_cpu >= 0)
		printf("single-threaded patterns run on CPU %d (UKS_BENCH_CPU=N picks, =any pins none)\n",
		       worker_cpu);
	else
		printf("no worker is pinned to a CPU\n");
	for (int p = 0; p < NPAT; p++) {
		int g, m;

		if (!wanted(p, argc, argv))
			continue;
		/* round -1 is the warm-up: run, checked, not counted */
		for (long r = -warmup; r < runs; r++)
			for (int k = 0; k < n; k++) {
				int a = order[(k + r + n) % n];	/* rotate the start each round */
				double ms, rss;

				if (failed[a][p])
					continue;
				if (run_worker(&allocs[a], &patterns[p], &ms, &rss)) {
					failed[a][p] = 1;
					nfail++;
					continue;
				}
				if (verbose && r < 0)
					printf("  warm-up %-9s %-9s %8.1f ms %8.0f KiB\n",
					       patterns[p].name, allocs[a].name, ms, rss);
				else if (verbose)
					printf("  run %-4ld %-9s %-9s %8.1f ms %8.0f KiB\n", r,
					       patterns[p].name, allocs[a].name, ms, rss);
				if (r >= 0) {
					allocs[a].ms[p][r] = ms;
					allocs[a].rss[p][r] = rss;
				}
			}
		for (int k = 0; k < n; k++) {
			struct allocator *al = &allocs[order[k]];
			double sorted[MAX_RUNS];

			if (failed[order[k]][p])
				continue;
			al->med_ms[p] = median(al->ms[p], runs, sorted);
			al->med_rss[p] = median(al->rss[p], runs, sorted);
		}
		g = !failed[A_GLIBC][p];
		m = allocs[A_MIMALLOC].present && !failed[A_MIMALLOC][p];
		printf("\n%s\n  %-10s %10s %11s %11s %14s %11s\n", patterns[p].name,
		       "allocator", "median ms", "vs glibc", "vs mimalloc", "peak RSS KiB",
		       "RSS/glibc");
		for (int a = 0; a < NALLOC; a++) {
			struct allocator *al = &allocs[a];

			if (!al->present)
				continue;
			if (failed[a][p]) {
				printf("  %-10s %10s\n", al->name, "FAILED");
				continue;
			}
			printf("  %-10s %10.1f", al->name, al->med_ms[p]);
			print_ratio(al->med_ms[p], allocs[A_GLIBC].med_ms[p], g);
			print_ratio(al->med_ms[p], allocs[A_MIMALLOC].med_ms[p], m);
			printf(" %14.0f", al->med_rss[p]);
			print_ratio(al->med_rss[p], allocs[A_GLIBC].med_rss[p], g);
			printf("\n");
		}
	}

	printf("\ntargets (uks)\n");
	for (int p = 0; p < NPAT; p++) {
		const char *nm = patterns[p].name;
		int u = allocs[A_UKS].present && !failed[A_UKS][p];
		int g = u && !failed[A_GLIBC][p];
		int m = u && allocs[A_MIMALLOC].present && !failed[A_MIMALLOC][p];
		const struct allocator *ua = &allocs[A_UKS];

		if (!wanted(p, argc, argv) ||
		    (strcmp(nm, "larson") && strcmp(nm, "prodcons") && strcmp(nm, "mixed")))
			continue;
		target(nm, "time <= 1.1x mimalloc", 1.1, m ? paired_ratio(p, A_MIMALLOC, runs) : 0,
		       m ? ua->med_ms[p] / allocs[A_MIMALLOC].med_ms[p] : 0, m);
		target(nm, "time <= 0.8x glibc", 0.8, g ? paired_ratio(p, A_GLIBC, runs) : 0,
		       g ? ua->med_ms[p] / allocs[A_GLIBC].med_ms[p] : 0, g);
		target(nm, "peak RSS <= 1.2x glibc", 1.2,
		       g ? ua->med_rss[p] / allocs[A_GLIBC].med_rss[p] : 0, 0, g);
	}
	if (nfail) {
		printf("\nmalloc-peers: %d worker failure(s):", nfail);
		for (int a = 0; a < NALLOC; a++)
			for (int p = 0; p < NPAT; p++)
				if (failed[a][p])
					printf(" %s/%s", allocs[a].name, patterns[p].name);
		printf("\n");
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	scale = env_long("UKS_BENCH_SCALE", 1, 1000000);
	if (argc == 3 && !strcmp(argv[1], "--worker")) {
		int p = pattern_index(argv[2]);

		if (p < 0) {
			fprintf(stderr, "malloc-peers: unknown pattern '%s'\n", argv[2]);
			return 1;
		}
		/* a deadlocked worker dies and is reported */
		alarm((unsigned)(60 * (scale < 1000 ? scale : 1000)));
		printf("%llu\n", (unsigned long long)patterns[p].run());
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		if (pattern_index(argv[i]) >= 0)
			continue;
		fprintf(stderr, "usage: %s [PATTERN...] | --worker PATTERN\npatterns:", argv[0]);
		for (int p = 0; p < NPAT; p++)
			fprintf(stderr, " %s", patterns[p].name);
		fprintf(stderr, "\n");
		return 1;
	}
	return driver(argc, argv);
}
