// SPDX-License-Identifier: MIT
/*
 * The monitor thread's loop, followed sample by sample by a model.
 *
 * core.c checks merge, split and reset one call at a time, and
 * synthetic.c steps the loop by hand: neither proves the order in which
 * the real monitor thread runs them.  A thread that zeroed the counts
 * before after_aggregation, split before it, or merged with another
 * threshold would pass them.  Here the real thread runs on the synthetic
 * primitive, with a pattern of "always" and "never" ranges (so a sample's
 * outcome follows from its address) and a fixed seed, and its hooks
 * compare it with an independent model of 5.15's rules (NOTES.md
 * section 1):
 *  - a sample adds one to a region's count iff the pattern accesses the
 *    region's sampling address (after_sampling sees it before the check);
 *  - at an aggregation, after_aggregation sees the regions merged with the
 *    threshold max_nr_accesses / 10 and the size limit (total size /
 *    min_nr_regions), counts not yet reset, and damon:damon_aggregated
 *    then reports the same regions and counts;
 *  - at an aggregation, before its merge decision, a region's age (6.12)
 *    grows by one when its count is within that threshold of its count
 *    at the last aggregation and is zeroed otherwise; a merge takes the
 *    size-weighted mean of the two ages, as of the counts;
 *  - the next sample sees each of those regions split (not at all above
 *    max_nr_regions / 2; in three if the count equals the last split's and
 *    is below max_nr_regions / 3; else in two), each cut at a page-aligned
 *    tenth of the piece it cuts, all counts zero, and each piece has the
 *    age of the region it comes from and its count as the last one.
 * How many samples an aggregation gets depends on timing, so the model
 * does not predict a whole run: it follows each sample, and takes the
 * random cuts once it has checked them.  A check can only fail if its case
 * occurs, so each run must also see the cases it is there for: merges
 * decided by each limit, and the split modes and their bounds.
 */
#include <fcntl.h>

#include <uks/trace.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB		(1UL << 20)
#define HEAP		0x10000000UL
#define LIBS		0x7f0000000000UL
#define STACK		0x7ffff0000000UL
#define TARGET_ID	77UL
#define SAMPLE_US	1000
#define AGGR_US		20000
#define UPDATE_US	60000000	/* no update within a run */
#define MODEL_ROOM	512		/* regions the model holds */

/* Three mappings and two gaps: the initial regions tile these three. */
static const struct damon_addr_range mappings[] = {
	{ HEAP, HEAP + 256 * MB },
	{ LIBS, LIBS + 64 * MB },
	{ STACK, STACK + 8 * MB },
};

/* A phase of the pattern: its ranges are accessed in every sample, the rest never. */
struct phase {
	unsigned long nr_samples;
	struct damon_addr_range hot[8];
	unsigned int nr_hot;
};

/*
 * Stripes first: once found they take 17 regions at least, more than a
 * small max_nr_regions / 2 (no split).  Then only the stack, a region of
 * its own: the rest merges down to the few regions the size limit allows,
 * a count that holds (so splits in three below max_nr_regions / 3).
 * Bounds that are not page-aligned give the regions across them counts
 * between none and all samples, for the threshold to decide.
 */
static const struct phase phases[] = {
	{ 200, { { HEAP + 16 * MB + 12345, HEAP + 24 * MB },
		 { HEAP + 48 * MB, HEAP + 52 * MB },
		 { HEAP + 72 * MB, HEAP + 76 * MB },
		 { HEAP + 100 * MB, HEAP + 104 * MB + 2222 },
		 { HEAP + 130 * MB, HEAP + 150 * MB + 4321 },
		 { HEAP + 200 * MB, HEAP + 203 * MB },
		 { LIBS + MB, LIBS + 9 * MB } }, 7 },
	{ 150, { { STACK, STACK + 8 * MB } }, 1 },
};

/* What a run exercised: the checks that depend on it can only fail if it occurs. */
enum loop_case {
	MERGED_UNEQUAL,		/* neighbours with counts that differ, within the threshold */
	KEPT_BY_THRESHOLD,	/* neighbours small enough together, counts too far apart */
	KEPT_BY_SIZE,		/* neighbours with close counts, too big together */
	NOT_SPLIT,		/* over max_nr_regions / 2 regions */
	SPLIT_IN_TWO,
	SPLIT_IN_THREE,		/* as many regions as at the last split, under max / 3 */
	SPLIT_AT_HALF,		/* exactly max / 2 regions: split all the same */
	TWO_AT_A_THIRD,		/* as many as at the last split, but exactly max / 3 */
	AGED,			/* a region with a steady count grew older */
	AGE_RESET,		/* a count moved past the threshold: age zero */
	NR_LOOP_CASES
};

static const char *const loop_case_names[NR_LOOP_CASES] = {
	"merged unequal", "kept by the threshold", "kept by the size", "not split",
	"split in two", "split in three", "split at max/2", "in two at max/3",
	"aged", "age reset",
};

#define CASE(c)		(1U << (c))
#define MERGE_CASES	(CASE(MERGED_UNEQUAL) | CASE(KEPT_BY_THRESHOLD) | CASE(KEPT_BY_SIZE))
#define AGE_CASES	(CASE(AGED) | CASE(AGE_RESET))

struct loop_config {
	uint64_t seed;
	unsigned long min_nr_regions, max_nr_regions;
	unsigned long nr_samples;	/* the first aggregation after them stops the run */
	unsigned int must_see;		/* CASE()s */
};

struct model_region {
	unsigned long start, end;
	unsigned int nr_accesses;
	unsigned int age, last_nr_accesses;
};

/* The model: the hooks' private data, used by the monitor thread while it runs. */
struct loop_model {
	/* the test's result: EXPECT_*s only, an ASSERT_* must not jump off this thread */
	struct th_result *th_r;
	const struct loop_config *config;
	struct uks_tracefs_file *trace_pipe;
	unsigned long min_region, sz_limit;
	unsigned long nr_samples;
	unsigned int nr_aggregations;
	struct model_region now[MODEL_ROOM];	/* the regions, with this aggregation's counts */
	unsigned int nr_now;
	struct model_region aggregated[MODEL_ROOM];	/* the last aggregation's, merged */
	unsigned int nr_aggregated;
	unsigned int last_split_nr;	/* 5.15's last_nr_regions */
	unsigned int nr_subs;		/* the last aggregation's split: 1 (none), 2 or 3 */
	unsigned int split_cases;	/* and its split CASE()s */
	bool aggregation_unchecked;	/* its trace events and its split */
	/* what the run exercised */
	unsigned int seen[NR_LOOP_CASES];	/* merges, and splits once checked */
	unsigned int busy_aggregations;		/* with some count above zero */
	char trace_text[1 << 16];
};

static bool pattern_accesses(unsigned long sample, unsigned long addr)
{
	unsigned long cycle = 0, at;

	for (size_t i = 0; i < ARRAY_SIZE(phases); i++)
		cycle += phases[i].nr_samples;
	at = sample % cycle;
	for (size_t i = 0; i < ARRAY_SIZE(phases); i++) {
		if (at >= phases[i].nr_samples) {
			at -= phases[i].nr_samples;
			continue;
		}
		for (unsigned int k = 0; k < phases[i].nr_hot; k++)
			if (addr >= phases[i].hot[k].start && addr < phases[i].hot[k].end)
				return true;
		break;
	}
	return false;
}

static struct uks_damon_synth *make_space(void)
{
	struct uks_damon_synth *s;
	int err = uks_damon_synth_create(&s);

	for (size_t i = 0; i < ARRAY_SIZE(mappings) && !err; i++)
		err = uks_damon_synth_add_mapping(s, mappings[i].start, mappings[i].end);
	for (size_t i = 0; i < ARRAY_SIZE(phases) && !err; i++) {
		err = uks_damon_synth_add_phase(s, phases[i].nr_samples);
		for (unsigned int k = 0; k < phases[i].nr_hot && !err; k++)
			err = uks_damon_synth_add_access(s, phases[i].hot[k].start,
							 phases[i].hot[k].end, 1000);
	}
	if (!err)
		return s;
	uks_damon_synth_destroy(s);
	return NULL;
}

static struct damon_target *the_target(struct uks_damon_ctx *ctx)
{
	return list_first_entry(&ctx->adaptive_targets, struct damon_target, list);
}

/* Copy the regions of @t into @out; false if the model has no room for them. */
static bool read_regions(struct damon_target *t, struct model_region *out, unsigned int *nr)
{
	struct damon_region *r;

	*nr = 0;
	damon_for_each_region(r, t) {
		if (*nr == MODEL_ROOM) {
			TH_LOG("more than %d regions", MODEL_ROOM);
			return false;
		}
		out[*nr].start = r->ar.start;
		out[*nr].end = r->ar.end;
		out[*nr].age = r->age;
		out[*nr].last_nr_accesses = r->last_nr_accesses;
		out[(*nr)++].nr_accesses = r->nr_accesses;
	}
	return true;
}

/* Whether the regions of @t are @want, bounds and counts; logs the first difference. */
static bool regions_are(struct damon_target *t, const struct model_region *want,
			unsigned int nr, const char *when, unsigned long at)
{
	struct damon_region *r;
	unsigned int i = 0;

	damon_for_each_region(r, t) {
		if (i == nr) {
			TH_LOG("%s %lu: region %u %lx-%lx is one too many", when, at, i,
			       r->ar.start, r->ar.end);
			return false;
		}
		if (r->ar.start != want[i].start || r->ar.end != want[i].end ||
		    r->nr_accesses != want[i].nr_accesses || r->age != want[i].age) {
			TH_LOG("%s %lu: region %u is %lx-%lx: %u age %u, the model's %lx-%lx: %u age %u",
			       when, at, i, r->ar.start, r->ar.end, r->nr_accesses, r->age,
			       want[i].start, want[i].end, want[i].nr_accesses, want[i].age);
			return false;
		}
		i++;
	}
	if (i != nr)
		TH_LOG("%s %lu: %u regions, the model has %u", when, at, i, nr);
	return i == nr;
}

/* How many of @regions, from the first, tile [@start, @end); 0 if they do not. */
static unsigned int nr_tiling(const struct model_region *regions, unsigned int nr,
			      unsigned long start, unsigned long end)
{
	unsigned int i = 0;

	while (i < nr && regions[i].start == start && start < regions[i].end &&
	       regions[i].end < end)
		start = regions[i++].end;
	if (i == nr || regions[i].start != start || regions[i].end != end)
		return 0;
	return i + 1;
}

/* Whether @regions tile the mappings in order, with zero counts: the initial regions. */
static bool initial_regions(const struct model_region *regions, unsigned int nr)
{
	unsigned int i = 0;

	for (size_t k = 0; k < ARRAY_SIZE(mappings); k++) {
		unsigned int n = nr_tiling(regions + i, nr - i, mappings[k].start,
					   mappings[k].end);

		if (!n) {
			TH_LOG("the initial regions do not tile %lx-%lx", mappings[k].start,
			       mappings[k].end);
			return false;
		}
		i += n;
	}
	if (i != nr) {
		TH_LOG("%u initial regions outside the mappings", nr - i);
		return false;
	}
	for (i = 0; i < nr; i++) {
		if (regions[i].nr_accesses || regions[i].age || regions[i].last_nr_accesses) {
			TH_LOG("initial region %lx-%lx has a count or an age", regions[i].start,
			       regions[i].end);
			return false;
		}
	}
	return true;
}

static int before_start(struct uks_damon_ctx *ctx)
{
	struct loop_model *m = uks_damon_callback_private(ctx);
	struct th_result *_th_r = m->th_r;
	unsigned long total = 0;

	for (size_t k = 0; k < ARRAY_SIZE(mappings); k++)
		total += mappings[k].end - mappings[k].start;
	m->sz_limit = total / m->config->min_nr_regions;
	if (m->sz_limit < m->min_region)
		m->sz_limit = m->min_region;
	EXPECT_TRUE(read_regions(the_target(ctx), m->now, &m->nr_now) &&
		    initial_regions(m->now, m->nr_now));
	return _th_r->failed;
}

/*
 * 5.15's damon_split_regions_of() tries @nr_subs - 1 cuts of a region,
 * each in the piece left of the last cut, while that piece is over two
 * minimum regions: at ALIGN_DOWN(k * size / 10) for a random k in 1..9,
 * skipped when that is 0.  So right to left, each cut must be such a point
 * of the piece before it, and fewer pieces than @nr_subs mean a try could
 * not cut: the piece left was under ten minimum regions.
 */
static bool split_follows_the_rule(const struct model_region *whole,
				   const struct model_region *pieces, unsigned int nr_pieces,
				   unsigned int nr_subs, unsigned long min)
{
	unsigned long size = whole->end - whole->start;

	if (nr_pieces > nr_subs)
		return false;
	for (unsigned int i = nr_pieces - 1; i > 0; i--) {
		unsigned long cut = pieces[i].start - whole->start;
		bool at_a_tenth = false;

		for (unsigned long k = 1; k <= 9; k++)
			if (cut == k * size / 10 / min * min)
				at_a_tenth = true;
		if (size <= 2 * min || !at_a_tenth)
			return false;
		size = cut;
	}
	return nr_pieces == nr_subs || size < 10 * min;
}

/*
 * At the first sample after an aggregation: whether the regions are the
 * aggregated ones split as decided, aligned, with zero counts.  They
 * become the model's regions (it cannot know the random cuts beforehand).
 */
static bool split_as_decided(struct loop_model *m, struct damon_target *t)
{
	unsigned int i = 0, most_pieces = 1;

	if (!read_regions(t, m->now, &m->nr_now))
		return false;
	for (unsigned int a = 0; a < m->nr_aggregated; a++) {
		const struct model_region *whole = &m->aggregated[a];
		const struct model_region *pieces = &m->now[i];
		unsigned int n = nr_tiling(pieces, m->nr_now - i, whole->start, whole->end);

		if (!n) {
			TH_LOG("aggregation %u: %lx-%lx is not cut into pieces",
			       m->nr_aggregations, whole->start, whole->end);
			return false;
		}
		for (unsigned int p = 0; p < n; p++) {
			if (pieces[p].nr_accesses || pieces[p].start % m->min_region ||
			    pieces[p].end % m->min_region) {
				TH_LOG("aggregation %u: piece %lx-%lx: %u unaligned or not reset",
				       m->nr_aggregations, pieces[p].start, pieces[p].end,
				       pieces[p].nr_accesses);
				return false;
			}
			if (pieces[p].age != whole->age ||
			    pieces[p].last_nr_accesses != whole->nr_accesses) {
				TH_LOG("aggregation %u: piece %lx-%lx has age %u, last count %u; its region %u, %u",
				       m->nr_aggregations, pieces[p].start, pieces[p].end,
				       pieces[p].age, pieces[p].last_nr_accesses, whole->age,
				       whole->nr_accesses);
				return false;
			}
		}
		if (!split_follows_the_rule(whole, pieces, n, m->nr_subs, m->min_region)) {
			TH_LOG("aggregation %u: %lx-%lx, to split in %u at most, is cut at:",
			       m->nr_aggregations, whole->start, whole->end, m->nr_subs);
			for (unsigned int p = 1; p < n; p++)
				TH_LOG("  +%lx", pieces[p].start - whole->start);
			return false;
		}
		if (n > most_pieces)
			most_pieces = n;
		i += n;
	}
	if (i != m->nr_now) {
		TH_LOG("aggregation %u: %u regions after the split, %u from it",
		       m->nr_aggregations, m->nr_now, i);
		return false;
	}
	for (unsigned int c = 0; c < NR_LOOP_CASES && most_pieces == m->nr_subs; c++)
		m->seen[c] += !!(m->split_cases & CASE(c));
	return true;
}

/* Whether trace_pipe holds exactly the last aggregation's damon_aggregated events. */
static bool trace_shows_the_aggregation(struct loop_model *m)
{
	size_t len = 0, room = sizeof(m->trace_text) - 1;
	unsigned int n = 0;
	ssize_t got;
	char *line, *save;

	while (len < room && (got = uks_tracefs_read(m->trace_pipe, m->trace_text + len,
						     room - len)) > 0)
		len += (size_t)got;
	if (len == room) {
		TH_LOG("aggregation %u: over %zu bytes of events", m->nr_aggregations, room);
		return false;
	}
	m->trace_text[len] = '\0';
	for (line = strtok_r(m->trace_text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		const char *event = strstr(line, " damon_aggregated: ");
		const struct model_region *want = &m->aggregated[n];
		unsigned long id, start, end;
		unsigned int nr_regions, nr_accesses;

		if (n == m->nr_aggregated || !event ||
		    sscanf(event, " damon_aggregated: target_id=%lu nr_regions=%u %lu-%lu: %u",
			   &id, &nr_regions, &start, &end, &nr_accesses) != 5) {
			TH_LOG("aggregation %u: unexpected line: %s", m->nr_aggregations, line);
			return false;
		}
		if (id != TARGET_ID || nr_regions != m->nr_aggregated || start != want->start ||
		    end != want->end || nr_accesses != want->nr_accesses) {
			TH_LOG("aggregation %u: event %u is '%s', the hook saw %lu-%lu: %u of %u",
			       m->nr_aggregations, n, event + 1, want->start, want->end,
			       want->nr_accesses, m->nr_aggregated);
			return false;
		}
		n++;
	}
	if (n != m->nr_aggregated)
		TH_LOG("aggregation %u: %u events, %u regions", m->nr_aggregations, n,
		       m->nr_aggregated);
	return n == m->nr_aggregated;
}

/* Count this sample in the model; false if a sampling address is out of its region. */
static bool model_sample(struct loop_model *m, struct damon_target *t, unsigned long sample)
{
	struct damon_region *r;
	unsigned int i = 0;

	damon_for_each_region(r, t) {
		struct model_region *mr = &m->now[i++];

		if (r->sampling_addr < mr->start || r->sampling_addr >= mr->end) {
			TH_LOG("sample %lu: sampling address %lx out of %lx-%lx", sample,
			       r->sampling_addr, mr->start, mr->end);
			return false;
		}
		if (pattern_accesses(sample, r->sampling_addr))
			mr->nr_accesses++;
	}
	return true;
}

static int after_sampling(struct uks_damon_ctx *ctx)
{
	struct loop_model *m = uks_damon_callback_private(ctx);
	struct th_result *_th_r = m->th_r;
	struct damon_target *t = the_target(ctx);
	unsigned long sample = m->nr_samples++;

	if (m->aggregation_unchecked) {
		m->aggregation_unchecked = false;
		EXPECT_TRUE(trace_shows_the_aggregation(m));
		EXPECT_TRUE(split_as_decided(m, t));
	}
	if (!_th_r->failed)
		EXPECT_TRUE(regions_are(t, m->now, m->nr_now, "sample", sample));
	if (!_th_r->failed)
		EXPECT_TRUE(model_sample(m, t, sample));
	return _th_r->failed;
}

/* 5.15's merge of the model's regions into m->aggregated, counting what decided. */
static void model_merge(struct loop_model *m)
{
	unsigned int max_nr_accesses = 0, threshold;

	for (unsigned int i = 0; i < m->nr_now; i++)
		if (m->now[i].nr_accesses > max_nr_accesses)
			max_nr_accesses = m->now[i].nr_accesses;
	threshold = max_nr_accesses / 10;
	m->busy_aggregations += max_nr_accesses > 0;
	m->nr_aggregated = 0;
	for (unsigned int i = 0; i < m->nr_now; i++) {
		struct model_region *r = &m->now[i];
		struct model_region *prev;
		unsigned long sz_prev, sz_r = r->end - r->start;
		unsigned int diff, moved;
		bool close, small;

		moved = r->nr_accesses > r->last_nr_accesses ?
			r->nr_accesses - r->last_nr_accesses :
			r->last_nr_accesses - r->nr_accesses;
		if (moved > threshold) {
			m->seen[AGE_RESET] += r->age > 0;
			r->age = 0;
		} else {
			r->age++;
			m->seen[AGED]++;
		}

		if (!m->nr_aggregated || m->aggregated[m->nr_aggregated - 1].end != r->start) {
			m->aggregated[m->nr_aggregated++] = *r;
			continue;
		}
		prev = &m->aggregated[m->nr_aggregated - 1];
		sz_prev = prev->end - prev->start;
		diff = prev->nr_accesses > r->nr_accesses ? prev->nr_accesses - r->nr_accesses :
							    r->nr_accesses - prev->nr_accesses;
		close = diff <= threshold;
		small = sz_prev + sz_r <= m->sz_limit;
		if (close && small) {
			prev->nr_accesses = (unsigned int)((prev->nr_accesses * sz_prev +
							    r->nr_accesses * sz_r) /
							   (sz_prev + sz_r));
			prev->age = (unsigned int)((prev->age * sz_prev + r->age * sz_r) /
						   (sz_prev + sz_r));
			prev->end = r->end;
			m->seen[MERGED_UNEQUAL] += diff > 0;
			continue;
		}
		m->seen[KEPT_BY_THRESHOLD] += small;
		m->seen[KEPT_BY_SIZE] += close;
		m->aggregated[m->nr_aggregated++] = *r;
	}
}

static int after_aggregation(struct uks_damon_ctx *ctx)
{
	struct loop_model *m = uks_damon_callback_private(ctx);
	struct th_result *_th_r = m->th_r;
	struct damon_target *t = the_target(ctx);
	unsigned long max_nr_regions = m->config->max_nr_regions;
	unsigned int nr;

	m->nr_aggregations++;
	model_merge(m);
	EXPECT_TRUE(regions_are(t, m->aggregated, m->nr_aggregated, "aggregation",
				m->nr_aggregations));
	EXPECT_EQ(m->nr_aggregated, t->nr_regions);
	nr = m->nr_aggregated;
	if (nr > max_nr_regions / 2) {
		m->nr_subs = 1;
		m->split_cases = CASE(NOT_SPLIT);
	} else {
		bool held = nr == m->last_split_nr;

		m->nr_subs = held && nr < max_nr_regions / 3 ? 3 : 2;
		m->split_cases = CASE(m->nr_subs == 3 ? SPLIT_IN_THREE : SPLIT_IN_TWO);
		if (nr == max_nr_regions / 2)
			m->split_cases |= CASE(SPLIT_AT_HALF);
		if (held && nr == max_nr_regions / 3)
			m->split_cases |= CASE(TWO_AT_A_THIRD);
		m->last_split_nr = nr;
	}
	m->aggregation_unchecked = true;
	return _th_r->failed || m->nr_samples >= m->config->nr_samples;
}

static void run_against_the_model(struct th_result *_th_r, const struct loop_config *config)
{
	struct loop_model *m = calloc(1, sizeof(*m));
	struct uks_damon_callback hooks = { .priv = m,
					    .before_start = before_start,
					    .after_sampling = after_sampling,
					    .after_aggregation = after_aggregation };
	struct uks_damon_synth *space = make_space();
	struct uks_damon_ctx *ctx;
	struct uks_trace *tr;
	char seen[256];
	int len = 0;

	ASSERT_NONNULL(m);
	ASSERT_NONNULL(space);
	m->th_r = _th_r;
	m->config = config;
	m->min_region = (unsigned long)getpagesize();	/* 5.15's DAMON_MIN_REGION */
	ASSERT_EQ(0, uks_trace_create(NULL, &tr));
	ASSERT_EQ(0, uks_tracefs_write_str(tr, "events/damon/damon_aggregated/enable", "1", 0));
	ASSERT_EQ(0, uks_tracefs_open(tr, "trace_pipe", O_RDONLY | O_NONBLOCK, &m->trace_pipe));

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	uks_damon_set_seed(ctx, config->seed);
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, "synthetic"));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, SAMPLE_US, AGGR_US, UPDATE_US,
					 config->min_nr_regions, config->max_nr_regions));
	ASSERT_EQ(0, uks_damon_add_target(ctx, TARGET_ID, space, NULL));
	uks_damon_set_callback(ctx, &hooks);
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 2500 && uks_damon_is_running(ctx); i++)
		usleep(10000);
	ASSERT_FALSE(uks_damon_is_running(ctx));
	/* the last aggregation's events; its split went with the regions at the end */
	if (m->aggregation_unchecked)
		EXPECT_TRUE(trace_shows_the_aggregation(m));

	TH_LOG("seed %lu, %lu..%lu regions: %lu samples, %u aggregations (%u busy)",
	       (unsigned long)config->seed, config->min_nr_regions, config->max_nr_regions,
	       m->nr_samples, m->nr_aggregations, m->busy_aggregations);
	for (unsigned int c = 0; c < NR_LOOP_CASES; c++)
		len += snprintf(seen + len, sizeof(seen) - len, "%s%s %u", c ? ", " : "",
				loop_case_names[c], m->seen[c]);
	TH_LOG("seen: %s", seen);
	for (unsigned int c = 0; c < NR_LOOP_CASES; c++)
		if (config->must_see & CASE(c))
			EXPECT_GT(m->seen[c], 0U);
	EXPECT_GE(m->nr_samples, config->nr_samples);
	EXPECT_GT(m->busy_aggregations, 0U);

	uks_damon_ctx_destroy(ctx);
	uks_damon_synth_destroy(space);
	uks_tracefs_close(m->trace_pipe);
	uks_trace_destroy(tr);
	free(m);
}

/* Far below max / 2 regions: splits in two, and in three when the count holds. */
TEST(seed_1_max_1000_splits_in_two_and_three)
{
	static const struct loop_config config = {
		.seed = 1, .min_nr_regions = 10, .max_nr_regions = 1000, .nr_samples = 700,
		.must_see = MERGE_CASES | AGE_CASES | CASE(SPLIT_IN_TWO) | CASE(SPLIT_IN_THREE),
	};

	run_against_the_model(_th_r, &config);
}

/* The stripes take more than max / 2 regions, the stack phase less than max / 3. */
TEST(seed_2_max_24_splits_every_way)
{
	static const struct loop_config config = {
		.seed = 2, .min_nr_regions = 3, .max_nr_regions = 24, .nr_samples = 700,
		.must_see = MERGE_CASES | AGE_CASES | CASE(NOT_SPLIT) | CASE(SPLIT_IN_TWO) |
			    CASE(SPLIT_IN_THREE),
	};

	run_against_the_model(_th_r, &config);
}

/* The stack phase holds at 6 regions, max / 3: still in two. */
TEST(seed_3_max_18_holds_at_a_third)
{
	static const struct loop_config config = {
		.seed = 3, .min_nr_regions = 4, .max_nr_regions = 18, .nr_samples = 700,
		.must_see = MERGE_CASES | AGE_CASES | CASE(NOT_SPLIT) | CASE(SPLIT_IN_TWO) |
			    CASE(TWO_AT_A_THIRD),
	};

	run_against_the_model(_th_r, &config);
}

/*
 * The 9 initial regions cannot merge (the heap's 7 are each over half the
 * size limit, the other two are alone in their mappings): the first
 * aggregation has max / 2 and still splits; later ones have more.
 */
TEST(seed_4_max_18_splits_at_half)
{
	static const struct loop_config config = {
		.seed = 4, .min_nr_regions = 10, .max_nr_regions = 18, .nr_samples = 300,
		.must_see = CASE(KEPT_BY_SIZE) | CASE(NOT_SPLIT) | CASE(SPLIT_AT_HALF),
	};

	run_against_the_model(_th_r, &config);
}

TEST_HARNESS_MAIN
