#!/bin/sh
# uks-vm: bench
# DAMON's real-process primitives on Debian's kernel.  The host
# these tests usually run on has neither soft-dirty bits nor accessed bits
# that follow accesses, so there vaddr-sd and vaddr-refs skip; this kernel
# has CONFIG_MEM_SOFT_DIRTY and TCG emulates the accessed bits, so here
# they run for real, as does the self agent (with UFFDIO_MOVE, 6.8+).
# Every test point of the unit programs becomes one of this script.
# With uks.mode=bench: bench/damon_overhead, uks's monitor thread against
# the kernel's own kdamond (DAMON_VADDR through DAMON_SYSFS) in the same
# guest, and bench/damon_self_overhead, the program's slowdown under self
# against under the kernel's DAMON; one "BENCH damon ..." line per figure.
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
	_pts=0 _fails=0
	while IFS= read -r _line; do
		case $_line in
		"ok "[0-9]*|"not ok "[0-9]*)
			_pts=$((_pts + 1))
			tap_n=$((tap_n + 1))
			_desc=${_line#not ok }; _desc=${_desc#ok }; _desc=${_desc#* }
			if [ "${_line#not }" != "$_line" ]; then
				echo "not ok $tap_n $_name: $_desc"
				tap_failed=$((tap_failed + 1)) _fails=$((_fails + 1))
			else
				echo "ok $tap_n $_name: $_desc"
			fi ;;
		"#"*) echo "$_line" ;;
		esac
	done </tmp/$_name.tap
	# 0: all passed; 77: all skipped; 1: some failed (already counted)
	ok "$_name: ran its points ($_pts) and ended normally (exit status $_rc)" -- \
		test $_pts -gt 0 -a \( $_rc = 0 -o $_rc = 77 -o \( $_rc = 1 -a $_fails -gt 0 \) \)
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
	# the slowdown under self against the kernel's DAMON; TCG runs the
	# workload about 10x slower than the host, so a tenth of its operations
	if [ -x /bin/damon-damon_self_overhead ]; then
		/bin/damon-damon_self_overhead -n 6 -r 5 >/tmp/damon-self-bench.out 2>&1
		_rc=$?
		sed 's/^/BENCH damon /' /tmp/damon-self-bench.out
		ok "damon_self_overhead ran (exit status $_rc)" -- test $_rc = 0
	fi
	tap_done
	exit
fi

harness vaddr /bin/damon-vaddr_proc
harness self /bin/damon-self

# End to end with the default primitive, as `make demo` does: record
# uks-masim's zigzag (warm-up 1 s, then the hot 64 MiB region alternating
# between lo and hi every 1.5 s), read it back with `report raw`, and in
# every mid-phase aggregation that saw accesses the configured region must
# be the hotter one (tests/damon/record.sh judges the same on the host).
if [ ! -x /bin/uks-masim ] || [ ! -e /tests/zigzag.cfg ]; then
	skip "record: uks-masim zigzag" "uks-masim is not in the initramfs (make all)"
	tap_done
	exit
fi
# At damo's fixed intervals (--budget 0): this judges the monitor, and the
# emulated guest's checks cost enough for the default budget to stretch an
# aggregation past a 1.5 s phase.
$UKS damon record --budget 0 -o /tmp/zz.data -- /bin/uks-masim /tests/zigzag.cfg >/tmp/masim.out 2>/tmp/record.err
rc=$?
ok "record: uks damon record -- uks-masim zigzag exits 0 ($rc)" -- sh -c "cat /tmp/record.err; test $rc = 0"
ok "record: the default primitive here is vaddr-sd" -- \
	sh -c 'cat /tmp/record.err; grep -q "primitive vaddr-sd" /tmp/record.err'
ok "record: uks-masim ran every phase" -- grep -q '^hi 3: ' /tmp/masim.out
$UKS damon report raw /tmp/zz.data >/tmp/zz.raw 2>&1
ok "record: report raw reads it back" -- sh -c 'test -s /tmp/zz.raw && grep -q "^nr_regions:" /tmp/zz.raw'
judge() {
	awk '
	function secs(v, u) { return u == "ns" ? v / 1e9 : u == "us" ? v / 1e6 : u == "ms" ? v / 1e3 : v }
	function heat(r,   h, i, s, e) {
		h = 0
		for (i = 0; i < n; i++) {
			s = rs[i] > lo[r] ? rs[i] : lo[r]; e = re[i] < hi[r] ? re[i] : hi[r]
			if (e > s) h += acc[i] * (e - s)
		}
		return h
	}
	function snapshot(   x, phase, pos, want, other) {
		if (t == "") return
		x = t - 1.0; phase = int(x / 1.5); pos = (x - phase * 1.5) / 1.5
		if (x < 0 || phase > 5 || pos <= 0.3 || pos >= 0.9) return
		want = phase % 2 ? "hi" : "lo"; other = phase % 2 ? "lo" : "hi"
		if (!heat(want) && !heat(other)) return
		if (heat(want) > heat(other)) good++; else bad++
	}
	FILENAME ~ /masim/ && $1 == "region" {
		split($3, a, "-"); lo[$2] = ("0x" a[1]) + 0; hi[$2] = ("0x" a[2]) + 0; next
	}
	FILENAME ~ /masim/ { next }
	$1 == "monitoring_start:" { snapshot(); t = $3 == "m" ? $2 * 60 + $4 : secs($2, $3); n = 0; next }
	/^[0-9a-f]+-[0-9a-f]+\(/ {
		split($0, a, /[-(]/); rs[n] = ("0x" a[1]) + 0; re[n] = ("0x" a[2]) + 0
		acc[n++] = $NF; next
	}
	END {
		snapshot()
		printf "hot region as configured in %d of %d mid-phase aggregations with accesses\n", good, good + bad
		exit !(good + bad >= 10 && good >= 0.8 * (good + bad))
	}' /tmp/masim.out /tmp/zz.raw
}
sed 's/^/# /' /tmp/record.err
if grep -q __asan_init /bin/uks-masim; then
	# as the unit programs' real-process tests: ASan's terabytes of shadow
	# mappings leave the regions too wide to follow 1.5 s phases (24 of
	# 44 right once, where the regular build gets all)
	skip "record: the hot region follows the phases" "an ASan build (the regular build runs it)"
else
	judge >/tmp/judge.out 2>&1
	rc=$?
	sed 's/^/# /' /tmp/judge.out
	ok "record: the hot region follows the phases (lo, hi, lo, ...)" -- test $rc = 0
fi
tap_done
