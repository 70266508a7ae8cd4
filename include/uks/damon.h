/* SPDX-License-Identifier: MIT */
/*
 * uks DAMON: the data access monitor of Linux 5.15, in user space.
 *
 * A monitoring context watches targets (processes, or simulated address
 * spaces) through an access-check primitive.  Each target's address space
 * is cut into regions; one page per region is sampled every sampling
 * interval, and on every aggregation interval the per-region access counts
 * are reported (the damon:damon_aggregated trace event and the
 * after_aggregation callback), adjacent similar regions are merged and
 * every region is split at random, so the number of regions adapts to the
 * access pattern while the cost stays bounded by max_nr_regions.
 *
 *	struct uks_damon_ctx *ctx;
 *	uks_damon_ctx_create(&ctx);
 *	uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000);
 *	unsigned long pid = 1234;
 *	uks_damon_set_targets(ctx, &pid, 1);
 *	uks_damon_start(&ctx, 1);	-- one monitor thread, "kdamond.N"
 *	...
 *	uks_damon_stop(&ctx, 1);
 *	uks_damon_ctx_destroy(ctx);
 *
 * Primitives (uks_damon_set_primitive()): "vaddr-sd" (soft-dirty bits of
 * a real process: writes, per page), "vaddr-refs" (clear_refs + smaps
 * Referenced: reads and writes, per mapping), "self" (the calling process
 * itself, reads and writes per page with userfaultfd: target id getpid(),
 * used by the in-process agent libuks-damon-agent.so), "synthetic" (a simulated
 * address space with a scripted access pattern and known ground truth).
 * By default a context uses uks_damon_default_primitive().  See
 * docs/DAMON.md for what each one sees and where uks differs from 5.15.
 */
#ifndef UKS_DAMON_H
#define UKS_DAMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

struct uks_damon_ctx;
struct uks_damon_target;
struct uks_damon_synth;

/**
 * struct uks_damon_callback - hooks run by the monitor thread
 * @priv:		the caller's pointer, for the hooks
 * @before_start:	before the first sampling
 * @after_sampling:	after each preparation of the access checks
 * @after_aggregation:	on each aggregation interval, after merging and
 *			before the counts are reset (regions readable)
 * @before_terminate:	when monitoring ends, after the regions are gone
 *
 * A non-zero return of the first three stops monitoring, as in 5.15.
 * Hooks run without any uks lock held; they may use the read functions
 * below and uks_damon_destroy_targets(), not start/stop.  With the "self"
 * primitive, after_sampling runs while the sampled pages of this very
 * process are taken away: it may touch only its own stack and the
 * context (a touch of other program memory waits for itself forever).
 */
struct uks_damon_callback {
	void *priv;
	int (*before_start)(struct uks_damon_ctx *ctx);
	int (*after_sampling)(struct uks_damon_ctx *ctx);
	int (*after_aggregation)(struct uks_damon_ctx *ctx);
	int (*before_terminate)(struct uks_damon_ctx *ctx);
};

/**
 * struct uks_damon_attrs - the monitoring attributes (debugfs "attrs")
 * @sample_us:	sampling interval, microseconds (default 5000)
 * @aggr_us:	aggregation interval (default 100000)
 * @update_us:	primitive update interval (default 60000000, as 5.15)
 * @min_nr_regions: (default 10)
 * @max_nr_regions: (default 1000)
 */
struct uks_damon_attrs {
	unsigned long sample_us;
	unsigned long aggr_us;
	unsigned long update_us;
	unsigned long min_nr_regions;
	unsigned long max_nr_regions;
};

/**
 * struct uks_damon_region_info - one region, as read by the caller
 * @start:	first address
 * @end:	one past the last
 * @nr_accesses: the accesses seen in the current aggregation interval
 * @age:	aggregation intervals its count stayed within the merge
 *		threshold of the one before (6.12's region age)
 */
struct uks_damon_region_info {
	unsigned long start;
	unsigned long end;
	unsigned int nr_accesses;
	unsigned int age;
};

int uks_damon_ctx_create(struct uks_damon_ctx **out);
void uks_damon_ctx_destroy(struct uks_damon_ctx *ctx);
int uks_damon_set_attrs(struct uks_damon_ctx *ctx, unsigned long sample_us,
			unsigned long aggr_us, unsigned long update_us,
			unsigned long min_nr_regions, unsigned long max_nr_regions);
void uks_damon_get_attrs(struct uks_damon_ctx *ctx, struct uks_damon_attrs *attrs);
void uks_damon_set_callback(struct uks_damon_ctx *ctx, const struct uks_damon_callback *cb);
void *uks_damon_callback_private(struct uks_damon_ctx *ctx);
/* Seed the context's random generator (sampling addresses, splits). */
void uks_damon_set_seed(struct uks_damon_ctx *ctx, uint64_t seed);

int uks_damon_set_primitive(struct uks_damon_ctx *ctx, const char *name);
const char *uks_damon_primitive_name(struct uks_damon_ctx *ctx);
int uks_damon_primitive_available(const char *name, char *why, size_t len);
const char *uks_damon_default_primitive(void);

int uks_damon_set_targets(struct uks_damon_ctx *ctx, const unsigned long *ids,
			  unsigned int nr);
int uks_damon_add_target(struct uks_damon_ctx *ctx, unsigned long id, void *priv,
			 struct uks_damon_target **out);
int uks_damon_destroy_targets(struct uks_damon_ctx *ctx);
int uks_damon_target_ids(struct uks_damon_ctx *ctx, unsigned long *ids, unsigned int max);
ssize_t uks_damon_sprint_target_ids(struct uks_damon_ctx *ctx, char *buf, size_t len);
int uks_damon_parse_target_ids(const char *str, unsigned long *ids, int max);

int uks_damon_for_each_target(struct uks_damon_ctx *ctx,
			      int (*fn)(struct uks_damon_target *t, void *arg), void *arg);
unsigned long uks_damon_target_id(const struct uks_damon_target *t);
unsigned int uks_damon_target_nr_regions(const struct uks_damon_target *t);
int uks_damon_target_regions(const struct uks_damon_target *t,
			     struct uks_damon_region_info *out, unsigned int max);

int uks_damon_start(struct uks_damon_ctx **ctxs, int nr);
int uks_damon_stop(struct uks_damon_ctx **ctxs, int nr);
bool uks_damon_is_running(struct uks_damon_ctx *ctx);
pid_t uks_damon_kdamond_pid(struct uks_damon_ctx *ctx);

/* ------------------------------------------------ the self primitive */

/**
 * struct uks_damon_self_stats - what a self context did (at its end)
 * @samples:	sampling intervals
 * @sampled:	sampling pages inside monitored mappings
 * @taken:	pages taken away (moved or copied out)
 * @faults:	faults served
 * @refused:	sampled pages the kernel would not move (pinned, shared, ...)
 * @dropped:	taken pages whose mapping went away (munmap) meanwhile
 * @huge:	of @taken, transparent huge pages taken whole (2 MiB, as a PMD)
 * @cut:	of @huge, pages an mremap() of part of them moved while taken
 *		(their moved pages go back where they went)
 * @lost:	pages whose data could not be kept: a huge page cut into more
 *		than eight pieces within one sampling interval (0 expected)
 */
struct uks_damon_self_stats {
	unsigned long samples;
	unsigned long sampled;
	unsigned long taken;
	unsigned long faults;
	unsigned long refused;
	unsigned long dropped;
	unsigned long huge;
	unsigned long cut;
	unsigned long lost;
};

void uks_damon_self_stats(struct uks_damon_self_stats *out);
const char *uks_damon_self_mode(void);

/* ------------------------------------------------ the synthetic primitive */

int uks_damon_synth_create(struct uks_damon_synth **out);
void uks_damon_synth_destroy(struct uks_damon_synth *s);
int uks_damon_synth_add_mapping(struct uks_damon_synth *s, unsigned long start,
				unsigned long end);
int uks_damon_synth_add_phase(struct uks_damon_synth *s, unsigned long nr_samples);
int uks_damon_synth_add_access(struct uks_damon_synth *s, unsigned long start,
			       unsigned long end, unsigned int permille);
unsigned int uks_damon_synth_phase(struct uks_damon_synth *s);
int uks_damon_synth_access_permille(struct uks_damon_synth *s, unsigned long addr);

#ifdef __cplusplus
}
#endif

#endif
