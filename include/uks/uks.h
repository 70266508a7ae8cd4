/* SPDX-License-Identifier: MIT */
/* uks — user-space kernel subsystems: the umbrella header. */
#ifndef UKS_UKS_H
#define UKS_UKS_H

#include <uks/core.h>
#include <uks/cpumask.h>

#endif
