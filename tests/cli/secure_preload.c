// SPDX-License-Identifier: MIT
/*
 * Linked against libuks-damon-agent.so or libuks-malloc.so and run setuid
 * root by tests/cli/secure_env.sh: their constructors and malloc() read
 * their settings before main().
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void)
{
	char *volatile p = malloc(100);

	printf("euid %u\n", (unsigned int)geteuid());
	free(p);
	return 0;
}
