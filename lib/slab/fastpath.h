/* SPDX-License-Identifier: MIT */
/*
 * The per-CPU primitives of the slab fast paths (x86-64 assembly):
 *
 *   rseq_pop()       pop the CPU freelist inside an rseq critical section
 *   rseq_pop_many()  pop up to n objects in one section (bulk allocation)
 *   rseq_push()      push a head..tail chain when the slab is the CPU slab
 *   rseq_trylock()   set the tid lock bit of this CPU's slot
 *   cmpxchg16()      LOCK cmpxchg16b, for {freelist, tid} and for a
 *                    slab's {freelist, counters}
 *
 * An rseq section publishes its descriptor in rseq->rseq_cs, reads cpu_id
 * and indexes the per-CPU slot with it, and ends with a single committing
 * store.  If the kernel preempts, migrates or signals the thread inside
 * the section it resumes at the abort handler (preceded by the rseq
 * signature), which counts the abort and restarts from the top.  Nothing
 * before the commit is visible to other threads except stores into memory
 * this thread owns (the object being freed, the caller's array).
 *
 * Each section also diverts to the slow path when the slot's tid has the
 * lock bit set: a slow path on this CPU holds the local lock.
 */
#ifndef UKS_LIB_SLAB_FASTPATH_H
#define UKS_LIB_SLAB_FASTPATH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/percpu.h"
#include "slab/slub.h"

#if defined(__x86_64__)
#define UKS_HAVE_RSEQ_ASM 1
#else
#define UKS_HAVE_RSEQ_ASM 0
#endif

_Static_assert(offsetof(struct kmem_cache_cpu, freelist) == 0, "asm offset");
_Static_assert(offsetof(struct kmem_cache_cpu, tid) == 8, "asm offset");
_Static_assert(offsetof(struct kmem_cache_cpu, page) == 16, "asm offset");
_Static_assert(offsetof(struct uks_kmem_cache, cpu_base) == 0, "asm offset");
_Static_assert(offsetof(struct uks_rseq_abi, cpu_id) == 4, "asm offset");
_Static_assert(offsetof(struct uks_page, addr) == 40, "asm offset");
_Static_assert(offsetof(struct uks_page, map_size) == 56, "asm offset");
_Static_assert(offsetof(struct uks_rseq_abi, rseq_cs) == 8, "asm offset");

static inline bool cmpxchg16(void *ptr, uintptr_t old_lo, uintptr_t old_hi, uintptr_t new_lo,
			     uintptr_t new_hi)
{
#if defined(__x86_64__)
	bool ok;

	__asm__ __volatile__("lock cmpxchg16b %[m]"
			     : "=@ccz"(ok), [m] "+m"(*(volatile unsigned __int128 *)ptr),
			       "+a"(old_lo), "+d"(old_hi)
			     : "b"(new_lo), "c"(new_hi)
			     : "memory");
	return ok;
#else
	unsigned __int128 old = ((unsigned __int128)old_hi << 64) | old_lo;
	unsigned __int128 new = ((unsigned __int128)new_hi << 64) | new_lo;

	return __atomic_compare_exchange_n((unsigned __int128 *)ptr, &old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
#endif
}

#if UKS_HAVE_RSEQ_ASM

/* The descriptor, the abort handler (signature first) and the section start. */
#define RSEQ_SECTION_HEAD						\
	".pushsection __rseq_cs, \"aw\"\n\t"				\
	".balign 32\n\t"						\
	"3:\n\t"							\
	".long 0, 0\n\t"						\
	".quad 1f, 2f - 1f, 4f\n\t"					\
	".popsection\n\t"						\
	".pushsection __rseq_failure, \"ax\"\n\t"			\
	".byte 0x0f, 0xb9, 0x3d\n\t"					\
	".long 0x53053053\n\t"						\
	"4:\n\t"							\
	"addq $1, %[aborts]\n\t"					\
	"jmp 1f\n\t"							\
	".popsection\n\t"						\
	"1:\n\t"							\
	"leaq 3b(%%rip), %[tmp]\n\t"					\
	"movq %[tmp], 8(%[rs])\n\t"

/* c = this CPU's kmem_cache_cpu; off to 5f if rseq is not registered. */
#define RSEQ_LOAD_CPU_SLOT						\
	"movslq 4(%[rs]), %[c]\n\t"					\
	"testq %[c], %[c]\n\t"						\
	"js 5f\n\t"							\
	"shlq %%cl, %[c]\n\t"					\
	"addq (%[s]), %[c]\n\t"

/* Decode the free pointer stored at %[slot] into %[out] (FREELIST_HARDENED). */
#define RSEQ_DECODE_HARDENED(out, slot, scratch)			\
	"movq (%[" slot "]), %[" out "]\n\t"				\
	"movq %[" slot "], %[" scratch "]\n\t"				\
	"bswapq %[" scratch "]\n\t"					\
	"xorq %[" scratch "], %[" out "]\n\t"				\
	"xorq %[rnd], %[" out "]\n\t"

/**
 * rseq_pop - take the first object of this CPU's freelist
 * @s: cache
 * @rs: this thread's rseq area
 * @cp: set to the slot used (for stat counting)
 * @aborts: incremented once per aborted attempt
 *
 * Return: the object, or NULL if the slow path must run (empty freelist,
 * no CPU slab, slot locked, or rseq not registered).
 */
static __attribute__((always_inline)) inline void *
rseq_pop(const struct uks_kmem_cache *s, struct uks_rseq_abi *rs, struct kmem_cache_cpu **cp,
	 unsigned long *aborts)
{
	uintptr_t obj, c, tmp, slot, next, off = s->offset, rnd = s->random;
	unsigned long ab = 0;

	if (rnd) {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			"testb $1, 8(%[c])\n\t"
			"jnz 5f\n\t"
			"cmpq $0, 16(%[c])\n\t"
			"je 5f\n\t"
			"movq (%[c]), %[obj]\n\t"
			"testq %[obj], %[obj]\n\t"
			"jz 5f\n\t"
			"leaq (%[obj], %[off]), %[slot]\n\t"
			RSEQ_DECODE_HARDENED("next", "slot", "tmp")
			"movq %[next], (%[c])\n\t"
			"2:\n\t"
			"jmp 6f\n\t"
			"5:\n\t"
			"xorl %k[obj], %k[obj]\n\t"
			"6:\n\t"
			: [obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [slot] "=&r"(slot),
			  [next] "=&r"(next), [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift), [off] "r"(off), [rnd] "r"(rnd)
			: "memory", "cc");
	} else {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			"testb $1, 8(%[c])\n\t"
			"jnz 5f\n\t"
			"cmpq $0, 16(%[c])\n\t"
			"je 5f\n\t"
			"movq (%[c]), %[obj]\n\t"
			"testq %[obj], %[obj]\n\t"
			"jz 5f\n\t"
			"movq (%[obj], %[off]), %[slot]\n\t"
			"movq %[slot], (%[c])\n\t"
			"2:\n\t"
			"jmp 6f\n\t"
			"5:\n\t"
			"xorl %k[obj], %k[obj]\n\t"
			"6:\n\t"
			: [obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [slot] "=&r"(slot),
			  [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift), [off] "r"(off)
			: "memory", "cc");
		(void)next;
	}
	*cp = (struct kmem_cache_cpu *)c;
	*aborts += ab;
	return (void *)obj;
}

/**
 * rseq_push - put head..tail on this CPU's freelist if @page is its slab
 * @s: cache
 * @rs: this thread's rseq area
 * @page: slab of the objects
 * @head: first object of the chain (already linked up to @tail)
 * @tail: last object; its free pointer is set to the old freelist
 * @cp: set to the slot used
 * @aborts: incremented once per aborted attempt
 *
 * Return: 1 if pushed, 0 if the slow path must run, 2 if @head already is
 * the first free object (a double free, the kernel's BUG_ON(object == fp)).
 */
static __attribute__((always_inline)) inline int
rseq_push(const struct uks_kmem_cache *s, struct uks_rseq_abi *rs, struct uks_page *page,
	  void *head, void *tail, struct kmem_cache_cpu **cp, unsigned long *aborts)
{
	uintptr_t c, tmp, slot, enc, off = s->offset, rnd = s->random;
	unsigned long ab = 0;
	unsigned char done;

	if (rnd) {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			"testb $1, 8(%[c])\n\t"
			"jnz 5f\n\t"
			"cmpq %[page], 16(%[c])\n\t"
			"jne 5f\n\t"
			"movq (%[c]), %[enc]\n\t"
			"cmpq %[enc], %[head]\n\t"
			"je 9f\n\t"
			"leaq (%[tail], %[off]), %[slot]\n\t"
			"movq %[slot], %[tmp]\n\t"
			"bswapq %[tmp]\n\t"
			"xorq %[tmp], %[enc]\n\t"
			"xorq %[rnd], %[enc]\n\t"
			"movq %[enc], (%[slot])\n\t"
			"movq %[head], (%[c])\n\t"
			"2:\n\t"
			"movb $1, %b[done]\n\t"
			"jmp 6f\n\t"
			"9:\n\t"
			"movb $2, %b[done]\n\t"
			"jmp 6f\n\t"
			"5:\n\t"
			"movb $0, %b[done]\n\t"
			"6:\n\t"
			: [c] "=&r"(c), [tmp] "=&r"(tmp), [slot] "=&r"(slot), [enc] "=&r"(enc),
			  [done] "=&r"(done), [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift), [page] "r"(page), [head] "r"(head),
			  [tail] "r"(tail), [off] "r"(off), [rnd] "r"(rnd)
			: "memory", "cc");
	} else {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			"testb $1, 8(%[c])\n\t"
			"jnz 5f\n\t"
			"cmpq %[page], 16(%[c])\n\t"
			"jne 5f\n\t"
			"movq (%[c]), %[enc]\n\t"
			"cmpq %[enc], %[head]\n\t"
			"je 9f\n\t"
			"movq %[enc], (%[tail], %[off])\n\t"
			"movq %[head], (%[c])\n\t"
			"2:\n\t"
			"movb $1, %b[done]\n\t"
			"jmp 6f\n\t"
			"9:\n\t"
			"movb $2, %b[done]\n\t"
			"jmp 6f\n\t"
			"5:\n\t"
			"movb $0, %b[done]\n\t"
			"6:\n\t"
			: [c] "=&r"(c), [tmp] "=&r"(tmp), [enc] "=&r"(enc), [done] "=&r"(done),
			  [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift), [page] "r"(page), [head] "r"(head),
			  [tail] "r"(tail), [off] "r"(off)
			: "memory", "cc");
		(void)slot;
	}
	*cp = (struct kmem_cache_cpu *)c;
	*aborts += ab;
	return done;
}

/**
 * rseq_free_cpu_slab - free @obj onto this CPU's freelist if it lies in the CPU slab
 * @s: cache
 * @rs: this thread's rseq area
 * @obj: the object
 * @cp: set to the slot used
 * @aborts: incremented once per aborted attempt
 *
 * The kmem_cache_free() fast path: an address-range check against the CPU
 * slab replaces the page lookup, since an object inside it is of this cache.
 * Return: 1 freed, 0 the general path must run, 2 a naive double free.
 */
static __attribute__((always_inline)) inline int
rseq_free_cpu_slab(const struct uks_kmem_cache *s, struct uks_rseq_abi *rs, void *obj,
		   struct kmem_cache_cpu **cp, unsigned long *aborts)
{
	uintptr_t c, tmp, page, slot, enc, off = s->offset, rnd = s->random;
	unsigned long ab = 0;
	unsigned char done;

#define RSEQ_FREE_CHECKS						\
	"testb $1, 8(%[c])\n\t"					\
	"jnz 5f\n\t"							\
	"movq 16(%[c]), %[page]\n\t"					\
	"testq %[page], %[page]\n\t"					\
	"jz 5f\n\t"							\
	"movq %[obj], %[tmp]\n\t"					\
	"subq 40(%[page]), %[tmp]\n\t"				\
	"cmpq 56(%[page]), %[tmp]\n\t"				\
	"jae 5f\n\t"							\
	"movq (%[c]), %[enc]\n\t"					\
	"cmpq %[enc], %[obj]\n\t"					\
	"je 9f\n\t"
#define RSEQ_FREE_TAIL							\
	"movq %[obj], (%[c])\n\t"					\
	"2:\n\t"							\
	"movb $1, %b[done]\n\t"					\
	"jmp 6f\n\t"							\
	"9:\n\t"							\
	"movb $2, %b[done]\n\t"					\
	"jmp 6f\n\t"							\
	"5:\n\t"							\
	"movb $0, %b[done]\n\t"					\
	"6:\n\t"

	if (rnd) {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			RSEQ_FREE_CHECKS
			"leaq (%[obj], %[off]), %[slot]\n\t"
			"movq %[slot], %[tmp]\n\t"
			"bswapq %[tmp]\n\t"
			"xorq %[tmp], %[enc]\n\t"
			"xorq %[rnd], %[enc]\n\t"
			"movq %[enc], (%[slot])\n\t"
			RSEQ_FREE_TAIL
			: [c] "=&r"(c), [tmp] "=&r"(tmp), [page] "=&r"(page), [slot] "=&r"(slot),
			  [enc] "=&r"(enc), [done] "=&r"(done), [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift),
			  [obj] "r"(obj), [off] "r"(off), [rnd] "r"(rnd)
			: "memory", "cc");
	} else {
		__asm__ __volatile__(
			RSEQ_SECTION_HEAD
			RSEQ_LOAD_CPU_SLOT
			RSEQ_FREE_CHECKS
			"movq %[enc], (%[obj], %[off])\n\t"
			RSEQ_FREE_TAIL
			: [c] "=&r"(c), [tmp] "=&r"(tmp), [page] "=&r"(page), [enc] "=&r"(enc),
			  [done] "=&r"(done), [aborts] "+r"(ab)
			: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift),
			  [obj] "r"(obj), [off] "r"(off)
			: "memory", "cc");
		(void)slot;
	}
#undef RSEQ_FREE_CHECKS
#undef RSEQ_FREE_TAIL
	*cp = (struct kmem_cache_cpu *)c;
	*aborts += ab;
	return done;
}

/**
 * rseq_pop_many - pop up to @n objects into @p in one critical section
 * @s: cache
 * @rs: this thread's rseq area
 * @p: output array (written before the commit; rewritten on restart)
 * @n: at most this many
 * @aborts: incremented once per aborted attempt
 *
 * Return: objects popped (0 if the slow path must run).
 */
static __attribute__((always_inline)) inline size_t
rseq_pop_many(const struct uks_kmem_cache *s, struct uks_rseq_abi *rs, void **p, size_t n,
	      unsigned long *aborts)
{
	uintptr_t obj, c, tmp, slot, off = s->offset, rnd = s->random;
	size_t cnt;
	unsigned long ab = 0;

	__asm__ __volatile__(
		RSEQ_SECTION_HEAD
		RSEQ_LOAD_CPU_SLOT
		"testb $1, 8(%[c])\n\t"
		"jnz 5f\n\t"
		"cmpq $0, 16(%[c])\n\t"
		"je 5f\n\t"
		"movq (%[c]), %[obj]\n\t"
		"xorl %k[cnt], %k[cnt]\n\t"
		"7:\n\t"
		"testq %[obj], %[obj]\n\t"
		"jz 8f\n\t"
		"cmpq %[n], %[cnt]\n\t"
		"je 8f\n\t"
		"movq %[obj], (%[p], %[cnt], 8)\n\t"
		"addq $1, %[cnt]\n\t"
		"leaq (%[obj], %[off]), %[slot]\n\t"
		"movq (%[slot]), %[obj]\n\t"
		"testq %[rnd], %[rnd]\n\t"
		"jz 7b\n\t"
		"movq %[slot], %[tmp]\n\t"
		"bswapq %[tmp]\n\t"
		"xorq %[tmp], %[obj]\n\t"
		"xorq %[rnd], %[obj]\n\t"
		"jmp 7b\n\t"
		"8:\n\t"
		"testq %[cnt], %[cnt]\n\t"
		"jz 5f\n\t"
		"movq %[obj], (%[c])\n\t"
		"2:\n\t"
		"jmp 6f\n\t"
		"5:\n\t"
		"xorl %k[cnt], %k[cnt]\n\t"
		"6:\n\t"
		: [obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [slot] "=&r"(slot),
		  [cnt] "=&r"(cnt), [aborts] "+r"(ab)
		: [rs] "r"(rs), [s] "r"(s), [shift] "c"((unsigned long)s->cpu_shift), [p] "r"(p), [n] "r"(n), [off] "r"(off), [rnd] "r"(rnd)
		: "memory", "cc");
	*aborts += ab;
	return cnt;
}

/**
 * rseq_trylock - set the lock bit of CPU @cpu's slot, if this thread is on it
 * @c: the slot
 * @cpu: its CPU
 * @rs: this thread's rseq area
 *
 * Return: 1 locked, 0 the slot is already locked, -1 not running on @cpu.
 */
static inline int rseq_trylock(struct kmem_cache_cpu *c, unsigned int cpu, struct uks_rseq_abi *rs)
{
	uintptr_t tmp;
	unsigned long ab = 0;
	int ret;

	__asm__ __volatile__(
		RSEQ_SECTION_HEAD
		"movl $-1, %[ret]\n\t"
		"cmpl 4(%[rs]), %[cpu]\n\t"
		"jne 6f\n\t"
		"movl $0, %[ret]\n\t"
		"movq 8(%[c]), %[tmp]\n\t"
		"testb $1, %b[tmp]\n\t"
		"jnz 6f\n\t"
		"orq $1, %[tmp]\n\t"
		"movq %[tmp], 8(%[c])\n\t"
		"2:\n\t"
		"movl $1, %[ret]\n\t"
		"6:\n\t"
		: [tmp] "=&r"(tmp), [ret] "=&r"(ret), [aborts] "+r"(ab)
		: [rs] "r"(rs), [c] "r"(c), [cpu] "r"(cpu)
		: "memory", "cc");
	(void)ab;
	return ret;
}

#endif /* UKS_HAVE_RSEQ_ASM */

#endif
