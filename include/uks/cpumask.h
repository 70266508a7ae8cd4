/* SPDX-License-Identifier: MIT */
/*
 * CPU masks and the kernel's cpulist text format ("0-3,8,10-11").
 */
#ifndef UKS_CPUMASK_H
#define UKS_CPUMASK_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define UKS_CPUMASK_MAX_CPUS 4096
#define UKS_CPUMASK_LONGS (UKS_CPUMASK_MAX_CPUS / (8 * sizeof(unsigned long)))

struct uks_cpumask {
	unsigned long bits[UKS_CPUMASK_LONGS];
};

void uks_cpumask_clear(struct uks_cpumask *m);
void uks_cpumask_set_cpu(struct uks_cpumask *m, unsigned int cpu);
void uks_cpumask_clear_cpu(struct uks_cpumask *m, unsigned int cpu);
bool uks_cpumask_test_cpu(const struct uks_cpumask *m, unsigned int cpu);
unsigned int uks_cpumask_weight(const struct uks_cpumask *m);
bool uks_cpumask_empty(const struct uks_cpumask *m);
bool uks_cpumask_equal(const struct uks_cpumask *a, const struct uks_cpumask *b);
bool uks_cpumask_subset(const struct uks_cpumask *a, const struct uks_cpumask *b);
void uks_cpumask_and(struct uks_cpumask *dst, const struct uks_cpumask *a,
		     const struct uks_cpumask *b);
void uks_cpumask_or(struct uks_cpumask *dst, const struct uks_cpumask *a,
		    const struct uks_cpumask *b);
int uks_cpumask_first(const struct uks_cpumask *m);
int uks_cpumask_next(const struct uks_cpumask *m, int cpu);

int uks_cpumask_parse_list(struct uks_cpumask *m, const char *text,
			   unsigned int nr_cpus);
int uks_cpumask_print_list(const struct uks_cpumask *m, char *buf, size_t size);

/* Iterate over set CPUs. */
#define uks_for_each_cpu(cpu, mask) \
	for ((cpu) = uks_cpumask_first(mask); (cpu) >= 0; \
	     (cpu) = uks_cpumask_next(mask, cpu))

#ifdef __cplusplus
}
#endif

#endif
