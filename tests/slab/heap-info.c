// SPDX-License-Identifier: MIT
/*
 * glibc's heap-information entry points, run under libuks-malloc.so by
 * tests/slab/preload.sh: mallinfo2() and mallinfo() follow what the
 * program allocates and frees, malloc_trim() brings the resident set back
 * down at once, and memory from the __libc_* names and from ours can be
 * freed by either (cfree() too); and calls that succeed leave errno
 * alone, as glibc's do (free() must, by POSIX 2024).  Prints "ok" or what
 * failed.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t align, size_t size);
void __libc_free(void *p);

#define NR_OBJECTS	40000
#define OBJECT_SIZE	1000
#define MiB		(1UL << 20)

static int failures;

static void check(int ok, const char *what, unsigned long long a, unsigned long long b)
{
	if (!ok) {
		printf("FAIL: %s (%llu, %llu)\n", what, a, b);
		failures++;
	}
}

static unsigned long rss_bytes(void)
{
	unsigned long size = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%lu %lu", &size, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (unsigned long)sysconf(_SC_PAGESIZE);
}

static void *objects[NR_OBJECTS];

static void heap_follows_the_program(void)
{
	struct mallinfo2 start, full, empty, trimmed;
	unsigned long rss_start, rss_full, rss_trimmed;
	struct mallinfo old;
	size_t grew;
	int released;

	start = mallinfo2();
	rss_start = rss_bytes();
	for (int i = 0; i < NR_OBJECTS; i++) {
		objects[i] = malloc(OBJECT_SIZE);
		if (!objects[i]) {
			check(0, "malloc", (unsigned long long)i, OBJECT_SIZE);
			return;
		}
		memset(objects[i], i, OBJECT_SIZE);
	}
	full = mallinfo2();
	old = mallinfo();
	rss_full = rss_bytes();
	grew = full.uordblks - start.uordblks;
	check(grew >= (size_t)NR_OBJECTS * OBJECT_SIZE, "uordblks grew by what was allocated",
	      grew, (unsigned long long)NR_OBJECTS * OBJECT_SIZE);
	check(grew <= (size_t)NR_OBJECTS * OBJECT_SIZE * 12 / 10, "uordblks grew by little more",
	      grew, (unsigned long long)NR_OBJECTS * OBJECT_SIZE);
	check(full.arena >= full.uordblks, "arena holds what is allocated", full.arena,
	      full.uordblks);
	check(full.arena == full.uordblks + full.fordblks, "arena = uordblks + fordblks",
	      full.arena, full.uordblks + full.fordblks);
	check((size_t)old.uordblks == full.uordblks, "mallinfo() agrees with mallinfo2()",
	      (unsigned long long)old.uordblks, full.uordblks);

	for (int i = 0; i < NR_OBJECTS; i++)
		free(objects[i]);
	empty = mallinfo2();
	check(empty.uordblks <= start.uordblks + MiB, "uordblks back after the frees",
	      empty.uordblks, start.uordblks);

	released = malloc_trim(0);
	rss_trimmed = rss_bytes();
	trimmed = mallinfo2();
	check(released == 1, "malloc_trim(0) gave memory back", (unsigned long long)released, 1);
	check(rss_trimmed <= rss_start + 4 * MiB, "RSS back down after malloc_trim(0)",
	      rss_trimmed, rss_start);
	check(trimmed.keepcost <= MiB, "keepcost after the trim", trimmed.keepcost, MiB);
	printf("# 40 MB of objects: RSS %lu KiB at start, %lu full, %lu trimmed\n",
	       rss_start >> 10, rss_full >> 10, rss_trimmed >> 10);
}

static void big_blocks_are_counted(void)
{
	size_t big = 64 * MiB;
	struct mallinfo2 with;
	char *p = malloc(big);

	if (!p) {
		check(0, "malloc of 64 MiB", 0, big);
		return;
	}
	memset(p, 1, big);
	with = mallinfo2();
	check(with.hblks >= 1, "hblks counts a 64 MiB block", with.hblks, 1);
	check(with.hblkhd >= big, "hblkhd holds a 64 MiB block", with.hblkhd, big);
	free(p);
}

static void libc_names_mix_with_ours(void)
{
	char *p = __libc_malloc(100), *q;

	strcpy(p, "from __libc_malloc");
	q = realloc(p, 5000);
	check(q && !strcmp(q, "from __libc_malloc"), "realloc keeps __libc_malloc's bytes", 0, 0);
	free(q);

	p = malloc(100);
	strcpy(p, "from malloc");
	q = __libc_realloc(p, 50000);
	check(q && !strcmp(q, "from malloc"), "__libc_realloc keeps malloc's bytes", 0, 0);
	__libc_free(q);

	p = __libc_calloc(1000, 10);
	for (int i = 0; p && i < 10000; i++)
		if (p[i])
			check(0, "__libc_calloc memory is zero", (unsigned long long)i, 0);
	/* cfree() is only a compatibility symbol of glibc's: old binaries call it */
	void (*cfree_fn)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "cfree");

	check(cfree_fn != NULL, "cfree is there to call", 0, 0);
	if (cfree_fn)
		cfree_fn(p);

	p = __libc_memalign(4096, 100);
	check(p && !((uintptr_t)p & 4095), "__libc_memalign aligns", (uintptr_t)p, 4096);
	free(p);
}

/* Sizes on either side of the 2 MiB line, where blocks get mappings of their own. */
static void errno_survives_success(void)
{
	static const size_t sizes[] = { 100, 5000, 3 * MiB, 40 * MiB };

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char *p, *q;

		errno = 1234;
		p = malloc(sizes[i]);
		check(p && errno == 1234, "malloc keeps errno", sizes[i], (unsigned long long)errno);
		errno = 1234;
		q = realloc(p, sizes[i] * 2);
		check(q && errno == 1234, "realloc growing keeps errno", sizes[i],
		      (unsigned long long)errno);
		errno = 1234;
		p = realloc(q ? q : p, sizes[i] / 2);
		check(p && errno == 1234, "realloc shrinking keeps errno", sizes[i],
		      (unsigned long long)errno);
		errno = 1234;
		free(p);
		check(errno == 1234, "free keeps errno", sizes[i], (unsigned long long)errno);
	}
}

int main(void)
{
	errno_survives_success();
	heap_follows_the_program();
	big_blocks_are_counted();
	libc_names_mix_with_ours();
	malloc_stats();
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
