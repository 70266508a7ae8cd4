/* SPDX-License-Identifier: MIT */
/*
 * Internals of the DAMON record code: the snapshot assembler shared by the
 * writer (record.c), the text reader (record_read.c) and the self agent's
 * binary stream (record_packets.c).
 *
 * damon:damon_aggregated reports each region of a target as one line
 * carrying the target's region count; a snapshot is nr_regions consecutive
 * lines of one target.  The assembler keeps one partial snapshot per
 * target and hands complete ones to a callback.  A line whose count does
 * not match the partial snapshot's, or whose region is not above the
 * previous one (events were lost: the ring buffer overran), drops the
 * partial snapshot and starts a new one with that line.
 */
#ifndef UKS_LIB_DAMON_RECORD_RECORD_H
#define UKS_LIB_DAMON_RECORD_RECORD_H

#include <stdbool.h>

#include <uks/damon.h>
#include <uks/damon_record.h>

struct rec_asm_target {
	uint64_t tid;
	uint32_t expected;
	uint32_t n;
	uint32_t cap;
	int64_t ts;
	struct uks_damon_rec_region *regions;
};

/* target id -> dense index in order of insertion (record_index.c) */
struct tid_map {
	uint64_t *keys;
	size_t *vals;
	size_t mask;
	size_t nr;
};

int __uks_damon_tidmap_get(struct tid_map *m, uint64_t key, size_t *idx);
void __uks_damon_tidmap_free(struct tid_map *m);

struct rec_asm {
	struct tid_map map;		/* tid -> index in targets[] */
	struct rec_asm_target *targets;
	unsigned int nr_targets;
	unsigned int cap;
	struct uks_damon_rec_stats stats;
	/* called with each complete snapshot; its regions are borrowed */
	int (*emit)(void *arg, const struct uks_damon_rec_snapshot *s);
	void *arg;
};

int __uks_damon_rec_asm_event(struct rec_asm *a, const struct uks_damon_agg_event *ev);
int __uks_damon_rec_asm_text(struct rec_asm *a, const char *text, size_t len, size_t *used);
void __uks_damon_rec_asm_finish(struct rec_asm *a);
int __uks_damon_rec_append(void *rec, const struct uks_damon_rec_snapshot *s);
int __uks_damon_rec_start_times(struct uks_damon_record *rec);

/* damo's json records (record_json.c, record_json_write.c) */
int __uks_damon_rec_read_json(struct uks_damon_record *rec, const char *text, size_t len,
			      struct uks_damon_rec_diag *diag);
int __uks_damon_rec_write_json(const struct uks_damon_record *rec, int fd, bool compress);
bool __uks_damon_rec_is_zlib(const unsigned char *p, size_t len);
int __uks_damon_rec_inflate(const void *in, size_t len, char **out, size_t *out_len,
			    const char **why);

/* The self agent's binary stream (record_packets.c): PIPE_BUF's worth of whole regions */
#define REC_PKT_MAX	(28 + 203 * 20)

struct rec_pkt_carry {
	unsigned char buf[REC_PKT_MAX];	/* a packet not whole yet */
	size_t len;
	bool lost;			/* skipping bytes that start no packet */
};

int __uks_damon_rec_packets_put(int fd, struct uks_damon_target *t, int64_t ts_ns);
int __uks_damon_rec_packets_feed(struct rec_asm *as, struct rec_pkt_carry *c,
				 const void *buf, size_t len);
void __uks_damon_rec_packets_finish(struct rec_asm *as, struct rec_pkt_carry *c);

#endif
