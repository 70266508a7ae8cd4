/* SPDX-License-Identifier: MIT */
/*
 * uks core: version, logging, clocks and the current CPU.
 *
 * Every int-returning uks function returns 0 (or a count) on success and a
 * negative errno on failure; none of them touches errno.
 */
#ifndef UKS_CORE_H
#define UKS_CORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

const char *uks_version(void);

/* Log levels, most severe first (the kernel's KERN_* order). */
enum uks_log_level {
	UKS_LOG_ERR,
	UKS_LOG_WARN,
	UKS_LOG_INFO,
	UKS_LOG_DEBUG,
};

/* A log sink: @msg is one complete message without a trailing newline. */
typedef void (*uks_log_fn)(enum uks_log_level level, const char *msg, void *arg);

void uks_set_log_fn(uks_log_fn fn, void *arg);
void uks_log_stderr(enum uks_log_level level, const char *msg, void *arg);

uint64_t uks_clock_mono_ns(void);
uint64_t uks_clock_real_ns(void);

/*
 * CPUs.  "Possible" CPUs are those in /sys/devices/system/cpu/possible;
 * per-CPU data is sized for uks_nr_cpu_ids() = highest possible CPU + 1.
 */
unsigned int uks_nr_cpu_ids(void);
int uks_cpu_current(void);
bool uks_rseq_active(void);

/*
 * Where uksd puts its socket and mount point by default: /run for root,
 * else $XDG_RUNTIME_DIR, else a private /tmp/uks-UID.
 */
#define UKS_RUNTIME_DIR_CREATE	0x1u	/* make a missing /tmp/uks-UID, mode 0700 */
int uks_runtime_dir(char *buf, size_t size, unsigned int flags, char *why, size_t why_size);

#ifdef __cplusplus
}
#endif

#endif
