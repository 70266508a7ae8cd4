// SPDX-License-Identifier: MIT
/*
 * uks: the command-line tool.  Git-style subcommands: the CPU view the
 * libraries use, and the uksfs file commands (cat, write, ls) that talk to
 * a running uksd over its socket, plus mount/daemon to start one.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uks/uks.h>

#include "cli.h"

static void usage(FILE *out)
{
	fputs("Usage: uks [--help] [--version] [-S SOCKET] COMMAND [ARGS]\n"
	      "\n"
	      "Commands:\n"
	      "  cat [-n] PATH...       print uksfs files (sys/kernel/tracing/trace, ...)\n"
	      "  write [-a] PATH TEXT   one write to a uksfs file (-a appends, like >>)\n"
	      "  ls [-l] [PATH]         list a uksfs directory\n"
	      "  trace [-e EV] [-E DYN] (-p PID | -- CMD)\n"
	      "                         trace a command or a process (syscalls, sched, eprobes)\n"
	      "  daemon [OPTIONS]       run uksd (see uksd --help)\n"
	      "  damon record|report|reclaim\n"
	      "                         DAMON: record a command's accesses, damo's reports;\n"
	      "                         page out processes' cold memory (DAMON_RECLAIM)\n"
	      "  vduse-blk [OPTIONS]    serve a virtio-blk device through /dev/vduse;\n"
	      "                         vduse-blk attach|detach|resize|stats NAME ...\n"
	      "  abi-check denywrite    check the kernel's MAP_DENYWRITE-removal (5.15) semantics\n"
	      "  exec32 [OPTS] -- PROG  run PROG with the asymmetric 32-bit execve affinity rules\n"
	      "  taskset LIST PID|-- PROG  sched_setaffinity with the 32-bit rules\n"
	      "  mount DIR [OPTIONS]    start a uksd serving uksfs at DIR, detached\n"
	      "  umount DIR             unmount it (the uksd exits)\n"
	      "  version                print the library version\n"
	      "  cpu                    print the current CPU, possible CPUs and the CPU-id source\n"
	      "  cpulist LIST [NR]      normalise a kernel cpulist (\"0-3,8\", \"0-15:2/4\", \"N\")\n"
	      "                         against NR CPUs (default: the possible CPUs)\n"
	      "\n"
	      "-S SOCKET (or $UKS_SOCKET): the uksd socket; default $XDG_RUNTIME_DIR/uks.sock,\n"
	      "else /tmp/uks-UID/uks.sock (/run/uks.sock for root).  'uks COMMAND --help'\n"
	      "describes each command.\n"
	      "Exit status: 0 ok, 1 the command failed, 2 usage, 3 no uksd could be reached\n"
	      "(none answers, the socket is not yours, or its directory is unsafe).\n"
	      "See uks(1).\n", out);
}

/*
 * The commands without options of their own: -1 to run them, else the exit
 * status after their help (0) or a usage error (2).
 */
static int plain_args(int argc, char **argv, int min, int max, const char *usage,
		      const char *help)
{
	if (argc > 1 && !strcmp(argv[1], "-h")) {
		printf("%s%s", usage, help);
		return 0;
	}
	if (argc - 1 < min || argc - 1 > max || (argc > 1 && argv[1][0] == '-' && argv[1][1])) {
		fprintf(stderr, "uks %s: %s\n%s", argv[0],
			argc > 1 && argv[1][0] == '-' ? "unknown option" :
			argc - 1 < min ? "missing argument" : "too many arguments", usage);
		return 2;
	}
	return -1;
}

static int cmd_cpu(int argc, char **argv)
{
	int ret = plain_args(argc, argv, 0, 0, "Usage: uks cpu\n",
			     "Print the current CPU, the number of possible CPU ids and where the\n"
			     "CPU id comes from (rseq, or sched_getcpu without it).\n");

	if (ret >= 0)
		return ret;
	printf("cpu: %d\nnr_cpu_ids: %u\nsource: %s\n", uks_cpu_current(),
	       uks_nr_cpu_ids(), uks_rseq_active() ? "rseq" : "sched_getcpu");
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	int ret = plain_args(argc, argv, 0, 0, "Usage: uks version\n",
			     "Print the uks library version.\n");

	if (ret >= 0)
		return ret;
	printf("uks %s\n", uks_version());
	return 0;
}

static int cmd_cpulist(int argc, char **argv)
{
	static const char usage[] = "Usage: uks cpulist LIST [NR]\n";
	int ret = plain_args(argc, argv, 1, 2, usage,
			     "Parse a kernel cpulist (\"0-3,8\", \"0-15:2/4\", \"N\" for the last CPU)\n"
			     "against NR CPUs (default: the possible CPUs) and print it normalised.\n"
			     "Exit status 1 with the kernel's error for a list it would refuse.\n");
	unsigned int nr = uks_nr_cpu_ids();
	struct uks_cpumask mask;
	char buf[8192], *end;

	if (ret >= 0)
		return ret;
	if (argc > 2) {
		unsigned long n;

		errno = 0;
		n = strtoul(argv[2], &end, 0);
		if (errno || end == argv[2] || *end || !n || n > UINT_MAX) {
			fprintf(stderr, "uks cpulist: NR must be a positive number: %s\n%s",
				argv[2], usage);
			return 2;
		}
		nr = (unsigned int)n;
	}
	ret = uks_cpumask_parse_list(&mask, argv[1], nr);
	if (ret == 0)
		ret = uks_cpumask_print_list(&mask, buf, sizeof(buf));
	if (ret < 0) {
		fprintf(stderr, "uks: cpulist '%s': %s\n", argv[1], strerror(-ret));
		return 1;
	}
	puts(buf);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "socket", required_argument, NULL, 'S' },
		{ NULL, 0, NULL, 0 },
	};
	const char *sock_opt = NULL;
	int c;

	while ((c = getopt_long(argc, argv, "+hVS:", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			sock_opt = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("uks %s\n", uks_version());
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[optind];
	static char short_help[] = "-h";

	/* "uks CMD --help" is "uks CMD -h" for every subcommand. */
	for (int i = optind + 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--help"))
			argv[i] = short_help;

	if (!strcmp(cmd, "version"))
		return cmd_version(argc - optind, argv + optind);
	if (!strcmp(cmd, "cpu"))
		return cmd_cpu(argc - optind, argv + optind);
	if (!strcmp(cmd, "cat"))
		return cli_cat(sock_opt, argc - optind, argv + optind);
	if (!strcmp(cmd, "write"))
		return cli_write(sock_opt, argc - optind, argv + optind);
	if (!strcmp(cmd, "ls"))
		return cli_ls(sock_opt, argc - optind, argv + optind);
	if (!strcmp(cmd, "trace")) {
		/* an unsafe default socket directory: trace in-process instead */
		const char *sock = cli_socket_path(sock_opt);

		return cli_trace(sock ? sock : "", argc - optind, argv + optind);
	}
	if (!strcmp(cmd, "damon"))
		return cli_damon(argc - optind, argv + optind);
	if (!strcmp(cmd, "vduse-blk"))
		return cli_vduse_blk(argc - optind, argv + optind);
	if (!strcmp(cmd, "abi-check"))
		return cli_abi_check(argc - optind, argv + optind);
	if (!strcmp(cmd, "exec32"))
		return cli_exec32(argc - optind, argv + optind);
	if (!strcmp(cmd, "taskset"))
		return cli_taskset(argc - optind, argv + optind);
	if (!strcmp(cmd, "daemon"))
		return cli_daemon(argc - optind, argv + optind);
	if (!strcmp(cmd, "mount"))
		return cli_mount(argc - optind, argv + optind);
	if (!strcmp(cmd, "umount"))
		return cli_umount(argc - optind, argv + optind);
	if (!strcmp(cmd, "cpulist"))
		return cmd_cpulist(argc - optind, argv + optind);
	fprintf(stderr, "uks: unknown command: %s\n", cmd);
	usage(stderr);
	return 2;
}
