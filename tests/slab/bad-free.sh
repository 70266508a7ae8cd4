#!/usr/bin/env bash
# libuks-malloc.so given a pointer that is not the start of a live
# allocation: each run of tests/slab/bad-free.c passes one to free() or
# realloc() (inside an object, past a slab's last object, inside a page
# run or a mapping of its own, on the stack, in someone else's mapping, a
# wild address, a double free) and must die of SIGABRT with one line
# naming the pointer and what it points at, as glibc's free() aborts with
# "free(): invalid pointer".  Under UKS_SLUB_DEBUG=FZPU slub_debug reports
# first, in the kernel's format.  That valid programs still run:
# tests/slab/preload.sh.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
so=$(realpath "$O/libuks-malloc.so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if ldd "$so" | grep -q -E 'libasan|libubsan'; then
	skip "bad frees under LD_PRELOAD" "sanitizer build of libuks-malloc.so"
	tap_done; exit
fi
ulimit -c 0
${CC:-cc} -O2 -o "$tmp/bad-free" tests/slab/bad-free.c

# dies CASE ERE [VAR=VALUE...]: the case, under the preload with those
# settings, dies of SIGABRT and its stderr has a line matching ERE, where
# @P@ stands for the pointer it printed (0x...) and @H@ for its hex digits.
dies() {
	local c=$1 re=$2 rc p
	shift 2
	env "$@" LD_PRELOAD="$so" "$tmp/bad-free" "$c" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	p=$(head -n 1 "$tmp/out")
	re=${re//@P@/$p}
	re=${re//@H@/${p#0x}}
	tail -n 5 "$tmp/out" "$tmp/err"		# shown on failure
	[ "$rc" = 134 ] || { echo "exit status $rc, not 134 (SIGABRT)"; return 1; }
	grep -q -E -- "$re" "$tmp/err" || { echo "no line matching: $re"; return 1; }
}

F='^uks-malloc: free\(\): invalid pointer @P@'
R='^uks-malloc: realloc\(\): invalid pointer @P@'
heap="\(not in this malloc's heap\)$"
ok "free() of a pointer 32 bytes into a 256-byte object aborts" -- \
	dies interior "$F \(32 bytes into the kmalloc-256 object at 0x[0-9a-f]+\)$"
ok "free() inside a 32-byte object (a slab with homes) aborts" -- \
	dies interior-small "$F \(16 bytes into the kmalloc-32 object at 0x[0-9a-f]+\)$"
ok "free() of a slot start past a slab's last object aborts" -- \
	dies past-last "$F \(past the last object of a kmalloc-2336 slab\)$"
ok "free() of a stack address aborts" -- dies stack "$F $heap"
ok "free() of another mmap()ed page aborts" -- dies mmap "$F $heap"
ok "free() of a wild pointer aborts" -- dies wild "$F $heap"
ok "free() of ZERO_SIZE_PTR (the preload never hands it out) aborts" -- dies zero-size "$F $heap"
ok "a double free of a small object, back to back, aborts" -- \
	dies double-small '^uks-malloc: free\(\): double free @P@ \(the kmalloc-64 object freed last\)$'
ok "a double free of a 1 MiB block aborts" -- \
	dies double-1m "$F \(in free pages: freed already\?\)$"
ok "free() inside a page run aborts" -- \
	dies large-interior "$F \(4096 bytes into the 40000-byte block at 0x[0-9a-f]+\)$"
ok "free() inside a block with a mapping of its own aborts" -- \
	dies huge-interior "$F \(4096 bytes into the 8388608-byte block at 0x[0-9a-f]+\)$"
ok "realloc() of an interior pointer aborts" -- \
	dies realloc-interior "$R \(32 bytes into the kmalloc-256 object at 0x[0-9a-f]+\)$"
ok "realloc() of a stack address aborts" -- dies realloc-stack "$R $heap"

# slub_debug's F reports in 5.15's words, then the preload aborts.
D=(UKS_SLUB_DEBUG=FZPU)
N='^uks-malloc: free\(\): object not freed @P@ \(slub_debug found it bad: see the report above\)$'
ok "FZPU: an interior pointer is 'Invalid object pointer'" -- \
	dies interior 'BUG kmalloc-256 \(Not tainted\): Invalid object pointer 0x0*@H@$' "${D[@]}"
ok "FZPU: ... and the free aborts" -- dies interior "$N" "${D[@]}"
ok "FZPU: a double free back to back is 'Object already free'" -- \
	dies double-small 'BUG kmalloc-64 \(Not tainted\): Object already free$' "${D[@]}"
ok "FZPU: ... and the free aborts" -- dies double-small "$N" "${D[@]}"
ok "FZPU: a double free with another free between is caught too" -- \
	dies double-small-aba 'BUG kmalloc-64 \(Not tainted\): Object already free$' "${D[@]}"
ok "FZPU: a stack address aborts" -- dies stack "$F $heap" "${D[@]}"
ok "FZPU: a double free of a 1 MiB block aborts" -- \
	dies double-1m "$F \(in free pages: freed already\?\)$" "${D[@]}"
ok "FZPU: an overwritten red zone is reported and the program goes on, as in the kernel" -- bash -c "
	env ${D[*]} LD_PRELOAD='$so' '$tmp/bad-free' overflow >'$tmp/out' 2>'$tmp/err'; rc=\$?
	tail -n 3 '$tmp/out' '$tmp/err'; [ \$rc = 0 ] &&
	grep -q 'BUG kmalloc-32 (Not tainted): Right Redzone overwritten' '$tmp/err' &&
	grep -q 'FIX kmalloc-32: Object at 0x[0-9a-f]* not freed' '$tmp/err' &&
	grep -qx 'survived: the damaged object stays allocated: yes' '$tmp/out'"

# For comparison only, not a check: what glibc's malloc says.
for c in interior stack double-small realloc-interior; do
	rc=$( { "$tmp/bad-free" "$c" >/dev/null 2>"$tmp/err"; echo $?; } 2>/dev/null)
	echo "# glibc, $c: status $rc, $(tail -n 1 "$tmp/err")"
done
tap_done
