// SPDX-License-Identifier: MIT
/*
 * DAMOS on a real child, through process_madvise(2).  pageout: the child maps a
 * 64 MiB file it wrote (a private, read-only, file-backed mapping, whose
 * clean pages MADV_PAGEOUT can drop without swap: anonymous memory is not
 * reclaimable on a machine without swap), in two mappings: the first 4 MiB
 * it reads again and again (hot), the other 60 MiB it read once (cold).
 * A pageout scheme for regions unaccessed for five aggregations must drop
 * at least half of the cold mapping's resident bytes (read from the
 * child's smaps before and after), and the child then reads every byte of
 * the file back through its mapping and checks the pattern.  The child's
 * passes over its hot part per second, before and while monitored, are
 * logged (the monitor's cost, not asserted).
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/wait.h>

#include "harness.h"
#include "unit/damon/helper.h"

#define MB		(1UL << 20)
#define HOT_SZ		(4 * MB)
#define COLD_SZ		(60 * MB)
#define TMPFS_MAGIC_	0x01021994

struct shared {
	volatile unsigned long passes;
	volatile int verdict;	/* 1 intact, -1 damaged */
};

static unsigned char pattern_at(unsigned long off)
{
	return (unsigned char)((off * 2654435761UL) >> 13);
}

/* A directory on a disk file system (tmpfs pages are shmem: swap only). */
static const char *disk_dir(void)
{
	static const char *const dirs[] = { "/var/tmp", ".", "/tmp" };
	struct statfs st;

	for (size_t i = 0; i < ARRAY_SIZE(dirs); i++)
		if (!statfs(dirs[i], &st) && st.f_type != TMPFS_MAGIC_ && !access(dirs[i], W_OK))
			return dirs[i];
	return NULL;
}

static int make_file(const char *dir, char *path, size_t len)
{
	static unsigned char buf[1 << 16];
	int fd;

	snprintf(path, len, "%s/uks-damos-XXXXXX", dir);
	fd = mkstemp(path);
	if (fd < 0)
		return -1;
	unlink(path);
	for (unsigned long off = 0; off < HOT_SZ + COLD_SZ; off += sizeof(buf)) {
		for (size_t i = 0; i < sizeof(buf); i++)
			buf[i] = pattern_at(off + i);
		if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf)) {
			close(fd);
			return -1;
		}
	}
	fsync(fd);
	return fd;
}

static void child_main(int fd, struct shared *sh, unsigned char *hot, unsigned char *cold)
{
	sigset_t set;
	unsigned long sum = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	for (unsigned long i = 0; i < COLD_SZ; i += 4096)
		sum += cold[i];
	for (;;) {
		struct timespec zero = { 0, 0 };

		for (unsigned long i = 0; i < HOT_SZ; i += 4096)
			sum += hot[i];
		sh->passes++;
		if (sigtimedwait(&set, NULL, &zero) == SIGUSR1)
			break;
	}
	sh->verdict = 1;
	for (unsigned long i = 0; i < HOT_SZ; i++)
		if (hot[i] != pattern_at(i))
			sh->verdict = -1;
	for (unsigned long i = 0; i < COLD_SZ; i++)
		if (cold[i] != pattern_at(HOT_SZ + i))
			sh->verdict = -1;
	close(fd);
	_exit(sum == 42 ? 3 : 0);
}

/* Rss of the mapping starting at @start in /proc/PID/smaps, in bytes; -1 if none. */
static long mapping_rss(pid_t pid, unsigned long start)
{
	char path[64], line[512];
	bool in = false;
	long rss = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, kb;

		/* a mapping's first line: "start-end perms ..." (field lines start with a name) */
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = s == start;
			continue;
		}
		if (in && sscanf(line, "Rss: %lu kB", &kb) == 1) {
			rss = (long)(kb * 1024);
			break;
		}
	}
	fclose(f);
	return rss;
}

static long vm_rss(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024;
}

static double passes_per_s(struct shared *sh, unsigned int ms)
{
	unsigned long a = sh->passes, b;

	usleep(ms * 1000);
	b = sh->passes;
	return (double)(b - a) * 1000.0 / ms;
}

TEST(pageout_drops_the_cold_pages_and_keeps_the_data)
{
	const char *dir = disk_dir();
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	struct uks_damos_scheme s = {
		.pattern = { .min_sz = 4096, .max_sz = ~0UL, .min_nr_accesses = 0,
			     .max_nr_accesses = 0, .min_age = 5, .max_age = ~0U },
		.action = UKS_DAMOS_PAGEOUT,
	};
	unsigned char *hot, *cold;
	struct uks_damos_stats st;
	struct uks_damon_ctx *ctx;
	long cold_before, cold_after = -1, rss_before, rss_after;
	double rate_before, rate_during;
	unsigned long id;
	char path[256], why[200];
	int fd, status;
	pid_t pid;

	if (!dir)
		SKIP(return, "no writable directory on a disk file system");
	if (uks_damos_check_scheme(&s, why, sizeof(why)))
		SKIP(return, "%s", why);
	ASSERT_NE(MAP_FAILED, (void *)sh);
	fd = make_file(dir, path, sizeof(path));
	ASSERT_GE(fd, 0);
	/* two mappings, a hole between them: vaddr-refs sees mappings apart */
	hot = mmap(NULL, HOT_SZ + COLD_SZ + 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)hot);
	cold = hot + HOT_SZ + 4096;
	munmap(hot, HOT_SZ + COLD_SZ + 4096);
	ASSERT_EQ((void *)hot, mmap(hot, HOT_SZ, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0));
	ASSERT_EQ((void *)cold, mmap(cold, COLD_SZ, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd,
				     (off_t)HOT_SZ));
	madvise(hot, HOT_SZ + COLD_SZ + 4096, MADV_NOHUGEPAGE);
	{
		sigset_t set;

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
	}
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		child_main(fd, sh, hot, cold);
	munmap(hot, HOT_SZ);
	munmap(cold, COLD_SZ);
	close(fd);
	while (!sh->passes)
		usleep(1000);
	rate_before = passes_per_s(sh, 500);
	cold_before = mapping_rss(pid, (unsigned long)cold);
	rss_before = vm_rss(pid);

	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_primitive(ctx, NULL));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	id = (unsigned long)pid;
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	usleep(300000);
	rate_during = passes_per_s(sh, 500);
	for (int i = 0; i < 300; i++) {
		usleep(100000);
		cold_after = mapping_rss(pid, (unsigned long)cold);
		if (cold_after >= 0 && cold_after <= cold_before / 4)
			break;
	}
	rss_after = vm_rss(pid);
	uks_damon_stop(&ctx, 1);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	kill(pid, SIGUSR1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%s: cold mapping resident %ld -> %ld KiB, VmRSS %ld -> %ld KiB",
	       uks_damon_primitive_name(ctx), cold_before >> 10, cold_after >> 10,
	       rss_before >> 10, rss_after >> 10);
	TH_LOG("stats: tried %lu regions %lu KiB, applied %lu regions %lu KiB; "
	       "child's passes/s %.0f before, %.0f monitored (%.2fx slower)",
	       st.nr_tried, st.sz_tried >> 10, st.nr_applied, st.sz_applied >> 10,
	       rate_before, rate_during, rate_during > 0 ? rate_before / rate_during : 0.0);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(1, sh->verdict);
	ASSERT_GT(cold_before, (long)(COLD_SZ / 2));	/* the child read it all */
	EXPECT_LE(cold_after, cold_before - cold_before / 2);
	EXPECT_GT(st.sz_applied, 0UL);
	uks_damon_ctx_destroy(ctx);
	munmap(sh, 4096);
}

/* Field @field of the mapping at @start in /proc/PID/smaps, bytes; -1 if none. */
static long mapping_field(pid_t pid, unsigned long start, const char *field)
{
	size_t flen = strlen(field);
	char path[64], line[512];
	bool in = false;
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, kb;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = s == start;
			continue;
		}
		if (in && !strncmp(line, field, flen) && line[flen] == ':' &&
		    sscanf(line + flen + 1, "%lu kB", &kb) == 1) {
			val = (long)(kb * 1024);
			break;
		}
	}
	fclose(f);
	return val;
}

/*
 * hugepage is MADV_COLLAPSE through process_madvise(): a child writes an
 * 8 MiB anonymous buffer (2 MiB-aligned, faulted in 4 KiB pages: THP is
 * not "always" for it) again and again; a hugepage scheme for its hot
 * regions of 2 MiB or more must make huge pages of it (AnonHugePages
 * grows), and the buffer keeps its data.
 */
TEST(hugepage_collapses_a_hot_buffer)
{
	const unsigned long sz = 8 * MB;
	struct shared *sh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	struct uks_damos_scheme s = {
		.pattern = { .min_sz = 2 * MB, .max_sz = ~0UL, .min_nr_accesses = 1,
			     .max_nr_accesses = ~0U, .min_age = 0, .max_age = ~0U },
		.action = UKS_DAMOS_HUGEPAGE,
	};
	struct uks_damos_stats st;
	struct uks_damon_ctx *ctx;
	unsigned char *raw, *buf;
	long huge = 0;
	unsigned long id;
	char why[200], thp[64] = "";
	int status;
	pid_t pid;
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (!fgets(thp, sizeof(thp), f))
			thp[0] = '\0';
		fclose(f);
	}
	if (!strstr(thp, "[always]") && !strstr(thp, "[madvise]"))
		SKIP(return, "transparent huge pages are off here: %s", thp);
	if (uks_damos_check_scheme(&s, why, sizeof(why)))
		SKIP(return, "%s", why);
	ASSERT_NE(MAP_FAILED, (void *)sh);
	/* a mapping of its own: PROT_NONE pages at both ends keep neighbours off */
	raw = mmap(NULL, sz + 2 * MB + 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	ASSERT_NE(MAP_FAILED, (void *)raw);
	mprotect(raw, 4096, PROT_NONE);
	mprotect(raw + sz + 2 * MB + 4096, 4096, PROT_NONE);
	buf = (unsigned char *)(((unsigned long)raw + 4096 + 2 * MB - 1) & ~(2 * MB - 1));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		sigset_t set;
		struct timespec zero = { 0, 0 };

		sigemptyset(&set);
		sigaddset(&set, SIGUSR1);
		sigprocmask(SIG_BLOCK, &set, NULL);
		for (unsigned long i = 0; i < sz; i++)
			buf[i] = pattern_at(i);
		while (sigtimedwait(&set, NULL, &zero) != SIGUSR1) {
			for (unsigned long i = 0; i < sz; i += 4096)
				buf[i] = pattern_at(i);
			sh->passes++;
		}
		sh->verdict = 1;
		for (unsigned long i = 0; i < sz; i++)
			if (buf[i] != pattern_at(i))
				sh->verdict = -1;
		_exit(0);
	}
	while (!sh->passes)
		usleep(1000);
	ASSERT_EQ(0, uks_damon_ctx_create(&ctx));
	ASSERT_EQ(0, uks_damon_set_attrs(ctx, 5000, 100000, 1000000, 10, 1000));
	id = (unsigned long)pid;
	ASSERT_EQ(0, uks_damon_set_targets(ctx, &id, 1));
	ASSERT_EQ(0, uks_damos_add_scheme(ctx, &s));
	ASSERT_EQ(0, uks_damon_start(&ctx, 1));
	for (int i = 0; i < 200 && huge < (long)(2 * MB); i++) {
		usleep(50000);
		huge = mapping_field(pid, (unsigned long)raw + 4096, "AnonHugePages");
	}
	uks_damon_stop(&ctx, 1);
	ASSERT_EQ(0, uks_damos_get_stats(ctx, 0, &st));
	kill(pid, SIGUSR1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	TH_LOG("%s: AnonHugePages %ld KiB; tried %lu regions %lu KiB, applied %lu KiB",
	       uks_damon_primitive_name(ctx), huge >> 10, st.nr_tried, st.sz_tried >> 10,
	       st.sz_applied >> 10);
	EXPECT_GE(huge, (long)(2 * MB));
	EXPECT_GT(st.sz_applied, 0UL);
	EXPECT_EQ(1, sh->verdict);
	uks_damon_ctx_destroy(ctx);
	munmap(raw, sz + 2 * MB + 8192);
	munmap(sh, 4096);
}

TEST_HARNESS_MAIN
