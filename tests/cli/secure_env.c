// SPDX-License-Identifier: MIT
/*
 * Run setuid root by tests/cli/secure_env.sh: reads the settings libuks
 * takes from the environment and prints what it made of them, which must
 * be the defaults when the caller is another user (AT_SECURE).
 */
#include <stdio.h>
#include <unistd.h>

#include <uks/sched.h>
#include <uks/slab.h>

int main(void)
{
	char dir[4096];
	void *p = uks_kmalloc(64);	/* the allocator reads UKS_SLUB_* now */

	printf("euid %u\n", (unsigned int)geteuid());
	printf("fastpath %s\n", uks_slab_fastpath());
	printf("a32_state %s\n", uks_a32_state_dir(dir, sizeof(dir)));
	uks_kfree(p);
	return 0;
}
