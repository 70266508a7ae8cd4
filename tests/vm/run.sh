#!/usr/bin/env bash
# tests/vm: boot Debian's 6.12 kernel under QEMU (TCG) with a busybox
# initramfs holding our binaries, run tests/vm/guest.d/*.sh inside, and
# report every guest test point as one of ours (docs/VM.md).
#
#   bash tests/vm/run.sh           the test (tests/run runs it in make check)
#   bash tests/vm/run.sh --bench   the guest benchmark (bench/vduse_vm.sh)
#
# A guest that crashes, hangs past the timeout or loses a script's output
# is a failure; the test skips (exit 77) only when qemu, busybox-static or
# the kernel package cannot be had.  Logs stay in $O/vm/ (console.log is
# the guest's kernel console, guest.out its TAP channel).
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
. tests/vm/lib.bash
O=${O:-build}
mode=test
[ "${1:-}" = --bench ] && mode=bench
out=$O/vm/$mode
mkdir -p "$out"
timeout_s=${UKS_VM_TIMEOUT:-$([ $mode = bench ] && echo 1200 || echo 400)}

echo "TAP version 13"
for tool in qemu-system-x86_64 busybox cpio xz; do
	if ! command -v $tool >/dev/null; then
		echo "1..0 # SKIP $tool not installed (scripts/deps.sh installs scripts/deps.d/vm.list)"
		exit 77
	fi
done
for f in "$O/uks" "$O/tests/vm/vduse-probe" "$O/tests/vm/blkbench" "$O/tests/vm/vhost-drive"; do
	[ -x "$f" ] || { echo "1..0 # SKIP $f not built (make all tests)"; exit 77; }
done
if ! vm_kernel 2>"$out/kernel.err"; then
	echo "1..0 # SKIP $(tr '\n' ' ' <"$out/kernel.err")"
	exit 77
fi
echo "# kernel $VM_KVER from $VM_KDIR"
t0=$(date +%s)
vm_initramfs "$out" 2>"$out/initramfs.err"
ok "initramfs built (busybox, modules, uks, e2fsprogs, qemu-storage-daemon)" -- \
	bash -c "[ -s '${VM_INITRD:-/nonexistent}' ] || { cat '$out/initramfs.err'; exit 1; }"
[ "$tap_failed" = 0 ] || { tap_done; exit 1; }
echo "# initramfs $(du -h "$VM_INITRD" | cut -f1), modules: $(xargs -n1 basename <"$out/modules.list" | tr '\n' ' ')"
vm_boot "$out" "$mode" "$timeout_s"
rc=$?
echo "# guest ran $(( $(date +%s) - t0 )) s (qemu exit status $rc, timeout ${timeout_s}s)"

g=$out/guest.out
tr -d '\r' <"$g" >"$g.txt" 2>/dev/null || : >"$g.txt"
g=$g.txt
ok "guest booted kernel $VM_KVER and ran /init" -- grep -q "^UKS-VM INIT $VM_KVER" "$g"
ok "modules loaded: $(sed -n 's/^UKS-VM MODULES ok //p' "$g")" -- \
	bash -c "grep -q '^UKS-VM MODULES ok' '$g' || { grep '^UKS-VM MODULES' '$g'; exit 1; }"

# Every guest script's test points, renamed "SCRIPT: DESCRIPTION".
bench_lines=()
script= pts=0 fails=0 plan=
while IFS= read -r line; do
	case $line in
	"UKS-VM BEGIN "*)
		script=${line#UKS-VM BEGIN } pts=0 fails=0 plan= ;;
	"UKS-VM END "*)
		[ -n "$script" ] || continue
		set -- ${line#UKS-VM END }
		src=$2
		if [ "$src" = 77 ] && [ $pts = 0 ]; then
			skip "$script" "$(grep -m1 -o '# SKIP.*' "$out/$script.skip" 2>/dev/null | sed 's/# SKIP //')"
		elif [ -n "$plan" ] && [ "$plan" != "$pts" ]; then
			ok "$script: planned $plan test points, ran $pts" -- false
		elif [ "$src" != 0 ] && [ "$src" != 77 ] && [ $fails = 0 ]; then
			ok "$script: exit status $src" -- false
		fi
		rm -f "$out/$script.skip"
		script= ;;
	"ok "[0-9]*|"not ok "[0-9]*)
		[ -n "$script" ] || continue
		pts=$((pts + 1))
		tap_n=$((tap_n + 1))
		if [ "${line#not }" != "$line" ]; then
			fails=$((fails + 1)) tap_failed=$((tap_failed + 1))
			desc=${line#not ok }
			echo "not ok $tap_n $script: ${desc#* }"
		else
			desc=${line#ok }
			echo "ok $tap_n $script: ${desc#* }"
		fi ;;
	1..*)
		[ -n "$script" ] || continue
		plan=${line#1..}; plan=${plan%% *}
		echo "$line" >"$out/$script.skip" ;;
	"#"*)
		[ -n "$script" ] && echo "# $script:${line#\#}" ;;
	"blkbench "*|"BENCH "*)
		bench_lines+=("$line")
		echo "# $line" ;;
	esac
done <"$g"
if [ -n "$script" ]; then
	ok "$script: finished (the guest stopped inside it)" -- false
fi
ok "guest powered off by itself (no panic, no timeout)" -- \
	bash -c "[ $rc = 0 ] && grep -q '^UKS-VM DONE' '$g' && ! grep -qE 'Kernel panic|BUG:|Oops' '$out/console.log'"
if [ "$tap_failed" != 0 ]; then
	echo "# kernel console (tail of $out/console.log):"
	tr -d '\r' <"$out/console.log" | grep -v '^\s*$' | tail -40 | sed 's/^/#   /'
fi
if [ $mode = bench ]; then
	printf '%s\n' "${bench_lines[@]}" >"$out/bench.txt"
fi
tap_done
