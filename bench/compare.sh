#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
#
# bench/compare.sh: two builds of uks against each other, in one run.
#
#   bench/compare.sh [-r ROUNDS] [-n WORKERS] [-c CPU] [-N] BEFORE AFTER
#   make bench-compare BEFORE=dir [AFTER=dir] [ROUNDS=n]
#
# BEFORE and AFTER are build directories (what `make` and the bench
# binaries leave in O=dir: bench/trace-event, bench/slab-fastpath,
# bench/malloc-peers, libuks-malloc.so).  Each side runs its own binaries.
# The figures, all times (lower is better):
#
#   trace enabled      bench/trace-event: ns per enabled event with a
#                      64-byte payload written to the ring buffer (the
#                      empty loop subtracted)
#   trace disabled     the same: ns per iteration of the loop around a
#                      disabled tracepoint, loop included (the call site
#                      alone, a load and a branch, is below the 0.01 ns
#                      the bench prints)
#   slab pair          bench/slab-fastpath: ns per kmem_cache alloc+free
#                      pair on the default (rseq) fast path
#   kmalloc(64) pair   the same for uks_kmalloc(64)/uks_kfree
#   malloc PATTERN     bench/malloc-peers' worker for PATTERN (default
#                      larson, prodcons, mixed) under the side's
#                      libuks-malloc.so as LD_PRELOAD: ms of its timed part
#
# A round runs every benchmark once on each side, the sides back to back,
# the one going first alternating from round to round, so that drift of a
# shared box hits both alike; a malloc pattern runs WORKERS times per side
# and round (interleaved; the median is the round's figure) after one
# untimed warm-up per side.  trace-event and slab-fastpath already report
# medians of 7 runs each.  The table gives each side's median over the
# rounds, after/before of those medians and of the fastest rounds (the
# noise of a shared box only adds time), the range of the per-round
# quotients (the noise of the comparison: run it with BEFORE = AFTER to
# see it), and in how many rounds AFTER was slower.  COMPARE_VERBOSE=1
# lists every round's figures.
#
# Every bench runs SCHED_FIFO at priority 1 (chrt -f 1; time-shared with
# -N or COMPARE_RT=0, or where chrt is not permitted): on this 2-CPU box
# shared with other builds (load 12) the time-shared figures came out 2-3x
# the idle ones and moved up to 2x from round to round; SCHED_FIFO gave
# the idle figures within a few percent, but for slow spells of the VM
# (a slab pair in 5.5 ns instead of 3.4) that the per-round range shows.
# Others keep the kernel's RT throttling share (5%) of a CPU while a
# bench runs, a few seconds at a time.
# Single-threaded figures are taken on one CPU for both sides (-c CPU,
# else UKS_BENCH_CPU, else the first CPU this script may use), because
# the vCPUs of this project's VM differ in speed; larson and prodcons run
# two threads and are not pinned.  trace-event runs without the lttng
# tools on PATH: its LTTng-UST peer is not part of the comparison, and
# starting a session daemon every round doubled the bench's time.
# UKS_BENCH_SCALE is passed on (it multiplies every bench's work).
# With the defaults (5 rounds, 5 workers) a run takes about two minutes
# on the 2-CPU box (3.5 minutes time-shared at load 12).  Exit 0 when
# every figure was measured, 1 when a bench failed or printed no figure,
# 2 on bad usage or a missing binary.
set -eu

ROUNDS=${COMPARE_ROUNDS:-5}
WORKERS=${COMPARE_WORKERS:-5}
CPU=${UKS_BENCH_CPU:-}
PATTERNS=${COMPARE_PATTERNS:-larson prodcons mixed}
RT=${COMPARE_RT:-1}
VERBOSE=${COMPARE_VERBOSE:-0}

usage() {
	cat >&2 <<EOF
usage: $0 [-r ROUNDS] [-n WORKERS] [-c CPU] [-N] BEFORE AFTER
  BEFORE, AFTER  build directories (make O=dir all plus the bench binaries)
  -r ROUNDS      interleaved rounds (default 5; COMPARE_ROUNDS)
  -n WORKERS     malloc workers per pattern, side and round (default 5; COMPARE_WORKERS)
  -c CPU         the CPU of single-threaded figures (default UKS_BENCH_CPU, else the first allowed)
  -N             run the benches time-shared, not SCHED_FIFO (COMPARE_RT=0)
  COMPARE_PATTERNS="larson prodcons mixed" picks bench/malloc-peers patterns
  COMPARE_VERBOSE=1 lists every round's figures
EOF
	exit 2
}

MIDLINE=0	# a progress line is open on stdout

die() {
	[ $MIDLINE -eq 0 ] || echo
	echo "bench/compare.sh: $*" >&2
	exit "${EXIT:-1}"
}

while getopts r:n:c:Nh opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	n) WORKERS=$OPTARG ;;
	c) CPU=$OPTARG ;;
	N) RT=0 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 2 ] || usage
for n in "$ROUNDS" "$WORKERS"; do
	[[ $n =~ ^[1-9][0-9]*$ ]] || EXIT=2 die "rounds and workers must be positive integers, not '$n'"
done
if [ -z "$CPU" ]; then
	CPU=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*\([0-9]*\).*/\1/p' /proc/self/status)
fi
[[ $CPU =~ ^[0-9]+$ ]] && taskset -c "$CPU" true 2>/dev/null ||
	EXIT=2 die "cannot run on CPU '$CPU' (-c CPU or UKS_BENCH_CPU)"
FIFO=()
SCHED="time-shared"
if [ "$RT" != 0 ]; then
	if chrt -f 1 true 2>/dev/null; then
		FIFO=(chrt -f 1)
		SCHED="SCHED_FIFO 1"
	else
		SCHED="time-shared (chrt -f 1 not permitted)"
	fi
fi

# Both directories, absolute, with every binary the run needs.
SIDES=(before after)
declare -A DIR
DIR[before]=$1
DIR[after]=$2
missing=0
for s in "${SIDES[@]}"; do
	d=${DIR[$s]}
	if [ ! -d "$d" ]; then
		echo "bench/compare.sh: ${s^^}: $d: no such directory" >&2
		missing=1
		continue
	fi
	DIR[$s]=$(cd "$d" && pwd)
	for f in bench/trace-event bench/slab-fastpath bench/malloc-peers libuks-malloc.so; do
		if [ ! -f "${DIR[$s]}/$f" ] || { [ "${f#bench/}" != "$f" ] && [ ! -x "${DIR[$s]}/$f" ]; }; then
			echo "bench/compare.sh: ${s^^}: ${DIR[$s]}/$f missing" >&2
			missing=1
		fi
	done
done
[ $missing -eq 0 ] || EXIT=2 die "missing binaries; build them with" \
	"make O=DIR all DIR/bench/trace-event DIR/bench/slab-fastpath DIR/bench/malloc-peers"

TMP=$(mktemp -d /tmp/uks-bench-compare.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

# The figures, in table order: key|label|unit
FIGURES=("trace-enabled|trace enabled, 64-byte event|ns/call"
	 "trace-disabled|trace disabled, per iteration|ns/iter"
	 "slab-pair|slab pair (kmem_cache, rseq)|ns/pair"
	 "kmalloc-pair|kmalloc(64) pair|ns/pair")
for p in $PATTERNS; do
	FIGURES+=("malloc-$p|malloc $p (uks preload)|ms")
done

# record SIDE KEY VALUE: one sample of this round
record() {
	[[ $3 =~ ^-?[0-9]+(\.[0-9]+)?$ ]] || die "$1: $2: not a number: '$3'"
	echo "$3" >>"$TMP/$2.$1"
}

# field FILE PREFIX N: field N (from the end: 0 is the last) of the first
# line starting with PREFIX
field() {
	awk -v pre="$2" -v n="$3" 'index($0, pre) == 1 { print $(NF - n); found = 1; exit }
		END { if (!found) exit 1 }' "$1"
}

# run SIDE NAME CMD...: run a bench, its output in $TMP/out; fail loudly
run() {
	local side=$1 name=$2 st=0

	shift 2
	"$@" >"$TMP/out" 2>&1 || st=$?
	if [ $st -ne 0 ]; then
		die "${side^^}: $name failed with exit status $st:$(sed 's/^/\n    /' "$TMP/out")"
	fi
}

trace_event() {
	local s=$1 out=$TMP/out empty dis ena

	run "$s" trace-event taskset -c "$CPU" "${FIFO[@]}" env PATH=/nonexistent \
		"${DIR[$s]}/bench/trace-event"
	empty=$(field "$out" "  empty loop " 1) &&
	dis=$(field "$out" "  disabled tracepoint " 1) &&
	ena=$(field "$out" "  enabled, 64-byte payload " 1) ||
		die "${s^^}: bench/trace-event printed no figures:$(sed 's/^/\n    /' "$out")"
	record "$s" trace-enabled "$ena"
	record "$s" trace-disabled "$(awk -v a="$empty" -v b="$dis" 'BEGIN { printf "%.2f", a + b }')"
}

slab_fastpath() {
	local s=$1 out=$TMP/out pair km

	run "$s" slab-fastpath "${FIFO[@]}" env UKS_BENCH_CPU="$CPU" "${DIR[$s]}/bench/slab-fastpath"
	pair=$(field "$out" "  uks rseq (default) " 2) &&
	km=$(field "$out" "  uks kmalloc(64) " 2) ||
		die "${s^^}: bench/slab-fastpath printed no figures:$(sed 's/^/\n    /' "$out")"
	record "$s" slab-pair "$pair"
	record "$s" kmalloc-pair "$km"
}

# malloc_worker SIDE PATTERN: one worker; prints ms
malloc_worker() {
	local s=$1 p=$2 pin=() ns

	case $p in
	larson | prodcons | scratch) ;;		# threads: both CPUs
	*) pin=(taskset -c "$CPU") ;;
	esac
	run "$s" "malloc-peers --worker $p" "${pin[@]}" "${FIFO[@]}" \
		env LD_PRELOAD="${DIR[$s]}/libuks-malloc.so" "${DIR[$s]}/bench/malloc-peers" --worker "$p"
	ns=$(head -n1 "$TMP/out")
	[[ $ns =~ ^[0-9]+$ ]] || die "${s^^}: malloc-peers --worker $p printed '$ns', not a time"
	awk -v ns="$ns" 'BEGIN { printf "%.3f\n", ns / 1e6 }'
}

median() {
	sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
		else printf "%.6g\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

malloc_patterns() {
	local first=$1 second=$2 p s

	for p in $PATTERNS; do
		for _ in $(seq "$WORKERS"); do
			for s in "$first" "$second"; do
				malloc_worker "$s" "$p" >>"$TMP/w.$p.$s"
			done
		done
		for s in "$first" "$second"; do
			record "$s" "malloc-$p" "$(median <"$TMP/w.$p.$s")"
			rm -f "$TMP/w.$p.$s"
		done
	done
}

unset LD_PRELOAD
export UKS_BENCH_SCALE=${UKS_BENCH_SCALE:-1}
echo "bench/compare.sh: $ROUNDS round(s), malloc workers x$WORKERS, single-threaded figures on CPU $CPU, $SCHED"
echo "  BEFORE ${DIR[before]}"
echo "  AFTER  ${DIR[after]}"
start=$SECONDS
for p in $PATTERNS; do		# warm-up, not counted
	for s in "${SIDES[@]}"; do
		malloc_worker "$s" "$p" >/dev/null
	done
done
for r in $(seq "$ROUNDS"); do
	if [ $((r % 2)) -eq 1 ]; then order=(before after); else order=(after before); fi
	printf '  round %d/%d (%s first)...' "$r" "$ROUNDS" "${order[0]}"
	MIDLINE=1
	for s in "${order[@]}"; do trace_event "$s"; done
	for s in "${order[@]}"; do slab_fastpath "$s"; done
	malloc_patterns "${order[@]}"
	printf ' %d s\n' $((SECONDS - start))
	MIDLINE=0
done

if [ "$VERBOSE" != 0 ]; then
	for f in "${FIGURES[@]}"; do
		key=${f%%|*}
		printf '  %-15s before %s\n  %-15s after  %s\n' "$key" \
			"$(paste -sd' ' "$TMP/$key.before")" "" "$(paste -sd' ' "$TMP/$key.after")"
	done
fi
echo
printf '%-30s %-7s %9s %9s %7s %7s  %-13s %s\n' benchmark unit before after ratio best \
	"per round" "after slower"
for f in "${FIGURES[@]}"; do
	IFS='|' read -r key label unit <<<"$f"
	paste -d' ' "$TMP/$key.before" "$TMP/$key.after" | awk -v label="$label" -v unit="$unit" '
		function med(v, n,   i, j, t) {
			for (i = 2; i <= n; i++)	# insertion sort: a handful of rounds
				for (j = i; j > 1 && v[j - 1] > v[j]; j--) {
					t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
				}
			return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}
		function q(a, b) { return b > 0 ? a / b : 0 }
		{
			b[NR] = $1; a[NR] = $2; r = q($2, $1)
			if (NR == 1 || $1 < bmin) bmin = $1
			if (NR == 1 || $2 < amin) amin = $2
			if (NR == 1 || r < rmin) rmin = r
			if (NR == 1 || r > rmax) rmax = r
			slower += $2 > $1
		}
		END {
			mb = med(b, NR); ma = med(a, NR)
			printf "%-30s %-7s %9.2f %9.2f %6.3fx %6.3fx  %.2f..%.2f  %7d/%d\n", label, unit,
				mb, ma, q(ma, mb), q(amin, bmin), rmin, rmax, slower, NR
		}'
done
echo "(before, after: medians over $ROUNDS rounds; ratio: after/before of the medians, < 1 is"
echo " faster; best: of the fastest rounds; per round: range of after/before within a round;"
echo " after slower: rounds in which after took longer)"
