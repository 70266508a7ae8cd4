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
LD_PRELOAD="$O/libuks-malloc.so" python3 -c 'import sys; print("python", sys.version.split()[0], "runs on uks kmalloc")'
UKS_SLUB_DEBUG=FZPU LD_PRELOAD="$O/libuks-malloc.so" python3 -c 'print(sum(len(str(i)) for i in range(10**5)), "digits, every object red-zoned and poisoned")'
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
echo "== DAMON: uks damon record -- uks-masim configs/masim/zigzag.cfg (10 s, two 64 MiB"
echo "   regions, the hot one alternating every 1.5 s), then damo's reports of the record"
rec=$(mktemp -d)
"$O/uks" damon record -o "$rec/damon.data" -- "$O/uks-masim" configs/masim/zigzag.cfg >"$rec/masim.out"
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
echo "Not yet here: VDUSE lands in its own issue; this demo grows with it."
