// SPDX-License-Identifier: MIT
/*
 * The deterministic model of an asymmetric 32-bit system (see
 * <uks/sched_sim.h>).  State only changes through the calls below, so a
 * test is a script of events and checks.
 *
 *  - CPUs come up in the order given; each 32-bit-capable one is added to
 *    aarch32_el0 when first seen and never removed, and the first one is
 *    remembered: on an asymmetric system offlining it from user space
 *    fails with -EPERM (suspend goes around that check).
 *  - Without the opt-in, a 64-bit-only CPU seen at boot next to 32-bit
 *    ones turns 32-bit support off (execve of 32-bit ELF: -ENOEXEC,
 *    PER_LINUX32: -EINVAL); one that comes late, while 32-bit support is
 *    on, fails to come online (-EINVAL here) and stays unavailable.
 *  - A task whose CPUs all go offline gets new ones: a 32-bit task by
 *    step 2 of the execve rules, a 64-bit one from its nearest cpuset with
 *    an online CPU.  Cpusets themselves are never changed by that.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/compiler.h"
#include <uks/sched_sim.h>

static bool valid_task(const struct uks_a32_sim *s, int tid)
{
	return tid >= 0 && tid < UKS_A32_SIM_TASKS && s->tasks[tid].used;
}

static bool valid_cpuset(const struct uks_a32_sim *s, int cs)
{
	return cs >= 0 && cs < UKS_A32_SIM_CPUSETS && s->cpusets[cs].used;
}

UKS_EXPORT bool uks_a32_sim_supports_32bit(const struct uks_a32_sim *s)
{
	if (s->first_capable < 0)
		return false;
	return !s->mismatch || s->allow_mismatched;
}

UKS_EXPORT int uks_a32_sim_cpuset_effective(const struct uks_a32_sim *s, int cs, struct uks_cpumask *out)
{
	if (!valid_cpuset(s, cs))
		return -EINVAL;
	uks_cpumask_and(out, &s->cpusets[cs].cpus, &s->online);
	for (int p = s->cpusets[cs].parent; p >= 0; p = s->cpusets[p].parent)
		uks_cpumask_and(out, out, &s->cpusets[p].cpus);
	return 0;
}

UKS_EXPORT int uks_a32_sim_task_env(const struct uks_a32_sim *s, int tid, struct uks_a32_env *env)
{
	if (!valid_task(s, tid))
		return -EINVAL;
	memset(env, 0, sizeof(*env));
	env->capable = s->advertised;
	env->online = s->online;
	env->root_domain = s->root_domain_set ? s->root_domain : s->online;
	env->dl_admission = s->dl_admission;
	env->alloc_fails = s->alloc_fails;
	for (int cs = s->tasks[tid].cpuset; cs >= 0 && env->nr_cpusets < UKS_A32_MAX_DEPTH;
	     cs = s->cpusets[cs].parent)
		uks_a32_sim_cpuset_effective(s, cs, &env->cpusets[env->nr_cpusets++]);
	return 0;
}

/* Tasks left with no online CPU get new ones (the cpuset walk). */
static void fix_tasks(struct uks_a32_sim *s)
{
	for (int i = 0; i < UKS_A32_SIM_TASKS; i++) {
		struct uks_a32_task *t = &s->tasks[i].t;
		struct uks_a32_env env;
		struct uks_cpumask m;

		if (!s->tasks[i].used)
			continue;
		uks_cpumask_and(&m, &t->affinity, &s->online);
		if (t->is32)
			uks_cpumask_and(&m, &m, &s->advertised);
		if (!uks_cpumask_empty(&m))
			continue;
		uks_a32_sim_task_env(s, i, &env);
		if (!t->is32)
			env.capable = s->online;	/* any CPU will do */
		if (uks_a32_cpuset_walk(&env, &m) >= 0)
			t->affinity = m;
		else
			t->affinity = t->is32 ? s->advertised : s->online;
	}
}

static void bring_up(struct uks_a32_sim *s, unsigned int cpu)
{
	if (uks_cpumask_test_cpu(&s->hw32, cpu)) {
		uks_cpumask_set_cpu(&s->advertised, cpu);
		if (s->first_capable < 0)
			s->first_capable = (int)cpu;
	}
	uks_cpumask_set_cpu(&s->online, cpu);
	/* Asymmetric once a 64-bit-only CPU and a capable one have both been up. */
	if (!s->mismatch && !uks_cpumask_empty(&s->advertised) && !uks_cpumask_subset(&s->online, &s->hw32))
		s->mismatch = true;
}

UKS_EXPORT int uks_a32_sim_init(struct uks_a32_sim *s, unsigned int nr_cpus, const char *hw32,
		     const char *boot, bool allow_mismatched)
{
	struct uks_cpumask up;
	char order[1024];
	int ret, cpu;

	memset(s, 0, sizeof(*s));
	if (!nr_cpus || nr_cpus > UKS_CPUMASK_MAX_CPUS)
		return -EINVAL;
	s->nr_cpus = nr_cpus;
	s->allow_mismatched = allow_mismatched;
	s->first_capable = -1;
	s->dl_admission = true;
	ret = uks_cpumask_parse_list(&s->hw32, hw32, nr_cpus);
	if (ret)
		return ret;
	/* CPUs come up in the order the list gives, one comma group at a time. */
	snprintf(order, sizeof(order), "%s", boot ? boot : "0-N");
	for (char *save = NULL, *g = strtok_r(order, ",", &save); g; g = strtok_r(NULL, ",", &save)) {
		ret = uks_cpumask_parse_list(&up, g, nr_cpus);
		if (ret)
			return ret;
		uks_for_each_cpu(cpu, &up)
			bring_up(s, (unsigned int)cpu);
	}
	s->booted = true;
	s->cpusets[0].used = true;
	s->cpusets[0].parent = -1;
	uks_cpumask_parse_list(&s->cpusets[0].cpus, "0-N", nr_cpus);
	return 0;
}

UKS_EXPORT int uks_a32_sim_cpu_online(struct uks_a32_sim *s, unsigned int cpu)
{
	if (cpu >= s->nr_cpus)
		return -EINVAL;
	if (uks_cpumask_test_cpu(&s->online, cpu))
		return 0;
	if (!uks_cpumask_test_cpu(&s->hw32, cpu) && !s->allow_mismatched &&
	    uks_a32_sim_supports_32bit(s))
		return -EINVAL;		/* the mismatch would take 32-bit support away */
	bring_up(s, cpu);
	return 0;
}

UKS_EXPORT int uks_a32_sim_cpu_offline(struct uks_a32_sim *s, unsigned int cpu)
{
	if (cpu >= s->nr_cpus)
		return -EINVAL;
	if (!uks_cpumask_test_cpu(&s->online, cpu))
		return 0;
	if (s->allow_mismatched && s->mismatch && (int)cpu == s->first_capable)
		return -EPERM;
	if (uks_cpumask_weight(&s->online) == 1)
		return -EBUSY;		/* the last CPU */
	uks_cpumask_clear_cpu(&s->online, cpu);
	fix_tasks(s);
	return 0;
}

UKS_EXPORT int uks_a32_sim_suspend(struct uks_a32_sim *s)
{
	struct uks_cpumask saved = s->online;
	int boot = uks_cpumask_first(&s->online);

	if (boot < 0)
		return -EINVAL;
	/* freeze_secondary_cpus(): not the user-space offline path, no -EPERM */
	uks_cpumask_clear(&s->online);
	uks_cpumask_set_cpu(&s->online, (unsigned int)boot);
	s->online = saved;		/* resume brings them all back */
	return 0;
}

UKS_EXPORT int uks_a32_sim_aarch32_el0(const struct uks_a32_sim *s, char *buf, size_t size)
{
	int n = uks_cpumask_print_list(&s->advertised, buf, size);

	if (n < 0)
		return n;
	if ((size_t)n + 2 > size)
		return -ENOSPC;
	buf[n] = '\n';
	buf[n + 1] = '\0';
	return n + 1;
}

UKS_EXPORT int uks_a32_sim_personality_linux32(const struct uks_a32_sim *s)
{
	return uks_a32_sim_supports_32bit(s) ? 0 : -EINVAL;
}

UKS_EXPORT int uks_a32_sim_set_root_domain(struct uks_a32_sim *s, const char *list)
{
	int ret = uks_cpumask_parse_list(&s->root_domain, list, s->nr_cpus);

	s->root_domain_set = !ret;
	return ret;
}

UKS_EXPORT int uks_a32_sim_cpuset_create(struct uks_a32_sim *s, int parent, const char *cpus)
{
	if (!valid_cpuset(s, parent))
		return -EINVAL;
	for (int i = 1; i < UKS_A32_SIM_CPUSETS; i++) {
		if (s->cpusets[i].used)
			continue;
		int ret = uks_cpumask_parse_list(&s->cpusets[i].cpus, cpus, s->nr_cpus);

		if (ret)
			return ret;
		s->cpusets[i].used = true;
		s->cpusets[i].parent = parent;
		return i;
	}
	return -ENOSPC;
}

static bool in_cpuset(const struct uks_a32_sim *s, int task_cs, int cs)
{
	for (; task_cs >= 0; task_cs = s->cpusets[task_cs].parent)
		if (task_cs == cs)
			return true;
	return false;
}

/* A cpuset change moves its tasks onto its CPUs (a 32-bit task: the capable ones). */
UKS_EXPORT int uks_a32_sim_cpuset_set(struct uks_a32_sim *s, int cs, const char *cpus)
{
	int ret;

	if (!valid_cpuset(s, cs))
		return -EINVAL;
	ret = uks_cpumask_parse_list(&s->cpusets[cs].cpus, cpus, s->nr_cpus);
	if (ret)
		return ret;
	for (int i = 0; i < UKS_A32_SIM_TASKS; i++) {
		struct uks_cpumask m;

		if (!s->tasks[i].used || !in_cpuset(s, s->tasks[i].cpuset, cs))
			continue;
		uks_a32_sim_cpuset_effective(s, s->tasks[i].cpuset, &m);
		if (s->tasks[i].t.is32)
			uks_cpumask_and(&m, &m, &s->advertised);
		if (!uks_cpumask_empty(&m))
			s->tasks[i].t.affinity = m;
	}
	fix_tasks(s);
	return 0;
}

UKS_EXPORT int uks_a32_sim_task_create(struct uks_a32_sim *s, int cs, const char *affinity)
{
	if (!valid_cpuset(s, cs))
		return -EINVAL;
	for (int i = 0; i < UKS_A32_SIM_TASKS; i++) {
		struct uks_cpumask eff;

		if (s->tasks[i].used)
			continue;
		memset(&s->tasks[i], 0, sizeof(s->tasks[i]));
		uks_a32_sim_cpuset_effective(s, cs, &eff);
		if (affinity) {
			int ret = uks_cpumask_parse_list(&s->tasks[i].t.affinity, affinity, s->nr_cpus);

			if (ret)
				return ret;
			uks_cpumask_and(&s->tasks[i].t.affinity, &s->tasks[i].t.affinity, &eff);
		} else {
			s->tasks[i].t.affinity = eff;
		}
		if (uks_cpumask_empty(&s->tasks[i].t.affinity))
			return -EINVAL;
		s->tasks[i].used = true;
		s->tasks[i].cpuset = cs;
		return i;
	}
	return -ENOSPC;
}

UKS_EXPORT int uks_a32_sim_task_fork(struct uks_a32_sim *s, int tid)
{
	if (!valid_task(s, tid))
		return -EINVAL;
	for (int i = 0; i < UKS_A32_SIM_TASKS; i++)
		if (!s->tasks[i].used) {
			s->tasks[i] = s->tasks[tid];	/* the saved mask is inherited */
			return i;
		}
	return -ENOSPC;
}

UKS_EXPORT struct uks_a32_task *uks_a32_sim_task(struct uks_a32_sim *s, int tid)
{
	return valid_task(s, tid) ? &s->tasks[tid].t : NULL;
}

UKS_EXPORT int uks_a32_sim_task_execve(struct uks_a32_sim *s, int tid, bool new32, enum uks_a32_action *act)
{
	struct uks_a32_env env;
	int ret;

	if (act)
		*act = UKS_A32_UNCHANGED;
	if (!valid_task(s, tid))
		return -EINVAL;
	if (new32 && !uks_a32_sim_supports_32bit(s))
		return -ENOEXEC;
	uks_a32_sim_task_env(s, tid, &env);
	ret = uks_a32_execve(&s->tasks[tid].t, &env, new32, act);
	if (env.warned)
		s->warnings++;
	return ret;
}

UKS_EXPORT int uks_a32_sim_task_setaffinity(struct uks_a32_sim *s, int tid, const char *list)
{
	struct uks_a32_env env;
	struct uks_cpumask req;
	int ret;

	if (!valid_task(s, tid))
		return -EINVAL;
	ret = uks_cpumask_parse_list(&req, list, s->nr_cpus);
	if (ret)
		return ret;
	uks_a32_sim_task_env(s, tid, &env);
	return uks_a32_setaffinity(&s->tasks[tid].t, &env, &req);
}

UKS_EXPORT int uks_a32_sim_task_setattr_deadline(struct uks_a32_sim *s, int tid)
{
	struct uks_a32_env env;

	if (!valid_task(s, tid))
		return -EINVAL;
	uks_a32_sim_task_env(s, tid, &env);
	return uks_a32_dl_admit(&s->tasks[tid].t, &env);
}

UKS_EXPORT int uks_a32_sim_task_attach(struct uks_a32_sim *s, int tid, int cs)
{
	struct uks_cpumask eff;

	if (!valid_task(s, tid) || !valid_cpuset(s, cs))
		return -EINVAL;
	s->tasks[tid].cpuset = cs;
	uks_a32_sim_cpuset_effective(s, cs, &eff);
	if (!uks_cpumask_empty(&eff))
		s->tasks[tid].t.affinity = eff;
	fix_tasks(s);
	return 0;
}

UKS_EXPORT bool uks_a32_sim_kvm_el0_32bit(const struct uks_a32_sim *s)
{
	return uks_a32_sim_supports_32bit(s) && !s->mismatch;
}

UKS_EXPORT int uks_a32_sim_kvm_vcpu_init(struct uks_a32_sim *s, int vcpu)
{
	if (vcpu < 0 || vcpu >= UKS_A32_SIM_VCPUS)
		return -EINVAL;
	s->vcpus[vcpu].inited = true;
	s->vcpus[vcpu].runnable = true;
	return 0;
}

UKS_EXPORT int uks_a32_sim_kvm_run(struct uks_a32_sim *s, int vcpu, bool guest_el0_32bit)
{
	if (vcpu < 0 || vcpu >= UKS_A32_SIM_VCPUS)
		return -EINVAL;
	if (!s->vcpus[vcpu].inited || !s->vcpus[vcpu].runnable)
		return -ENOEXEC;
	if (guest_el0_32bit && !uks_a32_sim_kvm_el0_32bit(s)) {
		s->vcpus[vcpu].runnable = false;
		return UKS_A32_KVM_EXIT_FAIL_ENTRY;
	}
	return UKS_A32_KVM_EXIT_NONE;
}
