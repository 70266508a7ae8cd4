#!/usr/bin/env bash
# scripts/tracing-ns.sh: run a command in a private mount namespace where
# /sys/kernel/tracing is a fresh uksd's tracing directory, as the kernel's
# tracing tools look for it.
#
#   scripts/tracing-ns.sh [--tracefs] -- CMD [ARG...]
#
# Needs root (any uid 0, a user namespace too) and FUSE; O selects the
# build (default build/).  In the namespace:
#   - every tracefs and debugfs mount is detached; uksd serves uksfs with
#     the source name "tracefs", its tracing directory is bind-mounted on
#     /sys/kernel/tracing and the uksfs mount itself is detached, so the
#     first /proc/mounts line mentioning "tracefs" names the tracing
#     directory: how ftracetest finds it;
#   - with --tracefs, a real tracefs is mounted on /sys/kernel/tracing
#     first, under the bind mount: libtracefs (trace-cmd) accepts only a
#     mount of type tracefs, and lookups below it reach the top mount,
#     uksfs;
#   - /proc/sys/kernel/{sched_rt_runtime_us,ftrace_enabled,kptr_restrict},
#     which ftracetest and trace-cmd write, are shadowed by scratch copies,
#     so the host's values never change;
#   - CMD runs under `uks trace`, so the processes it starts belong to the
#     session: their forks, execs and syscalls are its sched:* and
#     syscalls:* events.  UKS_SOCKET names the session's uksd.
# Exit status: CMD's.
set -eu
O=${O:-build}
underlay=0
while [ $# -gt 0 ]; do
	case $1 in
	--tracefs) underlay=1; shift ;;
	--) shift; break ;;
	*) echo "usage: $0 [--tracefs] -- CMD [ARG...]" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: $0 [--tracefs] -- CMD [ARG...]" >&2; exit 2; }
uks=$(realpath "$O/uks") uksd=$(realpath "$O/uksd")
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

unshare -m --propagation private -- env uks="$uks" uksd="$uksd" scratch="$scratch" \
	underlay=$underlay bash -c '
set -eu
awk '\''$3 == "tracefs" || $3 == "debugfs" || $1 == "tracefs" { print $2 }'\'' /proc/self/mounts |
	sort -r | while read -r m; do umount -l "$m"; done
mkdir -p "$scratch/mnt" "$scratch/home" "$scratch/proc"
"$uksd" --daemon --fsname tracefs --mount "$scratch/mnt" --socket "$scratch/uks.sock" \
	--pid-file "$scratch/uksd.pid" >/dev/null
[ "$underlay" = 1 ] && mount -t tracefs nodev /sys/kernel/tracing
mount --bind "$scratch/mnt/sys/kernel/tracing" /sys/kernel/tracing
umount -l "$scratch/mnt"
for f in sched_rt_runtime_us ftrace_enabled kptr_restrict; do
	[ -e /proc/sys/kernel/$f ] || continue
	cat /proc/sys/kernel/$f > "$scratch/proc/$f"
	mount --bind "$scratch/proc/$f" /proc/sys/kernel/$f
done
set +e
HOME=$scratch/home TMPDIR=$scratch UKS_SOCKET=$scratch/uks.sock \
	"$uks" -S "$scratch/uks.sock" trace --every-syscall -- "$@"
rc=$?
kill "$(cat "$scratch/uksd.pid")" 2>/dev/null
exit $rc
' tracing-ns "$@"
