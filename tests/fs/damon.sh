#!/usr/bin/env bash
# DAMON's debugfs files for real: uksd mounts the tree with FUSE, and the
# 5.15 documentation's debugfs usage runs against a real process with echo
# and cat (attrs, target_ids, monitor_on, the damon:damon_aggregated event
# in the trace of uksd's instance), then the errnos a shell sees (EBUSY
# while on, EPERM for off when off, EINVAL for bad input), contexts made
# and removed, and monitoring that stops by itself when the target exits.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "DAMON debugfs over FUSE"

ok "uksd --daemon serves the tree" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
D=$mnt/sys/kernel/debug/damon T=$mnt/sys/kernel/tracing

# A real workload: dd writes its 1 MiB buffer over and over.
dd if=/dev/zero of=/dev/null bs=1M count=100000000 2>/dev/null &
work=$! extra_pids=$!

ok "debugfs/damon has 5.15's files, mode 0600" -- bash -c "
	[ \"\$(ls '$mnt/sys/kernel/debug' | tr '\n' ' ')\" = 'damon tracing ' ] &&
	[ \"\$(ls '$D' | sort | tr '\n' ' ')\" = 'attrs kdamond_pid mk_contexts monitor_on rm_contexts schemes target_ids ' ] &&
	[ \"\$(stat -c %a '$D/attrs' '$D/monitor_on')\" = \"\$(printf '600\n600')\" ]"
ok "defaults: attrs, target_ids, kdamond_pid, monitor_on" -- bash -c "
	cd '$D' && [ \"\$(cat attrs)\" = '5000 100000 60000000 10 1000' ] &&
	[ \"\$(cat target_ids)\" = '' ] && [ \"\$(cat kdamond_pid)\" = none ] &&
	[ \"\$(cat monitor_on)\" = off ]"

# The documentation's sequence (admin-guide/mm/damon/usage.rst of 5.15).
ok "echo attrs; echo \$pid > target_ids" -- bash -c "
	cd '$D' && echo 5000 100000 1000000 10 1000 > attrs &&
	[ \"\$(cat attrs)\" = '5000 100000 1000000 10 1000' ] &&
	echo $work > target_ids && [ \"\$(cat target_ids)\" = $work ]"
ok "enable damon_aggregated; echo on > monitor_on" -- bash -c "
	echo > '$T/trace' && echo 1 > '$T/events/damon/damon_aggregated/enable' &&
	cd '$D' && echo on > monitor_on && [ \"\$(cat monitor_on)\" = on ] &&
	k=\$(cat kdamond_pid) && [ \"\$k\" -gt 0 ] && [ -e /proc/$(cat "$pidf")/task/\$k ]"
sleep 1.5
ok "cat trace shows damon_aggregated lines for that pid" -- bash -c "
	out=\$(grep ' damon_aggregated: ' '$T/trace') || exit 1
	printf '%s\n' \"\$out\" | head -3
	printf '%s\n' \"\$out\" | grep -Eq '^ *kdamond\.0-[0-9]+ +\[[0-9]+\] .* damon_aggregated: target_id=$work nr_regions=[0-9]+ [0-9]+-[0-9]+: [0-9]+\$' &&
	[ \"\$(printf '%s\n' \"\$out\" | grep -vc 'target_id=$work ')\" = 0 ] &&
	[ \"\$(printf '%s\n' \"\$out\" | wc -l)\" -ge 10 ]"
ok "while on: EBUSY for on, attrs, target_ids, mk_contexts; EINVAL first for bad input" -- bash -c "
	cd '$D' && e=\$( { echo on > monitor_on; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	e=\$( { echo 1 2 3 4 5 > attrs; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	e=\$( { echo 1 2 3 4 > attrs; } 2>&1) ; [[ \$e == *'Invalid argument'* ]] &&
	e=\$( { echo $$ > target_ids; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	e=\$( { echo ctx1 > mk_contexts; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	[ \"\$(cat target_ids)\" = $work ]"
ok "echo off > monitor_on; the targets are gone; off again is EPERM" -- bash -c "
	cd '$D' && echo off > monitor_on && [ \"\$(cat monitor_on)\" = off ] &&
	[ \"\$(cat kdamond_pid)\" = none ] && [ \"\$(cat target_ids)\" = '' ] &&
	e=\$( { echo off > monitor_on; } 2>&1) ; [[ \$e == *'Operation not permitted'* ]]"
ok "bad input: EINVAL (attrs, a pid that does not exist, monitor_on words)" -- bash -c "
	cd '$D' && ! echo 1 2 3 5 4 > attrs 2>/dev/null && ! echo 1 2 > attrs 2>/dev/null &&
	! echo 1073741823 > target_ids 2>/dev/null && ! echo start > monitor_on 2>/dev/null &&
	echo '$work abc 1' > target_ids && [ \"\$(cat target_ids)\" = $work ] &&
	echo abc > target_ids && [ \"\$(cat target_ids)\" = '' ]"
ok "mk_contexts / rm_contexts: a directory with its own files; EEXIST, ENOENT" -- bash -c "
	cd '$D' && echo ctx1 > mk_contexts && [ \"\$(ls ctx1 | sort | tr '\n' ' ')\" = 'attrs kdamond_pid schemes target_ids ' ] &&
	[ \"\$(cat ctx1/attrs)\" = '5000 100000 60000000 10 1000' ] &&
	e=\$( { echo ctx1 > mk_contexts; } 2>&1) ; [[ \$e == *'File exists'* ]] &&
	e=\$( { echo nosuch > rm_contexts; } 2>&1) ; [[ \$e == *'No such file'* ]] &&
	echo ctx1 > rm_contexts && [ ! -e ctx1 ]"
ok "nonseekable attrs (ESPIPE), EIO from a removed context's open file, dd bs=3 of kdamond_pid" -- bash -c "
	cd '$D' && python3 -c '
import errno, os
fd = os.open(\"attrs\", os.O_RDONLY)
for f in (lambda: os.lseek(fd, 0, 0), lambda: os.pread(fd, 8, 0)):
    try:
        f(); raise SystemExit(\"seekable\")
    except OSError as e:
        assert e.errno == errno.ESPIPE, e
' && echo c3 > mk_contexts && exec 7>c3/attrs && echo c3 > rm_contexts && echo c3 > mk_contexts &&
	e=\$( { echo 11 12 13 14 15 >&7; } 2>&1) ; [[ \$e == *'Input/output error'* ]] &&
	[ \"\$(cat c3/attrs)\" = '5000 100000 60000000 10 1000' ] && echo c3 > rm_contexts &&
	[ \"\$(dd if=kdamond_pid bs=3 2>/dev/null)\" = no ]"
ok "pwrite() past 0 of monitor_on, mk_contexts, rm_contexts is EINVAL and does nothing" -- bash -c "
	cd '$D' && python3 -c '
import errno, os
for name, word in ((\"monitor_on\", b\"off\"), (\"mk_contexts\", b\"y\"), (\"rm_contexts\", b\"y\")):
    fd = os.open(name, os.O_WRONLY)
    try:
        os.pwrite(fd, word, 1); raise SystemExit(name + \": written past 0\")
    except OSError as e:
        assert e.errno == errno.EINVAL, (name, e)
    os.close(fd)
' && [ ! -e y ] && [ \"\$(cat monitor_on)\" = off ]"
ok "monitoring stops by itself when every target exits" -- bash -c "
	cd '$D' && echo $work > target_ids && echo on > monitor_on && [ \"\$(cat monitor_on)\" = on ] &&
	kill $work && for i in \$(seq 50); do [ \"\$(cat monitor_on)\" = off ] && break; sleep 0.1; done
	[ \"\$(cat monitor_on)\" = off ] && [ \"\$(cat target_ids)\" = '' ] && [ \"\$(cat kdamond_pid)\" = none ]"
wait "$work" 2>/dev/null
work=
echo 0 > "$T/events/damon/damon_aggregated/enable" 2>/dev/null
ok "schemes (6.12's format): usage.rst's example reads back with its stats; garbage clears; bad action EINVAL" -- bash -c "
	cd '$D' && echo '4096 8192  0 5    10 20    2 10 1073741824 1000 0 0 100 1 5000000 600 500 300' > schemes &&
	[ \"\$(cat schemes)\" = '4096 8192 0 5 10 20 2 10 1073741824 1000 0 0 100 1 5000000 600 500 300 0 0 0 0 0' ] &&
	e=\$( { echo 0 1 0 1 0 1 7 0 0 0 0 0 0 0 0 0 0 0 > schemes; } 2>&1) ; [[ \$e == *'Invalid argument'* ]] &&
	[ -n \"\$(cat schemes)\" ] && echo garbage > schemes && [ -z \"\$(cat schemes)\" ]"

tap_done
