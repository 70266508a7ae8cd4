# Sourced by the guest scripts (busybox ash): TAP helpers like tests/tap.bash.
tap_n=0 tap_failed=0
ok() {		# ok DESCRIPTION -- COMMAND...; on failure its output becomes "# " lines
	_tap_desc=$1; shift; [ "${1:-}" = -- ] && shift
	tap_n=$((tap_n + 1))
	if _tap_out=$("$@" 2>&1); then echo "ok $tap_n $_tap_desc"
	else
		echo "not ok $tap_n $_tap_desc"
		printf '%s\n' "$_tap_out" | tail -15 | sed 's/^/# /'
		tap_failed=$((tap_failed + 1))
	fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1 # SKIP $2"; }
tap_done() { echo "1..$tap_n"; [ "$tap_failed" = 0 ]; }
# in_guest: guest scripts run only inside the VM (tests/run also finds them)
in_guest() {
	[ "${UKS_VM_GUEST:-}" = 1 ] && return 0
	echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"
	exit 77
}
