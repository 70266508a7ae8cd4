// SPDX-License-Identifier: MIT
/*
 * uks damon: the record, report and reclaim subcommands (git-style dispatch), and
 * damo's number formats that the reports print.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "damon.h"

static void damon_usage(FILE *out)
{
	fputs("Usage: uks damon record [OPTIONS] (-p PID... | [--] COMMAND [ARGS...])\n"
	      "       uks damon report raw|heats|wss|nr_regions [OPTIONS] [FILE]\n"
	      "       uks damon convert -f FORMAT [-i INPUT] -o OUTPUT\n"
	      "       uks damon reclaim -p PID... [--duration SEC] [PARAMETERS]\n"
	      "\n"
	      "DAMON data access monitoring, damo-compatible: 'record' writes a damo record\n"
	      "file (json_compressed by default, json, or damo v1's binary) from our\n"
	      "damon:damon_aggregated events, 'report' prints one as damo does, 'convert'\n"
	      "rewrites one in another format; 'reclaim' pages out the processes' cold\n"
	      "memory as DAMON_RECLAIM.  'uks damon COMMAND --help' describes each.\n"
	      "See docs/DAMON.md.\n",
	      out);
}

int cli_damon(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h")) {
		damon_usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "record"))
		return cli_damon_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cli_damon_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "convert"))
		return cli_damon_convert(argc - 1, argv + 1);
	if (!strcmp(argv[1], "reclaim"))
		return cli_damon_reclaim(argc - 1, argv + 1);
	fprintf(stderr, "uks damon: unknown command %s\n", argv[1]);
	damon_usage(stderr);
	return 2;
}

/*
 * damo's '%d' of a Python number: exact at any size.  A double's integer
 * part prints exactly with %.0f; a long long cast is undefined from 2^63.
 */
const char *damon_fmt_sz(char *buf, size_t len, double sz, bool raw)
{
	if (raw)
		snprintf(buf, len, "%.0f", trunc(sz) == 0 ? 0.0 : trunc(sz));
	else if (sz > 1099511627776.0)
		snprintf(buf, len, "%.3f TiB", sz / 1099511627776.0);
	else if (sz > 1073741824.0)
		snprintf(buf, len, "%.3f GiB", sz / 1073741824.0);
	else if (sz > 1048576.0)
		snprintf(buf, len, "%.3f MiB", sz / 1048576.0);
	else if (sz > 1024.0)
		snprintf(buf, len, "%.3f KiB", sz / 1024.0);
	else
		snprintf(buf, len, "%.0f B", trunc(sz) == 0 ? 0.0 : trunc(sz));
	return buf;
}

/* A size in bytes that is an integer: exact in raw numbers, as damo's. */
const char *damon_fmt_bytes(char *buf, size_t len, uint64_t sz, bool raw)
{
	if (raw) {
		snprintf(buf, len, "%llu", (unsigned long long)sz);
		return buf;
	}
	return damon_fmt_sz(buf, len, (double)sz, false);
}

const char *damon_fmt_time(char *buf, size_t len, double ns, bool raw)
{
	if (raw)
		snprintf(buf, len, "%.0f", trunc(ns) == 0 ? 0.0 : trunc(ns));
	else if (ns > 60000000000.0)
		snprintf(buf, len, "%.0f m %.3f s", trunc(ns / 60000000000.0),
			 fmod(ns, 60000000000.0) / 1000000000.0);
	else if (ns > 1000000000.0)
		snprintf(buf, len, "%.3f s", ns / 1000000000.0);
	else if (ns > 1000000.0)
		snprintf(buf, len, "%.3f ms", ns / 1000000.0);
	else if (ns > 1000.0)
		snprintf(buf, len, "%.3f us", ns / 1000.0);
	else
		snprintf(buf, len, "%.0f ns", trunc(ns) == 0 ? 0.0 : trunc(ns));
	return buf;
}

/*
 * repr() of a Python float: the shortest of %.1g..%.17g that reads back
 * as @v; fixed notation for exponents -4..15 (with ".0" when integral),
 * else d.ddde+XX.
 */
const char *damon_py_float(char *buf, size_t len, double v)
{
	char digits[40], *e, mant[40];
	int prec, exp10;

	if (isnan(v))
		return snprintf(buf, len, "nan"), buf;
	if (isinf(v))
		return snprintf(buf, len, v < 0 ? "-inf" : "inf"), buf;
	for (prec = 1; prec <= 17; prec++) {
		snprintf(digits, sizeof(digits), "%.*e", prec - 1, v);
		if (strtod(digits, NULL) == v)
			break;
	}
	/* digits: [-]d[.ddd]e[+-]XX */
	e = strchr(digits, 'e');
	exp10 = atoi(e + 1);
	*e = '\0';
	if (exp10 < -4 || exp10 >= 16) {
		snprintf(buf, len, "%se%c%02d", digits, exp10 < 0 ? '-' : '+', abs(exp10));
		return buf;
	}
	{
		const char *d = digits;
		char *m = mant;
		bool neg = *d == '-';
		int nd = 0, point;
		char ds[32];

		if (neg)
			d++;
		for (; *d; d++)
			if (*d != '.')
				ds[nd++] = *d;
		ds[nd] = '\0';
		point = exp10 + 1;	/* digits before the point */
		if (neg)
			*m++ = '-';
		if (point <= 0) {
			*m++ = '0';
			*m++ = '.';
			for (int i = 0; i < -point; i++)
				*m++ = '0';
			for (int i = 0; i < nd; i++)
				*m++ = ds[i];
		} else {
			for (int i = 0; i < point; i++)
				*m++ = i < nd ? ds[i] : '0';
			*m++ = '.';
			if (nd > point)
				for (int i = point; i < nd; i++)
					*m++ = ds[i];
			else
				*m++ = '0';
		}
		*m = '\0';
		snprintf(buf, len, "%s", mant);
	}
	return buf;
}
