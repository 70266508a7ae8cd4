// SPDX-License-Identifier: MIT
/*
 * uks trace: trace a command or a running process.
 *
 * With a uksd answering on the socket, the events go to the daemon's trace
 * instance (where the user enabled them, or where -e/-E enable them: what
 * they set up is undone at the end unless --keep) and are read from its
 * files.  The command is started here, so it stays our child in the
 * terminal's process group (job control, ^C and exit codes as untraced).
 * It stops itself before exec; a keeper forked here (our credentials, a
 * session of its own, deaf to ^C and SIGTERM: lib/tracee/keeper.c) seizes
 * it and connects to uksd, which becomes the session writing the events;
 * then we let the command go and it installs the seccomp filter uksd built
 * for the enabled events, so only those calls stop.  Should uksd stop or
 * die, the keeper passes every stop through: the command runs on as
 * untraced, and we say that tracing was lost.
 *
 * Without a daemon (or with --embedded) a trace instance lives in this
 * process for the command's lifetime and its trace is printed at the end;
 * the command is held by a keeper as well, so it runs on if we are killed.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
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
	bool keep;
	bool every_syscall;
	char **cmd;
};

static void trace_usage(FILE *out)
{
	fputs("Usage: uks trace [-e EVENT]... [-E DYNAMIC_EVENT]... [-o FILE] [--embedded] [--keep]\n"
	      "                 [--every-syscall] (-p PID | [--] COMMAND [ARGS...])\n"
	      "\n"
	      "Trace a command (or a running process) as the kernel would: syscalls:*,\n"
	      "raw_syscalls:*, sched:sched_process_*, sched:sched_switch and task:* events,\n"
	      "and eprobes on them.\n"
	      "  -e EVENT      enable EVENT (set_event syntax: syscalls:sys_enter_openat,\n"
	      "                'syscalls:*', sched:...)\n"
	      "  -E LINE       add a dynamic event and enable it, e.g.\n"
	      "                -E 'e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring'\n"
	      "  -p PID        attach to a running process (every thread) until ^C or its exit\n"
	      "  -o FILE       embedded mode: write the trace to FILE instead of stdout\n"
	      "  --embedded    do not use a running uksd; print the trace when done\n"
	      "  --keep        with uksd: leave enabled what -e/-E enabled (by default it is\n"
	      "                disabled at the end; -E's dynamic events stay defined either way,\n"
	      "                and an identical -E uses them again)\n"
	      "  --every-syscall  COMMAND stops at every system call, so syscall events\n"
	      "                and eprobes enabled while it runs are seen too, from the end\n"
	      "                of the write that enabled them (by default only the calls\n"
	      "                with events enabled at the start stop: faster)\n"
	      "\n"
	      "With a uksd, read the result from its files: a line on stderr says where.\n"
	      "The command runs on untraced if uksd (or, with --embedded, uks trace itself)\n"
	      "goes away; uks trace then says \"tracing lost\" when it can.\n"
	      "Exit status: the command's own (128+N if killed by signal N); as in a shell,\n"
	      "127 if it is not found and 126 if it cannot be executed; 1 on errors.\n",
	      out);
}

static int parse_trace(int argc, char **argv, struct trace_args *a)
{
	static const struct option opts[] = {
		{ "embedded", no_argument, NULL, 'x' },
		{ "keep", no_argument, NULL, 'k' },
		{ "every-syscall", no_argument, NULL, 'y' },
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
		case 'k':
			a->keep = true;
			break;
		case 'y':
			a->every_syscall = true;
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

/* "e:[GRP/]NAME ..." -> "GRP/NAME" (eprobes/NAME); false without a name. */
static bool dyn_name_of(const char *line, char *buf, size_t size)
{
	const char *name;
	size_t n;

	if (line[0] != 'e' || line[1] != ':')
		return false;
	name = line + 2;
	n = strcspn(name, " \t");
	if (!n)
		return false;
	if (memchr(name, '/', n))
		snprintf(buf, size, "%.*s", (int)n, name);
	else
		snprintf(buf, size, "eprobes/%.*s", (int)n, name);
	return true;
}

typedef int (*write_fn)(const char *path, const char *text, bool append, void *arg);

/*
 * Apply -E and -e through @write.  An -E whose event exists already with
 * the same definition (@same says so; a run before ours left it) is used
 * as it is.
 */
static int apply_specs(const struct trace_args *a, write_fn write,
		       bool (*same)(const char *line, void *arg), void *arg)
{
	char name[256], path[300];
	int ret;

	for (int i = 0; i < a->nr_dyn; i++) {
		ret = write("dynamic_events", a->dyn[i], true, arg);
		if (ret == -EEXIST && same && same(a->dyn[i], arg))
			ret = 0;
		if (ret) {
			fprintf(stderr, "uks trace: dynamic event '%s': %s\n", a->dyn[i],
				strerror(-ret));
			return ret;
		}
		if (dyn_name_of(a->dyn[i], name, sizeof(name))) {
			snprintf(path, sizeof(path), "events/%s/enable", name);
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

struct text {
	char *buf;
	size_t len, cap;
};

static int collect_text(const void *buf, size_t len, void *arg)
{
	struct text *t = arg;

	if (t->len + len + 1 > t->cap) {
		size_t cap = (t->len + len + 1) * 2;
		char *n = realloc(t->buf, cap);

		if (!n)
			return 1;
		t->buf = n;
		t->cap = cap;
	}
	memcpy(t->buf + t->len, buf, len);
	t->len += len;
	t->buf[t->len] = '\0';
	return 0;
}

/* The daemon's set_event: the events enabled now, one "sys:event" a line. */
static char *enabled_events(const char *sock)
{
	struct text t = { 0 };

	if (uks_sock_request(sock, UKS_SOCK_READ, "sys/kernel/tracing/set_event", 0, NULL, 0,
			     collect_text, &t) || !t.buf) {
		free(t.buf);
		return strdup("");
	}
	return t.buf;
}

static bool has_line(const char *text, const char *line, size_t len)
{
	for (const char *p = text; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n == len && !memcmp(p, line, len))
			return true;
		p = nl ? nl + 1 : NULL;
	}
	return false;
}

/* @line with its words separated by one space, as dynamic_events lists it. */
static void dyn_canon(const char *line, char *out, size_t size)
{
	char copy[1024], *save = NULL, *w;
	size_t len = 0;
	int nr = 0;

	snprintf(copy, sizeof(copy), "%s", line);
	out[0] = '\0';
	for (w = strtok_r(copy, " \t\n", &save); w && len < size; w = strtok_r(NULL, " \t\n", &save)) {
		char word[1024];

		snprintf(word, sizeof(word), "%s", w);
		if (nr == 0 && word[0] == 'e' && word[1] == ':' && !strchr(word, '/'))
			snprintf(word, sizeof(word), "e:eprobes/%s", w + 2);	/* default group */
		else if (nr == 1 && strchr(word, '/'))
			*strchr(word, '/') = '.';	/* SYS/EVENT is listed SYS.EVENT */
		len += (size_t)snprintf(out + len, size - len, "%s%s", nr ? " " : "", word);
		nr++;
	}
}

/* Does dynamic_events hold exactly the definition @line? */
static bool same_dyn_event(const char *line, void *arg)
{
	struct daemon_ctx *d = arg;
	struct text t = { 0 };
	char want[1024], have[1024];
	bool found = false;

	if (uks_sock_request(d->sock, UKS_SOCK_READ, "sys/kernel/tracing/dynamic_events", 0,
			     NULL, 0, collect_text, &t) || !t.buf)
		return false;
	dyn_canon(line, want, sizeof(want));
	for (char *save = NULL, *l = strtok_r(t.buf, "\n", &save); l && !found;
	     l = strtok_r(NULL, "\n", &save)) {
		dyn_canon(l, have, sizeof(have));
		found = !strcmp(want, have);
	}
	free(t.buf);
	return found;
}

/*
 * What -e/-E enabled is disabled at the end: the events in set_event after
 * they were applied and not before.  Their dynamic events stay defined
 * (disabled): removing one clears every buffer (dynamic_events.c), and
 * with it the records the user is about to read; an identical -E later
 * uses them again.
 */
struct undo {
	char *before;
	char *after;
};

static void undo_specs(const char *sock, struct undo *u)
{
	struct daemon_ctx d = { sock };
	char cmd[300];

	for (const char *p = u->after; p && *p; ) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n && n < 250 && !has_line(u->before, p, n)) {
			int ret;

			snprintf(cmd, sizeof(cmd), "!%.*s", (int)n, p);
			ret = daemon_write("set_event", cmd, true, &d);
			if (ret)
				fprintf(stderr, "uks trace: cannot disable %.*s: %s\n", (int)n, p,
					strerror(-ret));
		}
		p = nl ? nl + 1 : NULL;
	}
	free(u->before);
	free(u->after);
	u->before = u->after = NULL;
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

/*
 * The keeper, in a child of ours: seize @pid, ask uksd to be its session,
 * tell the front ("A[MOUNT]\n" or "E<errno>\n"), then relay until every
 * tracee is gone.
 */
static void keeper_child(const char *sock, pid_t pid, bool filtered, int front)
{
	const char *how = filtered ? "filtered" : "";
	struct uks_tracee_keeper *k;
	char pidbuf[24], first[4200];
	const char *mount;
	int fd = -1, ret;

	ret = uks_tracee_keeper_create(pid, filtered ? UKS_TRACEE_KEEP_FILTERED : 0, &k);
	if (!ret) {
		snprintf(pidbuf, sizeof(pidbuf), "%d", (int)pid);
		ret = uks_sock_open(sock, TRACE_ATTACH_OP, pidbuf, how, strlen(how), first,
				    sizeof(first), &fd);
	}
	if (ret) {
		dprintf(front, "E%d\n", -ret);
		_exit(1);	/* the kernel detaches what was seized */
	}
	first[strcspn(first, "\n")] = '\0';
	mount = strncmp(first, "attached ", 9) ? "" : first + 9;
	dprintf(front, "A%s\n", mount);
	uks_tracee_keeper_run(k, fd, front);
	_exit(0);
}

/* The front's view of its keeper. */
struct front {
	int fd;
	bool done;	/* the first pid exited (or the keeper is gone) */
	bool lost;	/* the session went away */
	bool gone;	/* the keeper closed the pipe */
};

/* Read what the keeper said; @block waits for at least one byte. */
static void front_read(struct front *f, const char *what, bool block)
{
	char buf[64];
	ssize_t n;

	if (f->gone)
		return;
	if (!block) {
		struct pollfd p = { f->fd, POLLIN, 0 };

		if (poll(&p, 1, 0) <= 0)
			return;
	}
	n = read(f->fd, buf, sizeof(buf));
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0) {
		if (!f->done && !f->lost)
			fprintf(stderr, "uks trace: tracing lost: the keeper died; %s runs on "
				"untraced\n", what);
		f->gone = f->done = true;
		return;
	}
	for (ssize_t i = 0; i < n; i++) {
		if (buf[i] == UKS_TRACEE_KEEPER_LOST && !f->lost) {
			f->lost = true;
			fprintf(stderr, "uks trace: tracing lost: uksd went away; %s runs on "
				"untraced\n", what);
		} else if (buf[i] == UKS_TRACEE_KEEPER_DONE) {
			f->done = true;
		}
	}
}

/* The keeper's first line: 0 (and @mount) once uksd is its session, or -errno. */
static int front_first(int fd, char *mount, size_t size)
{
	char line[4200];
	size_t len = 0;
	int err;

	while (len < sizeof(line) - 1) {
		ssize_t n = read(fd, line + len, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -EPIPE;
		if (line[len++] == '\n')
			break;
	}
	line[len ? len - 1 : 0] = '\0';
	if (line[0] == 'E')
		return (err = atoi(line + 1)) > 0 ? -err : -EPROTO;
	if (line[0] != 'A')
		return -EPROTO;
	if (strlen(line + 1) >= size)
		return -ENAMETOOLONG;
	strcpy(mount, line + 1);
	return 0;
}

static volatile sig_atomic_t interrupted;
static void on_int_daemon(int sig)
{
	interrupted = sig;
}

static void say_where(const char *sock, pid_t pid, const char *comm, const char *mount)
{
	if (*mount)
		fprintf(stderr, "uks trace: tracing %d (%s) in uksd at %s; read %s/sys/kernel/"
			"tracing/trace\n", (int)pid, comm, sock, mount);
	else
		fprintf(stderr, "uks trace: tracing %d (%s) in uksd at %s; read it with "
			"'uks -S %s cat sys/kernel/tracing/trace'\n", (int)pid, comm, sock, sock);
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Until the command exits; its status.  Tells of a lost session at once. */
static int wait_command(pid_t child, struct front *f, const char *what)
{
	int pidfd = (int)syscall(SYS_pidfd_open, child, 0);
	int status = 0;

	while (pidfd >= 0) {
		struct pollfd p[2] = { { pidfd, POLLIN, 0 }, { f->gone ? -1 : f->fd, POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			front_read(f, what, true);
		if (p[0].revents)
			break;
	}
	if (pidfd >= 0)
		close(pidfd);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	/* its exit went up to uksd before the keeper tells us (or is gone) */
	while (!f->done)
		front_read(f, what, true);
	return status;
}

static int trace_with_daemon(const char *sock, const struct trace_args *a)
{
	static struct filter_buf filter;
	struct daemon_ctx d = { sock };
	struct undo u = { 0 };
	struct front f = { -1, false, false, false };
	char mount[4200], comm[64], what[300];
	int status = 0, ret, fp[2];
	pid_t child = 0, keeper, target;

	u.before = a->keep ? NULL : enabled_events(sock);
	ret = apply_specs(a, daemon_write, same_dyn_event, &d);
	if (!a->keep)
		u.after = enabled_events(sock);
	if (ret)
		goto fail;
	if (a->cmd) {
		/* The daemon's seccomp program, so only calls with events stop. */
		filter.len = 0;
		if (a->every_syscall) {
			ssize_t n = uks_tracee_filter_every_syscall(filter.prog,
								    sizeof(filter.prog));

			ret = n < 0 ? (int)n : 0;
			filter.len = n < 0 ? 0 : (size_t)n;
		} else {
			ret = uks_sock_request(sock, TRACE_FILTER_OP, "", 0, NULL, 0,
					       collect_filter, &filter);
		}
		if (ret || !filter.len) {
			fprintf(stderr, "uks trace: no filter from uksd: %s\n",
				strerror(ret ? -ret : EPROTO));
			goto fail;
		}
	}
	if (pipe2(fp, O_CLOEXEC)) {
		perror("uks trace: pipe");
		goto fail;
	}
	if (a->cmd) {
		child = fork();
		if (child < 0) {
			perror("uks trace: fork");
			goto fail;
		}
		if (child == 0) {
			/*
			 * Let the keeper trace us (yama; uksd reads our memory for
			 * eprobes too), wait until it has, then put the filter in
			 * and become CMD: its calls stop only where uksd writes events.
			 */
			prctl(PR_SET_PTRACER, PR_SET_PTRACER_ANY, 0, 0, 0);
			raise(SIGSTOP);
			if (uks_tracee_install_filter(filter.prog, filter.len)) {
				fprintf(stderr, "uks trace: cannot install the seccomp filter\n");
				_exit(126);
			}
			execvp(a->cmd[0], a->cmd);
			fprintf(stderr, "uks trace: %s: %s\n", a->cmd[0], strerror(errno));
			_exit(errno == ENOENT ? 127 : 126);	/* as a shell */
		}
		if (waitpid(child, &status, WUNTRACED) != child || !WIFSTOPPED(status)) {
			fputs("uks trace: the command did not start\n", stderr);
			goto fail;
		}
	}
	target = a->cmd ? child : a->pid;
	keeper = fork();
	if (keeper < 0) {
		perror("uks trace: fork");
		goto fail_child;
	}
	if (keeper == 0) {
		close(fp[0]);
		keeper_child(sock, target, a->cmd != NULL, fp[1]);
	}
	close(fp[1]);
	f.fd = fp[0];
	ret = front_first(f.fd, mount, sizeof(mount));
	if (ret) {
		if (ret == -EPIPE)
			ret = -ECHILD;
		fprintf(stderr, "uks trace: cannot trace %d: %s\n", (int)target, strerror(-ret));
		waitpid(keeper, NULL, 0);
		goto fail_child;
	}
	if (a->cmd) {
		snprintf(comm, sizeof(comm), "%s", base_name(a->cmd[0]));
	} else {
		char path[64];
		FILE *cf;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)a->pid);
		cf = fopen(path, "r");
		if (!cf || !fgets(comm, sizeof(comm), cf))
			snprintf(comm, sizeof(comm), "?");
		if (cf)
			fclose(cf);
		comm[strcspn(comm, "\n")] = '\0';
	}
	snprintf(what, sizeof(what), "%d (%s)", (int)target, comm);
	say_where(sock, target, comm, mount);
	if (a->cmd) {
		/* Our ^C goes to the command (same process group); we wait it out. */
		signal(SIGINT, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		kill(child, SIGCONT);
		status = wait_command(child, &f, what);
	} else {
		/* Until the process exits or ^C/SIGTERM: closing the pipe releases it. */
		struct sigaction sa = { .sa_handler = on_int_daemon };	/* no SA_RESTART */

		sigaction(SIGINT, &sa, NULL);
		sigaction(SIGTERM, &sa, NULL);
		while (!f.done && !f.lost && !interrupted)
			front_read(&f, what, true);
	}
	close(f.fd);
	if (f.lost) {
		/* uksd is gone, and what was set up in it with it */
		free(u.before);
		free(u.after);
	} else if (!a->keep) {
		undo_specs(sock, &u);
	}
	if (a->pid)
		return f.lost ? 1 : 0;
	return exit_code(status);

fail_child:
	if (child > 0) {
		kill(child, SIGKILL);
		kill(child, SIGCONT);
		waitpid(child, &status, 0);
	}
fail:
	if (!a->keep)
		undo_specs(sock, &u);
	return 1;
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
	/* held by a keeper: the command runs on if we are killed */
	struct uks_tracee_opts o = {
		.sz = sizeof(o),
		.flags = UKS_TRACEE_KEEPER | (a->every_syscall ? UKS_TRACEE_EVERY_SYSCALL : 0),
	};
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
	if (apply_specs(a, local_write, NULL, tr)) {
		uks_trace_destroy(tr);
		return 1;
	}
	ret = uks_tracee_session_create(&o, &s);
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

/* Can @file be run, as a shell would find it?  errno when not. */
static int command_error(const char *file)
{
	const char *path = secure_getenv("PATH");
	char *dirs, *save = NULL, full[4096];
	int err = ENOENT;

	if (strchr(file, '/'))
		return access(file, X_OK) ? errno : 0;
	dirs = strdup(path && *path ? path : "/usr/local/bin:/usr/bin:/bin");
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
		snprintf(full, sizeof(full), "%s/%s", d, file);
		if (!access(full, X_OK)) {
			err = 0;
			break;
		}
		if (errno == EACCES)
			err = EACCES;
	}
	free(dirs);
	return err;
}

int cli_trace(const char *sock, int argc, char **argv)
{
	struct trace_args a;
	int ret = parse_trace(argc, argv, &a);

	if (ret)
		return ret;
	if (a.cmd) {
		int err = command_error(a.cmd[0]);

		if (err == ENOENT && !strchr(a.cmd[0], '/')) {
			fprintf(stderr, "uks trace: %s: command not found\n", a.cmd[0]);
			return 127;
		}
		if (err) {
			fprintf(stderr, "uks trace: %s: %s\n", a.cmd[0], strerror(err));
			return err == ENOENT ? 127 : 126;
		}
	}
	if (!a.embedded && !a.output &&
	    uks_sock_request(sock, UKS_SOCK_STAT, "sys/kernel/tracing", 0, NULL, 0, NULL,
			     NULL) == 0)
		return trace_with_daemon(sock, &a);
	return trace_embedded(&a);
}
