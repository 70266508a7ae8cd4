// SPDX-License-Identifier: MIT
/*
 * Linked into the slab unit tests a second time (mk/parts/slab-malloc-tests.mk):
 * the allocator runs the malloc policy, libuks-malloc.so's, from the start.
 * The tests of what only the kernel policy does skip themselves.
 */
#include <stdlib.h>

#include "slab/policy.h"

__attribute__((constructor)) static void select_malloc_policy(void)
{
	if (__uks_slab_select_policy(&__uks_slab_malloc_policy))
		abort();
}
