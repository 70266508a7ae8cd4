#!/usr/bin/env bash
# scripts/damon-ns.sh: run a command in a private mount namespace where
# /sys/kernel/mm/damon is a fresh uksd's DAMON sysfs tree, where DAMON's
# user-space tool (damo) looks for it.
#
#   scripts/damon-ns.sh -- CMD [ARG...]     e.g. -- python3 damo/damo start $pid
#
# Needs root and FUSE; O selects the build (default build/).  In the
# namespace uksd serves uksfs, its sys/kernel/mm/damon is bind-mounted on
# /sys/kernel/mm/damon (over the kernel's, if it has one: the kernel's
# DAMON is not touched), its tracing directory on /sys/kernel/tracing (over
# a tracefs mount, which damo looks for in /proc/mounts), and
# the uksfs mount itself is detached.  UKS_SOCKET names the session's uksd.
# Exit status: CMD's.
set -eu
O=${O:-build}
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || { echo "usage: $0 -- CMD [ARG...]" >&2; exit 2; }
uksd=$(realpath "$O/uksd")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

unshare -m --propagation private -- env uksd="$uksd" scratch="$scratch" bash -c '
set -eu
mkdir -p "$scratch/mnt" "$scratch/home"
"$uksd" --daemon --mount "$scratch/mnt" --socket "$scratch/uks.sock" \
	--pid-file "$scratch/uksd.pid" >/dev/null
if [ ! -d /sys/kernel/mm/damon ]; then	# a kernel without DAMON: make the mount point
	mkdir -p "$scratch/mmdir/damon"
	mount --bind "$scratch/mmdir" /sys/kernel/mm
fi
mount --bind "$scratch/mnt/sys/kernel/mm/damon" /sys/kernel/mm/damon
# damo wants a mount of type tracefs: a real one under the bind mount
# (lookups reach the top mount, uksfs), as scripts/tracing-ns.sh --tracefs
grep -q " /sys/kernel/tracing tracefs " /proc/self/mounts ||
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
mount --bind "$scratch/mnt/sys/kernel/tracing" /sys/kernel/tracing
umount -l "$scratch/mnt"
set +e
HOME=$scratch/home TMPDIR=$scratch UKS_SOCKET=$scratch/uks.sock "$@"
rc=$?
kill "$(cat "$scratch/uksd.pid")" 2>/dev/null
exit $rc
' damon-ns "$@"
