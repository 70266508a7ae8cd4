#!/usr/bin/env bash
# uks exec32 / uks taskset on real tasks of this machine, with the
# 32-bit-capable set given by --capable (x86 has no aarch32_el0): the
# execve steps (1: capable subset + saved mask, 2: a real cpuset made here,
# walked towards the root), the saved mask over fork and exec, restore on
# a 64-bit exec, taskset on a 32-bit task and the invalidation, deadline
# tasks, a real 32-bit ELF for --auto.  Needs CPUs 0 and 1.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
uks=$(realpath "$O/uks" 2>/dev/null)
echo "TAP version 13"
[ -x "$uks" ] || { echo "1..0 # SKIP $O/uks not built"; exit 77; }
grep -qx '0-1' /sys/devices/system/cpu/online 2>/dev/null ||
	grep -q '^0-[1-9]' /sys/devices/system/cpu/online ||
	{ echo "1..0 # SKIP needs CPUs 0 and 1 online"; exit 77; }
[ ! -e /sys/devices/system/cpu/aarch32_el0 ] ||
	{ echo "1..0 # SKIP this machine has aarch32_el0: --capable would be ignored"; exit 77; }
tmp=$(mktemp -d /tmp/uks-exec32.XXXXXX)
export UKS_A32_STATE=$tmp/state UKS_A32_CONFIG=$tmp/none
unset UKS_A32 UKS_A32_SAVED
cgs=()
cleanup() {
	for ((i = ${#cgs[@]} - 1; i >= 0; i--)); do rmdir "${cgs[i]}" 2>/dev/null; done
	jobs -p | xargs -r kill 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
aff() { sed -n 's/^Cpus_allowed_list:\t//p' /proc/$1/status; }
A=$tmp/aff	# prints its own affinity, which is its parent's
printf '#!/bin/sh\nexec sed -n "s/^Cpus_allowed_list:\\t//p" /proc/self/status\n' >"$A"
chmod +x "$A"
export -f aff
taskset -pc 0-1 $$ >/dev/null 2>&1 || true
all=$(aff self)

ok "a 64-bit program (auto): affinity unchanged ($all)" -- bash -c "
	out=\$('$uks' exec32 -v --capable 1 -- sh -c '$A' 2>'$tmp/e'); [ \"\$out\" = '$all' ] &&
	grep -q 'sh is 64-bit: unchanged' '$tmp/e'"
ok "step 1: --force-32 restricts to the capable CPU and saves the old mask" -- bash -c "
	out=\$('$uks' exec32 --force-32 --capable 1 -- sh -c 'echo \$($A) \${UKS_A32_SAVED%@*} \$UKS_A32'); echo \"\$out\"
	[ \"\$out\" = '1 $all 1' ]"
ok "the saved mask is inherited over fork and kept over a 32-bit exec" -- bash -c "
	out=\$('$uks' exec32 --force-32 --capable 1 -- sh -c '( '$uks' exec32 --force-32 --capable 1 -- sh -c \"echo \\\$($A) \\\${UKS_A32_SAVED%@*}\" )'); echo \"\$out\"
	[ \"\$out\" = '1 $all' ]"
ok "a 64-bit exec restores the saved mask and drops it" -- bash -c "
	out=\$('$uks' exec32 --force-32 --capable 1 -- '$uks' exec32 --capable 1 -- sh -c 'echo \$($A) \${UKS_A32_SAVED:-none} \${UKS_A32:-64}'); echo \"\$out\"
	[ \"\$out\" = '$all none 64' ]"
ok "a config file gives the capable set ($UKS_A32_CONFIG)" -- bash -c "
	printf '# capable CPUs\n\n1\n' > '$tmp/cfg'
	out=\$(UKS_A32_CONFIG='$tmp/cfg' '$uks' exec32 --force-32 -- sh -c '$A'); [ \"\$out\" = 1 ]"
ok "no capable set: exit 1 with a message" -- bash -c "
	'$uks' exec32 --force-32 -- true 2>'$tmp/e'; [ \$? = 1 ] && grep -q 'no 32-bit-capable CPU set' '$tmp/e'"
ok "capable CPUs all offline (step 3 picks CPU 5 of 2): exit 1, sched_setaffinity refused" -- bash -c "
	'$uks' exec32 --force-32 --capable 5 -- true 2>'$tmp/e'; [ \$? = 1 ] && grep -q 'sched_setaffinity(5)' '$tmp/e'"
ok "usage: no program, bad CPU list, bad PID" -- bash -c "
	'$uks' exec32 --capable 1 2>/dev/null; [ \$? = 2 ] || exit 1
	'$uks' taskset --capable 1 0-x 1 2>/dev/null; [ \$? = 2 ] || exit 1
	'$uks' taskset --capable 1 0 12abc 2>/dev/null; [ \$? = 2 ]"

if ! command -v python3 >/dev/null; then
	skip "--auto on a real i386 ELF and scripts" "python3 (which writes the ELF) is not installed"
else
# --auto on a real 32-bit ELF: i386, exit(7) through int 0x80.
python3 - "$tmp/tiny32" <<'PY'
import struct, sys
code = bytes([0xb8, 1, 0, 0, 0, 0xbb, 7, 0, 0, 0, 0xcd, 0x80])
base, off = 0x08048000, 52 + 32
eh = b'\x7fELF\x01\x01\x01' + bytes(9) + struct.pack('<HHIIIIIHHHHHH', 2, 3, 1, base + off, 52, 0, 0, 52, 32, 1, 0, 0, 0)
ph = struct.pack('<IIIIIIII', 1, 0, base, base, off + len(code), off + len(code), 5, 0x1000)
open(sys.argv[1], 'wb').write(eh + ph + code)
PY
chmod +x "$tmp/tiny32"
"$tmp/tiny32" 2>/dev/null; ia32=$?
ok "--auto reads the ELF class: a real i386 program is 32-bit (step 1)" -- bash -c "
	'$uks' exec32 -v --capable 1 -- '$tmp/tiny32' 2>'$tmp/e'; rc=\$?; cat '$tmp/e'
	grep -q 'tiny32 is 32-bit: step1, affinity $all -> 1' '$tmp/e' && { [ $ia32 != 7 ] || [ \$rc = 7 ]; }"
ok "--auto on a script reads its interpreter's class (#! tiny32: 32-bit; #! /bin/sh: 64-bit)" -- bash -c "
	printf '#!$tmp/tiny32 -x\\n' > '$tmp/s32'; printf '#!/bin/sh\\ntrue\\n' > '$tmp/s64'; chmod +x '$tmp/s32' '$tmp/s64'
	'$uks' exec32 -v --capable 1 -- '$tmp/s32' 2>'$tmp/e'; grep -q 's32 is 32-bit' '$tmp/e' &&
	'$uks' exec32 -v --capable 1 -- '$tmp/s64' 2>'$tmp/e' && grep -q 's64 is 64-bit' '$tmp/e'"
[ $ia32 = 7 ] || echo "# this kernel cannot run i386 programs (exit $ia32): the decision was checked, not the run"

fi

# A real cpuset: parent P (CPUs 0-1) and child C (CPU 0, 64-bit-only here).
mkcg() {	# mkcg -> sets cgP cgC tasksfile, or returns 1
	local v1=/sys/fs/cgroup/cpuset v2
	if [ -w $v1/cpuset.cpus ]; then
		cgP=$v1/uks-exec32-$$ cgC=$cgP/c tasksfile=tasks
		mkdir "$cgP" && cgs+=("$cgP") || return 1
		cat $v1/cpuset.mems >"$cgP/cpuset.mems" && echo 0-1 >"$cgP/cpuset.cpus" || return 1
		mkdir "$cgC" && cgs+=("$cgC") || return 1
		cat $v1/cpuset.mems >"$cgC/cpuset.mems" && echo 0 >"$cgC/cpuset.cpus"
		return
	fi
	for v2 in /sys/fs/cgroup /sys/fs/cgroup/unified; do
		grep -qw cpuset $v2/cgroup.controllers 2>/dev/null || continue
		echo +cpuset >$v2/cgroup.subtree_control 2>/dev/null || continue
		cgP=$v2/uks-exec32-$$ cgC=$cgP/c tasksfile=cgroup.procs
		mkdir "$cgP" && cgs+=("$cgP") || return 1
		echo 0-1 >"$cgP/cpuset.cpus" && echo +cpuset >"$cgP/cgroup.subtree_control" || return 1
		mkdir "$cgC" && cgs+=("$cgC") || return 1
		echo 0 >"$cgC/cpuset.cpus"
		return
	done
	return 1
}
if mkcg 2>"$tmp/cg.err"; then
	echo "# cpuset: $cgP (CPUs 0-1) / c (CPU 0)"
	ok "a task in the child cpuset has CPU 0 only" -- bash -c "
		out=\$(sh -c 'echo \$\$ > $cgC/$tasksfile; $A'); [ \"\$out\" = 0 ]"
	ok "step 2: a 32-bit exec walks up to the parent cpuset and gets its capable CPU 1" -- bash -c "
		out=\$(sh -c 'echo \$\$ > $cgC/$tasksfile; exec '$uks' exec32 -v --force-32 --capable 1 -- sh -c \"echo \\\$($A) \\\${UKS_A32_SAVED:-none}; grep -E \\\"cpuset|^0::\\\" /proc/self/cgroup\"' 2>'$tmp/e'); echo \"\$out\"; cat '$tmp/e'
		echo \"\$out\" | head -1 | grep -qx '1 none' && grep -q 'step2, affinity 0 -> 1' '$tmp/e' &&
		grep -q 'moved into the cpuset 1 level' '$tmp/e' && echo \"\$out\" | grep -q ':/uks-exec32-$$\$'"
	ok "a cpuset with a capable CPU: step 1 within it" -- bash -c "
		out=\$(sh -c 'echo \$\$ > $cgP/$tasksfile; exec '$uks' exec32 --force-32 --capable 1 -- sh -c $A'); [ \"\$out\" = 1 ]"
	ok "taskset of a 64-bit task outside its cpuset: refused" -- bash -c "
		sh -c 'echo \$\$ > $cgC/$tasksfile; exec sleep 5' & p=\$!; sleep 0.2
		'$uks' taskset --capable 1 1 \$p 2>'$tmp/e'; rc=\$?; kill \$p; [ \$rc = 1 ]"
else
	skip "real cpuset tests" "cannot make a cpuset cgroup here: $(tr '\n' ' ' <"$tmp/cg.err")"
fi

# taskset on a running 32-bit task.
start32() {	# start32 CMD... -> pid of the 32-bit task once it is running
	"$uks" exec32 --force-32 --capable 1 -- "$@" &
	pid=$!
	for _ in $(seq 50); do
		tr '\0' '\n' </proc/$pid/environ 2>/dev/null | grep -qx UKS_A32=1 && return 0
		sleep 0.05
	done
	return 1
}
start32 sleep 30
ok "taskset of a 32-bit task keeps only the capable CPUs of 0-1" -- bash -c "
	'$uks' taskset --capable 1 0-1 $pid > '$tmp/o' && cat '$tmp/o' && [ \"\$(aff $pid)\" = 1 ] &&
	grep -q 'new affinity list: 1 (32-bit task' '$tmp/o'"
ok "taskset of a 32-bit task to 64-bit-only CPUs fails, affinity kept" -- bash -c "
	'$uks' taskset --capable 1 0 $pid 2>'$tmp/e'; [ \$? = 1 ] && [ \"\$(aff $pid)\" = 1 ]"
kill $pid 2>/dev/null
sleep 30 & p64=$!
ok "taskset of a 64-bit task applies the mask as asked" -- bash -c "
	'$uks' taskset --capable 1 0 $p64 >/dev/null && [ \"\$(aff $p64)\" = 0 ]"
kill $p64 2>/dev/null

mkfifo "$tmp/fifo" "$tmp/fifo2"
start32 sh -c "read x < $tmp/fifo; exec $uks exec32 --capable 1 -- sh -c '$A' > $tmp/out1"
p1=$pid
start32 sh -c "read x < $tmp/fifo2; exec $uks exec32 --capable 1 -- sh -c '$A' > $tmp/out2"
p2=$pid
"$uks" taskset --capable 1 1 $p1 >/dev/null
echo go >"$tmp/fifo"; echo go >"$tmp/fifo2"
wait $p1 $p2
ok "taskset invalidated the saved mask: the later 64-bit exec keeps affinity 1" -- bash -c "[ \"\$(cat '$tmp/out1')\" = 1 ]"
ok "without taskset the same 64-bit exec restores $all" -- bash -c "[ \"\$(cat '$tmp/out2')\" = '$all' ]"
ok "taskset -- PROG as a 32-bit task: capable CPUs only; the old saved mask dropped, the exec saves the new one" -- bash -c "
	out=\$('$uks' exec32 --force-32 --capable 1 -- '$uks' taskset --force-32 --capable 1 0-1 -- sh -c 'echo \$($A) \${UKS_A32_SAVED%@*}'); echo \"\$out\"
	[ \"\$out\" = '1 1' ]"

# SCHED_DEADLINE: a deadline task may not exec a 32-bit program while admission control is on.
rt=$(cat /proc/sys/kernel/sched_rt_runtime_us 2>/dev/null || echo ?)
if [ "$rt" != -1 ] && chrt -d --sched-runtime 100000 --sched-deadline 10000000 --sched-period 10000000 0 true 2>/dev/null; then
	ok "a SCHED_DEADLINE task's 32-bit exec fails with ENOEXEC (exit 126), admission control on ($rt)" -- bash -c "
		ASAN_OPTIONS=detect_leaks=0 chrt -d --sched-runtime 100000 --sched-deadline 10000000 --sched-period 10000000 0 '$uks' exec32 --force-32 --capable 1 -- true 2>'$tmp/e'
		rc=\$?; cat '$tmp/e'; [ \$rc = 126 ] && grep -q 'Exec format error' '$tmp/e'"
	# (a deadline task cannot fork: LeakSanitizer's exit check would fail)
	ok "a SCHED_DEADLINE task's 64-bit exec goes ahead" -- env ASAN_OPTIONS=detect_leaks=0 \
		chrt -d --sched-runtime 100000 --sched-deadline 10000000 --sched-period 10000000 0 "$uks" exec32 --capable 1 -- true
else
	skip "SCHED_DEADLINE exec" "cannot make a deadline task here (sched_rt_runtime_us=$rt)"
fi
tap_done
