#!/usr/bin/env bash
# A setuid-root program linked with libuks, libuks-damon-agent.so or
# libuks-malloc.so and started by another user (AT_SECURE) must ignore the
# UKS_* settings of its caller: they name files it would create as root.
# Each setting is first shown to work for root (no AT_SECURE), so a
# library that reads it at all is seen.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}

if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP needs root (makes setuid programs)"; exit 77; fi
for b in secure_env secure_agent secure_malloc; do
	[ -x "$O/tests/cli/$b" ] || { echo "1..0 # SKIP $O/tests/cli/$b not built (make tests)"; exit 77; }
done
command -v setpriv >/dev/null || { echo "1..0 # SKIP no setpriv"; exit 77; }
if findmnt -n -o OPTIONS -T "$O" | tr ',' '\n' | grep -qx nosuid; then
	echo "1..0 # SKIP $O is on a nosuid filesystem"; exit 77
fi

dir=$(mktemp -d "$(realpath "$O")/tests/cli/suid.XXXXXX")
trap 'rm -rf "$dir"' EXIT
chmod 755 "$dir"
for b in secure_env secure_agent secure_malloc; do
	install -o root -g root -m 4755 "$O/tests/cli/$b" "$dir/$b"
done
vault=$dir/vault	# only root may create files here
mkdir -m 700 "$vault"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; }

# The agent opens UKS_DAMON_AGENT_OUT for writing in its constructor.
agent_root() {
	UKS_DAMON_AGENT_OUT=$vault/by-root "$dir/secure_agent" >/dev/null 2>&1
	[ -f "$vault/by-root" ] || { echo "root's run made no $vault/by-root"; return 1; }
}
agent_nobody() {
	local out
	out=$(UKS_DAMON_AGENT_OUT=$vault/by-nobody UKS_DAMON_AGENT_ATTRS="1 2 3 4 5" \
	      nobody "$dir/secure_agent" 2>&1)
	echo "$out"
	grep -qx 'euid 0' <<<"$out" || { echo "did not run setuid root"; return 1; }
	[ ! -e "$vault/by-nobody" ] || { echo "created $vault/by-nobody as root"; return 1; }
}
ok "libuks-damon-agent.so: UKS_DAMON_AGENT_OUT works for root" -- agent_root
ok "libuks-damon-agent.so: UKS_DAMON_AGENT_OUT ignored when setuid" -- agent_nobody

# An unreadable number is reported when read: the report shows the read.
malloc_check() {	# malloc_check root|nobody
	local out run=
	[ "$1" = nobody ] && run=nobody
	out=$(UKS_SLUB_MIN_ORDER=bogus UKS_SLUB_DEBUG=FZPU $run "$dir/secure_malloc" 2>&1)
	echo "$out"
	grep -qx 'euid 0' <<<"$out" || { echo "did not run setuid root"; return 1; }
	if [ "$1" = root ]; then
		grep -q 'UKS_SLUB_MIN_ORDER=bogus ignored' <<<"$out"
	else
		! grep -q 'UKS_SLUB' <<<"$out"
	fi
}
if ldd "$O/libuks-malloc.so" | grep -qE 'libasan|libubsan'; then
	# its malloc() is not the one that runs: the sanitizer's comes first
	skip "libuks-malloc.so: UKS_SLUB_MIN_ORDER read for root" "sanitizer build"
	skip "libuks-malloc.so: UKS_SLUB_* not read when setuid" "sanitizer build"
else
	ok "libuks-malloc.so: UKS_SLUB_MIN_ORDER read for root" -- malloc_check root
	ok "libuks-malloc.so: UKS_SLUB_* not read when setuid" -- malloc_check nobody
fi

# libuks: the fast path and the a32 state directory (where files are made).
default_fp=$("$dir/secure_env" | awk '$1 == "fastpath" { print $2 }')
want_fp=rt; [ "$default_fp" = rt ] && want_fp=cmpxchg16b
libuks_check() {	# libuks_check root|nobody
	local out run= fp=$want_fp st=$vault/a32
	[ "$1" = nobody ] && run=nobody fp=$default_fp st=/run/uks/a32
	out=$(UKS_SLUB_FASTPATH=$want_fp UKS_SLUB_MIN_ORDER=bogus UKS_A32_STATE=$vault/a32 \
	      XDG_RUNTIME_DIR=$vault $run "$dir/secure_env" 2>&1)
	echo "$out"
	grep -qx 'euid 0' <<<"$out" || { echo "did not run setuid root"; return 1; }
	grep -qx "fastpath $fp" <<<"$out" && grep -qx "a32_state $st" <<<"$out" || return 1
	if [ "$1" = root ]; then
		grep -q 'UKS_SLUB_MIN_ORDER=bogus ignored' <<<"$out"
	else
		! grep -q 'UKS_SLUB' <<<"$out"
	fi
}
ok "libuks: UKS_SLUB_FASTPATH, UKS_SLUB_MIN_ORDER, UKS_A32_STATE work for root" -- libuks_check root
ok "libuks: the same ignored when setuid" -- libuks_check nobody

tap_done
