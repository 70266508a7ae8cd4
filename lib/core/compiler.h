/* SPDX-License-Identifier: MIT */
/*
 * Compiler helpers shared by every uks library file.  Internal: never
 * included from include/uks/.
 */
#ifndef UKS_LIB_CORE_COMPILER_H
#define UKS_LIB_CORE_COMPILER_H

#include <stddef.h>

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

/*
 * Exported symbols; everything else is hidden by -fvisibility=hidden.  In
 * libuks-malloc.so (built with UKS_HIDE_EXPORTS) only the malloc API is
 * exported, so calls stay direct.
 */
#ifdef UKS_HIDE_EXPORTS
#define UKS_EXPORT
#else
#define UKS_EXPORT	__attribute__((visibility("default")))
#endif

#define READ_ONCE(x)	 (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d) (((n) + (d) - 1) / (d))
#define ALIGN_UP(x, a)	(((x) + ((a) - 1)) & ~((__typeof__(x))(a) - 1))

/* Spin-wait hint. */
#if defined(__x86_64__) || defined(__i386__)
#define cpu_relax()	__builtin_ia32_pause()
#elif defined(__aarch64__)
#define cpu_relax()	__asm__ __volatile__("yield" ::: "memory")
#else
#define cpu_relax()	__asm__ __volatile__("" ::: "memory")
#endif

#define UKS_CACHELINE	64
#define __cacheline_aligned __attribute__((aligned(UKS_CACHELINE)))

#endif
