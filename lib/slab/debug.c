// SPDX-License-Identifier: MIT
/*
 * slub_debug checks, as in 5.15: red zones (Z), poisoning (P), alloc/free
 * tracking (U), tracing (T) and consistency checks (F), applied on the
 * slow paths every debug-cache allocation and free takes, on slab
 * creation and release, and by validate.  Reports are in report.c.
 *
 * Locking: free_debug_processing() and validate hold list_lock and then
 * slab_lock(page), as the kernel does.
 */
#include <string.h>
#include <unistd.h>

#include "core/log.h"
#include "slab/debug.h"
#include "slab/hot.h"
#include "slab/slub.h"

/*
 * The object maps (4 KiB) live on the stack of the walk that needs one.
 * As __thread variables they were in every thread's static TLS block,
 * which the C library zeroes when it creates a thread: two resident
 * pages per thread of every program, for debug-only walks.
 */
#define MAX_OBJS_BITMAP_LONGS ((SLUB_MAX_OBJS_PER_PAGE + 1) / (8 * sizeof(unsigned long)))

/* Not the kernel's jiffies: milliseconds, i.e. HZ=1000. */
unsigned long __uks_jiffies(void)
{
	return (unsigned long)(uks_clock_mono_ns() / 1000000);
}

static void init_object(struct uks_kmem_cache *s, void *object, uint8_t val)
{
	uint8_t *p = object;

	if (s->flags & UKS_SLAB_RED_ZONE)
		memset(p - s->red_left_pad, val, s->red_left_pad);
	if (s->poison_objects) {
		memset(p, POISON_FREE, s->object_size - 1);
		p[s->object_size - 1] = POISON_END;
	}
	if (s->flags & UKS_SLAB_RED_ZONE)
		memset(p + s->object_size, val, s->inuse - s->object_size);
}

/* A track's stack, captured before any lock is taken. */
struct track_snapshot {
	unsigned long addrs[SLUB_TRACK_ADDRS];
};

static void snapshot_stack(struct uks_kmem_cache *s, struct track_snapshot *snap)
{
	memset(snap, 0, sizeof(*snap));
	if (s->flags & UKS_SLAB_STORE_USER) {
		__uks_stack_trace_prepare();	/* may allocate: no lock is held */
		__uks_stack_trace(snap->addrs, SLUB_TRACK_ADDRS, 3);
	}
}

/*
 * The calling thread's id, for tracks.  gettid() is a system call (glibc
 * does not cache it) and U made two per allocation and free: a quarter of
 * U's cost in bench/malloc-peers' mixed pattern.  fork()'s child clears
 * the cache of the one thread it has (__uks_debug_fork_child()).
 */
static __thread pid_t track_tid __attribute__((tls_model("initial-exec")));

static pid_t current_tid(void)
{
	if (unlikely(!track_tid))
		track_tid = gettid();
	return track_tid;
}

void __uks_debug_fork_child(void)
{
	track_tid = 0;
}

static void set_track(struct uks_kmem_cache *s, void *object, enum track_item alloc,
		      unsigned long addr, const struct track_snapshot *snap)
{
	struct slub_track *p = __uks_get_track(s, object, alloc);

	if (!addr) {
		memset(p, 0, sizeof(*p));
		return;
	}
	memcpy(p->addrs, snap->addrs, sizeof(p->addrs));
	p->addr = addr;
	p->cpu = uks_cpu_current();
	p->pid = (int)current_tid();
	p->when = __uks_jiffies();
}

void __uks_init_tracking(struct uks_kmem_cache *s, void *object)
{
	if (!(s->flags & UKS_SLAB_STORE_USER))
		return;
	set_track(s, object, TRACK_FREE, 0, NULL);
	set_track(s, object, TRACK_ALLOC, 0, NULL);
}

/* New slab memory: POISON_INUSE everywhere when poisoning. */
void __uks_setup_slab_debug(struct uks_kmem_cache *s, struct uks_page *page, void *addr)
{
	if (s->flags & UKS_SLAB_POISON)
		memset(addr, POISON_INUSE, slab_bytes(page));
}

void __uks_setup_object_debug(struct uks_kmem_cache *s, void *object)
{
	if (!(s->flags & (UKS_SLAB_STORE_USER | UKS_SLAB_RED_ZONE)) && !s->poison_objects)
		return;
	init_object(s, object, SLUB_RED_INACTIVE);
	__uks_init_tracking(s, object);
}

/* Is @object the start of an object slot of @page (NULL counts as valid)? */
bool __uks_check_valid_pointer(struct uks_kmem_cache *s, struct uks_page *page, void *object)
{
	char *base, *obj = object;

	if (!object)
		return true;
	base = slab_address(page);
	obj -= s->red_left_pad;
	if (obj < base || obj >= base + (size_t)page->objects * s->size ||
	    (size_t)(obj - base) % s->size)
		return false;
	return true;
}

static int check_pad_bytes(struct uks_kmem_cache *s, struct uks_page *page, uint8_t *p)
{
	unsigned int off = __uks_get_info_end(s);

	if (s->flags & UKS_SLAB_STORE_USER)
		off += 2 * SLUB_TRACK_SIZE;
	if (__uks_size_from_object(s) == off)
		return 1;
	return __uks_check_bytes_and_report(s, page, p, "Object padding", p + off, POISON_INUSE,
					    __uks_size_from_object(s) - off);
}

/* The slab's tail, after the last object, must still be POISON_INUSE. */
static int slab_pad_check(struct uks_kmem_cache *s, struct uks_page *page)
{
	uint8_t *start, *end, *pad, *fault;
	size_t length, remainder;

	if (!(s->flags & UKS_SLAB_POISON))
		return 1;
	start = slab_address(page);
	length = slab_bytes(page);
	end = start + length;
	remainder = length % s->size;
	if (!remainder)
		return 1;
	pad = end - remainder;
	fault = __uks_memchr_inv(pad, POISON_INUSE, remainder);
	if (!fault)
		return 1;
	while (end > fault && end[-1] == POISON_INUSE)
		end--;
	__uks_slab_err(s, page, "Padding overwritten. 0x%016lx-0x%016lx @offset=%td",
		       (unsigned long)fault, (unsigned long)(end - 1), fault - start);
	if (!__uks_slab_kunit_errors)
		__uks_print_section(UKS_LOG_ERR, "Padding ", pad, remainder);
	__uks_restore_bytes(s, "slab padding", POISON_INUSE, fault, end);
	return 0;
}

static int check_object(struct uks_kmem_cache *s, struct uks_page *page, void *object, uint8_t val)
{
	uint8_t *p = object, *endobject = p + s->object_size;

	if (s->flags & UKS_SLAB_RED_ZONE) {
		if (!__uks_check_bytes_and_report(s, page, object, "Left Redzone",
						  p - s->red_left_pad, val, s->red_left_pad))
			return 0;
		if (!__uks_check_bytes_and_report(s, page, object, "Right Redzone", endobject, val,
						  s->inuse - s->object_size))
			return 0;
	} else if ((s->flags & UKS_SLAB_POISON) && s->object_size < s->inuse) {
		__uks_check_bytes_and_report(s, page, p, "Alignment padding", endobject,
					     POISON_INUSE, s->inuse - s->object_size);
	}

	if (s->flags & UKS_SLAB_POISON) {
		if (val != SLUB_RED_ACTIVE && s->poison_objects &&
		    (!__uks_check_bytes_and_report(s, page, p, "Poison", p, POISON_FREE,
						   s->object_size - 1) ||
		     !__uks_check_bytes_and_report(s, page, p, "End Poison",
						   p + s->object_size - 1, POISON_END, 1)))
			return 0;
		check_pad_bytes(s, page, p);
	}

	/* An allocated object may hold anything where its free pointer was. */
	if (s->offset < s->inuse && val == SLUB_RED_ACTIVE)
		return 1;

	if (!__uks_check_valid_pointer(s, page, get_freepointer(s, p))) {
		__uks_object_err(s, page, p, "Freepointer corrupt");
		/* Lose the rest of the chain rather than follow a bad pointer. */
		set_freepointer(s, p, NULL);
		return 0;
	}
	return 1;
}

static int check_slab(struct uks_kmem_cache *s, struct uks_page *page)
{
	unsigned int maxobj;

	if (page->kind != PAGE_SLAB) {
		__uks_slab_err(s, page, "Not a valid slab page");
		return 0;
	}
	maxobj = (unsigned int)(slab_bytes(page) / s->size);
	if (page->objects > maxobj) {
		__uks_slab_err(s, page, "objects %u > max %u", page->objects, maxobj);
		return 0;
	}
	if (page->inuse > page->objects) {
		__uks_slab_err(s, page, "inuse %u > max %u", page->inuse, page->objects);
		return 0;
	}
	slab_pad_check(s, page);
	return 1;
}

/*
 * Is @search on the slab's freelist?  Walking it also repairs a corrupt
 * chain and wrong counters, reporting each.  NULL @search: just check.
 */
static int on_freelist(struct uks_kmem_cache *s, struct uks_page *page, void *search)
{
	void *fp = page->freelist, *object = NULL;
	unsigned int max_objects;
	int nr = 0;

	while (fp && nr <= (int)page->objects) {
		if (fp == search)
			return 1;
		if (!__uks_check_valid_pointer(s, page, fp)) {
			if (object) {
				__uks_object_err(s, page, object, "Freechain corrupt");
				set_freepointer(s, object, NULL);
			} else {
				__uks_slab_err(s, page, "Freepointer corrupt");
				page->freelist = NULL;
				page->inuse = page->objects;
				__uks_slab_fix(s, "Freelist cleared");
				return 0;
			}
			break;
		}
		object = fp;
		fp = get_freepointer(s, object);
		nr++;
	}

	max_objects = (unsigned int)(slab_bytes(page) / s->size);
	if (max_objects > SLUB_MAX_OBJS_PER_PAGE)
		max_objects = SLUB_MAX_OBJS_PER_PAGE;
	if (page->objects != max_objects) {
		__uks_slab_err(s, page, "Wrong number of objects. Found %d but should be %d",
			       page->objects, max_objects);
		page->objects = max_objects;
		__uks_slab_fix(s, "Number of objects adjusted");
	}
	if ((int)page->inuse != (int)page->objects - nr) {
		__uks_slab_err(s, page, "Wrong object count. Counter is %d but counted were %d",
			       page->inuse, (int)page->objects - nr);
		page->inuse = page->objects - (unsigned int)nr;
		__uks_slab_fix(s, "Object count adjusted");
	}
	return search == NULL;
}

/* TRACE <cache> alloc|free ...: slub_debug=T, at info level. */
void __uks_trace(struct uks_kmem_cache *s, struct uks_page *page, void *object, int alloc)
{
	if (!(s->flags & UKS_SLAB_TRACE))
		return;
	/*
	 * One level for the whole group, as 5.15's KERN_INFO line and dump:
	 * warning, so that the default sink, which drops info, shows it.
	 */
	pr_warn("TRACE %s %s 0x%016lx inuse=%d fp=0x%016lx", s->name, alloc ? "alloc" : "free",
		(unsigned long)object, page->inuse, (unsigned long)page->freelist);
	if (!alloc)
		__uks_print_section(UKS_LOG_WARN, "Object ", object, s->object_size);
	__uks_dump_stack(UKS_LOG_WARN);
}

bool __uks_alloc_debug_processing(struct uks_kmem_cache *s, struct uks_page *page, void *object,
				  unsigned long addr)
{
	struct track_snapshot snap;

	if (s->flags & UKS_SLAB_CONSISTENCY_CHECKS) {
		if (!check_slab(s, page))
			goto bad;
		if (!__uks_check_valid_pointer(s, page, object)) {
			__uks_object_err(s, page, object, "Freelist Pointer check fails");
			goto bad;
		}
		if (!check_object(s, page, object, SLUB_RED_INACTIVE))
			goto bad;
	}
	if (s->flags & UKS_SLAB_STORE_USER) {
		snapshot_stack(s, &snap);
		set_track(s, object, TRACK_ALLOC, addr, &snap);
	}
	__uks_trace(s, page, object, 1);
	init_object(s, object, SLUB_RED_ACTIVE);
	return true;

bad:
	/* Leak the slab rather than hand out objects from a corrupted one. */
	__uks_slab_fix(s, "Marking all objects used");
	page->inuse = page->objects;
	page->freelist = NULL;
	return false;
}

/* @bad_pointer: set when @object is no live object of @s, not merely damaged */
static bool free_consistency_checks(struct uks_kmem_cache *s, struct uks_page *page,
				    void *object, bool *bad_pointer)
{
	*bad_pointer = true;
	if (!__uks_check_valid_pointer(s, page, object)) {
		__uks_slab_err(s, page, "Invalid object pointer 0x%016lx", (unsigned long)object);
		return false;
	}
	if (on_freelist(s, page, object)) {
		__uks_object_err(s, page, object, "Object already free");
		return false;
	}
	*bad_pointer = false;
	if (!check_object(s, page, object, SLUB_RED_ACTIVE))
		return false;
	*bad_pointer = true;
	if (unlikely(s != page->slab_cache)) {
		if (page->kind != PAGE_SLAB)
			__uks_slab_err(s, page, "Attempt to free object(0x%016lx) outside of slab",
				       (unsigned long)object);
		else if (!page->slab_cache)
			pr_err("SLUB <none>: no slab for object 0x%016lx.", (unsigned long)object);
		else
			__uks_object_err(s, page, object, "page slab pointer corrupt.");
		return false;
	}
	*bad_pointer = false;
	return true;
}

/*
 * free_debug_processing(): false leaves the objects allocated (the kernel
 * leaks them and goes on).  @bad_pointer says whether a pointer freed was
 * no live object (invalid, already free, another cache's, a broken slab)
 * rather than an object whose red zone or poison was overwritten.
 */
bool __uks_free_debug_processing(struct uks_kmem_cache *s, struct uks_page *page, void *head,
				 void *tail, int bulk_cnt, unsigned long addr, bool *bad_pointer)
{
	struct kmem_cache_node *n = get_node(s, 0);
	struct track_snapshot snap;
	void *object = head;
	bool ret = false;
	int cnt = 0;

	snapshot_stack(s, &snap);
	pthread_mutex_lock(&n->list_lock);
	slab_lock(page);

	*bad_pointer = true;
	if ((s->flags & UKS_SLAB_CONSISTENCY_CHECKS) && !check_slab(s, page))
		goto out;
next_object:
	cnt++;
	if ((s->flags & UKS_SLAB_CONSISTENCY_CHECKS) &&
	    !free_consistency_checks(s, page, object, bad_pointer))
		goto out;
	if (s->flags & UKS_SLAB_STORE_USER)
		set_track(s, object, TRACK_FREE, addr, &snap);
	__uks_trace(s, page, object, 0);
	/* The free pointer survives: poisoning moved it out of the object. */
	init_object(s, object, SLUB_RED_INACTIVE);
	if (object != tail) {
		object = get_freepointer(s, object);
		goto next_object;
	}
	ret = true;
	*bad_pointer = false;
out:
	if (cnt != bulk_cnt)
		__uks_slab_err(s, page, "Bulk freelist count(%d) invalid(%d)", bulk_cnt, cnt);
	slab_unlock(page);
	pthread_mutex_unlock(&n->list_lock);
	if (!ret)
		__uks_slab_fix(s, "Object at 0x%016lx not freed", (unsigned long)object);
	return ret;
}

/* deactivate_slab(): a CPU freelist entry pointing outside the slab. */
bool __uks_freelist_corrupted(struct uks_kmem_cache *s, struct uks_page *page, void **freelist,
			      void *nextfree)
{
	if ((s->flags & UKS_SLAB_CONSISTENCY_CHECKS) &&
	    !__uks_check_valid_pointer(s, page, nextfree) && freelist) {
		__uks_object_err(s, page, *freelist, "Freechain corrupt");
		*freelist = NULL;
		__uks_slab_fix(s, "Isolate corrupted freechain");
		return true;
	}
	return false;
}

/* Before a debug slab goes back to the page allocator (__free_slab()). */
void __uks_slab_check_pad_on_free(struct uks_kmem_cache *s, struct uks_page *page)
{
	void *p;

	if (!(s->flags & UKS_SLAB_CONSISTENCY_CHECKS))
		return;
	slab_pad_check(s, page);
	for_each_object(p, s, slab_address(page), page->objects)
		check_object(s, page, p, SLUB_RED_INACTIVE);
}

/* Bitmap of the free objects of @page (get_map()). */
static void fill_map(struct uks_kmem_cache *s, struct uks_page *page, unsigned long *map)
{
	const unsigned int bits = 8 * sizeof(unsigned long);
	unsigned int n = 0;

	memset(map, 0, MAX_OBJS_BITMAP_LONGS * sizeof(unsigned long));
	/* Bounded, and only valid pointers: a corrupt chain may loop or escape. */
	for (void *p = page->freelist; p && n++ < page->objects; p = get_freepointer(s, p)) {
		unsigned int idx;

		if (!__uks_check_valid_pointer(s, page, p))
			break;
		idx = obj_index(s, page, (char *)p - s->red_left_pad);
		map[idx / bits] |= 1UL << (idx % bits);
	}
}

static bool map_test(const unsigned long *map, unsigned int idx)
{
	const unsigned int bits = 8 * sizeof(unsigned long);

	return map[idx / bits] & (1UL << (idx % bits));
}

static void validate_slab(struct uks_kmem_cache *s, struct uks_page *page, unsigned long *map)
{
	char *addr = slab_address(page);
	void *p;

	slab_lock(page);
	if (!check_slab(s, page) || !on_freelist(s, page, NULL))
		goto unlock;
	/* Now a valid freelist exists. */
	fill_map(s, page, map);
	for_each_object(p, s, addr, page->objects) {
		unsigned int idx = obj_index(s, page, (char *)p - s->red_left_pad);
		uint8_t val = map_test(map, idx) ? SLUB_RED_INACTIVE : SLUB_RED_ACTIVE;

		if (!check_object(s, page, p, val))
			break;
	}
unlock:
	slab_unlock(page);
}

struct full_walk {
	struct uks_kmem_cache *s;
	unsigned long *map;
	unsigned long count;
};

static void validate_full_slab(struct uks_page *page, void *arg)
{
	struct full_walk *w = arg;

	if (page->kind == PAGE_SLAB && page->slab_cache == w->s && !page->frozen &&
	    page->inuse == page->objects && !page->freelist) {
		validate_slab(w->s, page, w->map);
		w->count++;
	}
}

/**
 * __uks_validate_slab_cache - validate_slab_cache(): check every slab
 * @s: cache
 *
 * Flushes the CPU slabs first so they are on the node lists.  Full slabs
 * are listed only with SLAB_STORE_USER, as in the kernel; without it they
 * are found through the page allocator.  Exact on a quiescent cache (frees
 * racing with the walk may be reported).  Return: slabs checked.
 */
int __uks_validate_slab_cache(struct uks_kmem_cache *s)
{
	unsigned long map[MAX_OBJS_BITMAP_LONGS];
	struct kmem_cache_node *n = get_node(s, 0);
	unsigned long count = 0;
	struct uks_page *page;

	__uks_flush_all(s);
	pthread_mutex_lock(&n->list_lock);
	list_for_each_entry(page, &n->partial, slab_list) {
		validate_slab(s, page, map);
		count++;
	}
	if (count != n->nr_partial) {
		pr_err("SLUB %s: %lu partial slabs counted but counter=%lu", s->name, count,
		       n->nr_partial);
		__uks_slab_add_kunit_errors();
	}
	if (s->flags & UKS_SLAB_STORE_USER) {
		list_for_each_entry(page, &n->full, slab_list) {
			validate_slab(s, page, map);
			count++;
		}
		if (count != (unsigned long)atomic_load(&n->nr_slabs)) {
			pr_err("SLUB: %s %lu slabs counted but counter=%ld", s->name, count,
			       atomic_load(&n->nr_slabs));
			__uks_slab_add_kunit_errors();
		}
	} else {
		/*
		 * Full slabs are on no list without U (as in the kernel), so
		 * find them through the page allocator: every slab is checked.
		 * No count check: CPUs may freeze slabs again meanwhile.
		 */
		struct full_walk walk = { s, map, 0 };

		__uks_for_each_page(validate_full_slab, &walk);
		count += walk.count;
	}
	pthread_mutex_unlock(&n->list_lock);
	return (int)count;
}

/* kmem_cache_destroy() with objects left: name each one. */
void __uks_list_slab_objects(struct uks_kmem_cache *s, struct uks_page *page, const char *text)
{
	unsigned long map[MAX_OBJS_BITMAP_LONGS];
	char *addr = slab_address(page);
	void *p;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	__uks_slab_err(s, page, text, s->name);
#pragma GCC diagnostic pop
	slab_lock(page);
	fill_map(s, page, map);
	for_each_object(p, s, addr, page->objects) {
		if (!map_test(map, obj_index(s, page, (char *)p - s->red_left_pad))) {
			pr_err("Object 0x%016lx @offset=%td", (unsigned long)p, (char *)p - addr);
			__uks_print_tracking(s, p);
		}
	}
	slab_unlock(page);
}

/**
 * uks_kmem_cache_validate - check every slab of a cache for corruption
 * @s: cache
 *
 * What writing 1 to /sys/kernel/slab/<cache>/validate does: each
 * inconsistency is reported (and repaired where the kernel repairs it).
 * Return: the number of reports and fixes made (0 = clean).
 */
UKS_EXPORT int uks_kmem_cache_validate(struct uks_kmem_cache *s)
{
	int errors = 0, *saved = __uks_slab_error_tally;

	__uks_slab_error_tally = &errors;
	__uks_validate_slab_cache(s);
	__uks_slab_error_tally = saved;
	return errors;
}
