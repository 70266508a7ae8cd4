// SPDX-License-Identifier: MIT
/*
 * The asymmetric 32-bit model (lib/sched/a32_sim.c), one test per sentence
 * of the arm64 document (seed 002) that states behaviour.  Each test is
 * named after its sentence and cites the section it comes from.  The usual
 * system: CPUs 0-1 64-bit-only, 2-3 32-bit-capable, with the opt-in.
 */
#include <errno.h>
#include <string.h>

#include <uks/sched_sim.h>

#include "harness.h"

static struct uks_a32_sim s;

#define boot_asym() ASSERT_EQ(uks_a32_sim_init(&s, 4, "2-3", NULL, true), 0)

static const char *list(const struct uks_cpumask *m)
{
	static char buf[4][64];
	static int i;

	i = (i + 1) % 4;
	uks_cpumask_print_list(m, buf[i], sizeof(buf[i]));
	return buf[i];
}

#define AFF(tid) list(&uks_a32_sim_task(&s, tid)->affinity)
#define SAVED(tid) (uks_a32_sim_task(&s, tid)->has_saved ? list(&uks_a32_sim_task(&s, tid)->saved) : "none")

/* Introduction: by default a mismatch disables PER_LINUX32. */
TEST(default_mismatch_disables_per_linux32_personality)
{
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "2-3", NULL, false), 0);
	EXPECT_FALSE(uks_a32_sim_supports_32bit(&s));
	EXPECT_EQ(uks_a32_sim_personality_linux32(&s), -EINVAL);
}

/* Introduction: ... and execve of 32-bit ELF binaries returns -ENOEXEC. */
TEST(default_mismatch_execve_of_32bit_elf_returns_enoexec)
{
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "2-3", NULL, false), 0);
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), -ENOEXEC);
	EXPECT_STREQ(AFF(t), "0-3");
	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, false, NULL), 0);
}

/* Introduction: a mismatch found while late-onlining a 64-bit-only CPU fails the onlining. */
TEST(late_onlining_of_64bit_only_cpu_fails_and_cpu_unavailable)
{
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "0-2", "0-2", false), 0);
	EXPECT_TRUE(uks_a32_sim_supports_32bit(&s));
	EXPECT_EQ(uks_a32_sim_cpu_online(&s, 3), -EINVAL);
	EXPECT_FALSE(uks_cpumask_test_cpu(&s.online, 3));
	int t = uks_a32_sim_task_create(&s, 0, "0-3");

	EXPECT_STREQ(AFF(t), "0-2");		/* nothing can be scheduled on CPU 3 */
	EXPECT_TRUE(uks_a32_sim_supports_32bit(&s));
}

/* Enabling kernel support: allow_mismatched_32bit_el0 is the explicit opt-in. */
TEST(opt_in_allows_32bit_tasks_on_asymmetric_system)
{
	boot_asym();
	EXPECT_TRUE(uks_a32_sim_supports_32bit(&s));
	EXPECT_EQ(uks_a32_sim_personality_linux32(&s), 0);
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	/* and late onlining of a 64-bit-only CPU works with it */
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "0-2", "0-2", true), 0);
	EXPECT_EQ(uks_a32_sim_cpu_online(&s, 3), 0);
}

/* sysfs: aarch32_el0 describes the subset of CPUs that can run 32-bit tasks. */
TEST(aarch32_el0_lists_the_32bit_capable_cpus)
{
	char buf[64];

	boot_asym();
	ASSERT_EQ(uks_a32_sim_aarch32_el0(&s, buf, sizeof(buf)), 4);
	EXPECT_STREQ(buf, "2-3\n");
}

/* sysfs note: CPUs are advertised as detected; late onlining changes the file. */
TEST(late_onlined_capable_cpu_is_added_to_aarch32_el0)
{
	char buf[64];

	ASSERT_EQ(uks_a32_sim_init(&s, 4, "2-3", "0-2", true), 0);
	uks_a32_sim_aarch32_el0(&s, buf, sizeof(buf));
	EXPECT_STREQ(buf, "2\n");
	ASSERT_EQ(uks_a32_sim_cpu_online(&s, 3), 0);
	uks_a32_sim_aarch32_el0(&s, buf, sizeof(buf));
	EXPECT_STREQ(buf, "2-3\n");
}

/* sysfs note: once advertised, CPUs are never removed from the file. */
TEST(offlined_cpus_are_never_removed_from_aarch32_el0)
{
	char buf[64];

	boot_asym();
	ASSERT_EQ(uks_a32_sim_cpu_offline(&s, 3), 0);
	uks_a32_sim_aarch32_el0(&s, buf, sizeof(buf));
	EXPECT_STREQ(buf, "2-3\n");
	EXPECT_FALSE(uks_cpumask_test_cpu(&s.online, 3));
}

/* execve(2): on a homogeneous system the affinity is preserved across execve. */
TEST(homogeneous_system_preserves_affinity_across_execve)
{
	enum uks_a32_action act;

	ASSERT_EQ(uks_a32_sim_init(&s, 4, "0-3", NULL, false), 0);
	int t = uks_a32_sim_task_create(&s, 0, "1,3");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_STREQ(AFF(t), "1,3");
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, false, &act), 0);
	EXPECT_STREQ(AFF(t), "1,3");
}

/* execve(2): not possible when a 32-bit program meets 64-bit-only CPUs in the mask. */
TEST(32bit_execve_with_64bit_only_cpus_changes_affinity)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(AFF(t), "2-3");
	/* a mask of capable CPUs only is kept as it is */
	int u = uks_a32_sim_task_create(&s, 0, "3");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, u, true, NULL), 0);
	EXPECT_STREQ(AFF(u), "3");
}

/* execve(2) step 1: a non-empty capable subset becomes the affinity, the old mask is saved. */
TEST(step1_restricts_to_capable_subset_and_saves_old_mask)
{
	enum uks_a32_action act;

	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, "1-2");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP1);
	EXPECT_STREQ(AFF(t), "2");
	EXPECT_STREQ(SAVED(t), "1-2");
}

/* execve(2) step 1: the saved mask is inherited over fork(2). */
TEST(step1_saved_mask_is_inherited_over_fork)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	int c = uks_a32_sim_task_fork(&s, t);

	ASSERT_GE(c, 0);
	EXPECT_STREQ(SAVED(c), "0-3");
	EXPECT_STREQ(AFF(c), "2-3");
	/* the child's copy is its own */
	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, c, "3"), 0);
	EXPECT_STREQ(SAVED(t), "0-3");
}

/* execve(2) step 1: the saved mask is preserved across execve(2) of 32-bit programs. */
TEST(step1_saved_mask_is_preserved_across_32bit_execve)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, "0,2");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(SAVED(t), "0,2");
	EXPECT_STREQ(AFF(t), "2");
}

/* execve(2) step 1 note: step 1 does not apply to SCHED_DEADLINE tasks. */
TEST(step1_does_not_apply_to_deadline_tasks)
{
	enum uks_a32_action act;

	boot_asym();
	s.dl_admission = false;		/* so that the exec is allowed at all */
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_NE(act, UKS_A32_STEP1);
	EXPECT_EQ(act, UKS_A32_STEP2);
	EXPECT_STREQ(SAVED(t), "none");
}

/* execve(2) step 2: walk the cpuset hierarchy to an ancestor with a capable CPU. */
TEST(step2_walks_cpusets_to_first_ancestor_with_capable_cpu)
{
	enum uks_a32_action act;

	ASSERT_EQ(uks_a32_sim_init(&s, 6, "2-3,5", NULL, true), 0);
	int a = uks_a32_sim_cpuset_create(&s, 0, "0-3");	/* capable: 2-3 */
	int b = uks_a32_sim_cpuset_create(&s, a, "0-1");	/* 64-bit only */
	int c = uks_a32_sim_cpuset_create(&s, b, "0");
	int t = uks_a32_sim_task_create(&s, c, NULL);

	ASSERT_GE(t, 0);
	EXPECT_STREQ(AFF(t), "0");
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP2);
	EXPECT_STREQ(AFF(t), "2-3");		/* a's capable CPUs, not the root's 5 */
}

/* execve(2) step 3: on failure (out of memory) every capable CPU the kernel knows. */
TEST(step3_falls_back_to_all_capable_cpus_on_failure)
{
	enum uks_a32_action act;

	boot_asym();
	int cs = uks_a32_sim_cpuset_create(&s, 0, "0-2");
	int t = uks_a32_sim_task_create(&s, cs, "0-1");

	s.alloc_fails = true;
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP3);
	EXPECT_STREQ(AFF(t), "2-3");		/* not the cpuset's 2 */
	/* also offline capable CPUs: the kernel is aware of them */
	s.alloc_fails = false;
	int u = uks_a32_sim_task_create(&s, 0, "0");

	ASSERT_EQ(uks_a32_sim_cpu_offline(&s, 3), 0);
	s.alloc_fails = true;
	ASSERT_EQ(uks_a32_sim_task_execve(&s, u, true, &act), 0);
	EXPECT_STREQ(AFF(u), "2-3");
}

/* execve(2): a later 64-bit execve restores the saved mask if it was valid... */
TEST(64bit_execve_restores_the_saved_mask)
{
	enum uks_a32_action act;

	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, "1-3");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, false, &act), 0);
	EXPECT_EQ(act, UKS_A32_RESTORED);
	EXPECT_STREQ(AFF(t), "1-3");
}

/* execve(2): ... and invalidates the saved mask. */
TEST(64bit_execve_invalidates_the_saved_mask)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, false, NULL), 0);
	EXPECT_STREQ(SAVED(t), "none");
	/* the next 32-bit exec saves afresh */
	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, t, "0,3"), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(SAVED(t), "0,3");
}

/* execve(2): restoring may fail after a cpuset change; the affinity is then unchanged. */
TEST(restore_failing_after_cpuset_change_leaves_affinity_unchanged)
{
	enum uks_a32_action act;

	boot_asym();
	int cs = uks_a32_sim_cpuset_create(&s, 0, "0-3");
	int w = uks_a32_sim_task_create(&s, cs, "1,3");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, w, true, NULL), 0);
	EXPECT_STREQ(SAVED(w), "1,3");
	EXPECT_STREQ(AFF(w), "3");
	ASSERT_EQ(uks_a32_sim_cpuset_set(&s, cs, "0,2"), 0);	/* neither 1 nor 3 left */
	EXPECT_STREQ(AFF(w), "2");		/* the cpuset's capable CPUs */
	ASSERT_EQ(uks_a32_sim_task_execve(&s, w, false, &act), 0);
	EXPECT_EQ(act, UKS_A32_NOT_RESTORED);
	EXPECT_STREQ(AFF(w), "2");
	EXPECT_STREQ(SAVED(w), "none");
	/* a step-2 exec saved nothing, so there is nothing to restore */
	int u = uks_a32_sim_task_create(&s, cs, "0");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, u, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP2);
	EXPECT_STREQ(AFF(u), "2");
	ASSERT_EQ(uks_a32_sim_task_execve(&s, u, false, &act), 0);
	EXPECT_EQ(act, UKS_A32_UNCHANGED);
}

/* execve(2): restoring may fail after a deadline policy change; affinity unchanged. */
TEST(restore_failing_after_deadline_change_leaves_affinity_unchanged)
{
	enum uks_a32_action act;

	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, "1-3");

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	s.dl_admission = false;
	ASSERT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);
	s.dl_admission = true;
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, false, &act), 0);
	EXPECT_EQ(act, UKS_A32_NOT_RESTORED);	/* 1-3 does not span the root domain 0-3 */
	EXPECT_STREQ(AFF(t), "2-3");
}

/* execve(2): sched_setaffinity of a 32-bit task considers only the capable CPUs. */
TEST(setaffinity_of_32bit_task_keeps_only_capable_cpus)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, t, "1-3"), 0);
	EXPECT_STREQ(AFF(t), "2-3");
	EXPECT_EQ(uks_a32_sim_task_setaffinity(&s, t, "0-1"), -EINVAL);
	EXPECT_STREQ(AFF(t), "2-3");
	/* a 64-bit task gets the mask as asked */
	int u = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, u, "0-1"), 0);
	EXPECT_STREQ(AFF(u), "0-1");
}

/* execve(2): on success the affinity is updated and a saved mask invalidated. */
TEST(setaffinity_success_invalidates_the_saved_mask)
{
	enum uks_a32_action act;

	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(SAVED(t), "0-3");
	EXPECT_EQ(uks_a32_sim_task_setaffinity(&s, t, "0"), -EINVAL);
	EXPECT_STREQ(SAVED(t), "0-3");		/* a failed call changes nothing */
	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, t, "3"), 0);
	EXPECT_STREQ(SAVED(t), "none");
	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, false, &act), 0);
	EXPECT_EQ(act, UKS_A32_UNCHANGED);
	EXPECT_STREQ(AFF(t), "3");
}

/* SCHED_DEADLINE: explicit admission of a 32-bit deadline task is rejected... */
TEST(explicit_deadline_admission_of_32bit_task_is_rejected)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), -EPERM);
	EXPECT_FALSE(uks_a32_sim_task(&s, t)->deadline);
}

/* SCHED_DEADLINE: ... unless admission control is disabled (sched_rt_runtime_us = -1). */
TEST(deadline_admission_allowed_with_admission_control_disabled)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	s.dl_admission = false;
	EXPECT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);
	EXPECT_TRUE(uks_a32_sim_task(&s, t)->deadline);
}

/* SCHED_DEADLINE: 32-bit execve from a 64-bit deadline task: -ENOEXEC under admission control. */
TEST(32bit_execve_from_64bit_deadline_task_returns_enoexec)
{
	boot_asym();
	int t = uks_a32_sim_task_create(&s, 0, NULL);

	ASSERT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);	/* 0-3 spans the domain */
	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), -ENOEXEC);
	EXPECT_STREQ(AFF(t), "0-3");
	EXPECT_FALSE(uks_a32_sim_task(&s, t)->is32);
	/* with admission control off the exec goes ahead */
	s.dl_admission = false;
	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
}

/* SCHED_DEADLINE: concurrent offlining may need the execve procedure: step 1 skipped, a warning. */
TEST(deadline_task_after_offlining_skips_step1_with_warning)
{
	enum uks_a32_action act;

	boot_asym();
	ASSERT_EQ(uks_a32_sim_set_root_domain(&s, "2-3"), 0);	/* admission passes */
	int t = uks_a32_sim_task_create(&s, 0, "2-3");

	ASSERT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);
	ASSERT_EQ(uks_a32_sim_cpu_offline(&s, 3), 0);
	unsigned int w = s.warnings;

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP2);
	EXPECT_EQ(s.warnings, w + 1);
	EXPECT_STREQ(SAVED(t), "none");
}

/* SCHED_DEADLINE note: capable CPUs in a separate root domain make deadline 32-bit tasks work. */
TEST(separate_root_domain_of_capable_cpus_admits_32bit_deadline_tasks)
{
	boot_asym();
	ASSERT_EQ(uks_a32_sim_set_root_domain(&s, "2-3"), 0);
	int t = uks_a32_sim_task_create(&s, 0, "2-3");

	ASSERT_EQ(uks_a32_sim_task_setattr_deadline(&s, t), 0);
	EXPECT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(AFF(t), "2-3");
}

/* Cpusets: a 64-bit task in a 64-bit-only cpuset executing a 32-bit program. */
TEST(cpuset_64bit_only_task_execs_32bit_program_gets_cpus_outside_cpuset)
{
	enum uks_a32_action act;

	boot_asym();
	int cs = uks_a32_sim_cpuset_create(&s, 0, "0-1");
	int t = uks_a32_sim_task_create(&s, cs, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, &act), 0);
	EXPECT_EQ(act, UKS_A32_STEP2);
	EXPECT_STREQ(AFF(t), "2-3");
	EXPECT_FALSE(uks_cpumask_subset(&uks_a32_sim_task(&s, t)->affinity, &s.cpusets[cs].cpus));
}

/* Cpusets: all capable CPUs allowed by a cpuset with a 32-bit task are offlined. */
TEST(cpuset_capable_cpus_offlined_uses_step2)
{
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "1-3", NULL, true), 0);
	int cs = uks_a32_sim_cpuset_create(&s, 0, "0,2");
	int t = uks_a32_sim_task_create(&s, cs, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	EXPECT_STREQ(AFF(t), "2");
	ASSERT_EQ(uks_a32_sim_cpu_offline(&s, 2), 0);
	EXPECT_STREQ(AFF(t), "1,3");		/* the root's capable online CPUs */
}

/* Cpusets: in both cases the cpuset hierarchy is unchanged, whatever the cgroup version. */
TEST(cpuset_hierarchy_is_unchanged_by_these_affinity_changes)
{
	boot_asym();
	int a = uks_a32_sim_cpuset_create(&s, 0, "0-1");
	int b = uks_a32_sim_cpuset_create(&s, 0, "0,2");
	struct uks_cpumask before_a = s.cpusets[a].cpus, before_b = s.cpusets[b].cpus;
	int t = uks_a32_sim_task_create(&s, a, NULL);
	int u = uks_a32_sim_task_create(&s, b, NULL);

	ASSERT_EQ(uks_a32_sim_task_execve(&s, t, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_task_execve(&s, u, true, NULL), 0);
	ASSERT_EQ(uks_a32_sim_cpu_offline(&s, 3), 0);
	ASSERT_EQ(uks_a32_sim_task_setaffinity(&s, t, "0-3"), 0);
	EXPECT_EQ(s.tasks[t].cpuset, a);
	EXPECT_EQ(s.tasks[u].cpuset, b);
	EXPECT_TRUE(uks_cpumask_equal(&s.cpusets[a].cpus, &before_a));
	EXPECT_TRUE(uks_cpumask_equal(&s.cpusets[b].cpus, &before_b));
	EXPECT_EQ(s.cpusets[a].parent, 0);
	EXPECT_EQ(s.cpusets[b].parent, 0);
}

/* CPU hotplug: the first detected capable CPU cannot be offlined by user space: -EPERM. */
TEST(hotplug_first_detected_capable_cpu_offline_is_eperm)
{
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "1-3", "0,3,1,2", true), 0);
	EXPECT_EQ(s.first_capable, 3);		/* detection order, not numbering */
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 3), -EPERM);
	EXPECT_TRUE(uks_cpumask_test_cpu(&s.online, 3));
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 1), 0);	/* other capable CPUs may go */
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 0), 0);	/* and 64-bit-only ones */
	/* a homogeneous system has no such restriction */
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "0-3", NULL, true), 0);
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 0), 0);
}

/* CPU hotplug: suspend is still permitted when CPU 0 is 64-bit-only. */
TEST(suspend_permitted_with_64bit_only_cpu0)
{
	boot_asym();
	struct uks_cpumask before = s.online;

	EXPECT_EQ(uks_a32_sim_suspend(&s), 0);
	EXPECT_TRUE(uks_cpumask_equal(&s.online, &before));
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 2), -EPERM);	/* user space still cannot */
}

/* KVM: no 32-bit EL0 support is advertised to any vCPU on an asymmetric system. */
TEST(kvm_does_not_advertise_32bit_el0_on_asymmetric_system)
{
	boot_asym();
	EXPECT_FALSE(uks_a32_sim_kvm_el0_32bit(&s));
	ASSERT_EQ(uks_a32_sim_init(&s, 4, "0-3", NULL, false), 0);
	EXPECT_TRUE(uks_a32_sim_kvm_el0_32bit(&s));
}

/* KVM: a 32-bit exit gives KVM_EXIT_FAIL_ENTRY; the vCPU stays non-runnable until KVM_ARM_VCPU_INIT. */
TEST(kvm_32bit_exit_fails_entry_until_vcpu_init)
{
	boot_asym();
	ASSERT_EQ(uks_a32_sim_kvm_vcpu_init(&s, 0), 0);
	EXPECT_EQ(uks_a32_sim_kvm_run(&s, 0, false), UKS_A32_KVM_EXIT_NONE);
	EXPECT_EQ(uks_a32_sim_kvm_run(&s, 0, true), UKS_A32_KVM_EXIT_FAIL_ENTRY);
	EXPECT_EQ(uks_a32_sim_kvm_run(&s, 0, false), -ENOEXEC);
	EXPECT_EQ(uks_a32_sim_kvm_run(&s, 0, false), -ENOEXEC);
	ASSERT_EQ(uks_a32_sim_kvm_vcpu_init(&s, 0), 0);
	EXPECT_EQ(uks_a32_sim_kvm_run(&s, 0, false), UKS_A32_KVM_EXIT_NONE);
}

/* The model's own edges: bad arguments, a full table, the last CPU. */
TEST(model_rejects_bad_arguments)
{
	boot_asym();
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 9), -EINVAL);
	EXPECT_EQ(uks_a32_sim_cpu_online(&s, 9), -EINVAL);
	EXPECT_EQ(uks_a32_sim_task_execve(&s, 31, true, NULL), -EINVAL);
	EXPECT_EQ(uks_a32_sim_cpuset_create(&s, 7, "0"), -EINVAL);
	EXPECT_LT(uks_a32_sim_cpuset_create(&s, 0, "garbage"), 0);
	EXPECT_EQ(uks_a32_sim_init(&s, 0, "0", NULL, true), -EINVAL);
	ASSERT_EQ(uks_a32_sim_init(&s, 2, "1", NULL, true), 0);
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 0), 0);
	EXPECT_EQ(uks_a32_sim_cpu_offline(&s, 1), -EPERM);
	for (int i = 0; i < UKS_A32_SIM_TASKS; i++)
		ASSERT_GE(uks_a32_sim_task_create(&s, 0, NULL), 0);
	EXPECT_EQ(uks_a32_sim_task_create(&s, 0, NULL), -ENOSPC);
}

TEST_HARNESS_MAIN
