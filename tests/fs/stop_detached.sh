#!/usr/bin/env bash
# SIGTERM stops uksd even when its mount cannot be unmounted: in a private
# mount namespace the mount is bound elsewhere and the original lazily
# unmounted, so the FUSE connection outlives the mount point.  uksd must
# exit anyway, and the bind mount then answers ENOTCONN (the connection
# was aborted), as after a crash.
set -u
. "$(dirname "$0")/uksd.bash"
need_fuse "stopping with a detached mount"
if [ "$(id -u)" != 0 ] || ! unshare -m --propagation private true 2>/dev/null; then
	skip "SIGTERM with the mount point detached" "needs root and unshare -m"
	tap_done; exit
fi

mkdir -p "$mnt" "$tmp/bind"
ok "SIGTERM with only a bind mount left: uksd exits, the bind mount is ENOTCONN" -- \
	unshare -m --propagation private bash -c '
	uksd=$1 mnt=$2 bind=$3 pidf=$4
	"$uksd" --daemon --no-socket --mount "$mnt" --pid-file "$pidf" || exit 1
	pid=$(cat "$pidf")
	mount --bind "$mnt" "$bind" && [ -e "$bind/sys/kernel/tracing/trace" ] &&
	umount -l "$mnt" && ! grep -q " $mnt " /proc/self/mounts || { kill -KILL $pid; exit 1; }
	kill -TERM $pid
	for i in $(seq 100); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
	if kill -0 $pid 2>/dev/null; then
		echo "uksd still runs 10 s after SIGTERM"; kill -KILL $pid; umount -l "$bind"; exit 1
	fi
	err=$(stat "$bind/sys" 2>&1); echo "$err"; umount -l "$bind"
	echo "$err" | grep -q "Transport endpoint is not connected"' \
	_ "$uksd" "$mnt" "$tmp/bind" "$pidf"
tap_done
