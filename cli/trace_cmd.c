// SPDX-License-Identifier: MIT
/*
 * uks trace: trace a command or a running process.
 *
 * With a uksd answering on the socket, the events go to the daemon's trace
 * instance (where the user enabled them, or where -e/-E enable them) and
 * are read from its files.  The command is started here, so it stays our
 * child in the terminal's process group (job control, ^C, exit codes as
 * untraced): it stops itself before exec, uksd attaches, and we let it
 * go; it installs the seccomp filter uksd built for the enabled events,
 * so only those calls stop.  Without a daemon (or with --embedded) a trace instance lives in
 * this process for the command's lifetime and its trace is printed at the
 * end; spawned commands then run under a seccomp filter that stops only
 * the system calls whose events are enabled.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <uks/fs.h>
#include <uks/trace.h>
#include <uks/tracee.h>

#include "cli.h"

#define TRACE_ATTACH_OP	(UKS_SOCK_EXT + 1)	/* daemon/uksd.h */
#define TRACE_FILTER_OP	(UKS_SOCK_EXT + 2)
#define MAX_SPECS	64

struct trace_args {
	const char *events[MAX_SPECS];
	int nr_events;
	const char *dyn[MAX_SPECS];
	int nr_dyn;
	const char *output;
	pid_t pid;
	bool embedded;
	char **cmd;
};

static void trace_usage(FILE *out)
{
	fputs("Usage: uks trace [-e EVENT]... [-E DYNAMIC_EVENT]... [-o FILE] [--embedded]\n"
	      "                 (-p PID | [--] COMMAND [ARGS...])\n"
	      "\n"
	      "Trace a command (or a running process) as the kernel would: syscalls:*,\n"
	      "raw_syscalls:*, sched:sched_process_* and task:* events, and eprobes on them.\n"
	      "  -e EVENT      enable EVENT (set_event syntax: syscalls:sys_enter_openat,\n"
	      "                'syscalls:*', sched:...)\n"
	      "  -E LINE       add a dynamic event and enable it, e.g.\n"
	      "                -E 'e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring'\n"
	      "  -p PID        attach to a running process (every thread) until ^C or its exit\n"
	      "  -o FILE       embedded mode: write the trace to FILE instead of stdout\n"
	      "  --embedded    do not use a running uksd; print the trace when done\n"
	      "\n"
	      "With a uksd, read the result from its files (uks cat sys/kernel/tracing/trace).\n"
	      "Exit status: the command's own (128+N if killed by signal N); 1 on errors.\n",
	      out);
}

static int parse_trace(int argc, char **argv, struct trace_args *a)
{
	static const struct option opts[] = {
		{ "embedded", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	optind = 1;
	while ((c = getopt_long(argc, argv, "+e:E:o:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'e':
		case 'E':
			if ((c == 'e' ? a->nr_events : a->nr_dyn) == MAX_SPECS) {
				fputs("uks trace: too many -e/-E\n", stderr);
				return 2;
			}
			if (c == 'e')
				a->events[a->nr_events++] = optarg;
			else
				a->dyn[a->nr_dyn++] = optarg;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 'p':
			a->pid = (pid_t)atoi(optarg);
			if (a->pid <= 0) {
				fprintf(stderr, "uks trace: bad pid '%s'\n", optarg);
				return 2;
			}
			break;
		case 'x':
			a->embedded = true;
			break;
		case 'h':
			trace_usage(stdout);
			exit(0);
		default:
			trace_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		a->cmd = argv + optind;
	if (!!a->cmd == !!a->pid) {
		fputs("uks trace: give either -p PID or a command (uks trace --help)\n", stderr);
		return 2;
	}
	return 0;
}

/* "e:[GRP/]NAME ..." -> "events/GRP/NAME/enable"; false without a name. */
static bool enable_path_of(const char *line, char *buf, size_t size)
{
	const char *name, *slash;
	size_t n;

	if (line[0] != 'e' || line[1] != ':')
		return false;
	name = line + 2;
	n = strcspn(name, " \t");
	if (!n)
		return false;
	slash = memchr(name, '/', n);
	if (slash)
		snprintf(buf, size, "events/%.*s/enable", (int)n, name);
	else
		snprintf(buf, size, "events/eprobes/%.*s/enable", (int)n, name);
	return true;
}

/* Apply -E and -e through @write (the daemon's socket or our instance). */
static int apply_specs(const struct trace_args *a,
		       int (*write)(const char *path, const char *text, bool append, void *arg),
		       void *arg)
{
	char path[512];
	int ret;

	for (int i = 0; i < a->nr_dyn; i++) {
		ret = write("dynamic_events", a->dyn[i], true, arg);
		if (ret) {
			fprintf(stderr, "uks trace: dynamic event '%s': %s\n", a->dyn[i],
				strerror(-ret));
			return ret;
		}
		if (enable_path_of(a->dyn[i], path, sizeof(path))) {
			ret = write(path, "1", false, arg);
			if (ret) {
				fprintf(stderr, "uks trace: %s: %s\n", path, strerror(-ret));
				return ret;
			}
		}
	}
	for (int i = 0; i < a->nr_events; i++) {
		ret = write("set_event", a->events[i], true, arg);
		if (ret) {
			fprintf(stderr, "uks trace: event '%s': %s\n", a->events[i], strerror(-ret));
			return ret;
		}
	}
	return 0;
}

static int exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

/* ----------------------------------------------------------- with uksd */

struct daemon_ctx {
	const char *sock;
};

static int daemon_write(const char *path, const char *text, bool append, void *arg)
{
	struct daemon_ctx *d = arg;
	char full[600];

	snprintf(full, sizeof(full), "sys/kernel/tracing/%s", path);
	return uks_sock_request(d->sock, UKS_SOCK_WRITE, full, append ? O_APPEND : O_TRUNC, text,
				strlen(text), NULL, NULL);
}

struct attach_ctx {
	pid_t child;		/* ours to continue once attached, or 0 */
	bool attached;
};

static int on_attached(const void *buf, size_t len, void *arg)
{
	struct attach_ctx *ac = arg;

	(void)buf;
	(void)len;
	ac->attached = true;
	if (ac->child > 0)
		kill(ac->child, SIGCONT);
	return 0;
}

struct filter_buf {
	char prog[65536];
	size_t len;
};

static int collect_filter(const void *buf, size_t len, void *arg)
{
	struct filter_buf *f = arg;

	if (f->len + len > sizeof(f->prog))
		return 1;
	memcpy(f->prog + f->len, buf, len);
	f->len += len;
	return 0;
}

static int trace_with_daemon(const char *sock, const struct trace_args *a)
{
	static struct filter_buf filter;
	struct daemon_ctx d = { sock };
	struct attach_ctx ac = { 0 };
	char pidbuf[24];
	int status = 0, ret;

	ret = apply_specs(a, daemon_write, &d);
	if (ret)
		return 1;
	if (a->pid) {
		/*
		 * Until the process exits or ^C: our death (SIGINT's default)
		 * closes the socket, which uksd notices and detaches.
		 */
		signal(SIGINT, SIG_DFL);	/* even when started in the background */
		signal(SIGTERM, SIG_DFL);
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)a->pid);
		ret = uks_sock_request(sock, TRACE_ATTACH_OP, pidbuf, 0, NULL, 0, on_attached, &ac);
		if (ret) {
			fprintf(stderr, "uks trace: attach to %d: %s\n", (int)a->pid, strerror(-ret));
			return 1;
		}
		return 0;
	}
	/* The daemon's seccomp program, so only calls with events stop. */
	filter.len = 0;
	ret = uks_sock_request(sock, TRACE_FILTER_OP, "", 0, NULL, 0, collect_filter, &filter);
	if (ret || !filter.len) {
		fprintf(stderr, "uks trace: no filter from uksd: %s\n", strerror(ret ? -ret : EPROTO));
		return 1;
	}
	ac.child = fork();
	if (ac.child < 0) {
		perror("uks trace: fork");
		return 1;
	}
	if (ac.child == 0) {
		/*
		 * Let the daemon trace us (yama), wait until it has, then put
		 * the filter in and become CMD: its calls stop only where uksd
		 * writes events.  Before the attach, a traced call would fail.
		 */
		prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
		raise(SIGSTOP);
		if (uks_tracee_install_filter(filter.prog, filter.len)) {
			fprintf(stderr, "uks trace: cannot install the seccomp filter\n");
			_exit(126);
		}
		execvp(a->cmd[0], a->cmd);
		fprintf(stderr, "uks trace: %s: %s\n", a->cmd[0], strerror(errno));
		_exit(127);
	}
	if (waitpid(ac.child, &status, WUNTRACED) != ac.child || !WIFSTOPPED(status)) {
		fputs("uks trace: the command did not start\n", stderr);
		return 1;
	}
	/* Our ^C goes to the command (same process group); we wait it out. */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)ac.child);
	ret = uks_sock_request(sock, TRACE_ATTACH_OP, pidbuf, 0, "filtered", 8, on_attached, &ac);
	if (!ac.attached) {
		fprintf(stderr, "uks trace: uksd cannot trace the command: %s\n", strerror(-ret));
		kill(ac.child, SIGKILL);
		kill(ac.child, SIGCONT);
		waitpid(ac.child, &status, 0);
		return 1;
	}
	while (waitpid(ac.child, &status, 0) < 0 && errno == EINTR)
		;
	return exit_code(status);
}

/* ----------------------------------------------------------- embedded */

static int local_write(const char *path, const char *text, bool append, void *arg)
{
	return uks_tracefs_write_str(arg, path, text, append ? UKS_TRACEFS_APPEND : UKS_TRACEFS_TRUNC);
}

static struct uks_tracee_session *active_session;
static void on_int_embedded(int sig)
{
	(void)sig;
	if (active_session)
		uks_tracee_stop(active_session);
}

static int print_trace(struct uks_trace *tr, const char *output)
{
	struct uks_tracefs_file *f;
	FILE *out = stdout;
	char buf[65536];
	ssize_t n;
	int ret;

	if (output && !(out = fopen(output, "w"))) {
		fprintf(stderr, "uks trace: %s: %s\n", output, strerror(errno));
		return -errno;
	}
	ret = uks_tracefs_open(tr, "trace", O_RDONLY, &f);
	if (ret)
		return ret;
	while ((n = uks_tracefs_read(f, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, out);
	uks_tracefs_close(f);
	if (out != stdout)
		fclose(out);
	return n < 0 ? (int)n : 0;
}

static int trace_embedded(const struct trace_args *a)
{
	struct sigaction sa = { .sa_handler = on_int_embedded };	/* no SA_RESTART */
	struct uks_tracee_session *s;
	struct uks_trace *tr;
	int status = 0, ret;

	ret = uks_tracee_register_events();
	if (!ret)
		ret = uks_trace_create(NULL, &tr);
	if (ret) {
		fprintf(stderr, "uks trace: %s\n", strerror(-ret));
		return 1;
	}
	if (apply_specs(a, local_write, tr)) {
		uks_trace_destroy(tr);
		return 1;
	}
	ret = uks_tracee_session_create(NULL, &s);
	if (!ret)
		ret = a->pid ? uks_tracee_attach(s, a->pid) : uks_tracee_spawn(s, a->cmd, NULL);
	if (ret) {
		fprintf(stderr, "uks trace: %s: %s\n", a->pid ? "attach" : a->cmd[0], strerror(-ret));
		uks_trace_destroy(tr);
		return 1;
	}
	active_session = s;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = uks_tracee_run(s, &status);
	active_session = NULL;
	uks_tracee_session_destroy(s);
	print_trace(tr, a->output);
	uks_trace_destroy(tr);
	if (a->pid)
		return ret && ret != -EINTR ? 1 : 0;
	return exit_code(status);
}

int cli_trace(const char *sock, int argc, char **argv)
{
	struct trace_args a;
	int ret = parse_trace(argc, argv, &a);

	if (ret)
		return ret;
	if (!a.embedded && !a.output &&
	    uks_sock_request(sock, UKS_SOCK_STAT, "sys/kernel/tracing", 0, NULL, 0, NULL,
			     NULL) == 0)
		return trace_with_daemon(sock, &a);
	return trace_embedded(&a);
}
