#!/usr/bin/env bash
# bench/vduse_vm.sh: the VDUSE block device in a real kernel.  In one tests/vm guest run
# (Debian 6.12 under QEMU TCG), 4 KiB random reads and writes at queue
# depth 1 and 32 (blkbench, io_uring, O_DIRECT) on our vduse-blk device and
# on qemu-storage-daemon's vduse-blk export, same backend (null, then RAM).
# The guest is emulated, so only the uks/qsd ratio means anything; the
# target is >= 1.0x.  `make bench` runs it (mk/parts/vm.mk).
# The same guest run also gives DAMON's monitor CPU on a kernel with
# soft-dirty bits and DAMON: bench/damon_overhead (tests/vm/guest.d/
# 50-damon.sh), uks's monitor thread (vaddr-sd) against the kernel's own
# kdamond (vaddr) on the same workload, and bench/damon_self_overhead, the
# slowdown under self against under the kernel's DAMON; printed in a
# section of its own.
#   UKS_VM_BENCH_SECS=N   seconds per measurement (default 3)
#   UKS_VM_BENCH_ROUNDS=N rounds, devices alternated; the best of each (default 2)
set -u
cd "$(dirname "$0")/.."
O=${O:-build}
out=$O/vm/bench
mkdir -p "$out"
rm -f "$out/bench.txt"	# no stale figures if this run writes none
bash tests/vm/run.sh --bench >"$out/run.tap" 2>&1
rc=$?
if [ $rc = 77 ]; then
	echo "vduse_vm: skipped: $(grep -m1 SKIP "$out/run.tap")"
	exit 0
fi
grep -v '^BENCH damon ' "$out/bench.txt" >"$out/vduse.txt" 2>/dev/null
grep '^BENCH damon ' "$out/bench.txt" >"$out/damon.txt" 2>/dev/null
echo "vduse_vm: 4 KiB random I/O in the guest, uks vduse-blk vs qemu-storage-daemon vduse-blk (target >= 1.0x)"
if [ -s "$out/vduse.txt" ]; then
	sed 's/^BENCH /  /' "$out/vduse.txt"
else
	echo "  (no results)"
fi
echo "damon_vm: bench/damon_overhead and damon_self_overhead in the guest ($(sed -n 's/^# kernel \([^ ]*\).*/\1/p' "$out/run.tap" | head -1), TCG)"
if [ -s "$out/damon.txt" ]; then
	sed 's/^BENCH damon /  /' "$out/damon.txt"
else
	echo "  (no results: bench/damon_overhead was not built, or the guest run failed)"
fi
if [ $rc != 0 ]; then
	echo "vduse_vm: the guest run failed (log: $out/run.tap):"
	grep -E '^not ok|^# ' "$out/run.tap" | tail -20 | sed 's/^/    /'
	exit 1
fi
met=$(grep -c 'x MET$' "$out/vduse.txt" | head -1)
all=$(grep -c 'ratio' "$out/vduse.txt" | head -1)
echo "vduse_vm: target >= 1.0x met in $met of $all measurements: $([ "$all" -gt 0 ] && [ "$met" = "$all" ] && echo MET || echo NOT MET)"
