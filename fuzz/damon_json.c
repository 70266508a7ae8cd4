// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for damo's json records: the input read as a record
 * (json when it starts with '[' or '{', and the same bytes behind a '['
 * so that most inputs reach the JSON reader), and the input compressed
 * with zlib and read as json_compressed.  Any input parses or fails with
 * -EINVAL (-ENOMEM past the bounds) and a reason; a parsed record is
 * consistent (no region ending below its start), and written back as
 * json it reads back to the same snapshots, as json_compressed too.
 * Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <config.h>
#if UKS_HAVE_ZLIB
#include <zlib.h>
#endif

#include <uks/damon_record.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_round_trip(const struct uks_damon_record *rec, int format)
{
	struct uks_damon_record *back;
	int fd = memfd_create("json", 0);
	unsigned char *buf;
	off_t len;

	if (fd < 0)
		return;
	if (uks_damon_record_write(rec, fd, format) || (len = lseek(fd, 0, SEEK_END)) < 0) {
		close(fd);
		return;
	}
	buf = malloc((size_t)len + 1);
	if (buf && pread(fd, buf, (size_t)len, 0) == len) {
		if (uks_damon_record_read(buf, (size_t)len, 0, &back, NULL))
			abort();
		if (back->nr_snapshots != rec->nr_snapshots)
			abort();
		for (size_t i = 0; i < rec->nr_snapshots; i++) {
			const struct uks_damon_rec_snapshot *a = &rec->snapshots[i];
			const struct uks_damon_rec_snapshot *b = &back->snapshots[i];

			if (a->nr_regions != b->nr_regions || a->end_ns != b->end_ns ||
			    a->start_ns != b->start_ns ||
			    (a->nr_regions && memcmp(a->regions, b->regions,
						     a->nr_regions * sizeof(*a->regions))))
				abort();
		}
		uks_damon_record_free(back);
	}
	free(buf);
	close(fd);
}

static void one(const uint8_t *data, size_t size, bool compressed)
{
	struct uks_damon_record *rec;
	struct uks_damon_rec_diag d;
	int ret = uks_damon_record_read(data, size, UKS_DAMON_REC_PARTIAL, &rec, &d);

	if (ret) {
		if ((ret != -EINVAL && ret != -ENOMEM) || rec || (ret == -EINVAL && !d.reason))
			abort();
		/* offsets are in the text: the input, or for zlib the inflated text */
		if (!compressed && data[0] != 0x78 && (d.offset > size || d.entry > d.offset))
			abort();
		return;
	}
	for (size_t i = 0; i < rec->nr_snapshots; i++)
		for (uint32_t j = 0; j < rec->snapshots[i].nr_regions; j++)
			if (rec->snapshots[i].regions[j].end < rec->snapshots[i].regions[j].start)
				abort();
	/* json ones: the writer's text reads back the same (binary has no start times) */
	if (rec->version == UKS_DAMON_REC_VERSION_JSON ||
	    rec->version == UKS_DAMON_REC_VERSION_JSON_COMPRESSED) {
		check_round_trip(rec, UKS_DAMON_RECFMT_JSON);
		if (UKS_HAVE_ZLIB && size % 4 == 0)
			check_round_trip(rec, UKS_DAMON_RECFMT_JSON_COMPRESSED);
	}
	uks_damon_record_free(rec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *wrapped;

	if (!size)
		return 0;
	one(data, size, false);
	wrapped = malloc(size + 1);
	if (wrapped) {
		wrapped[0] = '[';
		memcpy(wrapped + 1, data, size);
		one(wrapped, size + 1, false);
		free(wrapped);
	}
#if UKS_HAVE_ZLIB
	uLongf zlen = compressBound(size);
	Bytef *z = malloc(zlen);

	if (z && compress(z, &zlen, data, size) == Z_OK)
		one(z, zlen, true);
	free(z);
#endif
	return 0;
}
