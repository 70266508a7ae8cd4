// SPDX-License-Identifier: MIT
/*
 * struct uks_cpumask: a fixed-size bitmap of UKS_CPUMASK_MAX_CPUS bits, so
 * masks can live on the stack and be copied by assignment, as cpumask_t is
 * with CONFIG_CPUMASK_OFFSTACK=n.
 */
#include <errno.h>

#include <uks/cpumask.h>
#include "core/bitmap.h"
#include "core/compiler.h"

#define NBITS UKS_CPUMASK_MAX_CPUS

/** uks_cpumask_clear - clear every CPU of @m. */
UKS_EXPORT void uks_cpumask_clear(struct uks_cpumask *m)
{
	bitmap_zero(m->bits, NBITS);
}

/** uks_cpumask_set_cpu - add @cpu (< UKS_CPUMASK_MAX_CPUS; others ignored). */
UKS_EXPORT void uks_cpumask_set_cpu(struct uks_cpumask *m, unsigned int cpu)
{
	if (cpu < NBITS)
		set_bit(cpu, m->bits);
}

/** uks_cpumask_clear_cpu - remove @cpu from @m. */
UKS_EXPORT void uks_cpumask_clear_cpu(struct uks_cpumask *m, unsigned int cpu)
{
	if (cpu < NBITS)
		clear_bit(cpu, m->bits);
}

/** uks_cpumask_test_cpu - Return: whether @cpu is in @m. */
UKS_EXPORT bool uks_cpumask_test_cpu(const struct uks_cpumask *m, unsigned int cpu)
{
	return cpu < NBITS && test_bit(cpu, m->bits);
}

/** uks_cpumask_weight - Return: the number of CPUs in @m. */
UKS_EXPORT unsigned int uks_cpumask_weight(const struct uks_cpumask *m)
{
	return bitmap_weight(m->bits, NBITS);
}

/** uks_cpumask_empty - Return: true if @m has no CPU. */
UKS_EXPORT bool uks_cpumask_empty(const struct uks_cpumask *m)
{
	return find_next_bit(m->bits, NBITS, 0) == NBITS;
}

/** uks_cpumask_equal - Return: true if @a and @b hold the same CPUs. */
UKS_EXPORT bool uks_cpumask_equal(const struct uks_cpumask *a, const struct uks_cpumask *b)
{
	for (size_t i = 0; i < UKS_CPUMASK_LONGS; i++)
		if (a->bits[i] != b->bits[i])
			return false;
	return true;
}

/** uks_cpumask_subset - Return: true if every CPU of @a is in @b. */
UKS_EXPORT bool uks_cpumask_subset(const struct uks_cpumask *a, const struct uks_cpumask *b)
{
	for (size_t i = 0; i < UKS_CPUMASK_LONGS; i++)
		if (a->bits[i] & ~b->bits[i])
			return false;
	return true;
}

/** uks_cpumask_and - @dst = @a & @b (any of them may alias). */
UKS_EXPORT void uks_cpumask_and(struct uks_cpumask *dst, const struct uks_cpumask *a,
				const struct uks_cpumask *b)
{
	for (size_t i = 0; i < UKS_CPUMASK_LONGS; i++)
		dst->bits[i] = a->bits[i] & b->bits[i];
}

/** uks_cpumask_or - @dst = @a | @b (any of them may alias). */
UKS_EXPORT void uks_cpumask_or(struct uks_cpumask *dst, const struct uks_cpumask *a,
			       const struct uks_cpumask *b)
{
	for (size_t i = 0; i < UKS_CPUMASK_LONGS; i++)
		dst->bits[i] = a->bits[i] | b->bits[i];
}

/** uks_cpumask_first - Return: the lowest CPU in @m, or -1 if empty. */
UKS_EXPORT int uks_cpumask_first(const struct uks_cpumask *m)
{
	unsigned int cpu = find_next_bit(m->bits, NBITS, 0);

	return cpu < NBITS ? (int)cpu : -1;
}

/** uks_cpumask_next - Return: the lowest CPU in @m above @cpu, or -1. */
UKS_EXPORT int uks_cpumask_next(const struct uks_cpumask *m, int cpu)
{
	unsigned int next = find_next_bit(m->bits, NBITS, (unsigned int)(cpu + 1));

	return next < NBITS ? (int)next : -1;
}

/**
 * uks_cpumask_parse_list - parse cpulist text such as "0-3,8,10-11\n"
 * @m: result; cleared on error
 * @text: NUL-terminated cpulist; also "a-b:used/group" strides and "N"
 * @nr_cpus: CPUs that exist (at most UKS_CPUMASK_MAX_CPUS; 0 means the max)
 *
 * Return: 0; -EINVAL for malformed text; -ERANGE for a CPU >= @nr_cpus;
 * -EOVERFLOW for a number past 32 bits.
 */
UKS_EXPORT int uks_cpumask_parse_list(struct uks_cpumask *m, const char *text,
				      unsigned int nr_cpus)
{
	if (!nr_cpus || nr_cpus > NBITS)
		nr_cpus = NBITS;
	uks_cpumask_clear(m);
	return bitmap_parselist(text, m->bits, nr_cpus);
}

/**
 * uks_cpumask_print_list - print @m as cpulist text ("" when empty)
 *
 * Return: the length written (no newline), or -ENOSPC if @size is too small.
 */
UKS_EXPORT int uks_cpumask_print_list(const struct uks_cpumask *m, char *buf, size_t size)
{
	return bitmap_print_list(m->bits, NBITS, buf, size);
}
