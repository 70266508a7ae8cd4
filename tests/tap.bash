# Sourced by shell tests: tiny TAP helpers (not a test: tests/run runs *.sh only).
tap_n=0 tap_failed=0
ok() {		# ok DESCRIPTION -- COMMAND...; on failure its output becomes "# " lines
	local desc=$1 _tap_out; shift; [ "${1:-}" = -- ] && shift
	tap_n=$((tap_n + 1))
	if _tap_out=$("$@" 2>&1); then echo "ok $tap_n $desc"
	else
		echo "not ok $tap_n $desc"
		printf "%s\n" "$_tap_out" | tail -15 | sed 's/^/# /'
		tap_failed=$((tap_failed + 1))
	fi
}
skip() { tap_n=$((tap_n + 1)); echo "ok $tap_n $1 # SKIP $2"; }
tap_done() { echo "1..$tap_n"; [ "$tap_failed" = 0 ]; }
