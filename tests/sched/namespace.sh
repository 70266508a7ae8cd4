#!/usr/bin/env bash
# What lib/sched puts into libuks: every global it defines is uks_* (and
# declared in include/uks/) or __uks_sched_*, and the MAP_DENYWRITE checker
# (tools/abi-check/, linked into the uks program only) is in neither
# libuks.a nor libuks.so nor the public headers.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
echo "TAP version 13"
[ -f "$O/libuks.a" ] && [ -e "$O/libuks.so" ] || { echo "1..0 # SKIP $O/libuks.a or libuks.so not built"; exit 77; }

# "member symbol" for every global the lib/sched objects of libuks.a define
members=$(for c in lib/sched/*.c; do basename "$c" .c; done | sed 's/$/.o/' | tr '\n' ' ')
sched_syms=$(nm -g --defined-only "$O/libuks.a" 2>/dev/null | awk -v m=" $members" '
	/:$/ { cur = substr($0, 1, length($0) - 1); next }
	NF == 3 && index(m, " " cur " ") { print cur, $3 }')

ok "libuks.a holds the lib/sched objects ($members)" -- test -n "$sched_syms"
ok "every global lib/sched defines is uks_* or __uks_sched_*" \
	-- bash -c "! grep -vE ' (uks_|__uks_sched_)' <<<'$sched_syms'"
ok "every uks_* lib/sched defines is declared in include/uks/" -- bash -c '
	for s in $(awk "\$2 ~ /^uks_/ { print \$2 }" <<<"$1"); do
		grep -qw "$s" include/uks/*.h || { echo "$s: not declared"; exit 1; }
	done' _ "$sched_syms"
ok "libuks.a defines none of the checker's names" \
	-- bash -c "! nm -g --defined-only '$O/libuks.a' | grep -E ' (uks_denywrite|uks_abi_|dw_|denywrite_|abi_)'"
ok "libuks.so exports none of the checker's names" \
	-- bash -c "! nm -D --defined-only '$O/libuks.so' | grep -E ' (uks_denywrite|uks_abi_|dw_|denywrite_|abi_)'"
ok "the public headers and lib/libuks.map name no checker API" \
	-- bash -c "! grep -nE 'uks_denywrite|uks_abi_' include/uks/*.h lib/libuks.map"
if [ -x "$O/uks" ]; then
	ok "the uks program exports no checker name" \
		-- bash -c "! nm -D --defined-only '$O/uks' | grep -E ' (dw_|denywrite_|abi_)'"
else
	skip "the uks program exports no checker name" "$O/uks not built"
fi
tap_done
