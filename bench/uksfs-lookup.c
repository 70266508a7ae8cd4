// SPDX-License-Identifier: MIT
/*
 * uksfs path costs against the number of events, in one run:
 *
 *   create      one "e:..." write to dynamic_events, per eprobe
 *   lookup      stat of events/GROUP/EVENT/enable (API: a random event;
 *               FUSE: events spread over the group, none in the kernel's
 *               cache)
 *   list        listing events/GROUP (N entries), per entry
 *   filter      open + read + close of events/GROUP/EVENT/filter, every event
 *
 * for N = 250, 2000 and 10000 eprobes in one group, through the file API
 * (uks_vfs_*) and, where FUSE mounts, through a real mount served by this
 * process (stat(2), readdir(3), read(2)).  The last lines give the cost at
 * the largest N over the cost at the smallest: about 1 when a lookup costs
 * O(path depth) and a listing O(entries).  Lookups and listings are the
 * best of three rounds (FUSE round trips are wake-ups, and a loaded
 * machine delays some); FUSE reads at most 1000 filter files, spread
 * over the events.
 *
 * Usage: uksfs-lookup [N...]   (default 250 2000 10000)
 * UKS_BENCH_SCALE multiplies the number of lookups.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/trace.h>

#define UKS_CREATE_TRACE_POINTS
#include <uks/tracepoint.h>

UKS_TRACE_EVENT(uksfs_bench, hit,
	UKS_TP_PROTO(uint64_t a),
	UKS_TP_ARGS(a),
	UKS_TP_FIELDS((field, uint64_t, a, a)),
	UKS_TP_PRINTK("a=%lu", (unsigned long)REC->a))

#define MAX_SIZES	8
#define ROUNDS		3
#define FUSE_FILTER_READS	1000
#define TRACING		"sys/kernel/tracing"

enum { C_CREATE, C_LOOKUP, C_LIST, C_FILTER, NR_COSTS };
static const char *const cost_names[NR_COSTS] = { "create", "lookup", "list/entry", "filter" };

struct result {
	long n;
	double api[NR_COSTS];	/* ns per operation */
	double fuse[NR_COSTS];	/* 0: not measured */
};

static struct uks_vfs *vfs;
static struct uks_trace *tr;
static struct uks_server *srv;
static char mnt[64];

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static void must(int ret, const char *what)
{
	if (ret) {
		fprintf(stderr, "uksfs-lookup: %s: %s\n", what, strerror(ret < 0 ? -ret : ret));
		exit(1);
	}
}

static long scale(void)
{
	const char *s = getenv("UKS_BENCH_SCALE");
	long v = s ? atol(s) : 1;

	return v > 0 ? v : 1;
}

static int write_file(const char *path, const char *text, int flags)
{
	struct uks_vfs_file *f;
	ssize_t n = 0;
	int ret = uks_vfs_open(vfs, path, O_WRONLY | flags, &f);

	if (ret)
		return ret;
	if (*text)
		n = uks_vfs_write(f, text, strlen(text));
	uks_vfs_close(f);
	return n < 0 ? (int)n : 0;
}

static int count_entry(const char *name, const struct uks_vfs_stat *st, void *arg)
{
	(void)name;
	(void)st;
	++*(long *)arg;
	return 0;
}

static void best(double *slot, double v)
{
	if (*slot <= 0 || v < *slot)
		*slot = v;
}

/* A cheap deterministic sequence of event numbers. */
static long pick(unsigned long *seed, long n)
{
	*seed = *seed * 6364136223846793005ul + 1442695040888963407ul;
	return (long)((*seed >> 33) % (unsigned long)n);
}

static void measure_api(struct result *r, long lookups)
{
	char path[256], buf[4096];
	unsigned long seed = 1;
	struct uks_vfs_stat st;
	long entries;
	double t0;
	int reps;

	for (int round = 0; round < ROUNDS; round++) {
		t0 = now_ns();
		for (long i = 0; i < lookups; i++) {
			snprintf(path, sizeof(path), TRACING "/events/bench/e%ld/enable",
				 pick(&seed, r->n));
			must(uks_vfs_stat(vfs, path, &st), "stat");
		}
		best(&r->api[C_LOOKUP], (now_ns() - t0) / (double)lookups);
	}

	reps = r->n >= 2000 ? 3 : 20;
	for (int round = 0; round < ROUNDS; round++) {
		entries = 0;
		t0 = now_ns();
		for (int i = 0; i < reps; i++)
			must(uks_vfs_list(vfs, TRACING "/events/bench", count_entry, &entries),
			     "list");
		if (entries != reps * (r->n + 1)) {	/* the events and enable */
			fprintf(stderr, "uksfs-lookup: listed %ld entries, want %ld\n", entries,
				reps * (r->n + 1));
			exit(1);
		}
		best(&r->api[C_LIST], (now_ns() - t0) / (double)entries);
	}

	t0 = now_ns();
	for (long i = 0; i < r->n; i++) {
		snprintf(path, sizeof(path), TRACING "/events/bench/e%ld/filter", i);
		if (uks_vfs_read_all(vfs, path, buf, sizeof(buf)) < 0)
			must(-EIO, "read filter");
	}
	r->api[C_FILTER] = (now_ns() - t0) / (double)r->n;
}

static void measure_fuse(struct result *r, long lookups)
{
	char path[512], buf[4096];
	struct stat st;
	long entries, files;
	double t0;
	int reps;

	/*
	 * Names the kernel has not cached: each event once per round, and
	 * rounds apart by more than the entry timeout (a second), so every
	 * stat costs two FUSE lookups (the event's directory, its file).
	 */
	if (lookups > r->n)
		lookups = r->n;
	for (int round = 0; round < ROUNDS; round++) {
		const struct timespec pause = { 1, 200 * 1000 * 1000 };

		nanosleep(&pause, NULL);
		t0 = now_ns();
		for (long k = 0; k < lookups; k++) {
			snprintf(path, sizeof(path), "%s/" TRACING "/events/bench/e%ld/format",
				 mnt, k * r->n / lookups);
			must(stat(path, &st) ? -errno : 0, "stat through FUSE");
		}
		best(&r->fuse[C_LOOKUP], (now_ns() - t0) / (double)lookups);
	}

	reps = r->n >= 2000 ? 2 : 10;
	snprintf(path, sizeof(path), "%s/" TRACING "/events/bench", mnt);
	for (int round = 0; round < ROUNDS; round++) {
		entries = 0;
		t0 = now_ns();
		for (int i = 0; i < reps; i++) {
			DIR *d = opendir(path);
			struct dirent *de;

			if (!d)
				must(-errno, "opendir through FUSE");
			while ((de = readdir(d)))
				entries += de->d_name[0] != '.';
			closedir(d);
		}
		if (entries != reps * (r->n + 1)) {
			fprintf(stderr, "uksfs-lookup: readdir saw %ld entries, want %ld\n",
				entries, reps * (r->n + 1));
			exit(1);
		}
		best(&r->fuse[C_LIST], (now_ns() - t0) / (double)entries);
	}

	files = r->n < FUSE_FILTER_READS ? r->n : FUSE_FILTER_READS;
	{
		/* Uncached names here too: the lookups above cached some. */
		const struct timespec pause = { 1, 200 * 1000 * 1000 };

		nanosleep(&pause, NULL);
	}
	t0 = now_ns();
	for (long k = 0; k < files; k++) {
		long i = k * r->n / files;
		int fd;

		snprintf(path, sizeof(path), "%s/" TRACING "/events/bench/e%ld/filter", mnt, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			must(-errno, "open filter through FUSE");
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
	}
	r->fuse[C_FILTER] = (now_ns() - t0) / (double)files;
}

static void run_size(struct result *r)
{
	char line[128];
	double t0;

	must(write_file(TRACING "/dynamic_events", "", O_TRUNC), "clear dynamic_events");
	t0 = now_ns();
	for (long i = 0; i < r->n; i++) {
		snprintf(line, sizeof(line), "e:bench/e%ld uksfs_bench/hit a=$a", i);
		must(write_file(TRACING "/dynamic_events", line, O_APPEND), "create eprobe");
	}
	r->api[C_CREATE] = (now_ns() - t0) / (double)r->n;
	measure_api(r, 2000 * scale());
	if (srv)
		measure_fuse(r, 500 * scale());
}

static void print_row(const char *how, const double *c, long n)
{
	printf("%-5s N=%-6ld", how, n);
	for (int i = 0; i < NR_COSTS; i++)
		if (c[i] > 0)
			printf("  %s %9.2f us", cost_names[i], c[i] / 1e3);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct result res[MAX_SIZES] = { 0 };
	static const long defaults[] = { 250, 2000, 10000 };
	int nr = 0;

	for (int i = 1; i < argc && nr < MAX_SIZES; i++)
		res[nr++].n = atol(argv[i]);
	for (; !nr || (argc == 1 && nr < 3); nr++)
		res[nr].n = defaults[nr];
	for (int i = 0; i < nr; i++)
		if (res[i].n < 1)
			must(-EINVAL, "N");

	must(uks_trace_create(NULL, &tr), "trace instance");
	must(uks_vfs_create(&vfs), "tree");
	must(uks_vfs_add_tracefs(vfs, TRACING, tr), "tracefs");
	snprintf(mnt, sizeof(mnt), "/tmp/uksfs-lookup.XXXXXX");
	if (mkdtemp(mnt)) {
		int ret = uks_fuse_serve(vfs, mnt, NULL, &srv);

		if (ret) {
			printf("FUSE: not measured (%s)\n", strerror(-ret));
			srv = NULL;
			rmdir(mnt);
		}
	}
	for (int i = 0; i < nr; i++) {
		run_size(&res[i]);
		print_row("api", res[i].api, res[i].n);
		if (srv)
			print_row("fuse", res[i].fuse, res[i].n);
		fflush(stdout);
	}
	if (nr > 1) {
		const struct result *a = &res[0], *b = &res[nr - 1];

		printf("cost at N=%ld / cost at N=%ld:\n", b->n, a->n);
		for (int k = 0; k < NR_COSTS; k++) {
			printf("  %-10s api %6.2f", cost_names[k], b->api[k] / a->api[k]);
			if (srv && a->fuse[k] > 0)
				printf("  fuse %6.2f", b->fuse[k] / a->fuse[k]);
			printf("\n");
		}
	}
	must(write_file(TRACING "/dynamic_events", "", O_TRUNC), "clear dynamic_events");
	if (srv) {
		uks_server_stop(srv);
		rmdir(mnt);
	}
	uks_vfs_destroy(vfs);
	uks_trace_destroy(tr);
	return 0;
}
