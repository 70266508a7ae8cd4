/* SPDX-License-Identifier: MIT */
/*
 * DAMON internals: the structures of include/linux/damon.h (5.15) with the
 * kernel's names, shared by lib/damon's folders: the monitor (core/), the
 * access-check primitives (primitives/, self/) and the record code that
 * reads a target's regions (record/).
 *
 * Ownership: while a context runs, its targets and their regions belong to
 * the monitor thread; ctx->lock guards the run state (running, stop, the
 * thread, its tid) and is also held when the monitor thread tears the
 * targets down at the end, so readers of target ids (uks_damon_target_ids)
 * never see a target being freed.
 */
#ifndef UKS_LIB_DAMON_DAMON_H
#define UKS_LIB_DAMON_DAMON_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon.h>

#include "core/list.h"

/* DAMON_MIN_REGION of a context: PAGE_SIZE, or 1 for the KUnit ports. */
#define DAMON_MIN_REGION_DEFAULT	((unsigned long)getpagesize())

struct damon_addr_range {
	unsigned long start;
	unsigned long end;
};

struct damon_region {
	struct damon_addr_range ar;
	unsigned long sampling_addr;
	unsigned int nr_accesses;
	unsigned int age;		/* aggregations with a steady count (6.12) */
	unsigned int last_nr_accesses;	/* the count of the last aggregation */
	struct list_head list;
};

struct damon_target {
	unsigned long id;
	void *priv;		/* the caller's (the synthetic address space) */
	void *pstate;		/* the primitive's per-target state */
	void (*pstate_free)(void *pstate);	/* frees it with the target */
	unsigned int nr_regions;
	struct list_head regions_list;
	struct list_head list;
};

struct uks_damon_target {
	struct damon_target t;
};

/**
 * struct damon_primitive - an access-check primitive (5.15's ops table)
 * @name:		what uks_damon_set_primitive() takes
 * @available:		0, or -errno and the reason in @why
 * @init:		build the initial regions (targets with none)
 * @update:		every update interval: re-read the address spaces
 * @prepare_access_checks: pick the sampling addresses, clear their bits
 * @sleep:		the sampling sleep, when the primitive must work during
 *			it (self serves its faults); NULL: a plain sleep
 * @check_accesses:	count the accesses; return the max nr_accesses
 * @wake:		end @sleep early: a stop was requested (may be NULL)
 * @reset_aggregated:	after each aggregation (may be NULL)
 * @target_valid:	the target still exists
 * @cleanup:		at the end (may be NULL)
 */
struct damon_primitive {
	const char *name;
	int (*available)(char *why, size_t len);
	int (*init)(struct uks_damon_ctx *ctx);
	void (*update)(struct uks_damon_ctx *ctx);
	void (*prepare_access_checks)(struct uks_damon_ctx *ctx);
	void (*sleep)(struct uks_damon_ctx *ctx, unsigned long us);
	unsigned int (*check_accesses)(struct uks_damon_ctx *ctx);
	void (*wake)(struct uks_damon_ctx *ctx);
	void (*reset_aggregated)(struct uks_damon_ctx *ctx);
	bool (*target_valid)(struct uks_damon_ctx *ctx, struct damon_target *t);
	void (*cleanup)(struct uks_damon_ctx *ctx);
	/* after the monitor thread was joined, on the thread that joined it */
	void (*joined)(struct uks_damon_ctx *ctx);
	/* init may run again while monitoring, for targets a commit added or
	   gave another id (it skips the targets it has set up) */
	bool init_again;
	/* DAMOS: apply @action to @r of @t; return the bytes it was applied to */
	unsigned long (*apply_scheme)(struct uks_damon_ctx *ctx, struct damon_target *t,
				      struct damon_region *r, unsigned int action);
};

/* 6.15's struct damon_intervals_goal: what the interval tuner aims at */
struct damon_intervals_goal {
	unsigned long access_bp;	/* accesses seen, in bp of the possible */
	unsigned long aggrs;		/* over this many aggregations; 0: no tuning */
	unsigned long min_sample_us;
	unsigned long max_sample_us;
};

/* One target of a commit: its id and, if @nr_ranges, its new regions. */
struct damon_commit_target {
	unsigned long id;
	const struct damon_addr_range *ranges;
	unsigned int nr_ranges;
};

/* What a commit applies to a running context (core/commit.c). */
struct damon_commit {
	struct uks_damon_attrs attrs;
	struct damon_intervals_goal goal;
	const struct damon_commit_target *targets;
	unsigned int nr_targets;
	int ret;			/* the monitor thread's answer */
};

/* The interval tuner's state (core/tune.c); the monitor thread's but the budget and cost. */
struct damon_tune {
	unsigned int monitor_permille;	/* budgets, 0: none (under ctx->lock) */
	unsigned int target_permille;
	struct uks_damon_cost cost;	/* totals (under ctx->lock) */
	unsigned long base_us;		/* the user's sampling interval, or the goal's */
	unsigned long applied_us;	/* what the tuner last left in force */
	unsigned long floor_us;		/* what the budget needs */
	unsigned long samples_per_aggr;
	unsigned long goal_aggrs;	/* aggregations since the goal's last step */
	uint64_t cpu_ns, wall_ns;	/* at the last aggregation */
	uint64_t stall_ns, stall_seen_ns;
	uint64_t samples, samples_seen;	/* samples taken (kdamond.c counts) */
};

/* A scheme and its run state (6.12's struct damos), on ctx->schemes. */
struct damos {
	struct uks_damos_scheme s;		/* the caller's parameters */
	struct uks_damos_stats stat;
	/* quota */
	unsigned long esz;			/* effective size quota, 0: none */
	unsigned long esz_bp;			/* the goal tuning's, x10000 */
	unsigned long charged_sz, total_charged_sz;
	uint64_t total_charged_ns;
	struct timespec charged_from;
	bool window_started;
	unsigned int min_score;
	struct damon_target *charge_target_from;	/* where the last window stopped */
	unsigned long charge_addr_from;
	uint64_t goal_last_psi[UKS_DAMOS_MAX_GOALS];
	/* watermarks */
	bool activated;
	bool wmark_read;
	struct timespec wmark_last;
	unsigned long wmark_wait_us;		/* the last check's answer */
	/* apply interval */
	struct timespec last_apply;
	bool due;				/* applies in this aggregation */
	/* tried regions: the last application's, and the one being made */
	struct uks_damos_tried_region *tried, *building;
	unsigned int nr_tried, nr_building, room_tried, room_building;
	unsigned long tried_bytes, building_bytes;
	struct list_head list;
};

#define damon_for_each_scheme(s, ctx) \
	list_for_each_entry(s, &(ctx)->schemes, list)

struct uks_damon_ctx {
	unsigned long sample_interval;		/* us */
	unsigned long aggr_interval;
	unsigned long primitive_update_interval;
	unsigned long min_nr_regions;
	unsigned long max_nr_regions;
	unsigned long min_region;		/* DAMON_MIN_REGION */

	struct timespec last_aggregation;	/* coarse clock baselines */
	struct timespec last_primitive_update;

	pthread_mutex_t lock;			/* the run state below */
	pthread_cond_t wake;			/* stop requests */
	bool running;				/* ctx->kdamond != NULL */
	bool stop;				/* ctx->kdamond_stop */
	bool has_thread;			/* a thread not joined yet */
	bool primitive_ready;			/* the monitor ran the primitive's init */
	pthread_t thread;
	pid_t tid;
	unsigned int nr;			/* the N of kdamond.N */

	const struct damon_primitive *primitive;
	void *prim_state;			/* the primitive's, per context */
	struct uks_damon_callback callback;
	struct list_head adaptive_targets;

	uint64_t rnd;				/* xorshift64* state */
	unsigned int last_nr_regions;		/* per context (5.15: static) */

	/* core/commit.c, under ->lock */
	struct damon_intervals_goal intervals_goal;	/* for the interval tuner */
	struct damon_commit *pending_commit;	/* posted, not applied yet */
	struct damon_tune tune;
	/*
	 * DAMOS: the schemes, their stats and tried regions.  schemes_lock is
	 * taken alone (never with ctx->lock), by the monitor thread around
	 * the watermark checks and each application, and by the scheme API.
	 */
	pthread_mutex_t schemes_lock;
	struct list_head schemes;
	unsigned int nr_schemes;
};

#define damon_for_each_region(r, t) \
	list_for_each_entry(r, &(t)->regions_list, list)
#define damon_for_each_region_safe(r, next, t) \
	list_for_each_entry_safe(r, next, &(t)->regions_list, list)
#define damon_for_each_target(t, ctx) \
	list_for_each_entry(t, &(ctx)->adaptive_targets, list)
#define damon_for_each_target_safe(t, next, ctx) \
	list_for_each_entry_safe(t, next, &(ctx)->adaptive_targets, list)

static inline unsigned long damon_sz_region(const struct damon_region *r)
{
	return r->ar.end - r->ar.start;
}

static inline struct damon_region *damon_next_region(struct damon_region *r)
{
	return list_next_entry(r, list);
}

static inline struct damon_region *damon_prev_region(struct damon_region *r)
{
	return list_entry(r->list.prev, struct damon_region, list);
}

static inline struct damon_region *damon_first_region(struct damon_target *t)
{
	return list_first_entry(&t->regions_list, struct damon_region, list);
}

#define DAMON_ALIGN(x, a)	((((x) + (a) - 1) / (a)) * (a))
#define DAMON_ALIGN_DOWN(x, a)	(((x) / (a)) * (a))

/* core.c */
struct damon_region *__uks_damon_new_region(unsigned long start, unsigned long end);
void __uks_damon_add_region(struct damon_region *r, struct damon_target *t);
void __uks_damon_insert_region(struct damon_region *r, struct damon_region *prev,
			       struct damon_region *next, struct damon_target *t);
void __uks_damon_destroy_region(struct damon_region *r, struct damon_target *t);
struct damon_target *__uks_damon_new_target(unsigned long id);
void __uks_damon_add_target(struct uks_damon_ctx *ctx, struct damon_target *t);
void __uks_damon_destroy_target(struct damon_target *t);
unsigned int __uks_damon_nr_targets(struct uks_damon_ctx *ctx);
unsigned long __uks_damon_rand(struct uks_damon_ctx *ctx, unsigned long l, unsigned long r);
void __uks_damon_merge_two_regions(struct damon_target *t, struct damon_region *l,
				   struct damon_region *r);
void __uks_damon_merge_regions_of(struct damon_target *t, unsigned int thres,
				  unsigned long sz_limit);
void __uks_damon_kdamond_merge_regions(struct uks_damon_ctx *ctx, unsigned int thres,
				       unsigned long sz_limit);
void __uks_damon_split_region_at(struct uks_damon_ctx *ctx, struct damon_target *t,
				 struct damon_region *r, unsigned long sz_r);
void __uks_damon_split_regions_of(struct uks_damon_ctx *ctx, struct damon_target *t,
				  int nr_subs);
void __uks_damon_kdamond_split_regions(struct uks_damon_ctx *ctx);
void __uks_damon_kdamond_reset_aggregated(struct uks_damon_ctx *ctx);
unsigned long __uks_damon_region_sz_limit(struct uks_damon_ctx *ctx);

/* regions.c: the address-space helpers of 5.15's vaddr.c */
int __uks_damon_three_regions_of(const struct damon_addr_range *maps, unsigned int nr,
				 unsigned long min, struct damon_addr_range regions[3]);
int __uks_damon_evenly_split_region(struct uks_damon_ctx *ctx, struct damon_target *t,
				    struct damon_region *r, unsigned int nr_pieces);
void __uks_damon_init_regions_of(struct uks_damon_ctx *ctx, struct damon_target *t,
				 const struct damon_addr_range regions[3]);
void __uks_damon_apply_three_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
				     const struct damon_addr_range bregions[3]);
int __uks_damon_read_maps(pid_t pid, struct damon_addr_range **out, unsigned int *nr);

/* commit.c */
/* core/tune.c: at the end of each aggregation; primitives report stalls */
void __uks_damon_tune(struct uks_damon_ctx *ctx);
void __uks_damon_tune_start(struct uks_damon_ctx *ctx);
void __uks_damon_cost_stall(struct uks_damon_ctx *ctx, uint64_t ns);
void __uks_damon_set_intervals_goal(struct uks_damon_ctx *ctx,
				    const struct damon_intervals_goal *goal);
bool __uks_damon_valid_intervals_goal(const struct damon_intervals_goal *goal,
				      unsigned long sample_us);
int __uks_damon_set_regions(struct uks_damon_ctx *ctx, struct damon_target *t,
			    const struct damon_addr_range *ranges, unsigned int nr);
int __uks_damon_commit(struct uks_damon_ctx *ctx, struct damon_commit *c);
void __uks_damon_apply_commit(struct uks_damon_ctx *ctx);
/* schemes_api.c (the list), schemes.c (the engine) */
void __uks_damos_init_ctx(struct uks_damon_ctx *ctx);
void __uks_damos_free_ctx(struct uks_damon_ctx *ctx);
void __uks_damos_start(struct uks_damon_ctx *ctx);
unsigned long __uks_damos_wmark_wait_us(struct uks_damon_ctx *ctx);
void __uks_damos_apply(struct uks_damon_ctx *ctx);
int __uks_damos_hot_score(struct uks_damon_ctx *ctx, const struct damon_region *r,
			  const struct uks_damos_scheme *s);
/* schemes_vaddr.c: the actions on a real process, through process_madvise(2) */
int __uks_damos_action_supported(unsigned int action, char *why, size_t len);
unsigned long __uks_damos_va_apply(struct uks_damon_ctx *ctx, struct damon_target *t,
				   struct damon_region *r, unsigned int action);

/* kdamond.c */
extern __thread struct uks_damon_ctx *__uks_damon_current;	/* in a monitor thread */
bool __uks_damon_check_reset_time_interval(struct timespec *baseline, unsigned long us);

/* vaddr.c: what the vaddr primitives share (per-target /proc files) */
struct vaddr_target {
	pid_t pid;
	int pidfd;		/* -1: the process was gone at init */
	int pagemap_fd;
	int clear_refs_fd;
	unsigned long last_page;	/* 5.15's last-checked-page cache */
	bool last_accessed;
	bool have_last;
	bool refs_clean;	/* vaddr-refs: the last smaps read saw no Referenced: */
	unsigned long nr_clears;	/* clear_refs walks done, */
	unsigned long nr_clears_skipped;	/* and skipped as needless */
};
void __uks_damon_join(struct uks_damon_ctx *ctx, pthread_t th);
void __uks_damon_wait_primitive_ready(struct uks_damon_ctx *ctx);
int __uks_damon_va_init(struct uks_damon_ctx *ctx);
int __uks_damon_fva_init(struct uks_damon_ctx *ctx);
void __uks_damon_va_hide_fds(struct uks_damon_ctx *ctx, bool only_move);
void __uks_damon_va_update(struct uks_damon_ctx *ctx);
bool __uks_damon_va_target_valid(struct uks_damon_ctx *ctx, struct damon_target *t);
void __uks_damon_va_cleanup(struct uks_damon_ctx *ctx);
void __uks_damon_va_pick_sampling_addrs(struct uks_damon_ctx *ctx, struct damon_target *t);
int __uks_damon_va_clear_refs(struct vaddr_target *vt, const char *what);
uint64_t __uks_damon_va_now_ns(void);

/* vaddr-refs: a mapping of /proc/PID/smaps */
struct refs_map {
	unsigned long start, end;
	bool referenced;
};
int __uks_damon_parse_smaps(FILE *f, struct refs_map **out, unsigned int *nr);

/* primitives */
extern const struct damon_primitive __uks_damon_synthetic;
extern const struct damon_primitive __uks_damon_vaddr_sd;
extern const struct damon_primitive __uks_damon_vaddr_refs;
extern const struct damon_primitive __uks_damon_fvaddr_sd;	/* fixed ranges */
extern const struct damon_primitive __uks_damon_fvaddr_refs;
extern const struct damon_primitive __uks_damon_self;
void __uks_damon_self_pause(void);
void __uks_damon_self_resume(void);
const struct damon_primitive *__uks_damon_find_primitive(const char *name);
/* Sample the synthetic space of @t at @addr for this sample (1: accessed). */
bool __uks_damon_synth_sample(struct uks_damon_synth *s, unsigned long addr, uint64_t rnd);

/* fd_guard.c: DAMON's descriptors inside a monitored program */
int __uks_damon_fd_move_high(int fd);
int __uks_damon_fd_hide(int fd);
void __uks_damon_fd_unhide(int fd);
bool __uks_damon_fd_hidden(int fd);
int __uks_damon_fd_next_hidden(int from);
int __uks_damon_close_range_unhidden(unsigned int first, unsigned int last, int flags);
void __uks_damon_fd_close(int fd);

#endif
