// SPDX-License-Identifier: MIT
/*
 * uks abi-check denywrite: the MAP_DENYWRITE-removal conformance checks
 * of tools/abi-check/denywrite.c on this machine's kernel, one line per check:
 * "PASS name: detail", "FAIL name: observed ...", "SKIP name: why".
 * Exit status 0 when nothing failed, 1 otherwise, 2 for usage errors.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "abi-check/abi_check.h"
#include "cli.h"

static void abi_usage(FILE *out)
{
	fputs("Usage: uks abi-check denywrite [--tmpdir DIR] [--exe PROG] [--dynexe PROG] [--lib SO]\n"
	      "\n"
	      "Checks that the running kernel follows the Linux 5.15 MAP_DENYWRITE removal:\n"
	      "a running executable cannot be opened for writing (O_WRONLY, O_TRUNC, creat:\n"
	      "ETXTBSY), a file open for writing cannot be executed (ETXTBSY), a dlopen'ed\n"
	      "library and the ELF interpreter stay writable, MAP_DENYWRITE is ignored,\n"
	      "PR_SET_MM_EXE_FILE / PR_SET_MM_MAP refuse a file open for writing (EACCES)\n"
	      "and deny writes to the linked file until the link is gone, and a uselib(2)\n"
	      "library stays writable where uselib exists.  Works on copies in a scratch\n"
	      "directory under DIR (default $TMPDIR if at most 12 characters, else /tmp).\n"
	      "\n"
	      "  --exe PROG     executable to copy and run (default: uks itself)\n"
	      "  --dynexe PROG  dynamically linked program for the interpreter check\n"
	      "  --lib SO       shared object to copy and dlopen (default: libm)\n"
	      "\n"
	      "Output: one line per check, PASS/FAIL/SKIP name: detail.\n"
	      "Exit status: 0 no check failed, 1 a check failed, 2 usage.\n", out);
}

static void print_result(const struct abi_result *r, void *arg)
{
	(void)arg;
	printf("%s %s: %s\n", abi_verdict_name(r->verdict), r->name, r->detail);
	fflush(stdout);
}

int cli_abi_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "tmpdir", required_argument, NULL, 't' },
		{ "exe", required_argument, NULL, 'e' },
		{ "dynexe", required_argument, NULL, 'd' },
		{ "lib", required_argument, NULL, 'l' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct denywrite_opts o = { 0 };
	int c, ret;

	if (argc >= 2 && !strcmp(argv[1], "denywrite")) {
		argc--;
		argv++;
	} else if (argc < 2 || strcmp(argv[1], "-h")) {
		if (argc < 2)
			fputs("uks abi-check: which check? (known: denywrite)\n", stderr);
		else
			fprintf(stderr, "uks abi-check: unknown check '%s' (known: denywrite)\n",
				argv[1]);
		abi_usage(stderr);
		return 2;
	}
	optind = 1;
	while ((c = getopt_long(argc, argv, "+t:e:d:l:h", opts, NULL)) != -1) {
		switch (c) {
		case 't': o.tmpdir = optarg; break;
		case 'e': o.exe = optarg; break;
		case 'd': o.dynexe = optarg; break;
		case 'l': o.lib = optarg; break;
		case 'h':
			abi_usage(stdout);
			return 0;
		default:
			abi_usage(stderr);
			return 2;
		}
	}
	if (optind < argc) {
		abi_usage(stderr);
		return 2;
	}
	ret = denywrite_check(&o, print_result, NULL);
	if (ret < 0) {
		fprintf(stderr, "uks abi-check denywrite: cannot run: %s\n", strerror(-ret));
		return 1;
	}
	return ret ? 1 : 0;
}
