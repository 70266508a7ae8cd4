// SPDX-License-Identifier: MIT
/*
 * One bad free() or realloc() per run, for tests/slab/bad-free.sh: the
 * pointer about to be passed is printed on stdout first, so the test can
 * look for it in the report.  A double free prints before the first
 * free: stdout's buffer, allocated by the first printf(), would
 * otherwise take the pages a freed block gave back, and the second free
 * would free it (no allocator can tell that from a valid free).  A case the allocator lets through carries
 * on and says what came of it ("survived"), which the test counts as a
 * failure.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *announce(void *p)
{
	printf("%p\n", p);
	fflush(stdout);
	return p;
}

/*
 * The compiler must not see what the pointer is: it warns about a free()
 * of a stack address, and drops a malloc() and free() pair it can see.
 */
static void *launder(void *p)
{
	__asm__ __volatile__("" : "+r"(p));
	return p;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";
	char stack_buf[64];
	char *p, *q, *again;

	if (!strcmp(c, "interior")) {
		p = launder(malloc(256));
		memset(p, 1, 256);
		free(announce(p + 32));
		q = launder(malloc(256));
		printf("survived: malloc(256) returned %s\n", q == p + 32 ? "p+32" : "elsewhere");
	} else if (!strcmp(c, "interior-small")) {
		p = launder(malloc(24));		/* a 32-byte class: the shim's homed sheaves */
		free(announce(p + 16));
	} else if (!strcmp(c, "past-last")) {
		/* 2336-byte slots: 14 in a 32 KiB slab, 64 bytes over */
		p = launder(malloc(2300));
		free(announce((char *)((uintptr_t)p | 32767) - 63));
	} else if (!strcmp(c, "stack")) {
		free(announce(launder(stack_buf)));
	} else if (!strcmp(c, "mmap")) {
		p = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		free(announce(p));
	} else if (!strcmp(c, "wild")) {
		free(announce((void *)(uintptr_t)0x123456789a0));
	} else if (!strcmp(c, "zero-size")) {
		free(announce((void *)(uintptr_t)16));
	} else if (!strcmp(c, "double-small")) {
		p = announce(launder(malloc(64)));
		again = launder(p);
		free(p);
		free(again);
	} else if (!strcmp(c, "double-small-aba")) {
		p = announce(launder(malloc(64)));
		q = launder(malloc(64));
		again = launder(p);
		free(p);
		free(q);
		free(again);
	} else if (!strcmp(c, "double-1m")) {
		p = announce(launder(malloc(1 << 20)));
		memset(p, 1, 1 << 20);
		again = launder(p);
		free(p);
		free(again);
	} else if (!strcmp(c, "large-interior")) {
		p = launder(malloc(40000));
		free(announce(p + 4096));
	} else if (!strcmp(c, "huge-interior")) {
		p = launder(malloc(8 << 20));
		free(announce(p + 4096));
	} else if (!strcmp(c, "realloc-interior")) {
		p = launder(malloc(256));
		q = realloc(announce(p + 32), 1000);
		printf("survived: realloc returned %p\n", (void *)q);
	} else if (!strcmp(c, "realloc-stack")) {
		q = realloc(announce(launder(stack_buf)), 100);
		printf("survived: realloc returned %p\n", (void *)q);
	} else if (!strcmp(c, "overflow")) {
		/* a valid free of a damaged object: slub_debug's job, not a bad pointer */
		p = launder(malloc(32));
		p[32] = 0x41;
		free(announce(p));
		q = malloc(32);
		printf("survived: the damaged object stays allocated: %s\n",
		       q != p ? "yes" : "no");
	} else {
		fprintf(stderr, "bad-free: unknown case '%s'\n", c);
		return 2;
	}
	printf("survived\n");
	return 0;
}
