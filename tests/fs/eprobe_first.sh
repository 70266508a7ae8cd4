#!/usr/bin/env bash
# An eprobe that reads the traced program's memory is in force once the
# write that enabled it has returned, as in the kernel: the program
# enables it, makes a chdir() at once and wipes the path right after the
# call; every round's event must show the path (eprobe_first.c).  Before
# the keeper had the new policy when the write returned, it let that first
# call go on before uksd read the path, and the event showed the wiped
# buffer.  Through uksd with --every-syscall, and with the eprobe set up
# before the start (uksd's filter; uks trace --embedded).
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "eprobes in force when their enable returns"
ptrace_ok=1
[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -le 1 ] || ptrace_ok=0
if [ $ptrace_ok = 0 ] || ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "eprobes in force when their enable returns" "ptrace is not permitted here"
	tap_done; exit
fi
${CC:-cc} -O2 -o "$tmp/eprobe_first" "$(dirname "$0")/eprobe_first.c" || exit 1
rounds=20 base=$tmp/dirs
for i in $(seq 0 $((rounds - 1))); do mkdir -p "$base/r$i"; done
probe='e:first_chdir syscalls/sys_enter_chdir file=+0($filename):ustring'

# The eprobe's events, one "file=..." per line, against the rounds' paths.
expect() { for i in $(seq 0 $((rounds - 1))); do echo "file=\"$base/r$i\""; done; }
check() {	# check TRACE_FILE
	local got
	got=$(grep -o 'first_chdir: (syscalls.sys_enter_chdir) file=.*' "$1" | sed 's/.*) //')
	[ "$got" = "$(expect)" ] || { echo "got:"; echo "$got"; return 1; }
}

ok "uksd serves" -- "$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
ok "the eprobe is defined" -- bash -c "echo '$probe' >> '$T/dynamic_events'"
ok "enabled by the traced program: each first call after the enable is read stopped" -- bash -c "
	'$uks' -S '$sock' trace --every-syscall -- '$tmp/eprobe_first' \
		'$T/events/eprobes/first_chdir/enable' '$base' $rounds && $(declare -f expect check)
	base='$base' rounds=$rounds check '$T/trace'"
ok "enabled before the start: uksd's filter stops at chdir" -- bash -c "
	echo > '$T/trace' && echo 1 > '$T/events/eprobes/first_chdir/enable' &&
	'$uks' -S '$sock' trace -- '$tmp/eprobe_first' - '$base' $rounds &&
	echo 0 > '$T/events/eprobes/first_chdir/enable' && $(declare -f expect check)
	base='$base' rounds=$rounds check '$T/trace'"
ok "uks trace --embedded -E: the same" -- bash -c "
	'$uks' trace --embedded -o '$tmp/emb' -E '$probe' -e eprobes/first_chdir -- \
		'$tmp/eprobe_first' - '$base' $rounds && $(declare -f expect check)
	base='$base' rounds=$rounds check '$tmp/emb'"
tap_done
