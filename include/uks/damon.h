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
 * used by the in-process agent libuks-damon-agent.so), "fvaddr-sd" and
 * "fvaddr-refs" (the same checks on the regions the caller gives each
 * target, never fitted to its mappings), "synthetic" (a simulated
 * address space with a scripted access pattern and known ground truth).
 * By default a context uses uks_damon_default_primitive().  See
 * docs/DAMON.md for what each one sees and where uks differs from 5.15.
 *
 * Regions also have 6.12's age, and a context may hold DAMOS operation
 * schemes with 6.12's semantics (uks_damos_*, below): at each aggregation
 * the regions matching a scheme's access pattern get its action (madvise
 * hints through process_madvise(2) for real processes), within its quota
 * and watermarks.
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

/**
 * struct uks_damon_cost - what monitoring a context cost (uks_damon_get_cost())
 * @aggregations:	aggregations measured
 * @monitor_cpu_ns:	the monitor thread's CPU time over them
 * @target_stall_ns:	time the targets' page tables were held by the checks
 * @wall_ns:		the time they spanned
 * @retunes:		how often the intervals changed (goal or budget)
 * @sample_us:		the sampling interval in force now
 * @aggr_us:		the aggregation interval in force now
 */
struct uks_damon_cost {
	uint64_t aggregations;
	uint64_t monitor_cpu_ns;
	uint64_t target_stall_ns;
	uint64_t wall_ns;
	uint64_t retunes;
	unsigned long sample_us;
	unsigned long aggr_us;
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
int uks_damon_set_budget(struct uks_damon_ctx *ctx, unsigned int monitor_permille,
			 unsigned int target_permille);
int uks_damon_set_intervals_goal(struct uks_damon_ctx *ctx, unsigned long access_bp,
				 unsigned long aggrs, unsigned long min_sample_us,
				 unsigned long max_sample_us);
void uks_damon_get_cost(struct uks_damon_ctx *ctx, struct uks_damon_cost *cost);

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

/* ------------------------------------------------ DAMOS (operation schemes, 6.12) */

/**
 * enum uks_damos_action - what a scheme does to the regions it matches
 * (6.12's enum damos_action, in its order)
 *
 * On the primitives for real processes (vaddr-sd, vaddr-refs) the
 * actions go through process_madvise(2) on the target's pidfd:
 * WILLNEED, COLD and PAGEOUT as MADV_*, HUGEPAGE as MADV_COLLAPSE (where
 * the kernel has it).  NOHUGEPAGE needs a kernel whose process_madvise()
 * takes MADV_NOHUGEPAGE; LRU_PRIO, LRU_DEPRIO, MIGRATE_HOT and
 * MIGRATE_COLD are physical-address (paddr) actions: a scheme with one
 * of them is refused (-EINVAL).  STAT only counts.  See docs/DAMON.md.
 */
enum uks_damos_action {
	UKS_DAMOS_WILLNEED,
	UKS_DAMOS_COLD,
	UKS_DAMOS_PAGEOUT,
	UKS_DAMOS_HUGEPAGE,
	UKS_DAMOS_NOHUGEPAGE,
	UKS_DAMOS_LRU_PRIO,
	UKS_DAMOS_LRU_DEPRIO,
	UKS_DAMOS_MIGRATE_HOT,
	UKS_DAMOS_MIGRATE_COLD,
	UKS_DAMOS_STAT,
	UKS_DAMOS_NR_ACTIONS
};

/** enum uks_damos_wmark_metric - what the watermarks watch */
enum uks_damos_wmark_metric {
	UKS_DAMOS_WMARK_NONE,		/* always active */
	UKS_DAMOS_WMARK_FREE_MEM_RATE,	/* MemFree / MemTotal, per thousand */
	UKS_DAMOS_NR_WMARK_METRICS
};

/** enum uks_damos_goal_metric - what a quota goal measures */
enum uks_damos_goal_metric {
	UKS_DAMOS_GOAL_USER_INPUT,	/* current_value given by the caller */
	UKS_DAMOS_GOAL_SOME_MEM_PSI_US,	/* /proc/pressure/memory "some" us per reset interval */
	UKS_DAMOS_NR_GOAL_METRICS
};

/**
 * enum uks_damos_filter_type - 6.12's filter types; only ADDR and TARGET
 * (handled by the core) are taken, the others are paddr's (-EINVAL)
 */
enum uks_damos_filter_type {
	UKS_DAMOS_FILTER_ANON,
	UKS_DAMOS_FILTER_MEMCG,
	UKS_DAMOS_FILTER_YOUNG,
	UKS_DAMOS_FILTER_ADDR,
	UKS_DAMOS_FILTER_TARGET,
	UKS_DAMOS_NR_FILTER_TYPES
};

#define UKS_DAMOS_MAX_GOALS	8
#define UKS_DAMOS_MAX_FILTERS	16
#define UKS_DAMOS_MAX_SCHEMES	256	/* per context */

/**
 * struct uks_damos_access_pattern - the regions a scheme wants (closed ranges)
 * @min_sz:		region size, bytes
 * @max_sz:
 * @min_nr_accesses:	accesses per aggregation interval (samples seen)
 * @max_nr_accesses:
 * @min_age:		age, in aggregation intervals
 * @max_age:
 */
struct uks_damos_access_pattern {
	unsigned long min_sz, max_sz;
	unsigned int min_nr_accesses, max_nr_accesses;
	unsigned int min_age, max_age;
};

/**
 * struct uks_damos_quota_goal - a feedback goal of the quota auto-tuning
 * @metric:		enum uks_damos_goal_metric
 * @target_value:	what the metric should be (not 0)
 * @current_value:	the last value (USER_INPUT: the caller's, given with
 *			uks_damos_set_goal_current(); PSI: measured)
 */
struct uks_damos_quota_goal {
	unsigned int metric;
	unsigned long target_value;
	unsigned long current_value;
};

/**
 * struct uks_damos_quota - how much a scheme may do per reset interval
 * @ms:			time quota (0: none)
 * @sz:			size quota, bytes (0: none)
 * @reset_interval_ms:	the charge window
 * @weight_sz:		prioritisation weights, per thousand (6.12 scores
 * @weight_nr_accesses:	regions by access frequency and age only; the
 * @weight_age:		size weight is kept and shown, as the kernel's)
 * @nr_goals:		goals in @goals (the best-achieved one drives the tuning)
 * @goals:
 */
struct uks_damos_quota {
	unsigned long ms;
	unsigned long sz;
	unsigned long reset_interval_ms;
	unsigned int weight_sz, weight_nr_accesses, weight_age;
	unsigned int nr_goals;
	struct uks_damos_quota_goal goals[UKS_DAMOS_MAX_GOALS];
};

/**
 * struct uks_damos_watermarks - when a scheme is active
 * @metric:	enum uks_damos_wmark_metric
 * @interval_us: how often the metric is read
 * @high:	above it: inactive
 * @mid:	an inactive scheme activates below it (and above @low)
 * @low:	below it: inactive
 */
struct uks_damos_watermarks {
	unsigned int metric;
	unsigned long interval_us;
	unsigned long high, mid, low;
};

/**
 * struct uks_damos_filter - leave some memory out of a scheme
 * @type:	enum uks_damos_filter_type (ADDR or TARGET)
 * @matching:	true: filter out what matches; false: what does not
 * @addr_start:	ADDR: the range [start, end)
 * @addr_end:
 * @target_idx:	TARGET: the index of the target in the context
 */
struct uks_damos_filter {
	unsigned int type;
	bool matching;
	unsigned long addr_start, addr_end;
	unsigned int target_idx;
};

/**
 * struct uks_damos_scheme - one operation scheme
 * @pattern:		the regions it wants
 * @action:		enum uks_damos_action
 * @apply_interval_us:	how often it applies (0: each aggregation)
 * @quota:
 * @wmarks:
 * @nr_filters:		filters in @filters, evaluated in order
 * @filters:
 */
struct uks_damos_scheme {
	struct uks_damos_access_pattern pattern;
	unsigned int action;
	unsigned long apply_interval_us;
	struct uks_damos_quota quota;
	struct uks_damos_watermarks wmarks;
	unsigned int nr_filters;
	struct uks_damos_filter filters[UKS_DAMOS_MAX_FILTERS];
};

/**
 * struct uks_damos_stats - what a scheme did, since it was added
 * @nr_tried:	regions it was tried on (pattern, quota and filters passed)
 * @sz_tried:	their bytes
 * @nr_applied:	regions the action succeeded on (STAT: none, as 6.12's vaddr)
 * @sz_applied:	their bytes
 * @qt_exceeds:	charge windows that ended with the quota used up
 */
struct uks_damos_stats {
	unsigned long nr_tried, sz_tried;
	unsigned long nr_applied, sz_applied;
	unsigned long qt_exceeds;
};

/**
 * struct uks_damos_tried_region - a region a scheme was tried on in its
 * last application (6.12's tried_regions/<N>/)
 * @start:	first address
 * @end:	one past the last
 * @nr_accesses: its count then
 * @age:	its age then
 * @target_idx:	the index of its target in the context
 */
struct uks_damos_tried_region {
	unsigned long start, end;
	unsigned int nr_accesses, age;
	unsigned int target_idx;
};

/*
 * The scheme functions take the context's scheme lock (never held with
 * any other uks lock) and may be called while the context runs, from any
 * thread and from the context's hooks; the monitor holds the lock while
 * it checks watermarks and applies the schemes (process_madvise() calls
 * included), so a call may wait that long.
 */
int uks_damos_add_scheme(struct uks_damon_ctx *ctx, const struct uks_damos_scheme *s);
int uks_damos_set_schemes(struct uks_damon_ctx *ctx, const struct uks_damos_scheme *s,
			  unsigned int nr);
int uks_damos_update_scheme(struct uks_damon_ctx *ctx, unsigned int idx,
			    const struct uks_damos_scheme *s);
int uks_damos_remove_scheme(struct uks_damon_ctx *ctx, unsigned int idx);
int uks_damos_nr_schemes(struct uks_damon_ctx *ctx);
int uks_damos_get_scheme(struct uks_damon_ctx *ctx, unsigned int idx,
			 struct uks_damos_scheme *out);
int uks_damos_get_stats(struct uks_damon_ctx *ctx, unsigned int idx,
			struct uks_damos_stats *out);
int uks_damos_get_tried_regions(struct uks_damon_ctx *ctx, unsigned int idx,
				struct uks_damos_tried_region *out, unsigned int max,
				unsigned long *total_bytes);
int uks_damos_get_state(struct uks_damon_ctx *ctx, unsigned int idx, bool *active,
			unsigned long *effective_sz);
int uks_damos_set_goal_current(struct uks_damon_ctx *ctx, unsigned int idx,
			       unsigned int goal, unsigned long value);
int uks_damos_check_scheme(const struct uks_damos_scheme *s, char *why, size_t len);
const char *uks_damos_action_name(unsigned int action);
int uks_damon_may_act_on(pid_t pid);
int uks_damos_action_from_name(const char *name);

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
