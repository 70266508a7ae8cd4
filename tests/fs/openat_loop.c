// SPDX-License-Identifier: MIT
/*
 * Workload of tests/fs/trace_keeper.sh: openat() in a loop, each result
 * checked, until 1000 calls after the file argv[1] is seen (looked for every
 * 64 calls, with access(), which no test traces) or 120 s have passed.  Writes its pid to
 * argv[2] first.  Prints "calls N failed F" and exits 1 if any call failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long calls = 0, failed = 0;
	int first_errno = 0, more = 0;
	time_t end = time(NULL) + 120;

	FILE *pf;

	if (argc != 3 || !(pf = fopen(argv[2], "w")))
		return 2;
	fprintf(pf, "%d\n", (int)getpid());
	fclose(pf);
	for (;;) {
		int fd = openat(AT_FDCWD, "/dev/null", O_RDONLY | O_CLOEXEC);

		calls++;
		if (fd < 0) {
			if (!failed++)
				first_errno = errno;
		} else {
			close(fd);
		}
		if (calls % 64 == 0 && !more && (access(argv[1], F_OK) == 0 || time(NULL) > end))
			more = 1000;
		if (more && !--more)
			break;
	}
	printf("calls %ld failed %ld%s%s\n", calls, failed, failed ? " first " : "",
	       failed ? strerror(first_errno) : "");
	return failed ? 1 : 0;
}
