// SPDX-License-Identifier: MIT
/*
 * The tracepoints whose probes read the task an event is written for, for
 * writers that must keep that task stopped meanwhile (lib/tracee's relay
 * turns them into stops the keeper may not let go early).  An entry is
 * added before its probe is attached and dropped after it is detached, so
 * a reader that saw a tracepoint generation also sees every such probe
 * attached by then.
 *
 * A writer that resumed the task before writing did so because no such
 * probe was there when it decided, so the kernel, whose probes run at the
 * hit, would have read nothing either: those probes then record nothing
 * (__uks_trace_writer_running()).
 *
 * Lock order: sync_lock is a leaf.
 */
#include <errno.h>
#include <pthread.h>

#include <uks/slab.h>

#include "trace/writer_sync.h"

static pthread_mutex_t sync_lock = PTHREAD_MUTEX_INITIALIZER;
static const struct uks_tracepoint **sync_tps;
static int nr_sync, cap_sync;
static __thread bool writer_running __attribute__((tls_model("initial-exec")));

int __uks_trace_sync_tp_add(const struct uks_tracepoint *tp)
{
	int ret = 0;

	pthread_mutex_lock(&sync_lock);
	if (nr_sync == cap_sync) {
		int cap = cap_sync ? 2 * cap_sync : 8;
		const struct uks_tracepoint **n = uks_krealloc(sync_tps, (size_t)cap * sizeof(*n));

		if (n) {
			sync_tps = n;
			cap_sync = cap;
		}
	}
	if (nr_sync < cap_sync)
		sync_tps[nr_sync++] = tp;
	else
		ret = -ENOMEM;
	pthread_mutex_unlock(&sync_lock);
	return ret;
}

void __uks_trace_sync_tp_del(const struct uks_tracepoint *tp)
{
	pthread_mutex_lock(&sync_lock);
	for (int i = 0; i < nr_sync; i++) {
		if (sync_tps[i] == tp) {
			sync_tps[i] = sync_tps[--nr_sync];
			break;
		}
	}
	pthread_mutex_unlock(&sync_lock);
}

void __uks_trace_for_each_sync_tp(void (*fn)(const struct uks_tracepoint *tp, void *arg),
				  void *arg)
{
	pthread_mutex_lock(&sync_lock);
	for (int i = 0; i < nr_sync; i++)
		fn(sync_tps[i], arg);
	pthread_mutex_unlock(&sync_lock);
}

void __uks_trace_writer_running(bool running)
{
	writer_running = running;
}

bool __uks_trace_writer_is_running(void)
{
	return writer_running;
}
