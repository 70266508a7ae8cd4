#!/usr/bin/env bash
# The kernel's own ftrace selftests (ftracetest, Linux 6.12) against uksfs:
# 00basic, dynevent, event, filter, instances and trigger, each test run
# once at the top level and again in an instance where it says so.  Every
# run must PASS unless tests/conformance/ftracetest.expect lists another
# verdict with its reason (docs/FTRACETEST.md); a listed run that passes
# now fails the test too, so the list stays true.
#
# Needs root, FUSE, unshare and the selftests: $UKS_FTRACETEST, else
# $O/ftracetest (scripts/get-ftracetest.sh fetches them; .ci/run does).
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
ft=${UKS_FTRACETEST:-$O/ftracetest}
echo "TAP version 13"
if [ ! -x "$ft/ftracetest" ]; then
	skip "ftracetest" "no selftests at $ft (scripts/get-ftracetest.sh $ft fetches them)"
	tap_done; exit
fi
if [ "$(id -u)" != 0 ] || ! grep -q 'UKS_HAVE_FUSE3 1' "$O/config.h" || [ ! -w /dev/fuse ] ||
   ! unshare -m true 2>/dev/null; then
	skip "ftracetest" "needs root, FUSE and mount namespaces"
	tap_done; exit
fi
expect=$(dirname "$0")/ftracetest.expect
logs=$O/ftracetest-logs
rm -rf "$logs"
O=$O bash scripts/ftracetest-run.sh "$ft" "$logs" >/dev/null 2>&1
ok "ftracetest ran its 6 directories" -- test -s "$logs/results"
while read -r t kind got; do
	want=$(awk -v t="$t" -v k="$kind" '$1 == t && $2 == k { print $3; exit }' "$expect")
	want=${want:-PASS}
	if [ "$got" = "$want" ]; then
		ok "$t ($kind): $got" -- true
	else
		log=$(ls "$logs/$(echo "$t" | tr / _)"/*-log.* 2>/dev/null | head -1)
		ok "$t ($kind): $got, expected $want${log:+ (log: $log)}" -- false
	fi
done < "$logs/results"
# per directory, as docs/FTRACETEST.md tabulates it
awk '{ split($1, p, "/"); d = p[2]; if (p[3] == "inter-event") d = d "/inter-event";
       n[d]++; if ($3 == "PASS") pass[d]++ }
     END { for (d in n) printf "# %-22s %3d of %3d PASS\n", d, pass[d], n[d] }' "$logs/results" | sort
tap_done
