/* SPDX-License-Identifier: MIT */
/*
 * The self primitive's state, shared by lib/damon/self/self.c (the ops table,
 * mappings), self_fork.c (the pause handshake), self_uffd.c (the
 * userfaultfd side: take, give back, serve faults and events) and
 * self_pieces.c (the addresses of a huge page that mremap() cut).  See
 * self.c's top.
 */
#ifndef UKS_LIB_DAMON_SELF_SELF_H
#define UKS_LIB_DAMON_SELF_SELF_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <linux/userfaultfd.h>

#include "damon/damon.h"

#define PG		4096UL
#define HPG		(2UL << 20)	/* a PMD-mapped transparent huge page */
#define HPG_NR		(HPG / PG)
#define MAX_HSLOTS	1024U		/* 2 MiB stash slots: 2 GiB of address space */

#if defined(__SANITIZE_ADDRESS__)
#define SELF_ASAN	1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SELF_ASAN	1
#endif
#endif
#define MAX_ENTRIES	10000U
#define MAX_EXCL	10
#define MAX_BSS		64

/* 6.8+ uapi, absent from older headers */
#ifndef UFFD_FEATURE_MOVE
#define UFFD_FEATURE_MOVE	(1ULL << 16)
#endif
struct self_uffdio_move {
	uint64_t dst, src, len, mode;
	int64_t move;
};
#define SELF_UFFDIO_MOVE	_IOWR(UFFDIO, 0x05, struct self_uffdio_move)
#define SELF_MOVE_ALLOW_SRC_HOLES	(1ULL << 1)

/* 6.7+ PAGEMAP_SCAN (linux/fs.h), absent from older headers */
struct self_pm_scan_arg {
	uint64_t size, flags, start, end, walk_end, vec, vec_len, max_pages;
	uint64_t category_inverted, category_mask, category_anyof_mask, return_mask;
};
struct self_page_region {
	uint64_t start, end, categories;
};
#define SELF_PAGEMAP_SCAN	_IOWR('f', 16, struct self_pm_scan_arg)
#define SELF_PAGE_IS_PRESENT	(1ULL << 3)
#define SELF_PAGE_IS_SWAPPED	(1ULL << 4)
#define SELF_PAGE_IS_PFNZERO	(1ULL << 5)
#define SELF_PAGE_IS_HUGE	(1ULL << 6)
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW	_IO(0xAA, 0x00)
#endif

enum { E_NONE, E_TAKEN, E_HOLE, E_BACK, E_GONE };

#define SELF_MAX_PIECES	8
struct self_piece {		/* pages [k0, k1) of an entry, at page + k * PG + delta */
	uint16_t k0, k1;
	long delta;
};

struct self_entry {
	unsigned long page;	/* 0: nothing sampled for this region */
	unsigned long len;	/* PG, or HPG: a whole huge page (page is its start) */
	unsigned long sample;	/* the sampling page (a huge entry falls back to it) */
	unsigned int alias;	/* 1 + the entry whose huge page holds this sample */
	unsigned char state;
	bool registered;
	bool accessed;
	bool slot_dirty;	/* the slot may hold a page: refresh it */
	bool hslot_dirty;	/* the huge slot may hold pages or a page table */
	bool pending;		/* a fault waits: give back when events allow */
	uint64_t held[HPG_NR / 64];	/* huge: the 4 KiB pages the slot holds */
	unsigned char nr_pieces;	/* cut by mremap(): see self_pieces.c */
	struct self_piece piece[SELF_MAX_PIECES];
};

struct self_range {
	unsigned long start, end;
};

#define MAX_ZAPS	32
struct self_zap {		/* a range whose MADV_DONTNEED may not have run */
	unsigned long start, end;
	uint64_t ns;		/* when its UFFD_EVENT_REMOVE was read */
};

struct self_state {
	int uffd;		/* in the monitor's own fd table (own_table) */
	int evfd;		/* in both tables: other threads write it */
	int pagemap_fd;		/* copy mode */
	int mem_fd;		/* copy mode: /proc/self/mem */
	bool own_table;		/* unshare(CLONE_FILES) done: see self_init() */
	bool move;
	pid_t tid;		/* the monitor thread's */
	int window;		/* atomics shared with pauses (self_fork.c) */
	int forking;		/* pauses that hold this state */
	int stop;
	unsigned int nr, cap;
	unsigned int nr_pending;
	struct self_entry *e;
	char *slots;
	size_t area_len, slots_len;
	char *hslots;		/* MAX_HSLOTS 2 MiB-aligned slots, for huge entries */
	size_t hslots_len;
	char *slot_area;	/* both kinds of slots, in page tables of their own */
	size_t slot_area_len;
	unsigned int nr_hslots;	/* entries below this may take a huge page */
	struct self_zap zaps[MAX_ZAPS];
	struct self_range excl[MAX_EXCL];
	struct self_range bss[MAX_BSS];	/* shared objects' .bss: not sampled */
	unsigned int nr_bss;
	unsigned int nr_excl, nr_keep;
	struct damon_addr_range *elig;	/* eligible mappings (not in the window) */
	unsigned int nr_elig;
	struct uks_damon_self_stats stats;
};

int __uks_damon_self_uffd_open(uint64_t want, uint64_t *got);
int __uks_damon_self_available(char *why, size_t len);
uint64_t __uks_damon_self_features(bool *move);
int __uks_damon_self_reg(struct self_state *st, unsigned long a, unsigned long len,
			 uint64_t mode);
void __uks_damon_self_unreg(struct self_state *st, unsigned long a, unsigned long len);
int __uks_damon_self_serve(struct self_state *st);
void __uks_damon_self_take(struct self_state *st, struct self_entry *e);
bool __uks_damon_self_is_huge(struct self_state *st, unsigned long base);
void __uks_damon_self_close_window(struct self_state *st);
unsigned long __uks_damon_self_page_addr(const struct self_entry *e, unsigned long k);
long __uks_damon_self_page_index(const struct self_entry *e, unsigned long addr);
bool __uks_damon_self_meets(const struct self_entry *e, unsigned long start, unsigned long end);
unsigned long __uks_damon_self_piece_range(const struct self_entry *e, unsigned int i,
					   unsigned long *start);
void __uks_damon_self_fork_vars(unsigned long *start, unsigned long *end);
int __uks_damon_self_claim(void);
int __uks_damon_self_publish(struct self_state *st);
bool __uks_damon_self_pausing(void);
void __uks_damon_self_unpublish(struct self_state *st);
int __uks_damon_self_remap(struct self_entry *e, unsigned long from, unsigned long to,
			   unsigned long len);

#endif
