#!/usr/bin/env bash
# Real builds in scratch directories: clang is warning-free, the shared
# library exports only versioned uks_ symbols, public headers stand alone,
# header changes rebuild their users, config.h reflects pkg-config, and
# `make install` yields a library that pkg-config users can link.
set -u
. "$(dirname "$0")/../tap.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"

if command -v clang >/dev/null; then
	ok "make CC=clang WERROR=1 builds everything without a warning" \
		-- bash -c "make -s -j$(nproc) O='$tmp/clang' CC=clang WERROR=1 all tests >'$tmp/clang.log' 2>&1 && ! grep -q 'warning:' '$tmp/clang.log'"
else
	skip "make CC=clang" "clang not installed (scripts/deps.sh installs it)"
fi

make -s -j"$(nproc)" O="$tmp/gcc" CC=gcc all >"$tmp/gcc.log" 2>&1
ok "gcc build succeeds" -- test -e "$tmp/gcc/libuks.so"
syms=$(nm -D --defined-only "$tmp/gcc/libuks.so" | awk '$2 == "T" || $2 == "D" || $2 == "B" {print $3}')
ok "libuks.so exports some functions" -- test -n "$syms"
ok "every exported symbol is uks_* at version UKS_0.1" \
	-- bash -c "! grep -vE '^uks_[a-z0-9_]+@@UKS_0\.1$' <<<'$syms'"
ok "internal helpers stay hidden" -- bash -c "! grep -q bitmap <<<'$syms'"
ok "soname is libuks.so.0" -- bash -c "readelf -d '$tmp/gcc/libuks.so' | grep -q 'SONAME.*libuks.so.0'"

for h in include/uks/*.h; do
	printf '#include <uks/%s>\n' "$(basename "$h")" >"$tmp/h.c"
	ok "$h compiles standalone (gcc -Wall -Wextra -Werror)" \
		-- gcc -std=c99 -Wall -Wextra -Werror -I include -c "$tmp/h.c" -o /dev/null
	cp "$tmp/h.c" "$tmp/h.cc"
	ok "$h compiles standalone as C++" -- g++ -Wall -Werror -I include -c "$tmp/h.cc" -o /dev/null
done

before=$(stat -c %Y "$tmp/gcc/lib/core/cpumask.o")
sleep 1; cp -p include/uks/cpumask.h "$tmp/cpumask.h.bak"; touch include/uks/cpumask.h
make -s -j"$(nproc)" O="$tmp/gcc" CC=gcc all >/dev/null 2>&1
after=$(stat -c %Y "$tmp/gcc/lib/core/cpumask.o")
touch -r "$tmp/cpumask.h.bak" include/uks/cpumask.h
ok "touching a header rebuilds the objects that include it" -- test "$after" -gt "$before"
clock_before=$(stat -c %Y "$tmp/gcc/lib/core/clock.o")
sleep 1; make -s -j"$(nproc)" O="$tmp/gcc" CC=gcc all >/dev/null 2>&1
ok "a rebuild with nothing changed recompiles nothing (config.h kept)" \
	-- test "$(stat -c %Y "$tmp/gcc/lib/core/clock.o")" = "$clock_before"

for dep in FUSE3:fuse3 LIBURING:liburing LIBPNG:libpng; do
	want=$(pkg-config --exists "${dep#*:}" && echo 1 || echo 0)
	ok "config.h: UKS_HAVE_${dep%%:*} is $want, as pkg-config says" \
		-- grep -qx "#define UKS_HAVE_${dep%%:*} $want" "$tmp/gcc/config.h"
done

make -s -j"$(nproc)" O="$tmp/gcc" CC=gcc install DESTDIR="$tmp/root" PREFIX=/opt/uks >/dev/null 2>&1
ok "make install puts headers, libraries, uks.pc, binaries and man pages" \
	-- test -f "$tmp/root/opt/uks/include/uks/uks.h" -a -f "$tmp/root/opt/uks/lib/libuks.a" \
		-a -L "$tmp/root/opt/uks/lib/libuks.so" -a -f "$tmp/root/opt/uks/lib/pkgconfig/uks.pc" \
		-a -x "$tmp/root/opt/uks/bin/uks" -a -x "$tmp/root/opt/uks/sbin/uksd" \
		-a -f "$tmp/root/opt/uks/share/man/man1/uks.1"
export PKG_CONFIG_SYSROOT_DIR="$tmp/root" PKG_CONFIG_PATH="$tmp/root/opt/uks/lib/pkgconfig"
ok "an example builds against the installed tree via pkg-config" \
	-- bash -c "gcc -Wall -Werror -o '$tmp/ex' examples/cpulist.c \$(pkg-config --cflags --libs uks) && LD_LIBRARY_PATH='$tmp/root/opt/uks/lib' '$tmp/ex' '0-2,5' | grep -qx 'weight 4: 0-2,5'"
tap_done
