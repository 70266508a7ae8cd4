#!/usr/bin/env bash
# scripts/demo.sh (make demo) runs to the end, and what it claims is so:
# python3 runs on libuks-malloc.so even when python3 is a wrapper script
# that runs the real one from another directory (as pyenv's shim can),
# slub_debug catches the overflow it shows, and a virtio-blk request flow
# goes through uks's VDUSE device.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
for f in uks uks-masim libuks-malloc.so examples/slab-cache examples/trace-events \
	 examples/vduse-emul; do
	[ -e "$O/$f" ] || { echo "1..0 # SKIP $O/$f not built (make all tests)"; exit 77; }
done
real=$(command -v python3) || { echo "1..0 # SKIP no python3"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# A python3 that starts the real one from /: a relative LD_PRELOAD is lost.
mkdir "$tmp/bin"
printf '#!/bin/sh\ncd / && exec "%s" "$@"\n' "$real" >"$tmp/bin/python3"
chmod +x "$tmp/bin/python3"
PATH=$tmp/bin:$PATH timeout 300 bash scripts/demo.sh "$O" >"$tmp/out" 2>&1
rc=$?
out=$tmp/out
ok "make demo's script runs to the end (exit 0)" -- bash -c "[ $rc = 0 ] || { tail -20 '$out'; false; }"
so=$(realpath "$O/libuks-malloc.so")
if ldd "$so" | grep -qE 'libasan|libubsan'; then	# the demo says why not
	skip "python3 through a wrapper runs on libuks-malloc.so" "sanitizer build of the preload"
	skip "the overflow under UKS_SLUB_DEBUG=FZPU is caught" "sanitizer build of the preload"
else
	ok "python3 through a wrapper runs on libuks-malloc.so (its malloc() is there)" -- \
		grep -qF "malloc() is in $so; malloc(100) gives 112 usable bytes" "$out"
	ok "the overflow under UKS_SLUB_DEBUG=FZPU is caught and reported" -- \
		grep -q '^  BUG kmalloc-32 (Not tainted): Right Redzone overwritten' "$out"
fi
ok "VDUSE: GET_ID answers the device's serial" -- grep -qF 'GET_ID                      -> OK, serial "vdemo0"' "$out"
ok "VDUSE: a write reaches the backing file" -- \
	grep -qF 'OUT   sector 8, 4096 bytes  -> OK, found at offset 4096 of the file' "$out"
ok "VDUSE: the read returns it" -- grep -qF 'IN    sector 8, 4096 bytes  -> OK, the bytes written' "$out"
ok "VDUSE: the device counted six requests, one IOERR, one UNSUPP, six interrupts" -- \
	grep -qF 'device: 6 requests, 1 IOERR, 1 UNSUPP, 0 malformed, 6 interrupts' "$out"
ok "no stale 'VDUSE lands in its own issue' line" -- bash -c "! grep -q 'own issue' '$out'"
tap_done
