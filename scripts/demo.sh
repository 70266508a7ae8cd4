#!/usr/bin/env bash
# make demo: the end-to-end show of what uks can do today.
set -eu
O=${1:-build}
echo "uks demo ($("$O/uks" --version))"
echo
echo "== the CPU view every uks subsystem builds on"
"$O/uks" cpu
echo
echo "== without glibc's rseq registration (fallback to sched_getcpu)"
GLIBC_TUNABLES=glibc.pthread.rseq=0 "$O/uks" cpu
echo
echo "== kernel cpulist text, parsed and normalised (16 CPUs)"
for l in "0-3,8,10-11" "0-15:2/4" "3,2,1,0"; do
	printf '%-14s -> %s\n' "$l" "$("$O/uks" cpulist "$l" 16 2>&1 | sed 's/^uks: //')"
done
printf '%-14s -> %s\n' "1-" "$("$O/uks" cpulist "1-" 16 2>&1 | sed 's/^uks: //')"
echo
echo "Not yet here: SLUB, tracing, DAMON, VDUSE and uksfs land in their own issues;"
echo "this demo grows with each of them."
