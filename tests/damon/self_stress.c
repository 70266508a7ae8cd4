// SPDX-License-Identifier: MIT
/*
 * self_stress: a program to run under libuks-damon-agent.so (the DAMON
 * "self" primitive takes sampled pages away with userfaultfd and puts them
 * back on the fault) that checks no byte is ever lost or corrupted.
 *
 * Every page of a 16 MiB pool is owned by one writer thread and holds
 *	word 0: MAGIC ^ page index	(never changes)
 *	word 1: sequence number
 *	word 2..511: mix(index, seq, j)
 * Writers pick owned pages at random, verify them against the sequence
 * they last wrote, then write a new sequence word by word (so pages move
 * in the middle of a write).  Other threads:
 *   pipe:    read(2) from a pipe straight into owned pages (the kernel
 *	      writes to taken pages) and write(2) owned pages to a pipe (the
 *	      kernel reads them), checking both ends;
 *   fork:    owns pages, writes them, fork()s: the child checks those
 *	      exactly and word 0 of every page of the pool, and _exits;
 *   remove:  MADV_DONTNEED of owned pages reads back zero, then rewrites
 *	      (-r to skip: the copy mode does not see it);
 *   remap:   mremap()s a private buffer back and forth, checking it;
 *   unmap:   mmap, fill, check, munmap (-u to skip);
 *   cut:     with -H, mremap()s the middle 2 MiB of two huge pages away
 *	      (cutting both) and checks both places.
 * -H: the pool, and the remove and unmap threads' buffers, in transparent
 * huge pages (2 MiB aligned, MADV_HUGEPAGE): the agent takes them whole,
 * and the remove thread drops a part of a maybe-taken huge page (the part
 * must read zeros, the rest its data).
 * Readers read random pages of the pool (faults only).  A 1 ms SIGALRM
 * handler reads random pages too; every thread of ours but the readers
 * blocks it, so the kernel may pick the monitor thread, where a handler
 * would wait for itself (the agent must block signals there).  After -t seconds
 * everything stops and every page is checked exactly.
 *
 * Exit status 0 when every check passed; messages on stderr otherwise.
 * No libuks: the agent is the only uks code in the process.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define PG		4096UL
#define WORDS		(PG / 8)
#define NPAGES		4096UL
#define MAGIC		0x5eed5eed00000000ULL
#define NWRITERS	4
#define NFORK		64	/* pages of the fork thread */
#define NPIPE		64	/* pages of the pipe thread */

static uint64_t *pool;
static atomic_int stop_all;
static atomic_long errors, checks, forks;
static bool no_remove, no_unmap, thp;

static uint64_t mix(uint64_t idx, uint64_t seq, uint64_t j)
{
	uint64_t x = idx * 0x9e3779b97f4a7c15ULL ^ seq * 0xbf58476d1ce4e5b9ULL ^ j;

	x ^= x >> 31;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 29);
}

#define HPG		(2UL << 20)

/* Anonymous memory; with -H 2 MiB aligned and in huge pages if it can. */
static void *map_buf(size_t len)
{
	char *p = mmap(NULL, len + (thp ? HPG : 0), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;

	if (p == MAP_FAILED)
		return NULL;
	if (!thp) {
		madvise(p, len, MADV_NOHUGEPAGE);
		return p;
	}
	a = (char *)(((uintptr_t)p + HPG - 1) & ~(HPG - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	munmap(a + len, HPG - (size_t)(a - p));
	madvise(a, len, MADV_HUGEPAGE);
	return a;
}

static uint64_t *page(unsigned long i)
{
	return pool + i * WORDS;
}

static void fail(const char *what, unsigned long idx, unsigned long j, uint64_t got,
		 uint64_t want)
{
	if (atomic_fetch_add(&errors, 1) < 20)
		fprintf(stderr, "self_stress: %s: page %lu word %lu: %#llx, want %#llx\n", what,
			idx, j, (unsigned long long)got, (unsigned long long)want);
}

static void fill(uint64_t *p, unsigned long idx, uint64_t seq)
{
	volatile uint64_t *v = p;

	v[0] = MAGIC ^ idx;
	v[1] = seq;
	for (unsigned long j = 2; j < WORDS; j++)
		v[j] = mix(idx, seq, j);
}

static bool verify(const char *who, const uint64_t *p, unsigned long idx, uint64_t seq)
{
	const volatile uint64_t *v = p;

	atomic_fetch_add(&checks, 1);
	if (v[0] != (MAGIC ^ idx)) {
		fail(who, idx, 0, v[0], MAGIC ^ idx);
		return false;
	}
	if (v[1] != seq) {
		fail(who, idx, 1, v[1], seq);
		return false;
	}
	for (unsigned long j = 2; j < WORDS; j++)
		if (v[j] != mix(idx, seq, j)) {
			fail(who, idx, j, v[j], mix(idx, seq, j));
			return false;
		}
	return true;
}

/* Pages [first, first + n) with the sequences in seq[]. */
struct owner {
	unsigned long first, n;
	uint64_t *seq;
	unsigned int rnd;
};

static void owner_init(struct owner *o, unsigned long first, unsigned long n)
{
	o->first = first;
	o->n = n;
	o->seq = calloc(n, sizeof(*o->seq));
	o->rnd = (unsigned int)first * 2654435761u + 1;
	for (unsigned long i = 0; i < n; i++)
		fill(page(first + i), first + i, 0);
}

static unsigned long owner_pick(struct owner *o)
{
	o->rnd = o->rnd * 1103515245u + 12345u;
	return (o->rnd >> 8) % o->n;
}

static void *writer(void *arg)
{
	struct owner *o = arg;

	while (!atomic_load(&stop_all)) {
		unsigned long k = owner_pick(o), idx = o->first + k;

		verify("writer", page(idx), idx, o->seq[k]);
		fill(page(idx), idx, ++o->seq[k]);
	}
	return NULL;
}

static atomic_long alarms;

static void on_alarm(int sig)
{
	static unsigned int r = 7;

	(void)sig;
	r = r * 1103515245u + 12345u;
	unsigned long i = (r >> 8) % NPAGES;

	if (page(i)[0] != (MAGIC ^ i))
		atomic_fetch_add(&errors, 1);
	atomic_fetch_add(&alarms, 1);
}

static void *reader(void *arg)
{
	unsigned int r = (unsigned int)(uintptr_t)arg;
	uint64_t sum = 0;
	sigset_t alrm;

	/* only the readers (and any thread that does not block it) take it */
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);

	while (!atomic_load(&stop_all)) {
		r = r * 1103515245u + 12345u;
		sum += page((r >> 8) % NPAGES)[(r >> 3) % WORDS];
	}
	return (void *)(uintptr_t)sum;
}

static void *piper(void *arg)
{
	struct owner *o = arg;
	static uint64_t buf[WORDS], back[WORDS];
	int p[2], q[2];

	if (pipe(p) || pipe(q))
		return NULL;
	while (!atomic_load(&stop_all)) {
		unsigned long k = owner_pick(o), idx = o->first + k;

		/* the kernel writes into the (maybe taken) page */
		fill(buf, idx, o->seq[k] + 1);
		if (write(p[1], buf, PG) != (ssize_t)PG ||
		    read(p[0], page(idx), PG) != (ssize_t)PG) {
			fail("pipe read", idx, 0, 0, 0);
			break;
		}
		o->seq[k]++;
		verify("pipe read(2) into page", page(idx), idx, o->seq[k]);
		/* the kernel reads from it */
		if (write(q[1], page(idx), PG) != (ssize_t)PG ||
		    read(q[0], back, PG) != (ssize_t)PG) {
			fail("pipe write", idx, 0, 0, 0);
			break;
		}
		verify("pipe write(2) from page", back, idx, o->seq[k]);
	}
	close(p[0]);
	close(p[1]);
	close(q[0]);
	close(q[1]);
	return NULL;
}

static void *forker(void *arg)
{
	struct owner *o = arg;

	while (!atomic_load(&stop_all)) {
		for (int n = 0; n < 16; n++) {
			unsigned long k = owner_pick(o);

			fill(page(o->first + k), o->first + k, ++o->seq[k]);
		}
		pid_t pid = fork();

		if (pid == 0) {
			int bad = 0;

			for (unsigned long k = 0; k < o->n; k++)
				bad += !verify("fork child", page(o->first + k), o->first + k,
					       o->seq[k]);
			for (unsigned long i = 0; i < NPAGES; i++)
				if (page(i)[0] != (MAGIC ^ i)) {
					fail("fork child word 0", i, 0, page(i)[0], MAGIC ^ i);
					bad++;
				}
			_exit(bad ? 1 : 0);
		}
		int status = 0;

		if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			fail("fork child exit", 0, 0, (uint64_t)status, 0);
		}
		atomic_fetch_add(&forks, 1);
		usleep(20000);
	}
	return NULL;
}

/*
 * MADV_DONTNEED of private pages: the program must read zeros after.
 * With -H, of 64 pages in the middle of a 2 MiB huge page (the other
 * pages keep their data), a new one every round (the first MADV_DONTNEED
 * splits it).
 */
static void *remover(void *arg)
{
	unsigned long n = thp ? HPG / PG : 64, lo = thp ? 200 : 0, hi = thp ? 264 : 64;
	uint64_t *b = map_buf(n * PG);
	uint64_t seq = 0;

	(void)arg;
	if (!b)
		return NULL;
	while (!atomic_load(&stop_all)) {
		seq++;
		for (unsigned long i = 0; i < n; i++)
			fill(b + i * WORDS, 100000 + i, seq);
		usleep(2000);
		for (unsigned long i = 0; i < n; i++)
			verify("remove: before", b + i * WORDS, 100000 + i, seq);
		madvise(b + lo * WORDS, (hi - lo) * PG, MADV_DONTNEED);
		usleep(1000);
		for (unsigned long i = lo * WORDS; i < hi * WORDS; i++)
			if (((volatile uint64_t *)b)[i]) {
				fail("remove: not zero after MADV_DONTNEED", i / WORDS, i % WORDS,
				     b[i], 0);
				break;
			}
		for (unsigned long i = 0; i < n; i++)
			if (i < lo || i >= hi)
				verify("remove: kept after MADV_DONTNEED", b + i * WORDS,
				       100000 + i, seq);
		if (thp) {
			munmap(b, n * PG);
			b = map_buf(n * PG);
			if (!b)
				return NULL;
		}
	}
	munmap(b, n * PG);
	return NULL;
}

/* mremap() back and forth between two fixed places; MREMAP_DONTUNMAP
 * leaves the old place mapped (empty), so no other mmap() lands there. */
#ifndef MREMAP_DONTUNMAP
#define MREMAP_DONTUNMAP 4
#endif
static void *remapper(void *arg)
{
	size_t len = 32 * PG;
	uint64_t *a = mmap(NULL, 2 * len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			   -1, 0);
	uint64_t *spot = a + len / 8, *to;
	uint64_t seq = 0;

	(void)arg;
	if (a == MAP_FAILED)
		return NULL;
	madvise(a, 2 * len, MADV_NOHUGEPAGE);
	while (!atomic_load(&stop_all)) {
		seq++;
		for (unsigned long i = 0; i < 32; i++)
			fill(a + i * WORDS, 200000 + i, seq);
		usleep(3000);
		to = mremap(a, len, len, MREMAP_MAYMOVE | MREMAP_FIXED | MREMAP_DONTUNMAP, spot);
		if (to == MAP_FAILED) {
			fail("mremap", 0, 0, (uint64_t)errno, 0);
			break;
		}
		spot = a;
		a = to;
		for (unsigned long i = 0; i < 32; i++)
			verify("remap: after mremap", a + i * WORDS, 200000 + i, seq);
	}
	munmap(a < spot ? a : spot, 2 * len);
	return NULL;
}

/*
 * -H: mremap() the middle 2 MiB of two fresh huge pages elsewhere, so the
 * move cuts both in half, then check every page where it now is: the
 * halves left behind and the moved middle.  Through libc's mremap(), so
 * the agent's wrapper gives taken pages back first; tests/unit/damon/
 * self.c cuts taken pages with the raw system call.
 */
static atomic_long cuts;

static void *cutter(void *arg)
{
	const unsigned long n = 2 * HPG / PG, q = HPG / 2 / PG;

	(void)arg;
	while (!atomic_load(&stop_all)) {
		uint64_t *b = map_buf(2 * HPG), *mid;

		if (!b)
			break;
		for (unsigned long i = 0; i < n; i++)
			fill(b + i * WORDS, 400000 + i, 9);
		usleep(3000);
		mid = mremap(b + q * WORDS, HPG, HPG, MREMAP_MAYMOVE);
		if (mid == MAP_FAILED) {
			fail("cut: mremap", 0, 0, (uint64_t)errno, 0);
			munmap(b, 2 * HPG);
			break;
		}
		atomic_fetch_add(&cuts, 1);
		for (unsigned long i = 0; i < n; i++) {
			bool moved = i >= q && i < q + HPG / PG;

			verify(moved ? "cut: moved half" : "cut: half left",
			       moved ? mid + (i - q) * WORDS : b + i * WORDS, 400000 + i, 9);
		}
		munmap(b, q * PG);
		munmap(b + (q + HPG / PG) * WORDS, q * PG);
		munmap(mid, HPG);
	}
	return NULL;
}

/* mmap, fill, check, munmap (with -H: a 2 MiB huge page) */
static void *unmapper(void *arg)
{
	unsigned long n = thp ? HPG / PG : 16;

	(void)arg;
	while (!atomic_load(&stop_all)) {
		uint64_t *b = map_buf(n * PG);

		if (!b)
			break;
		for (unsigned long i = 0; i < n; i++)
			fill(b + i * WORDS, 300000 + i, 7);
		usleep(4000);
		for (unsigned long i = 0; i < n; i++)
			verify("unmap: before munmap", b + i * WORDS, 300000 + i, 7);
		munmap(b, n * PG);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct owner w[NWRITERS], fo, po;
	pthread_t th[NWRITERS + 8];
	int nth = 0, opt;
	double secs = 3;

	while ((opt = getopt(argc, argv, "t:ruH")) != -1) {
		if (opt == 't')
			secs = atof(optarg);
		else if (opt == 'r')
			no_remove = true;
		else if (opt == 'u')
			no_unmap = true;
		else if (opt == 'H')
			thp = true;
		else
			return 2;
	}
	pool = map_buf(NPAGES * PG);
	if (!pool)
		return 2;
	unsigned long per = (NPAGES - NFORK - NPIPE) / NWRITERS;

	for (int i = 0; i < NWRITERS; i++)
		owner_init(&w[i], (unsigned long)i * per, per);
	owner_init(&fo, NWRITERS * per, NFORK);
	owner_init(&po, NWRITERS * per + NFORK, NPIPE);
	sigset_t alrm;

	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);	/* inherited by the threads */
	for (int i = 0; i < NWRITERS; i++)
		pthread_create(&th[nth++], NULL, writer, &w[i]);
	pthread_create(&th[nth++], NULL, reader, (void *)1);
	pthread_create(&th[nth++], NULL, reader, (void *)2);
	pthread_create(&th[nth++], NULL, piper, &po);
	pthread_create(&th[nth++], NULL, forker, &fo);
	pthread_create(&th[nth++], NULL, remapper, NULL);
	if (!no_remove)
		pthread_create(&th[nth++], NULL, remover, NULL);
	if (!no_unmap)
		pthread_create(&th[nth++], NULL, unmapper, NULL);
	if (thp)
		pthread_create(&th[nth++], NULL, cutter, NULL);
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } };

	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		usleep(100000);		/* cut short by the alarms */
		clock_gettime(CLOCK_MONOTONIC, &t1);
	} while ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	atomic_store(&stop_all, 1);
	for (int i = 0; i < nth; i++)
		pthread_join(th[i], NULL);
	/* the end: every page is exactly what its owner wrote last */
	for (int i = 0; i < NWRITERS; i++)
		for (unsigned long k = 0; k < w[i].n; k++)
			verify("final", page(w[i].first + k), w[i].first + k, w[i].seq[k]);
	for (unsigned long k = 0; k < fo.n; k++)
		verify("final", page(fo.first + k), fo.first + k, fo.seq[k]);
	for (unsigned long k = 0; k < po.n; k++)
		verify("final", page(po.first + k), po.first + k, po.seq[k]);
	for (int i = 0; i < NWRITERS; i++)
		free(w[i].seq);
	free(fo.seq);
	free(po.seq);
	printf("self_stress: %ld checks, %ld forks, %ld cuts, %ld alarms, %ld errors\n",
	       atomic_load(&checks), atomic_load(&forks), atomic_load(&cuts), atomic_load(&alarms),
	       atomic_load(&errors));
	return atomic_load(&errors) ? 1 : 0;
}
