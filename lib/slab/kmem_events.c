// SPDX-License-Identifier: MIT
/* The definitions of the kmem:* tracepoints (kmem_events.h). */
#define UKS_CREATE_TRACE_POINTS
#include "slab/kmem_events.h"
