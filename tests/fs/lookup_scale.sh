#!/usr/bin/env bash
# Path lookups and listings through a real mount cost the path's depth and
# the entries listed, not the number of events: 10,000 eprobes in one
# group are created, listed in full, looked up and read, and each cost is
# bounded by the same operation measured at 250 eprobes in this run, times
# the growth in entries (40x) for what lists or reads every event, and a
# fixed factor for what touches one.  The bounds are enforced with timeout,
# so a quadratic tree fails instead of hanging.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "lookup and listing costs through FUSE"

ok "uksd --daemon returns once it serves" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
G=$T/events/scale
K=10	# slack on every ratio: a loaded 2-core machine
now() { date +%s%N; }
# best NAME CMD...: the fastest of three runs of CMD, in ns, into $NAME
best() {
	local name=$1 b= t0 t; shift
	for _ in 1 2 3; do
		t0=$(now); "$@" > /dev/null || return 1; t=$(( $(now) - t0 ))
		[ -z "$b" ] || [ "$t" -lt "$b" ] && b=$t
	done
	printf -v "$name" %s "$b"
}
# bound NS FACTOR: seconds for timeout(1), at least 1
bound() { awk -v ns="$1" -v f="$2" 'BEGIN { s = ns * f / 1e9; printf "%.2f", s < 1 ? 1 : s }'; }
# make_eprobes FROM TO: "echo ... >> dynamic_events" per eprobe (an open,
# a lookup and a write each, as a script does it)
make_eprobes() {
	for ((i = $1; i < $2; i++)); do
		echo "e:scale/e$i kmem/kmalloc sz=\$bytes_req:u32" >> "$T/dynamic_events" || return 1
	done
}
export -f make_eprobes
export T

t0=$(now)
ok "250 eprobes are created" -- make_eprobes 0 250
create250=$(( $(now) - t0 ))
best ls250 ls "$G"
best one250 cat "$G/e7/enable" "$T/tracing_on"
best filters250 bash -c "cat '$G'/*/filter"

b=$(bound "$create250" $((K * 39)))
t0=$(now)
ok "9,750 more are created within ${b}s ($K x 39 x the first 250)" -- \
	timeout "$b" bash -c 'make_eprobes 250 10000'
create9750=$(( $(now) - t0 ))
ok "ls events/scale lists all 10,000 events and the enable and filter files" -- bash -c "
	[ \"\$(timeout 60 ls '$G' | wc -l)\" = 10002 ] && timeout 60 ls '$G' | grep -qx e9999 &&
	[ \"\$(grep -c '^e:scale/' '$T/dynamic_events')\" = 10000 ]"
b=$(bound "$ls250" $((K * 40)))
ok "listing 10,000 takes under ${b}s ($K x 40 x listing 250)" -- timeout "$b" ls "$G"
b=$(bound "$one250" "$K")
ok "one event's file and tracing_on read under ${b}s ($K x at 250)" -- \
	timeout "$b" cat "$G/e9998/enable" "$T/tracing_on"
b=$(bound "$filters250" $((K * 40)))
ok "every filter file of 10,000 reads under ${b}s ($K x 40 x 250 of them)" -- \
	timeout "$b" bash -c "cat '$G'/*/filter > /dev/null"
best ls10000 timeout 60 ls "$G" || ls10000=0
t0=$(now); timeout 120 bash -c "cat '$G'/*/filter > /dev/null"; filters10000=$(( $(now) - t0 ))
echo "# ms at 250 / 10000: create $((create250 / 1000000)) / $((create9750 / 1000000))," \
	"ls $((ls250 / 1000000)) / $((ls10000 / 1000000))," \
	"all filter files $((filters250 / 1000000)) / $((filters10000 / 1000000))"
ok "the eprobes go with one truncating write" -- bash -c "
	timeout 120 bash -c ': > \"$T/dynamic_events\"' && [ -z \"\$(cat '$T/dynamic_events')\" ] &&
	! ls '$G' 2>/dev/null"
tap_done
