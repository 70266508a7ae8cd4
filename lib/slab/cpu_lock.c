// SPDX-License-Identifier: MIT
/*
 * The local lock of a kmem_cache_cpu: bit 0 of its tid.
 *
 * On this CPU it is taken by an rseq section that stores tid | 1 only if
 * the thread is still running on the slot's CPU, so no lockless fast path
 * on that CPU can be half-way through when it is set, and every later one
 * sees it.  The slot of another CPU (flushing, fork, destroy) is taken
 * with an atomic compare-and-swap to tid | 3 followed by a membarrier(RSEQ)
 * fence of that CPU, which aborts any rseq section in flight there.  A
 * section that read the unlocked tid before the CAS and committed before
 * the fence stored tid | 1 over it: that thread owns the lock, and the
 * remote locker, rereading a value without bit 1, waits and retries.
 *
 * Caches on the cmpxchg16b fast path, and every cache when rseq or
 * membarrier is unavailable, take the bit with a CAS only: their fast
 * paths compare-and-swap {freelist, tid}, so they fail once the bit is set.
 *
 * Waiters spin briefly, then yield: the holder may be a preempted thread
 * of the same CPU (PREEMPT_RT semantics), and holds it for a few hundred
 * nanoseconds otherwise.  Unlock is one release store of the next tid.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "core/percpu.h"
#include "slab/fastpath.h"
#include "slab/slub.h"

enum slub_fastpath __uks_slab_default_fastpath = FASTPATH_CMPXCHG;
bool __uks_slab_rseq_locking_flag;	/* rseq + membarrier fences usable */
#define rseq_locking __uks_slab_rseq_locking_flag

static int membarrier(int cmd, unsigned int flags, int cpu)
{
	return (int)syscall(__NR_membarrier, cmd, flags, cpu);
}

/**
 * __uks_slab_fastpath_init - choose the fast path for this process
 *
 * rseq needs glibc's registration and membarrier's RSEQ fence (for remote
 * flushes); UKS_SLUB_FASTPATH=cmpxchg16b|rt in the environment, or the
 * build's UKS_SLUB_DEFAULT_CMPXCHG, picks another default.
 */
int __uks_slab_fastpath_init(void)
{
	const char *env = secure_getenv("UKS_SLUB_FASTPATH");

	rseq_locking = false;
#if UKS_HAVE_RSEQ_ASM
	if (__uks_rseq_usable &&
	    membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_RSEQ, 0, 0) == 0)
		rseq_locking = true;
#endif
#if defined(UKS_SLUB_DEFAULT_CMPXCHG)
	__uks_slab_default_fastpath = FASTPATH_CMPXCHG;
#else
	__uks_slab_default_fastpath = rseq_locking ? FASTPATH_RSEQ : FASTPATH_CMPXCHG;
#endif
	if (env && !strcmp(env, "cmpxchg16b"))
		__uks_slab_default_fastpath = FASTPATH_CMPXCHG;
	else if (env && !strcmp(env, "rt"))
		__uks_slab_default_fastpath = FASTPATH_RT;
	else if (env && !strcmp(env, "rseq") && rseq_locking)
		__uks_slab_default_fastpath = FASTPATH_RSEQ;
	return 0;
}


static void lock_wait(unsigned int *spins)
{
	if (++*spins < 64)
		cpu_relax();
	else
		sched_yield();
}

static bool cas_lock(struct kmem_cache_cpu *c, unsigned long bits)
{
	unsigned long tid = __atomic_load_n(&c->tid, __ATOMIC_RELAXED);

	return !(tid & TID_LOCKED) &&
	       __atomic_compare_exchange_n(&c->tid, &tid, tid | bits, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/**
 * __uks_cpu_slab_lock - take the local lock of the calling thread's CPU slot
 * @s: cache
 * @cpu: set to the slot's CPU
 *
 * The thread may migrate afterwards; it keeps the slot it locked.
 * Return: the locked slot.
 */
struct kmem_cache_cpu *__uks_cpu_slab_lock(struct uks_kmem_cache *s, unsigned int *cpu)
{
	unsigned int spins = 0;

	for (;;) {
		unsigned int here = this_cpu_index(s);
		struct kmem_cache_cpu *c = cpu_slab(s, here);
		int got;

#if UKS_HAVE_RSEQ_ASM
		if (rseq_locking && s->fastpath != FASTPATH_CMPXCHG)
			got = rseq_trylock(s, c, here, uks_rseq_off());
		else
#endif
			got = cas_lock(c, TID_LOCKED);
		if (got > 0) {
			*cpu = here;
			return c;
		}
		if (got == 0)
			lock_wait(&spins);
		/* got < 0: migrated since reading the CPU; pick the new one. */
	}
}

/**
 * __uks_cpu_slab_lock_remote - take the local lock of CPU @cpu's slot
 * @s: cache
 * @cpu: any possible CPU
 *
 * The analogue of running flush work on @cpu: slow, for flushes only.
 */
void __uks_cpu_slab_lock_remote(struct uks_kmem_cache *s, unsigned int cpu)
{
	struct kmem_cache_cpu *c = cpu_slab(s, cpu);
	unsigned int spins = 0;

	if (!rseq_locking || s->fastpath == FASTPATH_CMPXCHG) {
		while (!cas_lock(c, TID_LOCKED))
			lock_wait(&spins);
		return;
	}
	for (;;) {
		if (cas_lock(c, TID_LOCKED | TID_REMOTE)) {
			/* Abort sections in flight on @cpu, then check we still own it. */
			if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ,
				       MEMBARRIER_CMD_FLAG_CPU, (int)cpu) < 0)
				membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_RSEQ, 0, 0);
			if (__atomic_load_n(&c->tid, __ATOMIC_ACQUIRE) & TID_REMOTE)
				return;
		}
		lock_wait(&spins);
	}
}


