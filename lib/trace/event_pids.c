// SPDX-License-Identifier: MIT
/*
 * set_event_pid, set_event_notrace_pid and options/event-fork.
 *
 * An instance records an event when no set_event_pid list is set or the
 * writing thread is on it, and the thread is not on set_event_notrace_pid
 * (the kernel's trace_ignore_this_task()).  A list is a sorted array
 * published as one pointer, so a hit sees one whole list; a new list
 * replaces the old one and the old one is freed once no hit can be
 * reading it.
 *
 * With event-fork on, a thread forked by a listed thread joins each list
 * its parent is on, and a listed thread that exits leaves the lists.  The
 * kernel sees every fork; uks sees the forks and exits of the processes
 * it traces (lib/tracee reports them here).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <uks/slab.h>

#include "trace/event_pids.h"
#include "trace/trace.h"

#define PID_MAX		(1 << 30)	/* the kernel's pid list holds pids below it */

/* Instances that may follow forks: a hint that spares forks event_mutex. */
static int fork_followers;

static bool list_has(const struct uks_pid_list *l, pid_t pid)
{
	size_t lo = 0, hi = l->nr;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (l->pids[mid] == pid)
			return true;
		if (l->pids[mid] < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/**
 * __uks_trace_ignore_pid - does @tr skip the events of thread @pid?
 * Called on the hit path; lock-free.
 */
bool __uks_trace_ignore_pid(struct uks_trace *tr, pid_t pid)
{
	const struct uks_pid_list *on = __atomic_load_n(&tr->event_pids, __ATOMIC_ACQUIRE);
	const struct uks_pid_list *off = __atomic_load_n(&tr->notrace_pids, __ATOMIC_ACQUIRE);

	return (on && !list_has(on, pid)) || (off && list_has(off, pid));
}

static struct uks_pid_list **list_of(struct uks_trace *tr, bool notrace)
{
	return notrace ? &tr->notrace_pids : &tr->event_pids;
}

static struct uks_pid_list *list_alloc(size_t cap)
{
	struct uks_pid_list *l = uks_kmalloc(sizeof(*l) + cap * sizeof(pid_t));

	if (l)
		l->nr = 0;
	return l;
}

/*
 * Publish @l (NULL: no list) and free the old one after the hits in
 * flight.  Caller holds event_mutex.
 */
static void list_publish(struct uks_trace *tr, bool notrace, struct uks_pid_list *l)
{
	struct uks_pid_list *old = __atomic_exchange_n(list_of(tr, notrace), l, __ATOMIC_ACQ_REL);
	struct uks_event_file *file;

	if (!old)
		return;
	/* One wait covers every tracepoint's hits in flight. */
	list_for_each_entry(file, &tr->files, list) {
		if (file->call->tp) {
			uks_tracepoint_synchronize(file->call->tp);
			break;
		}
	}
	uks_kfree(old);
}

static int cmp_pid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return (x > y) - (x < y);
}

/* Sort and drop repeats: the list is a set, as the kernel's pid bitmap. */
static void list_settle(struct uks_pid_list *l)
{
	size_t kept = 0;

	qsort(l->pids, l->nr, sizeof(pid_t), cmp_pid);
	for (size_t i = 0; i < l->nr; i++)
		if (!kept || l->pids[i] != l->pids[kept - 1])
			l->pids[kept++] = l->pids[i];
	l->nr = kept;
}

/* Caller holds event_mutex. */
void __uks_trace_show_event_pids(struct uks_trace *tr, bool notrace, struct uks_seq *s)
{
	const struct uks_pid_list *l = *list_of(tr, notrace);

	for (size_t i = 0; l && i < l->nr; i++)
		seq_printf(s, "%d\n", l->pids[i]);
}

/*
 * One pid as trace_pid_write() takes it: kstrtoul() in base 0, then a pid
 * the list cannot hold (negative as a pid_t, or past 2^30) is -EPERM, the
 * kernel's -1.
 */
static int parse_pid(const char *tok, size_t len, pid_t *pid)
{
	char buf[32], *end;
	unsigned long v;

	if (len >= sizeof(buf) || *tok == '-')
		return -EINVAL;
	memcpy(buf, tok, len);
	buf[len] = '\0';
	errno = 0;
	v = strtoul(buf, &end, 0);
	if (end == buf || *end || errno)
		return -EINVAL;
	*pid = (pid_t)v;
	return *pid < 0 || *pid >= PID_MAX ? -EPERM : 0;
}

/**
 * __uks_trace_write_event_pids - a write to set_event_pid or set_event_notrace_pid
 * @tr:		the instance
 * @notrace:	set_event_notrace_pid
 * @text:	white-space separated pids, added to the list; @clear empties
 *		the list first (an open with O_TRUNC)
 *
 * All or nothing, as the kernel: a bad pid leaves the list as it was.
 * Returns 0, -EINVAL, -EPERM or -ENOMEM.
 */
int __uks_trace_write_event_pids(struct uks_trace *tr, bool notrace, const char *text, bool clear)
{
	struct uks_pid_list *cur, *l;
	size_t words = 0, cap;
	const char *p;

	for (p = text; *p; ) {
		p += strspn(p, " \t\n\v\f\r");
		if (*p)
			words++;
		p += strcspn(p, " \t\n\v\f\r");
	}
	pthread_mutex_lock(&__uks_trace_event_mutex);
	cur = clear ? NULL : *list_of(tr, notrace);
	if (!words) {
		if (clear)
			list_publish(tr, notrace, NULL);
		pthread_mutex_unlock(&__uks_trace_event_mutex);
		return 0;
	}
	cap = (cur ? cur->nr : 0) + words;
	l = list_alloc(cap);
	if (!l) {
		pthread_mutex_unlock(&__uks_trace_event_mutex);
		return -ENOMEM;
	}
	if (cur) {
		memcpy(l->pids, cur->pids, cur->nr * sizeof(pid_t));
		l->nr = cur->nr;
	}
	for (p = text; *p; ) {
		size_t n;
		int ret;

		p += strspn(p, " \t\n\v\f\r");
		n = strcspn(p, " \t\n\v\f\r");
		if (!n)
			break;
		ret = parse_pid(p, n, &l->pids[l->nr]);
		if (ret) {
			pthread_mutex_unlock(&__uks_trace_event_mutex);
			uks_kfree(l);
			return ret;
		}
		l->nr++;
		p += n;
	}
	list_settle(l);
	list_publish(tr, notrace, l);
	pthread_mutex_unlock(&__uks_trace_event_mutex);
	return 0;
}

/* Caller holds event_mutex.  For uks_trace_destroy(). */
void __uks_trace_free_event_pids(struct uks_trace *tr)
{
	uks_kfree(tr->event_pids);
	uks_kfree(tr->notrace_pids);
	tr->event_pids = tr->notrace_pids = NULL;
}

/**
 * __uks_trace_event_fork_changed - options/event-fork went on or off
 */
void __uks_trace_event_fork_changed(bool on)
{
	__atomic_add_fetch(&fork_followers, on ? 1 : -1, __ATOMIC_RELAXED);
}

/**
 * __uks_trace_forks_followed - some instance has options/event-fork on
 *
 * Lets the code that sees forks skip work that only event-fork needs.
 */
bool __uks_trace_forks_followed(void)
{
	return __atomic_load_n(&fork_followers, __ATOMIC_RELAXED) > 0;
}

/*
 * Add @pid to (@add) or remove it from the list, as a new list.  Caller
 * holds event_mutex; -ENOMEM leaves the list as it was.
 */
static int list_change(struct uks_trace *tr, bool notrace, pid_t pid, bool add)
{
	struct uks_pid_list *cur = *list_of(tr, notrace), *l;
	size_t i = 0, o = 0;

	if (!cur || list_has(cur, pid) == add)
		return 0;
	l = list_alloc(cur->nr + 1);
	if (!l)
		return -ENOMEM;
	for (; i < cur->nr && cur->pids[i] < pid; i++)
		l->pids[o++] = cur->pids[i];
	if (add)
		l->pids[o++] = pid;
	else
		i++;
	for (; i < cur->nr; i++)
		l->pids[o++] = cur->pids[i];
	l->nr = o;
	/* A list the last pid left stays, empty: it still filters (all out). */
	list_publish(tr, notrace, l);
	return 0;
}

/**
 * __uks_trace_task_fork - @parent forked @child (a process or a thread)
 *
 * In every instance with event-fork on, @child joins each pid list
 * @parent is on.  From the code that sees the fork (lib/tracee).
 */
void __uks_trace_task_fork(pid_t parent, pid_t child)
{
	struct uks_trace *tr;

	if (!__atomic_load_n(&fork_followers, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	list_for_each_entry(tr, &__uks_trace_traces, list) {
		if (!trace_opt(tr, UKS_OPT_EVENT_FORK))
			continue;
		for (int notrace = 0; notrace < 2; notrace++) {
			const struct uks_pid_list *l = *list_of(tr, notrace);

			if (l && list_has(l, parent))
				(void)list_change(tr, notrace, child, true);	/* kept as it was */
		}
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
}

/**
 * __uks_trace_task_exit - thread @pid exited
 *
 * In every instance with event-fork on, @pid leaves the pid lists (the
 * kernel frees it from them with the task).
 */
void __uks_trace_task_exit(pid_t pid)
{
	struct uks_trace *tr;

	if (!__atomic_load_n(&fork_followers, __ATOMIC_RELAXED))
		return;
	pthread_mutex_lock(&__uks_trace_event_mutex);
	list_for_each_entry(tr, &__uks_trace_traces, list) {
		if (!trace_opt(tr, UKS_OPT_EVENT_FORK))
			continue;
		for (int notrace = 0; notrace < 2; notrace++)
			(void)list_change(tr, notrace, pid, false);
	}
	pthread_mutex_unlock(&__uks_trace_event_mutex);
}
