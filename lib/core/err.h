/* SPDX-License-Identifier: MIT */
/*
 * ERR_PTR: an errno folded into a pointer.  Internal only: public APIs
 * return 0/-errno or NULL, never an ERR_PTR.
 */
#ifndef UKS_LIB_CORE_ERR_H
#define UKS_LIB_CORE_ERR_H

#include <stdbool.h>
#include <stdint.h>

#define MAX_ERRNO 4095

static inline void *ERR_PTR(long error) { return (void *)error; }
static inline long PTR_ERR(const void *ptr) { return (long)ptr; }
static inline bool IS_ERR(const void *ptr)
{
	return (uintptr_t)ptr >= (uintptr_t)-MAX_ERRNO;
}
static inline bool IS_ERR_OR_NULL(const void *ptr)
{
	return !ptr || IS_ERR(ptr);
}

#endif
