// SPDX-License-Identifier: MIT
/*
 * The self primitive's userfaultfd side: open it, take a sampled page
 * away (UFFDIO_MOVE, or the copy fallback), give it back, serve faults and
 * the remove/remap/unmap events, close the sampling window; a sample inside a
 * PMD-mapped transparent huge page takes the whole 2 MiB page (see
 * take_huge()).  Only the monitor
 * thread runs this code, and only on memory that is never taken (the
 * state area, the slots, its stack): see the window rule in self.c.
 *
 * Lock order: none.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "damon/self/self.h"

/* ------------------------------------------------------------ uffd */

int __uks_damon_self_uffd_open(uint64_t want, uint64_t *got)
{
	struct uffdio_api api = { .api = UFFD_API, .features = want };
	int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0 && (errno == EPERM || errno == ENOSYS)) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev >= 0) {
			fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
			close(dev);
		}
	}
	if (fd < 0)
		return -errno;
	if (ioctl(fd, UFFDIO_API, &api)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (got)
		*got = api.features;
	return fd;
}

uint64_t __uks_damon_self_features(bool *move)
{
	static int probed;	/* 0 unknown, 1 move, 2 copy */
	const char *mode = secure_getenv("UKS_DAMON_SELF_MODE");
	uint64_t f = 0;
	int fd;

	if (!probed) {
		fd = __uks_damon_self_uffd_open(0, &f);
		if (fd >= 0)
			close(fd);
		probed = (f & UFFD_FEATURE_MOVE) ? 1 : 2;
	}
	*move = probed == 1;
	if (mode && !strcmp(mode, "copy"))
		*move = false;
	/* UNMAP: see take_move(), the move mode's guard against munmap + mmap */
	return *move ? (UFFD_FEATURE_MOVE | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP |
			UFFD_FEATURE_EVENT_UNMAP)
		     : (UFFD_FEATURE_PAGEFAULT_FLAG_WP | UFFD_FEATURE_EVENT_REMAP);
}

int __uks_damon_self_available(char *why, size_t len)
{
	bool move;
	uint64_t want = __uks_damon_self_features(&move);
	int fd = __uks_damon_self_uffd_open(want, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (why && len)
		snprintf(why, len, "no userfaultfd for this process (%s): needs "
			 "CONFIG_USERFAULTFD and CAP_SYS_PTRACE, read-write /dev/userfaultfd or "
			 "vm.unprivileged_userfaultfd=1 (kernel faults must block: "
			 "UFFD_USER_MODE_ONLY is not usable)", strerror(-fd));
	return fd == -EPERM || fd == -EACCES ? -EPERM : -EOPNOTSUPP;
}

int __uks_damon_self_reg(struct self_state *st, unsigned long a, unsigned long len,
			 uint64_t mode)
{
	struct uffdio_register r = { .range = { a, len }, .mode = mode };

	return ioctl(st->uffd, UFFDIO_REGISTER, &r) ? -errno : 0;
}

void __uks_damon_self_unreg(struct self_state *st, unsigned long a, unsigned long len)
{
	struct uffdio_range r = { a, len };

	ioctl(st->uffd, UFFDIO_UNREGISTER, &r);
}

static int do_move(struct self_state *st, unsigned long dst, unsigned long src)
{
	struct self_uffdio_move m = { dst, src, PG, 0, 0 };

	if (ioctl(st->uffd, SELF_UFFDIO_MOVE, &m) == 0 && m.move == (int64_t)PG)
		return 0;
	return m.move < 0 ? (int)m.move : -errno;
}

static int do_copy(struct self_state *st, unsigned long dst, unsigned long src)
{
	struct uffdio_copy c = { .dst = dst, .src = src, .len = PG, .mode = 0 };

	if (ioctl(st->uffd, UFFDIO_COPY, &c) == 0 && c.copy == (int64_t)PG)
		return 0;
	return c.copy < 0 ? (int)c.copy : -errno;
}

static unsigned long slot(struct self_state *st, unsigned int i)
{
	return (unsigned long)st->slots + (unsigned long)i * PG;
}

static unsigned long hslot(struct self_state *st, unsigned int i)
{
	return (unsigned long)st->hslots + (unsigned long)i * HPG;
}

/*
 * UFFDIO_MOVE of @len bytes.  Return: the bytes moved (a short move is
 * progress: the kernel then says -EAGAIN whatever stopped it; asking
 * again for the rest tells the real error), or -errno when none moved.
 */
static long move_range(struct self_state *st, unsigned long dst, unsigned long src,
		       unsigned long len)
{
	struct self_uffdio_move m = { dst, src, len, 0, 0 };

	if (ioctl(st->uffd, SELF_UFFDIO_MOVE, &m) == 0 || m.move > 0)
		return (long)m.move;
	return m.move < 0 ? (long)m.move : -errno;
}

/* The held[] bitmap of a huge entry: which 4 KiB pages its slot holds. */
static bool is_held(const struct self_entry *e, unsigned long k)
{
	return (e->held[k / 64] >> (k % 64)) & 1;
}

static void set_held(struct self_entry *e, unsigned long k, unsigned long n, bool on)
{
	for (; n; k++, n--) {
		if (on)
			e->held[k / 64] |= 1ULL << (k % 64);
		else
			e->held[k / 64] &= ~(1ULL << (k % 64));
	}
}

static bool none_held(const struct self_entry *e)
{
	for (unsigned int w = 0; w < HPG_NR / 64; w++)
		if (e->held[w])
			return false;
	return true;
}

/**
 * __uks_damon_self_is_huge - is [base, base + 2 MiB) one PMD-mapped THP?
 * @st:		the state (its pagemap fd)
 * @base:	2 MiB aligned
 *
 * PAGEMAP_SCAN (6.7+) with PAGE_IS_HUGE: one walk of one PMD, no fault,
 * no write.  The huge zero page is not taken whole (a move of it is not
 * worth the risk: some kernels built its destination PMD wrongly).  A
 * wrong answer (the page is split just after) costs only time:
 * take_huge() holds what the kernel moved, or falls back to 4 KiB.
 */
bool __uks_damon_self_is_huge(struct self_state *st, unsigned long base)
{
	struct self_page_region r = { 0, 0, 0 };
	struct self_pm_scan_arg a = {
		.size = sizeof(a), .start = base, .end = base + HPG,
		.vec = (uint64_t)(uintptr_t)&r, .vec_len = 1,
		.category_mask = SELF_PAGE_IS_HUGE,
		.return_mask = SELF_PAGE_IS_HUGE | SELF_PAGE_IS_PFNZERO,
	};

	if (st->pagemap_fd < 0 || ioctl(st->pagemap_fd, SELF_PAGEMAP_SCAN, &a) != 1)
		return false;
	return r.start == base && r.end == base + HPG && !(r.categories & SELF_PAGE_IS_PFNZERO);
}

/* ----------------------------------------------------------- the table */

/* The entry with a page at @page (*@k: which of its pages), or NULL. */
static struct self_entry *find(struct self_state *st, unsigned long page, long *k)
{
	for (unsigned int i = 0; i < st->nr; i++)
		if (st->e[i].registered &&
		    (*k = __uks_damon_self_page_index(&st->e[i], page)) >= 0)
			return &st->e[i];
	return NULL;
}

/*
 * Put a taken huge page back: every held run in one UFFDIO_MOVE (the
 * whole 2 MiB as a PMD when nothing split it), page by page where a run
 * fails (a mapping split by mprotect meanwhile: a 4 KiB move, else a
 * copy; munmap: the page is dropped).  A run ends where an mremap() cut
 * the page (self_pieces.c): each piece goes back where it is now.
 * -EAGAIN: events are pending; what went back stays back (held[] says
 * what is left).
 */
static int give_back_huge(struct self_state *st, struct self_entry *e)
{
	unsigned long src = hslot(st, (unsigned int)(e - st->e));
	unsigned long k = 0;

	while (k < HPG_NR) {
		unsigned long run = 0, dst;
		long moved;

		if (!is_held(e, k)) {
			k++;
			continue;
		}
		dst = __uks_damon_self_page_addr(e, k);
		while (k + run < HPG_NR && is_held(e, k + run) &&
		       __uks_damon_self_page_addr(e, k + run) == dst + run * PG)
			run++;
		moved = move_range(st, dst, src + k * PG, run * PG);
		if (moved == -EAGAIN)
			return -EAGAIN;
		if (moved <= 0)
			moved = move_range(st, dst, src + k * PG, PG);
		if (moved == -EAGAIN)
			return -EAGAIN;
		if (moved <= 0) {
			/* the slot page is there (held): a copy never faults on it */
			int err = do_copy(st, dst, src + k * PG);

			if (err == -EAGAIN)
				return err;
			if (err)
				st->stats.dropped++;
			e->hslot_dirty = true;
			moved = (long)PG;
		}
		set_held(e, k, (unsigned long)moved / PG, false);
		k += (unsigned long)moved / PG;
	}
	e->state = E_BACK;
	return 0;
}

/* Put the data of a taken page back.  -EAGAIN: events are pending. */
static int give_back(struct self_state *st, struct self_entry *e)
{
	unsigned int i = (unsigned int)(e - st->e);
	int err;

	if (e->len == HPG)
		return give_back_huge(st, e);
	if (st->move) {
		err = do_move(st, e->page, slot(st, i));
		if (!err) {
			e->state = E_BACK;
			return 0;
		}
		if (err == -EAGAIN)
			return err;
		/* protection changed, or the page got filled: try a copy */
		e->slot_dirty = true;
	}
	err = do_copy(st, e->page, slot(st, i));
	if (err == -EAGAIN)
		return err;
	if (err) {
		/* the mapping is gone (munmap): its data went with it */
		st->stats.dropped++;
		e->state = E_GONE;
		return 0;
	}
	e->state = E_BACK;
	return 0;
}

/* Resolve a fault at @page that is not a taken page: what the kernel does. */
static void resolve_other(struct self_state *st, unsigned long page, bool wp)
{
	struct uffdio_range r = { page, PG };

	if (wp) {
		struct uffdio_writeprotect w = { .range = r, .mode = 0 };

		if (!ioctl(st->uffd, UFFDIO_WRITEPROTECT, &w))
			return;
	} else {
		struct uffdio_zeropage z = { .range = r, .mode = 0 };

		if (!ioctl(st->uffd, UFFDIO_ZEROPAGE, &z))
			return;
	}
	ioctl(st->uffd, UFFDIO_WAKE, &r);
}

static void on_fault(struct self_state *st, const struct uffd_msg *m)
{
	unsigned long page = (unsigned long)m->arg.pagefault.address & ~(PG - 1);
	bool wp = m->arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP;
	long k = 0;
	struct self_entry *e = find(st, page, &k);

	st->stats.faults++;
	if (e) {
		/* a huge entry may not hold the faulting page: a hole, or dropped */
		bool had = e->len == PG || is_held(e, (unsigned long)k);

		e->accessed = true;
		if (e->state == E_TAKEN) {
			/*
			 * -EAGAIN: a remove/remap event is queued (or was just
			 * read and its sender has not gone on): serve() reads
			 * it and tries again.
			 */
			if (give_back(st, e) == -EAGAIN) {
				if (!e->pending)
					st->nr_pending++;
				e->pending = true;
				return;
			}
			if (e->state == E_BACK && had)
				return;
		}
	}
	resolve_other(st, page, wp);
}

/* Retry the faults that met -EAGAIN.  Return: how many still wait. */
static unsigned int retry_pending(struct self_state *st)
{
	for (unsigned int i = 0; i < st->nr && st->nr_pending; i++) {
		struct self_entry *e = &st->e[i];

		if (!e->pending)
			continue;
		if (e->state == E_TAKEN && give_back(st, e) == -EAGAIN)
			continue;
		e->pending = false;
		st->nr_pending--;
		if (e->len == HPG) {
			/* woken on a page not given back, a thread faults again */
			unsigned long a, len;

			for (unsigned int j = 0; (len = __uks_damon_self_piece_range(e, j, &a)); j++) {
				struct uffdio_range r = { a, len };

				ioctl(st->uffd, UFFDIO_WAKE, &r);
			}
		} else if (e->state != E_BACK) {
			resolve_other(st, e->page, false);	/* dropped by the program */
		}
	}
	return st->nr_pending;
}

static uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ULL + (uint64_t)t.tv_nsec;
}

/*
 * Reading UFFD_EVENT_REMOVE lets the madvising thread go on, but its zap
 * comes later: a page we take from the range before the zap escapes it
 * and would come back with its old data.  So a sample that overlaps a
 * range removed in the last second is not taken while that part of the
 * range still holds a page (not zapped yet, or written again since:
 * we cannot tell which).
 */
static bool zap_pending(struct self_state *st, unsigned long a, unsigned long len)
{
	uint64_t now = now_ns();

	for (unsigned int i = 0; i < MAX_ZAPS; i++) {
		struct self_zap *z = &st->zaps[i];
		unsigned long s = z->start > a ? z->start : a;
		unsigned long t = z->end < a + len ? z->end : a + len;
		struct self_page_region r;
		struct self_pm_scan_arg q = {
			.size = sizeof(q), .start = s, .end = t,
			.vec = (uint64_t)(uintptr_t)&r, .vec_len = 1, .max_pages = 1,
			.category_inverted = SELF_PAGE_IS_PFNZERO,
			.category_mask = SELF_PAGE_IS_PFNZERO,
			.category_anyof_mask = SELF_PAGE_IS_PRESENT | SELF_PAGE_IS_SWAPPED,
			.return_mask = SELF_PAGE_IS_PRESENT,
		};

		if (z->end <= z->start || s >= t)
			continue;
		if (now - z->ns > 1000000000ULL) {
			z->end = z->start;	/* expired */
			continue;
		}
		if (ioctl(st->pagemap_fd, SELF_PAGEMAP_SCAN, &q) != 0)
			return true;	/* a page there, or no answer */
	}
	return false;
}

/* Let go of a taken huge page's pages in [start, end).  Return: how many. */
static unsigned long drop_pages(struct self_entry *e, unsigned long start, unsigned long end)
{
	unsigned long n = 0;

	for (unsigned long k = 0; k < HPG_NR; k++) {
		unsigned long a = __uks_damon_self_page_addr(e, k);

		if (is_held(e, k) && a < end && a + PG > start) {
			set_held(e, k, 1, false);
			n++;
		}
	}
	e->hslot_dirty = true;
	return n;
}

static void on_remove(struct self_state *st, unsigned long start, unsigned long end)
{
	struct self_zap *z = &st->zaps[0];

	/* a free record, else the oldest (most likely zapped long ago) */
	for (unsigned int i = 0; i < MAX_ZAPS && z->end > z->start; i++)
		if (st->zaps[i].end <= st->zaps[i].start || st->zaps[i].ns < z->ns)
			z = &st->zaps[i];
	z->start = start;
	z->end = end;
	z->ns = now_ns();
	for (unsigned int i = 0; i < st->nr; i++) {
		struct self_entry *e = &st->e[i];

		if (!e->registered || !__uks_damon_self_meets(e, start, end))
			continue;
		if (e->state == E_NONE) {
			e->state = E_GONE;	/* mid-take: see zap_pending() */
			continue;
		}
		if (e->state != E_TAKEN)
			continue;
		if (e->len == PG) {
			e->state = E_GONE;	/* MADV_DONTNEED: the program drops it */
			e->slot_dirty = true;
			continue;
		}
		/* the part of a huge page the program drops; the rest goes back */
		drop_pages(e, start, end);
		if (none_held(e))
			e->state = E_GONE;
	}
}

/*
 * UFFD_EVENT_UNMAP: the program unmapped [start, end) (munmap, an mmap or
 * mremap over it, brk).  A taken page there goes with its mapping, as the
 * program asked (counted as dropped); a sample not taken yet is not taken
 * (take_move() sees E_GONE).  Of a taken huge page only the unmapped
 * pieces go; the rest goes back.
 */
static void on_unmap(struct self_state *st, unsigned long start, unsigned long end)
{
	/* a removed range unmapped since: what comes there is not zapped */
	for (unsigned int i = 0; i < MAX_ZAPS; i++)
		if (st->zaps[i].start >= start && st->zaps[i].end <= end)
			st->zaps[i].end = st->zaps[i].start;
	for (unsigned int i = 0; i < st->nr; i++) {
		struct self_entry *e = &st->e[i];

		if (!e->registered || e->state == E_BACK || e->state == E_GONE ||
		    !__uks_damon_self_meets(e, start, end))
			continue;
		if (e->state == E_TAKEN && e->len == HPG) {
			st->stats.dropped += drop_pages(e, start, end);
			if (none_held(e))
				e->state = E_GONE;
			continue;
		}
		if (e->state == E_TAKEN) {
			st->stats.dropped++;
			e->slot_dirty = true;
		}
		e->state = E_GONE;
	}
}

/*
 * UFFD_EVENT_REMAP: mremap() moved [from, from + len) to @to, with our
 * registration.  A page taken from inside goes back at its new address;
 * a huge page the range cuts becomes pieces (self_pieces.c).
 */
static void on_remap(struct self_state *st, unsigned long from, unsigned long to,
		     unsigned long len)
{
	for (unsigned int i = 0; i < st->nr; i++) {
		struct self_entry *e = &st->e[i];

		if (!e->registered || !__uks_damon_self_meets(e, from, from + len))
			continue;
		if (__uks_damon_self_remap(e, from, to, len) == -ENOSPC) {
			/*
			 * A ninth piece of one huge page within one sampling
			 * interval: where the moved pages went cannot be kept.
			 */
			if (e->state == E_TAKEN) {
				st->stats.lost += drop_pages(e, from, from + len);
				if (none_held(e))
					e->state = E_GONE;
			}
			continue;
		}
		st->stats.cut += e->state == E_TAKEN && e->nr_pieces;
	}
}

/* Read and handle every pending message; retry the faults that waited. */
int __uks_damon_self_serve(struct self_state *st)
{
	struct uffd_msg msgs[16];
	int total = 0;

	for (;;) {
		ssize_t n = read(st->uffd, msgs, sizeof(msgs));

		if (n <= 0) {
			if (!st->nr_pending || !retry_pending(st))
				return total;
			sched_yield();	/* an event's sender has yet to go on */
			continue;
		}
		/*
		 * Events first: the kernel hands out pending faults before
		 * events, and reading an event lets its sender go on (zap the
		 * range it removes, map something new where it unmapped).
		 * Serving a fault of the same batch first could put back a
		 * page that the program has just dropped.
		 */
		for (size_t k = 0; k < (size_t)n / sizeof(msgs[0]); k++) {
			const struct uffd_msg *m = &msgs[k];

			total++;
			if (m->event == UFFD_EVENT_REMOVE)
				on_remove(st, (unsigned long)m->arg.remove.start,
					  (unsigned long)m->arg.remove.end);
			else if (m->event == UFFD_EVENT_UNMAP)
				on_unmap(st, (unsigned long)m->arg.remove.start,
					 (unsigned long)m->arg.remove.end);
			else if (m->event == UFFD_EVENT_REMAP)
				on_remap(st, (unsigned long)m->arg.remap.from,
					 (unsigned long)m->arg.remap.to,
					 (unsigned long)m->arg.remap.len);
		}
		for (size_t k = 0; k < (size_t)n / sizeof(msgs[0]); k++)
			if (msgs[k].event == UFFD_EVENT_PAGEFAULT)
				on_fault(st, &msgs[k]);
		if (st->nr_pending)
			retry_pending(st);
	}
}

/* -------------------------------------------------------- take, restore */

static bool page_present(struct self_state *st, unsigned long page)
{
	uint64_t v = 0;

	if (pread(st->pagemap_fd, &v, sizeof(v), (off_t)(page / PG * sizeof(v))) !=
	    (ssize_t)sizeof(v))
		return false;
	return (v >> 62) & 3;	/* present or swapped */
}

/*
 * UFFDIO_MOVE a sample out of the program, after UFFDIO_REGISTER.  The
 * kernel checks that the destination (our slot) is registered, not the
 * source: had the program unmapped the sample since the register and
 * mapped something new there, we would take a page from a mapping nobody
 * watches, whose next touch finds a fresh zero page.  That unmap raises
 * UFFD_EVENT_UNMAP, and every move fails with -EAGAIN until we read it:
 * so on -EAGAIN read the events and try again unless on_unmap() marked
 * the sample gone.  Return: as move_range(); -ENOENT when gone.
 */
static long take_move(struct self_state *st, struct self_entry *e, unsigned long dst,
		      unsigned long len)
{
	long moved = -EAGAIN;

	for (int tries = 0; moved == -EAGAIN && tries < 4; tries++) {
		if (tries)
			__uks_damon_self_serve(st);
		if (e->state == E_GONE)
			return -ENOENT;
		moved = move_range(st, dst, e->page, len);
	}
	return moved;
}

/*
 * Take a whole huge page: register its 2 MiB, UFFDIO_MOVE them to the
 * entry's 2 MiB-aligned slot, whose PMD is empty, so the kernel moves the
 * PMD itself (no split, one TLB flush).  If the page was split meanwhile,
 * the kernel moves the pieces one by one, up to a hole: held[] says what
 * moved and is given back the same way.  Nothing moved: the sample falls
 * back to its own 4 KiB page.
 */
static void take_huge(struct self_state *st, struct self_entry *e)
{
	unsigned long dst = hslot(st, (unsigned int)(e - st->e));
	long moved;

	if (zap_pending(st, e->page, HPG)) {
		st->stats.refused++;
		return;
	}
	if (!__uks_damon_self_reg(st, e->page, HPG, UFFDIO_REGISTER_MODE_MISSING)) {
		e->registered = true;
		moved = take_move(st, e, dst, HPG);
		if (moved > 0) {
			set_held(e, 0, (unsigned long)moved / PG, true);
			e->state = E_TAKEN;
			st->stats.taken++;
			/* a split on the way leaves a page table in the slot */
			if (moved == (long)HPG && __uks_damon_self_is_huge(st, dst))
				st->stats.huge++;
			else
				e->hslot_dirty = true;
			return;
		}
		if (moved == -EEXIST)
			e->hslot_dirty = true;
		__uks_damon_self_unreg(st, e->page, HPG);	/* nothing is taken there */
		e->registered = false;
		if (e->state == E_GONE)
			return;		/* unmapped meanwhile: no sample this time */
	}
	e->page = e->sample;
	e->len = PG;
	__uks_damon_self_take(st, e);
}

void __uks_damon_self_take(struct self_state *st, struct self_entry *e)
{
	unsigned int i = (unsigned int)(e - st->e);
	long moved;

	e->state = E_NONE;
	e->nr_pieces = 0;
	if (e->len == HPG) {
		take_huge(st, e);
		return;
	}
	if (st->move) {
		if (zap_pending(st, e->page, PG)) {
			st->stats.refused++;
			return;
		}
		if (__uks_damon_self_reg(st, e->page, PG, UFFDIO_REGISTER_MODE_MISSING))
			return;
		e->registered = true;
		moved = take_move(st, e, slot(st, i), PG);
		if (moved == (long)PG) {
			e->state = E_TAKEN;
			st->stats.taken++;
		} else if (moved == -ENOENT && e->state != E_GONE) {
			e->state = E_HOLE;	/* never populated: watch the first touch */
		} else {
			if (moved == -EEXIST)
				e->slot_dirty = true;
			__uks_damon_self_unreg(st, e->page, PG);
			e->registered = false;
			if (e->state != E_GONE)
				st->stats.refused++;
		}
		return;
	}
	/* copy mode: write-protect, copy out, zap */
	if (__uks_damon_self_reg(st, e->page, PG, UFFDIO_REGISTER_MODE_MISSING | UFFDIO_REGISTER_MODE_WP))
		return;
	e->registered = true;
	if (!page_present(st, e->page)) {
		e->state = E_HOLE;
		return;
	}
	struct uffdio_writeprotect w = { .range = { e->page, PG },
					 .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	if (ioctl(st->uffd, UFFDIO_WRITEPROTECT, &w)) {
		__uks_damon_self_unreg(st, e->page, PG);
		e->registered = false;
		st->stats.refused++;
		return;
	}
	/*
	 * Not memcpy: if the program zapped or unmapped P since the check, a
	 * load would fault into our own userfaultfd (or SIGSEGV).  A read of
	 * /proc/self/mem faults without retry, so it fails instead: P is then
	 * empty (or gone) and is watched as a hole.
	 */
	if (pread(st->mem_fd, (void *)slot(st, i), PG, (off_t)e->page) != (ssize_t)PG) {
		e->state = E_HOLE;
		return;
	}
	madvise((void *)e->page, PG, MADV_DONTNEED);
	e->state = E_TAKEN;
	st->stats.taken++;
}

/* A slot that may hold a page becomes empty (and registered) again. */
static void refresh_slot(struct self_state *st, unsigned int i)
{
	void *p;

	/* unregistered first: unmapping it would raise an UNMAP event for us */
	if (st->move)
		__uks_damon_self_unreg(st, slot(st, i), PG);
	p = mmap((void *)slot(st, i), PG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);

	if (p != MAP_FAILED && st->move)
		__uks_damon_self_reg(st, slot(st, i), PG, UFFDIO_REGISTER_MODE_MISSING);
	st->e[i].slot_dirty = false;
}

/* A huge slot empty again, its PMD too (else the next move splits). */
static void refresh_hslot(struct self_state *st, unsigned int i)
{
	void *p;

	__uks_damon_self_unreg(st, hslot(st, i), HPG);	/* as refresh_slot() */
	p = mmap((void *)hslot(st, i), HPG, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);

	if (p != MAP_FAILED)
		__uks_damon_self_reg(st, hslot(st, i), HPG, UFFDIO_REGISTER_MODE_MISSING);
	st->e[i].hslot_dirty = false;
}

/* Give every page back, unregister, close the window. */
void __uks_damon_self_close_window(struct self_state *st)
{
	bool again;

	__uks_damon_self_serve(st);
	do {
		again = false;
		for (unsigned int i = 0; i < st->nr; i++) {
			if (st->e[i].registered && st->e[i].state == E_TAKEN &&
			    give_back(st, &st->e[i]) == -EAGAIN)
				again = true;
			__uks_damon_self_serve(st);
		}
		if (again) {
			__uks_damon_self_serve(st);
			sched_yield();
		}
	} while (again);
	for (unsigned int i = 0; i < st->nr; i++) {
		st->e[i].pending = false;	/* given back above */
		if (st->e[i].registered) {
			unsigned long a, len;

			/* wakes late faulters; every piece an mremap() made */
			for (unsigned int j = 0; (len = __uks_damon_self_piece_range(&st->e[i], j, &a));
			     j++)
				__uks_damon_self_unreg(st, a, len);
		}
		st->e[i].registered = false;
		st->e[i].nr_pieces = 0;
		if (st->e[i].slot_dirty)
			refresh_slot(st, i);
		if (st->e[i].hslot_dirty)
			refresh_hslot(st, i);
	}
	st->nr_pending = 0;
	__atomic_store_n(&st->window, 0, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &st->window, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

