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
 * The rseq area is addressed as %fs:__rseq_offset, glibc's place for it
 * in the thread control block: one load of the offset, no thread pointer.
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
 *
 * The sections of the exported fast paths are asm goto, jumping straight
 * to the caller's slow path instead of returning a status to test.  They
 * are marked volatile explicitly: GCC 12 deletes an asm goto whose
 * outputs are unused (the free path's are scratch registers).
 *
 * The single-object sections come in two variants from one template
 * (RSEQ_POP() and the like, given the counting instruction or ""): with
 * @count they bump the slot's alloc_fastpath or free_fastpath count, for
 * the caches of UKS_SLUB_STATS=1, which reach them through the full
 * paths; the exported fast paths pass false, and the add is not there.
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
_Static_assert(sizeof(((struct uks_kmem_cache *)0)->offset) == 4, "asm size");
_Static_assert(offsetof(struct uks_kmem_cache, cpu_stride) == 8, "asm offset");
_Static_assert(offsetof(struct uks_rseq_abi, cpu_id) == 4, "asm offset");
_Static_assert(offsetof(struct uks_rseq_abi, rseq_cs) == 8, "asm offset");
_Static_assert(offsetof(struct kmem_cache_cpu, sheaf) == 48, "asm offset");
_Static_assert(offsetof(struct kmem_cache_cpu, slab_start) == 24, "asm offset");
_Static_assert(offsetof(struct kmem_cache_cpu, slab_bytes) == 56, "asm offset");
_Static_assert(offsetof(struct slub_sheaf, size) == 0, "asm offset");
_Static_assert(offsetof(struct slub_sheaf, capacity) == 8, "asm offset");
_Static_assert(offsetof(struct slub_sheaf, objects) == 16, "asm offset");

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

/*
 * The descriptor, the abort handler (signature first; it counts the abort
 * as a cmpxchg_double_cpu_fail of the CPU it resumes on, and restarts) and
 * the section start.  Every section has operands [s] (the cache), [rs]
 * (the rseq area's %fs offset), [tmp] (scratch, free to clobber before
 * the start) and the constant offsets [abo] (into a CPU slot), [rndo] and
 * [offo] (into the cache).  The fields a section needs from the cache
 * are read inside it, from memory, to leave registers to the compiler:
 * the fast paths then need no stack frame.  The bulk loops, which use the
 * offset and the random once per object, load them into registers once.
 */
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
	"movslq %%fs:4(%[rs]), %[tmp]\n\t"				\
	"imulq 8(%[s]), %[tmp]\n\t"					\
	"addq (%[s]), %[tmp]\n\t"					\
	"addl $1, %c[abo](%[tmp])\n\t"					\
	"jmp 1f\n\t"							\
	".popsection\n\t"						\
	"1:\n\t"							\
	"leaq 3b(%%rip), %[tmp]\n\t"					\
	"movq %[tmp], %%fs:8(%[rs])\n\t"

/* c = this CPU's kmem_cache_cpu; off to @fail if rseq is not registered. */
#define RSEQ_LOAD_CPU_SLOT_OR(fail)					\
	"movslq %%fs:4(%[rs]), %[c]\n\t"					\
	"testq %[c], %[c]\n\t"						\
	"js " fail "\n\t"							\
	"imulq 8(%[s]), %[c]\n\t"					\
	"addq (%[s]), %[c]\n\t"
#define RSEQ_LOAD_CPU_SLOT RSEQ_LOAD_CPU_SLOT_OR("5f")

/*
 * The ALLOC_FASTPATH or FREE_FASTPATH count of the CPU slot, for the
 * sections' counting variants (UKS_SLUB_STATS=1, slub.c): an add to the
 * slot's first line, which the section has in hand, but the one store
 * of the section that is not needed.  Without it the kmem_cache pair
 * took 1.39x the plain per-thread freelist's time instead of 1.47x.
 */
#define RSEQ_COUNT "addq $1, %c[fast](%[c])\n\t"

/*
 * Section template @body (RSEQ_POP and the like) with the count or
 * without, as @count says, its operands @ops; the goto form jumps to the
 * C labels that follow.  @count is a constant wherever speed matters.
 */
#define RSEQ_SECTION(count, body, ops)					\
	do {								\
		if (count)						\
			__asm__ __volatile__(body(RSEQ_COUNT) : ops);	\
		else							\
			__asm__ __volatile__(body("") : ops);		\
	} while (0)
#define RSEQ_SECTION_GOTO(count, body, ops, ...)			\
	do {								\
		if (count)						\
			__asm__ __volatile__ goto(body(RSEQ_COUNT)	\
						  : ops : __VA_ARGS__);	\
		else							\
			__asm__ __volatile__ goto(body("")		\
						  : ops : __VA_ARGS__);	\
	} while (0)

#define RSEQ_CONSTS(s)							\
	[s] "r"(s),							\
	[abo] "i"(offsetof(struct kmem_cache_cpu, stat) +		\
		  CMPXCHG_DOUBLE_CPU_FAIL * sizeof(unsigned int)),	\
	[rndo] "i"(offsetof(struct uks_kmem_cache, random)),		\
	[offo] "i"(offsetof(struct uks_kmem_cache, offset))

/*
 * %[out] = the free pointer of object %[obj], decoded when the cache is
 * hardened (ptr ^ random ^ bswap(slot address)).  The key is made while
 * the load is in flight, so a freelist walk pays one xor per object on
 * its chain of dependent loads.  Clobbers %[tmp].
 */
#define RSEQ_GET_FREEPOINTER(out, obj)					\
	"movl %c[offo](%[s]), %k[tmp]\n\t"				\
	"addq %[" obj "], %[tmp]\n\t"					\
	"movq (%[tmp]), %[" out "]\n\t"					\
	"cmpq $0, %c[rndo](%[s])\n\t"					\
	"je 7f\n\t"							\
	"bswapq %[tmp]\n\t"						\
	"xorq %c[rndo](%[s]), %[tmp]\n\t"				\
	"xorq %[tmp], %[" out "]\n\t"					\
	"7:\n\t"

/* Store %[val] as the free pointer of object %[obj]; clobbers %[tmp], %[val]. */
#define RSEQ_SET_FREEPOINTER(obj, val)					\
	"movl %c[offo](%[s]), %k[tmp]\n\t"				\
	"addq %[" obj "], %[tmp]\n\t"					\
	"cmpq $0, %c[rndo](%[s])\n\t"					\
	"je 7f\n\t"							\
	"xorq %c[rndo](%[s]), %[" val "]\n\t"				\
	"bswapq %[tmp]\n\t"						\
	"xorq %[tmp], %[" val "]\n\t"					\
	"bswapq %[tmp]\n\t"						\
	"7:\n\t"							\
	"movq %[" val "], (%[tmp])\n\t"

#define RSEQ_POP(count)							\
	RSEQ_SECTION_HEAD						\
	RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")				\
	"testb $1, 8(%[c])\n\t"						\
	"jnz %l[slow]\n\t"						\
	"movq (%[c]), %[obj]\n\t"					\
	"testq %[obj], %[obj]\n\t"					\
	"jz %l[slow]\n\t"						\
	RSEQ_GET_FREEPOINTER("next", "obj")				\
	count								\
	"movq %[next], (%[c])\n\t"					\
	"2:\n\t"
#define RSEQ_POP_OPERANDS						\
	[obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [next] "=&r"(next) \
	: [rs] "r"(rs), RSEQ_CONSTS(s),					\
	[fast] "i"(offsetof(struct kmem_cache_cpu, nr_alloc_fast))	\
	: "memory", "cc"

/**
 * rseq_pop - take the first object of this CPU's freelist
 * @s: cache
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @count: bump the CPU slot's fast-path count (s->count_fast)
 *
 * The ALLOC_FASTPATH count is bumped before the commit, so an abort may
 * count twice: as racy as the kernel's raw_cpu_inc(), and free.
 * No CPU slab means an empty freelist (struct kmem_cache_cpu).
 * Return: the object, or NULL if the slow path must run (empty freelist,
 * slot locked, or rseq not registered).
 */
static __attribute__((always_inline)) inline void *
rseq_pop(const struct uks_kmem_cache *s, ptrdiff_t rs, bool count)
{
	uintptr_t obj, c, tmp, next;

	RSEQ_SECTION_GOTO(count, RSEQ_POP, RSEQ_POP_OPERANDS, slow);
	if (!obj)
		__builtin_unreachable();	/* the section jumped to slow: no test */
	return (void *)obj;
slow:
	return NULL;
}

#define RSEQ_PUSH(count)						\
	RSEQ_SECTION_HEAD						\
	RSEQ_LOAD_CPU_SLOT						\
	"testb $1, 8(%[c])\n\t"						\
	"jnz 5f\n\t"							\
	"cmpq %[page], 16(%[c])\n\t"					\
	"jne 5f\n\t"							\
	"movq (%[c]), %[enc]\n\t"					\
	"cmpq %[enc], %[head]\n\t"					\
	"je 9f\n\t"							\
	RSEQ_SET_FREEPOINTER("tail", "enc")				\
	count								\
	"movq %[head], (%[c])\n\t"					\
	"2:\n\t"							\
	"movb $1, %b[done]\n\t"						\
	"jmp 6f\n\t"							\
	"9:\n\t"							\
	"movb $2, %b[done]\n\t"						\
	"jmp 6f\n\t"							\
	"5:\n\t"							\
	"movb $0, %b[done]\n\t"						\
	"6:\n\t"
#define RSEQ_PUSH_OPERANDS						\
	[c] "=&r"(c), [tmp] "=&r"(tmp), [enc] "=&r"(enc), [done] "=&r"(done) \
	: [rs] "r"(rs), RSEQ_CONSTS(s), [page] "r"(page), [head] "r"(head), \
	[tail] "r"(tail), [fast] "i"(offsetof(struct kmem_cache_cpu, nr_free_fast)) \
	: "memory", "cc"

/**
 * rseq_push - put head..tail on this CPU's freelist if @page is its slab
 * @s: cache
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @page: slab of the objects
 * @head: first object of the chain (already linked up to @tail)
 * @tail: last object; its free pointer is set to the old freelist
 * @count: bump the CPU slot's fast-path count (s->count_fast)
 *
 * Return: 1 if pushed, 0 if the slow path must run, 2 if @head already is
 * the first free object (a double free, the kernel's BUG_ON(object == fp)).
 */
static __attribute__((always_inline)) inline int
rseq_push(const struct uks_kmem_cache *s, ptrdiff_t rs, struct uks_page *page,
	  void *head, void *tail, bool count)
{
	uintptr_t c, tmp, enc;
	unsigned char done;

	RSEQ_SECTION(count, RSEQ_PUSH, RSEQ_PUSH_OPERANDS);
	return done;
}

#define RSEQ_FREE_CPU_SLAB(count)					\
	RSEQ_SECTION_HEAD						\
	RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")				\
	"testb $1, 8(%[c])\n\t"						\
	"jnz %l[slow]\n\t"						\
	"movq %[obj], %[tmp]\n\t"					\
	"subq 24(%[c]), %[tmp]\n\t"					\
	"cmpq 56(%[c]), %[tmp]\n\t"					\
	"jae %l[slow]\n\t"						\
	"movq (%[c]), %[enc]\n\t"					\
	"cmpq %[enc], %[obj]\n\t"					\
	"je %l[double_free]\n\t"					\
	RSEQ_SET_FREEPOINTER("obj", "enc")				\
	count								\
	"movq %[obj], (%[c])\n\t"					\
	"2:\n\t"
#define RSEQ_FREE_CPU_SLAB_OPERANDS					\
	[c] "=&r"(c), [tmp] "=&r"(tmp), [enc] "=&r"(enc)		\
	: [rs] "r"(rs), RSEQ_CONSTS(s), [obj] "r"(obj),			\
	[fast] "i"(offsetof(struct kmem_cache_cpu, nr_free_fast))	\
	: "memory", "cc"

/**
 * rseq_free_cpu_slab - free @obj onto this CPU's freelist if it lies in the CPU slab
 * @s: cache
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @obj: the object
 * @count: bump the CPU slot's fast-path count (s->count_fast)
 *
 * The kmem_cache_free() fast path: an address-range check against the CPU
 * slab (c->slab_start, c->slab_bytes; {0, 0} without one) replaces the
 * page lookup, since an object inside it is of this cache.
 * Return: 1 freed, 0 the general path must run, 2 a naive double free.
 */
static __attribute__((always_inline)) inline int
rseq_free_cpu_slab(const struct uks_kmem_cache *s, ptrdiff_t rs, void *obj, bool count)
{
	uintptr_t c, tmp, enc;

	RSEQ_SECTION_GOTO(count, RSEQ_FREE_CPU_SLAB, RSEQ_FREE_CPU_SLAB_OPERANDS,
			  slow, double_free);
	return 1;
slow:
	return 0;
double_free:
	return 2;
}

#define RSEQ_SHEAF_POP(count)						\
	RSEQ_SECTION_HEAD						\
	RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")				\
	"testb $1, 8(%[c])\n\t"						\
	"jnz %l[slow]\n\t"						\
	"movq 48(%[c]), %[addr]\n\t"					\
	"movq (%[addr]), %[val]\n\t"					\
	"testq %[val], %[val]\n\t"					\
	"jz 8f\n\t"							\
	"subq $1, %[val]\n\t"						\
	"movq 16(%[addr], %[val], 8), %[obj]\n\t"			\
	"jmp 9f\n\t"							\
	"8:\n\t"							\
	"cmpl $0, %c[barn_full](%[s])\n\t"				\
	"jne %l[slow]\n\t"						\
	"movq (%[c]), %[obj]\n\t"					\
	"testq %[obj], %[obj]\n\t"					\
	"jz %l[slow]\n\t"						\
	RSEQ_GET_FREEPOINTER("val", "obj")				\
	"movq %[c], %[addr]\n\t"					\
	"9:\n\t"							\
	count								\
	"movq %[val], (%[addr])\n\t"					\
	"2:\n\t"
#define RSEQ_SHEAF_POP_OPERANDS						\
	[obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [val] "=&r"(val), \
	[addr] "=&r"(addr)						\
	: [rs] "r"(rs), RSEQ_CONSTS(s),					\
	[fast] "i"(offsetof(struct kmem_cache_cpu, nr_alloc_fast)),	\
	[barn_full] "i"(offsetof(struct uks_kmem_cache, barn.nr_full))	\
	: "memory", "cc"

/**
 * rseq_sheaf_pop - allocate from this CPU's sheaf, else from its freelist
 * @s: cache with sheaves
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @count: bump the CPU slot's fast-path count (s->count_fast)
 *
 * The freelist only when the barn has no full sheaf to trade the empty
 * one for (the slow path does that trade, sheaf.c).
 * One section for both, so that an empty sheaf costs no second restart
 * point: each branch leaves the committing store in [val] -> ([addr])
 * (the sheaf's new size, or the freelist's next object), and the section
 * ends in that one store.
 * Return: the object, or NULL if the slow path must run.
 */
static __attribute__((always_inline)) inline void *
rseq_sheaf_pop(const struct uks_kmem_cache *s, ptrdiff_t rs, bool count)
{
	uintptr_t obj, c, tmp, val, addr;

	RSEQ_SECTION_GOTO(count, RSEQ_SHEAF_POP, RSEQ_SHEAF_POP_OPERANDS, slow);
	if (!obj)
		__builtin_unreachable();	/* the section jumped to slow: no test */
	return (void *)obj;
slow:
	return NULL;
}

#define RSEQ_SHEAF_PUSH(count)						\
	RSEQ_SECTION_HEAD						\
	RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")				\
	"testb $1, 8(%[c])\n\t"						\
	"jnz %l[slow]\n\t"						\
	"movq (%[c], %[which]), %[sh]\n\t"				\
	"movq (%[sh]), %[n]\n\t"					\
	"cmpq 8(%[sh]), %[n]\n\t"					\
	"jae %l[slow]\n\t"						\
	"testq %[n], %[n]\n\t"						\
	"jz 8f\n\t"							\
	"cmpq %[obj], 8(%[sh], %[n], 8)\n\t"				\
	"je %l[double_free]\n\t"					\
	"8:\n\t"							\
	"movq %[obj], 16(%[sh], %[n], 8)\n\t"				\
	"addq $1, %[n]\n\t"						\
	count								\
	"movq %[n], (%[sh])\n\t"					\
	"2:\n\t"
#define RSEQ_SHEAF_PUSH_OPERANDS					\
	[c] "=&r"(c), [tmp] "=&r"(tmp), [sh] "=&r"(sh), [n] "=&r"(n)	\
	: [rs] "r"(rs), RSEQ_CONSTS(s), [obj] "r"(obj), [which] "r"(which), \
	[fast] "i"(offsetof(struct kmem_cache_cpu, nr_free_fast))	\
	: "memory", "cc"

/**
 * rseq_sheaf_push - push @obj onto one of this CPU's sheaves
 * @s: cache with sheaves
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @obj: the object
 * @which: SHEAF_OWN, or SHEAF_OUTBOX for another CPU's object
 * @count: bump the CPU slot's fast-path count (s->count_fast)
 *
 * The object itself is not written: no free pointer, no cache miss.  The
 * store into objects[size] before the commit is harmless if the section
 * aborts: that slot is above size, so nobody reads it.
 * Return: 1 pushed, 0 the slow path must run (sheaf full, slot locked),
 * 2 if @obj already is the top of the sheaf (a naive double free).
 */
static __attribute__((always_inline)) inline int
rseq_sheaf_push(const struct uks_kmem_cache *s, ptrdiff_t rs, void *obj, size_t which,
		bool count)
{
	uintptr_t c, tmp, sh, n;

	RSEQ_SECTION_GOTO(count, RSEQ_SHEAF_PUSH, RSEQ_SHEAF_PUSH_OPERANDS,
			  slow, double_free);
	return 1;
slow:
	return 0;
double_free:
	return 2;
}

/**
 * rseq_pop_many - pop up to @n objects into @p in one critical section
 * @s: cache
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @p: output array (written before the commit; rewritten on restart)
 * @n: at most this many (at least 1)
 *
 * Return: objects popped (0 if the slow path must run).
 */
static __attribute__((always_inline)) inline size_t
rseq_pop_many(const struct uks_kmem_cache *s, ptrdiff_t rs, void **p, size_t n)
{
	uintptr_t obj, c, tmp, off, rnd;
	size_t cnt;

	/*
	 * The walk is a chain of dependent loads: each object's free pointer
	 * is loaded straight from (obj + offset), with the hardening key
	 * (bswap of that address ^ random) made beside it.  The offset and
	 * the random are loaded once, before the walk.
	 */
	__asm__ __volatile__ goto(
		RSEQ_SECTION_HEAD
		RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")
		"testb $1, 8(%[c])\n\t"
		"jnz %l[slow]\n\t"
		"movq (%[c]), %[obj]\n\t"
		"testq %[obj], %[obj]\n\t"
		"jz %l[slow]\n\t"
		"movl %c[offo](%[s]), %k[off]\n\t"
		"movq %c[rndo](%[s]), %[rnd]\n\t"
		"xorl %k[cnt], %k[cnt]\n\t"
		"8:\n\t"
		"movq %[obj], (%[p], %[cnt], 8)\n\t"
		"addq $1, %[cnt]\n\t"
		"leaq (%[obj], %[off]), %[tmp]\n\t"
		"movq (%[obj], %[off]), %[obj]\n\t"
		"testq %[rnd], %[rnd]\n\t"
		"je 7f\n\t"
		"bswapq %[tmp]\n\t"
		"xorq %[rnd], %[tmp]\n\t"
		"xorq %[tmp], %[obj]\n\t"
		"7:\n\t"
		"cmpq %[n], %[cnt]\n\t"
		"je 10f\n\t"
		"testq %[obj], %[obj]\n\t"
		"jnz 8b\n\t"
		"10:\n\t"
		"movq %[obj], (%[c])\n\t"
		"2:\n\t"
		: [obj] "=&r"(obj), [c] "=&r"(c), [tmp] "=&r"(tmp), [cnt] "=&r"(cnt),
		  [off] "=&r"(off), [rnd] "=&r"(rnd)
		: [rs] "r"(rs), RSEQ_CONSTS(s), [p] "r"(p), [n] "r"(n)
		: "memory", "cc"
		: slow);
	return cnt;
slow:
	return 0;
}

/**
 * rseq_free_many_cpu_slab - free the last objects of @p onto this CPU's freelist
 * @s: cache
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 * @p: the objects
 * @n: how many (at least 1)
 * @bad: set to the object if a double free is seen
 *
 * The kmem_cache_free_bulk() fast path: from p[n - 1] down, every object
 * inside the CPU slab is linked onto the CPU freelist, and one store
 * commits them all.  Free pointers written before an abort are in objects
 * being freed, which nobody else reads; the restart writes them again.
 * Each link checks the object against the pointer stored in it, as the
 * hardened set_freepointer() does.
 * Return: objects freed (0: the first was not in the CPU slab, the slot
 * was locked, or rseq is not registered), or -1 for a double free (*@bad).
 */
static __attribute__((always_inline)) inline long
rseq_free_many_cpu_slab(const struct uks_kmem_cache *s, ptrdiff_t rs, void **p, size_t n,
			void **bad)
{
	uintptr_t c, tmp, enc, obj, left, off, rnd;

	__asm__ __volatile__ goto(
		RSEQ_SECTION_HEAD
		RSEQ_LOAD_CPU_SLOT_OR("%l[slow]")
		"testb $1, 8(%[c])\n\t"
		"jnz %l[slow]\n\t"
		"movq (%[c]), %[enc]\n\t"
		"movq %[n], %[left]\n\t"
		"movl %c[offo](%[s]), %k[off]\n\t"
		"movq %c[rndo](%[s]), %[rnd]\n\t"
		"8:\n\t"
		"movq -8(%[p], %[left], 8), %[obj]\n\t"
		"movq %[obj], %[tmp]\n\t"
		"subq 24(%[c]), %[tmp]\n\t"
		"cmpq 56(%[c]), %[tmp]\n\t"
		"jae 9f\n\t"
		"cmpq %[enc], %[obj]\n\t"
		"je 10f\n\t"
		"testq %[rnd], %[rnd]\n\t"
		"je 7f\n\t"
		"leaq (%[obj], %[off]), %[tmp]\n\t"
		"bswapq %[tmp]\n\t"
		"xorq %[tmp], %[enc]\n\t"
		"xorq %[rnd], %[enc]\n\t"
		"7:\n\t"
		"movq %[enc], (%[obj], %[off])\n\t"
		"movq %[obj], %[enc]\n\t"
		"subq $1, %[left]\n\t"
		"jnz 8b\n\t"
		"9:\n\t"
		"cmpq %[n], %[left]\n\t"
		"je %l[slow]\n\t"
		"movq %[n], %[tmp]\n\t"
		"subq %[left], %[tmp]\n\t"
		"addq %[tmp], %c[fast](%[c])\n\t"
		"movq %[enc], (%[c])\n\t"
		"2:\n\t"
		"jmp 11f\n\t"
		"10:\n\t"
		"movq %[obj], (%[bad])\n\t"
		"jmp %l[double_free]\n\t"
		"11:\n\t"
		: [c] "=&r"(c), [tmp] "=&r"(tmp), [enc] "=&r"(enc),
		  [obj] "=&r"(obj), [left] "=&r"(left), [off] "=&r"(off), [rnd] "=&r"(rnd)
		: [rs] "r"(rs), RSEQ_CONSTS(s), [p] "r"(p), [n] "r"(n), [bad] "r"(bad),
		  [fast] "i"(offsetof(struct kmem_cache_cpu, nr_free_fast))
		: "memory", "cc"
		: slow, double_free);
	return (long)(n - left);
slow:
	return 0;
double_free:
	return -1;
}

/**
 * rseq_trylock - set the lock bit of CPU @cpu's slot, if this thread is on it
 * @s: cache
 * @c: the slot
 * @cpu: its CPU
 * @rs: the rseq area's offset from the thread pointer (uks_rseq_off())
 *
 * Return: 1 locked, 0 the slot is already locked, -1 not running on @cpu.
 */
static inline int rseq_trylock(const struct uks_kmem_cache *s, struct kmem_cache_cpu *c,
			       unsigned int cpu, ptrdiff_t rs)
{
	uintptr_t tmp;
	int ret;

	__asm__ __volatile__(
		RSEQ_SECTION_HEAD
		"movl $-1, %[ret]\n\t"
		"cmpl %%fs:4(%[rs]), %[cpu]\n\t"
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
		: [tmp] "=&r"(tmp), [ret] "=&r"(ret)
		: [rs] "r"(rs), RSEQ_CONSTS(s), [c] "r"(c), [cpu] "r"(cpu)
		: "memory", "cc");
	return ret;
}

#endif /* UKS_HAVE_RSEQ_ASM */

#endif
