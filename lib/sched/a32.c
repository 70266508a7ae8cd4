// SPDX-License-Identifier: MIT
/*
 * The affinity rules for 32-bit tasks on an asymmetric system, as the
 * arm64 document of 5.15 (seed 002) states them, over plain state: the
 * task (affinity, saved mask, policy) and its environment (capable and
 * online CPUs, root domain, the cpuset chain from its own cpuset up to the
 * root, admission control).  The same functions drive the simulation model
 * (a32_sim.c) and `uks exec32` / `uks taskset` on real tasks (a32_sys.c
 * reads the state from /proc and /sys).
 *
 *  execve of a 32-bit program: deadline + admission control + a root
 *  domain with 64-bit-only CPUs -> -ENOEXEC; else step 1 (not for
 *  deadline tasks): a non-empty capable subset of the affinity becomes
 *  the affinity and the old one is saved (an older saved mask is kept,
 *  so it survives further 32-bit execs); step 2: the capable CPUs of the
 *  nearest cpuset that has one; step 3: every capable CPU.
 *
 *  execve of a 64-bit program: a saved mask is dropped; the task gets it
 *  back, limited to its own cpuset, if that leaves an online CPU and (for
 *  deadline tasks) still spans the root domain; else nothing changes.
 *
 * Lock order: none (pure functions).
 */
#include <errno.h>

#include "core/compiler.h"
#include <uks/sched.h>

UKS_EXPORT const char *uks_a32_action_name(enum uks_a32_action a)
{
	static const char *const names[] = {
		[UKS_A32_UNCHANGED] = "unchanged", [UKS_A32_STEP1] = "step1",
		[UKS_A32_STEP2] = "step2", [UKS_A32_STEP3] = "step3",
		[UKS_A32_RESTORED] = "restored", [UKS_A32_NOT_RESTORED] = "not-restored",
	};

	return (unsigned int)a < sizeof(names) / sizeof(names[0]) ? names[a] : "?";
}

UKS_EXPORT int uks_a32_cpuset_walk(const struct uks_a32_env *env, struct uks_cpumask *out)
{
	struct uks_cpumask usable;

	uks_cpumask_and(&usable, &env->capable, &env->online);
	for (unsigned int i = 0; i < env->nr_cpusets && i < UKS_A32_MAX_DEPTH; i++) {
		uks_cpumask_and(out, &env->cpusets[i], &usable);
		if (!uks_cpumask_empty(out))
			return (int)i;
	}
	/* No cpuset information: the root cpuset is every online CPU. */
	if (!env->nr_cpusets) {
		*out = usable;
		if (!uks_cpumask_empty(out))
			return 0;
	}
	uks_cpumask_clear(out);
	return -ENOENT;
}

/*
 * What the task's cpuset allows it: the CPUs it may run on (capable ones
 * for a 32-bit task) of the nearest cpuset, from its own up, that has any
 * online.  This is the cpuset limit of sched_setaffinity(2) as well.
 */
static void allowed(const struct uks_a32_env *env, bool is32, struct uks_cpumask *m)
{
	struct uks_a32_env e;

	if (is32) {
		if (uks_a32_cpuset_walk(env, m) < 0)
			uks_cpumask_clear(m);
		return;
	}
	e.capable = env->online;
	e.online = env->online;
	e.nr_cpusets = env->nr_cpusets < UKS_A32_MAX_DEPTH ? env->nr_cpusets : UKS_A32_MAX_DEPTH;
	for (unsigned int i = 0; i < e.nr_cpusets; i++)
		e.cpusets[i] = env->cpusets[i];
	if (uks_a32_cpuset_walk(&e, m) < 0)
		uks_cpumask_clear(m);
}

static bool root_domain_64only(const struct uks_a32_env *env)
{
	return !uks_cpumask_subset(&env->root_domain, &env->capable);
}

UKS_EXPORT int uks_a32_execve(struct uks_a32_task *t, struct uks_a32_env *env, bool new32,
		   enum uks_a32_action *act)
{
	enum uks_a32_action dummy;
	struct uks_cpumask m, on;

	if (!act)
		act = &dummy;
	*act = UKS_A32_UNCHANGED;
	if (!new32) {
		t->is32 = false;
		if (!t->has_saved)
			return 0;
		t->has_saved = false;
		allowed(env, false, &m);
		uks_cpumask_and(&m, &m, &t->saved);
		uks_cpumask_and(&m, &m, &env->online);
		if (uks_cpumask_empty(&m) ||
		    (t->deadline && env->dl_admission && !uks_cpumask_subset(&env->root_domain, &m))) {
			*act = UKS_A32_NOT_RESTORED;
			return 0;
		}
		t->affinity = m;
		*act = UKS_A32_RESTORED;
		return 0;
	}
	if (t->deadline && env->dl_admission && root_domain_64only(env))
		return -ENOEXEC;
	t->is32 = true;
	uks_cpumask_and(&m, &t->affinity, &env->capable);
	uks_cpumask_and(&on, &m, &env->online);
	if (!t->deadline && !uks_cpumask_empty(&on)) {
		if (!t->has_saved) {
			t->saved = t->affinity;
			t->has_saved = true;
		}
		t->affinity = m;
		*act = UKS_A32_STEP1;
		return 0;
	}
	/* A deadline task that gets here lost its CPUs to a concurrent offline. */
	if (t->deadline)
		env->warned = true;
	if (!env->alloc_fails && uks_a32_cpuset_walk(env, &m) >= 0) {
		t->affinity = m;
		*act = UKS_A32_STEP2;
		return 0;
	}
	t->affinity = env->capable;
	*act = UKS_A32_STEP3;
	return 0;
}

UKS_EXPORT int uks_a32_setaffinity(struct uks_a32_task *t, const struct uks_a32_env *env,
			const struct uks_cpumask *req)
{
	struct uks_cpumask m;

	allowed(env, t->is32, &m);
	uks_cpumask_and(&m, &m, req);
	if (uks_cpumask_empty(&m))
		return -EINVAL;
	t->affinity = m;
	t->has_saved = false;
	return 0;
}

UKS_EXPORT int uks_a32_dl_admit(struct uks_a32_task *t, const struct uks_a32_env *env)
{
	if (env->dl_admission && !uks_cpumask_subset(&env->root_domain, &t->affinity))
		return -EPERM;
	t->deadline = true;
	return 0;
}
