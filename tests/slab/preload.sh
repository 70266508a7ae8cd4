#!/usr/bin/env bash
# libuks-malloc.so runs real programs: python3, git, gcc compiling a file,
# a multithreaded program that forks, and one that asks glibc's heap
# questions (mallinfo2, malloc_trim, malloc_stats), each plain and under
# UKS_SLUB_DEBUG=FZPU (full slub_debug on every kmalloc cache).  Also:
# debugging really is on under the preload, and catches a heap overflow.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
so=$(realpath "$O/libuks-malloc.so")
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if ldd "$so" | grep -q -E 'libasan|libubsan'; then
	# A sanitizer runtime must be loaded first; it cannot be preloaded into
	# uninstrumented programs.  The regular build runs these checks.
	skip "real programs under LD_PRELOAD" "sanitizer build of libuks-malloc.so"
	tap_done; exit
fi

${CC:-cc} -O2 -pthread -o "$tmp/mt-alloc" tests/slab/mt-alloc.c
${CC:-cc} -O2 -Wno-deprecated-declarations -o "$tmp/heap-info" tests/slab/heap-info.c
cat >"$tmp/hello.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int main(void) { char *s = strdup("compiled under uks"); puts(s); free(s); return 0; }
C
cat >"$tmp/overflow.c" <<'C'
#include <stdlib.h>
int main(void) { volatile char *p = malloc(64); p[64] = 0x12; free((char *)p); return 0; }
C
${CC:-cc} -O0 -rdynamic -o "$tmp/overflow" "$tmp/overflow.c"
cat >"$tmp/huge.c" <<'C'
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	for (int shift = 36; shift <= 44; shift += 4) {
		void *p, *q = NULL;
		int e, r;

		errno = 0;
		p = malloc((size_t)1 << shift);
		e = errno;
		r = posix_memalign(&q, 1 << 21, (size_t)1 << shift);
		printf("2^%d: malloc %s errno %d, posix_memalign %d\n", shift, p ? "ok" : "NULL", e, r);
		free(p);
		free(q);
	}
	return 0;
}
C
${CC:-cc} -O0 -o "$tmp/huge" "$tmp/huge.c"
git init -q "$tmp/repo" && git -C "$tmp/repo" -c user.name=t -c user.email=t@t commit -q --allow-empty -m init

check_programs() {	# check_programs LABEL; env already set by the caller
	local label=$1
	ok "$label: python3 builds and hashes 50k objects" -- bash -c \
		"[ \"\$(python3 -c 'import hashlib, json
d = {str(i): [i] * (i % 50) for i in range(50000)}
print(hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12])')\" = \
		 \"\$(env -u LD_PRELOAD -u UKS_SLUB_DEBUG python3 -c 'import hashlib, json
d = {str(i): [i] * (i % 50) for i in range(50000)}
print(hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:12])')\" ]"
	ok "$label: python3 threads and subprocess" -- python3 -c '
import threading, subprocess
def work():
    x = [bytes(i % 200) for i in range(20000)]
    assert len(x) == 20000
ts = [threading.Thread(target=work) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
assert subprocess.run(["true"]).returncode == 0'
	ok "$label: git log, status and a commit" -- bash -c \
		"git -C '$tmp/repo' -c user.name=t -c user.email=t@t commit -q --allow-empty -m '$label' &&
		 git -C '$tmp/repo' log --oneline | grep -q '$label' && git -C '$tmp/repo' status --short"
	ok "$label: gcc compiles and links a file" -- bash -c \
		"gcc -O2 -o '$tmp/hello-$label' '$tmp/hello.c' && env -u LD_PRELOAD '$tmp/hello-$label' | grep -q 'compiled under uks'"
	ok "$label: multithreaded program with remote frees and fork" -- bash -c "'$tmp/mt-alloc' | grep -qx ok"
	ok "$label: mallinfo2/mallinfo follow the heap, malloc_trim gives it back, __libc_* names mix" -- \
		bash -c "'$tmp/heap-info' 2>'$tmp/stats-$label' | tee /dev/stderr | grep -qx ok"
	ok "$label: malloc_stats prints glibc's layout" -- \
		grep -q -E '^in use bytes += +[0-9]+$' "$tmp/stats-$label"
}

export LD_PRELOAD=$so
check_programs plain
ok "the allocator in use is uks (malloc_usable_size of 100 is the kmalloc-112 slot)" -- \
	python3 -c 'import ctypes; c = ctypes.CDLL(None); c.malloc.restype = ctypes.c_void_p
c.malloc_usable_size.argtypes = [ctypes.c_void_p]; assert c.malloc_usable_size(c.malloc(100)) == 112'

# The shim's size classes (lib/slab/kmalloc.c), written out here: every
# request from 1 to 8192 bytes gets the smallest one that holds it.
ok "every size from 1 to 8192 bytes gets the smallest class that holds it" -- \
	python3 -c 'import ctypes; c = ctypes.CDLL(None); c.malloc.restype = ctypes.c_void_p
c.malloc_usable_size.argtypes = [ctypes.c_void_p]; c.free.argtypes = [ctypes.c_void_p]
classes = list(range(16, 129, 16)) + [192, 256, 384, 512, 768, 1024, 1280, 1536, 1792, 2048,
	2336, 2720, 3264, 3632, 4096, 4672, 5456, 6544, 8192]
for n in range(1, 8193):
	p = c.malloc(n); got = c.malloc_usable_size(p); c.free(p)
	want = min(k for k in classes if k >= n)
	assert got == want, (n, got, want)'

# Past kmalloc-8k a block takes the pages it needs, not a power-of-two
# block (lib/slab/kmalloc.c, large_run_pages()), and realloc() shrinks it
# where it is and keeps its bytes when it grows.
ok "blocks past 8 KiB take whole pages, and realloc resizes them in place" -- \
	python3 -c 'import ctypes, mmap; c = ctypes.CDLL(None); ps = mmap.PAGESIZE
c.malloc.restype = c.realloc.restype = ctypes.c_void_p
c.malloc_usable_size.argtypes = [ctypes.c_void_p]; c.free.argtypes = [ctypes.c_void_p]
c.realloc.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
for n in (8193, 9000, 12289, 40000, 65537, 1 << 20):
	p = c.malloc(n); got = c.malloc_usable_size(p); c.free(p)
	assert got == -(-n // ps) * ps, (n, got)
p = c.malloc(40000); ctypes.memset(p, 0x5a, 40000)
q = c.realloc(p, 20000)
assert q == p and c.malloc_usable_size(q) == -(-20000 // ps) * ps
q = c.realloc(q, 300000)
assert c.malloc_usable_size(q) == -(-300000 // ps) * ps
assert ctypes.string_at(q, 20000) == b"\x5a" * 20000
c.free(q)'

# Allocations of their own mapping are charged as glibc's are: where the
# kernel's overcommit heuristic refuses a size (beyond RAM and swap), both
# return NULL with ENOMEM; where overcommit is "always", both succeed.
ok "huge malloc and posix_memalign succeed or fail as glibc's do" -- bash -c \
	"[ \"\$('$tmp/huge')\" = \"\$(env -u LD_PRELOAD '$tmp/huge')\" ]"

# Every new thread gets (and the C library zeroes) the library's static TLS:
# keep it to a few words, not pages.
tls=$(readelf -lW "$so" | awk '$1 == "TLS" { print $6 }')
ok "static TLS of the preload is at most 64 bytes (${tls:-none})" -- test $((${tls:-0})) -le 64

export UKS_SLUB_DEBUG=FZPU
check_programs FZPU
ok "FZPU: malloc_usable_size is the object size (red zones follow it)" -- \
	python3 -c 'import ctypes; c = ctypes.CDLL(None); c.malloc.restype = ctypes.c_void_p
c.malloc_usable_size.argtypes = [ctypes.c_void_p]; assert c.malloc_usable_size(c.malloc(100)) == 112'
ok "FZPU: a one-byte heap overflow is reported in the kernel's format" -- bash -c \
	"'$tmp/overflow' 2>&1 | grep -q 'BUG kmalloc-64 (Not tainted): Right Redzone overwritten'"
ok "FZPU: the report's alloc track names the program's caller, not the shim's malloc" -- bash -c \
	"'$tmp/overflow' 2>&1 | grep -q 'Allocated in main+'"
unset UKS_SLUB_DEBUG LD_PRELOAD
tap_done
