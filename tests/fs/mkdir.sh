#!/usr/bin/env bash
# mkdir(2) and rmdir(2) over FUSE reach the tree that owns the directory,
# with the kernel's answers where it allows neither: EPERM in a directory
# without mkdir/rmdir operations (tracefs's events/, sysfs), EEXIST for a
# name that exists, ENOENT for rmdir of nothing, ENOTDIR for a file.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "mkdir and rmdir over FUSE"

ok "uksd --daemon returns once it serves" -- \
	"$uksd" --daemon --mount "$mnt" --socket "$sock" --pid-file "$pidf"
T=$mnt/sys/kernel/tracing
# errno_of CMD...: the errno text of a failing command (C locale)
errno_of() { LC_ALL=C "$@" 2>&1 >/dev/null | sed 's/.*: //'; }

ok "mkdir in events/ is EPERM" -- \
	test "$(errno_of mkdir "$T/events/newdir")" = "Operation not permitted"
ok "mkdir in sys/kernel/slab is EPERM" -- \
	test "$(errno_of mkdir "$mnt/sys/kernel/slab/newcache")" = "Operation not permitted"
ok "mkdir of an existing directory is EEXIST" -- \
	test "$(errno_of mkdir "$T/events")" = "File exists"
ok "rmdir of events/ is EPERM" -- \
	test "$(errno_of rmdir "$T/events")" = "Operation not permitted"
ok "rmdir of nothing is ENOENT" -- \
	test "$(errno_of rmdir "$T/nothing")" = "No such file or directory"
ok "rmdir of a file is ENOTDIR" -- \
	test "$(errno_of rmdir "$T/trace")" = "Not a directory"
ok "the tree is unchanged" -- test -d "$T/events" -a ! -e "$T/events/newdir"
tap_done
