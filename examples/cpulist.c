// SPDX-License-Identifier: MIT
/**
 * @file cpulist.c - parse a kernel cpulist and print it back normalised.
 *
 * Compile with: gcc -Wall cpulist.c $(pkg-config --cflags --libs uks)
 * Run:          ./a.out 0-3,8,10-11
 */
#include <stdio.h>
#include <string.h>

#include <uks/uks.h>

int main(int argc, char **argv)
{
	struct uks_cpumask mask;
	char text[4096];
	int ret;

	if (argc != 2) {
		fprintf(stderr, "usage: %s CPULIST\n", argv[0]);
		return 2;
	}
	ret = uks_cpumask_parse_list(&mask, argv[1], 0);
	if (ret == 0)
		ret = uks_cpumask_print_list(&mask, text, sizeof(text));
	if (ret < 0) {
		fprintf(stderr, "%s: %s\n", argv[1], strerror(-ret));
		return 1;
	}
	printf("weight %u: %s\n", uks_cpumask_weight(&mask), text);
	return 0;
}
