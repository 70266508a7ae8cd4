#!/usr/bin/env bash
# Every uks command: --help prints its usage and exits 0; bad usage exits 2
# with a "Usage:" line on stderr (uks(1), EXIT STATUS).  None of these
# needs a uksd, a device or root: each fails before doing anything.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
uks=$O/uks
[ -x "$uks" ] || { echo "1..0 # SKIP $uks not built"; exit 77; }
export UKS_SOCKET=/nonexistent/uks.sock	# never reach a real uksd

helps=(cat write ls trace daemon damon "damon record" "damon report" vduse-blk
       "vduse-blk attach" "vduse-blk detach" "vduse-blk resize" "vduse-blk stats"
       abi-check "abi-check denywrite" exec32 taskset mount umount version cpu cpulist)
help_ok() {	# help_ok WORDS...
	local out
	out=$(timeout 20 "$uks" "$@" --help 2>&1 </dev/null) || { echo "exit $?: $out"; return 1; }
	grep -q '^Usage: uks\|^Usage: uksd' <<<"$out" || { echo "no usage: $out"; return 1; }
}
for c in "${helps[@]}"; do
	# shellcheck disable=SC2086
	ok "uks $c --help: exit 0 and a usage" -- help_ok $c
done
ok "uks --help: exit 0" -- help_ok

# WORDS that are a usage error; "" is uks with no command at all.
bad=("" "--bogus" "bogus" "cat" "cat --bogus" "write" "write x" "write --bogus"
     "ls a b" "ls --bogus" "trace --bogus" "damon" "damon bogus" "damon record"
     "damon record --bogus" "damon report" "damon report bogus" "vduse-blk"
     "vduse-blk --bogus" "vduse-blk attach" "vduse-blk detach a b" "vduse-blk stats"
     "vduse-blk resize a" "vduse-blk resize a notasize" "abi-check" "abi-check bogus"
     "abi-check denywrite --bogus" "exec32" "exec32 --bogus" "taskset" "taskset --bogus"
     "mount" "mount --bogus --once" "umount" "umount a b" "version x" "cpu x" "cpulist"
     "cpulist 0-3 16 x" "cpulist 0-3 x" "cpulist --bogus")
usage_err() {	# usage_err WORDS...
	local err rc
	err=$(timeout 20 "$uks" "$@" 2>&1 >/dev/null </dev/null)
	rc=$?
	[ $rc = 2 ] || { echo "exit $rc, want 2: $err"; return 1; }
	grep -q '^Usage: uks' <<<"$err" || { echo "no usage line: $err"; return 1; }
}
for c in "${bad[@]}"; do
	# shellcheck disable=SC2086
	ok "uks $c: exit 2 with a usage line" -- usage_err $c
done

# The cases the tester met: cpulist's help, and write with no text (was EINVAL).
ok "uks cpulist --help describes LIST and NR" -- \
	bash -c "'$uks' cpulist --help | grep -q 'Usage: uks cpulist LIST \[NR\]'"
ok "uks write PATH: 'what text?', exit 2, no request sent" -- \
	bash -c "'$uks' write sys/kernel/tracing/trace 2>&1 | grep -q 'what text?'"
ok "uks cpulist still works: 0-15:2/4 of 16" -- \
	bash -c "[ \"\$('$uks' cpulist 0-15:2/4 16)\" = '0-1,4-5,8-9,12-13' ]"
ok "uks cpulist: the kernel's error is exit 1" -- \
	bash -c "'$uks' cpulist 5-3 16 2>/dev/null; [ \$? = 1 ]"
tap_done
