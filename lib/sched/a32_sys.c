// SPDX-License-Identifier: MIT
/*
 * The inputs of the 32-bit affinity rules on a real system: the capable
 * set (/sys/devices/system/cpu/aarch32_el0, a command-line list or a
 * config file), the online CPUs, a task's affinity, policy and cpuset
 * chain (cgroup v1 cpuset or cgroup v2 cpuset.cpus.effective, walked from
 * its own cgroup to the root), the admission-control sysctl, and the
 * user-space saved mask (an environment variable plus tombstones, see
 * <uks/sched.h>).
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/compiler.h"
#include <uks/core.h>
#include <uks/sched.h>

#ifndef SCHED_DEADLINE
#define SCHED_DEADLINE 6
#endif

static int read_text(const char *path, char *buf, size_t size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	return (int)n;
}

static int parse_file_list(struct uks_cpumask *m, const char *path)
{
	char buf[8192];
	int n = read_text(path, buf, sizeof(buf));

	if (n < 0)
		return n;
	return uks_cpumask_parse_list(m, buf, 0);
}

UKS_EXPORT int uks_a32_capable_read(struct uks_cpumask *m, const char *list, const char *config,
			 char *source, size_t size)
{
	static const char sysfs[] = "/sys/devices/system/cpu/aarch32_el0";
	char buf[8192], line[8192] = "";
	const char *cfg = config ? config : secure_getenv("UKS_A32_CONFIG");
	int ret;

	if (!access(sysfs, R_OK)) {
		if (source)
			snprintf(source, size, "%s", sysfs);
		return parse_file_list(m, sysfs);
	}
	if (list) {
		if (source)
			snprintf(source, size, "--capable");
		return uks_cpumask_parse_list(m, list, 0);
	}
	if (!cfg)
		cfg = "/etc/uks/aarch32_el0";
	ret = read_text(cfg, buf, sizeof(buf));
	if (ret < 0)
		return ret == -ENOENT ? -ENOENT : ret;
	/* The first line that is not blank or a '#' comment. */
	for (char *save = NULL, *l = strtok_r(buf, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		l += strspn(l, " \t");
		if (*l && *l != '#') {
			snprintf(line, sizeof(line), "%s", l);
			break;
		}
	}
	if (source)
		snprintf(source, size, "%s", cfg);
	return uks_cpumask_parse_list(m, line, 0);
}

/* The mount point (and mounted root) of the v1 cpuset or the v2 hierarchy. */
static int find_mount(bool v1, char *mnt, size_t msize, char *root, size_t rsize)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int ret = -ENOENT;

	if (!f)
		return -errno;
	while (ret && fgets(line, sizeof(line), f)) {
		char r[PATH_MAX], m[PATH_MAX], *dash = strstr(line, " - ");
		char fstype[64], opts[1024];

		if (!dash || sscanf(line, "%*s %*s %*s %4095s %4095s", r, m) != 2 ||
		    sscanf(dash + 3, "%63s %*s %1023s", fstype, opts) != 2)
			continue;
		if (v1 ? strcmp(fstype, "cgroup") || !strstr(opts, "cpuset") : strcmp(fstype, "cgroup2"))
			continue;
		snprintf(mnt, msize, "%s", m);
		snprintf(root, rsize, "%s", r);
		ret = 0;
	}
	fclose(f);
	return ret;
}

UKS_EXPORT int uks_a32_cpuset_dir(pid_t pid, char *buf, size_t size, bool *v1)
{
	char path[64], line[4096], mnt[PATH_MAX], root[PATH_MAX];
	char v1path[PATH_MAX] = "", v2path[PATH_MAX] = "";
	bool have1 = false, have2 = false;
	FILE *f;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/cgroup");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;

		if (!c2)
			continue;
		c2[strcspn(c2, "\n")] = '\0';
		*c2 = '\0';
		if (!strcmp(c1 + 1, "") && !strncmp(line, "0:", 2)) {
			snprintf(v2path, sizeof(v2path), "%s", c2 + 1);
			have2 = true;
		} else {
			for (char *save = NULL, *t = strtok_r(c1 + 1, ",", &save); t; t = strtok_r(NULL, ",", &save))
				if (!strcmp(t, "cpuset")) {
					snprintf(v1path, sizeof(v1path), "%s", c2 + 1);
					have1 = true;
				}
		}
	}
	fclose(f);
	for (int pass = 0; pass < 2; pass++) {
		bool is1 = pass == 0;
		const char *rel = is1 ? v1path : v2path;
		size_t rl;

		if (!(is1 ? have1 : have2) || find_mount(is1, mnt, sizeof(mnt), root, sizeof(root)))
			continue;
		/* A mount of a sub-tree (cgroup namespaces): strip its root. */
		rl = strlen(root);
		if (strcmp(root, "/") && !strncmp(rel, root, rl))
			rel += rl;
		if (!is1) {
			char probe[PATH_MAX + 64];

			snprintf(probe, sizeof(probe), "%s/cpuset.cpus.effective", mnt);
			if (access(probe, R_OK))
				continue;	/* no cpuset controller on v2 */
		}
		if ((size_t)snprintf(buf, size, "%s%s", mnt, strcmp(rel, "/") ? rel : "") >= size)
			return -ENAMETOOLONG;
		*v1 = is1;
		return 0;
	}
	return -ENOENT;
}

/* The effective CPUs of one cpuset directory (v2 without the file: -ENOENT). */
static int cpuset_effective(const char *dir, bool v1, struct uks_cpumask *m)
{
	char path[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/%s", dir, v1 ? "cpuset.effective_cpus" : "cpuset.cpus.effective");
	if (v1 && access(path, R_OK))
		snprintf(path, sizeof(path), "%s/cpuset.cpus", dir);
	return parse_file_list(m, path);
}

UKS_EXPORT int uks_a32_env_read(struct uks_a32_env *env, pid_t pid, const struct uks_cpumask *capable)
{
	char dir[PATH_MAX], mnt[PATH_MAX], root[PATH_MAX], buf[64];
	bool v1 = false;
	int ret;

	memset(env, 0, sizeof(*env));
	env->capable = *capable;
	ret = parse_file_list(&env->online, "/sys/devices/system/cpu/online");
	if (ret)
		return ret;
	env->root_domain = env->online;
	env->dl_admission = !(read_text("/proc/sys/kernel/sched_rt_runtime_us", buf, sizeof(buf)) > 0 &&
			      atol(buf) == -1);
	if (uks_a32_cpuset_dir(pid, dir, sizeof(dir), &v1))
		return 0;	/* no cpuset hierarchy: the walk uses the online CPUs */
	if (find_mount(v1, mnt, sizeof(mnt), root, sizeof(root)))
		return 0;
	for (;;) {
		if (env->nr_cpusets < UKS_A32_MAX_DEPTH &&
		    !cpuset_effective(dir, v1, &env->cpusets[env->nr_cpusets]))
			env->nr_cpusets++;
		else if (env->nr_cpusets == UKS_A32_MAX_DEPTH)
			env->cpusets[UKS_A32_MAX_DEPTH - 1] = env->online;	/* deeper: root */
		if (strlen(dir) <= strlen(mnt))
			break;
		*strrchr(dir, '/') = '\0';
	}
	return 0;
}

/* Start time (clock ticks since boot) of @pid; 0 if unknown. */
static unsigned long long start_time(pid_t pid, pid_t *ppid)
{
	char path[64], buf[2048], *s;
	unsigned long long v = 0;
	int field = 3;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)(pid ? pid : getpid()));
	if (read_text(path, buf, sizeof(buf)) <= 0 || !(s = strrchr(buf, ')')))
		return 0;
	for (char *save = NULL, *t = strtok_r(s + 1, " ", &save); t; t = strtok_r(NULL, " ", &save), field++) {
		if (field == 4 && ppid)
			*ppid = (pid_t)atoi(t);
		if (field == 22) {
			v = strtoull(t, NULL, 10);
			break;
		}
	}
	return v;
}

/* Now, in the clock ticks of /proc/PID/stat's start time. */
static unsigned long long now_ticks(void)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (unsigned long long)ts.tv_sec * (unsigned long long)hz +
	       (unsigned long long)ts.tv_nsec / (1000000000ULL / (unsigned long long)hz);
}

UKS_EXPORT const char *uks_a32_state_dir(char *buf, size_t size)
{
	const char *e = secure_getenv("UKS_A32_STATE"), *x = secure_getenv("XDG_RUNTIME_DIR");
	char rt[PATH_MAX];

	if (e && *e)
		snprintf(buf, size, "%s", e);
	else if (!geteuid())
		snprintf(buf, size, "/run/uks/a32");
	else if (x && *x)
		snprintf(buf, size, "%s/uks-a32", x);
	else if (!uks_runtime_dir(rt, sizeof(rt), UKS_RUNTIME_DIR_CREATE, NULL, 0))
		snprintf(buf, size, "%s/a32", rt);	/* the private /tmp/uks-UID */
	else
		buf[0] = '\0';		/* another user's or open to others: none */
	return buf;
}

/* The tick at which @pid (with start time @st) was invalidated, or 0. */
static unsigned long long tombstone(pid_t pid, unsigned long long st)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], buf[64];

	if (!*uks_a32_state_dir(dir, sizeof(dir)))
		return 0;
	snprintf(path, sizeof(path), "%s/%d-%llu", dir, (int)pid, st);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return 0;
	return strtoull(buf, NULL, 10);
}

UKS_EXPORT int uks_a32_invalidate(pid_t pid)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], buf[32];
	unsigned long long st = start_time(pid, NULL);
	int fd, n;

	if (!st)
		return -ESRCH;
	if (!*uks_a32_state_dir(dir, sizeof(dir)))
		return -EPERM;
	for (char *p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			mkdir(dir, 0755);
			*p = '/';
		}
	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/%d-%llu", dir, (int)(pid ? pid : getpid()), st);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu\n", now_ticks() + 1);
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	return close(fd) ? -errno : 0;
}

/*
 * Is a mask saved at tick @stamp, inherited by @pid, still valid?  Not if
 * @pid itself was invalidated later, or an ancestor was and the child on
 * the way down was forked after that.
 */
static bool saved_valid(pid_t pid, unsigned long long stamp)
{
	pid_t cur = pid ? pid : getpid(), parent = 0;
	unsigned long long child_start = 0;

	for (int depth = 0; depth < 64 && cur > 1; depth++) {
		unsigned long long st = start_time(cur, &parent), t;

		if (!st)
			break;
		t = tombstone(cur, st);
		if (t && t >= stamp && (depth == 0 || child_start >= t))
			return false;
		child_start = st;
		cur = parent;
	}
	return true;
}

/* Value of @name in /proc/@pid/environ (or our own environment for 0). */
static int env_of(pid_t pid, const char *name, char *out, size_t size)
{
	static char buf[131072];
	char path[64];
	size_t nl = strlen(name);
	int n;

	if (!pid) {
		const char *v = secure_getenv(name);

		if (!v)
			return -ENOENT;
		snprintf(out, size, "%s", v);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = read_text(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	for (char *p = buf; p < buf + n; p += strlen(p) + 1)
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			snprintf(out, size, "%s", p + nl + 1);
			return 0;
		}
	return -ENOENT;
}

UKS_EXPORT int uks_a32_task_read(struct uks_a32_task *t, pid_t pid)
{
	char v[8192], exe[64];
	cpu_set_t *set;
	size_t sz = CPU_ALLOC_SIZE(UKS_CPUMASK_MAX_CPUS);
	int policy;

	memset(t, 0, sizeof(*t));
	set = CPU_ALLOC(UKS_CPUMASK_MAX_CPUS);
	if (!set)
		return -ENOMEM;
	if (sched_getaffinity(pid, sz, set)) {
		int err = -errno;

		CPU_FREE(set);
		return err;
	}
	for (unsigned int c = 0; c < UKS_CPUMASK_MAX_CPUS; c++)
		if (CPU_ISSET_S(c, sz, set))
			uks_cpumask_set_cpu(&t->affinity, c);
	CPU_FREE(set);
	policy = sched_getscheduler(pid);
	t->deadline = policy == SCHED_DEADLINE;
	if (!env_of(pid, UKS_A32_ENV_TASK, v, sizeof(v))) {
		t->is32 = !strcmp(v, "1");
	} else {
		struct uks_elf_info info;

		snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)(pid ? pid : getpid()));
		t->is32 = !uks_elf_read_file(exe, &info) && info.elf_class == 32;
	}
	if (!env_of(pid, UKS_A32_ENV_SAVED, v, sizeof(v))) {
		char *at = strrchr(v, '@');
		unsigned long long stamp = at ? strtoull(at + 1, NULL, 10) : 0;

		if (at)
			*at = '\0';
		if (!uks_cpumask_parse_list(&t->saved, v, 0) && !uks_cpumask_empty(&t->saved))
			t->has_saved = saved_valid(pid, stamp);
	}
	return 0;
}

UKS_EXPORT int uks_a32_saved_set(const struct uks_a32_task *t)
{
	char list[8192], val[8300];
	int ret;

	if (!t->has_saved)
		return unsetenv(UKS_A32_ENV_SAVED) ? -errno : 0;
	ret = uks_cpumask_print_list(&t->saved, list, sizeof(list));
	if (ret < 0)
		return ret;
	snprintf(val, sizeof(val), "%s@%llu", list, now_ticks());
	return setenv(UKS_A32_ENV_SAVED, val, 1) ? -errno : 0;
}
