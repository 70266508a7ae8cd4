/* SPDX-License-Identifier: MIT */
/* Internal logging: libraries never print, they hand messages to uks_log(). */
#ifndef UKS_LIB_CORE_LOG_H
#define UKS_LIB_CORE_LOG_H

#include <uks/core.h>

void __uks_log(enum uks_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define pr_err(...)	__uks_log(UKS_LOG_ERR, __VA_ARGS__)
#define pr_warn(...)	__uks_log(UKS_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	__uks_log(UKS_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	__uks_log(UKS_LOG_DEBUG, __VA_ARGS__)

#endif
