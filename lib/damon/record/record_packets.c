// SPDX-License-Identifier: MIT
/*
 * The self agent's stream: a monitor's aggregations, binary, from the
 * monitored program to `uks damon record --primitive self`.
 *
 * The agent (libuks-damon-agent.so) runs inside the command and reaches
 * the recorder through a pipe that the command's exec() passes on to the
 * next program image.  Each aggregation of each target goes as packets:
 *
 *	header (28 bytes):	"dAgg", uint32 regions in this packet,
 *				int64 time stamp (ns), uint64 target id,
 *				uint32 the target's nr_regions
 *	per region (20 bytes):	uint64 start, uint64 end, uint32 nr_accesses
 *
 * in the byte order of the machine, with no padding.  A packet is at most
 * PIPE_BUF bytes and goes out with one write(2), which a pipe never splits
 * or interleaves: whatever ends the writer (an exec() that kills the
 * monitor thread, a signal) leaves whole packets behind, and the next
 * image's packets follow them.  A snapshot cut that way is dropped by the
 * writer's assembler, exactly as one with lost trace lines.
 *
 * The recorder feeds the bytes to uks_damon_rec_writer_feed_packets(),
 * which hands each region to the assembler as one damon_aggregated event:
 * a record made this way has the bytes the same events would give as
 * trace_pipe text, with no text in between.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "core/compiler.h"
#include "damon/damon.h"
#include "damon/record/record.h"

#define PKT_MAGIC	"dAgg"
#define PKT_HDR		28
#define PKT_REGION	20
#define PKT_MAX_REGIONS	((PIPE_BUF - PKT_HDR) / PKT_REGION)

_Static_assert(REC_PKT_MAX == PKT_HDR + PKT_MAX_REGIONS * PKT_REGION,
	       "record.h's packet size");

static int write_all(int fd, const unsigned char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void put_header(unsigned char *p, uint32_t nr, int64_t ts_ns, uint64_t tid,
		       uint32_t nr_regions)
{
	memcpy(p, PKT_MAGIC, 4);
	memcpy(p + 4, &nr, 4);
	memcpy(p + 8, &ts_ns, 8);
	memcpy(p + 16, &tid, 8);
	memcpy(p + 24, &nr_regions, 4);
}

/**
 * __uks_damon_rec_packets_put - write one aggregation of @t to @fd
 * @fd:		the stream (a pipe: see the top of this file)
 * @t:		a target, on its monitor thread (its regions are read as they are)
 * @ts_ns:	the aggregation's time stamp
 *
 * Nothing is allocated: this runs in the monitor thread of the self
 * primitive, which must not touch memory it may have taken away.
 * Return: 0 or a write's -errno.
 */
int __uks_damon_rec_packets_put(int fd, struct uks_damon_target *t, int64_t ts_ns)
{
	unsigned char pkt[REC_PKT_MAX];
	const struct damon_region *r;
	uint32_t nr = 0, in = 0, done = 0;
	uint64_t tid = t->t.id;
	int ret;

	damon_for_each_region(r, &t->t)
		nr++;
	damon_for_each_region(r, &t->t) {
		uint64_t start = r->ar.start, end = r->ar.end;
		uint32_t acc = r->nr_accesses;
		unsigned char *p = pkt + PKT_HDR + (size_t)in * PKT_REGION;

		memcpy(p, &start, 8);
		memcpy(p + 8, &end, 8);
		memcpy(p + 16, &acc, 4);
		done++;
		if (++in < PKT_MAX_REGIONS && done < nr)
			continue;
		put_header(pkt, in, ts_ns, tid, nr);
		ret = write_all(fd, pkt, PKT_HDR + (size_t)in * PKT_REGION);
		if (ret)
			return ret;
		in = 0;
	}
	return 0;
}

/*
 * The length of the packet whose header is at @p, or 0 if that is no
 * packet header (the stream lost its step: a write cut short on a file).
 */
static size_t packet_len(const unsigned char *p)
{
	uint32_t nr, nr_regions;

	memcpy(&nr, p + 4, 4);
	memcpy(&nr_regions, p + 24, 4);
	if (memcmp(p, PKT_MAGIC, 4) || !nr || nr > PKT_MAX_REGIONS || nr > nr_regions)
		return 0;
	return PKT_HDR + (size_t)nr * PKT_REGION;
}

/* Hand the regions of the whole packet at @p to the assembler. */
static int packet_events(struct rec_asm *as, const unsigned char *p)
{
	struct uks_damon_agg_event ev = { 0 };	/* the agent sends no ages */
	uint32_t nr;

	memcpy(&nr, p + 4, 4);
	memcpy(&ev.ts_ns, p + 8, 8);
	memcpy(&ev.target_id, p + 16, 8);
	memcpy(&ev.nr_regions, p + 24, 4);
	p += PKT_HDR;
	for (uint32_t i = 0; i < nr; i++, p += PKT_REGION) {
		int ret;

		memcpy(&ev.start, p, 8);
		memcpy(&ev.end, p + 8, 8);
		memcpy(&ev.nr_accesses, p + 16, 4);
		if (ev.end < ev.start) {	/* DAMON never reports one */
			as->stats.bad_lines++;
			continue;
		}
		ret = __uks_damon_rec_asm_event(as, &ev);
		if (ret)
			return ret;
	}
	return 0;
}

/**
 * __uks_damon_rec_packets_feed - assemble packets from stream bytes
 * @as:		the assembler
 * @c:		the partial packet carried between calls
 * @buf:	bytes of the stream, in chunks of any size
 * @len:	their length
 *
 * Bytes that start no packet are skipped up to the next packet header;
 * each such run counts as one bad line.
 * Return: 0 or the assembler's -errno.
 */
int __uks_damon_rec_packets_feed(struct rec_asm *as, struct rec_pkt_carry *c,
				 const void *buf, size_t len)
{
	const unsigned char *in = buf;

	while (len) {
		size_t want = c->len < PKT_HDR ? PKT_HDR : packet_len(c->buf), n;
		int ret;

		if (!want) {
			/* not a header: drop its first byte and look again */
			if (!c->lost)
				as->stats.bad_lines++;
			c->lost = true;
			memmove(c->buf, c->buf + 1, --c->len);
			continue;
		}
		n = want - c->len < len ? want - c->len : len;
		memcpy(c->buf + c->len, in, n);
		c->len += n;
		in += n;
		len -= n;
		if (c->len < want || want == PKT_HDR)
			continue;	/* more to come, or the header to check */
		c->lost = false;
		c->len = 0;
		ret = packet_events(as, c->buf);
		if (ret)
			return ret;
	}
	return 0;
}

/*
 * At the end of the stream: a packet cut short counts as one bad line
 * (its regions never arrived whole).
 */
void __uks_damon_rec_packets_finish(struct rec_asm *as, struct rec_pkt_carry *c)
{
	if (c->len && !c->lost)
		as->stats.bad_lines++;
	c->len = 0;
}
