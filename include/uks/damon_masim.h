/* SPDX-License-Identifier: MIT */
/*
 * masim's access-pattern configuration files, for uks-masim (which runs
 * them on real memory) and the synthetic DAMON primitive (which simulates
 * them with a known ground truth).
 *
 * The format (masim's): lines starting with '#' are removed first; the
 * rest is paragraphs separated by empty lines.  The first paragraph lists
 * the regions, one "NAME, SIZE[, INIT_FILE|none]" per line.  Each further
 * paragraph is a phase: its name, its duration in milliseconds, then its
 * access patterns, one "REGION, RANDOM, STRIDE, WEIGHT[, ro|wo|rw]" per
 * line (RANDOM 1: random offsets, 0: sequential with STRIDE bytes; WEIGHT:
 * the share of the phase's time, relative to the phase's other patterns;
 * the access mode defaults to wo, as masim of 2021 only wrote).
 *
 *	struct uks_damon_masim *m;
 *	uks_damon_masim_parse(text, len, &m, err, sizeof(err));
 *	... m->regions[i], m->phases[j].patterns[k] ...
 *	uks_damon_masim_free(m);
 */
#ifndef UKS_DAMON_MASIM_H
#define UKS_DAMON_MASIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uks_damon_synth;

#define UKS_DAMON_MASIM_NAME_MAX	64
#define UKS_DAMON_MASIM_MAX_REGIONS	1024
#define UKS_DAMON_MASIM_MAX_PHASES	4096
#define UKS_DAMON_MASIM_MAX_PATTERNS	256

enum uks_damon_masim_rw {
	UKS_DAMON_MASIM_WO,
	UKS_DAMON_MASIM_RO,
	UKS_DAMON_MASIM_RW,
};

/** struct uks_damon_masim_region - one region: NAME, SIZE[, INIT_FILE] */
struct uks_damon_masim_region {
	char name[UKS_DAMON_MASIM_NAME_MAX];
	uint64_t size;
	char *init_file;	/* NULL for none */
};

/** struct uks_damon_masim_pattern - one access pattern of a phase */
struct uks_damon_masim_pattern {
	unsigned int region;	/* index into the regions */
	bool random;
	uint64_t stride;
	unsigned int weight;
	enum uks_damon_masim_rw rw;
};

/** struct uks_damon_masim_phase - one phase: name, duration, patterns */
struct uks_damon_masim_phase {
	char name[UKS_DAMON_MASIM_NAME_MAX];
	uint64_t duration_ms;
	unsigned int total_weight;
	unsigned int nr_patterns;
	struct uks_damon_masim_pattern *patterns;
};

/** struct uks_damon_masim - a parsed configuration */
struct uks_damon_masim {
	unsigned int nr_regions;
	struct uks_damon_masim_region *regions;
	unsigned int nr_phases;
	struct uks_damon_masim_phase *phases;
};

int uks_damon_masim_parse(const char *text, size_t len, struct uks_damon_masim **out,
			  char *err, size_t errlen);
int uks_damon_masim_load(const char *path, struct uks_damon_masim **out, char *err,
			 size_t errlen);
void uks_damon_masim_free(struct uks_damon_masim *m);

int uks_damon_synth_load_masim(struct uks_damon_synth *s, const struct uks_damon_masim *m,
			       unsigned long base, unsigned long sample_us,
			       unsigned long *region_starts);

#ifdef __cplusplus
}
#endif

#endif
