/* SPDX-License-Identifier: MIT */
/*
 * abi-check: conformance checks of the running kernel's ABI, run by
 * `uks abi-check NAME`.  Part of the uks program, not of libuks: each
 * check forks, execs, ptraces and changes its own mm, which no library
 * caller wants done inside its process.
 *
 * Every check hands one verdict per case to a callback, in order.
 */
#ifndef UKS_TOOLS_ABI_CHECK_H
#define UKS_TOOLS_ABI_CHECK_H

enum abi_verdict {
	ABI_PASS,
	ABI_FAIL,
	ABI_SKIP,
};

struct abi_result {
	const char *name;		/* stable check name, e.g. "exe-open-wronly" */
	enum abi_verdict verdict;
	const char *detail;		/* what was observed, or why it was skipped */
};

typedef void (*abi_report_fn)(const struct abi_result *res, void *arg);

/* "PASS", "FAIL" or "SKIP". */
static inline const char *abi_verdict_name(enum abi_verdict v)
{
	return v == ABI_PASS ? "PASS" : v == ABI_FAIL ? "FAIL" : "SKIP";
}

struct denywrite_opts {
	const char *tmpdir;	/* parent of the scratch directory; NULL: $TMPDIR or /tmp */
	const char *exe;	/* executable to copy and run; NULL: /proc/self/exe */
	const char *dynexe;	/* dynamically linked executable for the interpreter
				 * check; NULL: exe if it has PT_INTERP, else a few
				 * usual programs */
	const char *lib;	/* shared object to copy and dlopen; NULL: libm's */
};

/**
 * denywrite_check() - run the MAP_DENYWRITE-removal checks (Linux 5.15)
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
int denywrite_check(const struct denywrite_opts *opts, abi_report_fn report, void *arg);

#endif
