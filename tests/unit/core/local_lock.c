// SPDX-License-Identifier: MIT
/*
 * uks_local_lock: mutual exclusion per CPU with more threads than CPUs, and
 * the RT property that the holder keeps its CPU's lock across migration.
 */
#include <pthread.h>
#include <sched.h>

#include "harness.h"
#include <uks/core.h>
#include "core/local_lock.h"

struct shared {
	struct uks_local_lock lock;
	struct uks_percpu counters;	/* one non-atomic long per CPU */
	int iters;
};

static void *hammer(void *arg)
{
	struct shared *s = arg;

	for (int i = 0; i < s->iters; i++) {
		unsigned int cpu = local_lock(&s->lock);
		long *c = uks_per_cpu_ptr(&s->counters, cpu);
		long v = *c;

		if (i % 64 == 0)
			sched_yield();	/* invite preemption inside the section */
		*c = v + 1;
		local_unlock(&s->lock, cpu);
	}
	return NULL;
}

TEST(excludes_threads_on_same_cpu)
{
	struct shared s = { .iters = 20000 };
	pthread_t t[8];
	long total = 0;
	unsigned int cpu;

	ASSERT_EQ(local_lock_init(&s.lock), 0);
	ASSERT_EQ(__uks_percpu_alloc(&s.counters, sizeof(long)), 0);
	for (int i = 0; i < 8; i++)	/* 8 threads on 2 CPUs */
		ASSERT_EQ(pthread_create(&t[i], NULL, hammer, &s), 0);
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for_each_possible_cpu(cpu, &s.counters)
		total += *(long *)uks_per_cpu_ptr(&s.counters, cpu);
	EXPECT_EQ(total, 8L * s.iters);	/* no lost update */
	__uks_percpu_free(&s.counters);
	local_lock_destroy(&s.lock);
}

TEST(holder_keeps_lock_across_migration)
{
	struct uks_local_lock l;
	cpu_set_t orig, one;

	if (uks_nr_cpu_ids() < 2)
		SKIP(return, "needs two CPUs");
	ASSERT_EQ(local_lock_init(&l), 0);
	sched_getaffinity(0, sizeof(orig), &orig);
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
	unsigned int cpu = local_lock(&l);

	EXPECT_EQ(cpu, 0);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);	/* migrate */
	EXPECT_EQ(uks_this_cpu(), 1);
	EXPECT_TRUE(__uks_local_lock_held(&l, 0));	/* still CPU 0's */
	EXPECT_FALSE(__uks_local_lock_held(&l, 1));
	EXPECT_FALSE(local_trylock_cpu(&l, 0) && (local_unlock(&l, 0), true));
	EXPECT_TRUE(local_trylock_cpu(&l, 1));
	local_unlock(&l, 1);
	local_unlock(&l, 0);
	EXPECT_FALSE(__uks_local_lock_held(&l, 0));
	sched_setaffinity(0, sizeof(orig), &orig);
	local_lock_destroy(&l);
}

TEST_HARNESS_MAIN
