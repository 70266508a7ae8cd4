// SPDX-License-Identifier: MIT
/*
 * traceon/traceoff, snapshot and enable_event/disable_event triggers.
 *
 * traceon/traceoff turn the event's instance's recording (tracing_on) on
 * or off; with a count, only a hit that changes it spends one.
 * enable_event/disable_event clear or set SOFT_DISABLED on their target,
 * which stays in soft mode while the trigger exists (its enable file
 * shows "0*" or "1*"); with a count, only a hit that changes it counts.
 * snapshot swaps the instance's buffer with its spare, which registering
 * the trigger allocates (and removing it leaves, as the kernel's).
 */
#include "trace/snapshot.h"
#include "trace/trigger.h"

static bool is_on(const struct uks_trigger *t)
{
	return __uks_trace_rb_recording(t->file->tr->rb);
}

static void traceon_fire(struct uks_trigger *t)
{
	if (!is_on(t))
		__uks_trace_rb_record_on(t->file->tr->rb, true);
}

static bool traceon_needed(const struct uks_trigger *t)
{
	return !is_on(t);
}

static void traceoff_fire(struct uks_trigger *t)
{
	if (is_on(t))
		__uks_trace_rb_record_on(t->file->tr->rb, false);
}

static bool traceoff_needed(const struct uks_trigger *t)
{
	return is_on(t);
}

const struct uks_trigger_cmd __uks_trigger_traceon_cmd = {
	.name = "traceon", .type = UKS_TRIGGER_TRACE_ONOFF,
	.fire = traceon_fire, .needed = traceon_needed,
};

const struct uks_trigger_cmd __uks_trigger_traceoff_cmd = {
	.name = "traceoff", .type = UKS_TRIGGER_TRACE_ONOFF,
	.fire = traceoff_fire, .needed = traceoff_needed,
};

static int snapshot_init(struct uks_trigger *t)
{
	return __uks_trace_snapshot_alloc(t->file->tr);
}

static void snapshot_fire(struct uks_trigger *t)
{
	__uks_trace_snapshot_take(t->file->tr);
}

const struct uks_trigger_cmd __uks_trigger_snapshot_cmd = {
	.name = "snapshot", .type = UKS_TRIGGER_SNAPSHOT,
	.init = snapshot_init, .fire = snapshot_fire,
};

static bool target_disabled(const struct uks_trigger *t)
{
	return __atomic_load_n(&t->target->flags, __ATOMIC_RELAXED) & UKS_FILE_SOFT_DISABLED;
}

static void enable_fire(struct uks_trigger *t)
{
	__atomic_fetch_and(&t->target->flags, ~UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
}

static bool enable_needed(const struct uks_trigger *t)
{
	return target_disabled(t);
}

static void disable_fire(struct uks_trigger *t)
{
	__atomic_fetch_or(&t->target->flags, UKS_FILE_SOFT_DISABLED, __ATOMIC_RELEASE);
}

static bool disable_needed(const struct uks_trigger *t)
{
	return !target_disabled(t);
}

const struct uks_trigger_cmd __uks_trigger_enable_event_cmd = {
	.name = "enable_event", .type = UKS_TRIGGER_EVENT_ENABLE, .target = true,
	.fire = enable_fire, .needed = enable_needed,
};

const struct uks_trigger_cmd __uks_trigger_disable_event_cmd = {
	.name = "disable_event", .type = UKS_TRIGGER_EVENT_ENABLE, .target = true,
	.fire = disable_fire, .needed = disable_needed,
};
