// SPDX-License-Identifier: MIT
#include <uks/core.h>
#include "core/compiler.h"

#ifndef UKS_VERSION
#define UKS_VERSION "unknown"
#endif

/** uks_version - Return: the library version, e.g. "0.1.0". */
UKS_EXPORT const char *uks_version(void)
{
	return UKS_VERSION;
}
