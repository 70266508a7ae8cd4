#!/usr/bin/env bash
# uks damon record/report/convert with damo's json and json_compressed
# records (damo 2.0.3+):
#  - damo 3.3.0's own files (tests/damon/damo-json/) report as the perf
#    script text they were made from, and nr_regions equals damo's output;
#  - convert: binary -> json -> binary and json -> json_compressed -> json
#    give the same bytes;
#  - a real run recorded in each format reports the same;
#  - -f names, garbage json and zlib files fail cleanly with a reason.
set -u
. "$(dirname "$0")/../tap.bash"
O=${O:-build}
U=$O/uks
M=$O/uks-masim
J=tests/damon/damo-json
G=tests/damon/golden
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
echo "TAP version 13"
if [ ! -x "$U" ] || [ ! -x "$M" ]; then
	echo "1..0 # SKIP needs $U and $M"
	exit 77
fi
zlib=1
"$U" damon convert -f json_compressed -i "$J/damo-3.3.0.json" -o "$tmp/z" 2>"$tmp/z.err" ||
	{ grep -q 'built without' "$tmp/z.err" && zlib=0; }

same() {	# same DESCRIPTION FILE1 FILE2 REPORT ARGS...: both files report alike
	local d=$1 a=$2 b=$3; shift 3
	ok "$d" -- bash -c '"$1" damon report "${@:4}" "$2" >"$2.out" && "$1" damon report "${@:4}" "$3" >"$3.out" && diff -u "$2.out" "$3.out"' \
		_ "$U" "$a" "$b" "$@"
}
cp "$J/one-target.perf" "$J/two-targets.perf" "$J/damo-3.3.0.json" "$tmp/"
for r in raw wss "heats --resol 5 4"; do
	same "damo's json reports as its perf text: $r" "$tmp/damo-3.3.0.json" "$tmp/one-target.perf" $r
done
if [ $zlib = 1 ]; then
	cp "$J/damo-3.3.0.json_compressed" "$tmp/two.jz"
	for r in raw wss "heats --resol 6 3"; do
		same "damo's json_compressed (two targets) reports as its perf text: $r" \
			"$tmp/two.jz" "$tmp/two-targets.perf" $r
	done
	ok "nr_regions is damo 3.3.0's output" -- \
		bash -c '"$1" damon report nr_regions "$2" | diff -u "$3" -' _ "$U" "$tmp/two.jz" "$G/nr_regions"
	ok "nr_regions --sortby time --range 0 101 10 is damo 3.3.0's output" -- \
		bash -c '"$1" damon report nr_regions --sortby time --range 0 101 10 -i "$2" | diff -u "$3" -' \
		_ "$U" "$tmp/two.jz" "$G/nr_regions_time"
else
	skip "damo's json_compressed" "built without zlib"
	ok "without zlib: json_compressed is an error naming zlib, no file left" -- bash -c '
		"$1" damon report raw "$2/damo-3.3.0.json_compressed" 2>&1 | grep -q "needs zlib" &&
		! "$1" damon record -f json_compressed -o "$3/nz" -- true 2>/dev/null && [ ! -e "$3/nz" ]' 		_ "$U" "$J" "$tmp"
fi
ok "nr_regions of a record with 20 snapshots or fewer says so" -- bash -c '
	"$1" damon report nr_regions "$2" 2>&1 >/dev/null | grep -q "no snapshot past its first 20"' \
	_ "$U" "$tmp/damo-3.3.0.json"

# ------------------------------------------------------------ convert
ok "binary -> json -> binary gives the same bytes" -- bash -c '
	"$1" damon convert -f binary -i "$2/two-targets.perf" -o "$2/a.bin" &&
	"$1" damon convert -f json -i "$2/a.bin" -o "$2/a.json" && head -c1 "$2/a.json" | grep -q "\[" &&
	"$1" damon convert -f binary -i "$2/a.json" -o "$2/b.bin" && cmp "$2/a.bin" "$2/b.bin"' _ "$U" "$tmp"
if [ $zlib = 1 ]; then
	ok "json -> json_compressed -> json gives the same bytes" -- bash -c '
		"$1" damon convert -f json -i "$2/damo-3.3.0.json" -o "$2/c.json" &&
		"$1" damon convert -f json_compressed -i "$2/c.json" -o "$2/c.jz" &&
		"$1" damon convert -f json -i "$2/c.jz" -o "$2/d.json" && cmp "$2/c.json" "$2/d.json" &&
		[ $(stat -c %s "$2/c.jz") -lt $(stat -c %s "$2/c.json") ]' _ "$U" "$tmp"
fi
ok "convert --intervals puts them in the json" -- bash -c '
	"$1" damon convert -f json --intervals "2000 40000 500000" -i "$2/a.bin" -o "$2/iv.json" &&
	grep -q "\"aggr_us\": \"40000\"" "$2/iv.json" &&
	"$1" damon convert -f json -i "$2/a.bin" -o "$2/noiv.json" && grep -q "\"intervals\": null" "$2/noiv.json"' \
	_ "$U" "$tmp"
ok "an unknown -f is a usage error" -- bash -c '
	"$1" damon convert -f perf_data -i "$2" -o /dev/null 2>/dev/null; [ $? = 2 ] &&
	"$1" damon record -f xml -o /dev/null -- true 2>/dev/null; [ $? = 2 ]' _ "$U" "$tmp/a.bin"

# ------------------------------------------------------------ a real run, each format
fmts="binary json"; [ $zlib = 1 ] && fmts="$fmts json_compressed"
for f in $fmts; do
	"$U" damon record -f $f -o "$tmp/run.$f" -- "$M" configs/masim/stairs.cfg >/dev/null 2>"$tmp/rec.$f.err"
	echo $? >"$tmp/rec.$f.rc"
done
if grep -q 'primitive .*: ' "$tmp/rec.binary.err" && ! grep -q 'snapshots (' "$tmp/rec.binary.err"; then
	skip "record in every format" "no primitive: $(cat "$tmp/rec.binary.err")"
else
	for f in $fmts; do
		ok "record -f $f exits 0 and reports" -- bash -c '
			cat "$2/rec.$3.err"; [ "$(cat "$2/rec.$3.rc")" = 0 ] &&
			"$1" damon report wss "$2/run.$3" | grep -q "^100 "' _ "$U" "$tmp" "$f"
	done
	ok "the json record holds the intervals of --attrs' default and ages" -- bash -c '
		grep -q "\"sample_us\": \"5000\"" "$1" && grep -q "\"aggr_intervals\": \"" "$1"' _ "$tmp/run.json"
	ok "json -> binary of the run is a binary record" -- bash -c '
		"$1" damon convert -f binary -i "$2/run.json" -o "$2/run.bin2" &&
		head -c 16 "$2/run.bin2" | grep -q damon_recfmt_ver' _ "$U" "$tmp"
	if [ $zlib = 1 ]; then
		ok "the default format is json_compressed (zlib's header)" -- bash -c '
			"$1" damon record -o "$2/def" -- true 2>/dev/null
			[ "$(head -c 1 "$2/def" | od -An -tx1 | tr -d " ")" = 78 ]' _ "$U" "$tmp"
	else
		ok "the default format without zlib is json" -- bash -c '
			"$1" damon record -o "$2/def" -- true 2>/dev/null; [ "$(head -c 1 "$2/def")" = "[" ]' 			_ "$U" "$tmp"
	fi
fi

# ------------------------------------------------------------ garbage
printf '[{"target_id": 1, "snapshots": [{"start_time": 1, "end_time": 2, "regions": [{"start": 9, "end": 2}]}]}]' >"$tmp/bad1.json"
printf '[{"target_id": 1, "snapshots": [' >"$tmp/bad2.json"
head -c 300 "$tmp/c.jz" >"$tmp/bad3.jz" 2>/dev/null || printf 'x\234abc' >"$tmp/bad3.jz"
python3 -c "print('[' * 100000 + ']' * 100000)" >"$tmp/deep.json" 2>/dev/null || printf '[[[' >"$tmp/deep.json"
bad="bad1.json bad2.json deep.json"; [ $zlib = 1 ] && bad="$bad bad3.jz"
for f in $bad; do
	ok "report of garbage ($f) fails with a reason" -- bash -c '
		"$1" damon report raw "$2" >/dev/null 2>"$2.err"; rc=$?; cat "$2.err"
		[ $rc = 1 ] && grep -q "corrupt record at byte" "$2.err"' _ "$U" "$tmp/$f"
done
head -c 100000 /dev/urandom >"$tmp/junk"
printf '\170\234' | cat - "$tmp/junk" >"$tmp/junk.jz"
printf '[' | cat - "$tmp/junk" >"$tmp/junk.json"
for f in junk.jz junk.json; do
	ok "report of random bytes behind a json/zlib start ($f) fails cleanly" -- bash -c '
		"$1" damon report raw "$2" >/dev/null 2>&1; [ $? = 1 ]' _ "$U" "$tmp/$f"
done
tap_done
