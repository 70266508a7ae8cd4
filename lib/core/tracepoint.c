// SPDX-License-Identifier: MIT
/*
 * Tracepoints: the registry of static events and the probe lists that
 * tracers attach to them (the kernel's kernel/tracepoint.c, reduced).
 *
 * A hit loads tp->probes and runs each probe's reserve/commit pair.  The
 * array is replaced whole on attach/detach, never changed in place, so a
 * hit sees either the old or the new list.  Before the old array (and a
 * detaching tracer's probe data) may be freed, every hit that could have
 * loaded it must be over: a grace period, as the kernel's
 * tracepoint_synchronize_unregister() waits for one.
 *
 * The read side costs no atomic instruction (the URCU "membarrier"
 * scheme): each thread counts its hits in progress in its own record,
 * split by phase, with plain increments.  A grace period flips the global
 * phase between two membarrier(PRIVATE_EXPEDITED) calls, which order every
 * running thread's memory accesses against ours, and waits until no
 * thread's count for the old phase is non-zero.  A hit whose increment we
 * could not see started after the barrier and therefore loads the new
 * array.  Signal handlers nest on the same counter: a handler's hit
 * increments and decrements before the interrupted code resumes.  Without
 * membarrier (old kernels, seccomp) hits fall back to atomic counting.
 *
 * Thread records are pushed on a lock-free list the first time a thread
 * hits an enabled tracepoint and recycled when it exits (never unlinked),
 * so the first hit from a signal handler cannot deadlock.
 *
 * The arrays come from libc malloc: core sits below the slab allocator.
 *
 * Lock order: registry_lock (attach, detach, registration, for_each) is
 * taken before the locks of a tracepoint's regfunc/unregfunc (the slab's
 * cache list lock, for the kmem events) and is otherwise a leaf.  It is
 * never taken on the hit path.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uks/tracepoint.h>

#include "core/compiler.h"

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static struct uks_tracepoint *registry;
static unsigned long registry_generation;
static unsigned long probes_generation;

struct tp_reader {
	unsigned long nest[2];		/* hits in progress, by phase */
	struct tp_reader *next;		/* on reader_list, forever */
	int in_use;			/* owned by a live thread */
} __cacheline_aligned;

static struct tp_reader *reader_list;
static int gp_phase;			/* the phase new hits count in */
static int gp_mode;			/* 0 unknown, 1 membarrier, 2 atomic fallback */
static pthread_key_t reader_key;
static pthread_once_t reader_once = PTHREAD_ONCE_INIT;
static __thread struct tp_reader *this_reader __attribute__((tls_model("initial-exec")));

static int membarrier(int cmd)
{
	return (int)syscall(__NR_membarrier, cmd, 0, 0);
}

static void reader_exit(void *r)
{
	struct tp_reader *reader = r;

	__atomic_store_n(&reader->in_use, 0, __ATOMIC_RELEASE);
}

static void reader_key_init(void)
{
	pthread_key_create(&reader_key, reader_exit);
	gp_mode = membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0 ? 1 : 2;
}

/* Set while this thread registers: see reader_register(). */
static __thread int reader_registering __attribute__((tls_model("initial-exec")));

/*
 * A thread's first hit registers it, which may allocate.  A signal handler
 * whose hit lands in its own thread's registration would register again
 * and, inside malloc's locks, deadlock on them: that hit is dropped.
 */
static __attribute__((noinline)) struct tp_reader *reader_register(void)
{
	struct tp_reader *r;

	if (reader_registering)
		return NULL;
	reader_registering = 1;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	pthread_once(&reader_once, reader_key_init);
	/* Reuse the record of a thread that exited, else make one. */
	for (r = __atomic_load_n(&reader_list, __ATOMIC_ACQUIRE); r; r = r->next) {
		int free_slot = 0;

		if (__atomic_compare_exchange_n(&r->in_use, &free_slot, 1, false,
						__ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
			break;
	}
	if (!r) {
		if (posix_memalign((void **)&r, UKS_CACHELINE, sizeof(*r))) {
			reader_registering = 0;
			return NULL;
		}
		memset(r, 0, sizeof(*r));
		r->in_use = 1;
		r->next = __atomic_load_n(&reader_list, __ATOMIC_RELAXED);
		while (!__atomic_compare_exchange_n(&reader_list, &r->next, r, false,
						    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
			;
	}
	pthread_setspecific(reader_key, r);
	this_reader = r;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	reader_registering = 0;
	return r;
}

static void *tp_advance(struct uks_tp_iter *it)
{
	if (it->cur) {
		for (it->cur++; it->cur->reserve; it->cur++) {
			it->rec = it->cur->reserve(it->cur->data, it, it->len);
			if (it->rec)
				return it->rec;
		}
	}
	__asm__ __volatile__("" ::: "memory");
	if (likely(gp_mode == 1))
		this_reader->nest[it->phase]--;
	else
		__atomic_sub_fetch(&this_reader->nest[it->phase], 1, __ATOMIC_SEQ_CST);
	return NULL;
}

/**
 * uks_tp_first - start a tracepoint hit
 * @tp:		the tracepoint
 * @it:		iteration state on the caller's stack
 * @len:	record size in bytes, string data included
 *
 * Returns the first probe's record to fill, or NULL when no probe wants
 * this hit.  Called by the emit functions UKS_TRACE_EVENT() generates.
 */
UKS_EXPORT void *uks_tp_first(struct uks_tracepoint *tp, struct uks_tp_iter *it, size_t len)
{
	struct tp_reader *r = this_reader;

	if (unlikely(!r)) {
		r = reader_register();
		if (!r)
			return NULL;
	}
	it->tp = tp;
	it->shared[0] = it->shared[1] = 0;
	it->len = len;
	it->rec = NULL;
	it->phase = __atomic_load_n(&gp_phase, __ATOMIC_RELAXED);
	if (likely(gp_mode == 1)) {
		r->nest[it->phase]++;
		__asm__ __volatile__("" ::: "memory");
		it->probes = __atomic_load_n(&tp->probes, __ATOMIC_RELAXED);
	} else {
		__atomic_add_fetch(&r->nest[it->phase], 1, __ATOMIC_SEQ_CST);
		it->probes = __atomic_load_n(&tp->probes, __ATOMIC_SEQ_CST);
	}
	it->cur = it->probes ? it->probes - 1 : NULL;
	return tp_advance(it);
}

/**
 * uks_tp_next - commit the record just filled and get the next probe's
 * @it:		iteration state from uks_tp_first()
 *
 * Returns the next record to fill or NULL when the hit is over.
 */
UKS_EXPORT void *uks_tp_next(struct uks_tp_iter *it)
{
	it->cur->commit(it->cur->data, it, it->rec, it->len);
	return tp_advance(it);
}

/**
 * uks_tracepoint_emit - fire @tp with a record built by the caller
 * @tp:		a registered tracepoint (possibly defined at run time)
 * @body:	the record after its common header, @len bytes
 * @len:	bytes of @body; the record is sizeof(struct uks_trace_entry) + @len
 *
 * For event sources whose events are not UKS_TRACE_EVENT()s, such as the
 * system-call events built from a table.  Each probe fills the header.
 */
UKS_EXPORT void uks_tracepoint_emit(struct uks_tracepoint *tp, const void *body, size_t len)
{
	struct uks_tp_iter it;
	unsigned char *rec;

	if (!__atomic_load_n(&tp->key, __ATOMIC_RELAXED))
		return;
	for (rec = uks_tp_first(tp, &it, sizeof(struct uks_trace_entry) + len); rec;
	     rec = uks_tp_next(&it))
		memcpy(rec + sizeof(struct uks_trace_entry), body, len);
}

static bool phase_busy(int phase)
{
	for (struct tp_reader *r = __atomic_load_n(&reader_list, __ATOMIC_ACQUIRE); r; r = r->next)
		if (__atomic_load_n(&r->nest[phase], __ATOMIC_ACQUIRE))
			return true;
	return false;
}

static void wait_phase(int phase)
{
	unsigned int spins = 0;

	while (phase_busy(phase)) {
		if (++spins > 100)
			sched_yield();
		else
			cpu_relax();
	}
}

/* A grace period: every hit that started before it has finished. */
static void tp_synchronize(void)
{
	int old;

	pthread_once(&reader_once, reader_key_init);
	if (gp_mode == 1)
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	old = __atomic_load_n(&gp_phase, __ATOMIC_SEQ_CST);
	/* Drain the other phase first: hits from a previous flip may linger. */
	wait_phase(!old);
	__atomic_store_n(&gp_phase, !old, __ATOMIC_SEQ_CST);
	if (gp_mode == 1)
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
	wait_phase(old);
	if (gp_mode == 1)
		membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED);
}

/**
 * uks_tracepoint_synchronize - wait for the hits in flight to finish
 * @tp:		the tracepoint (any hit of any tracepoint is waited for)
 *
 * After it returns, data a probe reads through a pointer replaced before
 * the call (a filter, say) is no longer in use and may be freed.
 */
UKS_EXPORT void uks_tracepoint_synchronize(struct uks_tracepoint *tp)
{
	pthread_mutex_lock(&registry_lock);
	tp_synchronize();
	pthread_mutex_unlock(&registry_lock);
}

static int probe_count(const struct uks_tp_probe *probes)
{
	int n = 0;

	while (probes && probes[n].reserve)
		n++;
	return n;
}

static int tp_replace(struct uks_tracepoint *tp, struct uks_tp_probe *probes, int nr)
{
	struct uks_tp_probe *old = tp->probes;
	bool was_on = tp->key;

	/*
	 * reg before the key is set, unreg after it is cleared: a call site
	 * that trusts the hooks' state instead of the key misses no hit.
	 */
	if (!was_on && nr && tp->regfunc)
		tp->regfunc();
	__atomic_store_n(&tp->probes, probes, __ATOMIC_SEQ_CST);
	__atomic_store_n(&tp->key, nr, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&probes_generation, 1, __ATOMIC_SEQ_CST);
	if (was_on && !nr && tp->unregfunc)
		tp->unregfunc();
	tp_synchronize();
	free(old);
	return 0;
}

/*
 * Bumped after every change of a probe list (and key): whoever caches a
 * decision made from the keys reads it first and decides again when it
 * moved.
 */
unsigned long __uks_tracepoint_generation(void)
{
	return __atomic_load_n(&probes_generation, __ATOMIC_SEQ_CST);
}

/*
 * Writers of probes that live in another process (lib/tracee's keepers
 * decide at each stop whether the tracee must wait) are told of a change
 * before the write that made it returns: one hook, set once.
 */
static void (*probes_sync)(unsigned long gen);

void __uks_tracepoint_set_sync(void (*fn)(unsigned long gen))
{
	__atomic_store_n(&probes_sync, fn, __ATOMIC_RELEASE);
}

/*
 * Called without locks after a write that may have changed probes, with
 * the generation read before it: when it moved, wait until every such
 * holder of a decision has made it again (the hook bounds its wait).
 */
void __uks_tracepoint_sync(unsigned long before)
{
	void (*fn)(unsigned long gen) = __atomic_load_n(&probes_sync, __ATOMIC_ACQUIRE);
	unsigned long gen = __uks_tracepoint_generation();

	if (fn && gen != before)
		fn(gen);
}

/**
 * uks_tracepoint_attach - add a probe to a tracepoint
 * @tp:		the tracepoint
 * @probe:	reserve/commit callbacks and their data (copied)
 *
 * Returns 0, -EEXIST if the same probe (callbacks and data) is attached,
 * or -ENOMEM.
 */
UKS_EXPORT int uks_tracepoint_attach(struct uks_tracepoint *tp, const struct uks_tp_probe *probe)
{
	struct uks_tp_probe *probes;
	int n, i, ret;

	pthread_mutex_lock(&registry_lock);
	n = probe_count(tp->probes);
	for (i = 0; i < n; i++) {
		if (tp->probes[i].data == probe->data &&
		    tp->probes[i].reserve == probe->reserve) {
			pthread_mutex_unlock(&registry_lock);
			return -EEXIST;
		}
	}
	probes = malloc((n + 2) * sizeof(*probes));
	if (!probes) {
		pthread_mutex_unlock(&registry_lock);
		return -ENOMEM;
	}
	if (n)
		memcpy(probes, tp->probes, n * sizeof(*probes));
	probes[n] = *probe;
	memset(&probes[n + 1], 0, sizeof(probes[n + 1]));
	ret = tp_replace(tp, probes, n + 1);
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/**
 * uks_tracepoint_detach - remove a probe; on return no hit uses it
 * @tp:		the tracepoint
 * @probe:	as passed to uks_tracepoint_attach()
 *
 * Returns 0, -ENOENT if it was not attached, or -ENOMEM.
 */
UKS_EXPORT int uks_tracepoint_detach(struct uks_tracepoint *tp, const struct uks_tp_probe *probe)
{
	struct uks_tp_probe *probes = NULL;
	int n, i, j, ret;

	pthread_mutex_lock(&registry_lock);
	n = probe_count(tp->probes);
	for (i = 0; i < n; i++)
		if (tp->probes[i].data == probe->data && tp->probes[i].reserve == probe->reserve)
			break;
	if (i == n) {
		pthread_mutex_unlock(&registry_lock);
		return -ENOENT;
	}
	if (n > 1) {
		probes = malloc(n * sizeof(*probes));
		if (!probes) {
			pthread_mutex_unlock(&registry_lock);
			return -ENOMEM;
		}
		for (j = 0; j < n; j++)
			if (j != i)
				probes[j - (j > i)] = tp->probes[j];
		memset(&probes[n - 1], 0, sizeof(probes[n - 1]));
	}
	ret = tp_replace(tp, probes, n - 1);
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/**
 * uks_tracepoint_register - make a tracepoint visible to tracers
 * @tp:		the tracepoint (static storage)
 *
 * UKS_TRACE_EVENT() definitions register themselves from a constructor.
 * Returns 0 or -EEXIST when one with the same system and name exists.
 */
UKS_EXPORT int uks_tracepoint_register(struct uks_tracepoint *tp)
{
	struct uks_tracepoint **pp;

	pthread_mutex_lock(&registry_lock);
	/* Appended, so events list in definition order, as the kernel's do. */
	for (pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == tp || (!strcmp((*pp)->system, tp->system) && !strcmp((*pp)->name, tp->name))) {
			pthread_mutex_unlock(&registry_lock);
			return -EEXIST;
		}
	}
	tp->next = NULL;
	*pp = tp;
	registry_generation++;
	pthread_mutex_unlock(&registry_lock);
	return 0;
}

/**
 * uks_tracepoint_unregister - withdraw a tracepoint (e.g. before dlclose)
 * @tp:		a registered tracepoint with no probes attached
 */
UKS_EXPORT void uks_tracepoint_unregister(struct uks_tracepoint *tp)
{
	struct uks_tracepoint **pp;

	pthread_mutex_lock(&registry_lock);
	for (pp = &registry; *pp; pp = &(*pp)->next) {
		if (*pp == tp) {
			*pp = tp->next;
			registry_generation++;
			break;
		}
	}
	pthread_mutex_unlock(&registry_lock);
}

/**
 * uks_tracepoint_for_each - visit every registered tracepoint
 * @fn:		callback; a non-zero return stops the walk and is returned
 * @arg:	passed to @fn
 *
 * @fn runs under the registry lock and must not attach or detach.
 */
UKS_EXPORT int uks_tracepoint_for_each(int (*fn)(struct uks_tracepoint *tp, void *arg), void *arg)
{
	struct uks_tracepoint *tp;
	int ret = 0;

	pthread_mutex_lock(&registry_lock);
	for (tp = registry; tp && !ret; tp = tp->next)
		ret = fn(tp, arg);
	pthread_mutex_unlock(&registry_lock);
	return ret;
}

/**
 * uks_tracepoint_generation - a number that changes with the registry
 */
UKS_EXPORT unsigned long uks_tracepoint_generation(void)
{
	return __atomic_load_n(&registry_generation, __ATOMIC_ACQUIRE);
}

/**
 * uks_tracepoint_print_fmt - the "print fmt:" text of a tracepoint
 * @tp:		the tracepoint
 * @len:	set to the text's length (it is not NUL-terminated there)
 *
 * The definition stores its UKS_TP_PRINTK(...) as written; the format file
 * shows what is inside the parentheses, as the kernel shows TP_printk's.
 */
UKS_EXPORT const char *uks_tracepoint_print_fmt(const struct uks_tracepoint *tp, size_t *len)
{
	const char *open = strchr(tp->print_fmt, '(');
	size_t n;

	if (!open) {
		*len = strlen(tp->print_fmt);
		return tp->print_fmt;
	}
	open++;
	n = strlen(open);
	while (n && open[n - 1] != ')')
		n--;
	*len = n ? n - 1 : 0;
	return open;
}
