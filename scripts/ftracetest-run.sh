#!/usr/bin/env bash
# scripts/ftracetest-run.sh: run the kernel's ftrace selftests against
# uksfs (scripts/tracing-ns.sh sets the session up), one .tc file at a time.
#
#   scripts/ftracetest-run.sh FTRACE_DIR LOGDIR [TEST.tc|DIR ...]
#
# FTRACE_DIR is tools/testing/selftests/ftrace of a kernel tree (see
# scripts/get-ftracetest.sh); tests are paths below it (default: the
# directories of docs/FTRACETEST.md).  Writes LOGDIR/results, one line per
# run: "<test path> <top|instance> <PASS|FAIL|UNSUPPORTED|...>", and
# ftracetest's logs below LOGDIR.
set -eu
O=${O:-build}
ft=$(realpath "$1") logdir=$(realpath -m "$2"); shift 2
[ $# -gt 0 ] || set -- test.d/00basic test.d/dynevent test.d/event test.d/filter \
	test.d/instances test.d/trigger
mkdir -p "$logdir"
tests=$(cd "$ft" && find "$@" -name '*.tc' | sort)
: > "$logdir/results"
export ft logdir tests
exec "$(dirname "$0")/tracing-ns.sh" -- bash -c '
cd "$ft"
# A system has other tasks making events; some tests (event-no-pid.tc)
# check that events of tasks outside a filtered one still come, in windows
# of a few milliseconds.  This one makes system calls every 10 ms without
# forking: a read that times out on a pipe nobody writes.
( exec 3<> <(:); while :; do read -r -t 0.01 -u 3 _; done ) &
others=$!
for t in $tests; do
	log=$logdir/$(echo "$t" | tr / _)
	mkdir -p "$log"
	timeout -k 5 300 ./ftracetest -l "$log" "$t" > "$log/out" 2>&1
	sed -n "s/^\[[0-9]*\] \((instance) \)\{0,1\}.*\t\[\([A-Z]*\)\]$/\1 \2/p" "$log/out" |
	while read -r a b; do
		if [ -n "$b" ]; then echo "$t instance $b"; else echo "$t top $a"; fi
	done >> "$logdir/results"
done
kill $others'
