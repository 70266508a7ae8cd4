// SPDX-License-Identifier: MIT
/*
 * Current CPU via rseq and via the sched_getcpu() fallback (the test
 * re-executes itself with GLIBC_TUNABLES=glibc.pthread.rseq=0), possible
 * CPUs, and per-CPU areas.
 */
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>

#include "harness.h"
#include <uks/core.h>
#include "core/percpu.h"

static int read_possible_last(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	int a, b = -1;

	if (!f)
		return -1;
	/* Good enough for this check: the last number in the file. */
	while (fscanf(f, "%d", &a) == 1) {
		b = a;
		if (fgetc(f) == EOF)
			break;
	}
	fclose(f);
	return b;
}

TEST(nr_cpu_ids_matches_sysfs)
{
	int last = read_possible_last();

	if (last < 0)
		SKIP(return, "no /sys/devices/system/cpu/possible");
	EXPECT_EQ(uks_nr_cpu_ids(), (unsigned int)last + 1);
}

/* Pin to each CPU in turn; both sources must then name that CPU. */
static void check_pinned(struct th_result *_th_r)
{
	cpu_set_t orig, one;
	int checked = 0;

	ASSERT_EQ(sched_getaffinity(0, sizeof(orig), &orig), 0);
	for (unsigned int cpu = 0; cpu < uks_nr_cpu_ids(); cpu++) {
		if (!CPU_ISSET(cpu, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
		EXPECT_EQ(uks_cpu_current(), (int)cpu);
		EXPECT_EQ(sched_getcpu(), (int)cpu);
		checked++;
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	EXPECT_GT(checked, 0);
}

/* Run twice: here with rseq, and re-executed by fallback_without_rseq. */
TEST(current_cpu_follows_migration)
{
	const char *tun = getenv("GLIBC_TUNABLES");
	bool disabled = tun && strstr(tun, "glibc.pthread.rseq=0");

	/* glibc 2.36 registers rseq unless the tunable turns it off. */
	EXPECT_EQ(uks_rseq_active(), !disabled);
	check_pinned(_th_r);
}

TEST(fallback_without_rseq)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	ASSERT_GT(n, 0);
	self[n] = '\0';
	pid_t pid = fork();

	if (pid == 0) {
		setenv("GLIBC_TUNABLES", "glibc.pthread.rseq=0", 1);
		execl(self, self, "-t", "current_cpu_follows_migration", (char *)NULL);
		_exit(127);
	}
	int status;

	ASSERT_EQ(waitpid(pid, &status, 0), pid);
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(WEXITSTATUS(status), 0);
}

static void *cpu_in_thread(void *arg)
{
	*(int *)arg = uks_cpu_current();
	return NULL;
}

TEST(current_cpu_in_new_threads)
{
	pthread_t t[4];
	int cpu[4];

	for (int i = 0; i < 4; i++)
		ASSERT_EQ(pthread_create(&t[i], NULL, cpu_in_thread, &cpu[i]), 0);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		EXPECT_GE(cpu[i], 0);
		EXPECT_LT(cpu[i], (int)uks_nr_cpu_ids());
	}
}

TEST(percpu_areas_are_aligned_and_distinct)
{
	struct uks_percpu pcp;
	unsigned int cpu;

	ASSERT_EQ(__uks_percpu_alloc(&pcp, 24), 0);
	EXPECT_EQ(pcp.nr_cpus, uks_nr_cpu_ids());
	EXPECT_EQ(pcp.stride, 64);
	for_each_possible_cpu(cpu, &pcp) {
		long *p = uks_per_cpu_ptr(&pcp, cpu);

		EXPECT_EQ((uintptr_t)p % 64, 0);
		EXPECT_EQ(p[0], 0);	/* zeroed */
		p[0] = cpu + 1;
	}
	for_each_possible_cpu(cpu, &pcp)
		EXPECT_EQ(*(long *)uks_per_cpu_ptr(&pcp, cpu), (long)cpu + 1);
	__uks_percpu_free(&pcp);
	EXPECT_NULL(pcp.base);
	EXPECT_EQ(__uks_percpu_alloc(&pcp, SIZE_MAX - 8), -ENOMEM);
}

TEST_HARNESS_MAIN
