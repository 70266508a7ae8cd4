// SPDX-License-Identifier: MIT
/*
 * uks damon record: monitor a command or processes with DAMON and write
 * a damo record file: json_compressed (damo 2.0.3+'s default, and the
 * only format the damo of today reads), json, or damo v1's binary.
 *
 * The record is made from our own damon:damon_aggregated events: a trace
 * instance in this process has the event enabled, a reader thread drains
 * its trace_pipe (non-blocking, so the final drain after the monitor
 * stops is a plain loop until -EAGAIN) and feeds the text to the record
 * writer, which groups the lines into snapshots.
 *
 * With --primitive self the monitor runs inside the command instead: the
 * command is started with LD_PRELOAD=libuks-damon-agent.so (next to this
 * binary, or $UKS_DAMON_AGENT), UKS_DAMON_AGENT_FD=<the write end of a
 * pipe> and UKS_DAMON_AGENT_ATTRS=<the attrs file text>; the agent writes
 * its aggregations to the pipe as binary packets, which the same writer
 * takes without any text in between.
 *
 * A command is started first and held (a CLOEXEC pipe closes at its exec)
 * so the monitor starts on the program, not on our fork of it.  Recording
 * ends when the command exits (or every -p process), or at SIGINT/SIGTERM
 * (a command we started is then sent SIGTERM).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <config.h>

#include <uks/damon.h>
#include <uks/damon_record.h>
#include <uks/trace.h>

#include "cli.h"
#include "damon.h"

#define MAX_PIDS	32

struct rec_args {
	const char *out;
	int format;
	unsigned long attrs[5];
	const char *primitive;
	unsigned int budget[2];		/* monitor, target: permille of time; 0: none */
	unsigned long goal[4];		/* access_bp, aggrs (0: no goal), min, max us */
	unsigned long pids[MAX_PIDS];
	unsigned int nr_pids;
	char **cmd;
};

static volatile sig_atomic_t rec_stop;

static void on_signal(int sig)
{
	rec_stop = sig;
}

static void record_usage(FILE *out)
{
	fputs("Usage: uks damon record [-o FILE] [-f FORMAT] [--attrs \"SAMPLE AGGR UPDATE MIN MAX\"]\n"
	      "                        [--primitive NAME] [--budget MONITOR,TARGET]\n"
	      "                        [--intervals-goal \"ACCESS_BP AGGRS MIN_US MAX_US\"]\n"
	      "                        (-p PID... | [--] COMMAND [ARGS...])\n"
	      "\n"
	      "Monitor the data accesses of a command or of processes with DAMON and write\n"
	      "a damo record file (readable by damo and 'uks damon report').\n"
	      "  -o FILE           output file (default damon.data)\n"
	      "  -f, --format F    json_compressed (default, as damo 2.0.3+; json when\n"
	      "                    built without zlib), json\n"
	      "                    (both with intervals and region ages), or binary (damo\n"
	      "                    v1's record, which damo 2.0.3+ no longer reads)\n"
	      "  --attrs TEXT      intervals in us and region limits, as the debugfs attrs\n"
	      "                    file (default \"5000 100000 1000000 10 1000\", damo's)\n"
	      "  --primitive NAME  vaddr-sd, vaddr-refs or self (default: the best available;\n"
	      "                    self: the command monitors itself, reads and writes per\n"
	      "                    page with userfaultfd, via libuks-damon-agent.so)\n"
	      "  --budget M,T      what monitoring may cost, in percent: the monitor's CPU\n"
	      "                    (of one CPU) and the time the checks hold the targets'\n"
	      "                    page tables; the sampling interval grows to fit\n"
	      "                    (default 3,2; 0 for none: the intervals as given)\n"
	      "  --intervals-goal G  tune the intervals toward ACCESS_BP ten-thousandths of\n"
	      "                    the possible accesses every AGGRS aggregations, the\n"
	      "                    sampling interval within MIN_US..MAX_US (6.15's goal;\n"
	      "                    the kernel's docs suggest \"400 3 ...\")\n"
	      "  -p PID            monitor a running process (repeat for more)\n"
	      "Ends when the command (or every process) exits, or at ^C.  Prints the\n"
	      "intervals in force and what monitoring cost every 10 s and at the end.\n"
	      "Exit status: 0, 1 (error), 2 (usage), 126 (COMMAND cannot be executed),\n"
	      "127 (COMMAND not found).\n", out);
}

static int parse_record(int argc, char **argv, struct rec_args *a)
{
	static const struct option opts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "attrs", required_argument, NULL, 'a' },
		{ "primitive", required_argument, NULL, 'P' },
		{ "budget", required_argument, NULL, 'b' },
		{ "intervals-goal", required_argument, NULL, 'g' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(a, 0, sizeof(*a));
	a->out = "damon.data";
	/* damo's default; json when built without zlib */
	a->format = UKS_HAVE_ZLIB ? UKS_DAMON_RECFMT_JSON_COMPRESSED : UKS_DAMON_RECFMT_JSON;
	a->attrs[0] = 5000;
	a->attrs[1] = 100000;
	a->attrs[2] = 1000000;
	a->attrs[3] = 10;
	a->attrs[4] = 1000;
	a->budget[0] = 30;
	a->budget[1] = 20;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+o:f:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->out = optarg;
			break;
		case 'f':
			a->format = uks_damon_rec_format_parse(optarg);
			if (a->format < 0) {
				fprintf(stderr, "uks damon record: -f %s: the formats are "
					"json_compressed, json and binary\n", optarg);
				return 2;
			}
			break;
		case 'a': {
			char tail;

			if (sscanf(optarg, "%lu %lu %lu %lu %lu %c", &a->attrs[0], &a->attrs[1],
				   &a->attrs[2], &a->attrs[3], &a->attrs[4], &tail) != 5) {
				fprintf(stderr, "uks damon record: --attrs wants 5 numbers: %s\n",
					optarg);
				return 2;
			}
			break;
		}
		case 'P':
			a->primitive = optarg;
			break;
		case 'b': {
			double m, t = 0;
			char tail;
			int n = sscanf(optarg, "%lf,%lf%c", &m, &t, &tail);

			/* written so that NaN fails too */
			if ((n != 2 && !(n == 1 && m == 0)) || !(m >= 0 && m <= 100) ||
			    !(t >= 0 && t <= 100)) {
				fprintf(stderr, "uks damon record: --budget wants MONITOR,TARGET "
					"in percent (or 0): %s\n", optarg);
				return 2;
			}
			a->budget[0] = (unsigned int)(m * 10 + 0.5);
			a->budget[1] = (unsigned int)(t * 10 + 0.5);
			break;
		}
		case 'g': {
			char tail;

			if (sscanf(optarg, "%lu %lu %lu %lu %c", &a->goal[0], &a->goal[1], &a->goal[2],
				   &a->goal[3], &tail) != 4) {
				fprintf(stderr, "uks damon record: --intervals-goal wants 4 numbers: "
					"%s\n", optarg);
				return 2;
			}
			break;
		}
		case 'p': {
			char *end;
			unsigned long pid = strtoul(optarg, &end, 10);

			/* strtoul() takes "-5" as a huge number: digits only */
			if (optarg[0] < '0' || optarg[0] > '9' || *end || !pid || pid > INT_MAX ||
			    a->nr_pids == MAX_PIDS) {
				fprintf(stderr, "uks damon record: bad -p %s\n", optarg);
				return 2;
			}
			a->pids[a->nr_pids++] = pid;
			break;
		}
		case 'h':
			record_usage(stdout);
			return -1;
		default:
			record_usage(stderr);
			return 2;
		}
	}
	if (optind < argc)
		a->cmd = argv + optind;
	if (!!a->cmd == !!a->nr_pids) {
		fprintf(stderr, "uks damon record: give either -p PID... or a command\n");
		record_usage(stderr);
		return 2;
	}
	return 0;
}

/* The intervals in force and the measured cost of monitoring. */
static void print_cost(struct uks_damon_ctx *ctx, const char *when)
{
	struct uks_damon_cost c;
	double wall;

	uks_damon_get_cost(ctx, &c);
	wall = c.wall_ns ? (double)c.wall_ns : 1;
	fprintf(stderr, "uks damon record: sampling %lu us, aggregating %lu us (retuned %llu "
		"times); monitor %.1f%% of a CPU, targets' page tables held %.1f%% of the "
		"time, %s\n", c.sample_us, c.aggr_us, (unsigned long long)c.retunes,
		100.0 * (double)c.monitor_cpu_ns / wall, 100.0 * (double)c.target_stall_ns / wall,
		when);
}

/*
 * What can be checked before the output file is made: the attrs (by the
 * library's own rules, on a scratch context) and that each -p process
 * exists (as writing it to target_ids checks).  Return: 0 or an exit code.
 */
static int check_record(const struct rec_args *a)
{
	struct uks_damon_ctx *ctx;
	int err = uks_damon_ctx_create(&ctx);

	if (!err) {
		err = uks_damon_set_attrs(ctx, a->attrs[0], a->attrs[1], a->attrs[2], a->attrs[3],
					  a->attrs[4]);
		uks_damon_ctx_destroy(ctx);
	}
	if (err) {
		fprintf(stderr, "uks damon record: --attrs \"%lu %lu %lu %lu %lu\": %s\n",
			a->attrs[0], a->attrs[1], a->attrs[2], a->attrs[3], a->attrs[4],
			err == -EINVAL ? "min_nr_regions must be at least 3 and at most max_nr_regions"
				       : strerror(-err));
		return 2;
	}
	if (!UKS_HAVE_ZLIB && a->format == UKS_DAMON_RECFMT_JSON_COMPRESSED) {
		fprintf(stderr, "uks damon record: json_compressed needs zlib, which this uks was "
			"built without (use -f json)\n");
		return 1;
	}
	for (unsigned int i = 0; i < a->nr_pids; i++) {
		if (kill((pid_t)a->pids[i], 0) && errno == ESRCH) {
			fprintf(stderr, "uks damon record: -p %lu: no such process\n", a->pids[i]);
			return 1;
		}
	}
	return 0;
}

/*
 * Fork @cmd held before exec until *go is written to; returns its pid.
 * @env_fd >= 0 stays open in the child (the agent's pipe).
 */
static pid_t spawn_held(char **cmd, int *go_fd, int *exec_fd)
{
	int go[2], ex[2];
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char c;

		close(go[1]);
		close(ex[0]);
		if (read(go[0], &c, 1) != 1)
			_exit(127);
		execvp(cmd[0], cmd);
		dprintf(ex[1], "%d", errno);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	*go_fd = go[1];
	*exec_fd = ex[0];
	return pid;
}

/* A shell's exit status for a command that could not be executed. */
static int exec_status(int err)
{
	return err == -ENOENT ? 127 : 126;
}

/* Let the child exec; 0 once it did, else the exec's -errno. */
static int release(int go_fd, int exec_fd)
{
	char buf[16] = "";
	ssize_t n;

	if (write(go_fd, "g", 1) != 1)
		return -EIO;
	close(go_fd);
	n = read(exec_fd, buf, sizeof(buf) - 1);
	close(exec_fd);
	return n > 0 ? -atoi(buf) : 0;
}

struct reader {
	struct uks_damon_rec_writer *w;
	struct uks_tracefs_file *pipe;	/* trace_pipe, O_NONBLOCK */
	int fd;				/* or the agent's pipe */
	volatile int done;		/* the monitor stopped: drain and end */
	int ended;			/* the reader is done (atomic) */
	int err;
};

static void *reader_fn(void *arg)
{
	struct reader *r = arg;
	static char buf[1 << 16];

	for (;;) {
		ssize_t n = r->pipe ? uks_tracefs_read(r->pipe, buf, sizeof(buf))
				    : read(r->fd, buf, sizeof(buf));

		if (n > 0) {
			int err = r->pipe ? uks_damon_rec_writer_feed(r->w, buf, (size_t)n)
					  : uks_damon_rec_writer_feed_packets(r->w, buf, (size_t)n);

			if (err && !r->err)
				r->err = err;
			continue;
		}
		if (!r->pipe) {
			if (n < 0 && errno == EINTR)
				continue;
			break;			/* the agent closed the pipe */
		}
		if (n != -EAGAIN && n != -EINTR)
			break;
		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE))
			break;
		usleep(20000);
	}
	__atomic_store_n(&r->ended, 1, __ATOMIC_RELEASE);
	return NULL;
}

static const char *agent_path(char *buf, size_t len)
{
	const char *env = secure_getenv("UKS_DAMON_AGENT");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = '\0';
	const char *dir = dirname(exe);

	snprintf(buf, len, "%s/libuks-damon-agent.so", dir);
	if (access(buf, R_OK) && len > strlen(dir) + 32)	/* installed: PREFIX/lib */
		snprintf(buf, len, "%s/../lib/libuks-damon-agent.so", dir);
	return buf;
}

static int wait_child(pid_t pid, bool hang)
{
	int status;

	return waitpid(pid, &status, hang ? 0 : WNOHANG) == pid;
}

static int record_self(struct rec_args *a, struct uks_damon_rec_writer *w)
{
	char pathbuf[PATH_MAX + 32], attrs[128], fdtext[16], *preload;
	const char *agent = agent_path(pathbuf, sizeof(pathbuf)), *old;
	struct reader r = { .w = w };
	int p[2], go, ex, err, eof_ticks = 0;
	bool lost = false;
	pthread_t th;
	pid_t pid;

	if (!a->cmd) {
		fprintf(stderr, "uks damon record: --primitive self monitors a command "
			"(-- CMD), not -p\n");
		return 1;
	}
	if (!agent || access(agent, R_OK)) {
		fprintf(stderr, "uks damon record: --primitive self needs the agent "
			"libuks-damon-agent.so, not found at %s (build it, or set "
			"UKS_DAMON_AGENT)\n", agent ? agent : "(unknown)");
		return 1;
	}
	if (pipe2(p, O_CLOEXEC))
		return 1;
	snprintf(attrs, sizeof(attrs), "%lu %lu %lu %lu %lu\n", a->attrs[0], a->attrs[1],
		 a->attrs[2], a->attrs[3], a->attrs[4]);
	/* the write end goes to the child without CLOEXEC, as a new fd */
	int wfd = fcntl(p[1], F_DUPFD, 3);

	close(p[1]);
	if (wfd < 0)
		return 1;
	snprintf(fdtext, sizeof(fdtext), "%d", wfd);
	old = secure_getenv("LD_PRELOAD");
	if (asprintf(&preload, "%s%s%s", agent, old && *old ? ":" : "", old ? old : "") < 0)
		return 1;
	setenv("LD_PRELOAD", preload, 1);
	setenv("UKS_DAMON_AGENT_FD", fdtext, 1);
	setenv("UKS_DAMON_AGENT_ATTRS", attrs, 1);
	pid = spawn_held(a->cmd, &go, &ex);
	if (old)
		setenv("LD_PRELOAD", old, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv("UKS_DAMON_AGENT_FD");
	unsetenv("UKS_DAMON_AGENT_ATTRS");
	free(preload);
	close(wfd);
	if (pid < 0)
		return 1;
	r.fd = p[0];
	pthread_create(&th, NULL, reader_fn, &r);
	err = release(go, ex);
	if (err)
		fprintf(stderr, "uks damon record: %s: %s\n", a->cmd[0], strerror(-err));
	if (err == -EIO)	/* the held child is gone: nothing was executed */
		err = -ECHILD;
	while (!err && !rec_stop && !wait_child(pid, false)) {
		/*
		 * Every copy of the pipe closed while the program runs on.  An
		 * exiting program closes its files before it can be waited
		 * for: only a second of running on counts.
		 */
		if (__atomic_load_n(&r.ended, __ATOMIC_ACQUIRE) && !lost && ++eof_ticks > 20) {
			fprintf(stderr, "uks damon record: %s closed the agent's output before it "
				"exited: recording stopped there\n", a->cmd[0]);
			lost = true;
		}
		usleep(50000);
	}
	if (rec_stop) {
		kill(pid, SIGTERM);
		wait_child(pid, true);
	}
	pthread_join(th, NULL);		/* EOF when the agent's copies are closed */
	close(p[0]);
	if (err && err != -ECHILD) {
		wait_child(pid, true);
		return exec_status(err);
	}
	return err || r.err || lost ? 1 : 0;
}

static int record_damon(struct rec_args *a, struct uks_damon_rec_writer *w, const char *prim)
{
	struct uks_damon_ctx *ctx = NULL;
	struct uks_trace *tr = NULL;
	struct reader r = { .w = w };
	pthread_t th;
	pid_t child = -1;
	int go = -1, ex = -1, err, ret = 1;
	bool reading = false;

	err = uks_trace_create(NULL, &tr);
	if (!err)
		uks_tracefs_write_str(tr, "buffer_size_kb", "8192", UKS_TRACEFS_TRUNC);
	if (!err)
		err = uks_tracefs_write_str(tr, "events/damon/damon_aggregated/enable", "1",
					    UKS_TRACEFS_TRUNC);
	if (!err)
		err = uks_tracefs_open(tr, "trace_pipe", O_RDONLY | O_NONBLOCK, &r.pipe);
	if (!err)
		err = uks_damon_ctx_create(&ctx);
	if (!err)	/* checked already: check_record() */
		err = uks_damon_set_attrs(ctx, a->attrs[0], a->attrs[1], a->attrs[2], a->attrs[3],
					  a->attrs[4]);
	if (err) {
		fprintf(stderr, "uks damon record: setting up tracing: %s\n", strerror(-err));
		goto out;
	}
	err = uks_damon_set_primitive(ctx, prim);
	if (err) {
		fprintf(stderr, "uks damon record: primitive %s: %s\n", prim, strerror(-err));
		goto out;
	}
	uks_damon_set_budget(ctx, a->budget[0], a->budget[1]);	/* checked by parse_record() */
	if (a->goal[1] && uks_damon_set_intervals_goal(ctx, a->goal[0], a->goal[1], a->goal[2],
						       a->goal[3])) {
		fprintf(stderr, "uks damon record: --intervals-goal: MIN_US <= SAMPLE <= MAX_US\n");
		goto out;
	}
	if (a->cmd) {
		child = spawn_held(a->cmd, &go, &ex);
		if (child < 0) {
			perror("uks damon record: fork");
			goto out;
		}
		a->pids[a->nr_pids++] = (unsigned long)child;
		err = release(go, ex);
		if (err) {
			fprintf(stderr, "uks damon record: %s: %s\n", a->cmd[0], strerror(-err));
			wait_child(child, true);
			child = -1;
			if (err != -EIO)	/* the exec failed: as a shell says it */
				ret = exec_status(err);
			goto out;
		}
	}
	err = uks_damon_set_targets(ctx, a->pids, a->nr_pids);
	if (err) {
		fprintf(stderr, "uks damon record: targets: %s\n", strerror(-err));
		goto out;
	}
	if (pthread_create(&th, NULL, reader_fn, &r))
		goto out;
	reading = true;
	err = uks_damon_start(&ctx, 1);
	if (err) {
		fprintf(stderr, "uks damon record: start: %s\n", strerror(-err));
		goto out;
	}
	for (unsigned int ticks = 1; !rec_stop && uks_damon_is_running(ctx); ticks++) {
		if (child > 0 && wait_child(child, false)) {
			child = -1;
			break;
		}
		usleep(50000);
		if (ticks % 200 == 0)
			print_cost(ctx, "so far");
	}
	uks_damon_stop(&ctx, 1);
	print_cost(ctx, "in all");
	ret = 0;
out:
	if (child > 0) {
		kill(child, SIGTERM);
		wait_child(child, true);
	}
	if (reading) {
		__atomic_store_n(&r.done, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	if (r.err) {
		fprintf(stderr, "uks damon record: writing %s: %s\n", a->out, strerror(-r.err));
		ret = 1;
	}
	if (r.pipe)
		uks_tracefs_close(r.pipe);
	if (ctx)
		uks_damon_ctx_destroy(ctx);
	if (tr)
		uks_trace_destroy(tr);
	return ret;
}

int cli_damon_record(int argc, char **argv)
{
	struct uks_damon_rec_writer *w;
	struct uks_damon_rec_intervals iv;
	struct uks_damon_rec_stats st;
	struct sigaction sa = { .sa_handler = on_signal };
	struct rec_args a;
	struct stat fst;
	bool regular;
	const char *prim;
	char why[256];
	int ret = parse_record(argc, argv, &a), fd, err;

	if (!ret)
		ret = check_record(&a);
	if (ret)
		return ret < 0 ? 0 : ret;
	prim = a.primitive ? a.primitive : uks_damon_default_primitive();
	if (strcmp(prim, "self") && uks_damon_primitive_available(prim, why, sizeof(why))) {
		fprintf(stderr, "uks damon record: primitive %s: %s\n", prim, why);
		return 1;
	}
	fprintf(stderr, "uks damon record: primitive %s%s\n", prim,
		a.primitive ? "" : " (the best available here)");
	fd = open(a.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "uks damon record: %s: %s\n", a.out, strerror(errno));
		return 1;
	}
	regular = !fstat(fd, &fst) && S_ISREG(fst.st_mode);
	iv = (struct uks_damon_rec_intervals){ a.attrs[0], a.attrs[1], a.attrs[2] };
	err = uks_damon_rec_writer_create_format(fd, a.format, &iv, &w);
	if (err) {
		fprintf(stderr, "uks damon record: %s: %s\n", a.out, strerror(-err));
		close(fd);
		return 1;
	}
	rec_stop = 0;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	ret = strcmp(prim, "self") ? record_damon(&a, w, prim) : record_self(&a, w);
	err = uks_damon_rec_writer_finish(w, &st);
	if (close(fd) && !err)
		err = -errno;
	if (err) {
		fprintf(stderr, "uks damon record: %s: %s\n", a.out, strerror(-err));
		ret = 1;
	}
	if (ret && !st.snapshots && regular) {
		/* a failed start leaves no header-only file behind (-o /dev/stdout stays) */
		unlink(a.out);
		fprintf(stderr, "uks damon record: nothing recorded, %s not written\n", a.out);
		return ret;
	}
	fprintf(stderr, "uks damon record: %lu snapshots (%lu lines, %lu dropped, %lu bad) "
		"in %s\n", st.snapshots, st.lines, st.dropped, st.bad_lines, a.out);
	return ret;
}
