// SPDX-License-Identifier: MIT
/*
 * uksd: the uks daemon.  It will own the subsystems and serve uksfs; for
 * now it runs in the foreground until SIGINT/SIGTERM and says so.
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <uks/uks.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static void usage(FILE *out)
{
	fputs("Usage: uksd [--help] [--version] [--once]\n"
	      "\n"
	      "Runs in the foreground until SIGINT or SIGTERM.  No subsystem is\n"
	      "served yet: uksfs arrives with a later release.\n"
	      "  --once     start, report, and exit (for scripts and tests)\n", out);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "once", no_argument, NULL, '1' },
		{ NULL, 0, NULL, 0 },
	};
	int c, once = 0;

	while ((c = getopt_long(argc, argv, "hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("uksd %s\n", uks_version());
			return 0;
		case '1':
			once = 1;
			break;
		default:
			usage(stderr);
			return 2;
		}
	}
	struct sigaction sa = { .sa_handler = on_signal };

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fprintf(stderr, "uksd %s: running on %u possible CPUs (cpu ids via %s)\n",
		uks_version(), uks_nr_cpu_ids(), uks_rseq_active() ? "rseq" : "sched_getcpu");
	while (!once && !stop)
		pause();
	return 0;
}
