#!/usr/bin/env bash
# Debian's trace-cmd against uksfs, as a user drives it: record, report,
# extract, stream, instances (-B), snapshot and show, in a private mount
# namespace where /sys/kernel/tracing is a uksd's (scripts/tracing-ns.sh
# --tracefs: libtracefs accepts only a mount of type tracefs).  What
# trace-cmd decodes from the binary pages must be what uks's `trace` file
# says about the same events.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
echo "TAP version 13"
if ! command -v trace-cmd >/dev/null; then
	skip "trace-cmd" "not installed (scripts/deps.sh installs it)"
	tap_done; exit
fi
if [ "$(id -u)" != 0 ] || ! grep -q 'UKS_HAVE_FUSE3 1' "$O/config.h" || [ ! -w /dev/fuse ] ||
   ! unshare -m sh -c 'umount -l /sys/kernel/tracing; mount -t tracefs nodev /sys/kernel/tracing' 2>/dev/null; then
	skip "trace-cmd" "needs root, FUSE, mount namespaces and a tracefs to mount uksfs over"
	tap_done; exit
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# run SCRIPT: $tmp/SCRIPT in the namespace, in $tmp; its output shown if it fails
run() {
	O=$O bash scripts/tracing-ns.sh --tracefs -- bash "$tmp/$1" "$tmp" >"$tmp/log" 2>&1 ||
		{ cat "$tmp/log"; return 1; }
}

# "comm-pid ts" of each event in `trace` and in `trace-cmd report` output.
# (Syscall events print differently in the two, on the kernel too: `trace`
# uses the syscall printer, trace-cmd the format file's print fmt; marker
# texts are compared on their own.)
norm_trace() { sed -n 's/^ *\([^ ].*-[0-9]*\) *\[[0-9]*\] [^ ]\{5\} *\([0-9.]*\): .*$/\1 \2/p'; }
norm_report() { sed -n 's/^ *\([^ ].*-[0-9]*\) *\[[0-9]*\] *\([0-9.]*\): .*$/\1 \2/p'; }

cat > "$tmp/record.sh" <<'S'
set -e
cd "$1"
trace-cmd record -q -e syscalls -e kmem -o rec.dat ls / > ls.out
trace-cmd report -i rec.dat > rec.txt
S
record_ls() {
	run record.sh && grep -qx bin "$tmp/ls.out" &&
	grep -q 'ls-[0-9]* .*sys_enter_openat:' "$tmp/rec.txt" &&
	grep -q 'ls-[0-9]* .*sys_exit_openat:' "$tmp/rec.txt"
}
ok "record -e syscalls -e kmem over a traced ls, then report" -- record_ls

cat > "$tmp/extract.sh" <<'S'
set -e
cd "$1"
T=/sys/kernel/tracing
trace-cmd start -e syscalls:sys_enter_openat -e syscalls:sys_exit_openat
ls / > /dev/null
for i in 1 2 3; do echo "uks marker $i" > /sys/kernel/tracing/trace_marker; done
cat /etc/hostname > /dev/null
trace-cmd stop
cat $T/trace > text.txt
trace-cmd extract -o ex.dat
trace-cmd report -i ex.dat > ex.txt
trace-cmd reset
S
extract_matches_trace() {
	run extract.sh || return 1
	norm_trace < "$tmp/text.txt" | sort > "$tmp/a"
	norm_report < "$tmp/ex.txt" | sort > "$tmp/b"
	[ "$(wc -l < "$tmp/a")" -ge 4 ] || { echo "trace shows $(wc -l < "$tmp/a") events"; return 1; }
	diff "$tmp/a" "$tmp/b" > "$tmp/diff" || { grep '^[<>]' "$tmp/diff" | head -8; return 1; }
	grep -o 'uks marker [0-9]' "$tmp/text.txt" > "$tmp/a"
	grep -o 'uks marker [0-9]' "$tmp/ex.txt" > "$tmp/b"
	[ "$(wc -l < "$tmp/a")" = 3 ] && diff "$tmp/a" "$tmp/b"
}
ok "extract decodes the same events and times as the trace file, and the markers' text" -- extract_matches_trace

cat > "$tmp/instance.sh" <<'S'
set -e
cd "$1"
T=/sys/kernel/tracing
trace-cmd record -q -B uks-inst -e syscalls:sys_enter_openat -o inst.dat cat /etc/hostname > /dev/null
trace-cmd report -i inst.dat > inst.txt
ls $T/instances > instances.after
cat $T/trace | grep -c sys_enter_openat > top.count || true
S
record_instance() {
	run instance.sh && grep -q 'cat-[0-9]* .*sys_enter_openat:' "$tmp/inst.txt" &&
	[ ! -s "$tmp/instances.after" ] && [ "$(cat "$tmp/top.count")" = 0 ]
}
ok "record -B NAME records into a new instance, removed at the end; the top buffer is untouched" -- \
	record_instance

cat > "$tmp/snapshot.sh" <<'S'
set -e
cd "$1"
trace-cmd start -e syscalls:sys_enter_getpid
perl -e 'getppid; syscall(39) for 1..3' 2>/dev/null || python3 -c 'import os; [os.getpid() for _ in range(3)]'
trace-cmd snapshot -s
trace-cmd snapshot > snap.txt
trace-cmd show -s > show-s.txt
trace-cmd snapshot -f
trace-cmd reset
S
snapshot() {
	run snapshot.sh && grep -q 'sys_getpid()' "$tmp/snap.txt" &&
	grep -q 'sys_getpid()' "$tmp/show-s.txt"
}
ok "snapshot -s takes a snapshot; snapshot and show -s print it" -- snapshot

# trace-cmd stream, with splice (its default) and with --nosplice: three
# commands started once it records (its own recorders' first events are in
# its output) must each have their openat printed while it still runs;
# then SIGINT ends it.  Under `uks trace --every-syscall` trace-cmd takes
# seconds to set up, and trace-cmd 3.1 hangs in poll() when SIGINT comes
# before its recorders have started (as on a kernel), so the check waits
# for them rather than sending SIGINT after a fixed time.
cat > "$tmp/stream.sh" <<'S'
cd "$1"
for mode in splice nosplice; do
	opt=; [ $mode = nosplice ] && opt=--nosplice
	trace-cmd stream $opt -e syscalls:sys_enter_openat > $mode.txt 2>&1 &
	tc=$!
	i=0
	until grep -q sys_enter_openat $mode.txt; do
		i=$((i + 1)); [ $i -lt 1200 ] || break; sleep 0.1
	done
	: > $mode.pids
	for n in 1 2 3; do sh -c 'echo $$ >> "$1"; exec cat /etc/hostname' sh $mode.pids > /dev/null; done
	live() { while read -r p; do grep -q -- "-$p *\[.*sys_enter_openat" $mode.txt || return 1; done < $mode.pids; }
	i=0
	until live; do i=$((i + 1)); [ $i -lt 1200 ] || break; sleep 0.1; done
	live && echo live > $mode.verdict
	kill -INT $tc
	i=0	# a trace-cmd that ignores SIGINT must not hang the test
	while kill -0 $tc 2>/dev/null; do
		i=$((i + 1)); [ $i -lt 600 ] || kill -KILL $tc; sleep 0.1
	done
	wait $tc && echo exited >> $mode.verdict
done
exit 0
S
stream_ran=0
stream() {	# stream MODE
	[ $stream_ran = 1 ] || { stream_ran=1; run stream.sh; }
	printf 'live\nexited\n' | cmp - "$tmp/$1.verdict" || { tail -5 "$tmp/$1.txt"; return 1; }
}
ok "stream prints each command's events while it runs, and SIGINT ends it" -- stream splice
ok "stream --nosplice prints each command's events while it runs, and SIGINT ends it" -- stream nosplice
tap_done
