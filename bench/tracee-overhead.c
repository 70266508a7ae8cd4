// SPDX-License-Identifier: MIT
/*
 * bench/tracee-overhead: what tracing a real process costs it, uks against
 * strace, in one run.
 *
 * The workload (this binary again, run with UKS_BENCH_TRACEE=N,M:FD) times
 * N getpid() calls (never traced by uks here) and M openat()+close() pairs
 * (openat traced) with CLOCK_MONOTONIC (vDSO, no system call) and writes
 * the two times to FD.  It runs
 *   plain                                  no tracer
 *   uks                                    a uks session, syscalls:sys_enter_openat
 *                                          and sys_exit_openat enabled (seccomp)
 *   uks-keeper                             the same, held by a keeper process that
 *                                          relays each stop (UKS_TRACEE_KEEPER: what
 *                                          uks trace does); no eprobe here, so it
 *                                          resumes them before relaying
 *   uks-step                               the same with UKS_TRACEE_NO_SECCOMP
 *   strace -f -e trace=openat -o /dev/null
 *   strace -f --seccomp-bpf -e trace=openat -o /dev/null   (if supported)
 *   strace -f -o /dev/null
 * and prints, per configuration, ns per getpid() and per open+close pair,
 * the overhead over plain per untraced call (getpid) and per traced call
 * (the openat of a pair; close is untraced under uks), and uks/peer ratios
 * (uks direct and through the keeper).
 *
 * Usage: tracee-overhead [N_GETPID [N_OPEN]]   (defaults 200000 20000)
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <uks/trace.h>
#include <uks/tracee.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void workload(const char *spec)
{
	long n = 0, m = 0;
	int fd = -1;
	double t0, t1, t2;
	char buf[128];
	int len;

	if (sscanf(spec, "%ld,%ld:%d", &n, &m, &fd) != 3)
		_exit(2);
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		syscall(SYS_getpid);
	t1 = now_ns();
	for (long i = 0; i < m; i++) {
		int f = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDONLY, 0);

		if (f >= 0)
			close(f);
	}
	t2 = now_ns();
	len = snprintf(buf, sizeof(buf), "%.0f %.0f\n", t1 - t0, t2 - t1);
	if (write(fd, buf, (size_t)len) != len)
		_exit(3);
	_exit(0);
}

__attribute__((constructor)) static void workload_ctor(void)
{
	const char *spec = getenv("UKS_BENCH_TRACEE");

	if (spec)
		workload(spec);
}

struct result {
	const char *name;
	double getpid_ns, open_ns;	/* per call / per pair */
	int ok;
};

static char self_exe[4096];

static int read_times(int fd, struct result *r, long n, long m)
{
	char buf[128];
	ssize_t len = read(fd, buf, sizeof(buf) - 1);
	double a, b;

	if (len <= 0)
		return -1;
	buf[len] = '\0';
	if (sscanf(buf, "%lf %lf", &a, &b) != 2)
		return -1;
	r->getpid_ns = a / n;
	r->open_ns = b / m;
	r->ok = 1;
	return 0;
}

/* Run the workload under @prefix (NULL-terminated argv of a tracer, or NULL). */
static void run_exec(struct result *r, char *const prefix[], long n, long m)
{
	char *argv[16];
	char env[128];
	int p[2], st, k = 0;
	pid_t pid;

	if (pipe(p))
		return;
	for (; prefix && prefix[k]; k++)
		argv[k] = prefix[k];
	argv[k++] = self_exe;
	argv[k] = NULL;
	snprintf(env, sizeof(env), "UKS_BENCH_TRACEE=%ld,%ld:%d", n, m, p[1]);
	pid = fork();
	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		close(p[0]);
		dup2(devnull, 2);	/* strace's complaints, if any */
		putenv(env);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	read_times(p[0], r, n, m);
	close(p[0]);
	waitpid(pid, &st, 0);
	if (!WIFEXITED(st) || WEXITSTATUS(st))
		r->ok = 0;
}

static void run_uks(struct result *r, unsigned int flags, long n, long m)
{
	struct uks_tracee_opts o = { .sz = sizeof(o), .flags = flags };
	struct uks_tracee_session *s;
	struct uks_trace *tr;
	char env[128];
	char *argv[] = { self_exe, NULL };
	int p[2], st = -1;

	if (uks_tracee_session_create(&o, &s) || uks_trace_create(NULL, &tr))
		return;
	uks_tracefs_write_str(tr, "set_event", "syscalls:sys_enter_openat syscalls:sys_exit_openat",
			      UKS_TRACEFS_APPEND);
	if (pipe(p))
		return;
	snprintf(env, sizeof(env), "UKS_BENCH_TRACEE=%ld,%ld:%d", n, m, p[1]);
	putenv(env);
	if (uks_tracee_spawn(s, argv, NULL) == 0) {
		close(p[1]);
		if (uks_tracee_run(s, &st) == 0 && WIFEXITED(st) && !WEXITSTATUS(st))
			read_times(p[0], r, n, m);
	} else {
		close(p[1]);
	}
	unsetenv("UKS_BENCH_TRACEE");
	close(p[0]);
	uks_tracee_session_destroy(s);
	uks_tracefs_write_str(tr, "events/enable", "0", UKS_TRACEFS_APPEND);
	uks_trace_destroy(tr);
}

static int strace_has_seccomp_bpf(void)
{
	int st;
	pid_t pid = fork();

	if (pid == 0) {
		int devnull = open("/dev/null", O_WRONLY);

		dup2(devnull, 1);
		dup2(devnull, 2);
		execlp("strace", "strace", "-f", "--seccomp-bpf", "-e", "trace=openat", "-o",
		       "/dev/null", "true", (char *)NULL);
		_exit(127);
	}
	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && !WEXITSTATUS(st);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 200000, m = argc > 2 ? atol(argv[2]) : 20000;
	static char *strace_open[] = { (char *)"strace", (char *)"-f", (char *)"-e", (char *)"trace=openat", (char *)"-o", (char *)"/dev/null", NULL };
	static char *strace_bpf[] = { (char *)"strace", (char *)"-f", (char *)"--seccomp-bpf", (char *)"-e", (char *)"trace=openat",
				      (char *)"-o", (char *)"/dev/null", NULL };
	static char *strace_all[] = { (char *)"strace", (char *)"-f", (char *)"-o", (char *)"/dev/null", NULL };
	struct result res[7] = {
		{ .name = "plain" }, { .name = "uks (seccomp)" }, { .name = "uks (seccomp, keeper)" },
		{ .name = "uks (step)" }, { .name = "strace -e trace=openat" },
		{ .name = "strace --seccomp-bpf -e openat" }, { .name = "strace (all)" },
	};
	ssize_t len = readlink("/proc/self/exe", self_exe, sizeof(self_exe) - 1);
	struct result plain2 = { .name = "plain" };

	if (len <= 0)
		return 1;
	self_exe[len] = '\0';
	run_exec(&res[0], NULL, n, m);
	run_uks(&res[1], 0, n, m);
	run_uks(&res[2], UKS_TRACEE_KEEPER, n, m);
	run_uks(&res[3], UKS_TRACEE_NO_SECCOMP, n, m);
	run_exec(&res[4], strace_open, n, m);
	if (strace_has_seccomp_bpf())
		run_exec(&res[5], strace_bpf, n, m);
	run_exec(&res[6], strace_all, n, m);
	/* plain again: the best of two is the baseline */
	run_exec(&plain2, NULL, n, m);
	if (plain2.ok && (!res[0].ok || plain2.getpid_ns + plain2.open_ns <
			  res[0].getpid_ns + res[0].open_ns))
		res[0] = plain2, res[0].name = "plain";
	if (!res[0].ok) {
		fprintf(stderr, "tracee-overhead: the plain workload failed\n");
		return 1;
	}
	printf("tracee-overhead: %ld getpid() (untraced by uks), %ld openat+close (openat traced)\n",
	       n, m);
	printf("%-32s %12s %14s %16s %16s\n", "config", "getpid ns", "open+close ns",
	       "+ns/untraced", "+ns/traced");
	for (int i = 0; i < 7; i++) {
		struct result *r = &res[i];

		if (!r->ok) {
			printf("%-32s %12s\n", r->name, "n/a");
			continue;
		}
		printf("%-32s %12.1f %14.1f %16.1f %16.1f\n", r->name, r->getpid_ns, r->open_ns,
		       r->getpid_ns - res[0].getpid_ns,
		       /* openat's overhead: the pair's minus close's (untraced, like getpid) */
		       (r->open_ns - res[0].open_ns) - (r->getpid_ns - res[0].getpid_ns));
	}
	printf("ratios of overhead (lower is better for uks):\n");
	for (int k = 1; k <= 2; k++) {
		for (int i = k == 2 ? 1 : 4; i < 7; i++) {
			struct result *p = &res[i], *u = &res[k];
			double pu, uu, pt, ut;

			if (!p->ok || !u->ok || i == 2 || i == 3)
				continue;
			uu = u->getpid_ns - res[0].getpid_ns;
			pu = p->getpid_ns - res[0].getpid_ns;
			ut = u->open_ns - res[0].open_ns;
			pt = p->open_ns - res[0].open_ns;
			printf("  %s/%-28s untraced-call %.3f  traced pair %.3f  (whole run %.3f)\n",
			       k == 1 ? "uks" : "uks-keeper", p->name, pu > 1 ? uu / pu : 0.0,
			       pt > 1 ? ut / pt : 0.0,
			       (u->getpid_ns * n + u->open_ns * m) / (p->getpid_ns * n + p->open_ns * m));
		}
	}
	return 0;
}
