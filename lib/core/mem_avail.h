/* SPDX-License-Identifier: MIT */
/*
 * May this process allocate N more bytes?  The check every size a user
 * writes (buffer_size_kb, saved_cmdlines_size, DAMON's region counts) goes
 * through before the memory is taken; see mem_avail.c.
 */
#ifndef UKS_LIB_CORE_MEM_AVAIL_H
#define UKS_LIB_CORE_MEM_AVAIL_H

#include <errno.h>
#include <stddef.h>

int __uks_mem_may_allocate(size_t bytes);

/* The same for @n objects of @size bytes; a product past SIZE_MAX is -ENOMEM. */
static inline int __uks_mem_may_allocate_array(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return -ENOMEM;
	return __uks_mem_may_allocate(bytes);
}

#endif
