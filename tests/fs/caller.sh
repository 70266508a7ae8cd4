#!/usr/bin/env bash
# The caller behind a request reaches the files: trace_marker lines carry
# the writing task's pid and comm (FUSE: the writing thread; the socket:
# its peer), uksd's worker threads stay out of saved_cmdlines, DAMON's
# target_ids and sysfs pid_target (and "on") take only pids the writer
# could ptrace (tested as nobody on a socket shared with it), and trace_pipe follows O_NONBLOCK as fcntl()
# sets it after open.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "callers through FUSE and the socket"

ok "uksd --daemon returns once it serves" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
pid=$(cat "$pidf" 2>/dev/null || echo 0)

ok "a trace_marker write through FUSE is the writing thread's (pid and comm)" -- python3 - "$T" <<'PY'
import os, sys, threading
t = sys.argv[1]
open(t + '/trace', 'w').close()
tids = []
def mark():
    tids.append(threading.get_native_id())
    fd = os.open(t + '/trace_marker', os.O_WRONLY)
    os.write(fd, b'from a thread')
    os.close(fd)
th = threading.Thread(target=mark); th.start(); th.join()
line = [l for l in open(t + '/trace') if 'tracing_mark_write: from a thread' in l]
assert len(line) == 1, line
task = line[0].split()[0]
assert task == 'python3-%d' % tids[0], (task, tids[0], os.getpid())
cmdlines = open(t + '/saved_cmdlines').read().split('\n')
assert '%d python3' % tids[0] in cmdlines, cmdlines
PY
ok "a trace_marker write through the socket is the peer's" -- bash -c "
	'$uks' -S '$sock' write sys/kernel/tracing/trace_marker through the socket &&
	line=\$(grep 'tracing_mark_write: through the socket' '$T/trace') &&
	echo \"\$line\" | grep -Eq '^ *uks-[0-9]+ ' && ! echo \"\$line\" | grep -q -- '-$pid '"
ok "uksd's worker threads are not in saved_cmdlines" -- bash -c "
	for i in \$(seq 20); do echo m\$i > '$T/trace_marker' & cat '$T/trace' > /dev/null & done; wait
	cat '$T/saved_cmdlines'; ! awk '\$2 == \"uksd\"' '$T/saved_cmdlines' | grep -q ."

ok "trace_pipe opened blocking, then O_NONBLOCK by fcntl: EAGAIN when empty" -- \
	timeout 10 python3 - "$T" <<'PY'
import fcntl, os, signal, sys
t = sys.argv[1]
open(t + '/trace', 'w').close()
fd = os.open(t + '/trace_pipe', os.O_RDONLY)
while True:   # drain what a reader would see now
    fcntl.fcntl(fd, fcntl.F_SETFL, os.O_NONBLOCK)
    signal.alarm(3)
    try:
        os.read(fd, 65536)
    except BlockingIOError:
        break
PY
ok "trace_pipe opened O_NONBLOCK, then blocking by fcntl: the read waits for data" -- \
	timeout 10 python3 - "$T" <<'PY'
import fcntl, os, sys, threading, time
t = sys.argv[1]
fd = os.open(t + '/trace_pipe', os.O_RDONLY | os.O_NONBLOCK)
try:
    while os.read(fd, 65536):
        pass
except BlockingIOError:
    pass
fcntl.fcntl(fd, fcntl.F_SETFL, 0)
def mark():
    time.sleep(0.5)
    with open(t + '/trace_marker', 'w') as m:
        m.write('wakes the reader')
threading.Thread(target=mark).start()
data = os.read(fd, 65536)
assert b'wakes the reader' in data, data
PY

# target_ids names processes for uksd to read: the writer must be able to
# ptrace each.  The socket is shared with nobody for this.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 711 "$tmp" && chmod 666 "$sock"
	nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
	D=sys/kernel/debug/damon
	sleep 60 & root_pid=$!
	extra_pids="$extra_pids $root_pid"
	ok "nobody cannot name a root process in target_ids (EPERM)" -- bash -c "
		out=\$(setpriv --reuid=65534 --regid=65534 --clear-groups '$uks' -S '$sock' write $D/target_ids $root_pid 2>&1)
		rc=\$?; echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted' &&
		[ \"\$('$uks' -S '$sock' cat $D/target_ids)\" = '' ]"
	ok "nobody can name its own process; a pid that does not exist is EINVAL" -- bash -c "
		setpriv --reuid=65534 --regid=65534 --clear-groups bash -c '
			sleep 30 & p=\$!
			\"\$0\" -S \"\$1\" write $D/target_ids \$p || exit 1
			[ \"\$(\"\$0\" -S \"\$1\" cat $D/target_ids)\" = \$p ] || exit 1
			kill \$p; wait \$p 2>/dev/null
			out=\$(\"\$0\" -S \"\$1\" write $D/target_ids \$p 2>&1); echo \"\$out\"
			echo \"\$out\" | grep -q \"Invalid argument\"' '$uks' '$sock'"
	ok "root may name any process" -- bash -c "
		'$uks' -S '$sock' write $D/target_ids $root_pid &&
		[ \"\$('$uks' -S '$sock' cat $D/target_ids)\" = $root_pid ]"
	# the same for the sysfs tree's pid_target, and again at "on"
	S=sys/kernel/mm/damon/admin/kdamonds
	"$uks" -S "$sock" write $S/nr_kdamonds 1 && "$uks" -S "$sock" write $S/0/contexts/nr_contexts 1 &&
		"$uks" -S "$sock" write $S/0/contexts/0/targets/nr_targets 1
	ok "sysfs: nobody cannot name a root process in pid_target, nor start one root named (EPERM)" -- bash -c "
		out=\$(setpriv --reuid=65534 --regid=65534 --clear-groups '$uks' -S '$sock' write $S/0/contexts/0/targets/0/pid_target $root_pid 2>&1)
		rc=\$?; echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted' &&
		[ \"\$('$uks' -S '$sock' cat $S/0/contexts/0/targets/0/pid_target)\" = 0 ] &&
		'$uks' -S '$sock' write $S/0/contexts/0/targets/0/pid_target $root_pid &&
		out=\$(setpriv --reuid=65534 --regid=65534 --clear-groups '$uks' -S '$sock' write $S/0/state on 2>&1)
		rc=\$?; echo \"\$out\"; [ \$rc = 1 ] && echo \"\$out\" | grep -q 'Operation not permitted' &&
		[ \"\$('$uks' -S '$sock' cat $S/0/state)\" = off ]"
	ok "sysfs: nobody can name and start its own process" -- bash -c "
		setpriv --reuid=65534 --regid=65534 --clear-groups bash -c '
			sleep 30 & p=\$!
			\"\$0\" -S \"\$1\" write $S/0/contexts/0/targets/0/pid_target \$p || exit 1
			\"\$0\" -S \"\$1\" write $S/0/state on || exit 1
			[ \"\$(\"\$0\" -S \"\$1\" cat $S/0/state)\" = on ] || exit 1
			\"\$0\" -S \"\$1\" write $S/0/state off || exit 1
			kill \$p; wait \$p 2>/dev/null; true' '$uks' '$sock'"
else
	skip "target_ids checks the writer" "needs root and setpriv"
fi
tap_done
