// SPDX-License-Identifier: MIT
/*
 * uks damon report raw|heats|wss: damo's (v1.0.0) reports of a record
 * file, printed as damo prints them.  The computations are the library's
 * (lib/damon/record/report.c); this file parses damo's options and prints.
 *
 * Options take damo's spellings (--abs_addr, --time_range S E, ...) and
 * the same with dashes (--abs-addr, --time-range); the file is -i FILE or
 * the last argument (default damon.data).
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/damon_record.h>
#include <uks/slab.h>

#include "cli.h"
#include "damon.h"

static void report_usage(FILE *out)
{
	fputs("Usage: uks damon report raw [--raw_number] [FILE]\n"
	      "       uks damon report heats [--tid ID] [--resol TIME SPACE] [--tres N] [--ares N]\n"
	      "             [--time_range START END] [--address_range START END]\n"
	      "             [--abs_time] [--abs_addr] [--guide]\n"
	      "             [--heatmap stdout|FILE.png|FILE.svg] [--stdout_heatmap_color\n"
	      "             gray|flame|emotion] [FILE]\n"
	      "       uks damon report wss [--range START STOP STEP] [--acc_thres N]\n"
	      "             [--sz_thres N] [--sortby size|time] [--nr_cols_bar N]\n"
	      "             [--work_time US] [--exclude_samples N] [--all_wss] [--raw_number]\n"
	      "             [FILE]\n"
	      "       uks damon report nr_regions [--range START STOP STEP] [--sortby size|time]\n"
	      "             [FILE]\n"
	      "\n"
	      "damo's reports of a record file (default damon.data; also -i FILE), in any\n"
	      "of damo's formats: json_compressed, json, binary, or perf script text.\n"
	      "nr_regions: the distribution of the snapshots' region counts per target,\n"
	      "past the first 20 snapshots (default percentiles 0 25 50 75 100).\n"
	      "heats: default resolution 500x500, 40x80 (rows of time, columns of space)\n"
	      "for --heatmap stdout, the ASCII heat map; PNG and SVG have axes and a scale.\n"
	      "A file cut inside an entry is reported up to the cut, with a warning; a\n"
	      "corrupt one is an error naming the byte offset and the reason.\n",
	      out);
}

enum {
	O_RAWNUM = 256, O_TID, O_RESOL, O_TRES, O_ARES, O_TRANGE, O_ARANGE, O_ABST, O_ABSA,
	O_GUIDE, O_HEATMAP, O_COLOR, O_RANGE, O_ACC, O_SZ, O_SORT, O_COLS, O_ALL, O_WORK,
	O_INPUT, O_EXCL,
};

#define OPT2(a, b, arg, v) { a, arg, NULL, v }, { b, arg, NULL, v }

static const struct option report_opts[] = {
	OPT2("raw_number", "raw-number", no_argument, O_RAWNUM),
	{ "tid", required_argument, NULL, O_TID },
	{ "resol", required_argument, NULL, O_RESOL },
	{ "tres", required_argument, NULL, O_TRES },
	{ "ares", required_argument, NULL, O_ARES },
	OPT2("time_range", "time-range", required_argument, O_TRANGE),
	OPT2("address_range", "address-range", required_argument, O_ARANGE),
	OPT2("abs_time", "abs-time", no_argument, O_ABST),
	OPT2("abs_addr", "abs-addr", no_argument, O_ABSA),
	{ "guide", no_argument, NULL, O_GUIDE },
	{ "heatmap", required_argument, NULL, O_HEATMAP },
	OPT2("stdout_heatmap_color", "stdout-heatmap-color", required_argument, O_COLOR),
	{ "range", required_argument, NULL, O_RANGE },
	OPT2("acc_thres", "acc-thres", required_argument, O_ACC),
	OPT2("sz_thres", "sz-thres", required_argument, O_SZ),
	{ "sortby", required_argument, NULL, O_SORT },
	OPT2("nr_cols_bar", "nr-cols-bar", required_argument, O_COLS),
	OPT2("all_wss", "all-wss", no_argument, O_ALL),
	OPT2("work_time", "work-time", required_argument, O_WORK),
	OPT2("exclude_samples", "exclude-samples", required_argument, O_EXCL),
	{ "input", required_argument, NULL, O_INPUT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

struct report_args {
	const char *input;
	bool raw_number, abs_time, abs_addr, guide, all_wss, sort;
	unsigned int given;
	uint64_t tid;
	unsigned int tres, ares;
	bool resol_given;
	int64_t tmin, tmax;
	uint64_t amin, amax;
	const char *heatmap, *color;
	long range[3];
	unsigned long acc_thres, sz_thres, work_time, exclude_samples;
	int nr_cols_bar;
};

/* damo's nargs=N options: the value and the next N-1 arguments */
static int take_nums(int argc, char **argv, int n, long long *out)
{
	const char *first = optarg;

	for (int i = 0; i < n; i++) {
		const char *s = i ? (optind < argc ? argv[optind++] : NULL) : first;
		char *end;

		if (!s || !*s)
			return -1;
		errno = 0;
		out[i] = strtoll(s, &end, 0);
		if (*end || errno) {
			unsigned long long u = strtoull(s, &end, 0);

			if (*end || errno)
				return -1;
			out[i] = (long long)u;
		}
	}
	return 0;
}

/* A 40000x40000 map allocated 12.8 GB and ground on; damo's default is 500x500. */
#define MAX_RESOL	100000
#define MAX_PIXELS	(64U << 20)

static int parse_report(int argc, char **argv, struct report_args *a)
{
	long long v[3];
	int c;

	memset(a, 0, sizeof(*a));
	a->input = "damon.data";
	a->tres = 500;
	a->ares = 500;
	a->color = "gray";
	a->range[0] = 0;
	a->range[1] = 101;
	a->range[2] = 25;
	a->acc_thres = 1;
	a->sz_thres = 1;
	a->work_time = 1;
	a->exclude_samples = 20;
	a->sort = true;
	a->nr_cols_bar = 59;
	optind = 1;
	while ((c = getopt_long(argc, argv, "i:r:t:s:h", report_opts, NULL)) != -1) {
		switch (c) {
		case O_RAWNUM: a->raw_number = true; break;
		case O_ABST: a->abs_time = true; break;
		case O_ABSA: a->abs_addr = true; break;
		case O_GUIDE: a->guide = true; break;
		case O_ALL: a->all_wss = true; break;
		case O_HEATMAP: a->heatmap = optarg; break;
		case O_COLOR: a->color = optarg; break;
		case 'i':
		case O_INPUT: a->input = optarg; break;
		case O_TID:
			if (take_nums(argc, argv, 1, v))
				goto bad;
			a->tid = (uint64_t)v[0];
			a->given |= UKS_DAMON_HEATS_TID;
			break;
		case O_RESOL:
			if (take_nums(argc, argv, 2, v) || v[0] <= 0 || v[1] <= 0 ||
			    v[0] > MAX_RESOL || v[1] > MAX_RESOL)
				goto bad;
			a->tres = (unsigned int)v[0];
			a->ares = (unsigned int)v[1];
			a->resol_given = true;
			break;
		case O_TRES:
		case O_ARES:
			if (take_nums(argc, argv, 1, v) || v[0] <= 0 || v[0] > MAX_RESOL)
				goto bad;
			*(c == O_TRES ? &a->tres : &a->ares) = (unsigned int)v[0];
			a->resol_given = true;
			break;
		case O_TRANGE:
			if (take_nums(argc, argv, 2, v))
				goto bad;
			a->tmin = v[0];
			a->tmax = v[1];
			a->given |= UKS_DAMON_HEATS_TIME;
			break;
		case O_ARANGE:
			if (take_nums(argc, argv, 2, v))
				goto bad;
			a->amin = (uint64_t)v[0];
			a->amax = (uint64_t)v[1];
			a->given |= UKS_DAMON_HEATS_ADDR;
			break;
		case 'r':
		case O_RANGE:
			if (take_nums(argc, argv, 3, v) || v[2] <= 0 || v[0] < 0)
				goto bad;
			for (int i = 0; i < 3; i++)
				a->range[i] = (long)v[i];
			break;
		case 't':
		case O_ACC:
		case O_SZ:
		case O_COLS:
		case O_WORK:
		case O_EXCL:
			if (take_nums(argc, argv, 1, v) || v[0] < 0)
				goto bad;
			if (c == O_SZ)
				a->sz_thres = (unsigned long)v[0];
			else if (c == O_COLS)
				a->nr_cols_bar = (int)v[0];
			else if (c == O_WORK)
				a->work_time = (unsigned long)v[0];
			else if (c == O_EXCL)
				a->exclude_samples = (unsigned long)v[0];
			else
				a->acc_thres = (unsigned long)v[0];
			break;
		case 's':
		case O_SORT:
			if (strcmp(optarg, "size") && strcmp(optarg, "time"))
				goto bad;
			a->sort = !strcmp(optarg, "size");
			break;
		case 'h':
			report_usage(stdout);
			return -1;
		default:
			goto bad;
		}
	}
	if (optind < argc)
		a->input = argv[optind++];
	if (optind < argc)
		goto bad;
	if ((uint64_t)a->tres * a->ares > MAX_PIXELS) {
		fprintf(stderr, "uks damon report: a %ux%u map is more than %u M cells\n", a->tres,
			a->ares, MAX_PIXELS >> 20);
		return 2;
	}
	return 0;
bad:
	report_usage(stderr);
	return 2;
}

/* ---------------------------------------------------------------- raw */

static int report_raw(const struct uks_damon_record *rec, const struct report_args *a)
{
	struct uks_damon_rec_targets tg;
	char b1[64];
	int ret = uks_damon_record_group(rec, &tg);

	if (ret) {
		fprintf(stderr, "uks damon report: %s\n", strerror(-ret));
		return 1;
	}
	for (size_t t = 0; t < tg.nr; t++) {
		int64_t base = rec->snapshots[tg.order[tg.first[t]]].start_ns;

		printf("base_time_absolute: %s\n\n",
		       damon_fmt_time(b1, sizeof(b1), (double)base, a->raw_number));
		for (size_t k = tg.first[t]; k < tg.first[t + 1]; k++) {
			const struct uks_damon_rec_snapshot *s = &rec->snapshots[tg.order[k]];

			printf("monitoring_start:    %16s\n",
			       damon_fmt_time(b1, sizeof(b1), (double)(s->start_ns - base),
					      a->raw_number));
			printf("monitoring_end:      %16s\n",
			       damon_fmt_time(b1, sizeof(b1), (double)(s->end_ns - base),
					      a->raw_number));
			printf("monitoring_duration: %16s\n",
			       damon_fmt_time(b1, sizeof(b1), (double)(s->end_ns - s->start_ns),
					      a->raw_number));
			printf("target_id: %llu\n", (unsigned long long)s->target_id);
			printf("nr_regions: %u\n", s->nr_regions);
			for (uint32_t j = 0; j < s->nr_regions; j++) {
				const struct uks_damon_rec_region *r = &s->regions[j];

				/* the reader refuses end < start: the size does not wrap */
				printf("%012llx-%012llx(%12s):\t%u\n", (unsigned long long)r->start,
				       (unsigned long long)r->end,
				       damon_fmt_bytes(b1, sizeof(b1), r->end - r->start,
						       a->raw_number),
				       r->nr_accesses);
			}
			printf("\n");
		}
	}
	uks_damon_record_group_free(&tg);
	return 0;
}

/* -------------------------------------------------------------- heats */

static void print_guides(const struct uks_damon_record *rec)
{
	struct uks_damon_guide *g;
	size_t nr;
	char b[64];

	if (uks_damon_guides(rec, &g, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		printf("target_id:%llu\n", (unsigned long long)g[i].target_id);
		printf("time: %lld-%lld (%s)\n", (long long)g[i].start_ns, (long long)g[i].end_ns,
		       damon_fmt_time(b, sizeof(b), (double)(g[i].end_ns - g[i].start_ns), false));
		for (size_t k = 0; k < g[i].nr_ranges; k++)
			printf("region\t%2zu: %020llu-%020llu (%s)\n", k,
			       (unsigned long long)g[i].ranges[2 * k],
			       (unsigned long long)g[i].ranges[2 * k + 1],
			       damon_fmt_sz(b, sizeof(b),
					    (double)(g[i].ranges[2 * k + 1] - g[i].ranges[2 * k]),
					    false));
	}
	uks_damon_guides_free(g, nr);
}

static const int colorsets[3][2][11] = {
	{ { 232, 232, 232, 232, 232, 232, 232, 232, 232, 232 },
	  { 237, 239, 241, 243, 245, 247, 249, 251, 253, 255 } },
	{ { 232, 1, 1, 2, 3, 3, 20, 21, 26, 27, 27 },
	  { 239, 235, 237, 239, 243, 245, 247, 249, 251, 255 } },
	{ { 232, 234, 20, 21, 26, 2, 3, 1, 1, 1 },
	  { 239, 235, 237, 239, 243, 245, 247, 249, 251, 255 } },
};
static const int colorset_len[3][2] = { { 10, 10 }, { 11, 10 }, { 10, 10 } };

/* Python's list[idx] with a negative idx counting from the end */
static int pyidx(const int *list, int len, int idx)
{
	if (idx < 0)
		idx += len;
	if (idx < 0)
		idx = 0;
	if (idx >= len)
		idx = len - 1;
	return list[idx];
}

static int ascii_heatmap(const struct uks_damon_heatmap *hm, const char *color)
{
	size_t n = (size_t)hm->tres * hm->ares;
	double hi = 0, lo = 0, unit;
	bool have_hi = false, have_lo = false;
	int cs = !strcmp(color, "flame") ? 1 : !strcmp(color, "emotion") ? 2 : 0;
	char b1[64], b2[64];

	if (cs == 0 && strcmp(color, "gray")) {
		fprintf(stderr, "uks damon report: unknown color set %s\n", color);
		return 2;
	}
	/*
	 * The lowest and highest heat.  damo v1.0.0 tested "not lowest_heat",
	 * so a 0 was replaced by the next pixel's heat and zero pixels got
	 * negative levels (an IndexError); later damo tests for None, as here.
	 */
	for (size_t i = 0; i < n; i++) {
		double h = hm->heat[i];

		if (!have_hi || hi < h)
			hi = h;
		if (!have_lo || lo > h)
			lo = h;
		have_hi = have_lo = true;
	}
	if (!have_hi)
		return 0;
	unit = (hi + 1 - lo) / 9;
	for (unsigned int t = 0; t < hm->tres; t++) {
		for (unsigned int x = 0; x < hm->ares; x++) {
			int level = (int)((hm->heat[(size_t)t * hm->ares + x] - lo) / unit);

			if (level > colorset_len[cs][0] - 1)
				level = colorset_len[cs][0] - 1;
			printf("\033[48;5;%dm\033[38;5;%dm%d",
			       pyidx(colorsets[cs][0], colorset_len[cs][0], level),
			       pyidx(colorsets[cs][1], colorset_len[cs][1], level), level);
		}
		printf("\033[0m\n");
	}
	printf("# access_frequency: ");
	for (int i = 0; i < 10; i++)
		printf("\033[48;5;%dm\033[38;5;%dm %d ", colorsets[cs][0][i], colorsets[cs][1][i], i);
	printf("\033[0m\n");
	printf("# x-axis: space (%llu-%llu: %s)\n", (unsigned long long)hm->amin,
	       (unsigned long long)hm->amax,
	       damon_fmt_sz(b1, sizeof(b1), (double)(hm->amax - hm->amin), false));
	printf("# y-axis: time (%lld-%lld: %s)\n", (long long)hm->tmin, (long long)hm->tmax,
	       damon_fmt_time(b1, sizeof(b1), (double)(hm->tmax - hm->tmin), false));
	printf("# resolution: %ux%u (%s and %s for each character)\n", hm->ares, hm->tres,
	       damon_fmt_sz(b1, sizeof(b1), (double)(hm->amax - hm->amin) / hm->ares, false),
	       damon_fmt_time(b2, sizeof(b2), (double)(hm->tmax - hm->tmin) / hm->tres, false));
	return 0;
}

static int report_heats(const struct uks_damon_record *rec, struct report_args *a)
{
	struct uks_damon_heatmap hm = { 0 };
	bool stdout_map = a->heatmap && !strcmp(a->heatmap, "stdout");
	const char *ext = a->heatmap ? strrchr(a->heatmap, '.') : NULL;
	int ret;

	if (a->guide) {
		print_guides(rec);
		return 0;
	}
	if (a->heatmap && !stdout_map && (!ext || (strcmp(ext, ".png") && strcmp(ext, ".svg")))) {
		fprintf(stderr, "uks damon report: unsupported heatmap type (png, svg or stdout): "
			"%s\n", a->heatmap);
		return 2;
	}
	if (stdout_map && !a->resol_given) {
		a->tres = 40;
		a->ares = 80;
	}
	hm.tres = a->tres;
	hm.ares = a->ares;
	hm.target_id = a->tid;
	hm.tmin = a->tmin;
	hm.tmax = a->tmax;
	hm.amin = a->amin;
	hm.amax = a->amax;
	ret = uks_damon_heatmap_compute(rec, &hm, a->given);
	if (ret) {
		fprintf(stderr, "uks damon report: heats: %s\n",
			ret == -ENOENT ? "no such target / no snapshot" :
			ret == -EINVAL ? "time or address range smaller than the resolution" :
			strerror(-ret));
		return 1;
	}
	if (stdout_map) {
		ret = ascii_heatmap(&hm, a->color);
	} else if (a->heatmap) {
		ret = damon_heatmap_image(&hm, a->heatmap, a->abs_time, a->abs_addr);
		if (ret)
			fprintf(stderr, "uks damon report: %s: %s\n", a->heatmap, strerror(-ret));
		ret = ret ? 1 : 0;
	} else {
		double time_unit = (double)(hm.tmax - hm.tmin) / hm.tres;
		double space_unit = (double)(hm.amax - hm.amin) / hm.ares;
		char b[64];

		for (unsigned int i = 0; i < hm.tres; i++) {
			long long t = (long long)((double)hm.tmin + i * time_unit);

			if (!a->abs_time)
				t -= hm.tmin;
			for (unsigned int j = 0; j < hm.ares; j++) {
				unsigned long long ad =
					(unsigned long long)((double)hm.amin + j * space_unit);

				if (!a->abs_addr)
					ad -= hm.amin;
				printf("%lld\t%llu\t%s\n", t, ad,
				       damon_py_float(b, sizeof(b), hm.heat[(size_t)i * hm.ares + j]));
			}
		}
	}
	uks_damon_heatmap_free(&hm);
	return ret;
}

/* ---------------------------------------------------------------- wss */

static size_t pct_idx(long p, size_t n)
{
	size_t idx = (size_t)((double)p / 100.0 * (double)n);

	return idx >= n ? n - 1 : idx;
}

/* One target's distribution: damo's pr_wss_dists() for @tid, whose snapshots are all in @rec. */
static int report_wss_target(const struct uks_damon_record *rec, uint64_t tid,
			     const struct report_args *a)
{
	uint64_t *w, max = 0;
	long double sum = 0;	/* damo's Python integers do not wrap */
	double per_col = 1;
	char b[64];
	size_t n;

	if (uks_damon_wss(rec, tid, (unsigned int)a->acc_thres, a->sz_thres, a->sort, &w, &n))
		return 1;
	printf("# target_id\t%llu\n", (unsigned long long)tid);
	if (!n) {
		printf("# no snapshot\n");
		uks_kfree(w);
		return 0;
	}
	for (size_t i = 0; i < n; i++)
		sum += w[i];
	printf("# avr:\t%s\n", damon_fmt_sz(b, sizeof(b), (double)(sum / (long double)n),
					   a->raw_number));
	if (a->all_wss) {
		for (size_t i = 0; i < n; i++)
			printf("%zu %s\n", i, damon_fmt_bytes(b, sizeof(b), w[i], a->raw_number));
		uks_kfree(w);
		return 0;
	}
	for (long p = a->range[0]; p < a->range[1]; p += a->range[2])
		if (w[pct_idx(p, n)] >= max)
			max = w[pct_idx(p, n)];
	if (max)
		per_col = (double)max / a->nr_cols_bar;
	for (long p = a->range[0]; p < a->range[1]; p += a->range[2]) {
		uint64_t v = w[pct_idx(p, n)];

		printf("%3ld %15s", p, damon_fmt_bytes(b, sizeof(b), v, a->raw_number));
		if (a->nr_cols_bar > 0) {
			int cols = (int)((double)v / per_col);

			printf(" |");
			for (int i = 0; i < cols; i++)
				putchar('*');
			for (int i = cols; i < a->nr_cols_bar; i++)
				putchar(' ');
			putchar('|');
		}
		putchar('\n');
	}
	uks_kfree(w);
	return 0;
}

static int report_wss(const struct uks_damon_record *rec, const struct report_args *a)
{
	struct uks_damon_record *adjusted, view = { 0 };
	struct uks_damon_rec_targets tg, atg;
	int ret;

	/* damo's --work_time: the working set of each unit of work */
	ret = uks_damon_record_adjust(rec, a->work_time, a->exclude_samples, &adjusted);
	if (ret) {
		fprintf(stderr, "uks damon report: %s\n", strerror(-ret));
		return 1;
	}
	/* the targets of @rec: one whose snapshots were all excluded has none */
	ret = uks_damon_record_group(rec, &tg);
	if (!ret) {
		ret = uks_damon_record_group(adjusted, &atg);
		if (ret)
			uks_damon_record_group_free(&tg);
	}
	if (!ret && !(view.snapshots = uks_kmalloc((adjusted->nr_snapshots ?
						      adjusted->nr_snapshots : 1) *
						     sizeof(*view.snapshots)))) {
		uks_damon_record_group_free(&tg);
		uks_damon_record_group_free(&atg);
		ret = -ENOMEM;
	}
	if (ret) {
		uks_damon_record_free(adjusted);
		fprintf(stderr, "uks damon report: %s\n", strerror(-ret));
		return 1;
	}
	printf("# <percentile> <wss>\n");
	/*
	 * Each target's snapshots as a record of their own (shallow copies),
	 * so that every target costs its own snapshots, not the whole record.
	 */
	for (size_t t = 0, at = 0; t < tg.nr && !ret; t++) {
		view.nr_snapshots = 0;
		if (at < atg.nr && atg.ids[at] == tg.ids[t]) {
			for (size_t k = atg.first[at]; k < atg.first[at + 1]; k++)
				view.snapshots[view.nr_snapshots++] = adjusted->snapshots[atg.order[k]];
			at++;
		}
		ret = report_wss_target(&view, tg.ids[t], a);
	}
	uks_kfree(view.snapshots);
	uks_damon_record_group_free(&tg);
	uks_damon_record_group_free(&atg);
	uks_damon_record_free(adjusted);
	return ret;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* damo's nr_regions: skip each target's first 20 snapshots (not adapted yet) */
#define NR_REGIONS_SKIP	20

static int report_nr_regions(const struct uks_damon_record *rec, const struct report_args *a)
{
	struct uks_damon_rec_targets tg;
	uint32_t *dist;
	int ret = uks_damon_record_group(rec, &tg);

	if (ret) {
		fprintf(stderr, "uks damon report: %s\n", strerror(-ret));
		return 1;
	}
	dist = malloc((rec->nr_snapshots ? rec->nr_snapshots : 1) * sizeof(*dist));
	if (!dist) {
		uks_damon_record_group_free(&tg);
		fprintf(stderr, "uks damon report: %s\n", strerror(ENOMEM));
		return 1;
	}
	printf("# <percentile> <# regions>\n");
	for (size_t t = 0; t < tg.nr && !ret; t++) {
		size_t n = 0;
		uint64_t sum = 0;

		for (size_t k = tg.first[t] + NR_REGIONS_SKIP; k < tg.first[t + 1]; k++) {
			dist[n] = rec->snapshots[tg.order[k]].nr_regions;
			sum += dist[n++];
		}
		printf("# target_id\t%llu\n", (unsigned long long)tg.ids[t]);
		if (!n) {	/* damo divides by zero here */
			fprintf(stderr, "uks damon report: target %llu has no snapshot past its "
				"first %d\n", (unsigned long long)tg.ids[t], NR_REGIONS_SKIP);
			ret = 1;
			break;
		}
		if (a->sort)
			qsort(dist, n, sizeof(*dist), cmp_u32);
		printf("# avr:\t%llu\n", (unsigned long long)(sum / n));
		for (long p = a->range[0]; p < a->range[1]; p += a->range[2]) {
			size_t idx = (size_t)((double)p / 100.0 * (double)n);

			if (idx >= n)	/* damo: only == n is clamped; past it fails */
				idx = n - 1;
			printf("%ld\t%u\n", p, dist[idx]);
		}
	}
	free(dist);
	uks_damon_record_group_free(&tg);
	return ret;
}

int cli_damon_report(int argc, char **argv)
{
	struct uks_damon_rec_diag diag;
	struct report_args a;
	struct uks_damon_record *rec;
	const char *what;
	int ret;

	if (argc < 2) {
		report_usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h")) {
		report_usage(stdout);
		return 0;
	}
	what = argv[1];
	if (strcmp(what, "raw") && strcmp(what, "heats") && strcmp(what, "wss") &&
	    strcmp(what, "nr_regions")) {
		fprintf(stderr, "uks damon report: unknown report %s\n", what);
		report_usage(stderr);
		return 2;
	}
	ret = parse_report(argc - 1, argv + 1, &a);
	if (ret)
		return ret < 0 ? 0 : ret;
	ret = uks_damon_record_read_file(a.input, UKS_DAMON_REC_PARTIAL, &rec, &diag);
	if (ret) {
		if (ret == -EOPNOTSUPP && diag.reason)
			fprintf(stderr, "uks damon report: %s: %s\n", a.input, diag.reason);
		else if (diag.reason)
			fprintf(stderr, "uks damon report: %s: corrupt record at byte %llu (in the "
				"entry at byte %llu): %s\n", a.input,
				(unsigned long long)diag.offset, (unsigned long long)diag.entry,
				diag.reason);
		else
			fprintf(stderr, "uks damon report: %s: %s\n", a.input, strerror(-ret));
		return 1;
	}
	if (diag.reason)
		fprintf(stderr, "uks damon report: %s: the file ends at byte %llu, inside the "
			"entry at byte %llu (%s); reporting the %zu snapshots before it\n",
			a.input, (unsigned long long)diag.offset, (unsigned long long)diag.entry,
			diag.reason, rec->nr_snapshots);
	/*
	 * A record with a header and no snapshot is what monitoring a
	 * program that ended before its first aggregation writes: reported
	 * as damo does (raw prints nothing, wss its header line).  An empty
	 * file, or text with no event in it, is no record at all.
	 */
	if (!rec->nr_snapshots && rec->version <= 0 && rec->version >= UKS_DAMON_REC_VERSION_TEXT) {
		fprintf(stderr, "uks damon report: %s holds no snapshot (not a DAMON record, or "
			"monitoring ended before its first aggregation)\n", a.input);
		uks_damon_record_free(rec);
		return 1;
	}
	if (!rec->nr_snapshots && !diag.reason)
		fprintf(stderr, "uks damon report: %s: a record with no snapshot (monitoring "
			"ended before its first aggregation)\n", a.input);
	if (!strcmp(what, "raw")) {
		ret = report_raw(rec, &a);
	} else if (!strcmp(what, "heats")) {
		ret = report_heats(rec, &a);
	} else if (!strcmp(what, "nr_regions")) {
		ret = report_nr_regions(rec, &a);
	} else {
		ret = report_wss(rec, &a);
	}
	uks_damon_record_free(rec);
	return ret;
}
