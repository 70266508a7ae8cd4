// SPDX-License-Identifier: MIT
/*
 * sched:sched_switch for the tasks of tracee sessions, from the kernel's
 * own context-switch records.
 *
 * While a probe is attached (regfunc to unregfunc), one CPU-wide perf
 * "dummy" event per CPU with context_switch set reports every switch on
 * that CPU as PERF_RECORD_SWITCH_CPU_WIDE records, stamped with
 * CLOCK_MONOTONIC.  The switch-out record of each switch names both sides
 * (the task leaving in its sample id, the one coming in its body) and
 * whether the task left preempted.  A switch where either side is a
 * thread of a session in this process becomes one sched_switch record,
 * written on the record's CPU at its time (trace/origin.h) as the task
 * that left, as the kernel's tracepoint in __schedule() is.  With no
 * probe there are no perf events and no cost.
 *
 * Fields: comm and prio from /proc/TID/stat when the record is read
 * (comm of a thread already gone from the session's record of it; the
 * idle task is swapper/CPU at prio 120).  prev_state is the kernel's
 * TASK_REPORT_MAX ("R+") for a task perf saw still runnable (preempted;
 * also a sched_yield(), which the kernel prints "R"); otherwise it slept,
 * and its state is the one /proc shows when the record is read if it is
 * still not running, else TASK_INTERRUPTIBLE ("S").
 *
 * CPU-wide context-switch records need perf_event_paranoid <= 0 or
 * CAP_PERFMON; without them the event exists and records nothing.
 *
 * Records are read by a thread (woken by the watermark, or every
 * POLL_MS) and by the session's stop handler (__uks_tracee_sw_flush), so
 * switches that happened before a stop are in the buffer before the
 * stop's own events.  The readers take drain_lock.
 *
 * Lock order: the tracepoint registry lock (around regfunc/unregfunc)
 * before state_lock before drain_lock before tasks_lock (a leaf).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <uks/trace.h>

#include "trace/origin.h"
#include "tracee/events.h"

#define DATA_PAGES	64		/* per CPU, a power of two */
#define POLL_MS		10

/* The kernel's TASK_REPORT bits (5.15 include/linux/sched.h) */
#define REPORT_S	0x0001
#define REPORT_D	0x0002
#define REPORT_T	0x0004
#define REPORT_t	0x0008
#define REPORT_X	0x0010
#define REPORT_Z	0x0020
#define REPORT_P	0x0040
#define REPORT_I	0x0080
#define REPORT_MAX	0x0100		/* preempted: printed "R+" */

struct switch_rec {
	struct uks_trace_entry ent;
	char prev_comm[16];
	pid_t prev_pid;
	int prev_prio;
	long prev_state;
	char next_comm[16];
	pid_t next_pid;
	int next_prio;
};

#define F(type, name, sgn, ft) \
	{ type, #name, offsetof(struct switch_rec, name), \
	  sizeof(((struct switch_rec *)0)->name), sgn, ft }

static const struct uks_event_field switch_fields[] = {
	F("char[16]", prev_comm, true, UKS_FILTER_STATIC_STRING),
	F("pid_t", prev_pid, true, UKS_FILTER_OTHER),
	F("int", prev_prio, true, UKS_FILTER_OTHER),
	F("long", prev_state, true, UKS_FILTER_OTHER),
	F("char[16]", next_comm, true, UKS_FILTER_STATIC_STRING),
	F("pid_t", next_pid, true, UKS_FILTER_OTHER),
	F("int", next_prio, true, UKS_FILTER_OTHER),
};

static int switch_print(char *buf, size_t len, const void *rec)
{
	static const char letters[] = "SDTtXZPI";
	const struct switch_rec *r = rec;
	long st = r->prev_state & (REPORT_MAX - 1);
	char state[32];
	size_t n = 0;

	state[0] = '\0';
	for (int i = 0; i < 8; i++) {
		if (!(st & (1L << i)))
			continue;
		n += (size_t)snprintf(state + n, sizeof(state) - n, "%s%c", n ? "|" : "",
				      letters[i]);
	}
	return snprintf(buf, len, "prev_comm=%.16s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
			"next_comm=%.16s next_pid=%d next_prio=%d", r->prev_comm, r->prev_pid,
			r->prev_prio, st ? state : "R", r->prev_state & REPORT_MAX ? "+" : "",
			r->next_comm, r->next_pid, r->next_prio);
}

#define REPORT "(0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040)"

static void sw_reg(void);
static void sw_unreg(void);

static struct uks_tracepoint switch_tp = {
	.system = "sched",
	.name = "sched_switch",
	.fields = switch_fields,
	.nr_fields = sizeof(switch_fields) / sizeof(switch_fields[0]),
	.fixed_size = sizeof(struct switch_rec),
	.print_fmt = "UKS_TP_PRINTK(\"prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> "
		"next_comm=%s next_pid=%d next_prio=%d\", REC->prev_comm, REC->prev_pid, "
		"REC->prev_prio, (REC->prev_state & (((" REPORT " + 1) << 1) - 1)) ? "
		"__print_flags(REC->prev_state & (((" REPORT " + 1) << 1) - 1), \"|\", "
		"{ 0x0001, \"S\" }, { 0x0002, \"D\" }, { 0x0004, \"T\" }, { 0x0008, \"t\" }, "
		"{ 0x0010, \"X\" }, { 0x0020, \"Z\" }, { 0x0040, \"P\" }, { 0x0080, \"I\" }) : \"R\", "
		"REC->prev_state & ((" REPORT " + 1) << 1) ? \"+\" : \"\", REC->next_comm, "
		"REC->next_pid, REC->next_prio)",
	.print = switch_print,
	.regfunc = sw_reg,
	.unregfunc = sw_unreg,
};

/* ---- the threads of the sessions ------------------------------------- */

#define TASKS_HASH	256

struct sw_task {
	pid_t tid, tgid;
	char comm[16];
	struct sw_task *next;
};

static pthread_rwlock_t tasks_lock = PTHREAD_RWLOCK_INITIALIZER;
static struct sw_task *tasks[TASKS_HASH];

static unsigned int task_hash(pid_t tid)
{
	return (unsigned int)tid * 2654435761u >> 24;
}

/** __uks_tracee_sw_track - @tid (of @tgid, named @comm) is a session's thread */
void __uks_tracee_sw_track(pid_t tid, pid_t tgid, const char *comm)
{
	struct sw_task *t, **head = &tasks[task_hash(tid)];

	pthread_rwlock_wrlock(&tasks_lock);
	for (t = *head; t && t->tid != tid; t = t->next)
		;
	if (!t && (t = calloc(1, sizeof(*t)))) {
		t->tid = tid;
		t->next = *head;
		*head = t;
	}
	if (t) {
		t->tgid = tgid;
		strncpy(t->comm, comm, 15);
		t->comm[15] = '\0';
	}
	pthread_rwlock_unlock(&tasks_lock);
}

/** __uks_tracee_sw_untrack - @tid left its session */
void __uks_tracee_sw_untrack(pid_t tid)
{
	struct sw_task *t, **pp = &tasks[task_hash(tid)];

	pthread_rwlock_wrlock(&tasks_lock);
	while ((t = *pp) && t->tid != tid)
		pp = &t->next;
	if (t)
		*pp = t->next;
	pthread_rwlock_unlock(&tasks_lock);
	free(t);
}

static bool task_lookup(pid_t tid, struct uks_trace_task *out)
{
	struct sw_task *t;

	if (tid <= 0)
		return false;
	pthread_rwlock_rdlock(&tasks_lock);
	for (t = tasks[task_hash(tid)]; t && t->tid != tid; t = t->next)
		;
	if (t && out) {
		out->pid = t->tid;
		out->tgid = t->tgid;
		memcpy(out->comm, t->comm, 16);
	}
	pthread_rwlock_unlock(&tasks_lock);
	return t != NULL;
}

/* ---- one side of a switch --------------------------------------------- */

struct side {
	struct uks_trace_task task;
	int prio;
	char state;		/* /proc's letter, or 0 */
	char comm0[16];		/* the session's record of comm */
};

/*
 * /proc/TID/stat files stay open (the reader reads the same few tasks
 * over and over; a path walk costs more than the read): pread() of an
 * open one shows the task as it is now, and fails once the task is
 * gone, so a reused tid never reads another task's file.  Touched by
 * the drainer only (drain_lock).
 */
#define STAT_FDS	128

static struct { pid_t tid; int fd; } stat_fds[STAT_FDS];	/* fd valid if tid */

static ssize_t read_stat(pid_t tid, char *buf, size_t len)
{
	unsigned int h = (unsigned int)tid % STAT_FDS;
	char path[64];
	ssize_t n;

	if (stat_fds[h].tid == tid) {
		n = pread(stat_fds[h].fd, buf, len, 0);
		if (n > 0)
			return n;
	}
	if (stat_fds[h].tid)
		close(stat_fds[h].fd);
	stat_fds[h].tid = 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	stat_fds[h].fd = open(path, O_RDONLY | O_CLOEXEC);
	if (stat_fds[h].fd < 0)
		return -1;
	stat_fds[h].tid = tid;
	return pread(stat_fds[h].fd, buf, len, 0);
}

static void close_stat_fds(void)
{
	for (int i = 0; i < STAT_FDS; i++) {
		if (stat_fds[i].tid)
			close(stat_fds[i].fd);
		stat_fds[i].tid = 0;
	}
}

static void read_side(struct side *s, pid_t tid, pid_t tgid, unsigned int cpu, bool tracked)
{
	char buf[512], *open_paren, *close_paren, *p;
	int field = 3;
	ssize_t n;

	s->prio = 120;
	s->state = 0;
	memcpy(s->comm0, s->task.comm, 16);
	if (!tracked) {
		memset(&s->task, 0, sizeof(s->task));
		s->task.pid = tid;
		s->task.tgid = tgid;
	}
	if (tid == 0) {
		snprintf(s->task.comm, sizeof(s->task.comm), "swapper/%u", cpu);
		return;
	}
	n = read_stat(tid, buf, sizeof(buf) - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	open_paren = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!open_paren || !close_paren || close_paren < open_paren || close_paren[1] != ' ')
		return;
	n = close_paren - open_paren - 1;
	if (n > 15)
		n = 15;
	memcpy(s->task.comm, open_paren + 1, (size_t)n);
	s->task.comm[n] = '\0';
	s->state = close_paren[2];
	/* field 3 is the state, field 18 the priority ((prio - 100) for /proc) */
	for (p = close_paren + 2; *p && field < 18; p++)
		if (*p == ' ')
			field++;
	if (*p)
		s->prio = atoi(p) + 100;
}

static long prev_state(char letter, bool preempted)
{
	if (preempted)
		return REPORT_MAX;
	switch (letter) {
	case 'D': return REPORT_D;
	case 'T': return REPORT_T;
	case 't': return REPORT_t;
	case 'X': return REPORT_X;
	case 'Z': return REPORT_Z;
	case 'P': return REPORT_P;
	case 'I': return REPORT_I;
	default: return REPORT_S;	/* 'S', or running again: it slept */
	}
}

static void write_switch(unsigned int cpu, uint64_t time, pid_t prev_tgid, pid_t prev_tid,
			 pid_t next_tgid, pid_t next_tid, bool preempted)
{
	struct side prev = { .task.pid = 0 }, next = { .task.pid = 0 };
	bool prev_ours = task_lookup(prev_tid, &prev.task);
	bool next_ours = task_lookup(next_tid, &next.task);
	struct switch_rec r;

	if (!prev_ours && !next_ours)
		return;
	read_side(&prev, prev_tid, prev_tgid, cpu, prev_ours);
	read_side(&next, next_tid, next_tgid, cpu, next_ours);
	/* comm changed (exec, PR_SET_NAME): keep it for when /proc is gone */
	if (prev_ours && prev.state && strcmp(prev.task.comm, prev.comm0))
		__uks_tracee_sw_track(prev_tid, prev.task.tgid, prev.task.comm);
	if (next_ours && next.state && strcmp(next.task.comm, next.comm0))
		__uks_tracee_sw_track(next_tid, next.task.tgid, next.task.comm);
	memset(&r, 0, sizeof(r));
	memcpy(r.prev_comm, prev.task.comm, 16);
	r.prev_pid = prev_tid;
	r.prev_prio = prev.prio;
	r.prev_state = prev_state(prev.state, preempted);
	memcpy(r.next_comm, next.task.comm, 16);
	r.next_pid = next_tid;
	r.next_prio = next.prio;
	uks_trace_set_task(&prev.task);
	__uks_trace_set_origin((int)cpu, time);
	uks_tracepoint_emit(&switch_tp, (char *)&r + sizeof(r.ent), sizeof(r) - sizeof(r.ent));
	__uks_trace_clear_origin();
	uks_trace_set_task(NULL);
}

/* ---- the perf events ---------------------------------------------------- */

struct sw_cpu {
	int fd;
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	size_t size;		/* data bytes */
};

static pthread_mutex_t state_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t drain_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sw_cpu *cpus;
static unsigned int nr_cpus;
static int wake_fd = -1;
static pthread_t reader;
static bool reader_running;
static int on;			/* records are being read (an atomic flag) */

/* The sample_id trailer: PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint32_t cpu, res;
};

struct switch_wide {
	struct perf_event_header hdr;
	uint32_t next_prev_pid, next_prev_tid;
	struct sample_id id;
};

static void handle(unsigned int cpu, const unsigned char *rec, size_t len)
{
	const struct perf_event_header *hdr = (const void *)rec;
	struct switch_wide sw;

	if (hdr->type != PERF_RECORD_SWITCH_CPU_WIDE || len < sizeof(sw) ||
	    !(hdr->misc & PERF_RECORD_MISC_SWITCH_OUT))
		return;
	memcpy(&sw, rec, sizeof(sw));
	write_switch(cpu, sw.id.time, (pid_t)sw.id.pid, (pid_t)sw.id.tid,
		     (pid_t)sw.next_prev_pid, (pid_t)sw.next_prev_tid,
		     hdr->misc & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
}

/* Read every record of @c's buffer (drain_lock held). */
static void drain_cpu(unsigned int cpu, struct sw_cpu *c)
{
	uint64_t head = __atomic_load_n(&c->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = c->meta->data_tail;
	unsigned char buf[256];

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header hdr;
		size_t off = (size_t)(tail & (c->size - 1));
		size_t first;

		first = c->size - off < sizeof(hdr) ? c->size - off : sizeof(hdr);
		memcpy(&hdr, c->data + off, first);
		memcpy((char *)&hdr + first, c->data, sizeof(hdr) - first);
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		if (hdr.type == PERF_RECORD_SWITCH_CPU_WIDE && hdr.size <= sizeof(buf)) {
			first = c->size - off < hdr.size ? c->size - off : hdr.size;
			memcpy(buf, c->data + off, first);
			memcpy(buf + first, c->data, hdr.size - first);
			handle(cpu, buf, hdr.size);
		}
		tail += hdr.size;
	}
	__atomic_store_n(&c->meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void drain_all(void)
{
	pthread_mutex_lock(&drain_lock);
	for (unsigned int i = 0; cpus && i < nr_cpus; i++)
		if (cpus[i].fd >= 0)
			drain_cpu(i, &cpus[i]);
	pthread_mutex_unlock(&drain_lock);
}

/**
 * __uks_tracee_sw_flush - write the switches the kernel has reported so far
 *
 * Called at each stop of a tracee while the event is on: what the tracees
 * did before the stop is in the trace before the stop's events.
 */
void __uks_tracee_sw_flush(void)
{
	if (__atomic_load_n(&on, __ATOMIC_ACQUIRE))
		drain_all();
}

static void *reader_main(void *arg)
{
	struct pollfd *pfd = arg;

	uks_trace_set_thread_cmdline(false);
	for (;;) {
		int n = poll(pfd, nr_cpus + 1, POLL_MS);

		if (n > 0 && pfd[nr_cpus].revents)
			break;
		drain_all();
	}
	free(pfd);
	return NULL;
}

static int open_cpu(unsigned int cpu, struct sw_cpu *c)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct perf_event_attr attr;
	void *map;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_DUMMY;
	attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	attr.sample_id_all = 1;
	attr.context_switch = 1;
	attr.use_clockid = 1;
	attr.clockid = CLOCK_MONOTONIC;
	attr.watermark = 1;
	attr.wakeup_watermark = (uint32_t)(DATA_PAGES * page / 4);
	c->fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (c->fd < 0)
		return -errno;
	c->size = DATA_PAGES * page;
	map = mmap(NULL, page + c->size, PROT_READ | PROT_WRITE, MAP_SHARED, c->fd, 0);
	if (map == MAP_FAILED) {
		close(c->fd);
		c->fd = -1;
		return -errno;
	}
	c->meta = map;
	c->data = (unsigned char *)map + c->meta->data_offset;
	if (c->meta->data_size)
		c->size = (size_t)c->meta->data_size;
	return 0;
}

static void close_all(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	for (unsigned int i = 0; cpus && i < nr_cpus; i++) {
		if (cpus[i].fd < 0)
			continue;
		munmap(cpus[i].meta, page + cpus[i].size);
		close(cpus[i].fd);
	}
	free(cpus);
	cpus = NULL;
	nr_cpus = 0;
}

/* Before the first probe: open the events (all that the permissions allow). */
static void sw_reg(void)
{
	struct pollfd *pfd;
	long n = sysconf(_SC_NPROCESSORS_CONF);
	unsigned int opened = 0;

	pthread_mutex_lock(&state_lock);
	if (reader_running || n <= 0)
		goto out;
	nr_cpus = (unsigned int)n;
	cpus = calloc(nr_cpus, sizeof(*cpus));
	pfd = calloc(nr_cpus + 1, sizeof(*pfd));
	wake_fd = eventfd(0, EFD_CLOEXEC);
	if (!cpus || !pfd || wake_fd < 0)
		goto fail;
	for (unsigned int i = 0; i < nr_cpus; i++) {
		cpus[i].fd = -1;
		if (!open_cpu(i, &cpus[i]))
			opened++;
		pfd[i].fd = cpus[i].fd;
		pfd[i].events = POLLIN;
	}
	pfd[nr_cpus].fd = wake_fd;
	pfd[nr_cpus].events = POLLIN;
	if (!opened || pthread_create(&reader, NULL, reader_main, pfd))
		goto fail;
	reader_running = true;
	__atomic_store_n(&on, 1, __ATOMIC_RELEASE);
	goto out;
fail:
	free(pfd);
	close_all();
	if (wake_fd >= 0)
		close(wake_fd);
	wake_fd = -1;
out:
	pthread_mutex_unlock(&state_lock);
}

/* After the last probe is gone: stop reading, close the events. */
static void sw_unreg(void)
{
	uint64_t one = 1;

	pthread_mutex_lock(&state_lock);
	if (reader_running) {
		__atomic_store_n(&on, 0, __ATOMIC_RELEASE);
		while (write(wake_fd, &one, sizeof(one)) != sizeof(one) && errno == EINTR)
			;
		pthread_join(reader, NULL);
		reader_running = false;
		pthread_mutex_lock(&drain_lock);
		close_all();
		close_stat_fds();
		pthread_mutex_unlock(&drain_lock);
		close(wake_fd);
		wake_fd = -1;
	}
	pthread_mutex_unlock(&state_lock);
}

/** __uks_tracee_sched_switch_init - register sched:sched_switch (once, from sched_events.c) */
int __uks_tracee_sched_switch_init(void)
{
	return uks_tracepoint_register(&switch_tp);
}
