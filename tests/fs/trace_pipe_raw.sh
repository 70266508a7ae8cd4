#!/usr/bin/env bash
# The binary interface over FUSE: events/header_page and header_event as the
# kernel's, trace_pipe_raw's non-blocking read, buffer_subbuf_size_kb, and
# Debian's trace-cmd (libtracefs + libtraceevent) recording and decoding the
# pages: the events it decodes are those `trace` shows.  trace-cmd runs in a
# private mount namespace where uksfs is bind-mounted over a tracefs mount
# (libtracefs only takes a mount of type tracefs).
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "trace_pipe_raw over FUSE"
ok "uksd serves" -- "$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing

ok "events/header_page and header_event are the kernel's text" -- bash -c "
	printf '\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n\tfield: char data;\toffset:16;\tsize:4080;\tsigned:0;\n' > '$tmp/hp' &&
	cmp '$tmp/hp' '$T/events/header_page' &&
	printf '# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n\ttime_stamp : type == 31\n\tdata max type_len  == 28\n' > '$tmp/he' &&
	cmp '$tmp/he' '$T/events/header_event' && [ ! -s '$T/printk_formats' ]"
ok "an empty trace_pipe_raw read with O_NONBLOCK is EAGAIN; a page is 4096 bytes" -- python3 -c "
import errno, os
t = '$T'
open(t + '/trace', 'w').close()
fd = os.open(t + '/per_cpu/cpu0/trace_pipe_raw', os.O_RDONLY | os.O_NONBLOCK)
try:
    os.read(fd, 4096); raise SystemExit('read did not fail')
except BlockingIOError:
    pass
"
ok "poll wakes on a CPU's first event; a blocking read then returns its page" -- python3 -c "
import os, select, subprocess, threading
t = '$T'
open(t + '/trace', 'w').close()
n = len([d for d in os.listdir(t + '/per_cpu') if d.startswith('cpu')])
fds = {os.open(t + '/per_cpu/cpu%d/trace_pipe_raw' % c, os.O_RDONLY): c for c in range(n)}
p = select.poll()
for fd in fds:
    p.register(fd, select.POLLIN)
threading.Timer(0.3, lambda: subprocess.run(['sh', '-c', 'echo wake-up-line > ' + t + '/trace_marker'])).start()
ready = p.poll(10000)
assert ready, 'poll timed out'
page = os.read(ready[0][0], 4096)
assert len(page) == 4096 and b'wake-up-line' in page, page[:64]
"
ok "buffer_subbuf_size_kb: rounded up to a power of two pages; 0, 513 and garbage are EINVAL" -- bash -c "
	cd '$T' && [ \"\$(cat buffer_subbuf_size_kb)\" = 4 ] &&
	echo 5 > buffer_subbuf_size_kb && [ \"\$(cat buffer_subbuf_size_kb)\" = 8 ] &&
	grep -q 'size:8176;' events/header_page &&
	echo 100 > buffer_subbuf_size_kb && [ \"\$(cat buffer_subbuf_size_kb)\" = 128 ] &&
	echo 512 > buffer_subbuf_size_kb && [ \"\$(cat buffer_subbuf_size_kb)\" = 512 ] &&
	for bad in 0 513 abc -1 ' 4' 4x; do
		echo \"\$bad\" > buffer_subbuf_size_kb 2> '$tmp/err' && exit 1
		grep -q 'Invalid argument' '$tmp/err' || exit 1
	done &&
	[ \"\$(cat buffer_subbuf_size_kb)\" = 512 ] && echo 4 > buffer_subbuf_size_kb"
ok "a marker line longer than an event is cut; the writer is told and writes the rest" -- bash -c "
	cd '$T' && echo > trace && s=\$(printf 'X%.0s' \$(seq 9000)) && echo \$s > trace_marker &&
	[ \$(grep -c tracing_mark_write: trace) -ge 3 ] &&
	[ \"\$(awk '/tracing_mark_write:/ { sub(/^.*tracing_mark_write: /, \"\"); printf \"%s\", \$0 }' trace)\" = \"\$s\" ]"

if ! command -v trace-cmd >/dev/null; then
	skip "trace-cmd record/extract/report" "no trace-cmd (scripts/deps.sh installs it)"
	tap_done; exit
fi
if ! unshare -m --propagation private true 2>/dev/null; then
	skip "trace-cmd record/extract/report" "no private mount namespace (needs root)"
	tap_done; exit
fi
echo 1 > "$tmp/ftrace_enabled"
# $tmp/ns SCRIPT: run SCRIPT where /sys/kernel/tracing is this uksd's tree.
cat > "$tmp/ns" <<NS
#!/bin/bash
for m in \$(awk '\$3 == "tracefs" {print \$2}' /proc/mounts | sort -r); do umount -l \$m; done
mount -t tracefs nodev /sys/kernel/tracing &&
mount --bind '$T' /sys/kernel/tracing &&
mount --bind '$tmp/ftrace_enabled' /proc/sys/kernel/ftrace_enabled &&
cd '$tmp' && . "\$1"
NS
chmod +x "$tmp/ns"
# "pid cpu time event: fields" of each kmalloc and marker line, spaces
# squeezed; libtraceevent shows the marker's ip as 0x0, the kernel a name.
cat > "$tmp/fields" <<'FIELDS'
sed -e 's/: tracing_mark_write: /: print: /' -e 's/: print: *0x0: /: print: /' "$1" |
	sed -n 's/^ *.*-\([0-9]*\) *\[\([0-9]*\)\] [^0-9]* *\([0-9.]*\): \(kmalloc:\|print:\) *\(.*\)$/\1 \2 \3 \4 \5/p' |
	tr -s ' ' | sed 's/ptr=\(0x\)\?0*/ptr=/' | sort	# %p: zero-padded / 0x
FIELDS
cat > "$tmp/extract" <<EX
trace-cmd extract -o '$tmp/x.dat' > '$tmp/x.log' 2>&1
EX
ok "trace-cmd extract: the events libtraceevent decodes from the pages are those trace shows" -- bash -c "
	cd '$T' && echo > trace && echo 1 > events/kmem/kmalloc/enable && cat available_events > /dev/null &&
	for i in 1 2 3 4 5 6 7 8; do echo marker\$i > trace_marker; done &&
	sleep 0.2 && echo \$(seq 100) > trace_marker && echo 0 > tracing_on &&
	echo 0 > events/kmem/kmalloc/enable && cat trace > '$tmp/trace.txt' &&
	unshare -m --propagation private '$tmp/ns' '$tmp/extract' &&
	trace-cmd report '$tmp/x.dat' > '$tmp/x.txt' 2>&1 &&
	bash '$tmp/fields' '$tmp/trace.txt' > '$tmp/a' && bash '$tmp/fields' '$tmp/x.txt' > '$tmp/b' &&
	[ \$(grep -c print: '$tmp/a') = 9 ] && diff '$tmp/a' '$tmp/b' && echo 1 > tracing_on"
for mode in "" --nosplice; do
	cat > "$tmp/record" <<REC
trace-cmd record $mode -e kmem:kmalloc -o '$tmp/r.dat' > '$tmp/r.log' 2>&1 & p=\$!
for i in \$(seq 100); do grep -q Ctrl '$tmp/r.log' && break; sleep 0.1; done
for i in 1 2 3 4 5 6 7 8; do ls /sys/kernel/tracing/events/kmem > /dev/null; done
kill -INT \$p; wait \$p
REC
	ok "trace-cmd record ${mode:-(splice)}: events made while it runs are in the file" -- bash -c "
		unshare -m --propagation private '$tmp/ns' '$tmp/record' &&
		trace-cmd report '$tmp/r.dat' > '$tmp/r.txt' 2>&1 &&
		bash '$tmp/fields' '$tmp/r.txt' > '$tmp/c' && [ -s '$tmp/c' ]"
done
# Splice is live: a recording keeps far more than the ring buffer holds.
# 3000 markers (recorded whatever the events) in paced batches into 8 KiB
# per CPU: a recording that got its data only at stop would hold at most
# the buffers' bytes over 16 (the smallest event); this one must hold twice
# that.
cat > "$tmp/live" <<'REC'
T=/sys/kernel/tracing
trace-cmd record -b 8 -e kmem:kmalloc -o "$tmp/l.dat" > "$tmp/l.log" 2>&1 & p=$!
for i in $(seq 100); do grep -q Ctrl "$tmp/l.log" && break; sleep 0.1; done
for b in $(seq 30); do
	for i in $(seq 100); do echo "live-$b-$i" > $T/trace_marker; done
	sleep 0.05
done
kill -INT $p; wait $p
cat $T/buffer_total_size_kb > "$tmp/l.kb"
REC
ok "trace-cmd record (splice): a recording is not capped at the buffer's size" -- bash -c "
	tmp='$tmp' unshare -m --propagation private '$tmp/ns' '$tmp/live' &&
	n=\$(trace-cmd report '$tmp/l.dat' 2>/dev/null | grep -c 'live-[0-9]*-[0-9]*') &&
	cap=\$((\$(cat '$tmp/l.kb') * 1024 / 16)) && echo \"# \$n markers recorded, at most \$cap at stop\" &&
	[ \$n -ge \$((2 * cap)) ] || { cat '$tmp/l.log'; false; }"
tap_done
