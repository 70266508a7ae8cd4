#!/usr/bin/env bash
# Trace instances through a real uksd FUSE mount: mkdir instances/NAME
# makes an instance with the kernel's files (the top-level-only ones
# absent), independent of the top level, rmdir removes it, EBUSY while a
# file of it is open and at once after it was closed (FUSE's RELEASE comes
# after close(2) returns, its FLUSH before); the kernel's errnos for names that exist, do not,
# or cannot be; odd names; then the ftrace selftests' slams (instance.tc,
# instance-event.tc) for a fixed number of rounds, after which the tree is
# clean and uksd still serves.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "instances over FUSE"

ok "uksd --daemon returns once it serves" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
I=$T/instances
# errno_of CMD...: the errno text of a failing command (C locale)
errno_of() { LC_ALL=C "$@" 2>&1 >/dev/null | sed 's/.*: //'; }

ok "mkdir makes an instance; ls instances shows it" -- bash -c "
	mkdir '$I/foo' && [ \"\$(ls '$I')\" = foo ] && [ \"\$(stat -c %a '$I/foo')\" = 755 ]"
ok "the instance has the kernel's files: the top level's but the top-only ones" -- bash -c "
	top=\$(ls '$T' | tr '\n' ' ') inst=\$(ls '$I/foo' | tr '\n' ' ')
	for f in README available_events dynamic_events instances saved_cmdlines saved_cmdlines_size saved_tgids; do
		[[ \" \$top\" == *\" \$f \"* ]] && [[ \" \$inst\" != *\" \$f \"* ]] || exit 1
	done
	for f in available_tracers buffer_size_kb buffer_total_size_kb current_tracer error_log events \
		 options per_cpu set_event set_event_pid trace trace_clock trace_marker trace_options \
		 trace_pipe tracing_on; do
		[[ \" \$inst\" == *\" \$f \"* ]] || exit 1
	done
	[ -e '$I/foo/events/kmem/kmalloc/enable' ] && [ -e '$I/foo/per_cpu/cpu0/trace_pipe' ] &&
	! ls '$I/foo/options' | grep -qx record-cmd && ls '$T/options' | grep -qx record-cmd"
ok "the instance's buffer and switches are its own" -- bash -c "
	cd '$I/foo' && echo 'only in foo' > trace_marker && grep -q 'tracing_mark_write: only in foo\$' trace &&
	! grep -q 'only in foo' '$T/trace' && echo 0 > tracing_on && [ \"\$(cat tracing_on)\" = 0 ] &&
	[ \"\$(cat '$T/tracing_on')\" = 1 ] && echo 1 > tracing_on &&
	echo 1 > events/kmem/kmalloc/enable && [ \"\$(cat '$T/events/kmem/kmalloc/enable')\" = 0 ] &&
	echo 0 > events/kmem/kmalloc/enable"
ok "mkdir of an existing instance is EEXIST" -- \
	test "$(errno_of mkdir "$I/foo")" = "File exists"
ok "mkdir inside an instance is EPERM" -- \
	test "$(errno_of mkdir "$I/foo/sub")" = "Operation not permitted"
ok "rmdir of an instance's directory is EPERM" -- \
	test "$(errno_of rmdir "$I/foo/events")" = "Operation not permitted"
ok "rmdir of no instance is ENOENT" -- \
	test "$(errno_of rmdir "$I/nothing")" = "No such file or directory"
ok "a name past NAME_MAX is ENAMETOOLONG; 255 bytes is a name" -- bash -c "
	n=\$(printf 'a%.0s' {1..255}) && mkdir '$I/'\$n && rmdir '$I/'\$n &&
	[ \"\$(LC_ALL=C mkdir '$I/'\${n}a 2>&1 | sed 's/.*: //')\" = 'File name too long' ]"
ok "odd names are names (spaces, dashes, colons, UTF-8, a newline)" -- bash -c "
	for n in 'a b' -x a:b 'été' \$'new\nline' '*'; do
		mkdir -- '$I/'\"\$n\" && [ \"\$(cat -- '$I/'\"\$n\"/tracing_on)\" = 1 ] &&
		rmdir -- '$I/'\"\$n\" || exit 1
	done; [ -z \"\$(ls '$I' | grep -vx foo)\" ]"
ok "rmdir is EBUSY while a file of the instance is open, then succeeds" -- bash -c "
	exec 3< '$I/foo/trace_pipe' &&
	[ \"\$(LC_ALL=C rmdir '$I/foo' 2>&1 | sed 's/.*: //')\" = 'Device or resource busy' ] &&
	exec 3<&- && rmdir '$I/foo' && [ ! -e '$I/foo' ] && [ -z \"\$(ls '$I')\" ]"
ok "rmdir right after a file of the instance was read and closed succeeds (FLUSH at close)" -- bash -c "
	cd '$I' && for _ in \$(seq 40); do
		mkdir bar && cat bar/trace > /dev/null && echo 1 > bar/events/kmem/kfree/enable &&
		rmdir bar || exit 1
	done; [ -z \"\$(ls)\" ]"

# instance.tc: five loops make and remove x, y, z while ls -lR walks the tree.
slam() { for _ in $(seq 30); do mkdir x; mkdir y; mkdir z; rmdir x; rmdir y; rmdir z; done 2>/dev/null; }
ok "five mkdir/rmdir loops and ls -lR at once leave a clean, working tree" -- bash -c "
	cd '$I' && $(declare -f slam)
	slam & slam & slam & slam & slam & for _ in 1 2 3; do ls -lR > /dev/null 2>&1; done; wait
	mkdir x y z && ls x y z > /dev/null && rmdir x y z && [ -z \"\$(ls)\" ]"

# instance-event.tc: mkdir/rmdir foo while others enable an event in it and read its trace.
ok "enabling an event and reading trace while foo comes and goes" -- bash -c "
	cd '$I'
	(for _ in \$(seq 60); do mkdir foo; rmdir foo; done 2>/dev/null) & a=\$!
	(for _ in \$(seq 100); do echo 1 > foo/events/kmem/kmalloc/enable; done 2>/dev/null) &
	(for _ in \$(seq 100); do cat foo/trace > /dev/null 2>&1; done) &
	wait
	rmdir foo 2>/dev/null; mkdir foo && ls foo > /dev/null && rmdir foo && [ ! -d foo ] &&
	[ \"\$(cat '$T/events/kmem/kmalloc/enable')\" = 0 ]"
ok "uksd still serves" -- bash -c "kill -0 \$(cat '$pidf') && cat '$T/tracing_on' > /dev/null"
tap_done
