// SPDX-License-Identifier: MIT
/*
 * DAMON records: the damon_aggregated line parser, the writer's bytes
 * against damo's documented layout (header, versions 0/1/2), the round
 * trip writer -> reader, lost lines, damo's start times, the text reader,
 * garbage input, and the report computations (heats on a hand-made record
 * with values worked out by hand, the guide, working set sizes).
 */
#include <sys/mman.h>
#include <unistd.h>

#include <uks/damon_record.h>
#include <uks/slab.h>

#include "harness.h"

static const char line_pipe[] =
	"       kdamond.0-4242    [001] .....   812.114432: damon_aggregated: "
	"target_id=4242 nr_regions=2 4096-8192: 7\n";
static const char line_perf[] =
	"kdamond.0  4452 [000] 82877.315633: damon:damon_aggregated: target_id=1844 "
	"nr_regions=17 140731667070976-140731668037632: 0 3";

TEST(parses_trace_pipe_and_perf_script_lines)
{
	struct uks_damon_agg_event ev;

	ASSERT_EQ(0, uks_damon_parse_aggregated(line_pipe, strlen(line_pipe), &ev));
	ASSERT_EQ(812114432000LL, ev.ts_ns);
	ASSERT_EQ(4242ULL, ev.target_id);
	ASSERT_EQ(2U, ev.nr_regions);
	ASSERT_EQ(4096ULL, ev.start);
	ASSERT_EQ(8192ULL, ev.end);
	ASSERT_EQ(7U, ev.nr_accesses);
	ASSERT_EQ(0, uks_damon_parse_aggregated(line_perf, strlen(line_perf), &ev));
	ASSERT_EQ(82877315633000LL, ev.ts_ns);
	ASSERT_EQ(1844ULL, ev.target_id);
	ASSERT_EQ(17U, ev.nr_regions);
	ASSERT_EQ(140731667070976ULL, ev.start);
	ASSERT_EQ(140731668037632ULL, ev.end);
	ASSERT_EQ(0U, ev.nr_accesses);
}

TEST(rejects_other_and_malformed_lines)
{
	static const char *const other[] = {
		"# tracer: nop", "", "kdamond.0-1 [000] ..... 1.000001: sched_switch: x",
	};
	static const char *const bad[] = {
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions=2 1-2:",
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions=2 1-2: x",
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions= 1-2: 3",
		"x [000] 1.000001: damon_aggregated: target_id=99999999999999999999 nr_regions=2 1-2: 3",
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions=4294967296 1-2: 3",
		"x [000] nots: damon_aggregated: target_id=1 nr_regions=2 1-2: 3",
		"damon_aggregated: target_id=1 nr_regions=2 1-2: 3",
		"x [000] 1.0000000001: damon_aggregated: target_id=1 nr_regions=2 1-2: 3",
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions=2 1-2: 3x",
		"x [000] 1.000001: damon_aggregated: target_id=1 nr_regions=2 8192-4096: 3",
	};
	struct uks_damon_agg_event ev;

	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		EXPECT_EQ(-ENOENT, uks_damon_parse_aggregated(other[i], strlen(other[i]), &ev));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		EXPECT_EQ(-EINVAL, uks_damon_parse_aggregated(bad[i], strlen(bad[i]), &ev));
		if (uks_damon_parse_aggregated(bad[i], strlen(bad[i]), &ev) != -EINVAL)
			TH_LOG("accepted: %s", bad[i]);
	}
}

/* trace text of two snapshots of target 9 and one of target 5, interleaved */
static const char trace_text[] =
	"# tracer: nop\n"
	"#\n"
	" kdamond.0-10 [000] ..... 100.000001: damon_aggregated: target_id=9 nr_regions=2 4096-8192: 3\n"
	" kdamond.0-10 [000] ..... 100.000001: damon_aggregated: target_id=9 nr_regions=2 8192-16384: 0\n"
	" kdamond.0-10 [000] ..... 100.000002: damon_aggregated: target_id=5 nr_regions=1 65536-131072: 20\n"
	" kdamond.0-10 [000] ..... 100.100001: damon_aggregated: target_id=9 nr_regions=2 4096-12288: 5\n"
	" kdamond.0-10 [000] ..... 100.100001: damon_aggregated: target_id=9 nr_regions=2 12288-16384: 1\n";

static unsigned char *write_record(struct th_result *_th_r, int version, const char *text,
				   size_t chunk, size_t *len, struct uks_damon_rec_stats *st)
{
	struct uks_damon_rec_writer *w;
	int fd = memfd_create("rec", MFD_CLOEXEC);
	size_t n = strlen(text);
	unsigned char *buf;
	off_t sz;

	if (fd < 0 || uks_damon_rec_writer_create(fd, version, &w))
		return NULL;
	for (size_t off = 0; off < n; off += chunk)
		if (uks_damon_rec_writer_feed(w, text + off, off + chunk > n ? n - off : chunk))
			return NULL;
	if (uks_damon_rec_writer_finish(w, st))
		return NULL;
	sz = lseek(fd, 0, SEEK_END);
	buf = malloc((size_t)sz + 1);
	if (!buf || pread(fd, buf, (size_t)sz, 0) != sz)
		return NULL;
	close(fd);
	*len = (size_t)sz;
	return buf;
}

#define GET(type, p) ({ type _v; memcpy(&_v, (p), sizeof(_v)); (p) += sizeof(_v); _v; })

TEST(writer_bytes_follow_damos_layout)
{
	struct uks_damon_rec_stats st;
	size_t len;
	/* 7-byte chunks: lines arrive split everywhere */
	unsigned char *b = write_record(_th_r, 2, trace_text, 7, &len, &st), *p = b;

	ASSERT_NONNULL(b);
	ASSERT_EQ(3UL, st.snapshots);
	ASSERT_EQ(5UL, st.lines);
	ASSERT_EQ(0UL, st.dropped);
	/* 16 + 4 header, then entries of 16 + 4 + (8 + 4) + 20 per region */
	ASSERT_EQ((size_t)(20 + (32 + 40) + (32 + 20) + (32 + 40)), len);
	ASSERT_EQ(0, memcmp(p, "damon_recfmt_ver", 16));
	p += 16;
	ASSERT_EQ(2, GET(int32_t, p));
	ASSERT_EQ(100LL, GET(int64_t, p));
	ASSERT_EQ(1000LL, GET(int64_t, p));		/* 100.000001 s */
	ASSERT_EQ(1U, GET(uint32_t, p));		/* one target per entry */
	ASSERT_EQ(9ULL, GET(uint64_t, p));
	ASSERT_EQ(2U, GET(uint32_t, p));
	ASSERT_EQ(4096ULL, GET(uint64_t, p));
	ASSERT_EQ(8192ULL, GET(uint64_t, p));
	ASSERT_EQ(3U, GET(uint32_t, p));
	ASSERT_EQ(8192ULL, GET(uint64_t, p));
	ASSERT_EQ(16384ULL, GET(uint64_t, p));
	ASSERT_EQ(0U, GET(uint32_t, p));
	ASSERT_EQ(100LL, GET(int64_t, p));		/* target 5's, complete second */
	ASSERT_EQ(2000LL, GET(int64_t, p));
	ASSERT_EQ(1U, GET(uint32_t, p));
	ASSERT_EQ(5ULL, GET(uint64_t, p));
	ASSERT_EQ(1U, GET(uint32_t, p));
	ASSERT_EQ(65536ULL, GET(uint64_t, p));
	ASSERT_EQ(131072ULL, GET(uint64_t, p));
	ASSERT_EQ(20U, GET(uint32_t, p));
	ASSERT_EQ(100LL, GET(int64_t, p));
	ASSERT_EQ(100001000LL, GET(int64_t, p));
	free(b);
}

TEST(versions_0_and_1)
{
	size_t len;
	unsigned char *b = write_record(_th_r, 0, trace_text, 4096, &len, NULL), *p;

	ASSERT_NONNULL(b);
	ASSERT_EQ((size_t)((32 + 40) + (32 + 20) + (32 + 40)), len);	/* no header */
	free(b);
	b = write_record(_th_r, 1, trace_text, 4096, &len, NULL);
	ASSERT_NONNULL(b);
	ASSERT_EQ((size_t)(20 + (28 + 40) + (28 + 20) + (28 + 40)), len);	/* int32 ids */
	p = b + 16;
	ASSERT_EQ(1, GET(int32_t, p));
	p += 16 + 4;
	ASSERT_EQ(9, GET(int32_t, p));
	free(b);
	ASSERT_EQ(-EINVAL, uks_damon_rec_writer_create(1, 3, &(struct uks_damon_rec_writer *){ 0 }));
}

TEST(round_trip_and_damos_start_times)
{
	for (int version = 0; version <= 2; version++) {
		struct uks_damon_record *rec;
		uint64_t ids[4];
		size_t len;
		unsigned char *b = write_record(_th_r, version, trace_text, 13, &len, NULL);

		ASSERT_NONNULL(b);
		ASSERT_EQ(0, uks_damon_record_parse(b, len, &rec));
		ASSERT_EQ(version, rec->version);
		ASSERT_EQ((size_t)3, rec->nr_snapshots);
		ASSERT_EQ(2, uks_damon_record_targets(rec, ids, 4));
		ASSERT_EQ(9ULL, ids[0]);
		ASSERT_EQ(5ULL, ids[1]);
		ASSERT_EQ(9ULL, rec->snapshots[2].target_id);
		ASSERT_EQ(2U, rec->snapshots[2].nr_regions);
		ASSERT_EQ(4096ULL, rec->snapshots[2].regions[0].start);
		ASSERT_EQ(12288ULL, rec->snapshots[2].regions[0].end);
		ASSERT_EQ(5U, rec->snapshots[2].regions[0].nr_accesses);
		ASSERT_EQ(1U, rec->snapshots[2].regions[1].nr_accesses);
		/* target 9: ends 100.000001 and 100.100001 s; the first starts one mean
		 * snapshot (100 ms) earlier, the second where the first ended */
		ASSERT_EQ(100000001000LL - 100000000LL, rec->snapshots[0].start_ns);
		ASSERT_EQ(100000001000LL, rec->snapshots[2].start_ns);
		ASSERT_EQ(100100001000LL, rec->snapshots[2].end_ns);
		/* target 5 has one snapshot: it starts where it ends */
		ASSERT_EQ(rec->snapshots[1].end_ns, rec->snapshots[1].start_ns);
		uks_damon_record_free(rec);
		free(b);
	}
}

TEST(text_input_is_read_like_perf_script)
{
	struct uks_damon_record *rec;

	ASSERT_EQ(0, uks_damon_record_parse(trace_text, strlen(trace_text), &rec));
	ASSERT_EQ(-1, rec->version);
	ASSERT_EQ((size_t)3, rec->nr_snapshots);
	ASSERT_EQ(20U, rec->snapshots[1].regions[0].nr_accesses);
	uks_damon_record_free(rec);
	/* the last line without its newline still counts */
	ASSERT_EQ(0, uks_damon_record_parse(line_perf, strlen(line_perf), &rec));
	ASSERT_EQ((size_t)0, rec->nr_snapshots);	/* 1 of 17 regions: incomplete */
	uks_damon_record_free(rec);
}

TEST(lost_lines_drop_the_partial_snapshot)
{
	static const char text[] =
		"k-1 [000] ..... 1.000000: damon_aggregated: target_id=1 nr_regions=3 0-10: 1\n"
		"k-1 [000] ..... 1.000000: damon_aggregated: target_id=1 nr_regions=3 10-20: 1\n"
		/* the third line was lost; the next aggregation has 2 regions */
		"k-1 [000] ..... 1.100000: damon_aggregated: target_id=1 nr_regions=2 0-15: 1\n"
		"k-1 [000] ..... 1.100000: damon_aggregated: target_id=1 nr_regions=2 15-30: 1\n"
		/* same count again, but the addresses restart: a new snapshot */
		"k-1 [000] ..... 1.200000: damon_aggregated: target_id=1 nr_regions=2 0-15: 1\n"
		"k-1 [000] ..... 1.300000: damon_aggregated: target_id=1 nr_regions=2 0-15: 1\n"
		"k-1 [000] ..... 1.300000: damon_aggregated: target_id=1 nr_regions=2 15-30: 4\n"
		"k-1 [000] ..... 1.400000: damon_aggregated: target_id=1 nr_regions=0 0-15: 1\n"
		"k-1 [000] ..... 1.400000: damon_aggregated: target_id=1 nr_regions=2 0-15: bad\n";
	struct uks_damon_rec_stats st;
	size_t len;
	unsigned char *b = write_record(_th_r, 2, text, 5, &len, &st);
	struct uks_damon_record *rec;

	ASSERT_NONNULL(b);
	ASSERT_EQ(2UL, st.snapshots);
	ASSERT_EQ(3UL, st.dropped);
	ASSERT_EQ(2UL, st.bad_lines);
	ASSERT_EQ(0, uks_damon_record_parse(b, len, &rec));
	ASSERT_EQ((size_t)2, rec->nr_snapshots);
	ASSERT_EQ(1300000000LL, rec->snapshots[1].end_ns);
	ASSERT_EQ(4U, rec->snapshots[1].regions[1].nr_accesses);
	uks_damon_record_free(rec);
	free(b);
}

TEST(garbage_and_truncated_files)
{
	struct uks_damon_record *rec;
	size_t len;
	unsigned char *b = write_record(_th_r, 2, trace_text, 4096, &len, NULL);
	unsigned char junk[4096];
	uint64_t x = 88172645463325252ULL;

	ASSERT_NONNULL(b);
	/* a cut inside a time stamp ends the file (damo stops there) */
	ASSERT_EQ(0, uks_damon_record_parse(b, len - (32 + 40) + 10, &rec));
	ASSERT_EQ((size_t)2, rec->nr_snapshots);
	uks_damon_record_free(rec);
	/* a cut anywhere else inside an entry is an error */
	for (size_t cut = len - (32 + 40) + 16; cut < len; cut++)
		ASSERT_EQ(-EINVAL, uks_damon_record_parse(b, cut, &rec));
	/* an unknown version */
	b[16] = 7;
	ASSERT_EQ(-EINVAL, uks_damon_record_parse(b, len, &rec));
	/* a region count beyond the file */
	b[16] = 2;
	memset(b + 20 + 16 + 4 + 8, 0xff, 4);
	ASSERT_EQ(-EINVAL, uks_damon_record_parse(b, len, &rec));
	free(b);
	ASSERT_EQ(0, uks_damon_record_parse("", 0, &rec));
	ASSERT_EQ((size_t)0, rec->nr_snapshots);
	uks_damon_record_free(rec);
	/* random bytes: parse or fail, never crash or hog memory */
	for (int round = 0; round < 200; round++) {
		size_t n = (size_t)(x % sizeof(junk));
		int ret;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			junk[i] = (unsigned char)(round & 1 ? x % 4 : x);
		}
		ret = uks_damon_record_parse(junk, n, &rec);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL);
		if (!ret)
			uks_damon_record_free(rec);
	}
	ASSERT_EQ(-ENOENT, uks_damon_record_load("/nonexistent/damon.data", &rec));
}

/*
 * uks_damon_record_read(): a cut inside an entry keeps the whole snapshots
 * before it with UKS_DAMON_REC_PARTIAL and says where the file ends; a
 * region ending below its start is refused with its offset.
 */
TEST(read_partial_keeps_the_snapshots_before_a_cut)
{
	struct uks_damon_rec_diag d;
	struct uks_damon_record *rec;
	size_t len;
	unsigned char *b = write_record(_th_r, 2, trace_text, 4096, &len, NULL);
	size_t last = len - (32 + 40);

	ASSERT_NONNULL(b);
	for (size_t cut = last + 1; cut < len; cut++) {
		/* a cut time stamp ends the file anyway (damo stops there) */
		if (cut < last + 16) {
			ASSERT_EQ(0, uks_damon_record_read(b, cut, 0, &rec, &d));
			uks_damon_record_free(rec);
		} else {
			ASSERT_EQ(-EINVAL, uks_damon_record_read(b, cut, 0, &rec, &d));
		}
		ASSERT_EQ((uint64_t)last, d.entry);
		ASSERT_EQ((uint64_t)cut, d.offset);
		ASSERT_NONNULL(d.reason);
		ASSERT_EQ(0, uks_damon_record_read(b, cut, UKS_DAMON_REC_PARTIAL, &rec, &d));
		ASSERT_EQ((size_t)2, rec->nr_snapshots);
		ASSERT_EQ((uint64_t)last, d.entry);
		ASSERT_EQ((uint64_t)cut, d.offset);
		ASSERT_NONNULL(d.reason);
		/* damo's start times from the snapshots kept */
		ASSERT_EQ(rec->snapshots[0].end_ns, rec->snapshots[0].start_ns);
		uks_damon_record_free(rec);
	}
	ASSERT_EQ(0, uks_damon_record_read(b, len, UKS_DAMON_REC_PARTIAL, &rec, &d));
	ASSERT_EQ((size_t)3, rec->nr_snapshots);
	ASSERT_NULL(d.reason);
	uks_damon_record_free(rec);
	/* the third snapshot's first region (at last + 32) ends below its start */
	memcpy(b + last + 32 + 8, &(uint64_t){ 4095 }, 8);
	ASSERT_EQ(-EINVAL, uks_damon_record_read(b, len, UKS_DAMON_REC_PARTIAL, &rec, &d));
	ASSERT_NULL(rec);
	ASSERT_EQ((uint64_t)last, d.entry);
	ASSERT_EQ((uint64_t)(last + 32), d.offset);
	ASSERT_STREQ("region end below its start", d.reason);
	/* end == start is a region of no bytes, not a corrupt one */
	memcpy(b + last + 32 + 8, &(uint64_t){ 4096 }, 8);
	ASSERT_EQ(0, uks_damon_record_read(b, len, 0, &rec, NULL));
	uks_damon_record_free(rec);
	free(b);
}

/* Any number of targets: no fixed table anywhere (adjust took 4096). */
TEST(records_of_many_targets)
{
	enum { NT = 5000 };
	struct uks_damon_rec_region r = { 4096, 8192, 1, 0 };
	struct uks_damon_rec_snapshot *snaps = calloc(2 * NT, sizeof(*snaps));
	struct uks_damon_record rec = { .version = 2, .nr_snapshots = 2 * NT, .snapshots = snaps };
	struct uks_damon_rec_targets g;
	struct uks_damon_record *adj;
	uint64_t *ids = calloc(NT, sizeof(*ids));

	ASSERT_NONNULL(snaps);
	ASSERT_NONNULL(ids);
	for (size_t i = 0; i < 2 * NT; i++)	/* targets 7, 14, ..., interleaved twice */
		snaps[i] = (struct uks_damon_rec_snapshot){
			.target_id = 7 * (i % NT + 1), .start_ns = (int64_t)(i / NT) * 1000000,
			.end_ns = (int64_t)(i / NT + 1) * 1000000, .nr_regions = 1, .regions = &r,
		};
	ASSERT_EQ(NT, uks_damon_record_targets(&rec, ids, NT));
	ASSERT_EQ(7ULL, ids[0]);
	ASSERT_EQ(7ULL * NT, ids[NT - 1]);
	ASSERT_EQ(NT, uks_damon_record_targets(&rec, ids, 3));
	ASSERT_EQ(0, uks_damon_record_group(&rec, &g));
	ASSERT_EQ((size_t)NT, g.nr);
	for (size_t t = 0; t < NT; t++) {
		ASSERT_EQ(7 * (t + 1), g.ids[t]);
		ASSERT_EQ(2 * t, g.first[t]);
		ASSERT_EQ(t, g.order[g.first[t]]);
		ASSERT_EQ(NT + t, g.order[g.first[t] + 1]);
	}
	ASSERT_EQ((size_t)2 * NT, g.first[NT]);
	uks_damon_record_group_free(&g);
	/* two snapshots of 1 ms each per unit of 2 ms: one grouped snapshot per target */
	ASSERT_EQ(0, uks_damon_record_adjust(&rec, 2000, 0, &adj));
	ASSERT_EQ((size_t)NT, adj->nr_snapshots);
	ASSERT_EQ(7ULL * NT, adj->snapshots[NT - 1].target_id);
	ASSERT_EQ(2U, adj->snapshots[NT - 1].regions[0].nr_accesses);
	uks_damon_record_free(adj);
	free(ids);
	free(snaps);
}

/* ------------------------------------------------------------ reports */

static struct uks_damon_rec_region regs[4][2];

/*
 * target 7, snapshots ending at 1000..4000 ns, regions [B,B+100) [B+100,B+200)
 * (not at 0: damo's guide takes an address of 0 for "none yet")
 */
#define B 4096ULL
static struct uks_damon_record *hand_made(const unsigned int acc[4][2], uint64_t gap)
{
	static struct uks_damon_rec_snapshot snaps[4];
	static struct uks_damon_record rec;

	for (int i = 0; i < 4; i++) {
		regs[i][0] = (struct uks_damon_rec_region){ B, B + 100, acc[i][0], 0 };
		regs[i][1] = (struct uks_damon_rec_region){ B + 100 + gap, B + 200 + gap,
							    acc[i][1], 0 };
		snaps[i] = (struct uks_damon_rec_snapshot){
			.target_id = 7, .start_ns = i * 1000, .end_ns = (i + 1) * 1000,
			.nr_regions = 2, .regions = regs[i],
		};
	}
	rec.version = 2;
	rec.nr_snapshots = 4;
	rec.snapshots = snaps;
	return &rec;
}

static const unsigned int acc[4][2] = { { 0, 0 }, { 2, 4 }, { 6, 0 }, { 1, 9 } };

TEST(heats_whole_pixels_are_the_counts)
{
	struct uks_damon_heatmap hm = { .tres = 3, .ares = 2 };
	static const double expect[6] = { 2, 4, 6, 0, 1, 9 };

	ASSERT_EQ(0, uks_damon_heatmap_compute(hand_made(acc, 0), &hm, 0));
	ASSERT_EQ(7ULL, hm.target_id);
	ASSERT_EQ(1000LL, hm.tmin);	/* the guide: first to last snapshot end */
	ASSERT_EQ(4000LL, hm.tmax);
	ASSERT_EQ(B, hm.amin);
	ASSERT_EQ(B + 200, hm.amax);
	for (int i = 0; i < 6; i++)
		ASSERT_TRUE(hm.heat[i] == expect[i]);
	uks_damon_heatmap_free(&hm);
}

TEST(heats_partial_pixels_are_weighted_means)
{
	struct uks_damon_heatmap hm = { .tres = 2, .ares = 2 };

	ASSERT_EQ(0, uks_damon_heatmap_compute(hand_made(acc, 0), &hm, 0));
	/* rows of 1500 ns: [1000,2500) has 1000 ns of snapshot 2, 500 of 3 */
	ASSERT_TRUE(hm.heat[0] > 3.3333 && hm.heat[0] < 3.3334);	/* (2*1000+6*500)/1500 */
	ASSERT_TRUE(hm.heat[1] > 2.6666 && hm.heat[1] < 2.6667);	/* (4*1000)/1500 */
	ASSERT_TRUE(hm.heat[2] > 2.6666 && hm.heat[2] < 2.6667);	/* (6*500+1*1000)/1500 */
	ASSERT_TRUE(hm.heat[3] == 6);				/* (9*1000)/1500 */
	uks_damon_heatmap_free(&hm);
	/* an explicit range, trimmed to whole units: [1000, 3999) by 3 -> 999 */
	hm = (struct uks_damon_heatmap){ .tres = 3, .ares = 1, .tmin = 1000, .tmax = 3999,
					 .amin = B + 100, .amax = B + 200 };
	ASSERT_EQ(0, uks_damon_heatmap_compute(hand_made(acc, 0), &hm,
					       UKS_DAMON_HEATS_TIME | UKS_DAMON_HEATS_ADDR));
	ASSERT_EQ(3997LL, hm.tmax);
	ASSERT_TRUE(hm.heat[0] > 3.99 && hm.heat[0] < 4.01);
	uks_damon_heatmap_free(&hm);
	hm = (struct uks_damon_heatmap){ .tres = 3, .ares = 1, .target_id = 8 };
	ASSERT_EQ(-ENOENT, uks_damon_heatmap_compute(hand_made(acc, 0), &hm, UKS_DAMON_HEATS_TID));
	hm = (struct uks_damon_heatmap){ .tres = 5000, .ares = 1 };
	ASSERT_EQ(-EINVAL, uks_damon_heatmap_compute(hand_made(acc, 0), &hm, 0));
}

TEST(guide_splits_at_common_gaps)
{
	struct uks_damon_guide *g;
	size_t nr;

	ASSERT_EQ(0, uks_damon_guides(hand_made(acc, 100), &g, &nr));
	ASSERT_EQ((size_t)1, nr);
	ASSERT_EQ(1000LL, g[0].start_ns);
	ASSERT_EQ(4000LL, g[0].end_ns);
	ASSERT_EQ((size_t)2, g[0].nr_ranges);
	ASSERT_EQ(B, g[0].ranges[0]);
	ASSERT_EQ(B + 100, g[0].ranges[1]);
	ASSERT_EQ(B + 200, g[0].ranges[2]);
	ASSERT_EQ(B + 300, g[0].ranges[3]);
	uks_damon_guides_free(g, nr);
}

TEST(wss_sizes_per_snapshot)
{
	uint64_t *w;
	size_t n;

	ASSERT_EQ(0, uks_damon_wss(hand_made(acc, 0), 7, 1, 1, false, &w, &n));
	ASSERT_EQ((size_t)4, n);
	ASSERT_EQ(0ULL, w[0]);
	ASSERT_EQ(200ULL, w[1]);
	ASSERT_EQ(100ULL, w[2]);
	ASSERT_EQ(200ULL, w[3]);
	uks_kfree(w);
	ASSERT_EQ(0, uks_damon_wss(hand_made(acc, 0), 7, 5, 1, true, &w, &n));
	ASSERT_EQ(0ULL, w[0]);
	ASSERT_EQ(0ULL, w[1]);
	ASSERT_EQ(100ULL, w[2]);	/* 6 */
	ASSERT_EQ(100ULL, w[3]);	/* 9 */
	uks_kfree(w);
	ASSERT_EQ(0, uks_damon_wss(hand_made(acc, 0), 7, 1, 101, true, &w, &n));
	ASSERT_EQ(0ULL, w[3]);		/* no region is that big */
	uks_kfree(w);
}

/*
 * A record of one target from {start, end, nr} rows, a 0-0 row ending
 * each snapshot of @ns nanoseconds.
 */
static struct uks_damon_record *from_rows(const uint64_t (*rows)[3], size_t nr_rows, int64_t ns)
{
	static struct uks_damon_rec_region r[32];
	static struct uks_damon_rec_snapshot snaps[8];
	static struct uks_damon_record rec;
	size_t n = 0, first = 0;

	memset(&rec, 0, sizeof(rec));
	rec.version = 2;
	rec.snapshots = snaps;
	for (size_t i = 0; i < nr_rows; i++) {
		if (rows[i][0] || rows[i][1]) {
			r[n++] = (struct uks_damon_rec_region){ rows[i][0], rows[i][1],
								(uint32_t)rows[i][2], 0 };
			continue;
		}
		snaps[rec.nr_snapshots] = (struct uks_damon_rec_snapshot){
			.target_id = 7, .start_ns = (int64_t)rec.nr_snapshots * ns,
			.end_ns = ((int64_t)rec.nr_snapshots + 1) * ns,
			.nr_regions = (uint32_t)(n - first), .regions = &r[first],
		};
		rec.nr_snapshots++;
		first = n;
	}
	return &rec;
}

TEST(adjust_one_snapshot_per_unit_is_the_record)
{
	struct uks_damon_record *adj;

	/* snapshots of 1 us: 1 us of work is one snapshot, nothing is excluded */
	ASSERT_EQ(0, uks_damon_record_adjust(hand_made(acc, 0), 1, 20, &adj));
	ASSERT_EQ((size_t)4, adj->nr_snapshots);
	for (size_t i = 0; i < 4; i++) {
		ASSERT_EQ(2U, adj->snapshots[i].nr_regions);
		ASSERT_EQ(acc[i][1], adj->snapshots[i].regions[1].nr_accesses);
	}
	uks_damon_record_free(adj);
}

TEST(adjust_groups_add_the_counts)
{
	struct uks_damon_record *adj;
	uint64_t *w;
	size_t n;

	/* 2 us = 2 snapshots; the first excluded, then {1, 2} and {3} */
	ASSERT_EQ(0, uks_damon_record_adjust(hand_made(acc, 0), 2, 1, &adj));
	ASSERT_EQ((size_t)2, adj->nr_snapshots);
	ASSERT_EQ(1000LL, adj->snapshots[0].start_ns);
	ASSERT_EQ(3000LL, adj->snapshots[0].end_ns);
	ASSERT_EQ(8U, adj->snapshots[0].regions[0].nr_accesses);	/* 2 + 6 */
	ASSERT_EQ(4U, adj->snapshots[0].regions[1].nr_accesses);	/* 4 + 0 */
	ASSERT_EQ(1U, adj->snapshots[1].regions[0].nr_accesses);
	ASSERT_EQ(9U, adj->snapshots[1].regions[1].nr_accesses);
	ASSERT_EQ(0, uks_damon_wss(adj, 7, 5, 1, false, &w, &n));
	ASSERT_EQ((size_t)2, n);
	ASSERT_EQ(100ULL, w[0]);	/* only the 8 reaches 5 */
	ASSERT_EQ(100ULL, w[1]);
	uks_kfree(w);
	uks_damon_record_free(adj);
	/* no work time is one snapshot per unit too */
	ASSERT_EQ(0, uks_damon_record_adjust(hand_made(acc, 0), 0, 0, &adj));
	ASSERT_EQ((size_t)4, adj->nr_snapshots);
	uks_damon_record_free(adj);
	ASSERT_EQ(0, uks_damon_record_adjust(hand_made(acc, 0), 4, 0, &adj));
	ASSERT_EQ((size_t)1, adj->nr_snapshots);
	ASSERT_EQ(9U, adj->snapshots[0].regions[0].nr_accesses);
	ASSERT_EQ(13U, adj->snapshots[0].regions[1].nr_accesses);
	uks_damon_record_free(adj);
	/* everything excluded: the target has no snapshot left */
	ASSERT_EQ(0, uks_damon_record_adjust(hand_made(acc, 0), 2, 20, &adj));
	ASSERT_EQ((size_t)0, adj->nr_snapshots);
	uks_damon_record_free(adj);
}

TEST(adjust_overlaps_take_the_largest_and_gaps_join)
{
	/* damo's example: 1-10:5 then 1-5:2, 5-10:4 is 1-10:9 */
	static const uint64_t split[][3] = {
		{ 1, 10, 5 }, { 0, 0, 0 }, { 1, 5, 2 }, { 5, 10, 4 }, { 0, 0, 0 },
	};
	/* a wider region: overlaps add, the uncovered parts join with its count */
	static const uint64_t wide[][3] = {
		{ 10, 20, 1 }, { 50, 60, 2 }, { 0, 0, 0 }, { 0, 100, 3 }, { 0, 0, 0 },
	};
	static const uint64_t expect[][3] = {
		{ 0, 10, 3 }, { 10, 20, 4 }, { 20, 50, 3 }, { 50, 60, 5 }, { 60, 100, 3 },
	};
	struct uks_damon_record *adj;

	ASSERT_EQ(0, uks_damon_record_adjust(from_rows(split, 5, 1000), 2, 0, &adj));
	ASSERT_EQ((size_t)1, adj->nr_snapshots);
	ASSERT_EQ(1U, adj->snapshots[0].nr_regions);
	ASSERT_EQ(1ULL, adj->snapshots[0].regions[0].start);
	ASSERT_EQ(10ULL, adj->snapshots[0].regions[0].end);
	ASSERT_EQ(9U, adj->snapshots[0].regions[0].nr_accesses);
	uks_damon_record_free(adj);

	ASSERT_EQ(0, uks_damon_record_adjust(from_rows(wide, 5, 1000), 2, 0, &adj));
	ASSERT_EQ(5U, adj->snapshots[0].nr_regions);
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(expect[i][0], adj->snapshots[0].regions[i].start);
		ASSERT_EQ(expect[i][1], adj->snapshots[0].regions[i].end);
		ASSERT_EQ((unsigned int)expect[i][2], adj->snapshots[0].regions[i].nr_accesses);
	}
	uks_damon_record_free(adj);
}

TEST(adjust_unit_rounds_halves_to_even)
{
	static const uint64_t rows[][3] = {
		{ 0, 8, 1 }, { 0, 0, 0 }, { 0, 8, 1 }, { 0, 0, 0 }, { 0, 8, 1 }, { 0, 0, 0 },
		{ 0, 8, 1 }, { 0, 0, 0 }, { 0, 8, 1 }, { 0, 0, 0 }, { 0, 8, 1 }, { 0, 0, 0 },
		{ 0, 8, 1 }, { 0, 0, 0 }, { 0, 8, 1 }, { 0, 0, 0 },
	};
	struct uks_damon_record *adj;

	/* 400 ns snapshots: 1 us is 2.5 of them (2), 3 us is 7.5 (8), as Python rounds */
	ASSERT_EQ(0, uks_damon_record_adjust(from_rows(rows, 16, 400), 1, 0, &adj));
	ASSERT_EQ((size_t)4, adj->nr_snapshots);
	ASSERT_EQ(2U, adj->snapshots[0].regions[0].nr_accesses);
	uks_damon_record_free(adj);
	ASSERT_EQ(0, uks_damon_record_adjust(from_rows(rows, 16, 400), 3, 0, &adj));
	ASSERT_EQ((size_t)1, adj->nr_snapshots);
	ASSERT_EQ(8U, adj->snapshots[0].regions[0].nr_accesses);
	uks_damon_record_free(adj);
}

TEST_HARNESS_MAIN
