/* SPDX-License-Identifier: MIT */
/* DAMON's debugfs files, as a kfs tree (core/kfs.h). */
#ifndef UKS_LIB_DAMON_DEBUGFS_DBGFS_H
#define UKS_LIB_DAMON_DEBUGFS_DBGFS_H

#include "core/kfs.h"

/*
 * __uks_damon_dbgfs_root - <debugfs>/damon of 5.15, with its root context
 * on @primitive (NULL: uks_damon_default_primitive()); the tree owns the
 * contexts, which stop and go with it (->release)
 * Returns 0, or -ENOENT (unknown primitive), -EOPNOTSUPP (primitive not
 * available here), -ENOMEM.
 */
int __uks_damon_dbgfs_root(const char *primitive, struct kfs_root *root);

/* dbgfs_schemes.c: the schemes file of 6.12 */
struct uks_damon_ctx;
struct uks_damos_scheme;
int __uks_damon_dbgfs_parse_schemes(const char *str, size_t len,
				    struct uks_damos_scheme **out, unsigned int *nr);
ssize_t __uks_damon_dbgfs_sprint_schemes(struct uks_damon_ctx *c, char *buf, size_t len);
int __uks_damon_dbgfs_write_schemes(struct uks_damon_ctx *c, const char *kbuf, size_t count);

#endif
