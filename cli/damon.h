/* SPDX-License-Identifier: MIT */
/* uks damon: what the record/report/image files of the CLI share. */
#ifndef UKS_CLI_DAMON_H
#define UKS_CLI_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <uks/damon_record.h>

int cli_damon_record(int argc, char **argv);
int cli_damon_report(int argc, char **argv);
int cli_damon_convert(int argc, char **argv);
int cli_damon_reclaim(int argc, char **argv);

/* damo's _fmt_nr: "12.000 KiB" / "1 m 3.000 s" (or plain numbers if @raw) */
const char *damon_fmt_sz(char *buf, size_t len, double sz, bool raw);
const char *damon_fmt_time(char *buf, size_t len, double ns, bool raw);
const char *damon_fmt_bytes(char *buf, size_t len, uint64_t sz, bool raw);
/* Python's str(float): the shortest text that reads back the same */
const char *damon_py_float(char *buf, size_t len, double v);

/* PNG (libpng) or SVG pictures of a heat map, by @path's extension */
int damon_heatmap_image(const struct uks_damon_heatmap *hm, const char *path, bool abs_time,
			bool abs_addr);

#endif
