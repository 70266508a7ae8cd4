#!/usr/bin/env bash
# uks damon report / record at the edges: records of many targets, of
# sizes from 2^63, with a region ending below its start, cut at the tail,
# with no snapshot, of garbage that claims huge counts; and record's exit
# status for a command that cannot be run.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
U=$O/uks
MK=tests/damon/mkrecord.py
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if [ ! -x "$U" ] || ! command -v python3 >/dev/null; then
	echo "1..0 # SKIP needs $U and python3"
	exit 77
fi

# ------------------------------------------------------------ many targets
python3 $MK "$tmp/many.data" targets 300
ok "raw reports all 300 targets, in order of appearance" -- bash -c "
	out=\$('$U' damon report raw '$tmp/many.data') || exit 1
	[ \$(grep -c '^base_time_absolute' <<<\"\$out\") = 300 ] &&
	[ \$(grep -c '^target_id: ' <<<\"\$out\") = 600 ] &&
	[ \"\$(grep -m1 '^target_id: ' <<<\"\$out\")\" = 'target_id: 1000' ] &&
	[ \"\$(grep '^target_id: ' <<<\"\$out\" | tail -1)\" = 'target_id: 1299' ]"
ok "wss reports all 300 targets" -- bash -c "
	out=\$('$U' damon report wss '$tmp/many.data') || exit 1
	[ \$(grep -c '^# target_id' <<<\"\$out\") = 300 ] &&
	grep -q '^# target_id	1299\$' <<<\"\$out\""
ok "wss --work_time groups the snapshots of each of 5000 targets" -- bash -c "
	python3 $MK '$tmp/many5k.data' targets 5000 &&
	out=\$('$U' damon report wss --work_time 2000000 --exclude_samples 0 --all_wss --raw_number \
		'$tmp/many5k.data') || exit 1
	[ \$(grep -c '^# target_id' <<<\"\$out\") = 5000 ] &&
	[ \$(grep -c '^0 ' <<<\"\$out\") = 5000 ] && [ \$(grep -c '^1 ' <<<\"\$out\") = 0 ]"

# ------------------------------------------------------------ sizes
python3 $MK "$tmp/big.data" big
ok "--raw_number prints sizes of 2^63 and above exactly" -- bash -c "
	out=\$('$U' damon report raw --raw_number '$tmp/big.data') || exit 1
	grep -q '^000000000000-8000000000000001(9223372036854775809):	3\$' <<<\"\$out\" &&
	grep -q '^000000000000-ffffffffffffffff(18446744073709551615):	3\$' <<<\"\$out\" &&
	! grep -q -- '(-' <<<\"\$out\""
ok "wss --raw_number prints them exactly" -- bash -c "
	'$U' damon report wss --raw_number --range 100 101 1 '$tmp/big.data' |
	grep -q '^100 18446744073709551615 '"
ok "sizes in TiB as damo (2^63 + 1 bytes: 8388608.000 TiB)" -- bash -c "
	'$U' damon report raw '$tmp/big.data' | grep -q '(8388608.000 TiB):'"

# ------------------------------------------------------------ corrupt
python3 $MK "$tmp/back.data" backwards
ok "a region ending below its start is refused with its offset" -- bash -c "
	'$U' damon report raw '$tmp/back.data' >'$tmp/back.out' 2>'$tmp/back.err'; rc=\$?
	cat '$tmp/back.err'; [ \$rc = 1 ] && [ ! -s '$tmp/back.out' ] &&
	grep -q 'corrupt record at byte 216 (in the entry at byte 164): region end below its start' '$tmp/back.err'"
printf 'damon_recfmt_ver\x07\0\0\0' >"$tmp/badver.data"
ok "an unknown version is refused with its offset" -- bash -c "
	'$U' damon report raw '$tmp/badver.data' 2>&1 | grep -q 'at byte 16 .*unknown format version'"

# ------------------------------------------------------------ cut
python3 $MK "$tmp/hand.data"
len=$(stat -c %s "$tmp/hand.data")	# 20 + 12 entries of 152 bytes
head -c $((len - 152)) "$tmp/hand.data" >"$tmp/eleven.data"
for cut in 10 100 140 151; do
	head -c $((len - cut)) "$tmp/hand.data" >"$tmp/cut.data"
	ok "a record cut $cut bytes before its end reports its 11 whole snapshots" -- bash -c "
		'$U' damon report raw '$tmp/cut.data' >'$tmp/cut.out' 2>'$tmp/cut.err' || exit 1
		cat '$tmp/cut.err'
		'$U' damon report raw '$tmp/eleven.data' | diff -u - '$tmp/cut.out' &&
		grep -q 'the file ends at byte $((len - cut)), inside the entry at byte $((len - 152)) (.*); reporting the 11 snapshots before it' '$tmp/cut.err'"
done
ok "wss of a cut record too" -- bash -c "
	'$U' damon report wss '$tmp/cut.data' 2>/dev/null | diff -u <('$U' damon report wss '$tmp/eleven.data') -"

# ------------------------------------------------------------ no snapshot
python3 $MK "$tmp/empty.data" empty
ok "a record with no snapshot: raw prints nothing, as damo" -- bash -c "
	out=\$('$U' damon report raw '$tmp/empty.data' 2>'$tmp/e.err') && [ -z \"\$out\" ] &&
	grep -q 'no snapshot' '$tmp/e.err'"
ok "a record with no snapshot: wss prints its header line, as damo" -- bash -c "
	[ \"\$('$U' damon report wss '$tmp/empty.data' 2>/dev/null)\" = '# <percentile> <wss>' ]"
ok "a record with no snapshot: the guide is empty, heats fail" -- bash -c "
	[ -z \"\$('$U' damon report heats --guide '$tmp/empty.data' 2>/dev/null)\" ] &&
	! '$U' damon report heats '$tmp/empty.data' 2>/dev/null"

# ------------------------------------------------------------ garbage
python3 $MK "$tmp/huge.data" hugecount
sanitized=false
ldd "$U" 2>/dev/null | grep -q 'libasan' && sanitized=true
grep -q '__asan_init' "$U" 2>/dev/null && sanitized=true
limit() {	# run under a 256 MiB address-space limit where it means anything
	if $sanitized; then "$@"; else (ulimit -v 262144; "$@"); fi
}
ok "a count beyond the file is a cut, not an allocation" -- bash -c "
	$(declare -f limit); sanitized=$sanitized
	limit timeout 20 '$U' damon report raw '$tmp/huge.data' 2>&1 | grep -q 'the file ends at byte 65576, inside the entry at byte 20 (fewer bytes left than its target count needs)'"
head -c $((8 << 20)) /dev/urandom >"$tmp/junk.data"
ok "8 MiB of random bytes parse or fail in bounded memory and time" -- bash -c "
	$(declare -f limit); sanitized=$sanitized
	for r in raw wss; do limit timeout 60 '$U' damon report \$r '$tmp/junk.data' >/dev/null 2>&1
		rc=\$?; [ \$rc -le 1 ] || { echo \"\$r: exit \$rc\"; exit 1; }; done"

# ------------------------------------------------------------ record
why=$("$U" damon record -o "$tmp/t.data" -- true 2>&1)
if grep -q 'primitive .*: ' <<<"$why" && ! grep -q 'snapshots (' <<<"$why"; then
	skip "record -- true writes a record that report reads" "no primitive: $why"
else
	ok "record -- true writes a record that report reads" -- bash -c "
		'$U' damon record -o '$tmp/t.data' -- true && [ -s '$tmp/t.data' ] &&
		'$U' damon report raw '$tmp/t.data' >/dev/null && '$U' damon report wss '$tmp/t.data' >/dev/null"
fi
printf 'x\n' >"$tmp/noexec"; chmod 644 "$tmp/noexec"
for prim in "" "--primitive self"; do
	ok "record $prim of a command not found exits 127, no file" -- bash -c "
		'$U' damon record $prim -o '$tmp/n.data' -- '$tmp/nonexistent' 2>/dev/null; rc=\$?
		[ \$rc = 127 ] && [ ! -e '$tmp/n.data' ] || { echo exit \$rc; exit 1; }"
	ok "record $prim of a file that cannot be executed exits 126" -- bash -c "
		'$U' damon record $prim -o '$tmp/n.data' -- '$tmp/noexec' 2>/dev/null; rc=\$?
		[ \$rc = 126 ] && [ ! -e '$tmp/n.data' ] || { echo exit \$rc; exit 1; }"
done
tap_done
