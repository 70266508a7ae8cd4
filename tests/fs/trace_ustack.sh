#!/usr/bin/env bash
# stacktrace triggers on the events of a traced program record that
# program's stack (ftrace:user_stack), unwound from its call: each of
# three getppid() calls shows level3, level2, level1 and main as its
# callers, with and without options/sym-userobj (which names the mapping
# while the program lives).
set -u
. "$(dirname "$0")/uksd.bash"
if [ "$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)" -gt 1 ] ||
   ! "$uks" trace --embedded -e syscalls:sys_enter_getpid -- true >/dev/null 2>&1; then
	skip "stacktrace of traced programs" "ptrace is not permitted here"
	tap_done; exit
fi
if ! grep -q 'UKS_HAVE_LIBDW 1' "$O/config.h"; then
	skip "stacktrace of traced programs" "built without libdw (scripts/deps.sh installs libdw-dev)"
	tap_done; exit
fi
${CC:-cc} -O2 -g -o "$tmp/prog" "$(dirname "$0")/ustack_prog.c" || exit 1
ok "uksd serves" -- "$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing

# check: every user stack after a getppid entry names level3, level2,
# level1, main as frames 1-4 (frame 0 is libc's wrapper): return addresses
# inside each function, by the addresses the program printed and the
# sizes nm gives.  Three calls, three such stacks.
check() {
	python3 - "$tmp/out" "$tmp/nm" "$tmp/trace" <<'PY'
import re, sys
at = {l.split()[0]: int(l.split()[1], 16) for l in open(sys.argv[1]) if l.strip()}
size = {}
for l in open(sys.argv[2]):
    f = l.split()
    if len(f) == 4 and f[3] in at:
        size[f[3]] = int(f[1], 16)
want = ["level3", "level2", "level1", "main"]
good, frames, stack = 0, [], False
for l in open(sys.argv[3]):
    if "sys_getppid()" in l:
        stack, frames = True, []
    elif stack and l.startswith(" => "):
        frames.append(int(re.search(r"<([0-9a-f]+)>", l).group(1), 16))
        if len(frames) == 5:
            stack = False
            if all(at[w] < a <= at[w] + size[w] for w, a in zip(want, frames[1:])):
                good += 1
            else:
                print("bad stack:", [hex(a) for a in frames], file=sys.stderr)
sys.exit(0 if good == 3 else 1)
PY
}

# run: trace the program with a stacktrace trigger; read the trace while it lives.
run() {
	echo > "$T/trace"
	echo 'stacktrace' > "$T/events/syscalls/sys_enter_getppid/trigger" &&
	echo 1 > "$T/events/syscalls/sys_enter_getppid/enable" &&
	mkfifo "$tmp/in" &&
	{ "$uks" -S "$sock" trace -e syscalls:sys_enter_getppid -- "$tmp/prog" \
		< "$tmp/in" > "$tmp/out" 2> "$tmp/err" & } &&
	exec 7> "$tmp/in" &&
	for _ in $(seq 600); do grep -q level3 "$tmp/out" && break; sleep 0.1; done &&
	echo 1 > "$T/options/sym-userobj" && cat "$T/trace" > "$tmp/trace.obj" &&
	echo 0 > "$T/options/sym-userobj" && cat "$T/trace" > "$tmp/trace"
	local rc=$?
	exec 7>&-
	wait
	echo '!stacktrace' > "$T/events/syscalls/sys_enter_getppid/trigger"
	echo 0 > "$T/events/syscalls/sys_enter_getppid/enable"
	return $rc
}
nm -S --defined-only "$tmp/prog" > "$tmp/nm"

ok "the trigger records the traced program's stack: getppid <- level3 <- level2 <- level1 <- main" -- \
	bash -c "$(declare -f run check); T='$T' tmp='$tmp' uks='$uks' sock='$sock'; run && check || { tail -30 '$tmp/trace' '$tmp/err'; false; }"
ok "with options/sym-userobj each frame in the program is its file and the offset in the mapping" -- \
	bash -c "[ \$(grep -c \" => $tmp/prog\\[+0x[0-9a-f]*\\]\$\" '$tmp/trace.obj') -ge 12 ]"
ok "a user stack prints as the kernel's: <user stack trace>, then ' =>  <%016lx>' lines" -- \
	bash -c "grep -q '<user stack trace>\$' '$tmp/trace' && grep -Eq '^ =>  <[0-9a-f]{16}>\$' '$tmp/trace'"
ok "the user_stack event has the kernel's id and format" -- bash -c "
	grep -qx 'ID: 12' '$T/events/ftrace/user_stack/format' &&
	grep -q 'field:unsigned int tgid;	offset:8;	size:4;	signed:0;' '$T/events/ftrace/user_stack/format' &&
	grep -q 'field:unsigned long caller\[8\];	offset:16;	size:64;	signed:0;' '$T/events/ftrace/user_stack/format'"
tap_done
