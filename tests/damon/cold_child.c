// SPDX-License-Identifier: MIT
/*
 * A process with cold memory, for tests/damon/reclaim.sh: it writes a file
 * of SIZE_MB MiB (a pattern) in DIR, maps its first HOT_MB MiB and the
 * rest as two private read-only mappings (file pages: clean, so pageout
 * drops them without swap), reads all of it once, prints "ready", then
 * reads the hot part again and again.  SIGUSR1: print "passes N" (hot
 * passes so far); SIGTERM: read every byte back through the mappings,
 * print "intact" or "damaged" and exit 0 or 1.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define MB (1UL << 20)

static volatile sig_atomic_t want_passes, want_end;

static void on_usr1(int sig) { (void)sig; want_passes = 1; }
static void on_term(int sig) { (void)sig; want_end = 1; }

static unsigned char pattern_at(unsigned long off)
{
	return (unsigned char)((off * 2654435761UL) >> 13);
}

int main(int argc, char **argv)
{
	static unsigned char buf[1 << 16];
	unsigned long size, hot_sz, passes = 0, sum = 0;
	unsigned char *hot, *cold;
	char path[4096];
	int fd, bad = 0;

	if (argc != 4)
		return 2;
	size = strtoul(argv[2], NULL, 10) * MB;
	hot_sz = strtoul(argv[3], NULL, 10) * MB;
	if (!size || hot_sz >= size)
		return 2;
	snprintf(path, sizeof(path), "%s/cold-child-XXXXXX", argv[1]);
	fd = mkstemp(path);
	if (fd < 0)
		return 1;
	unlink(path);
	for (unsigned long off = 0; off < size; off += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = pattern_at(off + i);
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	}
	fsync(fd);
	/* a hole between the two mappings keeps them apart */
	hot = mmap(NULL, size + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (hot == MAP_FAILED)
		return 1;
	cold = hot + hot_sz + 4096;
	munmap(hot, size + 4096);
	if (mmap(hot, hot_sz, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(cold, size - hot_sz, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, (off_t)hot_sz) ==
	    MAP_FAILED)
		return 1;
	signal(SIGUSR1, on_usr1);
	signal(SIGTERM, on_term);
	for (unsigned long i = 0; i < size - hot_sz; i += 4096)
		sum += cold[i];
	printf("ready %d cold %lx-%lx\n", (int)getpid(), (unsigned long)cold,
	       (unsigned long)cold + size - hot_sz);
	fflush(stdout);
	while (!want_end) {
		for (unsigned long i = 0; i < hot_sz; i += 4096)
			sum += hot[i];
		passes++;
		if (want_passes) {
			want_passes = 0;
			printf("passes %lu\n", passes);
			fflush(stdout);
		}
	}
	for (unsigned long i = 0; i < hot_sz; i++)
		bad |= hot[i] != pattern_at(i);
	for (unsigned long i = 0; i < size - hot_sz; i++)
		bad |= cold[i] != pattern_at(hot_sz + i);
	printf("%s %lu\n", bad ? "damaged" : "intact", sum & 1);
	return bad;
}
