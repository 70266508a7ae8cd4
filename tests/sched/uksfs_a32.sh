#!/usr/bin/env bash
# uksd serves sys/devices/system/cpu/aarch32_el0 (from $UKS_A32_CONFIG on
# machines without the kernel's file): through the socket (uks cat / ls),
# and through FUSE with plain cat where FUSE can mount.
set -u
. "$(dirname "$0")/../fs/uksd.bash"
if [ -e /sys/devices/system/cpu/aarch32_el0 ]; then
	echo "1..0 # SKIP this machine has its own aarch32_el0"; exit 77
fi
printf '# the capable CPUs\n1\n' >"$tmp/a32.cfg"
export UKS_A32_CONFIG=$tmp/a32.cfg
ok "uksd serves the socket" -- "$uksd" --daemon --no-fuse --socket "$sock" --pid-file "$pidf"
ok "uks cat: the kernel's cpulist text" -- bash -c "
	[ \"\$('$uks' -S '$sock' cat sys/devices/system/cpu/aarch32_el0 | od -c | head -1)\" = \"\$(printf '1\n' | od -c | head -1)\" ]"
ok "uks ls shows the file" -- bash -c "'$uks' -S '$sock' ls sys/devices/system/cpu | grep -qx aarch32_el0"
ok "a write is refused" -- bash -c "! '$uks' -S '$sock' write sys/devices/system/cpu/aarch32_el0 0 2>/dev/null"
ok "a change of the source shows on the next read (late onlining)" -- bash -c "
	printf '1,3\n' > '$UKS_A32_CONFIG'; [ \"\$('$uks' -S '$sock' cat sys/devices/system/cpu/aarch32_el0)\" = 1,3 ]"
kill "$(cat "$pidf")"; sleep 0.3; rm -f "$pidf"
need_fuse "aarch32_el0 through FUSE"
ok "uksd mounts" -- "$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
ok "cat \$ROOT/sys/devices/system/cpu/aarch32_el0" -- bash -c "[ \"\$(cat '$mnt/sys/devices/system/cpu/aarch32_el0')\" = 1,3 ]"
ok "its mode is 0444" -- bash -c "[ \"\$(stat -c %a '$mnt/sys/devices/system/cpu/aarch32_el0')\" = 444 ]"
tap_done
