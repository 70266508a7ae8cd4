// SPDX-License-Identifier: MIT
/*
 * Per-thread scratch records (scratch.h): one ring-buffer page per nesting
 * level, mapped on a thread's first use, not kmalloc'ed (the event being
 * written may be kmem:kmalloc itself), and unmapped by a thread key when
 * the thread exits.  Records larger than a page never reach the buffer
 * either, so none is refused here that the buffer would take.
 *
 * Lock order: none (per thread; a signal handler nests above its thread).
 */
#include <pthread.h>
#include <sys/mman.h>

#include "trace/ring_buffer.h"
#include "trace/scratch.h"

#define SCRATCH_DEPTH	8	/* a thread, signal handlers, an eprobe's event inside */

__thread int __uks_trace_scratch_nest __attribute__((tls_model("initial-exec")));
static __thread unsigned char *scratch __attribute__((tls_model("initial-exec")));
static pthread_key_t scratch_key;
static pthread_once_t scratch_once = PTHREAD_ONCE_INIT;

static void scratch_free(void *p)
{
	munmap(p, SCRATCH_DEPTH * UKS_RB_PAGE_SIZE);
}

static void scratch_key_init(void)
{
	pthread_key_create(&scratch_key, scratch_free);
}

void *__uks_trace_scratch_get(size_t len)
{
	if (len > UKS_RB_PAGE_SIZE || __uks_trace_scratch_nest >= SCRATCH_DEPTH)
		return NULL;
	if (!scratch) {
		void *p;

		pthread_once(&scratch_once, scratch_key_init);
		p = mmap(NULL, SCRATCH_DEPTH * UKS_RB_PAGE_SIZE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		scratch = p;
		pthread_setspecific(scratch_key, p);
	}
	return scratch + (size_t)__uks_trace_scratch_nest++ * UKS_RB_PAGE_SIZE;
}

bool __uks_trace_scratch_owns(const void *rec)
{
	size_t off = (size_t)((const unsigned char *)rec - scratch);

	return __uks_trace_scratch_nest && off < SCRATCH_DEPTH * (size_t)UKS_RB_PAGE_SIZE;
}

void __uks_trace_scratch_put(void)
{
	__uks_trace_scratch_nest--;
}
