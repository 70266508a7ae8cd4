// SPDX-License-Identifier: MIT
/*
 * uks: the command-line tool.  Git-style subcommands: the CPU view the
 * libraries use, and the uksfs file commands (cat, write, ls) that talk to
 * a running uksd over its socket, plus mount/daemon to start one.
 */
#include <errno.h>
#include <getopt.h>
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
	      "  damon record|report    DAMON: record a command's accesses, damo's reports\n"
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
	      "-S SOCKET (or $UKS_SOCKET): the uksd socket; default $XDG_RUNTIME_DIR/uks.sock\n"
	      "(/run/uks.sock for root).  'uks COMMAND --help' describes each command.\n"
	      "Exit status: 0 ok, 1 the command failed, 2 usage, 3 no uksd answered.\n"
	      "See uks(1).\n", out);
}

static int cmd_cpu(void)
{
	printf("cpu: %d\nnr_cpu_ids: %u\nsource: %s\n", uks_cpu_current(),
	       uks_nr_cpu_ids(), uks_rseq_active() ? "rseq" : "sched_getcpu");
	return 0;
}

static int cmd_cpulist(const char *text, const char *nr_text)
{
	unsigned int nr = nr_text ? (unsigned int)strtoul(nr_text, NULL, 0) : uks_nr_cpu_ids();
	struct uks_cpumask mask;
	char buf[8192];
	int ret = uks_cpumask_parse_list(&mask, text, nr);

	if (ret == 0)
		ret = uks_cpumask_print_list(&mask, buf, sizeof(buf));
	if (ret < 0) {
		fprintf(stderr, "uks: cpulist '%s': %s\n", text, strerror(-ret));
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

	if (!strcmp(cmd, "version")) {
		printf("uks %s\n", uks_version());
		return 0;
	}
	if (!strcmp(cmd, "cpu"))
		return cmd_cpu();
	if (!strcmp(cmd, "cat"))
		return cli_cat(cli_socket_path(sock_opt), argc - optind, argv + optind);
	if (!strcmp(cmd, "write"))
		return cli_write(cli_socket_path(sock_opt), argc - optind, argv + optind);
	if (!strcmp(cmd, "ls"))
		return cli_ls(cli_socket_path(sock_opt), argc - optind, argv + optind);
	if (!strcmp(cmd, "trace"))
		return cli_trace(cli_socket_path(sock_opt), argc - optind, argv + optind);
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
	if (!strcmp(cmd, "cpulist") && optind + 1 < argc)
		return cmd_cpulist(argv[optind + 1], optind + 2 < argc ? argv[optind + 2] : NULL);
	fprintf(stderr, "uks: unknown command or missing argument: %s\n", cmd);
	usage(stderr);
	return 2;
}
