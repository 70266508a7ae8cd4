// SPDX-License-Identifier: MIT
/*
 * uks damon convert: a record file from one of damo's formats into
 * another (damo's `damo convert_record_format`), through the library's
 * reader and uks_damon_record_write().
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <uks/damon_record.h>

#include "cli.h"
#include "damon.h"

static void convert_usage(FILE *out)
{
	fputs("Usage: uks damon convert -f FORMAT [-i INPUT] [--intervals \"SAMPLE AGGR UPDATE\"]\n"
	      "                         -o OUTPUT\n"
	      "\n"
	      "Write the record INPUT (default damon.data; any format 'uks damon report'\n"
	      "reads) as FORMAT: json_compressed, json or binary.  --intervals (us) gives\n"
	      "a json record the intervals a binary one lacks (damo's 'report access'\n"
	      "needs them).\n", out);
}

int cli_damon_convert(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "format", required_argument, NULL, 'f' },
		{ "input", required_argument, NULL, 'i' },
		{ "output", required_argument, NULL, 'o' },
		{ "intervals", required_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *in = "damon.data", *out = NULL;
	struct uks_damon_rec_diag diag;
	struct uks_damon_rec_intervals iv = { 0 };
	struct uks_damon_record *rec;
	int c, fmt = -1, fd, err;
	char tail;

	optind = 1;
	while ((c = getopt_long(argc, argv, "f:i:o:h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			fmt = uks_damon_rec_format_parse(optarg);
			if (fmt < 0) {
				fprintf(stderr, "uks damon convert: -f %s: the formats are "
					"json_compressed, json and binary\n", optarg);
				return 2;
			}
			break;
		case 'i': in = optarg; break;
		case 'o': out = optarg; break;
		case 'I':
			if (sscanf(optarg, "%" SCNu64 " %" SCNu64 " %" SCNu64 " %c", &iv.sample_us,
				   &iv.aggr_us, &iv.update_us, &tail) != 3 || !iv.sample_us ||
			    iv.aggr_us < iv.sample_us) {
				fprintf(stderr, "uks damon convert: --intervals wants SAMPLE AGGR "
					"UPDATE in us, SAMPLE > 0, AGGR >= SAMPLE: %s\n", optarg);
				return 2;
			}
			break;
		case 'h': convert_usage(stdout); return 0;
		default: convert_usage(stderr); return 2;
		}
	}
	if (fmt < 0 || !out || optind < argc) {
		convert_usage(stderr);
		return 2;
	}
	err = uks_damon_record_read_file(in, 0, &rec, &diag);
	if (err) {
		if (err == -EOPNOTSUPP && diag.reason)
			fprintf(stderr, "uks damon convert: %s: %s\n", in, diag.reason);
		else if (diag.reason)
			fprintf(stderr, "uks damon convert: %s: corrupt record at byte %llu: %s\n",
				in, (unsigned long long)diag.offset, diag.reason);
		else
			fprintf(stderr, "uks damon convert: %s: %s\n", in, strerror(-err));
		return 1;
	}
	if (iv.sample_us)
		rec->intervals = iv;
	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "uks damon convert: %s: %s\n", out, strerror(errno));
		uks_damon_record_free(rec);
		return 1;
	}
	err = uks_damon_record_write(rec, fd, fmt);
	if (close(fd) && !err)
		err = -errno;
	uks_damon_record_free(rec);
	if (err) {
		fprintf(stderr, "uks damon convert: %s: %s\n", out,
			err == -EOPNOTSUPP ? "json_compressed needs zlib, which this uks was "
			"built without" : strerror(-err));
		return 1;
	}
	return 0;
}
