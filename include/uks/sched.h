/* SPDX-License-Identifier: MIT */
/*
 * uks sched: the 5.15 asymmetric 32-bit affinity rules (docs/SCHED.md).
 *
 *  - uks_elf_parse() reads the ELF header facts the rules need (class)
 *    and where the PT_INTERP string lies;
 *  - struct uks_a32_policy holds the 32-bit-capable CPU set and computes
 *    the affinity the 5.15 execve(2)/sched_setaffinity(2) rules give a
 *    task, from its real affinity and its real cpuset hierarchy;
 *  - struct uks_a32_sim is a deterministic model (CPUs, hotplug, cpusets,
 *    tasks) on which every rule of the document can be exercised.
 *
 * Every int function returns 0 (or a count) on success and a negative
 * errno on failure.  Nothing here prints.
 */
#ifndef UKS_SCHED_H
#define UKS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <uks/cpumask.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ ELF */

struct uks_elf_info {
	int elf_class;		/* 32 or 64 */
	bool big_endian;
	unsigned int type;	/* ET_EXEC, ET_DYN, ... */
	unsigned int machine;	/* EM_* */
	unsigned int phnum;
	bool phdrs_truncated;	/* program headers beyond the bytes given */
	size_t interp_off;	/* PT_INTERP string: offset and size with */
	size_t interp_size;	/* its NUL; both 0 when there is none */
};

/**
 * uks_elf_parse() - read an ELF header and its PT_INTERP entry
 * @buf: the first bytes of the file
 * @len: how many
 * @info: filled in
 *
 * Return: 0, or -ENOEXEC if @buf is not an ELF file (bad magic, class,
 * byte order, a short header, or a PT_INTERP outside @buf or without NUL).
 */
int uks_elf_parse(const void *buf, size_t len, struct uks_elf_info *info);

/** uks_elf_read_file() - uks_elf_parse() on the first 64 KiB of @path. */
int uks_elf_read_file(const char *path, struct uks_elf_info *info);

/* ------------------------------------------------ asymmetric 32-bit rules */

#define UKS_A32_MAX_DEPTH 16	/* cpuset levels kept, own cpuset first */

/* What uks_a32_execve() did to the affinity. */
enum uks_a32_action {
	UKS_A32_UNCHANGED,	/* kept as it was */
	UKS_A32_STEP1,		/* restricted to its capable subset, old mask saved */
	UKS_A32_STEP2,		/* capable CPUs of the nearest cpuset that has one */
	UKS_A32_STEP3,		/* all capable CPUs */
	UKS_A32_RESTORED,	/* 64-bit exec: the saved mask was restored */
	UKS_A32_NOT_RESTORED,	/* 64-bit exec: restoring failed, affinity kept */
};

/* The per-task state the rules read and change. */
struct uks_a32_task {
	struct uks_cpumask affinity;
	struct uks_cpumask saved;	/* valid when has_saved */
	bool has_saved;
	bool is32;			/* running a 32-bit program */
	bool deadline;			/* SCHED_DEADLINE */
};

/* The system state around one task. */
struct uks_a32_env {
	struct uks_cpumask capable;	/* 32-bit-capable CPUs (aarch32_el0) */
	struct uks_cpumask online;
	struct uks_cpumask root_domain;	/* the task's root domain span */
	struct uks_cpumask cpusets[UKS_A32_MAX_DEPTH];	/* effective CPUs, own first */
	unsigned int nr_cpusets;	/* 0: no cpuset information (root only) */
	bool dl_admission;		/* admission control on (sched_rt_runtime_us != -1) */
	bool alloc_fails;		/* the walk of step 2 cannot allocate (step 3) */
	bool warned;			/* out: the kernel would print a warning */
};

/**
 * uks_a32_execve() - the affinity rules of execve(2) on an asymmetric system
 * @t: the task; changed in place
 * @env: its environment; @env->warned set when a warning is due
 * @new32: the new program is 32-bit
 * @act: out, what was done (may be NULL)
 *
 * A 32-bit program gets step 1, 2 or 3; a 64-bit program restores and
 * drops the saved mask.  Return: 0, or -ENOEXEC for a deadline task whose
 * root domain holds 64-bit-only CPUs while admission control is on (the
 * task is left unchanged).
 */
int uks_a32_execve(struct uks_a32_task *t, struct uks_a32_env *env, bool new32,
		   enum uks_a32_action *act);

/**
 * uks_a32_setaffinity() - sched_setaffinity(2) for a task
 * @t: the task
 * @env: its environment
 * @req: the requested mask
 *
 * A 32-bit task keeps only the capable CPUs of @req; the result is also
 * limited to what the task's cpuset allows (the nearest cpuset, from its
 * own up, with an online CPU the task can use), as the kernel does.  On success the saved
 * mask is dropped.  Return: 0 or -EINVAL (nothing left).
 */
int uks_a32_setaffinity(struct uks_a32_task *t, const struct uks_a32_env *env,
			const struct uks_cpumask *req);

/**
 * uks_a32_dl_admit() - explicit SCHED_DEADLINE admission (sched_setattr)
 *
 * Return: 0, or -EPERM when admission control is on and the task's
 * affinity does not span its root domain (a 32-bit task on an asymmetric
 * system).  Sets @t->deadline on success.
 */
int uks_a32_dl_admit(struct uks_a32_task *t, const struct uks_a32_env *env);

/**
 * uks_a32_cpuset_walk() - step 2: the capable CPUs of the nearest cpuset
 * @env: the cpuset chain (own first), capable and online CPUs
 * @out: the capable, online CPUs of the first level that has any
 *
 * Return: the level found (0 = own cpuset), or -ENOENT.
 */
int uks_a32_cpuset_walk(const struct uks_a32_env *env, struct uks_cpumask *out);

/** uks_a32_action_name() - "unchanged", "step1", ... */
const char *uks_a32_action_name(enum uks_a32_action a);

/* ------------------------------------------------ the real system */

/**
 * uks_a32_capable_read() - the 32-bit-capable CPU set
 * @m: filled in
 * @list: a cpulist from the command line, or NULL
 * @config: a file holding a cpulist ('#' comments), or NULL for
 *	$UKS_A32_CONFIG, then /etc/uks/aarch32_el0
 * @source: out, where the set came from (may be NULL)
 * @size: size of @source
 *
 * /sys/devices/system/cpu/aarch32_el0 wins where it exists; else @list,
 * else the config file.  Return: 0, -ENOENT (no source), -EINVAL.
 */
int uks_a32_capable_read(struct uks_cpumask *m, const char *list, const char *config,
			 char *source, size_t size);

/**
 * uks_a32_env_read() - @pid's environment from /proc and /sys
 * @env: filled in; @capable copied into it
 * @pid: the task (0: the caller)
 * @capable: the capable set
 *
 * Online CPUs from /sys/devices/system/cpu/online (the root domain is
 * taken to be all of them), the cpuset chain from /proc/PID/cgroup
 * (cgroup v1 cpuset where mounted, else v2 cpuset.cpus.effective), admission
 * control from /proc/sys/kernel/sched_rt_runtime_us.  Return: 0 or -errno.
 */
int uks_a32_env_read(struct uks_a32_env *env, pid_t pid, const struct uks_cpumask *capable);

/**
 * uks_a32_cpuset_dir() - the cpuset directory of @pid and its kind
 * @pid: 0 for the caller
 * @buf: out, the directory
 * @size: its size
 * @v1: out, true for a cgroup v1 cpuset
 *
 * Return: 0, -ENOENT (no cpuset hierarchy mounted), -errno.
 */
int uks_a32_cpuset_dir(pid_t pid, char *buf, size_t size, bool *v1);

/*
 * The saved mask in user space: the environment variable UKS_A32_SAVED
 * ("CPULIST@STAMP"), inherited over fork and kept over exec like the
 * kernel's; UKS_A32=1 marks a task running a 32-bit program.  A
 * sched_setaffinity of another process cannot edit its environment, so
 * `uks taskset` leaves a tombstone in the state directory keyed by the
 * target's pid and start time; a saved mask older than a tombstone of its
 * own process (or of an ancestor it was forked from after the tombstone)
 * is invalid.
 */
#define UKS_A32_ENV_SAVED "UKS_A32_SAVED"
#define UKS_A32_ENV_TASK "UKS_A32"

/**
 * uks_a32_task_read() - @pid's affinity, policy and saved mask
 * @t: filled in
 * @pid: 0 for the caller (the saved mask from getenv), else the saved mask
 *	from /proc/PID/environ
 *
 * is32 comes from UKS_A32=1 or, failing that, the ELF class of
 * /proc/PID/exe.  Return: 0 or -errno.
 */
int uks_a32_task_read(struct uks_a32_task *t, pid_t pid);

/** uks_a32_saved_set() - export @t's saved mask to our environment (or unset it). */
int uks_a32_saved_set(const struct uks_a32_task *t);

/** uks_a32_invalidate() - leave the tombstone that drops @pid's saved mask. */
int uks_a32_invalidate(pid_t pid);

/**
 * uks_a32_state_dir() - $UKS_A32_STATE, /run/uks/a32 (root), $XDG_RUNTIME_DIR/uks-a32 or
 * a32 in the private /tmp/uks-UID; "" when that directory is refused (uks_runtime_dir()).
 */
const char *uks_a32_state_dir(char *buf, size_t size);

#ifdef __cplusplus
}
#endif

#endif
