// SPDX-License-Identifier: MIT
/*
 * libFuzzer target for the cpulist parser: any input either fails with
 * -EINVAL/-ERANGE/-EOVERFLOW and leaves the mask empty, or parses, and then
 * printing and re-parsing gives the same mask.  Built and run by `make fuzz`.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <uks/cpumask.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char text[4096], printed[32768];
	struct uks_cpumask a, b;
	unsigned int nr = 1 + (size ? data[0] % 128 : 0);

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	int ret = uks_cpumask_parse_list(&a, text, nr);

	if (ret) {
		if ((ret != -EINVAL && ret != -ERANGE && ret != -EOVERFLOW) ||
		    !uks_cpumask_empty(&a))
			abort();
		return 0;
	}
	if (uks_cpumask_weight(&a) > nr)
		abort();
	if (uks_cpumask_print_list(&a, printed, sizeof(printed)) < 0)
		abort();
	if (uks_cpumask_parse_list(&b, printed, nr) || !uks_cpumask_equal(&a, &b))
		abort();
	return 0;
}
