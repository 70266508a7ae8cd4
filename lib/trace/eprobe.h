/* SPDX-License-Identifier: MIT */
/* Event probes: the runtime (eprobe.c) used by dynamic_events.c. */
#ifndef UKS_LIB_TRACE_EPROBE_H
#define UKS_LIB_TRACE_EPROBE_H

#include "trace/probe_arg.h"
#include "trace/trace.h"

struct uks_eprobe {
	struct uks_event_call *attached;
	struct uks_probe_args *args;
	/* "if FILTER": run on the attached record before ours is built */
	struct uks_filter *filter;
};

int __uks_trace_eprobe_create(const char *group, const char *event, struct uks_event_call *attached,
			      int argc, const char *const *argv, struct uks_event_call **out,
			      struct uks_probe_error *err);
void __uks_trace_eprobe_free(struct uks_event_call *call);
void __uks_trace_eprobe_show(struct uks_seq *s, const struct uks_event_call *call);

#endif
