#!/usr/bin/env bash
# The eprobe example of the kernel's documentation, against uksfs with only
# the root changed, on a real `ls /` traced with `uks trace`: through the
# FUSE mount, through the socket (uks write/cat), and embedded (no daemon).
# Exit codes and signals of the traced command are its own.
set -u
. "$(dirname "$0")/uksd.bash"
ptrace_ok=1
[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -le 1 ] || ptrace_ok=0
if [ $ptrace_ok = 0 ] || ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "uks trace" "ptrace is not permitted here"
	tap_done; exit
fi
EPROBE='e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring'

ok "embedded: the eprobe reads the paths a real ls opens" -- bash -c "
	'$uks' trace --embedded -E '$EPROBE' -- ls / > '$tmp/out' &&
	grep -q 'eopen: (syscalls.sys_enter_openat) file=\"/etc/ld.so.cache\"' '$tmp/out' &&
	grep -q '^              ls-[0-9]* *\[[0-9]*\] \.\.\.\.\. ' '$tmp/out' && grep -qx bin '$tmp/out'"
ok "embedded: exit status and death by signal are the command's" -- bash -c "
	'$uks' trace --embedded -e syscalls:sys_enter_openat -o /dev/null -- sh -c 'exit 7'; [ \$? = 7 ] &&
	'$uks' trace --embedded -e syscalls:sys_enter_openat -o /dev/null -- sh -c 'kill -TERM \$\$'; [ \$? = 143 ]"
ok "embedded: a command not found exits 127, one not executable 126, as in a shell" -- bash -c "
	printf '#!/bin/sh\\n' > '$tmp/noexec' && chmod 644 '$tmp/noexec' && mkdir -p '$tmp/bin' &&
	cp '$tmp/noexec' '$tmp/bin/uks-noexec' &&
	'$uks' trace --embedded -o /dev/null -- '$tmp/nonexistent' 2> '$tmp/err'; [ \$? = 127 ] &&
	grep -q 'No such file' '$tmp/err' &&
	'$uks' trace --embedded -o /dev/null -- uks-no-such-command 2> '$tmp/err'; [ \$? = 127 ] &&
	grep -q 'command not found' '$tmp/err' &&
	'$uks' trace --embedded -o /dev/null -- '$tmp/noexec' 2> '$tmp/err'; [ \$? = 126 ] &&
	grep -q 'Permission denied' '$tmp/err' &&
	PATH='$tmp/bin' '$uks' trace --embedded -o /dev/null -- uks-noexec; [ \$? = 126 ] &&
	'$uks' trace --embedded -o /dev/null -- '$tmp'; [ \$? = 126 ]"

need_fuse "the documentation's sequence through FUSE"
ok "uksd serves" -- "$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
ok "the documentation's sequence through FUSE, uks trace -- ls /" -- bash -c "
	cd '$mnt/sys/kernel/tracing' &&
	echo '$EPROBE' >> dynamic_events &&
	echo 1 > events/esys/eopen/enable &&
	[ \"\$(cat events/syscalls/sys_enter_openat/enable)\" = '0*' ] &&
	cd / && '$uks' -S '$sock' trace -- ls / > '$tmp/ls' && grep -qx bin '$tmp/ls' &&
	cd '$mnt/sys/kernel/tracing' && cat trace > '$tmp/trace' &&
	grep -q '^              ls-[0-9]* *\[[0-9]*\] \.\.\.\.\. *[0-9]*\.[0-9]*: eopen: (syscalls.sys_enter_openat) file=\"/etc/ld.so.cache\"' '$tmp/trace' &&
	grep -q 'file=\"/lib/x86_64-linux-gnu/libc.so.6\"' '$tmp/trace'"
ok "the same through the socket (uks write / uks cat)" -- bash -c "
	'$uks' -S '$sock' write sys/kernel/tracing/events/esys/eopen/enable 0 &&
	'$uks' -S '$sock' write sys/kernel/tracing/dynamic_events '' &&
	'$uks' -S '$sock' write -a sys/kernel/tracing/dynamic_events '$EPROBE' &&
	'$uks' -S '$sock' write sys/kernel/tracing/events/esys/eopen/enable 1 &&
	'$uks' -S '$sock' trace -- cat /etc/hostname > /dev/null &&
	'$uks' -S '$sock' cat sys/kernel/tracing/trace | grep -q 'cat-[0-9]* .*eopen: (syscalls.sys_enter_openat) file=\"/etc/hostname\"'"
ok "with uksd: the command's exit status comes through" -- bash -c "
	'$uks' -S '$sock' trace -- sh -c 'exit 5'; [ \$? = 5 ] &&
	'$uks' -S '$sock' trace -- '$tmp/nonexistent'; [ \$? = 127 ] &&
	'$uks' -S '$sock' trace -- '$tmp/noexec'; [ \$? = 126 ]"
ok "with uksd: sys_enter/sys_exit events of a traced command" -- bash -c "
	'$uks' -S '$sock' write sys/kernel/tracing/trace '' &&
	'$uks' -S '$sock' write -a sys/kernel/tracing/set_event syscalls:sys_exit_openat &&
	'$uks' -S '$sock' trace -- cat /etc/hostname > /dev/null &&
	'$uks' -S '$sock' cat sys/kernel/tracing/trace | grep -q 'cat-[0-9]* .*sys_openat -> 0x[0-9a-f]*\$'"
ok "with uksd: only enabled calls stop (200000 untraced getpid in well under stepping time)" -- bash -c "
	printf '#include <unistd.h>\n#include <sys/syscall.h>\nint main(void){for(int i=0;i<200000;i++)syscall(SYS_getpid);return 0;}\n' > '$tmp/gp.c' &&
	\${CC:-cc} -O2 -o '$tmp/gp' '$tmp/gp.c' && s=\$(date +%s%N) &&
	'$uks' -S '$sock' trace -- '$tmp/gp' && e=\$(date +%s%N) && echo \"\$(( (e - s) / 1000000 )) ms\" &&
	[ \$(( (e - s) / 1000000 )) -lt 8000 ]"
ok "a tracee killed in the middle of a traced system call: status 137, uksd unharmed" -- bash -c "
	'$uks' -S '$sock' write -a sys/kernel/tracing/set_event syscalls:sys_enter_clock_nanosleep &&
	nap=31.\$\$	# this shell's own sleep, not another test's
	( '$uks' -S '$sock' trace -- sleep \$nap; echo \$? > '$tmp/rc' ) &
	for i in \$(seq 50); do p=\$(pgrep -x -f \"sleep \$nap\"); [ -n \"\$p\" ] && break; sleep 0.1; done
	sleep 0.3; kill -KILL \$p; wait
	[ \"\$(cat '$tmp/rc')\" = 137 ] && kill -0 \$(cat '$pidf') &&
	'$uks' -S '$sock' trace -- true && '$uks' -S '$sock' cat sys/kernel/tracing/trace | grep -q 'sleep-[0-9]* .*sys_clock_nanosleep('"
KOPEN='e:ktest/kopen syscalls/sys_enter_openat file=+0($filename):ustring'
ok "with uksd: what -e/-E enabled is disabled at the end; an identical run again succeeds" -- bash -c "
	'$uks' -S '$sock' write sys/kernel/tracing/trace '' &&
	for i in 1 2; do
		'$uks' -S '$sock' trace -e syscalls:sys_enter_close -E '$KOPEN' -- cat /etc/hostname > /dev/null || exit 1
	done
	[ \"\$('$uks' -S '$sock' cat sys/kernel/tracing/events/ktest/kopen/enable)\" = 0 ] &&
	[ \"\$('$uks' -S '$sock' cat sys/kernel/tracing/events/syscalls/sys_enter_close/enable)\" = 0 ] &&
	! '$uks' -S '$sock' cat sys/kernel/tracing/set_event | grep -qx -e ktest:kopen -e syscalls:sys_enter_close &&
	'$uks' -S '$sock' cat sys/kernel/tracing/trace > '$tmp/kt' &&
	[ \$(grep -c 'kopen: (syscalls.sys_enter_openat) file=\"/etc/hostname\"' '$tmp/kt') = 2 ] &&
	grep -q 'cat-[0-9]* .*sys_close(' '$tmp/kt'"
ok "with uksd: --keep leaves them enabled" -- bash -c "
	'$uks' -S '$sock' trace --keep -e syscalls:sys_enter_close -E '$KOPEN' -- true &&
	[ \"\$('$uks' -S '$sock' cat sys/kernel/tracing/events/ktest/kopen/enable)\" = 1 ] &&
	[ \"\$('$uks' -S '$sock' cat sys/kernel/tracing/events/syscalls/sys_enter_close/enable)\" = 1 ] &&
	'$uks' -S '$sock' write -a sys/kernel/tracing/set_event '!syscalls:sys_enter_close' '!ktest:kopen'"
ok "with uksd: uks trace says what it traces and where to read the trace" -- bash -c "
	'$uks' -S '$sock' trace -- cat /etc/hostname 2> '$tmp/where' > /dev/null; cat '$tmp/where'
	grep -Eqx 'uks trace: tracing [0-9]+ \(cat\) in uksd at $sock; read $mnt/sys/kernel/tracing/trace' '$tmp/where'"
ok "attach to a running process with -p, ^C detaches and it runs on" -- bash -c "
	sh -c 'while :; do cat /etc/hostname >/dev/null; sleep 0.05; done' & p=\$!
	'$uks' -S '$sock' trace -p \$p & t=\$!
	sleep 1; kill -INT \$t; wait \$t; sleep 0.3
	kill -0 \$p && grep -q 'TracerPid:	0' /proc/\$p/status; rc=\$?; kill \$p; exit \$rc"
tap_done
