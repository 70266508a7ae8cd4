// SPDX-License-Identifier: MIT
/* uks_local_lock: see local_lock.h for the semantics. */
#include <errno.h>
#include <pthread.h>

#include "core/local_lock.h"

struct local_lock_slot {
	pthread_mutex_t mutex;
	pthread_t owner;	/* valid while held; for assertions only */
	bool held;
};

static struct local_lock_slot *slot(struct uks_local_lock *l, unsigned int cpu)
{
	return uks_per_cpu_ptr(&l->slots, cpu);
}

int __uks_local_lock_init(struct uks_local_lock *l)
{
	unsigned int cpu;
	int ret = __uks_percpu_alloc(&l->slots, sizeof(struct local_lock_slot));

	if (ret)
		return ret;
	for_each_possible_cpu(cpu, &l->slots)
		pthread_mutex_init(&slot(l, cpu)->mutex, NULL);
	return 0;
}

void __uks_local_lock_destroy(struct uks_local_lock *l)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu, &l->slots)
		pthread_mutex_destroy(&slot(l, cpu)->mutex);
	__uks_percpu_free(&l->slots);
}

static void mark_held(struct local_lock_slot *s)
{
	s->owner = pthread_self();
	s->held = true;
}

/* Lock the current CPU's lock; return the CPU whose data it now guards. */
unsigned int __uks_local_lock(struct uks_local_lock *l)
{
	unsigned int cpu = (unsigned int)uks_this_cpu();

	__uks_local_lock_cpu(l, cpu);
	return cpu;
}

void __uks_local_lock_cpu(struct uks_local_lock *l, unsigned int cpu)
{
	struct local_lock_slot *s = slot(l, cpu);

	pthread_mutex_lock(&s->mutex);
	mark_held(s);
}

bool __uks_local_trylock_cpu(struct uks_local_lock *l, unsigned int cpu)
{
	struct local_lock_slot *s = slot(l, cpu);

	if (pthread_mutex_trylock(&s->mutex))
		return false;
	mark_held(s);
	return true;
}

void __uks_local_unlock(struct uks_local_lock *l, unsigned int cpu)
{
	struct local_lock_slot *s = slot(l, cpu);

	s->held = false;
	pthread_mutex_unlock(&s->mutex);
}

/* True if the calling thread holds @cpu's lock. */
bool __uks_local_lock_held(struct uks_local_lock *l, unsigned int cpu)
{
	struct local_lock_slot *s = slot(l, cpu);

	return s->held && pthread_equal(s->owner, pthread_self());
}
