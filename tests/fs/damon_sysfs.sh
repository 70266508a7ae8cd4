#!/usr/bin/env bash
# DAMON's sysfs files (6.12's kernel/mm/damon/admin) for real: uksd mounts
# the tree with FUSE, and the 6.12 documentation's sysfs usage runs
# against a real process with echo and cat: nr_kdamonds, nr_contexts,
# operations, nr_targets, pid_target, state on; pid is a monitor thread of
# uksd; damon:damon_aggregated lines for that pid appear in the trace;
# commit of new intervals while it runs (read back with
# update_tuned_intervals, 6.15) and the events keep coming; commit of
# another pid; off; fvaddr
# monitors exactly the region written.  Then
# garbage into every writable file: each write fails with the kernel's
# errno (EINVAL, ERANGE), the value stays, and uksd lives on.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "DAMON sysfs over FUSE"

ok "uksd --daemon serves the tree" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
A=$mnt/sys/kernel/mm/damon/admin T=$mnt/sys/kernel/tracing
K=$A/kdamonds/0 C=$A/kdamonds/0/contexts/0
upid=$(cat "$pidf" 2>/dev/null || echo 0)

# A real workload: dd writes its 1 MiB buffer over and over.
dd if=/dev/zero of=/dev/null bs=1M count=100000000 2>/dev/null &
work=$! extra_pids=$!

ok "sys/kernel/mm/damon/admin has kdamonds/nr_kdamonds (0600), 0 kdamonds" -- bash -c "
	[ \"\$(ls '$mnt/sys/kernel/mm/damon')\" = admin ] && [ \"\$(ls '$A')\" = kdamonds ] &&
	[ \"\$(ls '$A/kdamonds')\" = nr_kdamonds ] && [ \"\$(cat '$A/kdamonds/nr_kdamonds')\" = 0 ] &&
	[ \"\$(stat -c %a '$A/kdamonds/nr_kdamonds')\" = 600 ]"

# The documentation's sequence (admin-guide/mm/damon/usage.rst of 6.12).
ok "nr_kdamonds 1, nr_contexts 1, operations vaddr, nr_targets 1, pid_target" -- bash -c "
	cd '$A' && echo 1 > kdamonds/nr_kdamonds && echo 1 > kdamonds/0/contexts/nr_contexts &&
	echo vaddr > kdamonds/0/contexts/0/operations &&
	echo 1 > kdamonds/0/contexts/0/targets/nr_targets &&
	echo $work > kdamonds/0/contexts/0/targets/0/pid_target &&
	[ \"\$(cat kdamonds/0/contexts/0/avail_operations | tr '\n' ' ')\" = 'vaddr fvaddr ' ] &&
	[ \"\$(cat kdamonds/0/contexts/0/targets/0/pid_target)\" = $work ] &&
	[ \"\$(cat kdamonds/0/state)\" = off ] && [ \"\$(cat kdamonds/0/pid)\" = -1 ] &&
	[ \"\$(stat -c %a kdamonds/0/pid kdamonds/0/state | tr '\n' ' ')\" = '400 600 ' ]"
ok "update_us 1 s; enable damon_aggregated; echo on > state; pid is uksd's monitor thread" -- bash -c "
	echo 1000000 > '$C/monitoring_attrs/intervals/update_us' &&
	echo > '$T/trace' && echo 1 > '$T/events/damon/damon_aggregated/enable' &&
	echo on > '$K/state' && [ \"\$(cat '$K/state')\" = on ] &&
	k=\$(cat '$K/pid') && [ \"\$k\" -gt 0 ] && [ -e /proc/$upid/task/\$k ] &&
	grep -q '^kdamond' /proc/$upid/task/\$k/comm"
sleep 1.5
ok "cat trace shows damon_aggregated lines for that pid" -- bash -c "
	out=\$(grep ' damon_aggregated: ' '$T/trace') || exit 1
	printf '%s\n' \"\$out\" | head -2
	printf '%s\n' \"\$out\" | grep -Eq ' damon_aggregated: target_id=$work nr_regions=[0-9]+ [0-9]+-[0-9]+: [0-9]+\$' &&
	[ \"\$(printf '%s\n' \"\$out\" | grep -vc 'target_id=$work ')\" = 0 ]"
ok "while on: EBUSY for on and nr_kdamonds; commit_schemes words are no-ops" -- bash -c "
	cd '$K' && e=\$( { echo on > state; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	e=\$( { echo 1 > ../nr_kdamonds; } 2>&1) ; [[ \$e == *'Device or resource busy'* ]] &&
	echo update_schemes_stats > state && echo update_schemes_tried_regions > state &&
	echo clear_schemes_tried_regions > state && echo update_schemes_tried_bytes > state"
ok "commit of new intervals while it runs: update_tuned_intervals reads them back, same thread" -- bash -c "
	I='$C/monitoring_attrs/intervals' k=\$(cat '$K/pid') &&
	echo 10000 > \$I/sample_us && echo 200000 > \$I/aggr_us && echo commit > '$K/state' &&
	echo 1 > \$I/sample_us && echo 2 > \$I/aggr_us &&
	echo update_tuned_intervals > '$K/state' &&
	[ \"\$(cat \$I/sample_us) \$(cat \$I/aggr_us)\" = '10000 200000' ] &&
	[ \"\$(cat '$K/pid')\" = \"\$k\" ] && [ \"\$(cat '$K/state')\" = on ]"
ok "after the commit damon_aggregated keeps coming for that pid" -- bash -c "
	echo > '$T/trace' && sleep 1 &&
	[ \"\$(grep -c ' damon_aggregated: target_id=$work ' '$T/trace')\" -ge 1 ]"
# A second workload: commit moves the target to it while monitoring goes on.
dd if=/dev/zero of=/dev/null bs=1M count=100000000 2>/dev/null &
work2=$! extra_pids="$work $!"
ok "commit of another pid_target: from then on the events name the new pid only" -- bash -c "
	k=\$(cat '$K/pid') && echo $work2 > '$C/targets/0/pid_target' && echo commit > '$K/state' &&
	echo > '$T/trace' && sleep 1 && [ \"\$(cat '$K/pid')\" = \"\$k\" ] &&
	[ \"\$(grep -c ' damon_aggregated: target_id=$work2 ' '$T/trace')\" -ge 1 ] &&
	[ \"\$(grep -c ' damon_aggregated: target_id=$work ' '$T/trace')\" = 0 ] &&
	echo $work > '$C/targets/0/pid_target' && echo commit > '$K/state'"
ok "a bad commit is EINVAL and changes nothing" -- bash -c "
	I='$C/monitoring_attrs/intervals' &&
	echo 300000 > \$I/sample_us && e=\$( { echo commit > '$K/state'; } 2>&1) ;
	[[ \$e == *'Invalid argument'* ]] && echo update_tuned_intervals > '$K/state' &&
	[ \"\$(cat \$I/sample_us)\" = 10000 ]"
ok "echo off > state; pid -1; off again is EPERM, commit EINVAL" -- bash -c "
	cd '$K' && echo off > state && [ \"\$(cat state)\" = off ] && [ \"\$(cat pid)\" = -1 ] &&
	e=\$( { echo off > state; } 2>&1) ; [[ \$e == *'Operation not permitted'* ]] &&
	e=\$( { echo commit > state; } 2>&1) ; [[ \$e == *'Invalid argument'* ]]"
ok "fvaddr: the regions written are what is monitored (every event inside them)" -- bash -c "
	cd '$C' && echo fvaddr > operations && echo 1 > targets/0/regions/nr_regions &&
	echo 0x10000000 > targets/0/regions/0/start && echo 0x10400000 > targets/0/regions/0/end &&
	echo 1000 > monitoring_attrs/intervals/sample_us && echo 10000 > monitoring_attrs/intervals/aggr_us &&
	echo 10000 > monitoring_attrs/intervals/update_us &&
	echo > '$T/trace' && echo on > '$K/state' && sleep 1 && echo off > '$K/state' &&
	grep ' damon_aggregated: target_id=$work ' '$T/trace' > '$tmp/fv' &&
	[ \"\$(wc -l < '$tmp/fv')\" -ge 10 ] &&
	! sed -E 's/.* ([0-9]+)-([0-9]+): [0-9]+\$/\\1 \\2/' '$tmp/fv' |
		awk '\$1 < 268435456 || \$2 > 272629760 || \$1 >= \$2 { bad = 1 } END { exit !bad }' &&
	echo vaddr > operations && echo 0 > targets/0/regions/nr_regions"
echo 0 > "$T/events/damon/damon_aggregated/enable" 2>/dev/null

# Garbage into every writable file: the kernel's errno, the value kept.
ok "garbage into every writable file: EINVAL or ERANGE, the value stays, uksd lives" -- bash -c "
	cd '$A/kdamonds' && echo 1 > 0/contexts/0/targets/0/regions/nr_regions || exit 1
	fails=0 n=0
	for f in \$(find . -type f -perm -u=w | sort); do
		before=\$(cat \"\$f\") n=\$((n + 1))
		for bad in abc -1x '1 2' 0x '' 99999999999999999999999 \$'\\x01' on3 'vaddr vaddr'; do
			[ -z \"\$bad\" ] && continue
			e=\$( { printf '%s' \"\$bad\" > \"\$f\"; } 2>&1)
			if [[ \$e != *'Invalid argument'* && \$e != *'Numerical result out of range'* ]]; then
				echo \"\$f <- '\$bad': \$e\"; fails=\$((fails + 1))
			fi
		done
		[ \"\$(cat \"\$f\")\" = \"\$before\" ] || { echo \"\$f changed\"; fails=\$((fails + 1)); }
	done
	echo \"\$n files\"
	kill -0 $upid && [ \$fails = 0 ] && [ \$n = 19 ]"
ok "uksd still serves: cat nr_kdamonds, state" -- bash -c "
	[ \"\$(cat '$A/kdamonds/nr_kdamonds')\" = 1 ] && [ \"\$(cat '$K/state')\" = off ]"

kill "$work" "$work2" 2>/dev/null
wait "$work" "$work2" 2>/dev/null
work= work2=

tap_done
