// SPDX-License-Identifier: MIT
/*
 * DAMON "self" primitive: reads and writes of the calling process, per
 * 4 KiB page, with userfaultfd.  It runs in the monitored process (the
 * in-process agent libuks-damon-agent.so, or a program linking libuks),
 * and its only target is the process itself (target id = getpid()).
 *
 * Each sampling interval, for every region's sampling page P:
 *
 *   take:    UFFDIO_REGISTER [P, P+4K) MISSING, then UFFDIO_MOVE the page
 *	      to a slot of our own (a private area registered with the same
 *	      userfaultfd): P is now empty, its data sits in the slot.  The
 *	      move is atomic under the page-table lock, so a concurrent
 *	      writer's store lands either in the page before it moves or,
 *	      after a fault, in the page moved back.
 *   fault:   any access to P (user space, or the kernel copying to or from
 *	      P in read(2)/write(2): UFFD_USER_MODE_ONLY is not set, so those
 *	      block too) raises a missing fault; the monitor thread moves the
 *	      page back (which wakes the faulting thread) and records an
 *	      access.
 *   check:   pages not touched are moved back, P is unregistered.
 *
 * Huge pages: when the sampling page lies in a PMD-mapped transparent
 * huge page (PAGEMAP_SCAN's PAGE_IS_HUGE, asked before the window), the
 * whole 2 MiB is registered and moved, as one PMD, to a 2 MiB-aligned
 * slot, and a fault anywhere in it puts all of it back and counts: the
 * kernel's own granularity for huge pages (it tests the PMD's accessed
 * bit), and no split.  Other samples in the same huge page share that
 * answer.  A page split meanwhile is moved piece by piece (held[] in the
 * entry says which pieces), and one that will not move at all falls back
 * to the 4 KiB sample.  The copy mode always works per 4 KiB.
 *
 * A never-populated page (MOVE says -ENOENT) stays registered: a touch
 * faults, is resolved with UFFDIO_ZEROPAGE (what the kernel would have
 * done) and counts.  Where the kernel lacks UFFDIO_MOVE (before 6.8), the
 * fallback is register MISSING|WP, write-protect, copy the page out,
 * MADV_DONTNEED, and UFFDIO_COPY it back on the fault; docs/DAMON.md says
 * what that mode does not survive.
 *
 * What is monitored: private anonymous read-write mappings (the heap,
 * anonymous mmap()s, thread stacks, [stack]); not file mappings, shared
 * memory, the .bss of shared libraries, nor the monitor's own memory (its
 * stack and TLS, this state, the slots, the context).  Pages that the
 * kernel refuses to move (pinned, shared with a fork child, KSM) are not
 * taken that interval.
 *
 * The window rule: between prepare and check the monitor thread touches
 * only memory that is never taken (its stack, this state area, the slots,
 * the context object, the pause counts of self_fork.c), and nothing else
 * ever holds state the monitor needs, so it cannot fault on a page it
 * took away.  A callback's after_sampling runs inside the window too
 * (include/uks/damon.h says what it may touch).  prepare computes
 * the sampling pages into the state area (touching the regions) before
 * taking any page; check gives every page back before touching regions.
 *
 * Events: UFFD_EVENT_REMOVE (the program's MADV_DONTNEED/FREE of a taken
 * page: its data is dropped, as the program asked; the next touch gets
 * zeros), UFFD_EVENT_REMAP (mremap() of a taken page: the entry follows
 * it) and UFFD_EVENT_UNMAP (munmap, or a mapping over it: a taken page is
 * dropped with the mapping, a page not taken yet is not taken; without
 * it a munmap + mmap at the same address between our register and move
 * let us take a page of the new, unwatched mapping, whose next touch
 * read zeros).  Events are handled before the faults read with them.
 * fork(): the child's copy of a taken page
 * would be empty, so a fork handler (pthread_atfork) pauses the monitor:
 * it waits until the monitor has put every page back and closed the
 * window, and no page is taken while a fork runs, also by a monitor that
 * starts meanwhile (self_fork.c).  The handshake is atomics and a futex
 * only: the forking thread may itself fault on a taken page while it
 * waits, and the monitor serves that fault meanwhile.
 *
 * Descriptors: the monitor thread has an fd table of its own
 * (self_own_fd_table()), so the program, which may close every fd it did
 * not open, cannot close the userfaultfd under us; only the eventfd is in
 * both tables, hidden at a high number (fd_guard.c).
 *
 * Lock order: none.  Only the monitor thread touches the table; other
 * threads talk to it through the pause counts (self_fork.c), st->window,
 * st->stop and the eventfd.
 */
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <limits.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
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

#include <uks/slab.h>

#include "core/compiler.h"
#include "core/log.h"
#include "damon/self/self.h"

static struct uks_damon_self_stats self_last;
static int self_orphan_evfd = -1;	/* the program's copy, after the monitor ended */

/*
 * Give the monitor thread an fd table of its own (unshare(CLONE_FILES)).
 * The program cannot know our descriptors: a daemon's close of every fd,
 * even as a raw close_range() system call past the agent's wrappers,
 * would close the userfaultfd, and the kernel then hands the program zero
 * pages where its taken pages were.  Opened in a table of our own, the
 * userfaultfd and /proc files are out of its reach.  The copy of the
 * program's table that unshare() makes is emptied but for our hidden fds
 * (the eventfd and the agent's output) and stderr, for logs: a copy of,
 * say, a pipe the program closes would keep its reader from seeing EOF.
 * 0 and 1 become /dev/null, so no new fd of ours lands there.
 * Return: whether the table is ours (seccomp may refuse unshare()).
 */
static bool self_own_fd_table(void)
{
	int null;

	if (unshare(CLONE_FILES))
		return false;
	__uks_damon_close_range_unhidden(3, ~0U, 0);
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup3(null, 0, O_CLOEXEC);
		dup3(null, 1, O_CLOEXEC);
		if (null > 1)
			close(null);
	}
	return true;
}

/*
 * After the monitor thread was joined, on the joining thread: close the
 * program's copy of the eventfd (see self_own_fd_table()), which the
 * monitor thread could not reach.
 */
static void self_joined(struct uks_damon_ctx *ctx)
{
	(void)ctx;
	__uks_damon_fd_close(__atomic_exchange_n(&self_orphan_evfd, -1, __ATOMIC_ACQ_REL));
}

/* ------------------------------------------------------- the ops table */

/* Return: false when the table is full (init then refuses to start). */
static bool add_excl(struct self_state *st, unsigned long start, unsigned long end)
{
	if (st->nr_excl >= MAX_EXCL)
		return false;
	st->excl[st->nr_excl].start = start & ~(PG - 1);
	st->excl[st->nr_excl].end = DAMON_ALIGN(end, PG);
	st->nr_excl++;
	return true;
}

/* The zero-filled tail (.bss) of every loaded shared object's segments. */
static int bss_of(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct self_state *st = arg;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;	/* the program itself: its .bss is monitored */
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		unsigned long start, end;

		if (ph->p_type != PT_LOAD || ph->p_memsz <= ph->p_filesz)
			continue;
		start = DAMON_ALIGN_DOWN(info->dlpi_addr + ph->p_vaddr + ph->p_filesz, PG);
		end = DAMON_ALIGN(info->dlpi_addr + ph->p_vaddr + ph->p_memsz, PG);
		if (st->nr_bss < MAX_BSS) {
			st->bss[st->nr_bss].start = start;
			st->bss[st->nr_bss].end = end;
			st->nr_bss++;
		}
	}
	return 0;
}

/* Private anonymous rw mappings, minus what lies inside an exclusion. */
static void read_eligible(struct self_state *st)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	unsigned int cap = 0;

	st->nr_bss = 0;
	dl_iterate_phdr(bss_of, st);

	uks_kfree(st->elig);
	st->elig = NULL;
	st->nr_elig = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e, ino;
		char perms[8], path[256] = "";
		int n = 0;

		if (sscanf(line, "%lx-%lx %7s %*s %*s %lu %n", &s, &e, perms, &ino, &n) < 4)
			continue;
		sscanf(line + n, "%255[^\n]", path);
		bool anon = !path[0] || !strcmp(path, "[heap]") || !strcmp(path, "[stack]") ||
			    !strncmp(path, "[anon:", 6);

		if (strcmp(perms, "rw-p") || !anon || ino)
			continue;
		bool inside = false;

		for (unsigned int x = 0; x < st->nr_excl; x++)
			if (s >= st->excl[x].start && e <= st->excl[x].end)
				inside = true;
		if (inside)
			continue;
		if (st->nr_elig == cap) {
			struct damon_addr_range *nr = uks_kmalloc((cap ? cap * 2 : 64) * sizeof(*nr));

			if (!nr)
				break;
			if (st->elig)
				memcpy(nr, st->elig, st->nr_elig * sizeof(*nr));
			uks_kfree(st->elig);
			st->elig = nr;
			cap = cap ? cap * 2 : 64;
		}
		st->elig[st->nr_elig].start = s;
		st->elig[st->nr_elig].end = e;
		st->nr_elig++;
	}
	fclose(f);
}

static bool eligible(struct self_state *st, unsigned long page)
{
	for (unsigned int i = 0; i < st->nr_excl; i++)
		if (page >= st->excl[i].start && page < st->excl[i].end)
			return false;
	for (unsigned int i = 0; i < st->nr_bss; i++)
		if (page >= st->bss[i].start && page < st->bss[i].end)
			return false;
	for (unsigned int i = 0; i < st->nr_elig; i++)
		if (page >= st->elig[i].start && page < st->elig[i].end)
			return true;
	return false;
}

/* [start, end) wholly inside one monitored mapping, nothing excluded in it */
static bool eligible_range(struct self_state *st, unsigned long start, unsigned long end)
{
	for (unsigned int i = 0; i < st->nr_excl; i++)
		if (start < st->excl[i].end && st->excl[i].start < end)
			return false;
	for (unsigned int i = 0; i < st->nr_bss; i++)
		if (start < st->bss[i].end && st->bss[i].start < end)
			return false;
	for (unsigned int i = 0; i < st->nr_elig; i++)
		if (start >= st->elig[i].start && end <= st->elig[i].end)
			return true;
	return false;
}

/*
 * The slots' area: PROT_NONE address space that the slots are made
 * readable and writable in.  No page table, and so no page-table lock, is
 * shared by a slot and the program's memory.  Otherwise a program's
 * mremap(), which takes the PTE lock of the old range and then that of
 * the new one, can meet a UFFDIO_MOVE between a program page and a slot,
 * which takes its two in the order of the locks' addresses, with the
 * locks the other way round: Debian's 6.12.118 hung that way (a soft
 * lockup of both threads) when mremap() put the new range next to the
 * slots.  Huge moves lock PMD tables, so the area is aligned to and
 * padded out to whole PMD tables (1 GiB on x86-64).  Where that
 * reservation fails (a tight RLIMIT_AS), it is padded to whole PTE tables
 * (2 MiB): the huge slots may then share a PMD table with the program;
 * and where that fails too, it holds the 4 KiB slots only.
 */
#define SLOT_AREA_ALIGN	(1UL << 30)

static char *reserve_aligned(size_t len, size_t align)
{
	char *p = mmap(NULL, len + align, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	char *start;

	if (p == MAP_FAILED)
		return NULL;
	start = (char *)DAMON_ALIGN((unsigned long)p, align);
	if (start > p)
		munmap(p, (size_t)(start - p));
	munmap(start + len, (size_t)(p + align - start));
	return start;
}

static unsigned int self_nr_hslots(const struct self_state *st)
{
	return st->cap < MAX_HSLOTS ? st->cap : MAX_HSLOTS;
}

static char *self_slot_area(struct self_state *st)
{
	size_t slots = DAMON_ALIGN(st->slots_len, HPG);
	size_t with_huge = slots + (size_t)self_nr_hslots(st) * HPG;
	const struct { size_t len, align; } tries[] = {
		{ DAMON_ALIGN(with_huge, SLOT_AREA_ALIGN), SLOT_AREA_ALIGN },
		{ with_huge, HPG },
		{ slots, HPG },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(tries); i++) {
		char *p = reserve_aligned(tries[i].len, tries[i].align);

		if (p) {
			st->slot_area = p;
			st->slot_area_len = tries[i].len;
			return p;
		}
	}
	return NULL;
}

/*
 * The huge slots: 2 MiB-aligned, registered, and never touched but by
 * 2 MiB moves, so their PMDs stay empty and a huge page moves in whole.
 * Without PAGEMAP_SCAN (before 6.7) there is none and every sample is
 * 4 KiB, as in the copy mode.  mprotect(), not a mapping over the
 * reservation: a failed one leaves the reservation whole.
 */
static void self_hslots(struct self_state *st)
{
	struct self_pm_scan_arg a = { .size = sizeof(a), .start = (unsigned long)st,
				      .end = (unsigned long)st + PG };
	unsigned int nr = self_nr_hslots(st);
	const char *huge = secure_getenv("UKS_DAMON_SELF_HUGE");
	size_t len = (size_t)nr * HPG;
	char *start = (char *)DAMON_ALIGN((unsigned long)st->slots + st->slots_len, HPG);

	/* UKS_DAMON_SELF_HUGE=0: every sample 4 KiB, as without PAGEMAP_SCAN */
	if (!st->move || (huge && !strcmp(huge, "0")) ||
	    ioctl(st->pagemap_fd, SELF_PAGEMAP_SCAN, &a) < 0)
		return;
	if (start + len > st->slot_area + st->slot_area_len ||
	    mprotect(start, len, PROT_READ | PROT_WRITE))
		return;
	if (__uks_damon_self_reg(st, (unsigned long)start, len, UFFDIO_REGISTER_MODE_MISSING)) {
		mprotect(start, len, PROT_NONE);
		return;
	}
	st->hslots = start;
	st->hslots_len = len;
	st->nr_hslots = nr;
}

static void self_free(struct self_state *st)
{
	if (st->uffd >= 0 && st->move) {
		/* munmap of a registered slot would raise an UNMAP event for us */
		if (st->slots)
			__uks_damon_self_unreg(st, (unsigned long)st->slots, st->slots_len);
		if (st->hslots)
			__uks_damon_self_unreg(st, (unsigned long)st->hslots, st->hslots_len);
	}
	__uks_damon_fd_close(st->uffd);
	__uks_damon_fd_close(st->pagemap_fd);
	__uks_damon_fd_close(st->mem_fd);
	if (st->own_table) {
		/* our copy; the program's goes when a thread of its table joins us */
		if (st->evfd >= 0)
			close(st->evfd);
		__atomic_store_n(&self_orphan_evfd, st->evfd, __ATOMIC_RELEASE);
	} else {
		__uks_damon_fd_close(st->evfd);
	}
	uks_kfree(st->elig);
	if (st->slot_area)
		munmap(st->slot_area, st->slot_area_len);
	munmap(st, st->area_len);
}

/*
 * The regions come from the monitored mappings only (5.15's three-region
 * rules over them): the rest of the address space, libraries and, under
 * ASan, terabytes of shadow, would only dilute the samples.
 */
static void self_regions(struct uks_damon_ctx *ctx, struct self_state *st, bool init)
{
	struct damon_addr_range regions[3];
	struct damon_target *t;

	if (__uks_damon_three_regions_of(st->elig, st->nr_elig, ctx->min_region, regions))
		return;
	damon_for_each_target(t, ctx) {
		if (t->id != (unsigned long)getpid())
			continue;
		if (init && !t->nr_regions)
			__uks_damon_init_regions_of(ctx, t, regions);
		else if (!init)
			__uks_damon_apply_three_regions(ctx, t, regions);
	}
}

static int self_init(struct uks_damon_ctx *ctx)
{
	struct self_state *st;
	unsigned int cap = (unsigned int)(ctx->max_nr_regions < MAX_ENTRIES ?
					  ctx->max_nr_regions : MAX_ENTRIES) + 8;
	size_t len = DAMON_ALIGN(sizeof(*st) + cap * sizeof(struct self_entry), PG);
	unsigned long fork_vars[2];
	int local, ret;

	/*
	 * The program's signal handlers must never run on this thread: a
	 * handler touching a taken page here would wait for itself.  (glibc
	 * keeps its own internal signals deliverable.)
	 */
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	ret = __uks_damon_self_claim();	/* one self context per process */
	if (ret)
		return ret;
	st = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (st == MAP_FAILED)
		return -ENOMEM;
	memset(st, 0, sizeof(*st));
	st->area_len = len;
	st->tid = (pid_t)syscall(SYS_gettid);
	st->e = (struct self_entry *)(st + 1);
	st->cap = cap;
	st->evfd = __uks_damon_fd_hide(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
	st->own_table = self_own_fd_table();
	st->pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	st->mem_fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
	st->uffd = __uks_damon_self_uffd_open(__uks_damon_self_features(&st->move), NULL);
	st->slots_len = (size_t)cap * PG;
	st->slots = self_slot_area(st);
	if (st->slots && mprotect(st->slots, st->slots_len, PROT_READ | PROT_WRITE))
		st->slots = NULL;
	if (st->uffd < 0 || st->evfd < 0 || !st->slots || (!st->move && st->mem_fd < 0) ||
	    (st->move && __uks_damon_self_reg(st, (unsigned long)st->slots, st->slots_len,
			     UFFDIO_REGISTER_MODE_MISSING))) {
		pr_info("damon: the self primitive cannot start: %s",
			st->uffd < 0 ? strerror(-st->uffd) : strerror(errno));
		self_free(st);
		return -EOPNOTSUPP;
	}
	madvise(st->slots, st->slots_len, MADV_NOHUGEPAGE);
	self_hslots(st);
	if (!st->own_table) {	/* in the program's table: out of its way (fd_guard.c) */
		st->uffd = __uks_damon_fd_hide(st->uffd);
		st->pagemap_fd = __uks_damon_fd_hide(st->pagemap_fd);
		st->mem_fd = __uks_damon_fd_hide(st->mem_fd);
	} else {		/* at numbers a callback's write to a program fd cannot meet */
		st->uffd = __uks_damon_fd_move_high(st->uffd);
		st->pagemap_fd = __uks_damon_fd_move_high(st->pagemap_fd);
		st->mem_fd = __uks_damon_fd_move_high(st->mem_fd);
	}
	add_excl(st, (unsigned long)st, (unsigned long)st + len);
	add_excl(st, (unsigned long)st->slot_area, (unsigned long)st->slot_area + st->slot_area_len);
	add_excl(st, (unsigned long)ctx, (unsigned long)ctx + sizeof(*ctx));
#if defined(SELF_ASAN) && defined(__x86_64__)
	add_excl(st, 0x7fff0000UL, 0x10007fff9000UL);	/* ASan's shadow and its gap */
#endif
	/*
	 * The monitor's stack block (glibc puts its TCB and static TLS at
	 * its top): exactly, not the whole mapping, which the kernel may have
	 * merged with the program's memory next to it.
	 */
	pthread_attr_t attr;
	void *stack;
	size_t stack_sz;

	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &stack, &stack_sz))
			add_excl(st, (unsigned long)stack, (unsigned long)stack + stack_sz);
		pthread_attr_destroy(&attr);
	}
	add_excl(st, (unsigned long)&local - 65536, (unsigned long)&local + 4096);
	add_excl(st, (unsigned long)pthread_self(), (unsigned long)pthread_self() + 4096);
	__uks_damon_self_fork_vars(&fork_vars[0], &fork_vars[1]);
	/* read in the window; added last, so that all the others fit too */
	if (!add_excl(st, fork_vars[0], fork_vars[1])) {
		pr_info("damon: the self primitive cannot start: more exclusions than %u",
			MAX_EXCL);
		self_free(st);
		return -ENOSPC;
	}
	st->nr_keep = st->nr_excl;
	read_eligible(st);
	if (__uks_damon_self_publish(st)) {
		self_free(st);
		return -EBUSY;
	}
	ctx->prim_state = st;
	pr_info("damon: self primitive, %s mode%s", st->move ? "UFFDIO_MOVE" : "copy",
		st->nr_hslots ? ", huge pages whole" : "");
	self_regions(ctx, st, true);
	ret = __uks_damon_va_init(ctx);	/* the pidfd; regions are set */
	__uks_damon_va_hide_fds(ctx, st->own_table);
	return ret;
}

static void self_update(struct uks_damon_ctx *ctx)
{
	struct self_state *st = ctx->prim_state;

	if (st) {
		st->nr_excl = st->nr_keep;	/* all permanent */
		read_eligible(st);
		self_regions(ctx, st, false);
	}
}

static struct damon_target *self_target(struct uks_damon_ctx *ctx)
{
	struct damon_target *t;

	damon_for_each_target(t, ctx)
		if (t->id == (unsigned long)getpid() && t->pstate)
			return t;
	return NULL;
}

static void self_prepare(struct uks_damon_ctx *ctx)
{
	struct self_state *st = ctx->prim_state;
	struct damon_target *t = st ? self_target(ctx) : NULL;
	struct damon_region *r;
	unsigned int n = 0, owner = 0;
	unsigned long huge = 0, scanned = 1, prev_end = 0;
	bool scanned_huge = false;

	if (!t)
		return;
	/*
	 * pass 1: nothing is taken yet, the regions may be read.  Regions are
	 * sorted, so samples inside one huge page are neighbours: the first
	 * takes it whole, the others share its answer (alias).
	 */
	__uks_damon_va_pick_sampling_addrs(ctx, t);
	damon_for_each_region(r, t) {
		struct self_entry *e = &st->e[n];
		unsigned long page = r->sampling_addr & ~(PG - 1);
		unsigned long base = page & ~(HPG - 1);

		if (n == st->cap)
			break;
		memset(e, 0, sizeof(*e));
		e->len = PG;
		e->sample = page;
		e->page = eligible(st, page) ? page : 0;
		if (e->page && huge && base == huge) {
			e->alias = owner + 1;
			e->page = 0;
		} else if (e->page && n < st->nr_hslots && prev_end <= base) {
			if (scanned != base) {
				scanned = base;
				scanned_huge = eligible_range(st, base, base + HPG) &&
					       __uks_damon_self_is_huge(st, base);
			}
			if (scanned_huge) {
				e->page = base;
				e->len = HPG;
				huge = base;
				owner = n;
			}
		}
		if (e->page)
			prev_end = e->page + e->len;
		n++;
	}
	st->nr = n;
	st->stats.samples++;
	/* pass 2: the window; only st, the slots and the stack from here */
	__atomic_store_n(&st->window, 1, __ATOMIC_SEQ_CST);
	if (__uks_damon_self_pausing()) {
		__uks_damon_self_close_window(st);
		return;
	}
	for (unsigned int i = 0; i < n && !__uks_damon_self_pausing(); i++)
		if (st->e[i].page) {	/* a fork meanwhile: sleep() closes the window */
			st->stats.sampled++;
			__uks_damon_self_take(st, &st->e[i]);
			/* a page taken a moment ago may be wanted already */
			__uks_damon_self_serve(st);
		}
}

/* Serve faults for @us microseconds (the sampling sleep). */
static void self_sleep(struct uks_damon_ctx *ctx, unsigned long us)
{
	struct self_state *st = ctx->prim_state;
	struct timespec now, until;
	int evfd;

	if (!st)
		return;
	evfd = st->evfd;
	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_sec += (time_t)(us / 1000000);
	until.tv_nsec += (long)(us % 1000000) * 1000;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	for (;;) {
		struct pollfd p[2] = { { st->uffd, POLLIN, 0 }, { evfd, POLLIN, 0 } };
		long long left;
		uint64_t v;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = (long long)(until.tv_sec - now.tv_sec) * 1000000000LL +
		       (until.tv_nsec - now.tv_nsec);
		if (left <= 0 || __atomic_load_n(&st->stop, __ATOMIC_ACQUIRE))
			return;
		struct timespec ts = { (time_t)(left / 1000000000LL), (long)(left % 1000000000LL) };

		if (syscall(SYS_ppoll, p, 2, &ts, NULL, 0) > 0) {
			if (p[0].revents)
				__uks_damon_self_serve(st);
			/*
			 * A wake-up: a pause below says what it was for.  No
			 * log here: the sink is the program's code, and the
			 * window may be open.  An eventfd the program closed
			 * (POLLNVAL) is left out of the next polls.
			 */
			if (p[1].revents & POLLNVAL)
				evfd = -1;
			else if (p[1].revents && read(evfd, &v, sizeof(v)) < 0)
				v = 0;	/* EAGAIN: nothing left to read */
		}
		if (__uks_damon_self_pausing() && __atomic_load_n(&st->window, __ATOMIC_SEQ_CST))
			__uks_damon_self_close_window(st);
	}
}

static unsigned int self_check(struct uks_damon_ctx *ctx)
{
	struct self_state *st = ctx->prim_state;
	struct damon_target *t;
	struct damon_region *r;
	unsigned int n = 0, max = 0;

	if (!st)
		return 0;
	if (__atomic_load_n(&st->window, __ATOMIC_SEQ_CST))
		__uks_damon_self_close_window(st);
	/* window closed: the regions may be touched again */
	t = self_target(ctx);
	if (!t)
		return 0;
	damon_for_each_region(r, t) {
		if (n < st->nr && (st->e[n].accessed ||
				   (st->e[n].alias && st->e[st->e[n].alias - 1].accessed)))
			r->nr_accesses++;
		if (r->nr_accesses > max)
			max = r->nr_accesses;
		n++;
	}
	return max;
}

static void self_wake(struct uks_damon_ctx *ctx)
{
	struct self_state *st = ctx->prim_state;
	uint64_t one = 1;

	if (!st)
		return;
	__atomic_store_n(&st->stop, 1, __ATOMIC_RELEASE);
	if (write(st->evfd, &one, sizeof(one)) < 0)
		return;
}

static void self_cleanup(struct uks_damon_ctx *ctx)
{
	struct self_state *st = ctx->prim_state;

	__uks_damon_va_cleanup(ctx);
	if (!st)
		return;
	if (__atomic_load_n(&st->window, __ATOMIC_SEQ_CST))
		__uks_damon_self_close_window(st);
	__uks_damon_self_unpublish(st);
	pr_debug("damon self: %lu taken (%lu huge), %lu faults, %lu refused, %lu dropped",
		 st->stats.taken, st->stats.huge, st->stats.faults, st->stats.refused,
		 st->stats.dropped);
	self_last = st->stats;
	ctx->prim_state = NULL;
	self_free(st);
}

/**
 * uks_damon_self_stats - what the last self context did
 * @out:	taken pages (of them, huge pages taken whole), faults served,
 *		pages the kernel refused to move, pages dropped with their
 *		mapping (munmap while taken)
 *
 * Filled when a self context ends (its cleanup).
 */
UKS_EXPORT void uks_damon_self_stats(struct uks_damon_self_stats *out)
{
	*out = self_last;
}

/** uks_damon_self_mode - Return: "move" or "copy": how self takes pages here */
UKS_EXPORT const char *uks_damon_self_mode(void)
{
	bool move;

	__uks_damon_self_features(&move);
	return move ? "move" : "copy";
}

const struct damon_primitive __uks_damon_self = {
	.name = "self",
	.available = __uks_damon_self_available,
	.init = self_init,
	.update = self_update,
	.prepare_access_checks = self_prepare,
	.sleep = self_sleep,
	.check_accesses = self_check,
	.wake = self_wake,
	.target_valid = __uks_damon_va_target_valid,
	.cleanup = self_cleanup,
	.joined = self_joined,
};
