#!/usr/bin/env bash
# Where uks and uksd look for and put the socket as a user without
# XDG_RUNTIME_DIR (a private /tmp/uks-UID, refused when anyone else could
# have made or entered it), and what they say when the socket, the
# directory or /dev/fuse cannot be used.  Runs them as a uid of its own.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
uks=$(realpath "$O/uks") uksd=$(realpath "$O/uksd")
[ -x "$uks" ] && [ -x "$uksd" ] || { echo "1..0 # SKIP uks, uksd not built"; exit 77; }
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (runs as another uid)"; exit 77; fi
command -v setpriv >/dev/null || { echo "1..0 # SKIP no setpriv"; exit 77; }

# A uid no account and no other test uses, so /tmp/uks-$uid is ours alone.
for _ in $(seq 50); do
	uid=$((61000 + RANDOM % 4000))
	! getent passwd "$uid" >/dev/null && [ ! -e "/tmp/uks-$uid" ] && break
done
rt=/tmp/uks-$uid
tmp=$(mktemp -d)
chmod 755 "$tmp"
rootpid=
cleanup() {
	[ -n "$rootpid" ] && kill "$rootpid" 2>/dev/null
	rm -rf "$rt" "$tmp"
}
trap cleanup EXIT
as_user() { setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		env -u XDG_RUNTIME_DIR -u UKS_SOCKET "$@"; }

# --- the private directory
fresh() {
	local err
	err=$(as_user "$uksd" --no-fuse --once 2>&1) || { echo "$err"; return 1; }
	echo "$err"
	[ "$(stat -c '%u %a' "$rt")" = "$uid 700" ] || { stat "$rt"; return 1; }
	grep -q "serving on $rt/uks.sock " <<<"$err"
}
ok "no XDG_RUNTIME_DIR: uksd makes /tmp/uks-UID mode 0700 and serves uks.sock there" -- fresh
no_daemon() {
	local err
	err=$(as_user "$uks" cat sys/kernel/tracing/trace 2>&1)
	[ $? = 3 ] && grep -q "no uksd answers on $rt/uks.sock" <<<"$err" || { echo "$err"; return 1; }
}
ok "uks looks in the same place: no uksd answers on /tmp/uks-UID/uks.sock, exit 3" -- no_daemon

refused() {	# refused PROBLEM: uksd and uks both refuse $rt and name it and PROBLEM
	local err
	err=$(as_user "$uksd" --no-fuse --once 2>&1)
	[ $? = 1 ] || { echo "uksd served: $err"; return 1; }
	grep -qF "uksd: $rt: $1" <<<"$err" || { echo "$err"; return 1; }
	[ ! -e "$rt/uks.sock" ] || { echo "made $rt/uks.sock"; return 1; }
	err=$(as_user "$uks" cat sys/kernel/tracing/trace 2>&1)
	[ $? = 3 ] || { echo "uks: exit status not 3: $err"; return 1; }
	grep -qF "uks: $rt: $1" <<<"$err" || { echo "$err"; return 1; }
}
chmod 777 "$rt"
ok "/tmp/uks-UID open to others (0777): refused, saying so" -- refused "mode 0777 lets other users in"
rm -rf "$rt"; mkdir -m 700 "$rt"	# root's, as another user could have made it
ok "/tmp/uks-UID made first by another user: refused, naming its owner" -- \
	refused "owned by uid 0, not by uid $uid"
rm -rf "$rt"; mkdir -m 700 "$tmp/elsewhere"; chown "$uid" "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$rt"
ok "/tmp/uks-UID a symbolic link: refused" -- refused "a symbolic link, not a directory"
rm -f "$rt"; touch "$rt"
ok "/tmp/uks-UID a file: refused" -- refused "not a directory"
rm -f "$rt"

# --- another user's socket: named, exit 3 (was "Permission denied", exit 1)
"$uksd" --daemon --no-fuse --socket "$tmp/root.sock" --pid-file "$tmp/root.pid" 2>/dev/null &&
	rootpid=$(cat "$tmp/root.pid")
ok "root's uksd answers root" -- "$uks" -S "$tmp/root.sock" ls sys/kernel/tracing
not_yours() {
	local err
	err=$(as_user "$uks" -S "$tmp/root.sock" cat sys/kernel/tracing/trace 2>&1)
	[ $? = 3 ] || { echo "exit status not 3: $err"; return 1; }
	grep -qF "uks cat: cannot connect to $tmp/root.sock: Permission denied" <<<"$err" ||
		{ echo "$err"; return 1; }
}
ok "another user's socket: uks names it, exit 3" -- not_yours

# --- what uksd says when FUSE cannot be had (/dev/fuse replaced privately)
fuse_msg() {	# fuse_msg (denied|missing) WANT
	local err
	mkdir -p "$tmp/m" && chown "$uid" "$tmp/m"
	err=$(unshare -m bash -c '
		mount -t tmpfs none /dev || exit 99
		[ "$1" = denied ] && { touch /dev/fuse; chmod 600 /dev/fuse; }
		shift; exec "$@"' _ "$1" setpriv --reuid="$uid" --regid="$uid" --clear-groups \
		"$uksd" --no-socket --mount "$tmp/m" --once 2>&1)
	case $? in 99) echo "cannot mount a tmpfs on /dev here"; return 1;; 1) ;;
		*) echo "not refused: $err"; return 1;; esac
	grep -qF "$2" <<<"$err" || { echo "$err"; return 1; }
}
if ! grep -q 'UKS_HAVE_FUSE3 1' "$O/config.h"; then
	skip "FUSE messages" "built without libfuse3"
	skip "FUSE messages" "built without libfuse3"
elif ! unshare -m true 2>/dev/null; then
	skip "FUSE messages" "no mount namespaces here"
	skip "FUSE messages" "no mount namespaces here"
else
	ok "/dev/fuse not accessible: says so, not 'no /dev/fuse'" -- \
		fuse_msg denied "FUSE is not available (/dev/fuse: Permission denied)"
	ok "no /dev/fuse: says so" -- fuse_msg missing "FUSE is not available (no /dev/fuse)"
fi
tap_done
