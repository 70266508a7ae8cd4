#!/usr/bin/env bash
# `uks abi-check denywrite` on this machine's kernel: every check must
# PASS, except the ones whose SKIP reason is a fact of this machine
# (PR_SET_MM_EXE_FILE without CAP_SYS_RESOURCE, uselib(2) gone: ENOSYS).
# Also the output format, the exit status, and that nothing is left behind.
set -u
cd "$(dirname "$0")/../.."
. tests/tap.bash
O=${O:-build}
uks=$O/uks
echo "TAP version 13"
[ -x "$uks" ] || { echo "1..0 # SKIP $uks not built"; exit 77; }
tmp=$(mktemp -d /tmp/uksdwt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

"$uks" abi-check denywrite --tmpdir "$tmp" >"$tmp/out" 2>"$tmp/err"
rc=$?
sed 's/^/# /' "$tmp/out"
ok "exit status 0 (no FAIL): $rc" -- test $rc = 0
ok "every line is 'PASS|FAIL|SKIP name: detail'" -- bash -c "! grep -vE '^(PASS|FAIL|SKIP) [a-z0-9-]+: .+' '$tmp/out'"
ok "nothing on stderr" -- test ! -s "$tmp/err"
ok "the scratch directory is removed" -- bash -c "[ -z \"\$(ls -A '$tmp' | grep -v -e '^out\$' -e '^err\$')\" ]"

capeff=$(awk '/^CapEff/ { print $2 }' /proc/self/status)
have_sys_resource=$(( (0x$capeff >> 24) & 1 ))
for name in exe-open-wronly exe-open-rdwr-trunc exe-creat exe-writable-after-exit \
	exec-while-open-for-write dlopen-lib-writable interp-writable-after-exec \
	mmap-denywrite-ignored mmap-denywrite-with-writer \
	prctl-exe-file-refused-with-writer prctl-exe-file-denies-write \
	prctl-exe-file-relink-releases prctl-exe-file-exit-releases \
	prctl-mm-map-refused-with-writer prctl-mm-map-denies-write \
	prctl-mm-map-relink-releases prctl-mm-map-exec-releases uselib-lib-writable; do
	line=$(grep -E "^(PASS|FAIL|SKIP) $name: " "$tmp/out")
	case $name:$line in
	prctl-exe-file-*:SKIP*)
		if [ "$have_sys_resource" = 0 ]; then
			ok "$name: SKIP only because CAP_SYS_RESOURCE is missing here" -- \
				bash -c "grep -qE '^SKIP $name: (prctl not permitted: EPERM|no file was linked)' '$tmp/out'"
			continue
		fi ;;
	uselib-lib-writable:SKIP*)
		ok "$name: SKIP only because the kernel has no uselib(2)" -- \
			bash -c "grep -q '^SKIP $name: uselib(2) not available on this kernel (ENOSYS' '$tmp/out'"
		continue ;;
	esac
	LINE=${line:-missing} ok "$name: PASS on $(uname -r)" -- bash -c 'grep -q "^PASS $0: " "$1" || { echo "$LINE"; exit 1; }' "$name" "$tmp/out"
done

ok "the copied executable is really in use: a running uks copy is ETXTBSY-checked (detail names ETXTBSY)" -- \
	grep -q '^PASS exe-open-wronly: .*ETXTBSY' "$tmp/out"
ok "unknown check name: exit status 2" -- bash -c "'$uks' abi-check nosuch 2>/dev/null; [ \$? = 2 ]"
ok "bad option: exit status 2" -- bash -c "'$uks' abi-check denywrite --bogus 2>/dev/null; [ \$? = 2 ]"
ok "--help exits 0 and names the checks" -- bash -c "'$uks' abi-check denywrite --help | grep -q ETXTBSY"
ok "a missing --exe: exit status 1 with a message" -- bash -c "
	'$uks' abi-check denywrite --exe /nonexistent/prog >/dev/null 2>'$tmp/e2'; [ \$? = 1 ] && grep -q 'cannot run' '$tmp/e2'"
ok "a static --exe (busybox) runs the same checks" -- bash -c "
	bb=\$(command -v busybox) || exit 0
	'$uks' abi-check denywrite --exe \"\$bb\" > '$tmp/bb' ; grep -q '^PASS exe-creat' '$tmp/bb'"
tap_done
