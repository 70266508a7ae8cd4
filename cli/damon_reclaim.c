// SPDX-License-Identifier: MIT
/*
 * uks damon reclaim -p PID...: DAMON_RECLAIM (6.12's mm/damon/reclaim.c,
 * Documentation/admin-guide/mm/damon/reclaim.rst) on processes instead of
 * physical memory.  One context on the given processes with one pageout
 * scheme: regions of at least a page, not accessed (nr_accesses 0) for
 * min_age or longer, under the time and size quotas of each reset
 * interval, the oldest first (age weight only), active while the system's
 * free memory rate is between the watermarks; the module parameters are
 * the options, under their names (underscores or dashes).  It runs until
 * SIGINT/SIGTERM, --duration or every process exits, and prints the
 * module's stats (nr_reclaim_tried_regions ...) and each process's VmRSS
 * before and after.
 *
 * The parameters the processes cannot take: monitor_region_start/end are
 * physical addresses in the module; here they bound the virtual range
 * (an addr filter leaves the rest out); skip_anon needs the anon filter,
 * which the virtual-address primitives do not have (refused, exit 2).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon.h>

#include "cli.h"
#include "damon.h"

#define MAX_PIDS	32

struct reclaim_args {
	unsigned long pids[MAX_PIDS];
	unsigned int nr_pids;
	const char *primitive;
	/* the module parameters, with 6.12's defaults */
	unsigned long min_age, quota_ms, quota_sz, quota_reset_interval_ms;
	unsigned long quota_mem_pressure_us, quota_autotune_feedback;
	unsigned long wmarks_interval, wmarks_high, wmarks_mid, wmarks_low;
	unsigned long sample_interval, aggr_interval, min_nr_regions, max_nr_regions;
	unsigned long monitor_region_start, monitor_region_end;
	double duration;
	bool verbose;
};

static volatile sig_atomic_t stop_requested;

static void on_signal(int sig)
{
	(void)sig;
	stop_requested = 1;
}

static void reclaim_usage(FILE *out)
{
	fputs("Usage: uks damon reclaim -p PID... [--duration SEC] [-v] [PARAMETERS]\n"
	      "\n"
	      "DAMON_RECLAIM on processes: page out their memory regions not accessed for\n"
	      "min_age, within the quotas, while the free memory rate is between the\n"
	      "watermarks.  Parameters (reclaim.rst's; '-' or '_'), with defaults:\n"
	      "  --min_age US (120000000)          --quota_ms MS (10)\n"
	      "  --quota_sz BYTES (134217728)      --quota_reset_interval_ms MS (1000)\n"
	      "  --quota_mem_pressure_us US (0: off)  --quota_autotune_feedback N (0: off)\n"
	      "  --wmarks_interval US (5000000)    --wmarks_high/--wmarks_mid/--wmarks_low\n"
	      "                                    PER_THOUSAND (500 400 200)\n"
	      "  --sample_interval US (5000)       --aggr_interval US (100000)\n"
	      "  --min_nr_regions N (10)           --max_nr_regions N (1000)\n"
	      "  --monitor_region_start ADDR, --monitor_region_end ADDR (virtual; default all)\n"
	      "  --skip_anon                       (refused: no anon filter on virtual addresses)\n"
	      "  --primitive NAME                  (default: the best one here)\n"
	      "Runs until ^C, --duration or every process exits; prints the stats\n"
	      "(nr_reclaim_tried_regions, bytes_reclaim_tried_regions, nr_reclaimed_regions,\n"
	      "bytes_reclaimed_regions, nr_quota_exceeds) and each process's VmRSS before and\n"
	      "after; -v prints them every second too.\n", out);
}

enum {
	O_MIN_AGE = 256, O_QUOTA_MS, O_QUOTA_SZ, O_QUOTA_RESET, O_QUOTA_PSI, O_QUOTA_FEEDBACK,
	O_WM_INTERVAL, O_WM_HIGH, O_WM_MID, O_WM_LOW, O_SAMPLE, O_AGGR, O_MIN_NR, O_MAX_NR,
	O_START, O_END, O_SKIP_ANON, O_DURATION, O_PRIMITIVE, NR_OPTS_END
};

/* Each option, spelled with underscores and with dashes. */
#define OPT2(u, d, v) { u, required_argument, NULL, v }, { d, required_argument, NULL, v }
static const struct option opts[] = {
	OPT2("min_age", "min-age", O_MIN_AGE),
	OPT2("quota_ms", "quota-ms", O_QUOTA_MS),
	OPT2("quota_sz", "quota-sz", O_QUOTA_SZ),
	OPT2("quota_reset_interval_ms", "quota-reset-interval-ms", O_QUOTA_RESET),
	OPT2("quota_mem_pressure_us", "quota-mem-pressure-us", O_QUOTA_PSI),
	OPT2("quota_autotune_feedback", "quota-autotune-feedback", O_QUOTA_FEEDBACK),
	OPT2("wmarks_interval", "wmarks-interval", O_WM_INTERVAL),
	OPT2("wmarks_high", "wmarks-high", O_WM_HIGH),
	OPT2("wmarks_mid", "wmarks-mid", O_WM_MID),
	OPT2("wmarks_low", "wmarks-low", O_WM_LOW),
	OPT2("sample_interval", "sample-interval", O_SAMPLE),
	OPT2("aggr_interval", "aggr-interval", O_AGGR),
	OPT2("min_nr_regions", "min-nr-regions", O_MIN_NR),
	OPT2("max_nr_regions", "max-nr-regions", O_MAX_NR),
	OPT2("monitor_region_start", "monitor-region-start", O_START),
	OPT2("monitor_region_end", "monitor-region-end", O_END),
	{ "skip_anon", no_argument, NULL, O_SKIP_ANON },
	{ "skip-anon", no_argument, NULL, O_SKIP_ANON },
	{ "duration", required_argument, NULL, O_DURATION },
	{ "primitive", required_argument, NULL, O_PRIMITIVE },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* A number as the module parameters take it (decimal or 0x hex, no sign). */
static bool parse_ulong(const char *s, unsigned long *v)
{
	char *end;

	if (*s < '0' || *s > '9')
		return false;
	errno = 0;
	*v = strtoul(s, &end, 0);
	return !errno && !*end;
}

static unsigned long *param_of(struct reclaim_args *a, int opt)
{
	unsigned long *p[] = {
		&a->min_age, &a->quota_ms, &a->quota_sz, &a->quota_reset_interval_ms,
		&a->quota_mem_pressure_us, &a->quota_autotune_feedback, &a->wmarks_interval,
		&a->wmarks_high, &a->wmarks_mid, &a->wmarks_low, &a->sample_interval,
		&a->aggr_interval, &a->min_nr_regions, &a->max_nr_regions,
		&a->monitor_region_start, &a->monitor_region_end,
	};

	return opt >= O_MIN_AGE && opt <= O_END ? p[opt - O_MIN_AGE] : NULL;
}

/* Return: 0 to run, -1 after --help, else the exit status. */
static int parse_args(int argc, char **argv, struct reclaim_args *a)
{
	int c;

	*a = (struct reclaim_args){
		.min_age = 120000000, .quota_ms = 10, .quota_sz = 128UL << 20,
		.quota_reset_interval_ms = 1000, .wmarks_interval = 5000000,
		.wmarks_high = 500, .wmarks_mid = 400, .wmarks_low = 200,
		.sample_interval = 5000, .aggr_interval = 100000,
		.min_nr_regions = 10, .max_nr_regions = 1000,
		.monitor_region_end = ~0UL,
	};
	optind = 1;
	while ((c = getopt_long(argc, argv, "p:vh", opts, NULL)) != -1) {
		unsigned long *p = param_of(a, c);

		if (p) {
			if (!parse_ulong(optarg, p)) {
				fprintf(stderr, "uks damon reclaim: bad number for --%s: %s\n",
					opts[2 * (c - O_MIN_AGE)].name, optarg);
				return 2;
			}
			continue;
		}
		switch (c) {
		case 'p': {
			unsigned long pid;

			if (!parse_ulong(optarg, &pid) || !pid || pid > INT_MAX ||
			    a->nr_pids == MAX_PIDS) {
				fprintf(stderr, "uks damon reclaim: bad -p %s\n", optarg);
				return 2;
			}
			a->pids[a->nr_pids++] = pid;
			break;
		}
		case 'v':
			a->verbose = true;
			break;
		case O_DURATION: {
			char *end;

			a->duration = strtod(optarg, &end);
			if (*end || !(a->duration > 0)) {
				fprintf(stderr, "uks damon reclaim: bad --duration %s\n", optarg);
				return 2;
			}
			break;
		}
		case O_PRIMITIVE:
			a->primitive = optarg;
			break;
		case O_SKIP_ANON:
			fprintf(stderr, "uks damon reclaim: --skip_anon needs DAMOS's anon filter, "
				"which only the physical-address operations have\n");
			return 2;
		case 'h':
			reclaim_usage(stdout);
			return -1;
		default:
			reclaim_usage(stderr);
			return 2;
		}
	}
	if (optind < argc || !a->nr_pids) {
		fprintf(stderr, "uks damon reclaim: give -p PID (and no other arguments)\n");
		reclaim_usage(stderr);
		return 2;
	}
	return 0;
}

/* 6.12's damon_reclaim scheme, from the parameters. */
static void reclaim_scheme(const struct reclaim_args *a, struct uks_damos_scheme *s)
{
	memset(s, 0, sizeof(*s));
	s->pattern.min_sz = (unsigned long)getpagesize();
	s->pattern.max_sz = ~0UL;
	s->pattern.min_nr_accesses = 0;
	s->pattern.max_nr_accesses = 0;
	s->pattern.min_age = a->aggr_interval ?
		(unsigned int)(a->min_age / a->aggr_interval > UINT_MAX ? UINT_MAX :
			       a->min_age / a->aggr_interval) : 0;
	s->pattern.max_age = UINT_MAX;
	s->action = UKS_DAMOS_PAGEOUT;
	s->quota.ms = a->quota_ms;
	s->quota.sz = a->quota_sz;
	s->quota.reset_interval_ms = a->quota_reset_interval_ms;
	s->quota.weight_sz = 0;
	s->quota.weight_nr_accesses = 0;
	s->quota.weight_age = 1;
	if (a->quota_mem_pressure_us)
		s->quota.goals[s->quota.nr_goals++] = (struct uks_damos_quota_goal){
			UKS_DAMOS_GOAL_SOME_MEM_PSI_US, a->quota_mem_pressure_us, 0 };
	if (a->quota_autotune_feedback)
		s->quota.goals[s->quota.nr_goals++] = (struct uks_damos_quota_goal){
			UKS_DAMOS_GOAL_USER_INPUT, 10000, a->quota_autotune_feedback };
	s->wmarks = (struct uks_damos_watermarks){ UKS_DAMOS_WMARK_FREE_MEM_RATE,
						   a->wmarks_interval, a->wmarks_high,
						   a->wmarks_mid, a->wmarks_low };
	if (a->monitor_region_start || a->monitor_region_end != ~0UL) {
		s->nr_filters = 1;
		s->filters[0] = (struct uks_damos_filter){ .type = UKS_DAMOS_FILTER_ADDR,
							   .matching = false,
							   .addr_start = a->monitor_region_start,
							   .addr_end = a->monitor_region_end };
	}
}

static long vm_rss_kb(unsigned long pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lu/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

static void print_stats(FILE *out, struct uks_damon_ctx *ctx)
{
	struct uks_damos_stats st = { 0 };
	unsigned long esz = 0;
	bool active = false;

	uks_damos_get_stats(ctx, 0, &st);
	uks_damos_get_state(ctx, 0, &active, &esz);
	fprintf(out, "nr_reclaim_tried_regions %lu\nbytes_reclaim_tried_regions %lu\n"
		"nr_reclaimed_regions %lu\nbytes_reclaimed_regions %lu\nnr_quota_exceeds %lu\n"
		"active %s\n", st.nr_tried, st.sz_tried, st.nr_applied, st.sz_applied,
		st.qt_exceeds, active ? "Y" : "N");
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_damon_reclaim(int argc, char **argv)
{
	struct reclaim_args a;
	struct uks_damos_scheme s;
	struct uks_damon_ctx *ctx;
	struct sigaction sa = { .sa_handler = on_signal };
	long rss_before[MAX_PIDS];
	double start, last_print;
	char why[256];
	int ret = parse_args(argc, argv, &a);

	if (ret)
		return ret < 0 ? 0 : ret;
	reclaim_scheme(&a, &s);
	if (uks_damos_check_scheme(&s, why, sizeof(why))) {
		fprintf(stderr, "uks damon reclaim: %s\n", why);
		return 2;
	}
	for (unsigned int i = 0; i < a.nr_pids; i++) {
		ret = uks_damon_may_act_on((pid_t)a.pids[i]);
		if (ret) {
			fprintf(stderr, "uks damon reclaim: -p %lu: %s\n", a.pids[i],
				ret == -ESRCH ? "no such process" : "not allowed to ptrace it");
			return 1;
		}
	}
	ret = uks_damon_ctx_create(&ctx);
	if (ret) {
		fprintf(stderr, "uks damon reclaim: %s\n", strerror(-ret));
		return 1;
	}
	ret = uks_damon_set_attrs(ctx, a.sample_interval, a.aggr_interval, 1000000,
				  a.min_nr_regions, a.max_nr_regions);
	if (ret) {
		fprintf(stderr, "uks damon reclaim: min_nr_regions must be at least 3 and at most "
			"max_nr_regions\n");
		uks_damon_ctx_destroy(ctx);
		return 2;
	}
	ret = uks_damon_set_primitive(ctx, a.primitive);
	if (!ret)
		ret = uks_damon_set_targets(ctx, a.pids, a.nr_pids);
	if (!ret)
		ret = uks_damos_add_scheme(ctx, &s) < 0 ? -EINVAL : 0;
	if (ret) {
		fprintf(stderr, "uks damon reclaim: %s\n",
			ret == -ENOENT ? "no such primitive" : strerror(-ret));
		uks_damon_ctx_destroy(ctx);
		return 1;
	}
	for (unsigned int i = 0; i < a.nr_pids; i++)
		rss_before[i] = vm_rss_kb(a.pids[i]);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = uks_damon_start(&ctx, 1);
	if (ret) {
		fprintf(stderr, "uks damon reclaim: start: %s\n", strerror(-ret));
		uks_damon_ctx_destroy(ctx);
		return 1;
	}
	fprintf(stderr, "uks damon reclaim: %s primitive, min_age %lu aggregations\n",
		uks_damon_primitive_name(ctx), (unsigned long)s.pattern.min_age);
	start = last_print = now_s();
	while (!stop_requested && uks_damon_is_running(ctx) &&
	       !(a.duration > 0 && now_s() - start >= a.duration)) {
		usleep(20000);
		if (a.verbose && now_s() - last_print >= 1.0) {
			last_print = now_s();
			fprintf(stderr, "-- %.1f s\n", last_print - start);
			print_stats(stderr, ctx);
		}
	}
	if (uks_damon_is_running(ctx))
		uks_damon_stop(&ctx, 1);
	print_stats(stdout, ctx);
	for (unsigned int i = 0; i < a.nr_pids; i++)
		printf("pid %lu VmRSS %ld kB -> %ld kB\n", a.pids[i], rss_before[i],
		       vm_rss_kb(a.pids[i]));
	uks_damon_ctx_destroy(ctx);
	return 0;
}
