#!/usr/bin/env bash
# uks trace's keeper: whatever happens to the tracer, the traced program
# behaves as untraced.  A loop of openat() calls, each checked, is traced
# through uksd, and uksd is killed with -9 at random points, killed with -9
# while frozen in the middle of a stop (SIGSTOP first, until the program
# sits in a tracing stop), and stopped with SIGTERM; the same for a
# killed `uks trace --embedded`.  No call may fail (a lost tracer makes
# SECCOMP_RET_TRACE calls fail with ENOSYS), the program must finish
# normally, and uks trace must say that tracing was lost.
set -u
. "$(dirname "$0")/uksd.bash"
ptrace_ok=1
[ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -le 1 ] || ptrace_ok=0
if [ $ptrace_ok = 0 ] || ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "uks trace keeper" "ptrace is not permitted here"
	tap_done; exit
fi
${CC:-cc} -O2 -o "$tmp/openat_loop" "$(dirname "$0")/openat_loop.c" || exit 1

# Up to 60 s: a bound for a broken run, not a timing assumption.
wait_for() { for _ in $(seq 600); do eval "$1" && return 0; sleep 0.1; done; echo "timed out: $1"; return 1; }
state_of() { awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null; }	# comm has no blanks
rand_delay() { echo "0.$((RANDOM % 6))$((RANDOM % 10))"; }

# HOW: rand (kill -9 after a random delay), stop (frozen until the program
# is in a tracing stop, then kill -9), term (SIGTERM after a random delay).
daemon_case() {
	local how=$1 d=$tmp/d$2 t p u rc
	mkdir -p "$d"; rm -f "$pidf"
	"$uksd" --no-fuse --daemon --socket "$sock" --pid-file "$pidf" || return 1
	u=$(cat "$pidf")
	"$uks" -S "$sock" trace -e syscalls:sys_enter_openat -- "$tmp/openat_loop" "$d/stop" "$d/pid" \
		> "$d/out" 2> "$d/err" &
	t=$!
	wait_for "[ -s '$d/pid' ]" || return 1
	p=$(cat "$d/pid")
	case $how in
	rand)	sleep "$(rand_delay)"; kill -KILL "$u";;
	stop)	kill -STOP "$u"
		wait_for "[ \"\$(state_of $p)\" = t ]" || { kill -KILL "$u"; return 1; }
		kill -KILL "$u";;
	term)	sleep "$(rand_delay)"; kill -TERM "$u";;
	esac
	wait_for "! kill -0 $u 2>/dev/null" || return 1
	touch "$d/stop"
	wait "$t"; rc=$?
	cat "$d/out" "$d/err"
	[ "$rc" = 0 ] && grep -q '^calls [0-9]* failed 0$' "$d/out" &&
		grep -q "^uks trace: tracing lost: uksd went away; $p (openat_loop) runs on untraced\$" "$d/err"
}

embedded_case() {
	local how=$1 d=$tmp/e$2 t p
	mkdir -p "$d"
	"$uks" trace --embedded -e syscalls:sys_enter_openat -o "$d/trace" -- \
		"$tmp/openat_loop" "$d/stop" "$d/pid" > "$d/out" 2> "$d/err" &
	t=$!
	wait_for "[ -s '$d/pid' ]" || return 1
	p=$(cat "$d/pid")
	case $how in
	rand)	sleep "$(rand_delay)";;
	stop)	kill -STOP "$t"; wait_for "[ \"\$(state_of $p)\" = t ]" || { kill -KILL "$t"; return 1; };;
	esac
	kill -KILL "$t"; wait "$t"
	touch "$d/stop"
	wait_for "! kill -0 $p 2>/dev/null" || return 1
	cat "$d/out" "$d/err"
	grep -q '^calls [0-9]* failed 0$' "$d/out"
}

for i in 1 2 3; do
	ok "uksd killed -9 at a random point ($i): no call fails, uks trace says so" -- daemon_case rand "r$i"
done
ok "uksd killed -9 in the middle of a stop: no call fails, uks trace says so" -- daemon_case stop s
ok "uksd stopped with SIGTERM: no call fails, uks trace says so" -- daemon_case term t
for i in 1 2; do
	ok "uks trace --embedded killed -9 at a random point ($i): the command ends normally" -- \
		embedded_case rand "r$i"
done
ok "uks trace --embedded killed -9 in the middle of a stop: the command ends normally" -- \
	embedded_case stop s
tap_done
