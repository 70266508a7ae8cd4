// SPDX-License-Identifier: MIT
/*
 * uks-masim: a memory access generator in the manner of masim, for DAMON
 * tests and the demo.  It reads masim's configuration format
 * (<uks/damon_masim.h>), really allocates the regions and accesses them
 * phase by phase, so a DAMON monitor of this process sees real accesses.
 *
 * Each region is its own anonymous mapping followed by a PROT_NONE guard
 * page, so the kernel never merges two regions into one mapping (the
 * vaddr-refs primitive sees accesses per mapping).  In a phase, until its
 * duration is over: draw a pattern by weight, do 128 Ki accesses with it
 * (sequential: offset += stride, wrapping inside the region; random: a
 * uniform offset), check the clock.  Unlike masim the clock is also read
 * every 4 Ki accesses inside a draw, so phases keep their durations when
 * the accesses are slowed down (clear_refs-based monitors make every
 * access after a clear far slower on some kernels).  Accesses are writes by default (what
 * masim of 2021 did; soft-dirty sees only writes), reads or both with ro /
 * rw.  A sequential pattern keeps its offset between draws, as masim's.
 *
 * Output on stdout (-q: none): "region NAME START-END" per region (hex,
 * the mapping's bytes) at the start, then per phase "phase NAME at S.N"
 * (CLOCK_MONOTONIC, the clock of uks's trace time stamps, when it starts)
 * and "NAME: N accesses/msec" (when it ends).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <uks/damon_masim.h>

#define ACCESSES_PER_PICK	(128 * 1024)
#define PAGE			4096UL

static uint64_t rnd_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void usage(FILE *out)
{
	fputs("Usage: uks-masim [-q] [--repeat N] [--default-rw-mode ro|wo|rw] CONFIG\n"
	      "Run a masim access-pattern configuration on real memory.\n"
	      "  -q                  print nothing\n"
	      "  --repeat N          run the phases N times (default 1)\n"
	      "  --default-rw-mode   access mode of patterns that name none (default wo)\n",
	      out);
}

static int fill_from(char *dst, uint64_t size, const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t n = read(fd, dst + off, size - off);

		if (n <= 0)
			break;
		off += (uint64_t)n;
	}
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "repeat", required_argument, NULL, 'r' },
		{ "default-rw-mode", required_argument, NULL, 'm' },
		{ "default_rw_mode", required_argument, NULL, 'm' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct uks_damon_masim *m;
	char err[256];
	char **mem;
	uint64_t **offsets;
	volatile uint64_t sink = 0;
	int c, repeat = 1, quiet = 0, ret;
	int def_rw = UKS_DAMON_MASIM_WO;

	while ((c = getopt_long(argc, argv, "qh", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			repeat = atoi(optarg);
			if (repeat < 1) {
				usage(stderr);
				return 2;
			}
			break;
		case 'm':
			if (!strcmp(optarg, "ro"))
				def_rw = UKS_DAMON_MASIM_RO;
			else if (!strcmp(optarg, "rw"))
				def_rw = UKS_DAMON_MASIM_RW;
			else if (!strcmp(optarg, "wo"))
				def_rw = UKS_DAMON_MASIM_WO;
			else {
				usage(stderr);
				return 2;
			}
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	ret = uks_damon_masim_load(argv[optind], &m, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "uks-masim: %s: %s\n", argv[optind],
			ret == -EINVAL ? err : strerror(-ret));
		return 1;
	}
	mem = calloc(m->nr_regions, sizeof(*mem));
	offsets = calloc(m->nr_phases, sizeof(*offsets));
	if (!mem || !offsets)
		return 1;
	for (unsigned int i = 0; i < m->nr_regions; i++) {
		uint64_t sz = (m->regions[i].size + PAGE - 1) / PAGE * PAGE;
		char *p = mmap(NULL, sz + PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (p == MAP_FAILED) {
			fprintf(stderr, "uks-masim: region %s (%llu bytes): %s\n",
				m->regions[i].name, (unsigned long long)m->regions[i].size,
				strerror(errno));
			return 1;
		}
		mprotect(p + sz, PAGE, PROT_NONE);	/* keeps the mappings apart */
		mem[i] = p;
		if (m->regions[i].init_file &&
		    fill_from(p, m->regions[i].size, m->regions[i].init_file)) {
			fprintf(stderr, "uks-masim: %s: %s\n", m->regions[i].init_file,
				strerror(errno));
			return 1;
		}
	}
	for (unsigned int i = 0; i < m->nr_regions && !quiet; i++)
		printf("region %s %lx-%lx\n", m->regions[i].name, (unsigned long)mem[i],
		       (unsigned long)mem[i] + (unsigned long)m->regions[i].size);
	fflush(stdout);
	for (unsigned int p = 0; p < m->nr_phases; p++) {
		offsets[p] = calloc(m->phases[p].nr_patterns, sizeof(uint64_t));
		if (!offsets[p])
			return 1;
	}
	for (int rep = 0; rep < repeat; rep++) {
		for (unsigned int p = 0; p < m->nr_phases; p++) {
			const struct uks_damon_masim_phase *ph = &m->phases[p];
			uint64_t start = now_ms(), end = start + ph->duration_ms, nr = 0, t;

			if (!quiet) {	/* where a record's time stamps meet the phases */
				struct timespec ts;

				clock_gettime(CLOCK_MONOTONIC, &ts);
				printf("phase %s at %lld.%09ld\n", ph->name, (long long)ts.tv_sec,
				       ts.tv_nsec);
				fflush(stdout);
			}

			while ((t = now_ms()) < end) {
				uint64_t pick = rnd() % ph->total_weight;
				unsigned int k = 0;

				while (pick >= ph->patterns[k].weight) {
					pick -= ph->patterns[k].weight;
					k++;
				}
				const struct uks_damon_masim_pattern *pt = &ph->patterns[k];
				volatile char *base = mem[pt->region];
				uint64_t size = m->regions[pt->region].size, off = offsets[p][k];
				int rw = pt->rw == UKS_DAMON_MASIM_WO ? def_rw : (int)pt->rw;

				unsigned int a;

				for (a = 0; a < ACCESSES_PER_PICK; a++) {
					if (!(a % 4096) && a && now_ms() >= end)
						break;
					if (pt->random) {
						off = rnd() % size;
					} else {
						off += pt->stride;
						if (off >= size)
							off = 0;
					}
					if (rw == UKS_DAMON_MASIM_RO)
						sink += (uint64_t)base[off];
					else if (rw == UKS_DAMON_MASIM_RW)
						base[off]++;
					else
						base[off] = 1;
				}
				offsets[p][k] = off;
				nr += a;
			}
			if (!quiet) {
				uint64_t ms = t - start ? t - start : 1;

				printf("%s: %llu accesses/msec\n", ph->name,
				       (unsigned long long)(nr / ms));
				fflush(stdout);
			}
		}
	}
	(void)sink;
	for (unsigned int p = 0; p < m->nr_phases; p++)
		free(offsets[p]);
	free(offsets);
	free(mem);	/* the regions themselves go with the process */
	uks_damon_masim_free(m);
	return 0;
}
