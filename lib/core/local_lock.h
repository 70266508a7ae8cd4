/* SPDX-License-Identifier: MIT */
/*
 * uks_local_lock: a per-CPU lock with PREEMPT_RT semantics.
 *
 * In a !RT kernel, local_lock_irqsave() just disables interrupts on this
 * CPU, which user space cannot do.  On PREEMPT_RT it is a per-CPU sleeping
 * spinlock plus migrate_disable(): the holder can be preempted, other tasks
 * on that CPU block on the lock, and the holder keeps working on that CPU's
 * data.  That is what this is.  Since a user thread cannot disable
 * migration, uks_local_lock() returns the CPU whose lock it took and the
 * caller must use that CPU's data until it unlocks, even if the thread has
 * migrated meanwhile.  Remote CPUs' locks can be taken by number (the
 * analogue of running flush work on that CPU).
 *
 * Lock order: a thread holds at most one local lock of a given set, except
 * a flusher that takes them in ascending CPU order.
 */
#ifndef UKS_LIB_CORE_LOCAL_LOCK_H
#define UKS_LIB_CORE_LOCAL_LOCK_H

#include <assert.h>
#include <pthread.h>
#include <stdbool.h>

#include "core/percpu.h"

struct uks_local_lock {
	struct uks_percpu slots;	/* one struct local_lock_slot per CPU */
};

int __uks_local_lock_init(struct uks_local_lock *l);
void __uks_local_lock_destroy(struct uks_local_lock *l);
unsigned int __uks_local_lock(struct uks_local_lock *l);
void __uks_local_lock_cpu(struct uks_local_lock *l, unsigned int cpu);
bool __uks_local_trylock_cpu(struct uks_local_lock *l, unsigned int cpu);
void __uks_local_unlock(struct uks_local_lock *l, unsigned int cpu);
bool __uks_local_lock_held(struct uks_local_lock *l, unsigned int cpu);

#define local_lock_init		__uks_local_lock_init
#define local_lock_destroy	__uks_local_lock_destroy
#define local_lock		__uks_local_lock
#define local_lock_cpu		__uks_local_lock_cpu
#define local_trylock_cpu	__uks_local_trylock_cpu
#define local_unlock		__uks_local_unlock
#define lockdep_assert_local_held(l, cpu) assert(__uks_local_lock_held(l, cpu))

#endif
