// SPDX-License-Identifier: MIT
/*
 * damo's json and json_compressed records: damo 3.3.0's own files read
 * (values against the perf script text damo made them from), the writer's
 * json read back, round trips binary -> json -> binary (same bytes) and
 * json <-> json_compressed, the value spellings older and newer damo
 * versions use (numbers or strings, commas, units, percent and usec), and
 * garbage: truncated text, wrong types, huge numbers, deep nesting, bad
 * zlib streams -> -EINVAL (or -ENOMEM) with a reason, never a crash.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <config.h>
#include <uks/damon_record.h>
#include <uks/slab.h>

#include "harness.h"

#define DIR "tests/damon/damo-json/"

static unsigned char *slurp_fd(int fd, size_t *len)
{
	off_t sz = lseek(fd, 0, SEEK_END);
	unsigned char *buf = malloc((size_t)sz + 1);

	if (!buf || pread(fd, buf, (size_t)sz, 0) != sz) {
		free(buf);
		return NULL;
	}
	*len = (size_t)sz;
	return buf;
}

/* @rec written in @format, as bytes */
static unsigned char *written(const struct uks_damon_record *rec, int format, size_t *len)
{
	int fd = memfd_create("rec", MFD_CLOEXEC);
	unsigned char *buf = NULL;

	if (fd >= 0 && !uks_damon_record_write(rec, fd, format))
		buf = slurp_fd(fd, len);
	if (fd >= 0)
		close(fd);
	return buf;
}

static bool same_snapshots(const struct uks_damon_record *a, const struct uks_damon_record *b,
			   bool ages, bool starts)
{
	if (a->nr_snapshots != b->nr_snapshots)
		return false;
	for (size_t i = 0; i < a->nr_snapshots; i++) {
		const struct uks_damon_rec_snapshot *x = &a->snapshots[i], *y = &b->snapshots[i];

		if (x->target_id != y->target_id || x->end_ns != y->end_ns ||
		    (starts && x->start_ns != y->start_ns) || x->nr_regions != y->nr_regions)
			return false;
		for (uint32_t r = 0; r < x->nr_regions; r++)
			if (x->regions[r].start != y->regions[r].start ||
			    x->regions[r].end != y->regions[r].end ||
			    x->regions[r].nr_accesses != y->regions[r].nr_accesses ||
			    (ages && x->regions[r].age != y->regions[r].age))
				return false;
	}
	return true;
}

TEST(damo_json_reads_as_the_text_it_was_made_from)
{
	struct uks_damon_record *j, *t;

	ASSERT_EQ(0, uks_damon_record_load(DIR "damo-3.3.0.json", &j));
	ASSERT_EQ(0, uks_damon_record_load(DIR "one-target.perf", &t));
	ASSERT_EQ(UKS_DAMON_REC_VERSION_JSON, j->version);
	ASSERT_EQ(3U, j->nr_snapshots);
	ASSERT_EQ(5000ULL, j->intervals.sample_us);
	ASSERT_EQ(100000ULL, j->intervals.aggr_us);
	ASSERT_EQ(1000000ULL, j->intervals.update_us);
	/* the first region: "4,096"-"12,288", samples 0, age "5" */
	ASSERT_EQ(42ULL, j->snapshots[0].target_id);
	ASSERT_EQ(99900000000LL, j->snapshots[0].start_ns);
	ASSERT_EQ(100000000000LL, j->snapshots[0].end_ns);
	ASSERT_EQ(3U, j->snapshots[0].nr_regions);
	ASSERT_EQ(4096ULL, j->snapshots[0].regions[0].start);
	ASSERT_EQ(12288ULL, j->snapshots[0].regions[0].end);
	ASSERT_EQ(0U, j->snapshots[0].regions[0].nr_accesses);
	ASSERT_EQ(5U, j->snapshots[0].regions[0].age);
	ASSERT_EQ(20U, j->snapshots[0].regions[2].nr_accesses);
	/* the perf text, ages included (its last column), start times as damo's */
	ASSERT_TRUE(same_snapshots(j, t, true, true));
	uks_damon_record_free(j);
	uks_damon_record_free(t);
}

TEST(damo_json_compressed_of_two_targets)
{
	struct uks_damon_record *j, *t;
	struct uks_damon_rec_targets g;

	ASSERT_EQ(0, uks_damon_record_load(DIR "two-targets.perf", &t));
#if !UKS_HAVE_ZLIB
	ASSERT_EQ(-EOPNOTSUPP, uks_damon_record_load(DIR "damo-3.3.0.json_compressed", &j));
	uks_damon_record_free(t);
	SKIP(return, "built without zlib");
#endif
	ASSERT_EQ(0, uks_damon_record_load(DIR "damo-3.3.0.json_compressed", &j));
	ASSERT_EQ(UKS_DAMON_REC_VERSION_JSON_COMPRESSED, j->version);
	ASSERT_EQ(52U, j->nr_snapshots);
	ASSERT_EQ(0, uks_damon_record_group(j, &g));
	ASSERT_EQ(2U, g.nr);
	ASSERT_EQ(101ULL, g.ids[0]);
	ASSERT_EQ(202ULL, g.ids[1]);
	uks_damon_record_group_free(&g);
	/* damo's file groups by target; the record interleaves them by time, as the text */
	ASSERT_TRUE(same_snapshots(j, t, true, true));
	uks_damon_record_free(j);
	uks_damon_record_free(t);
}

TEST(binary_json_binary_gives_the_same_bytes)
{
	struct uks_damon_record *t, *j, *b;
	unsigned char *bin, *json, *bin2;
	size_t blen, jlen, b2len;

	ASSERT_EQ(0, uks_damon_record_load(DIR "two-targets.perf", &t));
	bin = written(t, UKS_DAMON_RECFMT_BINARY, &blen);
	ASSERT_NONNULL(bin);
	ASSERT_EQ(0, uks_damon_record_parse(bin, blen, &b));
	json = written(b, UKS_DAMON_RECFMT_JSON, &jlen);
	ASSERT_NONNULL(json);
	ASSERT_EQ('[', json[0]);
	ASSERT_EQ(0, uks_damon_record_parse(json, jlen, &j));
	ASSERT_EQ(UKS_DAMON_REC_VERSION_JSON, j->version);
	ASSERT_TRUE(same_snapshots(b, j, true, true));
	bin2 = written(j, UKS_DAMON_RECFMT_BINARY, &b2len);
	ASSERT_NONNULL(bin2);
	ASSERT_EQ(blen, b2len);
	ASSERT_EQ(0, memcmp(bin, bin2, blen));
	/* the binary format has no ages: the text's are gone, json kept the zeros */
	ASSERT_TRUE(same_snapshots(t, j, false, true));
	ASSERT_EQ(0U, j->snapshots[0].regions[0].age);
	free(bin);
	free(bin2);
	free(json);
	uks_damon_record_free(t);
	uks_damon_record_free(b);
	uks_damon_record_free(j);
}

TEST(json_and_json_compressed_round_trip)
{
	struct uks_damon_record *t, *z, *j;
	unsigned char *zb, *jb, *jb2;
	size_t zlen, jlen, j2len;

	if (!UKS_HAVE_ZLIB)
		SKIP(return, "built without zlib");
	ASSERT_EQ(0, uks_damon_record_load(DIR "damo-3.3.0.json", &t));
	zb = written(t, UKS_DAMON_RECFMT_JSON_COMPRESSED, &zlen);
	jb = written(t, UKS_DAMON_RECFMT_JSON, &jlen);
	ASSERT_NONNULL(zb);
	ASSERT_NONNULL(jb);
	ASSERT_EQ(0x78, zb[0]);		/* zlib, deflate with a 32 KiB window */
	ASSERT_LT(zlen, jlen);
	ASSERT_EQ(0, uks_damon_record_parse(zb, zlen, &z));
	ASSERT_EQ(UKS_DAMON_REC_VERSION_JSON_COMPRESSED, z->version);
	ASSERT_TRUE(same_snapshots(t, z, true, true));
	ASSERT_EQ(5000ULL, z->intervals.sample_us);
	jb2 = written(z, UKS_DAMON_RECFMT_JSON, &j2len);
	ASSERT_NONNULL(jb2);
	ASSERT_EQ(jlen, j2len);
	ASSERT_EQ(0, memcmp(jb, jb2, jlen));
	ASSERT_EQ(0, uks_damon_record_parse(jb, jlen, &j));
	ASSERT_TRUE(same_snapshots(t, j, true, true));
	free(zb);
	free(jb);
	free(jb2);
	uks_damon_record_free(t);
	uks_damon_record_free(z);
	uks_damon_record_free(j);
}

TEST(the_writer_keeps_ages_and_intervals)
{
	static const char text[] =
		"k [000] 1.000000: damon_aggregated: target_id=9 nr_regions=2 4096-8192: 3 7\n"
		"k [000] 1.000000: damon_aggregated: target_id=9 nr_regions=2 8192-12288: 0 2\n"
		"k [000] 1.100000: damon_aggregated: target_id=9 nr_regions=1 4096-12288: 5\n";
	struct uks_damon_rec_intervals iv = { 5000, 100000, 1000000 };
	struct uks_damon_rec_writer *w;
	struct uks_damon_rec_stats st;
	struct uks_damon_record *rec;
	int fd = memfd_create("w", MFD_CLOEXEC);
	unsigned char *buf;
	size_t len;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(-EINVAL, uks_damon_rec_writer_create_format(fd, 7, &iv, &w));
	ASSERT_EQ(0, uks_damon_rec_writer_create_format(fd, UKS_DAMON_RECFMT_JSON, &iv, &w));
	ASSERT_EQ(0, uks_damon_rec_writer_feed(w, text, sizeof(text) - 1));
	ASSERT_EQ(0, uks_damon_rec_writer_finish(w, &st));
	ASSERT_EQ(2UL, st.snapshots);
	buf = slurp_fd(fd, &len);
	close(fd);
	ASSERT_NONNULL(buf);
	ASSERT_EQ(0, uks_damon_record_parse(buf, len, &rec));
	ASSERT_EQ(2U, rec->nr_snapshots);
	ASSERT_EQ(100000ULL, rec->intervals.aggr_us);
	ASSERT_EQ(7U, rec->snapshots[0].regions[0].age);
	ASSERT_EQ(2U, rec->snapshots[0].regions[1].age);
	ASSERT_EQ(0U, rec->snapshots[1].regions[0].age);	/* 5.15's line: none */
	ASSERT_EQ(5U, rec->snapshots[1].regions[0].nr_accesses);
	/* damo's start times: the first a mean snapshot length before its end */
	ASSERT_EQ(900000000LL, rec->snapshots[0].start_ns);
	ASSERT_EQ(1000000000LL, rec->snapshots[1].start_ns);
	uks_damon_record_free(rec);
	free(buf);
}

/* One region in damo's layout with @region's members, in a record with @intervals. */
static int one(const char *intervals, const char *region, struct uks_damon_record **rec,
	       struct uks_damon_rec_diag *d)
{
	char buf[2048];

	snprintf(buf, sizeof(buf),
		 "[{\"target_id\": 3, \"intervals\": %s, \"snapshots\": [{\"start_time\": \"10\", "
		 "\"end_time\": \"1 s 20 ns\", \"regions\": [%s]}]}]", intervals, region);
	return uks_damon_record_read(buf, strlen(buf), 0, rec, d);
}

#define IV "{\"sample_us\": \"5 ms\", \"aggr_us\": 100000, \"ops_update_us\": \"1,000,000\"}"

TEST(value_spellings_of_damo_versions)
{
	struct uks_damon_record *rec;
	struct uks_damon_rec_diag d;

	/* numbers or strings, commas, units; percent and usec through the intervals */
	ASSERT_EQ(0, one(IV, "{\"start\": 4096, \"end\": \"8 KiB\", \"nr_accesses\": "
			 "{\"samples\": null, \"percent\": \"52.5%\"}, \"age\": {\"usec\": \"1.5 s\", "
			 "\"aggr_intervals\": null}}", &rec, &d));
	ASSERT_EQ(5000ULL, rec->intervals.sample_us);
	ASSERT_EQ(1000000ULL, rec->intervals.update_us);
	ASSERT_EQ(10LL, rec->snapshots[0].start_ns);
	ASSERT_EQ(1000000020LL, rec->snapshots[0].end_ns);
	ASSERT_EQ(8192ULL, rec->snapshots[0].regions[0].end);
	ASSERT_EQ(10U, rec->snapshots[0].regions[0].nr_accesses);	/* 52.5% of 20 */
	ASSERT_EQ(15U, rec->snapshots[0].regions[0].age);		/* 1.5 s / 100 ms */
	uks_damon_record_free(rec);
	/* a region without counts (damo's address-only regions), escaped keys */
	ASSERT_EQ(0, one("null", "{\"st\\u0061rt\": \"1,024\", \"end\": 2e3}", &rec, &d));
	ASSERT_EQ(1024ULL, rec->snapshots[0].regions[0].start);
	ASSERT_EQ(2000ULL, rec->snapshots[0].regions[0].end);
	ASSERT_EQ(0U, rec->snapshots[0].regions[0].nr_accesses);
	uks_damon_record_free(rec);
	ASSERT_EQ(0, one("null", "{\"start\": \"max\", \"end\": \"max\"}", &rec, &d));
	ASSERT_EQ(UINT64_MAX, rec->snapshots[0].regions[0].start);
	uks_damon_record_free(rec);
	/* percent and usec need intervals */
	ASSERT_EQ(-EINVAL, one("null", "{\"start\": 1, \"end\": 2, \"nr_accesses\": "
			       "{\"percent\": 5}}", &rec, &d));
	ASSERT_STREQ("nr_accesses in percent without intervals", d.reason);
	ASSERT_EQ(-EINVAL, one("null", "{\"start\": 1, \"end\": 2, \"age\": {\"usec\": 5, "
			       "\"aggr_intervals\": null}}", &rec, &d));
	ASSERT_STREQ("an age in usec without intervals", d.reason);
}

TEST(wrong_types_and_huge_numbers)
{
	static const struct { const char *region, *why; } bad[] = {
		{ "{\"start\": \"x\", \"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": [], \"end\": 2}", "a bad or missing region start" },
		{ "{\"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": -1, \"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": 18446744073709551616, \"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": 1e400, \"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": \"4 XB\", \"end\": 2}", "a bad or missing region start" },
		{ "{\"start\": 9, \"end\": 2}", "region end below its start" },
		{ "{\"start\": 1, \"end\": 2, \"nr_accesses\": 7}", "nr_accesses is no object" },
		{ "{\"start\": 1, \"end\": 2, \"nr_accesses\": {\"samples\": 4294967296}}",
		  "a bad nr_accesses samples" },
		{ "{\"start\": 1, \"end\": 2, \"age\": {\"aggr_intervals\": true}}",
		  "a bad age aggr_intervals" },
		{ "3", "a region is no object" },
	};
	struct uks_damon_record *rec = (void *)1;
	struct uks_damon_rec_diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ASSERT_EQ(-EINVAL, one(IV, bad[i].region, &rec, &d));
		ASSERT_NULL(rec);
		ASSERT_STREQ(bad[i].why, d.reason);
		ASSERT_LE(d.entry, d.offset);
	}
}

TEST(garbage_json)
{
	static const char *const bad[] = {
		"[", "[{", "[{\"target_id\": 1, \"snapshots\": [", "[1,]", "[01]", "[1.]", "[-]",
		"[\"\\x\"]", "[\"a\tb\"]", "[\"\\u12g4\"]", "[tru]", "[] x", "{}", "[{}]",
		"[{\"snapshots\": 5}]", "[{\"snapshots\": [1]}]", "[{\"snapshots\": [{}]}]",
		"[{\"snapshots\": [{\"start_time\": 1, \"end_time\": 2}]}]",
		"[{\"snapshots\": [{\"start_time\": 1, \"end_time\": 2, \"regions\": {}}]}]",
		("[{\"snapshots\": [{\"start_time\": 1, \"end_time\": 9223372036854775808, "
		 "\"regions\": []}]}]"),
		"[{\"target_id\": \"a\", \"snapshots\": []}]", "[{\"intervals\": 1, \"snapshots\": []}]",
		"[{\"intervals\": {\"sample_us\": 1}, \"snapshots\": []}]",
		"[{\"a\" 1}]", "[{1: 2}]", "[\"abc", "  [  ",
	};
	struct uks_damon_record *rec;
	struct uks_damon_rec_diag d;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t n = strlen(bad[i]);

		ASSERT_EQ(-EINVAL, uks_damon_record_read(bad[i], n, UKS_DAMON_REC_PARTIAL, &rec, &d));
		ASSERT_NULL(rec);
		ASSERT_NONNULL(d.reason);
		ASSERT_LE(d.offset, (uint64_t)n);
	}
	/* an empty list is a record of nothing, as for damo */
	ASSERT_EQ(0, uks_damon_record_read("[]", 2, 0, &rec, &d));
	ASSERT_EQ(0U, rec->nr_snapshots);
	uks_damon_record_free(rec);
}

TEST(deep_nesting_and_truncation_of_a_real_file)
{
	struct uks_damon_record *rec, *full;
	struct uks_damon_rec_diag d;
	size_t n = 100000, len;
	char *deep = malloc(2 * n + 1);
	int fd = open(DIR "damo-3.3.0.json", O_RDONLY);
	unsigned char *buf;

	ASSERT_NONNULL(deep);
	memset(deep, '[', n);
	memset(deep + n, ']', n);
	ASSERT_EQ(-EINVAL, uks_damon_record_read(deep, 2 * n, 0, &rec, &d));
	ASSERT_STREQ("nested too deep", d.reason);
	ASSERT_EQ(64ULL, d.offset);
	free(deep);
	ASSERT_GE(fd, 0);
	buf = slurp_fd(fd, &len);
	close(fd);
	ASSERT_NONNULL(buf);
	ASSERT_EQ(0, uks_damon_record_parse(buf, len, &full));
	uks_damon_record_free(full);
	/* every cut of the file is refused, with a reason inside the cut */
	for (size_t cut = 1; cut < len; cut += 7) {
		while (cut < len && (buf[cut - 1] == ' ' || buf[cut - 1] == '\n'))
			cut++;
		ASSERT_EQ(-EINVAL, uks_damon_record_read(buf, cut, UKS_DAMON_REC_PARTIAL, &rec, &d));
		ASSERT_LE(d.offset, (uint64_t)cut);
	}
	free(buf);
}

TEST(bad_zlib_streams)
{
	struct uks_damon_record *rec, *t;
	struct uks_damon_rec_diag d;
	unsigned char *z;
	size_t len;

	if (!UKS_HAVE_ZLIB)
		SKIP(return, "built without zlib");
	ASSERT_EQ(0, uks_damon_record_load(DIR "damo-3.3.0.json", &t));
	z = written(t, UKS_DAMON_RECFMT_JSON_COMPRESSED, &len);
	uks_damon_record_free(t);
	ASSERT_NONNULL(z);
	/* cut short */
	ASSERT_EQ(-EINVAL, uks_damon_record_read(z, len / 2, UKS_DAMON_REC_PARTIAL, &rec, &d));
	ASSERT_STREQ("a zlib stream cut short", d.reason);
	/* bytes after the stream */
	z = realloc(z, len + 3);
	ASSERT_NONNULL(z);
	memcpy(z + len, "abc", 3);
	ASSERT_EQ(-EINVAL, uks_damon_record_read(z, len + 3, 0, &rec, &d));
	ASSERT_STREQ("bytes after the zlib stream", d.reason);
	/* a flipped byte inside: the stream or its checksum is wrong */
	z[len / 2] ^= 0x55;
	ASSERT_EQ(-EINVAL, uks_damon_record_read(z, len, 0, &rec, &d));
	ASSERT_NONNULL(d.reason);
	/* a header and nothing */
	ASSERT_EQ(-EINVAL, uks_damon_record_read(z, 2, 0, &rec, &d));
	free(z);
}

TEST(format_names)
{
	ASSERT_EQ(UKS_DAMON_RECFMT_BINARY, uks_damon_rec_format_parse("binary"));
	ASSERT_EQ(UKS_DAMON_RECFMT_JSON, uks_damon_rec_format_parse("json"));
	ASSERT_EQ(UKS_DAMON_RECFMT_JSON_COMPRESSED, uks_damon_rec_format_parse("json_compressed"));
	ASSERT_EQ(-EINVAL, uks_damon_rec_format_parse("perf_data"));
	ASSERT_STREQ("json_compressed", uks_damon_rec_format_name(UKS_DAMON_RECFMT_JSON_COMPRESSED));
	ASSERT_NULL(uks_damon_rec_format_name(3));
}

TEST_HARNESS_MAIN
