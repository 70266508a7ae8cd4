// SPDX-License-Identifier: MIT
/*
 * masim configurations: the parser on masim's own layout (comments, the
 * regions paragraph, phases with optional access modes) and on the repo's
 * configs/masim/, every error with its line, garbage input, and the
 * synthetic primitive built from a configuration (mappings, phase
 * lengths in samples, the ground truth per phase).
 */
#include <uks/damon.h>
#include <uks/damon_masim.h>

#include "harness.h"

static const char zigzag[] =
	"#regions\n"
	"a, 100000000\n"
	"b, 100000000, none\n"
	"\n"
	"#phases\n"
	"initial phase\n"
	"10000\n"
	"a, 0, 4096, 1\n"
	"b, 0, 4096, 1\n"
	"\n"
	"low phase 0\n"
	"5000\n"
	"a, 1, 4096, 50, ro\n"
	"\n"
	"\n"
	"high phase 0\n"
	"5000\n"
	"b, 0, 4096, 50, rw\n";

TEST(parses_masims_format)
{
	struct uks_damon_masim *m;
	char err[128];

	ASSERT_EQ(0, uks_damon_masim_parse(zigzag, strlen(zigzag), &m, err, sizeof(err)));
	ASSERT_EQ(2U, m->nr_regions);
	ASSERT_STREQ("b", m->regions[1].name);
	ASSERT_EQ(100000000ULL, m->regions[1].size);
	ASSERT_NULL(m->regions[1].init_file);
	ASSERT_EQ(3U, m->nr_phases);
	ASSERT_STREQ("initial phase", m->phases[0].name);
	ASSERT_EQ(10000ULL, m->phases[0].duration_ms);
	ASSERT_EQ(2U, m->phases[0].nr_patterns);
	ASSERT_EQ(2U, m->phases[0].total_weight);
	ASSERT_EQ(1U, m->phases[0].patterns[1].region);
	ASSERT_EQ(UKS_DAMON_MASIM_WO, (int)m->phases[0].patterns[1].rw);
	ASSERT_TRUE(m->phases[1].patterns[0].random);
	ASSERT_EQ(UKS_DAMON_MASIM_RO, (int)m->phases[1].patterns[0].rw);
	ASSERT_EQ(UKS_DAMON_MASIM_RW, (int)m->phases[2].patterns[0].rw);
	ASSERT_EQ(50U, m->phases[2].total_weight);
	uks_damon_masim_free(m);
}

TEST(the_repos_configs_parse)
{
	static const char *const files[] = { "configs/masim/zigzag.cfg",
					     "configs/masim/stairs.cfg" };
	struct uks_damon_masim *m;
	char err[128];

	for (size_t i = 0; i < 2; i++) {
		ASSERT_EQ(0, uks_damon_masim_load(files[i], &m, err, sizeof(err)));
		ASSERT_GE(m->nr_phases, 7U);
		uks_damon_masim_free(m);
	}
	ASSERT_EQ(-ENOENT, uks_damon_masim_load("configs/masim/none.cfg", &m, err, sizeof(err)));
}

TEST(errors_name_the_line)
{
	static const struct {
		const char *text, *err;
	} cases[] = {
		{ "", "line 0: no regions" },
		{ "a, 10\n", "no phases" },
		{ "a\n", "line 1: a region is" },
		{ "a, 0\n", "line 1: bad region size '0'" },
		{ "a, 12x\n", "bad region size" },
		{ "a, 10\na, 20\n", "line 2: region 'a' defined twice" },
		{ "a, 10\n\np\n", "phase 'p' has no duration" },
		{ "a, 10\n\np\n0\na, 0, 1, 1\n", "line 4: bad duration '0'" },
		{ "a, 10\n\np\n100\nb, 0, 1, 1\n", "line 5: no region 'b'" },
		{ "a, 10\n\np\n100\na, 2, 1, 1\n", "RANDOM is 0 or 1" },
		{ "a, 10\n\np\n100\na, 0, 0, 1\n", "bad stride" },
		{ "a, 10\n\np\n100\na, 0, 1, 0\n", "no pattern with a weight" },
		{ "a, 10\n\np\n100\na, 0, 1, 1, xo\n", "access mode" },
		{ "a, 10\n\np\n100\na, 0, 1, 1, wo, 5\n", "a pattern is" },
		{ "a, 10\n\np\n100\n", "no pattern" },
	};
	struct uks_damon_masim *m;
	char err[160];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int ret = uks_damon_masim_parse(cases[i].text, strlen(cases[i].text), &m, err,
						sizeof(err));

		ASSERT_EQ(-EINVAL, ret);
		ASSERT_NULL(m);
		if (!strstr(err, cases[i].err))
			TH_LOG("case %zu: '%s' lacks '%s'", i, err, cases[i].err);
		ASSERT_NONNULL(strstr(err, cases[i].err));
	}
	ASSERT_EQ(-EINVAL, uks_damon_masim_parse("a, 1\0\n", 6, &m, err, sizeof(err)));
}

TEST(garbage_never_crashes)
{
	static const char alphabet[] = "ab, 0123456789\n\n#xrwo";
	char text[512];
	uint64_t x = 0x2545f4914f6cdd1dULL;
	struct uks_damon_masim *m;

	for (int round = 0; round < 3000; round++) {
		size_t n = (size_t)(x % sizeof(text));
		int ret;

		for (size_t i = 0; i < n; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			text[i] = round & 1 ? alphabet[x % (sizeof(alphabet) - 1)] : (char)x;
		}
		ret = uks_damon_masim_parse(text, n, &m, NULL, 0);
		ASSERT_TRUE(ret == 0 || ret == -EINVAL);
		if (!ret) {
			ASSERT_GE(m->nr_regions, 1U);
			ASSERT_GE(m->nr_phases, 1U);
			for (unsigned int p = 0; p < m->nr_phases; p++)
				ASSERT_GT(m->phases[p].total_weight, 0U);
			uks_damon_masim_free(m);
		}
	}
}

TEST(synthetic_space_from_a_config)
{
	struct uks_damon_masim *m;
	struct uks_damon_synth *s;
	unsigned long starts[2];
	char err[128];

	ASSERT_EQ(0, uks_damon_masim_parse(zigzag, strlen(zigzag), &m, err, sizeof(err)));
	ASSERT_EQ(0, uks_damon_synth_create(&s));
	ASSERT_EQ(0, uks_damon_synth_load_masim(s, m, 0x10000000UL, 5000, starts));
	ASSERT_EQ(0x10000000UL, starts[0]);
	/* 100000000 rounded up to pages, then a one-page gap */
	ASSERT_EQ(0x10000000UL + 100003840UL + 4096, starts[1]);
	ASSERT_EQ(0U, uks_damon_synth_phase(s));
	ASSERT_EQ(1000, uks_damon_synth_access_permille(s, starts[0] + 5));
	ASSERT_EQ(1000, uks_damon_synth_access_permille(s, starts[1] + 99999999));
	ASSERT_EQ(0, uks_damon_synth_access_permille(s, starts[1] + 100000000));
	/* mappings must keep address order: a mapping below them fails */
	ASSERT_EQ(-EINVAL, uks_damon_synth_add_mapping(s, 0x1000, 0x2000));
	uks_damon_synth_destroy(s);
	uks_damon_masim_free(m);
}

TEST_HARNESS_MAIN
