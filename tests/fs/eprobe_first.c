// SPDX-License-Identifier: MIT
/*
 * For tests/fs/eprobe_first.sh: ROUNDS times, enable an eprobe (unless
 * ENABLE is "-"), chdir() into BASE/rN through a buffer that is wiped as
 * soon as the call returns, and disable it again.  An eprobe that reads
 * the path records BASE/rN only if it read it while the call was stopped.
 *
 *   eprobe_first ENABLE BASE ROUNDS
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int put(const char *file, const char *text)
{
	int fd = open(file, O_WRONLY);
	int ok = fd >= 0 && write(fd, text, strlen(text)) == (ssize_t)strlen(text);

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

int main(int argc, char **argv)
{
	static char path[4096];
	int rounds;

	if (argc != 4)
		return 2;
	rounds = atoi(argv[3]);
	for (int i = 0; i < rounds; i++) {
		snprintf(path, sizeof(path), "%s/r%d", argv[2], i);
		if (strcmp(argv[1], "-") && put(argv[1], "1")) {
			perror("enable");
			return 1;
		}
		if (chdir(path)) {
			perror(path);
			return 1;
		}
		memset(path, 'X', sizeof(path) - 1);
		__asm__ volatile("" ::: "memory");	/* the wipe is not optimised away */
		if (strcmp(argv[1], "-") && put(argv[1], "0")) {
			perror("disable");
			return 1;
		}
	}
	return 0;
}
