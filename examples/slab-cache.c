// SPDX-License-Identifier: MIT
/*
 * A typed object cache end to end: create, allocate (singly and in bulk),
 * read the /sys/kernel/slab/<cache>/ text, catch a red-zone overwrite with
 * slub_debug, and destroy.  Run: build/examples/slab-cache
 */
#include <stdio.h>
#include <string.h>

#include <uks/slab.h>

struct request {
	unsigned long id;
	char path[48];
};

static void show(struct uks_kmem_cache *s, const char *attr)
{
	char buf[256];

	if (uks_kmem_cache_attr_show(s, attr, buf, sizeof(buf)) >= 0)
		printf("  %-22s %s", attr, buf[0] ? buf : "\n");
}

int main(void)
{
	struct uks_kmem_cache *s = uks_kmem_cache_create("request", sizeof(struct request), 0,
							 UKS_SLAB_HWCACHE_ALIGN, NULL);
	struct uks_kmem_cache *dbg;
	struct request *r[100];
	void *bulk[16];
	char *p;

	if (!s)
		return 1;
	for (int i = 0; i < 100; i++) {
		r[i] = uks_kmem_cache_alloc(s);
		r[i]->id = (unsigned long)i;
	}
	for (int i = 0; i < 100; i += 2)
		uks_kmem_cache_free(s, r[i]);
	uks_kmem_cache_alloc_bulk(s, 16, bulk);
	printf("fast path: %s; /sys/kernel/slab/request/:\n", uks_slab_fastpath());
	static const char *const attrs[] = {
		"object_size", "slab_size", "align", "objs_per_slab", "order", "objects",
		"total_objects", "partial", "cpu_slabs", "slabs_cpu_partial", "alloc_fastpath",
		"alloc_slowpath", "free_fastpath", "free_slowpath", "alloc_slab", NULL,
	};
	for (int i = 0; attrs[i]; i++)
		show(s, attrs[i]);
	uks_kmem_cache_free_bulk(s, 16, bulk);
	for (int i = 1; i < 100; i += 2)
		uks_kmem_cache_free(s, r[i]);
	printf("destroy: %d\n\n", uks_kmem_cache_destroy(s));

	printf("a one-byte overflow in a cache with red zones and checks (slub_debug=FZ):\n");
	fflush(stdout);
	dbg = uks_kmem_cache_create("request-debug", 64, 0,
				    UKS_SLAB_RED_ZONE | UKS_SLAB_CONSISTENCY_CHECKS, NULL);
	p = uks_kmem_cache_alloc(dbg);
	memset(p, 'x', 65);
	uks_kmem_cache_free(dbg, p);	/* reported on stderr, then not freed */
	uks_kmem_cache_free(dbg, p);	/* the red zone was restored: freed now */
	return uks_kmem_cache_destroy(dbg) ? 1 : 0;
}
