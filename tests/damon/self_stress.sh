#!/usr/bin/env bash
# The self agent loses no data: tests/damon/self_stress (writers with
# per-page sequence numbers, read(2)/write(2) through monitored pages,
# fork children checking the pool, MADV_DONTNEED, mremap, munmap churn)
# runs under libuks-damon-agent.so with aggressive attributes (1 ms
# sampling, 300..1000 regions), and every byte must be what was written
# last.  UFFDIO_MOVE mode with everything; the copy fallback
# (UKS_DAMON_SELF_MODE=copy) without the MADV_DONTNEED and munmap threads
# (what it does not survive: docs/DAMON.md).  The agent's counts must show
# pages taken and faults served, so the run is not vacuous.  With -H (the
# pool and the remove/unmap buffers in transparent huge pages, where THP
# is not "never") the counts must also show huge pages taken whole (not
# under a sanitizer), and once more with 4 KiB samples only
# (UKS_DAMON_SELF_HUGE=0).  The agent's output to `uks damon record` is
# binary packets that record turns into the record their independent
# decoding gives, byte for byte.  Last, the
# `uks damon record --primitive self` path end to end, also for programs
# that close every fd they did not open (tests/damon/fd_closer.c).
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
AGENT=$PWD/$O/libuks-damon-agent.so
A=$AGENT
S=$O/tests/damon/self_stress
SECS=${SELF_STRESS_SECS:-4}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if [ ! -e "$AGENT" ] || [ ! -x "$S" ]; then
	echo "1..0 # SKIP needs $AGENT and $S"
	exit 77
fi
# a sanitizer build's agent needs its runtime loaded first
rt=$(ldd "$A" 2>/dev/null | sed -n 's/.*=> \(.*lib[at]san[^ ]*\) .*/\1/p' | tr '\n' ':')
[ -n "$rt" ] && A=$rt$AGENT
if ! why=$(UKS_DAMON_AGENT_OUT=$tmp/probe.data LD_PRELOAD=$A /bin/true 2>&1) || [ -n "$why" ]; then
	echo "1..0 # SKIP the self primitive is not available: $why"
	exit 77
fi

stress() {	# stress NAME MODE ARGS...
	local name=$1 mode=$2; shift 2
	# env executes the program (same pid): the agent follows it
	timeout 120 env UKS_DAMON_SELF_MODE="$mode" UKS_DAMON_AGENT_VERBOSE=1 \
		${SELF_HUGE:+UKS_DAMON_SELF_HUGE=$SELF_HUGE} \
		UKS_DAMON_AGENT_OUT="$tmp/$name.data" \
		UKS_DAMON_AGENT_ATTRS="1000 10000 200000 300 1000" \
		LD_PRELOAD="$A" "$S" -t "$SECS" "$@" >"$tmp/$name.out" 2>&1
	local rc=$?
	cat "$tmp/$name.out"
	[ $rc = 0 ] || { echo "exit status $rc"; return 1; }
	grep -q "self_stress: .* 0 errors" "$tmp/$name.out" || return 1
	grep -q " 0 lost," "$tmp/$name.out" || { echo "the agent lost pages"; return 1; }
	# uks-damon-agent: MODE mode, N samples, N sampled pages, N taken, N faults, ...
	# The run must have exercised taking pages: bounds on what it sampled,
	# which a loaded machine lowers (fewer samples in the same seconds).
	local samples taken faults
	samples=$(sed -n 's/.* \([0-9]*\) samples,.*/\1/p' "$tmp/$name.out")
	taken=$(sed -n 's/.* \([0-9]*\) taken.*/\1/p' "$tmp/$name.out")
	faults=$(sed -n 's/.* \([0-9]*\) faults.*/\1/p' "$tmp/$name.out")
	[ "${samples:-0}" -ge 20 ] || { echo "only ${samples:-0} samples: too few to judge"; return 1; }
	[ $((${taken:-0} * 4)) -ge "$samples" ] && [ $((${faults:-0} * 8)) -ge "${taken:-0}" ] &&
		[ "${faults:-0}" -gt 0 ] ||
		{ echo "too few pages taken (${taken:-0} in $samples samples) or faults (${faults:-0})"; return 1; }
	if [ -n "${WANT_HUGE:-}" ]; then
		local huge
		huge=$(sed -n 's/.* \([0-9]*\) huge$/\1/p' "$tmp/$name.out")
		[ "${huge:-0}" -gt 10 ] || { echo "too few huge pages taken whole"; return 1; }
	fi
}
# under a sanitizer the regions span the shadow's terabytes and rarely
# sample the pool: the data checks run, the huge count is not required
stress_huge() { if [ -n "$rt" ]; then stress "$@"; else WANT_HUGE=1 stress "$@"; fi; }
stress_small() { SELF_HUGE=0 stress "$@"; }
thp_mode=$(cat /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null)

mode=$(UKS_DAMON_AGENT_VERBOSE=1 UKS_DAMON_AGENT_OUT=$tmp/probe.data LD_PRELOAD=$A /bin/true 2>&1 |
       sed -n 's/uks-damon-agent: \([a-z]*\) mode.*/\1/p')
if [ "$mode" = move ]; then
	ok "UFFDIO_MOVE mode: no byte lost (writers, pipe read/write, fork, DONTNEED, mremap, munmap)" -- \
		stress move move
	ok "UFFDIO_MOVE mode, second run" -- stress move2 move
	if [ -n "$thp_mode" ] && [ "${thp_mode#*\[never\]}" = "$thp_mode" ]; then
		ok "UFFDIO_MOVE mode, THP pool: huge pages taken whole, no byte lost" -- \
			stress_huge thp move -H
		ok "UFFDIO_MOVE mode, THP pool, 4 KiB samples: no byte lost" -- \
			stress_small thp4k move -H
	else
		skip "UFFDIO_MOVE mode, THP pool" "transparent huge pages are off ($thp_mode)"
		skip "UFFDIO_MOVE mode, THP pool, 4 KiB samples" "transparent huge pages are off"
	fi
else
	skip "UFFDIO_MOVE mode" "the kernel has no UFFDIO_MOVE (6.8+)"
	skip "UFFDIO_MOVE mode, second run" "no UFFDIO_MOVE"
	skip "UFFDIO_MOVE mode, THP pool" "no UFFDIO_MOVE"
	skip "UFFDIO_MOVE mode, THP pool, 4 KiB samples" "no UFFDIO_MOVE"
fi
ok "copy mode: no byte lost (writers, pipe read/write, fork, mremap)" -- stress copy copy -r -u
ok "the record of a stress run reads back" -- \
	bash -c '"$1" damon report raw "$2" | grep -q "nr_regions"' _ "$O/uks" "$tmp/copy.data"
# The agent's fd output is binary packets (never trace text), and record
# makes of them exactly the record an independent decoding of the same
# bytes gives (tests/damon/agent_stream.py).  A do-nothing preload stands
# in for the agent in the second run, so that a shell can replay the bytes.
ok "the agent writes its aggregations to UKS_DAMON_AGENT_FD as binary packets" -- bash -c '
	UKS_DAMON_AGENT_FD=3 UKS_DAMON_AGENT_ATTRS="1000 10000 1000000 300 1000" \
		LD_PRELOAD="$1" sleep 1 3>"$2/agent.stream" || exit 1
	if grep -aq damon_aggregated "$2/agent.stream"; then echo "trace text in the stream"; exit 1; fi
	python3 tests/damon/agent_stream.py "$2/agent.stream" "$2/expected.data" >"$2/expected.out" &&
	cat "$2/expected.out" && grep -q "^[1-9][0-9]* snapshots" "$2/expected.out"' _ "$A" "$tmp"
echo "int uks_test_noop;" | ${CC:-cc} -shared -fPIC -o "$tmp/noop.so" -x c -
echo 'cat "$1" >&"$UKS_DAMON_AGENT_FD"' >"$tmp/replay.sh"
ok "record turns the agent's packets into the same record, byte for byte" -- bash -c '
	UKS_DAMON_AGENT="$1/noop.so" "$2" damon record -f binary --primitive self -o "$1/replay.data" -- \
		bash "$1/replay.sh" "$1/agent.stream" 2>"$1/replay.out"
	rc=$?; cat "$1/replay.out"; [ $rc = 0 ] || exit 1
	grep -qF "uks damon record: $(cat "$1/expected.out") in $1/replay.data" "$1/replay.out" &&
	cmp "$1/expected.data" "$1/replay.data"' _ "$tmp" "$O/uks"
if [ -n "$rt" ]; then
	skip "uks damon record --primitive self" "sanitizer build: record cannot put the runtime first"
	tap_done; exit
fi
${CC:-cc} -O2 -o "$tmp/fd_closer" tests/damon/fd_closer.c
for how in closefrom close_range loop raw; do
	ok "a program that closes every fd ($how) loses no byte, and the record goes on" -- bash -c '
		UKS_DAMON_AGENT="$1" "$2" damon record --primitive self -o "$3/fd.data" -- "$4" "$5" \
			>"$3/fd.out" 2>&1; rc=$?; cat "$3/fd.out"
		[ $rc = 0 ] && grep -q "^$5: 0 words wrong" "$3/fd.out" &&
		n=$(sed -n "s/.* \([0-9]*\) snapshots .*/\1/p" "$3/fd.out") && [ "${n:-0}" -ge 5 ]' \
		_ "$AGENT" "$O/uks" "$tmp" "$tmp/fd_closer" "$how"
done
ok "uks damon record --primitive self -- self_stress" -- bash -c '
	UKS_DAMON_AGENT="$1" "$2" damon record --primitive self --attrs "2000 20000 1000000 10 1000" \
		-o "$3/rec.data" -- "$4" -t 2 2>&1 | tee "$3/rec.out" &&
	grep -q "0 errors" "$3/rec.out" && grep -q "snapshots" "$3/rec.out" &&
	"$2" damon report wss "$3/rec.data" | grep -q "avr:"' _ "$AGENT" "$O/uks" "$tmp" "$S"
tap_done
