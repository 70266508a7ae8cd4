/* SPDX-License-Identifier: MIT */
/*
 * A deterministic model of an asymmetric 32-bit system (seed 002): CPUs
 * that can or cannot run 32-bit code, boot and late onlining, hotplug,
 * suspend, cpusets, tasks (fork, execve, sched_setaffinity, deadline
 * admission) and KVM vCPUs.  The affinity rules are those of
 * <uks/sched.h> (lib/sched/a32.c); the model adds what the kernel does
 * around them.  Every int function returns 0 (or an index) or -errno.
 */
#ifndef UKS_SCHED_SIM_H
#define UKS_SCHED_SIM_H

#include <uks/sched.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UKS_A32_SIM_CPUSETS 16
#define UKS_A32_SIM_TASKS 32
#define UKS_A32_SIM_VCPUS 4

/* kvm_run exit reasons of the model (the KVM_EXIT_* values). */
#define UKS_A32_KVM_EXIT_NONE 0		/* ran: no exit to report */
#define UKS_A32_KVM_EXIT_FAIL_ENTRY 9	/* KVM_EXIT_FAIL_ENTRY */

struct uks_a32_sim {
	unsigned int nr_cpus;
	bool allow_mismatched;		/* allow_mismatched_32bit_el0 on the command line */
	bool booted;
	bool mismatch;			/* a 64-bit-only CPU was seen next to 32-bit ones */
	bool dl_admission;		/* sched_rt_runtime_us != -1 */
	bool alloc_fails;		/* step 2's walk cannot allocate */
	bool root_domain_set;
	int first_capable;		/* the first detected 32-bit-capable CPU, or -1 */
	unsigned int warnings;		/* console warnings so far */
	struct uks_cpumask hw32;	/* CPUs whose hardware runs AArch32 at EL0 */
	struct uks_cpumask online;
	struct uks_cpumask advertised;	/* /sys/devices/system/cpu/aarch32_el0 */
	struct uks_cpumask root_domain;	/* default: the online CPUs */
	struct {
		bool used;
		int parent;		/* -1 for the root (index 0) */
		struct uks_cpumask cpus;
	} cpusets[UKS_A32_SIM_CPUSETS];
	struct {
		bool used;
		int cpuset;
		struct uks_a32_task t;
	} tasks[UKS_A32_SIM_TASKS];
	struct {
		bool inited;
		bool runnable;
	} vcpus[UKS_A32_SIM_VCPUS];
};

/**
 * uks_a32_sim_init() - boot a model system
 * @s: the model
 * @nr_cpus: CPUs 0..nr_cpus-1 (at most UKS_CPUMASK_MAX_CPUS)
 * @hw32: cpulist of the CPUs that can run 32-bit code
 * @boot: cpulist of the CPUs brought up at boot, in order (NULL: all)
 * @allow_mismatched: the allow_mismatched_32bit_el0 opt-in
 *
 * The root cpuset (index 0) spans every CPU.  Admission control is on.
 */
int uks_a32_sim_init(struct uks_a32_sim *s, unsigned int nr_cpus, const char *hw32,
		     const char *boot, bool allow_mismatched);
/** Whether 32-bit tasks can run at all (homogeneous, or mismatched with the opt-in). */
bool uks_a32_sim_supports_32bit(const struct uks_a32_sim *s);
/** Late onlining: -EINVAL when a 64-bit-only CPU meets 32-bit support without the opt-in. */
int uks_a32_sim_cpu_online(struct uks_a32_sim *s, unsigned int cpu);
/** Offlining from user space: -EPERM for the first capable CPU on an asymmetric system. */
int uks_a32_sim_cpu_offline(struct uks_a32_sim *s, unsigned int cpu);
/** Suspend and resume: every secondary CPU down and up again. */
int uks_a32_sim_suspend(struct uks_a32_sim *s);
/** The aarch32_el0 file: the kernel's cpulist with a newline. */
int uks_a32_sim_aarch32_el0(const struct uks_a32_sim *s, char *buf, size_t size);
/** personality(PER_LINUX32): -EINVAL when 32-bit tasks are not supported. */
int uks_a32_sim_personality_linux32(const struct uks_a32_sim *s);
/** A separate root domain (cpulist), for the SCHED_DEADLINE note. */
int uks_a32_sim_set_root_domain(struct uks_a32_sim *s, const char *list);

int uks_a32_sim_cpuset_create(struct uks_a32_sim *s, int parent, const char *cpus);
int uks_a32_sim_cpuset_set(struct uks_a32_sim *s, int cs, const char *cpus);
/** Effective CPUs of a cpuset: its own, online, within its parent's. */
int uks_a32_sim_cpuset_effective(const struct uks_a32_sim *s, int cs, struct uks_cpumask *out);

/** A 64-bit task in @cs with affinity @affinity (NULL: every CPU). */
int uks_a32_sim_task_create(struct uks_a32_sim *s, int cs, const char *affinity);
int uks_a32_sim_task_fork(struct uks_a32_sim *s, int tid);
int uks_a32_sim_task_execve(struct uks_a32_sim *s, int tid, bool new32, enum uks_a32_action *act);
int uks_a32_sim_task_setaffinity(struct uks_a32_sim *s, int tid, const char *list);
int uks_a32_sim_task_setattr_deadline(struct uks_a32_sim *s, int tid);
int uks_a32_sim_task_attach(struct uks_a32_sim *s, int tid, int cs);
/** The task's state (NULL if @tid is not a task). */
struct uks_a32_task *uks_a32_sim_task(struct uks_a32_sim *s, int tid);
/** The environment the rules see for @tid. */
int uks_a32_sim_task_env(const struct uks_a32_sim *s, int tid, struct uks_a32_env *env);

/** KVM: whether a vCPU is offered 32-bit EL0 (never on an asymmetric system). */
bool uks_a32_sim_kvm_el0_32bit(const struct uks_a32_sim *s);
int uks_a32_sim_kvm_vcpu_init(struct uks_a32_sim *s, int vcpu);
/** KVM_RUN: exit reason, or -ENOEXEC for a vCPU that needs KVM_ARM_VCPU_INIT. */
int uks_a32_sim_kvm_run(struct uks_a32_sim *s, int vcpu, bool guest_el0_32bit);

#ifdef __cplusplus
}
#endif

#endif
