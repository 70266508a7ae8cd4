// SPDX-License-Identifier: MIT
/*
 * A known call chain for the stacktrace trigger test: main -> level1 ->
 * level2 -> level3 -> getppid(), three times; prints where its functions
 * are loaded ("name address"), then waits for its stdin to close, so the
 * test can read its maps while it lives.
 */
#include <stdio.h>
#include <unistd.h>

#define KEEP() __asm__ volatile("" ::: "memory")	/* not a tail call */

__attribute__((noinline)) void level3(void)
{
	getppid();
	KEEP();
}

__attribute__((noinline)) void level2(void)
{
	level3();
	KEEP();
}

__attribute__((noinline)) void level1(void)
{
	level2();
	KEEP();
}

int main(void)
{
	char c;

	for (int i = 0; i < 3; i++)
		level1();
	printf("main %lx\nlevel1 %lx\nlevel2 %lx\nlevel3 %lx\n", (unsigned long)main,
	       (unsigned long)level1, (unsigned long)level2, (unsigned long)level3);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	return 0;
}
