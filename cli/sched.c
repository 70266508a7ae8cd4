// SPDX-License-Identifier: MIT
/*
 * uks exec32 and uks taskset: the 5.15 asymmetric 32-bit affinity rules
 * (lib/sched/a32.c) applied to real tasks.  exec32 is the execve(2) step
 * for PROG: it reads our affinity, policy, saved mask and cpuset chain,
 * computes the new affinity, applies it with sched_setaffinity(2),
 * exports the saved mask and execs PROG.  taskset is sched_setaffinity(2)
 * for a task that may be 32-bit.
 *
 * One difference from the kernel: user space cannot give a task CPUs its
 * cpuset does not allow, so when step 2 picks an ancestor cpuset's CPUs
 * the task is moved into that ancestor cgroup first (the kernel leaves
 * the hierarchy alone).  See docs/SCHED.md.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uks/sched.h>

#include "cli.h"

struct a32_opts {
	const char *capable;
	const char *config;
	int force;		/* 32, 64, or 0 for --auto */
	bool verbose;
};

static void mask_str(const struct uks_cpumask *m, char *buf, size_t size)
{
	if (uks_cpumask_print_list(m, buf, size) < 0)
		snprintf(buf, size, "?");
}

static int set_affinity(pid_t pid, const struct uks_cpumask *m)
{
	size_t sz = CPU_ALLOC_SIZE(UKS_CPUMASK_MAX_CPUS);
	cpu_set_t *set = CPU_ALLOC(UKS_CPUMASK_MAX_CPUS);
	int ret = 0;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(sz, set);
	for (unsigned int c = 0; c < UKS_CPUMASK_MAX_CPUS; c++)
		if (uks_cpumask_test_cpu(m, c))
			CPU_SET_S(c, sz, set);
	if (sched_setaffinity(pid, sz, set))
		ret = -errno;
	CPU_FREE(set);
	return ret;
}

/* Move @pid into the cpuset @level levels above its own (step 2 outside it). */
static int move_up(pid_t pid, unsigned int level)
{
	char dir[PATH_MAX], path[PATH_MAX + 32];
	bool v1;
	FILE *f;
	int ret = uks_a32_cpuset_dir(pid, dir, sizeof(dir), &v1);

	if (ret)
		return ret;
	while (level--) {
		char *s = strrchr(dir, '/');

		if (!s || s == dir)
			return -ENOENT;
		*s = '\0';
	}
	snprintf(path, sizeof(path), "%s/%s", dir, v1 ? "tasks" : "cgroup.procs");
	f = fopen(path, "we");
	if (!f)
		return -errno;
	fprintf(f, "%d\n", (int)(pid ? pid : getpid()));
	ret = fclose(f) ? -errno : 0;
	return ret;
}

static int load(const struct a32_opts *o, pid_t pid, struct uks_a32_task *t, struct uks_a32_env *env)
{
	struct uks_cpumask capable;
	char src[PATH_MAX];
	int ret = uks_a32_capable_read(&capable, o->capable, o->config, src, sizeof(src));

	if (ret) {
		fprintf(stderr, "uks: no 32-bit-capable CPU set (%s): give --capable LIST or a config file\n",
			ret == -ENOENT ? "no /sys/devices/system/cpu/aarch32_el0" : strerror(-ret));
		return 1;
	}
	ret = uks_a32_task_read(t, pid);
	if (!ret)
		ret = uks_a32_env_read(env, pid, &capable);
	if (ret) {
		fprintf(stderr, "uks: reading task %d: %s\n", (int)pid, strerror(-ret));
		return 1;
	}
	if (o->verbose) {
		char c[256];

		mask_str(&capable, c, sizeof(c));
		fprintf(stderr, "uks: capable CPUs %s (from %s), %u cpuset levels\n", c, src, env->nr_cpusets);
	}
	return 0;
}

/*
 * Is @path a 32-bit program?  Its ELF class; for a "#!" script, that of
 * its interpreter (what the kernel ends up executing), one level deep.
 */
static bool prog_is32(const char *path)
{
	struct uks_elf_info info;
	char head[256];
	FILE *f;
	size_t n;

	if (!uks_elf_read_file(path, &info))
		return info.elf_class == 32;
	f = fopen(path, "re");
	if (!f)
		return false;
	n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = '\0';
	if (n < 3 || head[0] != '#' || head[1] != '!')
		return false;
	char *interp = head + 2 + strspn(head + 2, " \t");

	interp[strcspn(interp, " \t\n")] = '\0';
	return *interp && !uks_elf_read_file(interp, &info) && info.elf_class == 32;
}

/* The execve step for argv[0], then the exec itself. */
static int do_exec(const struct a32_opts *o, struct uks_a32_task *t, struct uks_a32_env *env, char **argv)
{
	struct uks_cpumask before = t->affinity, target;
	enum uks_a32_action act;
	bool new32 = o->force == 32;
	char b[256], a[256], s[256] = "-";
	int ret, level = -1;

	if (!o->force) {
		char path[PATH_MAX];
		const char *p = argv[0];

		if (!strchr(p, '/')) {
			const char *env_path = secure_getenv("PATH");
			char *dirs = strdup(env_path ? env_path : "/usr/bin:/bin"), *save = NULL;

			for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d; d = strtok_r(NULL, ":", &save)) {
				snprintf(path, sizeof(path), "%s/%s", d, argv[0]);
				if (!access(path, X_OK)) {
					p = path;
					break;
				}
			}
			free(dirs);
		}
		new32 = prog_is32(p);
	}
	ret = uks_a32_execve(t, env, new32, &act);
	if (ret == -ENOEXEC) {
		fprintf(stderr, "uks exec32: %s: %s (SCHED_DEADLINE task, root domain has 64-bit-only CPUs, admission control on)\n",
			argv[0], strerror(ENOEXEC));
		return 126;
	}
	if (act == UKS_A32_STEP2)
		level = uks_a32_cpuset_walk(env, &target);
	if (!uks_cpumask_equal(&before, &t->affinity)) {
		ret = set_affinity(0, &t->affinity);
		if (ret == -EINVAL && level > 0 && !move_up(0, (unsigned int)level)) {
			if (o->verbose)
				fprintf(stderr, "uks exec32: moved into the cpuset %d level(s) up to reach its CPUs\n", level);
			ret = set_affinity(0, &t->affinity);
		}
		if (ret) {
			mask_str(&t->affinity, a, sizeof(a));
			fprintf(stderr, "uks exec32: sched_setaffinity(%s): %s\n", a, strerror(-ret));
			return 1;
		}
	}
	if (uks_a32_saved_set(t) || (new32 ? setenv(UKS_A32_ENV_TASK, "1", 1) : unsetenv(UKS_A32_ENV_TASK))) {
		fprintf(stderr, "uks exec32: cannot set the environment\n");
		return 1;
	}
	if (o->verbose) {
		mask_str(&before, b, sizeof(b));
		mask_str(&t->affinity, a, sizeof(a));
		if (t->has_saved)
			mask_str(&t->saved, s, sizeof(s));
		fprintf(stderr, "uks exec32: %s is %d-bit: %s, affinity %s -> %s, saved %s%s\n", argv[0],
			new32 ? 32 : 64, uks_a32_action_name(act), b, a, s, env->warned ? " (warning)" : "");
	}
	execvp(argv[0], argv);
	fprintf(stderr, "uks exec32: %s: %s\n", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

static int parse_common(int c, struct a32_opts *o)
{
	switch (c) {
	case 'c': o->capable = optarg; return 0;
	case 'C': o->config = optarg; return 0;
	case '3': o->force = 32; return 0;
	case '6': o->force = 64; return 0;
	case 'a': o->force = 0; return 0;
	case 'v': o->verbose = true; return 0;
	}
	return -1;
}

static const struct option a32_long[] = {
	{ "capable", required_argument, NULL, 'c' },
	{ "config", required_argument, NULL, 'C' },
	{ "force-32", no_argument, NULL, '3' },
	{ "force-64", no_argument, NULL, '6' },
	{ "auto", no_argument, NULL, 'a' },
	{ "verbose", no_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static const char common_help[] =
	"  --capable LIST  the 32-bit-capable CPUs (when /sys/devices/system/cpu/aarch32_el0\n"
	"                  does not exist); else --config FILE, $UKS_A32_CONFIG or\n"
	"                  /etc/uks/aarch32_el0 (a cpulist line)\n"
	"  --force-32 | --force-64 | --auto   PROG's class (default: its ELF class)\n"
	"  -v, --verbose   print the decision on stderr\n";

int cli_exec32(int argc, char **argv)
{
	struct a32_opts o = { 0 };
	struct uks_a32_task t;
	struct uks_a32_env env;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+c:C:36avh", a32_long, NULL)) != -1) {
		if (!parse_common(c, &o))
			continue;
		if (c == 'h') {
			printf("Usage: uks exec32 [--force-32|--force-64|--auto] [--capable LIST] [-v] -- PROG [ARGS]\n\n"
			       "Runs PROG with the affinity execve(2) gives it on an asymmetric 32-bit system:\n"
			       "a 32-bit PROG gets the capable subset of our affinity (the old mask is saved in\n"
			       "$UKS_A32_SAVED, inherited over fork and kept over 32-bit execs), else the capable\n"
			       "CPUs of the nearest cpuset that has one, else all capable CPUs; a 64-bit PROG gets\n"
			       "a saved mask back if it is still valid.  A SCHED_DEADLINE caller cannot exec a\n"
			       "32-bit PROG while admission control is on (exit 126, ENOEXEC).\n\n%s"
			       "Exit status: PROG's, or 1 (error), 2 (usage), 126 (ENOEXEC), 127 (not found).\n",
			       common_help);
			return 0;
		}
		fprintf(stderr, "Usage: uks exec32 [OPTIONS] -- PROG [ARGS] (see --help)\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "uks exec32: no program\n"
				"Usage: uks exec32 [OPTIONS] -- PROG [ARGS] (see --help)\n");
		return 2;
	}
	if (load(&o, 0, &t, &env))
		return 1;
	return do_exec(&o, &t, &env, argv + optind);
}

int cli_taskset(int argc, char **argv)
{
	struct a32_opts o = { 0 };
	struct uks_cpumask req, before;
	struct uks_a32_task t;
	struct uks_a32_env env;
	char b[256], a[256];
	pid_t pid = 0;
	int c, ret;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+c:C:36avh", a32_long, NULL)) != -1) {
		if (!parse_common(c, &o))
			continue;
		if (c == 'h') {
			printf("Usage: uks taskset [--capable LIST] [-v] CPULIST (PID | -- PROG [ARGS])\n\n"
			       "sched_setaffinity(2) under the asymmetric 32-bit rules: a 32-bit task (one started\n"
			       "by uks exec32 for a 32-bit program, or a 32-bit ELF) gets only the capable CPUs of\n"
			       "CPULIST, and its saved mask is invalidated.  With -- PROG, sets our own affinity\n"
			       "and then execs PROG as uks exec32 would.\n\n%s"
			       "Exit status: 0, 1 (nothing left of CPULIST, or an error), 2 (usage).\n", common_help);
			return 0;
		}
		fprintf(stderr, "Usage: uks taskset [OPTIONS] CPULIST (PID | -- PROG [ARGS])\n");
		return 2;
	}
	if (optind + 1 >= argc) {
		fprintf(stderr, "uks taskset: need CPULIST and PID or -- PROG\n"
				"Usage: uks taskset [OPTIONS] CPULIST (PID | -- PROG [ARGS])\n");
		return 2;
	}
	ret = uks_cpumask_parse_list(&req, argv[optind], 0);
	if (ret) {
		fprintf(stderr, "uks taskset: bad CPU list '%s': %s\n", argv[optind], strerror(-ret));
		return 2;
	}
	if (strcmp(argv[optind + 1], "--")) {
		char *end;
		long v = strtol(argv[optind + 1], &end, 10);

		if (*end || v <= 0 || optind + 2 != argc) {
			fprintf(stderr, "uks taskset: bad PID '%s'\n", argv[optind + 1]);
			return 2;
		}
		pid = (pid_t)v;
	} else if (optind + 2 >= argc) {
		fprintf(stderr, "uks taskset: no program after --\n");
		return 2;
	}
	if (load(&o, pid, &t, &env))
		return 1;
	if (o.force)
		t.is32 = o.force == 32;
	before = t.affinity;
	ret = uks_a32_setaffinity(&t, &env, &req);
	if (ret) {
		fprintf(stderr, "uks taskset: %s leaves no usable CPU for this %d-bit task: %s\n", argv[optind],
			t.is32 ? 32 : 64, strerror(-ret));
		return 1;
	}
	ret = set_affinity(pid, &t.affinity);
	if (ret) {
		fprintf(stderr, "uks taskset: sched_setaffinity: %s\n", strerror(-ret));
		return 1;
	}
	mask_str(&before, b, sizeof(b));
	mask_str(&t.affinity, a, sizeof(a));
	if (pid) {
		uks_a32_invalidate(pid);
		printf("pid %d's current affinity list: %s\npid %d's new affinity list: %s%s\n", (int)pid, b,
		       (int)pid, a, t.is32 ? " (32-bit task: capable CPUs only)" : "");
		return 0;
	}
	if (o.verbose)
		fprintf(stderr, "uks taskset: affinity %s -> %s\n", b, a);
	return do_exec(&o, &t, &env, argv + optind + 2);
}
