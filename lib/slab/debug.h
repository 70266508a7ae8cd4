/* SPDX-License-Identifier: MIT */
/*
 * slub_debug internals shared by debug.c (checks) and report.c (reports).
 */
#ifndef UKS_LIB_SLAB_DEBUG_H
#define UKS_LIB_SLAB_DEBUG_H

#include <stdbool.h>
#include <stdint.h>

#include "slab/geometry.h"
#include "slab/slub.h"

/* include/linux/poison.h */
#define SLUB_RED_INACTIVE	0xbb
#define SLUB_RED_ACTIVE		0xcc
#define POISON_INUSE		0x5a
#define POISON_FREE		0x6b
#define POISON_END		0xa5

#define SLUB_TRACK_ADDRS	16

enum track_item { TRACK_ALLOC, TRACK_FREE };

/* struct track with CONFIG_STACKTRACE: 152 bytes, as in the kernel. */
struct slub_track {
	unsigned long addr;			/* caller */
	unsigned long addrs[SLUB_TRACK_ADDRS];	/* call stack */
	int cpu;
	int pid;
	unsigned long when;			/* jiffies (ms) */
};
_Static_assert(sizeof(struct slub_track) == SLUB_TRACK_SIZE, "struct track size");

static inline unsigned int __uks_get_info_end(const struct uks_kmem_cache *s)
{
	/* The free pointer lives after the object when it cannot be inside. */
	return s->offset >= s->inuse ? s->inuse + (unsigned int)sizeof(void *) : s->inuse;
}

static inline unsigned int __uks_size_from_object(const struct uks_kmem_cache *s)
{
	return (s->flags & UKS_SLAB_RED_ZONE) ? s->size - s->red_left_pad : s->size;
}

static inline struct slub_track *__uks_get_track(struct uks_kmem_cache *s, void *object,
						 enum track_item alloc)
{
	return (struct slub_track *)((char *)object + __uks_get_info_end(s)) + alloc;
}

unsigned long __uks_jiffies(void);
bool __uks_slab_add_kunit_errors(void);
void __uks_format_symbol(char *buf, size_t len, unsigned long addr);
void __uks_stack_trace_prepare(void);
unsigned int __uks_stack_trace(unsigned long *addrs, unsigned int max, unsigned int skip);
void __uks_print_section(enum uks_log_level level, const char *text, const uint8_t *addr,
			 size_t length);
uint8_t *__uks_memchr_inv(const void *start, uint8_t value, size_t bytes);
void __uks_print_tracking(struct uks_kmem_cache *s, void *object);
void __uks_slab_fix(struct uks_kmem_cache *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void __uks_restore_bytes(struct uks_kmem_cache *s, const char *message, uint8_t data, void *from,
			 void *to);
int __uks_check_bytes_and_report(struct uks_kmem_cache *s, struct uks_page *page,
				 uint8_t *object, const char *what, uint8_t *start,
				 unsigned int value, unsigned int bytes);

#endif
