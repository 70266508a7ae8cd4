/* SPDX-License-Identifier: MIT */
/*
 * uks sched: the 5.15 asymmetric 32-bit affinity rules and the
 * MAP_DENYWRITE-removal conformance checks (docs/SCHED.md).
 *
 *  - uks_denywrite_check() runs the MAP_DENYWRITE-removal checks against
 *    the running kernel (real files, real execs, real prctl calls) and
 *    hands each verdict to a callback;
 *  - struct uks_a32_policy holds the 32-bit-capable CPU set and computes
 *    the affinity the 5.15 execve(2)/sched_setaffinity(2) rules give a
 *    task, from its real affinity and its real cpuset hierarchy;
 *  - struct uks_a32_sim is a deterministic model (CPUs, hotplug, cpusets,
 *    tasks) on which every rule of the document can be exercised.
 *
 * Every int function returns 0 (or a count) on success and a negative
 * errno on failure.  Nothing here prints.
 */
#ifndef UKS_SCHED_H
#define UKS_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <uks/cpumask.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ ELF */

struct uks_elf_info {
	int elf_class;		/* 32 or 64 */
	bool big_endian;
	unsigned int type;	/* ET_EXEC, ET_DYN, ... */
	unsigned int machine;	/* EM_* */
	unsigned int phnum;
	bool phdrs_truncated;	/* program headers beyond the bytes given */
	size_t interp_off;	/* PT_INTERP string: offset and size with */
	size_t interp_size;	/* its NUL; both 0 when there is none */
};

/**
 * uks_elf_parse() - read an ELF header and its PT_INTERP entry
 * @buf: the first bytes of the file
 * @len: how many
 * @info: filled in
 *
 * Return: 0, or -ENOEXEC if @buf is not an ELF file (bad magic, class,
 * byte order, a short header, or a PT_INTERP outside @buf or without NUL).
 */
int uks_elf_parse(const void *buf, size_t len, struct uks_elf_info *info);

/** uks_elf_read_file() - uks_elf_parse() on the first 64 KiB of @path. */
int uks_elf_read_file(const char *path, struct uks_elf_info *info);

/* ------------------------------------------------------------ denywrite */

enum uks_abi_verdict {
	UKS_ABI_PASS,
	UKS_ABI_FAIL,
	UKS_ABI_SKIP,
};

struct uks_abi_result {
	const char *name;		/* stable check name, e.g. "exe-open-wronly" */
	enum uks_abi_verdict verdict;
	const char *detail;		/* what was observed, or why it was skipped */
};

typedef void (*uks_abi_report_fn)(const struct uks_abi_result *res, void *arg);

struct uks_denywrite_opts {
	const char *tmpdir;	/* parent of the scratch directory; NULL: $TMPDIR or /tmp */
	const char *exe;	/* executable to copy and run; NULL: /proc/self/exe */
	const char *dynexe;	/* dynamically linked executable for the interpreter
				 * check; NULL: exe if it has PT_INTERP, else a few
				 * usual programs */
	const char *lib;	/* shared object to copy and dlopen; NULL: libm's */
};

/**
 * uks_denywrite_check() - run the MAP_DENYWRITE-removal checks
 * @opts: NULL for the defaults
 * @report: called once per check, in order
 * @arg: passed to @report
 *
 * Runs each check on the running kernel in a scratch directory that is
 * removed afterwards.  Children are forked for everything that execs,
 * uses ptrace or changes its own mm.
 *
 * Return: the number of FAIL verdicts, or a negative errno if the checks
 * could not be run at all (no scratch directory).
 */
int uks_denywrite_check(const struct uks_denywrite_opts *opts,
			uks_abi_report_fn report, void *arg);

/** uks_abi_verdict_name() - "PASS", "FAIL" or "SKIP". */
const char *uks_abi_verdict_name(enum uks_abi_verdict v);

#ifdef __cplusplus
}
#endif

#endif
