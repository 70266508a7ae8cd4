#!/usr/bin/env bash
# The harness itself: run tests/harness/sample and check what it reports.
set -u
. "$(dirname "$0")/../tap.bash"
bin=${O:-build}/tests/harness/sample
echo "TAP version 13"
[ -x "$bin" ] || { echo "not ok 1 $bin not built"; echo 1..1; exit 1; }
out=$("$bin" 2>&1); rc=$?
has() { grep -qE -- "$1" <<<"$out"; }
ok "TAP 13 header and plan"             -- bash -c "head -2 <<<'$out' | tr '\n' ' ' | grep -q 'TAP version 13 1..10'"
ok "passing test is ok"                 -- has '^ok [0-9]+ passes$'
ok "ASSERT fails and stops the test"    -- bash -c "grep -q '^not ok [0-9]* assert_stops' <<<'$out' && ! grep -q 'unreachable after ASSERT' <<<'$out'"
ok "EXPECT fails and continues"         -- bash -c "grep -q '^not ok [0-9]* expect_continues' <<<'$out' && grep -q 'reached after EXPECT' <<<'$out'"
ok "failure shows both values"          -- has 'expected 1 \(1\) == 2 \(2\)'
ok "SKIP is reported with its reason"   -- has '^ok [0-9]+ skips # SKIP no widget here$'
# Under ASan the SEGV handler reports and exits 1 instead of dying by signal.
ok "a crash is a failure" -- has '^not ok [0-9]+ crashes # (killed by signal 11|exit status 1)'
ok "a hang is killed at its timeout"    -- has '^not ok [0-9]+ hangs # TIMEOUT after 1 s'
ok "variants expand fixture tests"      -- bash -c "grep -q '^ok [0-9]* fx.one.sees_variant' <<<'$out' && grep -q '^ok [0-9]* fx.two.sees_variant' <<<'$out'"
ok "variant-specific failure"           -- bash -c "grep -q '^ok [0-9]* fx.one.fails_on_two' <<<'$out' && grep -q '^not ok [0-9]* fx.two.fails_on_two' <<<'$out'"
ok "teardown runs after a failed ASSERT" -- has 'teardown after failure value 2'
ok "summary comment"                    -- has '^# 4 passed, 5 failed, 1 skipped$'
ok "exit status 1 on failure"           -- test "$rc" = 1
ok "-l lists every case"                -- bash -c "test \$('$bin' -l | wc -l) = 10"
ok "-t runs one case"                   -- bash -c "'$bin' -t passes | grep -q '^1\.\.1$'"
ok "all-skipped run exits 77"           -- bash -c "'$bin' -t skips >/dev/null; test \$? = 77"
ok "-t with a variant name"             -- bash -c "'$bin' -t fx.one.fails_on_two >/dev/null"
tap_done
