// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the DAMON record reader (binary record files of any
 * version, damon_aggregated text, and damo's json; fuzz/damon_json.c
 * goes deeper into json): any input parses or fails with
 * -EINVAL, strictly and with UKS_DAMON_REC_PARTIAL; a failure or a cut
 * names an offset inside the input and a reason; a partial read keeps at
 * least what the strict one does; a parsed record is consistent (regions
 * as counted, none ending below its start, the grouping by target a
 * permutation) and the reports computed on it (guide, heats, wss, the
 * work-time adjustment) do not crash.  The writer's feeds get the same
 * bytes as trace text and as the self agent's packets.  Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>

#include <uks/damon_record.h>
#include <uks/slab.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct uks_damon_record *rec, *strict;
	struct uks_damon_rec_writer *w;
	struct uks_damon_rec_diag d, sd;
	int sret = uks_damon_record_read(data, size, 0, &strict, &sd);
	int ret = uks_damon_record_read(data, size, UKS_DAMON_REC_PARTIAL, &rec, &d);

	/* json_compressed's offsets are in the inflated text */
	bool zlib = size >= 2 && (data[0] & 0x0f) == 8;

	if ((sret && (sret != -EINVAL || strict || !sd.reason)) ||
	    (d.reason && !zlib && (d.offset > size || d.entry > d.offset)))
		abort();
	if (!sret) {
		/* the strict read accepted it: the partial one reads the same */
		if (ret || rec->nr_snapshots != strict->nr_snapshots)
			abort();
		uks_damon_record_free(strict);
	}
	if (ret) {
		if (ret != -EINVAL || rec || !d.reason)
			abort();
	} else {
		struct uks_damon_rec_targets tg;
		size_t *hits = calloc(rec->nr_snapshots + 1, sizeof(*hits));
		struct uks_damon_heatmap hm = { .tres = 7, .ares = 5 };
		struct uks_damon_guide *g;
		struct uks_damon_record *adj;
		uint64_t ids[8], *wss;
		size_t nr;

		for (size_t i = 0; i < rec->nr_snapshots; i++) {
			const struct uks_damon_rec_snapshot *s = &rec->snapshots[i];

			if (s->nr_regions && !s->regions)
				abort();
			for (uint32_t j = 0; j < s->nr_regions; j++)
				if (s->regions[j].end < s->regions[j].start)
					abort();
		}
		if (hits && !uks_damon_record_group(rec, &tg)) {
			if (tg.first[tg.nr] != rec->nr_snapshots)
				abort();
			for (size_t t = 0; t < tg.nr; t++)
				for (size_t k = tg.first[t]; k < tg.first[t + 1]; k++)
					if (tg.order[k] >= rec->nr_snapshots ||
					    hits[tg.order[k]]++ ||
					    rec->snapshots[tg.order[k]].target_id != tg.ids[t])
						abort();
			uks_damon_record_group_free(&tg);
		}
		free(hits);
		if (!uks_damon_guides(rec, &g, &nr))
			uks_damon_guides_free(g, nr);
		if (!uks_damon_heatmap_compute(rec, &hm, 0))
			uks_damon_heatmap_free(&hm);
		if (uks_damon_record_targets(rec, ids, 8) > 0 &&
		    !uks_damon_wss(rec, ids[0], 1, 1, true, &wss, &nr))
			uks_kfree(wss);
		/* a work time of about 3 snapshots, so that they are grouped */
		if (!uks_damon_record_adjust(rec, size % 7 ? 3 : 1, size % 3, &adj)) {
			if (uks_damon_record_targets(adj, ids, 8) > 0 &&
			    !uks_damon_wss(adj, ids[0], 1, 1, true, &wss, &nr))
				uks_kfree(wss);
			uks_damon_record_free(adj);
		}
		uks_damon_record_free(rec);
	}
	/* the same bytes as trace text, in two chunks, into /dev/null */
	int fd = open("/dev/null", O_WRONLY);

	if (fd >= 0 && !uks_damon_rec_writer_create(fd, 2, &w)) {
		uks_damon_rec_writer_feed(w, (const char *)data, size / 2);
		uks_damon_rec_writer_feed(w, (const char *)data + size / 2, size - size / 2);
		uks_damon_rec_writer_finish(w, NULL);
	}
	/* and as the agent's packets, in three chunks */
	if (fd >= 0 && !uks_damon_rec_writer_create(fd, 2, &w)) {
		uks_damon_rec_writer_feed_packets(w, data, size / 3);
		uks_damon_rec_writer_feed_packets(w, data + size / 3, size / 3);
		uks_damon_rec_writer_feed_packets(w, data + 2 * (size / 3), size - 2 * (size / 3));
		uks_damon_rec_writer_finish(w, NULL);
	}
	if (fd >= 0)
		close(fd);
	return 0;
}
