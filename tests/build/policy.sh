#!/usr/bin/env bash
# The build policy of Linux 5.15, proven from the commands make would run:
#   WERROR defaults to COMPILE_TEST (seed 006); WERROR=0 wins; -Wno-main for
#   gcc only, found by probing the compiler, not by its name (seed 007);
#   ZERO_CALL_USED_REGS=1 where supported; quiet rules and V=1.
set -u
. "$(dirname "$0")/../tap.bash"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
obj=lib/core/log.o

cmd() {	# the compile command for one object under the given make variables
	make -s -n -B O="$tmp/o" V=1 "$@" "$tmp/o/$obj" 2>/dev/null | grep -- ' -c lib/core/log.c'
}
has() { local f=$1; shift; cmd "$@" | grep -qw -- "$f"; }
lacks() { local f=$1; shift; cmd "$@" | grep -q . && ! cmd "$@" | grep -qw -- "$f"; }

echo "TAP version 13"
ok "default build has no -Werror"            -- lacks -Werror
ok "COMPILE_TEST=1 turns on -Werror"         -- has -Werror COMPILE_TEST=1
ok "WERROR=1 turns on -Werror"               -- has -Werror WERROR=1
ok "WERROR=0 wins over COMPILE_TEST=1"       -- lacks -Werror COMPILE_TEST=1 WERROR=0
ok "COMPILE_TEST=0 has no -Werror"           -- lacks -Werror COMPILE_TEST=0
ok "-Wall -Wextra always on"                 -- bash -c "$(declare -f cmd); tmp=$tmp obj=$obj; cmd | grep -q -- '-Wall -Wextra'"
ok "gcc gets -Wno-main"                      -- has -Wno-main CC=gcc
ok "clang gets no -Wno-main"                 -- lacks -Wno-main CC=clang

# Name-independence: a gcc named like clang, and a clang named like gcc.
mkdir -p "$tmp/bin"
printf '#!/bin/sh\nexec gcc "$@"\n' >"$tmp/bin/clang-lookalike"
printf '#!/bin/sh\nexec clang "$@"\n' >"$tmp/bin/gcc-lookalike"
# A gcc that rejects -Wno-main and -fzero-call-used-regs: cc-option must notice.
printf '#!/bin/sh\nfor a; do case $a in -Wno-main|-fzero-call-used-regs=*) echo "unknown $a" >&2; exit 1;; esac; done\nexec gcc "$@"\n' >"$tmp/bin/gcc-old"
chmod +x "$tmp/bin/"*
ok "gcc under a clang-like name still gets -Wno-main"  -- has -Wno-main CC="$tmp/bin/clang-lookalike"
ok "clang under a gcc-like name gets no -Wno-main"     -- lacks -Wno-main CC="$tmp/bin/gcc-lookalike"
ok "a gcc that rejects -Wno-main does not get it"      -- lacks -Wno-main CC="$tmp/bin/gcc-old"

ok "ZERO_CALL_USED_REGS=1 adds -fzero-call-used-regs=used-gpr (gcc 12)" \
	-- has -fzero-call-used-regs=used-gpr ZERO_CALL_USED_REGS=1 CC=gcc
ok "not added by default"                    -- lacks -fzero-call-used-regs=used-gpr CC=gcc
ok "not added where the compiler lacks it"   -- lacks -fzero-call-used-regs=used-gpr ZERO_CALL_USED_REGS=1 CC="$tmp/bin/gcc-old"
ok "SANITIZE=address,undefined adds -fsanitize" -- has -fsanitize=address,undefined SANITIZE=address,undefined
ok "header dependencies are generated (-MMD -MP)" -- has -MMD

quiet=$(make -s -n -B O="$tmp/o" "$tmp/o/$obj" 2>/dev/null)
ok "quiet rule prints '  CC      <object>'"  -- grep -q "echo \"  CC      $tmp/o/$obj\"" <<<"$quiet"
ok "V=1 prints the full command"            -- bash -c "make -s -n -B O='$tmp/o' V=1 '$tmp/o/$obj' | grep -q '^gcc\|^cc'"

# The rule has an effect: gcc 12's -Wall warns about an object named main
# ('main' is usually a function), and the project's flags silence it.
printf 'void *main;\n' >"$tmp/main.c"
ok "gcc -Wall warns about an object named 'main' (so -Wno-main matters)" \
	-- bash -c "gcc -Wall -c '$tmp/main.c' -o /dev/null 2>&1 | grep -q Wmain"
ok "the project's gcc flags compile it without warnings under -Werror" \
	-- bash -c "flags=\$(make -s -n -B O='$tmp/o' V=1 COMPILE_TEST=1 CC=gcc '$tmp/o/$obj' | grep -- ' -c lib/core/log.c' | sed 's/^[^ ]* //; s/ -c lib.*//; s/-MMD -MP//; s/-DUKS_VERSION=[^ ]*//'); gcc \$flags -c '$tmp/main.c' -o /dev/null 2>&1 | (! grep -q .)"
tap_done
