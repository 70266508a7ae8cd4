// SPDX-License-Identifier: MIT
/* Event field lookup; see field.h. */
#include <string.h>

#include "trace/field.h"

const struct uks_event_field *__uks_trace_event_field_find(const struct uks_event_field *fields,
							   size_t nr, const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(fields[i].name, name))
			return &fields[i];
	return NULL;
}
