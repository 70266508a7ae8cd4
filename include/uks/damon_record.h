/* SPDX-License-Identifier: MIT */
/*
 * uks DAMON records: damo's binary "record" file format, written from
 * damon:damon_aggregated trace text (or the self agent's binary stream)
 * and read back, plus the computations
 * of damo's reports (heats, the guide, working set sizes).
 *
 * The file (damo v1.0.0, native endianness, no padding):
 *
 *	optional header: "damon_recfmt_ver" (16 bytes), int32 version (1, 2)
 *	                 (no header: version 0)
 *	repeated:	 int64 sec, int64 nsec		the snapshot's end time
 *			 uint32 nr_targets
 *			 per target: id (int32 in version 1, else uint64)
 *			             uint32 nr_regions
 *			             per region: uint64 start, uint64 end,
 *			                         uint32 nr_accesses
 *
 * A snapshot is what one aggregation interval of one target reported:
 * the nr_regions consecutive damon_aggregated lines of that target.  Its
 * end time is the time stamp of its first line; its start time is the
 * end of the target's previous snapshot (the first one's start is its end
 * minus the mean snapshot length), as damo computes them.
 *
 *	struct uks_damon_rec_writer *w;
 *	uks_damon_rec_writer_create(fd, UKS_DAMON_RECFMT_VERSION, &w);
 *	uks_damon_rec_writer_feed(w, text, len);	-- trace_pipe text, any chunks
 *	(or uks_damon_rec_writer_feed_packets(w, buf, len): the agent's stream)
 *	uks_damon_rec_writer_finish(w, NULL);
 *
 *	struct uks_damon_record *rec;
 *	uks_damon_record_load("damon.data", &rec);	-- binary or perf script text
 *
 *	struct uks_damon_rec_diag d;			-- a damaged file: where and why
 *	uks_damon_record_read_file("damon.data", UKS_DAMON_REC_PARTIAL, &rec, &d);
 *
 * damo 2.0.3 and later write (and read) "json" and "json_compressed"
 * records instead: a JSON list of per-target records, each with the
 * monitoring intervals and its snapshots with start and end times, and
 * per region the access count and the age; json_compressed is that text
 * as one zlib stream.  The reader tells the four apart by content; the
 * writer takes a format (UKS_DAMON_RECFMT_*):
 *
 *	uks_damon_rec_writer_create_format(fd, UKS_DAMON_RECFMT_JSON_COMPRESSED,
 *					   &intervals, &w);
 *	uks_damon_record_write(rec, fd, UKS_DAMON_RECFMT_JSON);	-- convert
 */
#ifndef UKS_DAMON_RECORD_H
#define UKS_DAMON_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UKS_DAMON_RECFMT_MAGIC		"damon_recfmt_ver"
#define UKS_DAMON_RECFMT_MAGIC_LEN	16
#define UKS_DAMON_RECFMT_VERSION	2

/* the formats a writer makes (uks_damon_rec_writer_create_format()) */
#define UKS_DAMON_RECFMT_BINARY			0	/* damo v1's, version 2 */
#define UKS_DAMON_RECFMT_JSON			1	/* damo 2.0.3+ "json" */
#define UKS_DAMON_RECFMT_JSON_COMPRESSED	2	/* "json_compressed" (zlib) */

/* struct uks_damon_record's @version for the formats without one */
#define UKS_DAMON_REC_VERSION_TEXT		(-1)
#define UKS_DAMON_REC_VERSION_JSON		(-2)
#define UKS_DAMON_REC_VERSION_JSON_COMPRESSED	(-3)

/**
 * struct uks_damon_rec_region - one region of a snapshot
 * @start:	its start address
 * @end:	its end address
 * @nr_accesses: the aggregation's access count (samples that saw an access)
 * @age:	aggregation intervals the region kept its access level for
 *		(0 where the source has no ages: binary records, 5.15's trace)
 */
struct uks_damon_rec_region {
	uint64_t start;
	uint64_t end;
	uint32_t nr_accesses;
	uint32_t age;
};

/**
 * struct uks_damon_rec_intervals - the intervals a record was made with
 * @sample_us:	sampling interval
 * @aggr_us:	aggregation interval
 * @update_us:	operations update interval
 *
 * All zero: not known (binary records and trace text carry none).
 */
struct uks_damon_rec_intervals {
	uint64_t sample_us;
	uint64_t aggr_us;
	uint64_t update_us;
};

/**
 * struct uks_damon_rec_snapshot - one aggregation of one target
 * @target_id:	the target (the pid for uks, a struct pid pointer for 5.15)
 * @start_ns:	start of the aggregation (see the top of this file)
 * @end_ns:	end of the aggregation
 * @nr_regions:	number of @regions
 * @regions:	the regions in address order
 */
struct uks_damon_rec_snapshot {
	uint64_t target_id;
	int64_t start_ns;
	int64_t end_ns;
	uint32_t nr_regions;
	struct uks_damon_rec_region *regions;
};

/**
 * struct uks_damon_record - a whole record file
 * @version:	the format version (0: no header; 1; 2; -1: text input;
 *		-2: json; -3: json_compressed)
 * @nr_snapshots: number of @snapshots
 * @snapshots:	every snapshot in file order (targets interleaved; a json
 *		record's in order of end time, then of target id)
 * @cap:	private
 * @intervals:	the monitoring intervals (json records; else zero)
 */
struct uks_damon_record {
	int version;
	size_t nr_snapshots;
	struct uks_damon_rec_snapshot *snapshots;
	size_t cap;
	struct uks_damon_rec_intervals intervals;
};

/**
 * struct uks_damon_agg_event - one damon:damon_aggregated line
 * @ts_ns:	its time stamp
 * @target_id:	target_id=
 * @nr_regions:	nr_regions=
 * @start:	region start
 * @end:	region end
 * @nr_accesses: the count
 * @age:	the age, where the line has one (6.12's event; 5.15's has
 *		none: 0)
 */
struct uks_damon_agg_event {
	int64_t ts_ns;
	uint64_t target_id;
	uint32_t nr_regions;
	uint64_t start;
	uint64_t end;
	uint32_t nr_accesses;
	uint32_t age;
};

int uks_damon_parse_aggregated(const char *line, size_t len, struct uks_damon_agg_event *ev);

/**
 * struct uks_damon_rec_stats - what a writer (or a text reader) saw
 * @lines:	damon_aggregated lines parsed (regions of the agent's packets)
 * @bad_lines:	damon_aggregated lines that did not parse (runs of stream
 *		bytes that were no packet)
 * @dropped:	lines of snapshots left incomplete (lost events, the end)
 * @snapshots:	snapshots assembled (written)
 */
struct uks_damon_rec_stats {
	unsigned long lines;
	unsigned long bad_lines;
	unsigned long dropped;
	unsigned long snapshots;
};

struct uks_damon_rec_writer;

int uks_damon_rec_writer_create(int fd, int version, struct uks_damon_rec_writer **out);
int uks_damon_rec_writer_create_format(int fd, int format,
				       const struct uks_damon_rec_intervals *intervals,
				       struct uks_damon_rec_writer **out);
int uks_damon_rec_format_parse(const char *name);
const char *uks_damon_rec_format_name(int format);
int uks_damon_record_write(const struct uks_damon_record *rec, int fd, int format);
int uks_damon_rec_writer_feed(struct uks_damon_rec_writer *w, const char *text, size_t len);
int uks_damon_rec_writer_feed_packets(struct uks_damon_rec_writer *w, const void *buf,
				      size_t len);
int uks_damon_rec_writer_event(struct uks_damon_rec_writer *w,
			       const struct uks_damon_agg_event *ev);
int uks_damon_rec_write_snapshot(struct uks_damon_rec_writer *w,
				 const struct uks_damon_rec_snapshot *s);
void uks_damon_rec_writer_stats(struct uks_damon_rec_writer *w, struct uks_damon_rec_stats *st);
int uks_damon_rec_writer_finish(struct uks_damon_rec_writer *w, struct uks_damon_rec_stats *st);

/**
 * struct uks_damon_rec_diag - where and why reading a record stopped
 * @entry:	byte offset of the entry (its time stamp) the problem is in
 * @offset:	byte offset of the field at fault; for a file that ends
 *		inside an entry, the file's length
 * @reason:	what is wrong (static text); NULL when every byte was read
 */
struct uks_damon_rec_diag {
	uint64_t entry;
	uint64_t offset;
	const char *reason;
};

/* a file ending inside an entry keeps the snapshots before the cut */
#define UKS_DAMON_REC_PARTIAL	1U

int uks_damon_record_parse(const void *buf, size_t len, struct uks_damon_record **out);
int uks_damon_record_load(const char *path, struct uks_damon_record **out);
int uks_damon_record_read(const void *buf, size_t len, unsigned int flags,
			  struct uks_damon_record **out, struct uks_damon_rec_diag *diag);
int uks_damon_record_read_file(const char *path, unsigned int flags,
			       struct uks_damon_record **out, struct uks_damon_rec_diag *diag);
void uks_damon_record_free(struct uks_damon_record *rec);
int uks_damon_record_targets(const struct uks_damon_record *rec, uint64_t *ids, size_t max);

/**
 * struct uks_damon_rec_targets - the snapshots of a record, by target
 * @nr:		the number of distinct targets
 * @ids:	their ids, in order of first appearance
 * @first:	@nr + 1 offsets into @order: target t's snapshots are
 *		@order[@first[t]] .. @order[@first[t + 1] - 1]
 * @order:	indices into the record's snapshots, each target's in file
 *		order
 */
struct uks_damon_rec_targets {
	size_t nr;
	uint64_t *ids;
	size_t *first;
	size_t *order;
};

int uks_damon_record_group(const struct uks_damon_record *rec, struct uks_damon_rec_targets *out);
void uks_damon_record_group_free(struct uks_damon_rec_targets *g);

/* ------------------------------------------------------------ reports */

/**
 * struct uks_damon_guide - damo's "heats --guide" for one target
 * @target_id:	the target
 * @start_ns:	end time of its first snapshot
 * @end_ns:	end time of its last snapshot
 * @lowest:	lowest region start seen
 * @highest:	highest region end seen
 * @nr_ranges:	number of @ranges
 * @ranges:	the address ranges between the gaps common to every
 *		snapshot, [2 * i] start and [2 * i + 1] end
 */
struct uks_damon_guide {
	uint64_t target_id;
	int64_t start_ns;
	int64_t end_ns;
	uint64_t lowest;
	uint64_t highest;
	size_t nr_ranges;
	uint64_t *ranges;
};

int uks_damon_guides(const struct uks_damon_record *rec, struct uks_damon_guide **out,
		     size_t *nr);
void uks_damon_guides_free(struct uks_damon_guide *g, size_t nr);

/**
 * struct uks_damon_heatmap - damo's heat pixels
 * @target_id:	the target
 * @tres:	rows (time resolution)
 * @ares:	columns (space resolution)
 * @tmin:	first time
 * @tmax:	end time, trimmed to tmin + (tmax - tmin) / tres * tres
 * @amin:	first address
 * @amax:	end address, trimmed likewise
 * @heat:	tres * ares pixels, row (time) major: the time- and
 *		space-weighted mean nr_accesses of each pixel
 *
 * Set @target_id, @tmin/@tmax and @amin/@amax before
 * uks_damon_heatmap_compute() when the matching have_* flag is given.
 */
struct uks_damon_heatmap {
	uint64_t target_id;
	unsigned int tres;
	unsigned int ares;
	int64_t tmin;
	int64_t tmax;
	uint64_t amin;
	uint64_t amax;
	double *heat;
};

#define UKS_DAMON_HEATS_TID	1	/* @target_id given */
#define UKS_DAMON_HEATS_TIME	2	/* @tmin/@tmax given */
#define UKS_DAMON_HEATS_ADDR	4	/* @amin/@amax given */

int uks_damon_heatmap_compute(const struct uks_damon_record *rec, struct uks_damon_heatmap *hm,
			      unsigned int given);
void uks_damon_heatmap_free(struct uks_damon_heatmap *hm);

int uks_damon_wss(const struct uks_damon_record *rec, uint64_t target_id, unsigned int acc_thres,
		  uint64_t sz_thres, bool sort, uint64_t **out, size_t *nr);
int uks_damon_record_adjust(const struct uks_damon_record *rec, uint64_t work_time_us,
			    size_t exclude_samples, struct uks_damon_record **out);

#ifdef __cplusplus
}
#endif

#endif
