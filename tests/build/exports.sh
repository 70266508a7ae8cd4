#!/usr/bin/env bash
# What the libraries export, name by name: libuks.so exactly the functions
# and variables <uks/*.h> declares, listed one by one in lib/libuks.map (no
# wildcards); libuks.a nothing global but those and __uks_* internals (and
# the ODR indicators AddressSanitizer adds for globals); the
# preload and the DAMON agent only what their maps name.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
echo "TAP version 13"
for f in libuks.so libuks.a libuks-malloc.so libuks-damon-agent.so; do
	[ -e "$O/$f" ] || { echo "1..0 # SKIP $O/$f not built"; exit 77; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

python3 scripts/public-symbols.py | awk '{print $2}' | sort -u >"$tmp/declared"
# The map's names: what sits between "global:" and "local:", comments dropped.
sed -e 's:/\*.*\*/::' lib/libuks.map | awk '/global:/ {g = 1; next} /local:/ {g = 0} g' |
	tr -d ' \t;' | grep . | sort >"$tmp/listed"
nm -D --defined-only "$O/libuks.so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u \
	>"$tmp/so"
nm -g --defined-only "$O/libuks.a" | awk 'NF == 3 {print $3}' | sort -u >"$tmp/a"
# exported_by LIB: the dynamic symbols of LIB that are not the version node
exported_by() { nm -D --defined-only "$1" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u; }
map_globals() { sed -e 's:/\*.*\*/::' "$1" | awk '/global:/ {g = 1; next} /local:/ {g = 0} g' |
		tr -d ' \t;' | grep . | sort; }

ok "<uks/*.h> declares some functions" -- test -s "$tmp/declared"
ok "lib/libuks.map names each symbol (no wildcard in its global list)" \
	-- bash -c "! grep -n '[*?]' '$tmp/listed'"
ok "the map lists each symbol once" -- bash -c "! uniq -d '$tmp/listed' | grep ."
ok "the map lists exactly what the headers declare" -- diff "$tmp/declared" "$tmp/listed"
ok "libuks.so exports exactly the map's list" -- diff "$tmp/listed" "$tmp/so"
ok "every symbol is at version UKS_0.1" \
	-- bash -c "nm -D --defined-only '$O/libuks.so' | awk '\$2 != \"A\" {print \$3}' | grep -v '@@UKS_0\.1\$' | (! grep .)"
ok "libuks.a defines nothing global beyond the public list and __uks_* internals" \
	-- bash -c "comm -23 '$tmp/a' '$tmp/listed' | grep -v '^__uks_[a-z0-9]' | grep -v '^__odr_asan[.]' | (! grep .)"
ok "the preload exports only what lib/malloc/preload.map names" \
	-- bash -c "comm -23 <($(declare -f exported_by); exported_by '$O/libuks-malloc.so') <($(declare -f map_globals); map_globals lib/malloc/preload.map) | (! grep .)"
ok "the DAMON agent exports only what its map names" \
	-- bash -c "comm -23 <($(declare -f exported_by); exported_by '$O/libuks-damon-agent.so') <($(declare -f map_globals); map_globals lib/damon/self/agent/agent.map) | (! grep .)"
tap_done
