/* SPDX-License-Identifier: MIT */
/* Internal to tools/abi-check/denywrite*.c: the checker state and helpers. */
#ifndef UKS_TOOLS_ABI_CHECK_DENYWRITE_H
#define UKS_TOOLS_ABI_CHECK_DENYWRITE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "abi_check.h"

#ifndef MAP_DENYWRITE
#define MAP_DENYWRITE 0x0800
#endif
#ifndef PR_SET_MM
#define PR_SET_MM 35
#endif
#ifndef PR_SET_MM_EXE_FILE
#define PR_SET_MM_EXE_FILE 13
#endif
#ifndef PR_SET_MM_MAP
#define PR_SET_MM_MAP 14
#endif

/* The prctl_mm_map layout of <linux/prctl.h> (stable uAPI). */
struct dw_mm_map {
	uint64_t start_code, end_code, start_data, end_data;
	uint64_t start_brk, brk, start_stack;
	uint64_t arg_start, arg_end, env_start, env_end;
	uint64_t *auxv;
	uint32_t auxv_size;
	uint32_t exe_fd;
};

struct dw {
	abi_report_fn report;
	void *arg;
	int fails;
	char dir[256];
	char prog[PATH_MAX];	/* copy of the executable */
	const struct denywrite_opts *opts;
};

__attribute__((format(printf, 4, 5)))
void dw_say(struct dw *d, enum abi_verdict v, const char *name, const char *fmt, ...);
const char *dw_err_name(int err);
int dw_copy_file(const char *src, const char *dst, mode_t mode);
int dw_try_open(const char *path, int flags);
int dw_write_all(const char *path, const unsigned char *buf, size_t len);
void dw_kill_child(pid_t pid);
bool dw_pid_maps_file(pid_t pid, const char *path);
void dw_check_prctl(struct dw *d, bool map);
void dw_check_uselib(struct dw *d);

#endif
