// SPDX-License-Identifier: MIT
/*
 * A multithreaded malloc workload for the preload test (built by
 * tests/slab/preload.sh): threads allocate, hand blocks to each other,
 * realloc (blocks past 8 KiB among them), fork a child that allocates,
 * and check every byte.  First, realloc() shrinking: the bytes kept, and
 * the slack given back.
 */
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define THREADS 6
#define SLOTS 512

static void *volatile handoff[THREADS][SLOTS];

static void *worker(void *arg)
{
	long id = (long)arg;
	unsigned int seed = (unsigned int)id + 1;

	for (int i = 0; i < 200000; i++) {
		int slot = rand_r(&seed) % SLOTS, peer = (int)((id + 1) % THREADS);
		/* one in 64 past kmalloc-8k: a page run, grown by the realloc below */
		size_t size = i % 64 ? (size_t)(rand_r(&seed) % 3000) + 1 :
				       (size_t)(rand_r(&seed) % 57344) + 8193;
		unsigned char *p = malloc(size), *old;

		if (!p)
			return (void *)1;
		memset(p, (int)size & 0xff, size);
		if (i % 7 == 0) {
			p = realloc(p, size * 2);
			if (!p)
				return (void *)1;
		}
		for (size_t j = 0; j < size; j++)
			if (p[j] != (size & 0xff))
				return (void *)1;
		old = __atomic_exchange_n(&handoff[peer][slot], p, __ATOMIC_ACQ_REL);
		free(old);	/* probably allocated by another thread */
	}
	return NULL;
}

/* A block shrunk below half its size moves to a smaller slot; a little less stays. */
static int shrink_ok(void)
{
	unsigned char *p = malloc(4000), *q, *r;
	int bad = 0;

	if (!p)
		return 0;
	for (int i = 0; i < 4000; i++)
		p[i] = (unsigned char)(i * 7);
	q = realloc(p, 100);
	if (!q || malloc_usable_size(q) >= 2000)
		bad = 1;
	for (int i = 0; q && i < 100; i++)
		bad |= q[i] != (unsigned char)(i * 7);
	r = q ? realloc(q, 90) : NULL;
	if (!r || r != q)
		bad = 1;
	free(r ? r : q);
	return !bad;
}

int main(void)
{
	pthread_t t[THREADS];
	void *ret;
	int status, bad = !shrink_ok();
	pid_t pid;

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	/* fork() while the workers allocate: the child must not deadlock. */
	pid = fork();
	if (pid == 0) {
		char *p = malloc(100000);

		memset(p, 1, 100000);
		free(p);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		bad = 1;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], &ret);
		bad |= ret != NULL;
	}
	for (int i = 0; i < THREADS; i++)
		for (int j = 0; j < SLOTS; j++)
			free(handoff[i][j]);
	printf("%s\n", bad ? "FAILED" : "ok");
	return bad;
}
