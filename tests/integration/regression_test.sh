#!/usr/bin/env bash
# The CI regression check, for real: experiments/ci/regression.json in namespaces, its speedups
# judged against experiments/ci/regression-baseline.json (recorded on this kind of machine) from
# both runs' repetitions. Speedups are ratios measured in the same run, so they travel between
# machines; a cell fails only when significantly slower, by an estimated loss beyond 3%
# (docs/regression.md, which measures how often that cries wolf on an unchanged tree).
source "$(dirname "$0")/lib.sh"
need_root
src=$(cd "$(dirname "$0")/../.." && pwd)
before=$(runner_namespaces)
rc=0
"$contend" run "$src/experiments/ci/regression.json" --out "$tmp/res" --no-report \
  --compare "$src/experiments/ci/regression-baseline.json" --tolerance 3% --reports "$tmp/reports" \
  >"$tmp/out.txt" 2>"$tmp/err.txt" || rc=$?
cat "$tmp/out.txt"
[ $rc -eq 0 ] || fail "regression check exited $rc: $(cat "$tmp/out.txt" "$tmp/err.txt" | tail -20)"
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left: $(runner_namespaces)"
grep -q 'tests="6" failures="0"' "$tmp/reports/junit.xml" || fail "junit.xml: $(head -3 "$tmp/reports/junit.xml")"
# Every cell records what the hypervisor and what other processes took of the CPU meanwhile.
[ "$(grep -c '"steal":.*"others_cpu":' "$tmp/res/cells.jsonl")" -eq "$(wc -l <"$tmp/res/cells.jsonl")" ] ||
  fail "a cell without steal and others_cpu: $(head -2 "$tmp/res/cells.jsonl")"
