// SPDX-License-Identifier: MIT
/*
 * Slab geometry checked against numbers worked out by hand from Linux
 * v5.15: mm/slub.c calculate_sizes(), calculate_order(), slab_order(),
 * set_min_partial(), set_cpu_partial() and mm/slab_common.c
 * calculate_alignment() / create_boot_cache().  64-bit, PAGE_SIZE 4096,
 * MAX_ORDER 11, cache line 64, struct track 152 bytes, CONFIG_SLUB_DEBUG,
 * CONFIG_SLUB_CPU_PARTIAL, no KASAN.
 *
 * The rules, as 5.15 has them (s = slab size, o = object size):
 *   size   = ALIGN(o, 8); +8 if RED_ZONE and size == o   -> inuse
 *   offset = inuse, size += 8 if POISON, ctor, or RED_ZONE with o < 8;
 *            else offset = ALIGN_DOWN(o / 2, 8) (inside the object)
 *   size  += 2 * 152 if STORE_USER
 *   size  += 8 + (red_left_pad = ALIGN(8, align)) if RED_ZONE
 *   size   = ALIGN(size, align)
 *   order:  min_objects = slub_min_objects ?: 4 * (fls(nr_cpus) + 1),
 *           capped at (PAGE_SIZE << slub_max_order) / s; for each count
 *           down to 2, try waste <= 1/16, 1/8, 1/4 of the slab from
 *           max(slub_min_order, get_order(count * s)) up to slub_max_order;
 *           then one object with any waste up to slub_max_order, then up
 *           to MAX_ORDER - 1; order MAX_ORDER or above fails (-ENOSYS in
 *           calculate_order, so kmem_cache_open() returns -EINVAL).
 *   objects = (PAGE_SIZE << order) / s; min = get_order(s) likewise.
 *   min_partial = clamp(ilog2(s) / 2, 5, 10)
 *   cpu_partial = 0 if any of F/Z/P/U/T, else s >= 4096: 2, >= 1024: 6,
 *                 >= 256: 13, else 30 (on s->size, not the object size).
 */
#include "harness.h"
#include <uks/slab.h>
#include "slab/geometry.h"
#include "slab/slub.h"

#define RZ	UKS_SLAB_RED_ZONE
#define PO	UKS_SLAB_POISON
#define SU	UKS_SLAB_STORE_USER
#define FC	UKS_SLAB_CONSISTENCY_CHECKS
#define TR	UKS_SLAB_TRACE
#define HW	UKS_SLAB_HWCACHE_ALIGN
#define FZPU	(FC | RZ | PO | SU)

/*
 * Tunables.  nr_cpus = 1: calculate_order() then uses nr_cpu_ids; these
 * tests assume a machine with one possible CPU (nr_cpu_ids == 1), so
 * min_objects is 4 * (fls(1) + 1) = 8.
 */
#define TT(mino, maxo, mobj, cpus) \
	{ .min_order = (mino), .max_order = (maxo), .min_objects = (mobj), \
	  .nr_cpus = (cpus), .page_size = 4096 }
#define T(cpus) TT(0, 3, 0, cpus)

#define G(osz, sz, al, inu, off, rlp, ord, objs, mord, mobjs, mpart, cpart) \
	{ .object_size = (osz), .size = (sz), .align = (al), .inuse = (inu), \
	  .offset = (off), .red_left_pad = (rlp), .order = (ord), \
	  .objects = (objs), .min_order = (mord), .min_objects = (mobjs), \
	  .min_partial = (mpart), .cpu_partial = (cpart) }

struct geo_row {
	unsigned int object_size;
	unsigned int align;		/* final s->align, as create_cache() passes */
	unsigned long flags;
	bool ctor;
	struct slub_tunables t;
	struct slub_geometry want;
};

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Compare every field; log the row and each wrong field.  Returns mismatches. */
static int check_geometry(const char *table, size_t i, const struct geo_row *r,
			  const struct slub_geometry *g)
{
	static const struct {
		const char *name;
		size_t off;
	} fields[] = {
#define F_(f) { #f, offsetof(struct slub_geometry, f) }
		F_(object_size), F_(size), F_(align), F_(inuse), F_(offset),
		F_(red_left_pad), F_(order), F_(objects), F_(min_order),
		F_(min_objects), F_(min_partial), F_(cpu_partial),
#undef F_
	};
	int bad = 0;

	for (size_t f = 0; f < ARRAY_LEN(fields); f++) {
		unsigned int want = *(const unsigned int *)((const char *)&r->want + fields[f].off);
		unsigned int got = *(const unsigned int *)((const char *)g + fields[f].off);

		if (want == got)
			continue;
		TH_LOG("%s[%zu]: object %u align %u flags %#lx ctor %d "
		       "(min_order %u max_order %u min_objects %u cpus %u): %s %u, want %u",
		       table, i, r->object_size, r->align, r->flags, r->ctor,
		       r->t.min_order, r->t.max_order, r->t.min_objects, r->t.nr_cpus,
		       fields[f].name, got, want);
		bad++;
	}
	return bad;
}

static int run_rows(const char *table, const struct geo_row *rows, size_t n)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		struct slub_geometry g;
		int ret;

		memset(&g, 0xa5, sizeof(g));
		ret = __uks_slub_geometry(rows[i].object_size, rows[i].align, rows[i].flags,
					  rows[i].ctor, &rows[i].t, &g);
		if (ret) {
			TH_LOG("%s[%zu]: object %u align %u flags %#lx: returned %d",
			       table, i, rows[i].object_size, rows[i].align, rows[i].flags, ret);
			bad++;
			continue;
		}
		bad += check_geometry(table, i, &rows[i], &g);
	}
	return bad;
}

/* ------------------------------------------------------------------ */
/* calculate_alignment() */

static const struct {
	unsigned long flags;
	unsigned int align, size, want;
} aligns[] = {
	{ 0, 0, 64, 8 },		/* ARCH_SLAB_MINALIGN */
	{ 0, 4, 64, 8 },
	{ 0, 8, 3, 8 },
	{ 0, 16, 3, 16 },
	{ 0, 64, 8, 64 },
	{ 0, 4096, 8, 4096 },
	{ 0, 12, 5, 16 },		/* only ALIGN(align, sizeof(void *)) */
	{ 0, 24, 5, 24 },		/* 5.15 does not insist on a power of two */
	{ HW, 0, 1, 8 },		/* ralign halves to 1, then the 8 floor */
	{ HW, 0, 8, 8 },
	{ HW, 0, 9, 16 },
	{ HW, 0, 16, 16 },
	{ HW, 0, 17, 32 },
	{ HW, 0, 20, 32 },		/* 20 <= 32, 20 > 16 */
	{ HW, 0, 32, 32 },		/* size <= line / 2 halves once */
	{ HW, 0, 33, 64 },
	{ HW, 0, 64, 64 },
	{ HW, 0, 100, 64 },
	{ HW, 0, 4096, 64 },
	{ HW, 16, 100, 64 },		/* max(align, ralign) */
	{ HW, 128, 20, 128 },
	{ HW | RZ | PO, 0, 20, 32 },	/* debug flags do not matter here */
	{ RZ, 0, 64, 8 },
};

TEST(calc_align)
{
	for (size_t i = 0; i < ARRAY_LEN(aligns); i++) {
		unsigned int got = __uks_slub_calc_align(aligns[i].flags, aligns[i].align,
							 aligns[i].size);

		if (got != aligns[i].want)
			TH_LOG("aligns[%zu]: flags %#lx align %u size %u", i, aligns[i].flags,
			       aligns[i].align, aligns[i].size);
		EXPECT_EQ(got, aligns[i].want);
	}
}

/* ------------------------------------------------------------------ */
/* kmalloc-N without debugging, align 8, at several CPU counts. */

static const unsigned int plain_cpus[5] = { 1, 2, 4, 8, 64 };	/* min_objects 8, 12, 16, 20, 32 */

static const struct {
	unsigned int size;
	struct { unsigned int order, objects; } oo[5];	/* per plain_cpus[] */
	unsigned int min_order, min_objects, min_partial, cpu_partial;
} plain[] = {
	{    8, { { 0, 512 }, { 0, 512 }, { 0, 512 }, { 0, 512 }, { 0, 512 } }, 0, 512,  5, 30 },
	{   16, { { 0, 256 }, { 0, 256 }, { 0, 256 }, { 0, 256 }, { 0, 256 } }, 0, 256,  5, 30 },
	{   32, { { 0, 128 }, { 0, 128 }, { 0, 128 }, { 0, 128 }, { 0, 128 } }, 0, 128,  5, 30 },
	{   64, { { 0,  64 }, { 0,  64 }, { 0,  64 }, { 0,  64 }, { 0,  64 } }, 0,  64,  5, 30 },
	/* 4096 % 96 = 64 <= 4096 / 16 */
	{   96, { { 0,  42 }, { 0,  42 }, { 0,  42 }, { 0,  42 }, { 0,  42 } }, 0,  42,  5, 30 },
	{  128, { { 0,  32 }, { 0,  32 }, { 0,  32 }, { 0,  32 }, { 0,  32 } }, 0,  32,  5, 30 },
	/* 32 * 192 > 4096: get_order(6144) = 1 */
	{  192, { { 0,  21 }, { 0,  21 }, { 0,  21 }, { 0,  21 }, { 1,  42 } }, 0,  21,  5, 30 },
	{  256, { { 0,  16 }, { 0,  16 }, { 0,  16 }, { 1,  32 }, { 1,  32 } }, 0,  16,  5, 13 },
	{  512, { { 0,   8 }, { 1,  16 }, { 1,  16 }, { 2,  32 }, { 2,  32 } }, 0,   8,  5, 13 },
	{ 1024, { { 1,   8 }, { 2,  16 }, { 2,  16 }, { 3,  32 }, { 3,  32 } }, 0,   4,  5,  6 },
	/* min_objects capped at (4096 << 3) / 2048 = 16 */
	{ 2048, { { 2,   8 }, { 3,  16 }, { 3,  16 }, { 3,  16 }, { 3,  16 } }, 0,   2,  5,  6 },
	/* ilog2(4096) / 2 = 6; size >= PAGE_SIZE: cpu_partial 2 */
	{ 4096, { { 3,   8 }, { 3,   8 }, { 3,   8 }, { 3,   8 }, { 3,   8 } }, 0,   1,  6,  2 },
	{ 8192, { { 3,   4 }, { 3,   4 }, { 3,   4 }, { 3,   4 }, { 3,   4 } }, 1,   1,  6,  2 },
};

TEST(kmalloc_plain_by_cpus)
{
	int bad = 0;

	for (size_t i = 0; i < ARRAY_LEN(plain); i++) {
		for (size_t c = 0; c < ARRAY_LEN(plain_cpus); c++) {
			unsigned int s = plain[i].size;
			struct geo_row r = {
				.object_size = s, .align = 8, .flags = 0, .ctor = false,
				.t = T(plain_cpus[c]),
				.want = G(s, s, 8, s, s / 2 / 8 * 8, 0,
					  plain[i].oo[c].order, plain[i].oo[c].objects,
					  plain[i].min_order, plain[i].min_objects,
					  plain[i].min_partial, plain[i].cpu_partial),
			};
			struct slub_geometry g;
			int ret = __uks_slub_geometry(s, 8, 0, false, &r.t, &g);

			if (ret) {
				TH_LOG("kmalloc-%u at %u CPUs: returned %d", s, plain_cpus[c], ret);
				bad++;
				continue;
			}
			bad += check_geometry("plain", i, &r, &g);
		}
	}
	EXPECT_EQ(bad, 0);
}

/* ------------------------------------------------------------------ */
/* slub_debug=FZPU on the kmalloc sizes, 2 CPUs (min_objects 12). */

static const struct geo_row fzpu_align8[] = {
	/* 8 -> 16 (red zone word) = inuse; +8 fp; +304 tracks; +8 +8 red zones */
	{    8, 8, FZPU, false, T(2), G(8, 344, 8, 16, 16, 8, 1, 23, 0, 11, 5, 0) },
	{   16, 8, FZPU, false, T(2), G(16, 352, 8, 24, 24, 8, 1, 23, 0, 11, 5, 0) },
	{   32, 8, FZPU, false, T(2), G(32, 368, 8, 40, 40, 8, 1, 22, 0, 11, 5, 0) },
	{   64, 8, FZPU, false, T(2), G(64, 400, 8, 72, 72, 8, 1, 20, 0, 10, 5, 0) },
	{   96, 8, FZPU, false, T(2), G(96, 432, 8, 104, 104, 8, 1, 18, 0, 9, 5, 0) },
	{  128, 8, FZPU, false, T(2), G(128, 464, 8, 136, 136, 8, 1, 17, 0, 8, 5, 0) },
	{  192, 8, FZPU, false, T(2), G(192, 528, 8, 200, 200, 8, 1, 15, 0, 7, 5, 0) },
	{  256, 8, FZPU, false, T(2), G(256, 592, 8, 264, 264, 8, 1, 13, 0, 6, 5, 0) },
	{  512, 8, FZPU, false, T(2), G(512, 848, 8, 520, 520, 8, 2, 19, 0, 4, 5, 0) },
	{ 1024, 8, FZPU, false, T(2), G(1024, 1360, 8, 1032, 1032, 8, 2, 12, 0, 3, 5, 0) },
	{ 2048, 8, FZPU, false, T(2), G(2048, 2384, 8, 2056, 2056, 8, 3, 13, 0, 1, 5, 0) },
	{ 4096, 8, FZPU, false, T(2), G(4096, 4432, 8, 4104, 4104, 8, 3, 7, 1, 1, 6, 0) },
	/* max_objects 32768 / 8528 = 3; waste 7184 only fits the 1/4 rule */
	{ 8192, 8, FZPU, false, T(2), G(8192, 8528, 8, 8200, 8200, 8, 3, 3, 2, 1, 6, 0) },
};

TEST(kmalloc_fzpu_align8)
{
	EXPECT_EQ(run_rows("fzpu_align8", fzpu_align8, ARRAY_LEN(fzpu_align8)), 0);
}

/*
 * What the real 5.15 kmalloc caches get: create_boot_cache() passes
 * align = max(ARCH_KMALLOC_MINALIGN, size) for power-of-two sizes ("natural
 * alignment regardless of SL*B debugging"), so red_left_pad = ALIGN(8, size)
 * and the slab size rounds up to a multiple of the object size.  96 and 192
 * keep align 8.
 */
static const struct geo_row fzpu_natural[] = {
	{    8,    8, FZPU, false, T(2), G(8, 344, 8, 16, 16, 8, 1, 23, 0, 11, 5, 0) },
	{   16,   16, FZPU, false, T(2), G(16, 368, 16, 24, 24, 16, 1, 22, 0, 11, 5, 0) },
	{   32,   32, FZPU, false, T(2), G(32, 416, 32, 40, 40, 32, 1, 19, 0, 9, 5, 0) },
	{   64,   64, FZPU, false, T(2), G(64, 512, 64, 72, 72, 64, 1, 16, 0, 8, 5, 0) },
	{   96,    8, FZPU, false, T(2), G(96, 432, 8, 104, 104, 8, 1, 18, 0, 9, 5, 0) },
	{  128,  128, FZPU, false, T(2), G(128, 640, 128, 136, 136, 128, 1, 12, 0, 6, 5, 0) },
	{  192,    8, FZPU, false, T(2), G(192, 528, 8, 200, 200, 8, 1, 15, 0, 7, 5, 0) },
	{  256,  256, FZPU, false, T(2), G(256, 1024, 256, 264, 264, 256, 2, 16, 0, 4, 5, 0) },
	{  512,  512, FZPU, false, T(2), G(512, 1536, 512, 520, 520, 512, 3, 21, 0, 2, 5, 0) },
	{ 1024, 1024, FZPU, false, T(2), G(1024, 3072, 1024, 1032, 1032, 1024, 3, 10, 0, 1, 5, 0) },
	{ 2048, 2048, FZPU, false, T(2), G(2048, 6144, 2048, 2056, 2056, 2048, 3, 5, 1, 1, 6, 0) },
	{ 4096, 4096, FZPU, false, T(2), G(4096, 12288, 4096, 4104, 4104, 4096, 3, 2, 2, 1, 6, 0) },
	{ 8192, 8192, FZPU, false, T(2), G(8192, 24576, 8192, 8200, 8200, 8192, 3, 1, 3, 1, 7, 0) },
};

TEST(kmalloc_fzpu_natural_align)
{
	EXPECT_EQ(run_rows("fzpu_natural", fzpu_natural, ARRAY_LEN(fzpu_natural)), 0);
}

/* ------------------------------------------------------------------ */
/* Single debug flags, ctors, tiny objects, HWCACHE_ALIGN (2 CPUs). */

static const struct geo_row layouts[] = {
	/* lib/slub_kunit.c TestSlub_RZ_alloc: 64 + 8 rz, fp mid-object, + 8 + 8 */
	{ 64, 8, RZ, false, T(2), G(64, 88, 8, 72, 32, 8, 0, 46, 0, 46, 5, 0) },
	/* TestSlub_1th_word_free: POISON moves the fp behind the object */
	{ 64, 8, PO, false, T(2), G(64, 72, 8, 64, 64, 0, 0, 56, 0, 56, 5, 0) },
	/* F and T change no layout, but disable cpu partial lists */
	{ 64, 8, FC, false, T(2), G(64, 64, 8, 64, 32, 0, 0, 64, 0, 64, 5, 0) },
	{ 64, 8, TR, false, T(2), G(64, 64, 8, 64, 32, 0, 0, 64, 0, 64, 5, 0) },
	/* STORE_USER alone: fp stays mid-object, tracks after inuse */
	{ 64, 8, SU, false, T(2), G(64, 368, 8, 64, 32, 0, 1, 22, 0, 11, 5, 0) },
	{ 64, 8, RZ | PO, false, T(2), G(64, 96, 8, 72, 72, 8, 0, 42, 0, 42, 5, 0) },
	/* red_left_pad = ALIGN(8, 64); 72 + 8 + 64 = 144 -> 192 */
	{ 64, 64, RZ, false, T(2), G(64, 192, 64, 72, 32, 64, 0, 21, 0, 21, 5, 0) },
	/* a ctor keeps the object intact on free: fp after the object */
	{ 64, 8, 0, true, T(2), G(64, 72, 8, 64, 64, 0, 0, 56, 0, 56, 5, 30) },
	{ 100, 8, 0, true, T(2), G(100, 112, 8, 104, 104, 0, 0, 36, 0, 36, 5, 30) },
	{ 64, 8, RZ, true, T(2), G(64, 96, 8, 72, 72, 8, 0, 42, 0, 42, 5, 0) },
	{ 64, 8, PO, true, T(2), G(64, 72, 8, 64, 64, 0, 0, 56, 0, 56, 5, 0) },
	/* RED_ZONE and object_size < 8: ALIGN(o, 8) != o gives the rz room, fp after */
	{ 1, 8, RZ, false, T(2), G(1, 32, 8, 8, 8, 8, 0, 128, 0, 128, 5, 0) },
	{ 4, 8, RZ, false, T(2), G(4, 32, 8, 8, 8, 8, 0, 128, 0, 128, 5, 0) },
	{ 7, 8, RZ, false, T(2), G(7, 32, 8, 8, 8, 8, 0, 128, 0, 128, 5, 0) },
	/* o = 8: extra rz word, fp at ALIGN_DOWN(4, 8) = 0 */
	{ 8, 8, RZ, false, T(2), G(8, 32, 8, 16, 0, 8, 0, 128, 0, 128, 5, 0) },
	/* o = 12: ALIGN(12, 8) = 16 != 12, so no extra word; fp at 0 */
	{ 12, 8, RZ, false, T(2), G(12, 32, 8, 16, 0, 8, 0, 128, 0, 128, 5, 0) },
	{ 1, 8, 0, false, T(2), G(1, 8, 8, 8, 0, 0, 0, 512, 0, 512, 5, 30) },
	{ 7, 8, 0, false, T(2), G(7, 8, 8, 8, 0, 0, 0, 512, 0, 512, 5, 30) },
	/* HWCACHE_ALIGN, with the align calculate_alignment() gives */
	{ 20, 32, HW, false, T(2), G(20, 32, 32, 24, 8, 0, 0, 128, 0, 128, 5, 30) },
	{ 32, 32, HW, false, T(2), G(32, 32, 32, 32, 16, 0, 0, 128, 0, 128, 5, 30) },
	{ 33, 64, HW, false, T(2), G(33, 64, 64, 40, 16, 0, 0, 64, 0, 64, 5, 30) },
	{ 100, 64, HW, false, T(2), G(100, 128, 64, 104, 48, 0, 0, 32, 0, 32, 5, 30) },
	{ 20, 128, HW, false, T(2), G(20, 128, 128, 24, 8, 0, 0, 32, 0, 32, 5, 30) },
};

TEST(layouts)
{
	EXPECT_EQ(run_rows("layouts", layouts, ARRAY_LEN(layouts)), 0);
}

/* kmem_cache_create(name, size, 0, flags, NULL): align from calculate_alignment(). */
TEST(create_path_kunit_caches)
{
	struct slub_tunables t = T(2);
	struct slub_geometry g;
	unsigned int a;

	a = __uks_slub_calc_align(RZ, 0, 64);
	ASSERT_EQ(a, 8);
	ASSERT_EQ(__uks_slub_geometry(64, a, RZ, false, &t, &g), 0);
	EXPECT_EQ(g.size, 88);
	EXPECT_EQ(g.offset, 32);
	EXPECT_EQ(g.red_left_pad, 8);
	EXPECT_EQ(g.inuse, 72);

	a = __uks_slub_calc_align(PO, 0, 64);
	ASSERT_EQ(a, 8);
	ASSERT_EQ(__uks_slub_geometry(64, a, PO, false, &t, &g), 0);
	EXPECT_EQ(g.size, 72);
	EXPECT_EQ(g.offset, 64);
	EXPECT_EQ(g.red_left_pad, 0);

	a = __uks_slub_calc_align(HW, 0, 100);
	ASSERT_EQ(a, 64);
	ASSERT_EQ(__uks_slub_geometry(100, a, HW, false, &t, &g), 0);
	EXPECT_EQ(g.size, 128);
	EXPECT_EQ(g.objects, 32);
}

/* ------------------------------------------------------------------ */
/* Order selection on odd sizes and CPU counts. */

static const struct geo_row orders[] = {
	{ 24, 8, 0, false, T(2), G(24, 24, 8, 24, 8, 0, 0, 170, 0, 170, 5, 30) },
	{ 40, 8, 0, false, T(2), G(40, 40, 8, 40, 16, 0, 0, 102, 0, 102, 5, 30) },
	/* fls(63) = 6 -> 28 objects fit order 0; fls(64) = 7 -> 32 do not */
	{ 136, 8, 0, false, T(63), G(136, 136, 8, 136, 64, 0, 0, 30, 0, 30, 5, 30) },
	{ 136, 8, 0, false, T(64), G(136, 136, 8, 136, 64, 0, 1, 60, 0, 30, 5, 30) },
	/* fls(3) = 2 -> 12 objects; fls(4) = 3 -> 16 */
	{ 304, 8, 0, false, T(3), G(304, 304, 8, 304, 152, 0, 0, 13, 0, 13, 5, 13) },
	{ 304, 8, 0, false, T(4), G(304, 304, 8, 304, 152, 0, 1, 26, 0, 13, 5, 13) },
	{ 1100, 8, 0, false, T(2), G(1100, 1104, 8, 1104, 544, 0, 2, 14, 0, 3, 5, 6) },
	/* order 3 waste 2080 > 32768 / 16, accepted at 1/8 */
	{ 2192, 8, 0, false, T(2), G(2192, 2192, 8, 2192, 1096, 0, 3, 14, 0, 1, 5, 6) },
	{ 3000, 8, 0, false, T(2), G(3000, 3000, 8, 3000, 1496, 0, 3, 10, 0, 1, 5, 6) },
	/* waste 4640 accepted only at 1/4 */
	{ 4688, 8, 0, false, T(2), G(4688, 4688, 8, 4688, 2344, 0, 3, 6, 1, 1, 6, 2) },
	/* 2 objects never fit 1/4 waste up to order 3: one object, any waste, order 2 */
	{ 11000, 8, 0, false, T(2), G(11000, 11000, 8, 11000, 5496, 0, 2, 1, 2, 1, 6, 2) },
	/* beyond slub_max_order: the MAX_ORDER fallback */
	{ 65536, 8, 0, false, T(2), G(65536, 65536, 8, 65536, 32768, 0, 4, 1, 4, 1, 8, 2) },
	{ 1048576, 8, 0, false, T(2), G(1048576, 1048576, 8, 1048576, 524288, 0, 8, 1, 8, 1, 10, 2) },
	{ 2097153, 8, 0, false, T(2), G(2097153, 2097160, 8, 2097160, 1048576, 0, 10, 1, 10, 1, 10, 2) },
	/* the largest object that fits: order 10 = MAX_ORDER - 1; ilog2 22 / 2 clamped to 10 */
	{ 4194304, 8, 0, false, T(2), G(4194304, 4194304, 8, 4194304, 2097152, 0, 10, 1, 10, 1, 10, 2) },
	{ 4194297, 8, 0, false, T(2), G(4194297, 4194304, 8, 4194304, 2097144, 0, 10, 1, 10, 1, 10, 2) },
};

TEST(orders)
{
	EXPECT_EQ(run_rows("orders", orders, ARRAY_LEN(orders)), 0);
}

/* slub_min_objects=, slub_max_order=, slub_min_order=. */
static const struct geo_row tunables[] = {
	{ 1024, 8, 0, false, TT(0, 3, 4, 2), G(1024, 1024, 8, 1024, 512, 0, 0, 4, 0, 4, 5, 6) },
	{ 256, 8, 0, false, TT(0, 3, 64, 2), G(256, 256, 8, 256, 128, 0, 2, 64, 0, 16, 5, 13) },
	/* min_objects 1 skips the multi-object loop: least order, any waste */
	/*
	 * 1/16 fails at every order; 1/8 first fits at order 3 (waste 2296),
	 * although 1/4 would already take order 2 (waste 2320): the 1/8 step
	 * must be tried before 1/4.
	 */
	{ 2344, 8, 0, false, TT(0, 3, 4, 2), G(2344, 2344, 8, 2344, 1168, 0, 3, 13, 0, 1, 5, 6) },
	/* likewise: order 2 waste 1040 > 1024 but <= 2048; order 1 only fits 1/4 */
	{ 2192, 8, 0, false, TT(0, 3, 2, 2), G(2192, 2192, 8, 2192, 1096, 0, 2, 7, 0, 1, 5, 6) },
	{ 64, 8, 0, false, TT(0, 3, 1, 2), G(64, 64, 8, 64, 32, 0, 0, 64, 0, 64, 5, 30) },
	{ 3000, 8, 0, false, TT(0, 3, 1, 2), G(3000, 3000, 8, 3000, 1496, 0, 0, 1, 0, 1, 5, 6) },
	/* min_objects capped at (4096 << 3) / 64 = 512 */
	{ 64, 8, 0, false, TT(0, 3, 1000, 2), G(64, 64, 8, 64, 32, 0, 3, 512, 0, 64, 5, 30) },
	{ 1024, 8, 0, false, TT(0, 0, 0, 2), G(1024, 1024, 8, 1024, 512, 0, 0, 4, 0, 4, 5, 6) },
	/* max_objects 0: slab_order(.., 1, max_order 0, 1) = 1 > 0, fallback gives 1 */
	{ 8192, 8, 0, false, TT(0, 0, 0, 2), G(8192, 8192, 8, 8192, 4096, 0, 1, 1, 1, 1, 6, 2) },
	/* max_order 1: 2 objects waste 2192 > 8192 / 4; one object at order 0 */
	{ 3000, 8, 0, false, TT(0, 1, 0, 2), G(3000, 3000, 8, 3000, 1496, 0, 0, 1, 0, 1, 5, 6) },
	{ 4096, 8, 0, false, TT(0, 10, 0, 64), G(4096, 4096, 8, 4096, 2048, 0, 5, 32, 0, 1, 6, 2) },
	{ 8192, 8, 0, false, TT(0, 10, 0, 2), G(8192, 8192, 8, 8192, 4096, 0, 5, 16, 1, 1, 6, 2) },
	{ 64, 8, 0, false, TT(1, 3, 0, 2), G(64, 64, 8, 64, 32, 0, 1, 128, 0, 64, 5, 30) },
	{ 8192, 8, 0, false, TT(2, 3, 0, 2), G(8192, 8192, 8, 8192, 4096, 0, 3, 4, 1, 1, 6, 2) },
	/* min_order 4 > max_order 3: every try fails, MAX_ORDER fallback gives 4 */
	{ 64, 8, 0, false, TT(4, 3, 0, 2), G(64, 64, 8, 64, 32, 0, 4, 1024, 0, 64, 5, 30) },
	{ 8, 8, 0, false, TT(5, 3, 0, 2), G(8, 8, 8, 8, 0, 0, 5, 16384, 0, 512, 5, 30) },
};

TEST(tunables)
{
	EXPECT_EQ(run_rows("tunables", tunables, ARRAY_LEN(tunables)), 0);
}

/*
 * slab_order(): if (PAGE_SIZE << slub_min_order) / size > MAX_OBJS_PER_PAGE
 * (32767) it returns get_order(size * 32767) - 1, which is below min_order:
 * 8-byte objects with slub_min_order=6 get order get_order(262136) - 1 = 5.
 */
static const struct geo_row objs_cap[] = {
	{ 8, 8, 0, false, TT(6, 3, 0, 2), G(8, 8, 8, 8, 0, 0, 5, 16384, 0, 512, 5, 30) },
	{ 8, 8, 0, false, TT(6, 6, 0, 2), G(8, 8, 8, 8, 0, 0, 5, 16384, 0, 512, 5, 30) },
	{ 16, 8, 0, false, TT(7, 7, 0, 2), G(16, 16, 8, 16, 8, 0, 6, 16384, 0, 256, 5, 30) },
};

TEST(min_order_max_objs_per_page_cap)
{
	EXPECT_EQ(run_rows("objs_cap", objs_cap, ARRAY_LEN(objs_cap)), 0);
}

/* ------------------------------------------------------------------ */
/* set_min_partial() and set_cpu_partial(), both on s->size. */

static const struct {
	unsigned int object_size, align;
	unsigned long flags;
	unsigned int size, min_partial, cpu_partial;
} partials[] = {
	{ 8, 8, 0, 8, 5, 30 },			/* ilog2 3 / 2 = 1 -> MIN_PARTIAL */
	{ 248, 8, 0, 248, 5, 30 },
	{ 256, 8, 0, 256, 5, 13 },
	{ 1016, 8, 0, 1016, 5, 13 },
	{ 1024, 8, 0, 1024, 5, 6 },
	{ 1000, 64, HW, 1024, 5, 6 },		/* object < 1024 but s->size = 1024 */
	{ 2048, 8, 0, 2048, 5, 6 },
	{ 4088, 8, 0, 4088, 5, 6 },
	{ 4090, 8, 0, 4096, 6, 2 },		/* s->size >= PAGE_SIZE */
	{ 4096, 8, 0, 4096, 6, 2 },
	{ 16384, 8, 0, 16384, 7, 2 },
	{ 32768, 8, 0, 32768, 7, 2 },		/* 15 / 2 = 7 */
	{ 65536, 8, 0, 65536, 8, 2 },
	{ 262144, 8, 0, 262144, 9, 2 },
	{ 1048576, 8, 0, 1048576, 10, 2 },
	{ 4194304, 8, 0, 4194304, 10, 2 },	/* 22 / 2 = 11 -> MAX_PARTIAL */
	{ 3800, 8, SU, 4104, 6, 0 },		/* debug caches: no cpu partial */
	{ 64, 8, RZ, 88, 5, 0 },
	{ 64, 8, PO, 72, 5, 0 },
	{ 64, 8, FC, 64, 5, 0 },
	{ 64, 8, TR, 64, 5, 0 },
	{ 4096, 8, FC, 4096, 6, 0 },
};

TEST(partial_limits)
{
	struct slub_tunables t = T(2);

	for (size_t i = 0; i < ARRAY_LEN(partials); i++) {
		struct slub_geometry g;
		int ret = __uks_slub_geometry(partials[i].object_size, partials[i].align,
					      partials[i].flags, false, &t, &g);

		if (ret || g.size != partials[i].size ||
		    g.min_partial != partials[i].min_partial ||
		    g.cpu_partial != partials[i].cpu_partial)
			TH_LOG("partials[%zu]: object %u align %u flags %#lx", i,
			       partials[i].object_size, partials[i].align, partials[i].flags);
		ASSERT_EQ(ret, 0);
		EXPECT_EQ(g.size, partials[i].size);
		EXPECT_EQ(g.min_partial, partials[i].min_partial);
		EXPECT_EQ(g.cpu_partial, partials[i].cpu_partial);
	}
}

/* ------------------------------------------------------------------ */
/*
 * Impossible sizes.  Assumption: like kmem_cache_open(), the function fails
 * with -EINVAL when calculate_order() finds no order below MAX_ORDER (the
 * last try is slab_order(size, 1, MAX_ORDER, 1), accepted only if
 * < MAX_ORDER), whatever slub_max_order says.
 */
static const struct {
	unsigned int object_size, align;
	unsigned long flags;
	struct slub_tunables t;
} too_big[] = {
	{ 4194305, 8, 0, T(2) },		/* ALIGN -> 4194312: order 11 */
	{ 4194304, 8, RZ, T(2) },		/* + 8 + 8 + 8 */
	{ 4194304, 8, PO, T(2) },
	{ 4194304, 8, SU, T(2) },
	{ 4194304, 8, 0, TT(0, 10, 0, 2), },	/* fits: see below */
	{ 4194280, 8, FZPU, T(1) },		/* 4194288 + 8 + 304 + 16 */
	{ 8388608, 8, 0, T(64) },
};

TEST(too_big_is_einval)
{
	for (size_t i = 0; i < ARRAY_LEN(too_big); i++) {
		struct slub_geometry g;
		int ret = __uks_slub_geometry(too_big[i].object_size, too_big[i].align,
					      too_big[i].flags, false, &too_big[i].t, &g);
		/* 4 MiB with no metadata is exactly order 10: the one that fits */
		int want = (too_big[i].object_size == 4194304 && !too_big[i].flags) ? 0 : -EINVAL;

		if (ret != want)
			TH_LOG("too_big[%zu]: object %u flags %#lx", i,
			       too_big[i].object_size, too_big[i].flags);
		EXPECT_EQ(ret, want);
		if (!ret) {
			EXPECT_EQ(g.order, 10);
			EXPECT_EQ(g.objects, 1);
		}
	}
}

/*
 * The preload's classes past 2 KiB (lib/slab/policy.c) are fitted to the
 * 32 KiB slab: each must get order 3 and pack the count it was chosen for,
 * leaving at most 128 bytes of the slab unused, whatever the CPU count.
 */
TEST(preload_fitted_classes_pack_their_slab)
{
	static const struct { unsigned int size, objects; } fitted[] = {
		{ 2336, 14 }, { 2720, 12 }, { 3264, 10 }, { 3632, 9 }, { 4096, 8 },
		{ 4672, 7 },  { 5456, 6 },  { 6544, 5 },  { 8192, 4 },
	};
	static const unsigned int cpus[] = { 1, 2, 4, 64, 256 };

	for (size_t i = 0; i < ARRAY_LEN(fitted); i++) {
		for (size_t c = 0; c < ARRAY_LEN(cpus); c++) {
			struct slub_tunables t = T(cpus[c]);
			unsigned int align = fitted[i].size & (fitted[i].size - 1) ? 16 : fitted[i].size;
			struct slub_geometry g;

			ASSERT_EQ(__uks_slub_geometry(fitted[i].size, align, 0, false, &t, &g), 0);
			if (g.order != 3 || g.objects != fitted[i].objects)
				TH_LOG("%u bytes at %u CPUs: order %u, %u objects", fitted[i].size,
				       cpus[c], g.order, g.objects);
			EXPECT_EQ(g.order, 3);
			EXPECT_EQ(g.objects, fitted[i].objects);
			EXPECT_LE(32768 - g.objects * g.size, 128);
		}
	}
}


/*
 * The preload free()'s slot-start test (obj_start_fast(): one multiply)
 * says yes at exactly the object starts of a slab, for every slot size
 * that is a multiple of 8 up to 8 KiB and slabs of 1 to 16 pages: not
 * between them, and not at the multiples past the last object.  Bigger
 * slabs, where the 32-bit test may not hold, say no everywhere (the slow
 * path decides).
 */
TEST(slot_start_test_is_exact)
{
	static struct uks_kmem_cache s;
	unsigned long wrong = 0;

	for (unsigned int order = 0; order <= 9; order++) {
		unsigned int slab = 4096u << order;

		for (unsigned int size = 8; size <= 8192 && size <= slab; size += 8) {
			unsigned int objects = slab / size, into = 0, index = 0;

			if (order > 4 && size % 1024 && size != 2336 && size != 8)
				continue;	/* a sample: the big slabs take long */
			if (objects > 32767)
				objects = 32767;
			s.size = size;
			s.oo.x = order << 16 | objects;
			__uks_slab_set_obj_check(&s);
			/* a slab-aligned base, and every offset in the slab */
			for (uintptr_t off = 0; off < slab; off++) {
				bool start = !into && index < objects;
				bool said = obj_start_fast(&s, (void *)((uintptr_t)0x7f0000000000 + off));

				if ((order <= 4 ? said != start : said) && wrong++ < 5)
					TH_LOG("size %u order %u offset %lu: %s", size, order,
					       (unsigned long)off, start ? "refused" : "taken");
				if (++into == size) {
					into = 0;
					index++;
				}
			}
		}
	}
	EXPECT_EQ(wrong, 0);
}

TEST_HARNESS_MAIN
