#!/bin/sh
# `uks abi-check denywrite` on the guest's kernel: every
# PASS/FAIL/SKIP line it prints becomes one test point.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
. /tests/tap.ash
if ! $UKS abi-check --help >/tmp/abi-help.out 2>&1 && ! $UKS abi-check denywrite --help >>/tmp/abi-help.out 2>&1; then
	echo "1..0 # SKIP 'uks abi-check denywrite' is not in this build ($(head -1 /tmp/abi-help.out))"
	exit 77
fi
mkdir -p /tmp/abi && cd /tmp/abi
$UKS abi-check denywrite >/tmp/abi.out 2>&1
rc=$?
echo "# uks abi-check denywrite on $(uname -r): exit status $rc"
n=0
while IFS= read -r line; do
	# accepted forms: "PASS name ...", "FAIL name: ...", "SKIP name: why"
	# (also with a leading "name:" and the verdict after it)
	case $line in
	*PASS*|*FAIL*|*SKIP*) ;;
	*) echo "# $line"; continue ;;
	esac
	n=$((n + 1))
	tap_n=$((tap_n + 1))
	case $line in
	"SKIP "*) rest=${line#SKIP }; echo "ok $tap_n denywrite: ${rest%%:*} # SKIP ${rest#*: }" ;;
	*FAIL*) echo "not ok $tap_n denywrite: $line"; tap_failed=$((tap_failed + 1)) ;;
	*SKIP*) echo "ok $tap_n denywrite: ${line%%SKIP*} # SKIP ${line#*SKIP}" ;;
	*) echo "ok $tap_n denywrite: $line" ;;
	esac
done </tmp/abi.out
ok "abi-check printed at least one result" -- test $n -gt 0
ok "abi-check ran to completion (exit status 0 or 1, not a crash: $rc)" -- test $rc -le 1
tap_done
