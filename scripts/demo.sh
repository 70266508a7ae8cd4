#!/usr/bin/env bash
# make demo: the end-to-end show of what uks can do today.
set -eu
O=${1:-build}
echo "uks demo ($("$O/uks" --version))"
echo
echo "== the CPU view every uks subsystem builds on"
"$O/uks" cpu
echo
echo "== without glibc's rseq registration (fallback to sched_getcpu)"
GLIBC_TUNABLES=glibc.pthread.rseq=0 "$O/uks" cpu
echo
echo "== kernel cpulist text, parsed and normalised (16 CPUs)"
for l in "0-3,8,10-11" "0-15:2/4" "3,2,1,0"; do
	printf '%-14s -> %s\n' "$l" "$("$O/uks" cpulist "$l" 16 2>&1 | sed 's/^uks: //')"
done
printf '%-14s -> %s\n' "1-" "$("$O/uks" cpulist "1-" 16 2>&1 | sed 's/^uks: //')"
echo
echo "== SLUB: a kmem cache, its sysfs text, and a slub_debug report"
"$O/examples/slab-cache" 2>&1 | sed -n '1,60p'
echo
echo "== libuks-malloc.so under python3, plain and with UKS_SLUB_DEBUG=FZPU"
# By absolute path: python3 may be a wrapper script (pyenv) that runs the
# real one from elsewhere, where the loader cannot find a relative path: it
# warns and runs on without it.  So python asks the loader which library
# its malloc() is in, and the demo stops if it is not ours.
malloc_so=$(realpath "$O/libuks-malloc.so")
whose_malloc='
import ctypes, sys
class DlInfo(ctypes.Structure):
    _fields_ = [("fname", ctypes.c_char_p), ("fbase", ctypes.c_void_p),
                ("sname", ctypes.c_char_p), ("saddr", ctypes.c_void_p)]
libc, info = ctypes.CDLL(None), DlInfo()
libc.dladdr(ctypes.cast(libc.malloc, ctypes.c_void_p), ctypes.byref(info))
libc.malloc.restype = ctypes.c_void_p
libc.malloc_usable_size.argtypes = [ctypes.c_void_p]
print("python", sys.version.split()[0] + ": malloc() is in", info.fname.decode() + ";",
      "malloc(100) gives", libc.malloc_usable_size(libc.malloc(100)), "usable bytes")
'
# One byte written just past a 32-byte object: slub_debug's red zone
# catches it on free, with the kernel's report.
overflow='
import ctypes
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
print(sum(len(str(i)) for i in range(10**5)), "digits, every object red-zoned and poisoned;")
print("then one byte written past a 32-byte malloc(), and free():")
p = libc.malloc(32)
ctypes.memset(p + 32, 0x41, 1)
libc.free(p)
'
preload_demo() {
	local out err

	echo "without the preload:"
	python3 -c "$whose_malloc"
	echo "LD_PRELOAD=$malloc_so:"
	out=$(LD_PRELOAD=$malloc_so python3 -c "$whose_malloc")
	echo "$out"
	grep -qF "malloc() is in $malloc_so;" <<<"$out" ||
		{ echo "demo: python3 did not run on libuks-malloc.so" >&2; exit 1; }
	echo "(the preload's kmalloc classes go in 16-byte steps to 128 bytes: lib/slab/kmalloc.c)"
	err=$(UKS_SLUB_DEBUG=FZPU LD_PRELOAD=$malloc_so python3 -c "$overflow" 2>&1)
	grep -v '^uks: ' <<<"$err"
	grep -E '^uks: error: (BUG|0x.*First byte|FIX)' <<<"$err" | sed 's/^uks: error: /  /'
	grep -q 'BUG kmalloc-32 .*: Right Redzone overwritten' <<<"$err" ||
		{ echo "demo: slub_debug did not catch the overflow" >&2; exit 1; }
}
if ldd "$malloc_so" | grep -qE 'libasan|libubsan'; then
	# a sanitizer runtime must be loaded first: it cannot come in by LD_PRELOAD
	echo "(not here: this build's libuks-malloc.so links a sanitizer runtime)"
else
	preload_demo
fi
echo
echo "== event tracing: an event, an eprobe following a pointer, kmem:kmalloc, trace_marker"
"$O/examples/trace-events"
echo
echo
echo "== uksfs: the kernel's eprobe example, unchanged but for the root, on a real ls"
demo=$(mktemp -d) uks=$(realpath "$O/uks")
if "$O/uksd" --daemon --mount "$demo/k" --socket "$demo/sock" --pid-file "$demo/pid" 2>/dev/null; then
	(
	cd "$demo/k/sys/kernel/tracing" || exit 1
	echo '$ cd $ROOT/sys/kernel/tracing'
	echo "\$ echo 'e:esys/eopen syscalls/sys_enter_openat file=+0(\$filename):ustring' >> dynamic_events"
	echo 'e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring' >> dynamic_events
	echo '$ echo 1 > events/esys/eopen/enable'; echo 1 > events/esys/eopen/enable
	echo '$ uks trace -- ls / >/dev/null'; "$uks" -S "$demo/sock" trace -- ls / >/dev/null
	echo '$ cat trace | tail -4'; tail -4 trace
	)
	kill "$(cat "$demo/pid")"; sleep 0.3
else
	echo "(no FUSE here: the same with an embedded instance)"
	"$O/uks" trace --embedded -E 'e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring' -- ls / | grep eopen | tail -4
fi
rm -rf "$demo"
echo
echo "== the kernel's own tools on uksfs: an instance with a snapshot trigger, then trace-cmd"
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null && [ -w /dev/fuse ]; then
	# scripts/tracing-ns.sh: a mount namespace whose /sys/kernel/tracing is
	# a fresh uksd's, where the session's processes are traced (docs/CONFORMANCE.md)
	cat > "$O/demo-tools.sh" <<'S'
cd /sys/kernel/tracing
echo '$ mkdir instances/demo'; mkdir instances/demo
echo "\$ echo 'e:esys/eopen syscalls/sys_enter_openat file=+0(\$filename):ustring' >> dynamic_events"
echo 'e:esys/eopen syscalls/sys_enter_openat file=+0($filename):ustring' >> dynamic_events
echo '$ echo 1 > instances/demo/events/esys/eopen/enable'
echo 1 > instances/demo/events/esys/eopen/enable
echo "\$ echo 'snapshot if file ~ \"*hostname\"' > instances/demo/events/esys/eopen/trigger"
echo 'snapshot if file ~ "*hostname"' > instances/demo/events/esys/eopen/trigger
echo '$ cat /etc/hostname; ls / >/dev/null'; cat /etc/hostname; ls / > /dev/null
echo '$ tail -2 instances/demo/snapshot     # taken when cat opened /etc/hostname'
tail -2 instances/demo/snapshot
echo '$ cat instances/demo/events/esys/eopen/trigger'; cat instances/demo/events/esys/eopen/trigger
echo 0 > instances/demo/events/esys/eopen/enable
echo '!snapshot if file ~ "*hostname"' > instances/demo/events/esys/eopen/trigger
rmdir instances/demo
if command -v trace-cmd > /dev/null; then
	cd /tmp
	echo '$ trace-cmd record -e syscalls:sys_enter_execve -e esys/eopen ls /  (Debian trace-cmd, unchanged)'
	trace-cmd record -q -o /tmp/uks-demo.dat -e syscalls:sys_enter_execve -e esys/eopen ls / > /dev/null
	echo '$ trace-cmd report | grep -m4 eopen:'
	trace-cmd report -i /tmp/uks-demo.dat 2>/dev/null | grep -m4 'eopen:'
	rm -f /tmp/uks-demo.dat
fi
S
	O=$O bash scripts/tracing-ns.sh --tracefs -- bash "$O/demo-tools.sh" 2>/dev/null ||
		O=$O bash scripts/tracing-ns.sh -- bash "$O/demo-tools.sh" 2>/dev/null
	rm -f "$O/demo-tools.sh"
else
	echo "(needs root, FUSE and mount namespaces: see docs/CONFORMANCE.md)"
fi
echo
echo "== DAMON: uks damon record --budget 0 -- uks-masim configs/masim/zigzag.cfg (10 s,"
echo "   two 64 MiB regions, the hot one alternating every 1.5 s), then damo's reports"
echo "   (--budget 0: damo's fixed 5 ms sampling, for a sharp picture; by default the"
echo "   sampling interval grows until monitoring costs at most 3% of a CPU)"
rec=$(mktemp -d)
"$O/uks" damon record --budget 0 -o "$rec/damon.data" -- "$O/uks-masim" configs/masim/zigzag.cfg >"$rec/masim.out"
# the heat map of the two regions uks-masim allocated (it prints where they are)
range=$(awk '$1 == "region" { print $3 }' "$rec/masim.out" | tr '-' '\n' | sort | sed -n '1p;$p' |
	while read -r a; do printf '%d ' "0x$a"; done)
echo "\$ uks damon report heats --heatmap stdout --resol 20 80 --address_range $range"
"$O/uks" damon report heats --heatmap stdout --resol 20 80 --address_range $range "$rec/damon.data"
echo "\$ uks damon report wss"
"$O/uks" damon report wss "$rec/damon.data"
"$O/uks" damon report heats --address_range $range --heatmap "$O/damon-heatmap.png" "$rec/damon.data" &&
	echo "(the same heat map as a picture: $O/damon-heatmap.png)"
rm -rf "$rec"
echo
echo "== VDUSE: virtio-blk requests through uks's device (lib/vduse)"
if [ -e /dev/vduse/control ]; then
	echo "(/dev/vduse/control is here: 'uks vduse-blk --name disk0 --backend ram:1G --attach'"
	echo " serves a real /dev/vdX, see docs/VDUSE.md; below, the same data path with"
	echo " the kernel's side emulated, which needs no module)"
else
	echo "(no /dev/vduse/control on this machine, kernel $(uname -r): the kernel's"
	echo " side -- guest memory, the split ring, kick and interrupt eventfds, virtio_blk's"
	echo " requests -- is emulated; the device is the code 'uks vduse-blk' runs."
	echo " tests/vm/run.sh boots a kernel with VDUSE under QEMU for the real one: docs/VM.md)"
fi
"$O/examples/vduse-emul"
