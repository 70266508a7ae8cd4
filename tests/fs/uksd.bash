# Sourced by the uksfs shell tests (not a test: tests/run runs *.sh only).
# Sets O, uks, uksd, tmp, mnt, sock, pidf; cleans up at exit (kills the
# daemon and $extra_pids, unmounts, removes $tmp); need_fuse skips the
# rest of a test where FUSE cannot mount.
. "$(dirname "${BASH_SOURCE[0]}")/../tap.bash"
O=${O:-build}
uks=$(realpath "$O/uks") uksd=$(realpath "$O/uksd")
tmp=$(mktemp -d)
mnt=$tmp/mnt sock=$tmp/uks.sock pidf=$tmp/uksd.pid
extra_pids=
uksd_cleanup() {
	[ -n "$extra_pids" ] && kill $extra_pids 2>/dev/null
	[ -s "$pidf" ] && kill "$(cat "$pidf")" 2>/dev/null
	sleep 0.2
	fusermount3 -u "$mnt" 2>/dev/null
	rm -rf "$tmp"
}
trap uksd_cleanup EXIT
echo "TAP version 13"

need_fuse() {	# need_fuse WHAT: skip WHAT and end the test without FUSE
	if ! grep -q 'UKS_HAVE_FUSE3 1' "$O/config.h" || [ ! -w /dev/fuse ] ||
	   ! command -v fusermount3 >/dev/null; then
		skip "$1" "no libfuse3 build, /dev/fuse or fusermount3 (scripts/deps.sh installs fuse3)"
		tap_done; exit
	fi
}
