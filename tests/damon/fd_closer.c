// SPDX-License-Identifier: MIT
/*
 * A program that closes the fds it did not open, as daemons do at start,
 * in one of four ways (closefrom, close_range, a close() loop, or a raw
 * close_range system call past any wrapper), then counts a word in every
 * page of 64 MiB up for 2 s and checks every count: under the DAMON agent
 * (tests/damon/self_stress.sh) nothing it does to its fds may cost the
 * monitor its userfaultfd, the record its output, or the program a byte.
 * Prints "HOW: N words wrong".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SIZE	(64UL << 20)
#define STEP	512	/* words: one per page */

int main(int argc, char **argv)
{
	const char *how = argc > 1 ? argv[1] : "closefrom";
	unsigned long *p, wrong = 0, rounds = 0;
	struct timespec t0, t;

	if (!strcmp(how, "closefrom"))
		closefrom(3);
	else if (!strcmp(how, "close_range"))
		close_range(3, ~0U, 0);
	else if (!strcmp(how, "loop"))
		for (int fd = 3; fd < 4096; fd++)
			close(fd);
	else if (!strcmp(how, "raw"))
		syscall(SYS_close_range, 3, ~0U, 0);
	p = calloc(SIZE / sizeof(*p), sizeof(*p));
	if (!p)
		return 2;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (size_t i = 0; i < SIZE / sizeof(*p); i += STEP)
			p[i]++;
		rounds++;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < 2000);
	for (size_t i = 0; i < SIZE / sizeof(*p); i += STEP)
		wrong += p[i] != rounds;
	printf("%s: %lu words wrong\n", how, wrong);
	return wrong != 0;
}
