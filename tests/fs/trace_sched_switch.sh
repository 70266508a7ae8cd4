#!/usr/bin/env bash
# sched:sched_switch through uksd: a traced `sleep 0.1` shows up as prev and
# as next of switches (the kernel's context-switch records, read through
# perf), the format file is the kernel's, and without the permission to
# read CPU-wide switch records (an unprivileged uksd, perf_event_paranoid
# above 0) enabling the event works and records nothing.
set -u
. "$(dirname "$0")/uksd.bash"
if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -gt 1 ] ||
   ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "sched_switch" "ptrace is not permitted here"
	tap_done; exit
fi
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)

cat > "$tmp/format.want" <<'FMT'
name: sched_switch
format:
	field:unsigned short common_type;	offset:0;	size:2;	signed:0;
	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;
	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;
	field:int common_pid;	offset:4;	size:4;	signed:1;

	field:char prev_comm[16];	offset:8;	size:16;	signed:1;
	field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
	field:int prev_prio;	offset:28;	size:4;	signed:1;
	field:long prev_state;	offset:32;	size:8;	signed:1;
	field:char next_comm[16];	offset:40;	size:16;	signed:1;
	field:pid_t next_pid;	offset:56;	size:4;	signed:1;
	field:int next_prio;	offset:60;	size:4;	signed:1;

print fmt: "prev_comm=%s prev_pid=%d prev_prio=%d prev_state=%s%s ==> next_comm=%s next_pid=%d next_prio=%d", REC->prev_comm, REC->prev_pid, REC->prev_prio, (REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1)) ? __print_flags(REC->prev_state & ((((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) - 1), "|", { 0x0001, "S" }, { 0x0002, "D" }, { 0x0004, "T" }, { 0x0008, "t" }, { 0x0010, "X" }, { 0x0020, "Z" }, { 0x0040, "P" }, { 0x0080, "I" }) : "R", REC->prev_state & (((0x0000 | 0x0001 | 0x0002 | 0x0004 | 0x0008 | 0x0010 | 0x0020 | 0x0040) + 1) << 1) ? "+" : "", REC->next_comm, REC->next_pid, REC->next_prio
FMT

start_uksd() {	# [setpriv args...]
	rm -f "$pidf" "$sock"
	"$@" "$uksd" --no-fuse --daemon --socket "$sock" --pid-file "$pidf" || return 1
}
stop_uksd() {	# uksd removes its pid file as it exits
	local u
	for _ in $(seq 100); do [ -s "$pidf" ] && break; sleep 0.1; done
	u=$(cat "$pidf") && kill "$u" || return 1
	for _ in $(seq 100); do kill -0 "$u" 2>/dev/null || return 0; sleep 0.1; done
}

format_case() {
	"$uks" -S "$sock" cat sys/kernel/tracing/events/sched/sched_switch/format | grep -v '^ID: ' > "$tmp/format.got"
	diff -u "$tmp/format.want" "$tmp/format.got"
}

# The traced shell writes its pid, then becomes sleep (same pid).
traced_sleep() {
	"$uks" -S "$sock" trace -e sched:sched_switch -- sh -c 'echo $$ > "$0"; exec sleep 0.1' "$tmp/pid" \
		>/dev/null 2>&1 || return 1
	"$uks" -S "$sock" cat sys/kernel/tracing/trace > "$tmp/trace"
}

both_sides_case() {
	local p
	traced_sleep || return 1
	p=$(cat "$tmp/pid")
	grep -E " sched_switch: prev_comm=(sh|sleep) prev_pid=$p prev_prio=[0-9]+ prev_state=(R\+|[SDTtXZPI]) ==> next_comm=.* next_pid=[0-9]+ next_prio=[0-9]+\$" "$tmp/trace" | head -3
	grep -qE " sched_switch: prev_comm=.* prev_pid=$p .* ==> next_comm=sleep next_pid=$p next_prio=[0-9]+\$" "$tmp/trace" && return 1
	grep -qE "^ *(sh|sleep)-$p +\[[0-9]{3}\] .* sched_switch: prev_comm=(sh|sleep) prev_pid=$p " "$tmp/trace" &&
		grep -qE " sched_switch: prev_comm=.* ==> next_comm=(sh|sleep) next_pid=$p next_prio=[0-9]+\$" "$tmp/trace"
}

# Disabled at the end of uks trace: a second traced command adds no lines.
disabled_case() {
	local p
	"$uks" -S "$sock" trace -- sh -c 'echo $$ > "$0"; exec sleep 0.05' "$tmp/pid" >/dev/null 2>&1 || return 1
	p=$(cat "$tmp/pid")
	"$uks" -S "$sock" cat sys/kernel/tracing/trace > "$tmp/trace2"
	! grep -q "pid=$p " "$tmp/trace2"
}

unprivileged_case() {
	traced_sleep || return 1
	! grep -q ' sched_switch: ' "$tmp/trace"
}

if [ "$(id -u)" = 0 ] || [ "$paranoid" -le 0 ]; then
	start_uksd || exit 1
	ok "sched_switch format is the kernel's (5.15)" -- format_case
	ok "a traced sleep is prev and next of sched_switch lines, written as itself" -- both_sides_case
	ok "after uks trace disables it, no sched_switch lines" -- disabled_case
	stop_uksd
else
	skip "sched_switch records" "not root and perf_event_paranoid is $paranoid"
fi
if [ "$(id -u)" = 0 ] && [ "$paranoid" -gt 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"; mkdir -m 1777 "$tmp/nobody"; sock=$tmp/nobody/uks.sock pidf=$tmp/nobody/uksd.pid
	start_uksd setpriv --reuid=65534 --regid=65534 --clear-groups -- || exit 1
	ok "unprivileged uksd: the event exists, enabling it records nothing" -- unprivileged_case
	stop_uksd
fi
tap_done
