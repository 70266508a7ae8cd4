#!/bin/sh
# uks-vm: bench
# DAMON's real-process primitives on Debian's kernel (issue 6).  The host
# these tests usually run on has neither soft-dirty bits nor accessed bits
# that follow accesses, so there vaddr-sd and vaddr-refs skip; this kernel
# has CONFIG_MEM_SOFT_DIRTY and TCG emulates the accessed bits, so here
# they run for real, as does the self agent (with UFFDIO_MOVE, 6.8+).
# Every test point of the unit programs becomes one of this script.
# With uks.mode=bench: bench/damon_overhead, uks's monitor thread against
# the kernel's own kdamond (DAMON_VADDR through DAMON_SYSFS) in the same
# guest, one "BENCH damon ..." line per figure.
[ "${UKS_VM_GUEST:-}" = 1 ] || { echo "1..0 # SKIP runs inside the tests/vm guest only (bash tests/vm/run.sh)"; exit 77; }
. /tests/tap.ash

# harness NAME PROGRAM: runs a unit-test program and renumbers its points
harness() {
	_name=$1
	if [ ! -x "$2" ]; then
		skip "$_name" "$2 is not in the initramfs (make tests)"
		return
	fi
	"$2" >/tmp/$_name.tap 2>&1
	_rc=$?
	_pts=0
	while IFS= read -r _line; do
		case $_line in
		"ok "[0-9]*|"not ok "[0-9]*)
			_pts=$((_pts + 1))
			tap_n=$((tap_n + 1))
			_desc=${_line#not ok }; _desc=${_desc#ok }; _desc=${_desc#* }
			if [ "${_line#not }" != "$_line" ]; then
				echo "not ok $tap_n $_name: $_desc"
				tap_failed=$((tap_failed + 1))
			else
				echo "ok $tap_n $_name: $_desc"
			fi ;;
		"#"*) echo "$_line" ;;
		esac
	done </tmp/$_name.tap
	ok "$_name: ran its points ($_pts) and exited with status 0 ($_rc)" -- test $_pts -gt 0 -a $_rc = 0
}

if [ "${UKS_VM_MODE:-test}" = bench ]; then
	if [ ! -x /bin/damon-damon_overhead ]; then
		echo "1..0 # SKIP bench/damon_overhead not built (make bench builds it)"
		exit 77
	fi
	/bin/damon-damon_overhead "${UKS_VM_BENCH_SECS:-3}" >/tmp/damon-bench.out 2>&1
	_rc=$?
	sed 's/^/BENCH damon /' /tmp/damon-bench.out
	ok "damon_overhead ran (exit status $_rc)" -- test $_rc = 0
	tap_done
	exit
fi

harness vaddr /bin/damon-vaddr_proc
harness self /bin/damon-self
tap_done
