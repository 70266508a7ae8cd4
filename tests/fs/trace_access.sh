#!/usr/bin/env bash
# Who may ask uksd to trace a pid: the kernel's ptrace rule applied to the
# socket's peer (SO_PEERCRED), who must also be the pid's tracer already
# (its keeper).  With the socket opened to everyone, uid 65534 asks uksd
# directly to trace a root process, and its own process that it does not
# trace: EPERM both times and nothing is traced.  Its own command through
# `uks trace` is traced.
set -u
. "$(dirname "$0")/uksd.bash"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null || [ ! -x /usr/bin/python3 ]; then
	skip "trace access as another uid" "needs root, setpriv and /usr/bin/python3"
	tap_done; exit
fi
if ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "trace access as another uid" "ptrace is not permitted here"
	tap_done; exit
fi
as_nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }
chmod 755 "$tmp"

# One UKSD_OP_TRACE_ATTACH request (daemon/uksd.h) for pid $1: prints the
# first frame's status (0 with "attached", or -errno).
cat > "$tmp/attach.py" <<'PY'
import socket, struct, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
pid = sys.argv[2].encode()
s.sendall(struct.pack("<IIiIQ", 0x314b5355, 65, 0, len(pid), 0) + pid)
hdr = b""
while len(hdr) < 8:
    c = s.recv(8 - len(hdr))
    if not c:
        break
    hdr += c
status, n = struct.unpack("<iI", hdr)
print(status)
PY

ok "uksd serves a socket open to everyone" -- bash -c "
	'$uksd' --no-fuse --daemon --socket '$sock' --pid-file '$pidf' && chmod 666 '$sock'"
sleep 300 & root_pid=$!
as_nobody sleep 300 & own_pid=$!
extra_pids="$root_pid $own_pid"
ok "uid 65534 asks uksd to trace a root process: EPERM, not traced" -- bash -c "
	st=\$(setpriv --reuid=65534 --regid=65534 --clear-groups -- /usr/bin/python3 '$tmp/attach.py' '$sock' $root_pid)
	echo \"status \$st\"; [ \"\$st\" = -1 ] && grep -q '^TracerPid:	0\$' /proc/$root_pid/status"
ok "uid 65534 asks uksd to trace its own process it does not trace: EPERM" -- bash -c "
	st=\$(setpriv --reuid=65534 --regid=65534 --clear-groups -- /usr/bin/python3 '$tmp/attach.py' '$sock' $own_pid)
	echo \"status \$st\"; [ \"\$st\" = -1 ] && grep -q '^TracerPid:	0\$' /proc/$own_pid/status"
ok "uid 65534 traces its own command through uks trace" -- bash -c "
	cd / && setpriv --reuid=65534 --regid=65534 --clear-groups -- '$uks' -S '$sock' trace \
		-e syscalls:sys_enter_openat -- cat /etc/hostname > /dev/null &&
	'$uks' -S '$sock' cat sys/kernel/tracing/trace | grep -q ' cat-[0-9]* .*sys_openat('"
tap_done
