#!/usr/bin/env bash
# uks damon reclaim (DAMON_RECLAIM on processes) on a real process:
#  - tests/damon/cold_child maps a 64 MiB file (clean file pages, which
#    pageout drops without swap) and reads only its first 4 MiB again and
#    again: reclaim with min_age 0.5 s and watermarks that hold on any
#    machine (free rate < 1000), no quota, drops at least half of the 60 cold MiB
#    from its VmRSS, counts what it paged out, and the child then reads
#    every byte back intact; the child's hot passes per second before and
#    while reclaimed are printed (the cost, not asserted);
#  - watermarks the free rate cannot meet (high 0: above it) keep it
#    inactive: nothing tried;
#  - a size quota: the bytes tried never exceed quota_sz per reset
#    interval times the intervals run;
#  - bad arguments: no -p, a pid that does not exist, --skip_anon,
#    watermarks out of order, garbage numbers.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
U=$O/uks
C=$O/tests/damon/cold_child
echo "TAP version 13"
if [ ! -x "$U" ] || [ ! -x "$C" ]; then
	echo "1..0 # SKIP needs $U and $C"
	exit 77
fi
# a disk file system for the child's file (tmpfs pages are shmem: swap only)
dir=
for d in /var/tmp "$O" /tmp; do
	[ -w "$d" ] && [ "$(stat -f -c %T "$d")" != tmpfs ] && { dir=$d; break; }
done
if [ -z "$dir" ]; then
	echo "1..0 # SKIP no writable directory on a disk file system"
	exit 77
fi
tmp=$(mktemp -d); trap 'kill $child 2>/dev/null; rm -rf "$tmp"' EXIT
child=

start_child() {	# in this shell, not in ok's $(): $child must stay set
	"$C" "$dir" 64 4 >"$tmp/child.out" &
	child=$!
	for _ in $(seq 200); do grep -q ready "$tmp/child.out" && return 0; sleep 0.05; done
	return 1
}
passes() {	# the child's hot passes so far
	local n0
	n0=$(grep -c passes "$tmp/child.out")
	kill -USR1 "$child"
	for _ in $(seq 100); do
		[ "$(grep -c passes "$tmp/child.out")" -gt "$n0" ] && break
		sleep 0.01
	done
	grep passes "$tmp/child.out" | tail -1 | cut -d' ' -f2
}
rate() {	# hot passes per second over 1 s
	local a b
	a=$(passes); sleep 1; b=$(passes)
	echo $((b - a))
}
open_wmarks=(--wmarks_high 1000 --wmarks_mid 1000 --wmarks_low 0 --wmarks_interval 100000)

start_child; ok "the child starts" -- grep -q ready "$tmp/child.out"
r0=$(rate)
# No quota here: a region over the unmapped gap below the heap (hundreds of
# MiB with brk randomisation) is charged whole, as the kernel's vaddr
# charges it, so under the default 128 MiB a second the cold file may come
# after several windows (the quota has its own case below).
"$U" damon reclaim -p "$child" --min_age 500000 --duration 6 --quota_ms 0 --quota_sz 0 \
	"${open_wmarks[@]}" >"$tmp/out" 2>"$tmp/err" &
rec=$!
sleep 2
r1=$(rate)
wait $rec
echo "# $(tr '\n' ' ' <"$tmp/out")"
echo "# child's hot passes/s: $r0 before, $r1 while reclaimed"
read -r before after < <(sed -n 's/^pid [0-9]* VmRSS \([0-9-]*\) kB -> \([0-9-]*\) kB$/\1 \2/p' "$tmp/out")
ok "reclaim exits 0 and prints the module's stats" -- bash -c "
	grep -q '^nr_reclaim_tried_regions [0-9]' '$tmp/out' &&
	grep -q '^bytes_reclaimed_regions [1-9]' '$tmp/out' &&
	grep -q '^nr_quota_exceeds [0-9]' '$tmp/out'"
ok "VmRSS drops by at least half the cold 60 MiB ($before -> $after kB)" -- \
	test "${after:-999999}" -le $(( ${before:-0} - 30 * 1024 ))
kill -TERM "$child"; wait "$child"; st=$?
ok "the child's data is intact" -- bash -c "[ $st = 0 ] && grep -q intact '$tmp/child.out'"

start_child; ok "the child starts again" -- grep -q ready "$tmp/child.out"
"$U" damon reclaim -p "$child" --min_age 0 --duration 1.5 --wmarks_high 0 --wmarks_mid 0 \
	--wmarks_low 0 --wmarks_interval 100000 >"$tmp/out" 2>&1
ok "above the high watermark: inactive, nothing tried" -- bash -c "
	grep -q '^nr_reclaim_tried_regions 0$' '$tmp/out' && grep -q '^active N$' '$tmp/out'"
# 1 MiB a second for 3 s: at most 4 windows (the first starts at once)
"$U" damon reclaim -p "$child" --min_age 0 --duration 3 --quota_sz $((1 << 20)) \
	--quota_ms 0 --quota_reset_interval_ms 1000 "${open_wmarks[@]}" >"$tmp/out" 2>&1
tried=$(sed -n 's/^bytes_reclaim_tried_regions //p' "$tmp/out")
ok "quota_sz bounds the bytes tried per reset interval ($tried)" -- \
	test "${tried:-999999999}" -le $((4 << 20)) -a "${tried:-0}" -gt 0
kill -TERM "$child"; wait "$child"

ok "no -p: usage, exit 2" -- bash -c "'$U' damon reclaim >/dev/null 2>&1; [ \$? = 2 ]"
ok "a pid that does not exist: exit 1" -- bash -c "
	'$U' damon reclaim -p 2147483646 2>&1 | grep -q 'no such process'; [ \${PIPESTATUS[0]} = 1 ]"
ok "--skip_anon is refused, exit 2" -- bash -c "
	'$U' damon reclaim -p $$ --skip_anon 2>&1 | grep -q 'anon filter'; [ \${PIPESTATUS[0]} = 2 ]"
ok "watermarks out of order: exit 2" -- bash -c "
	'$U' damon reclaim -p $$ --wmarks_high 100 --wmarks_mid 200 2>&1 | grep -q 'high >= mid >= low'
	[ \${PIPESTATUS[0]} = 2 ]"
for bad in -1 x 1x 99999999999999999999999; do
	ok "--quota_sz $bad: exit 2" -- bash -c "'$U' damon reclaim -p $$ --quota_sz '$bad' >/dev/null 2>&1; [ \$? = 2 ]"
done
tap_done
