#!/usr/bin/env bash
# contend compare and contend history, without root, on runs written here (env.json and summary.json
# as contend run writes them, each cell 5 repetitions with 0.3% noise): a 3% loss fails a
# comparison (exit 3) and a rerun does not; a history of 30 runs with a 3% step at run 21 finds it
# there, naming the commit, and exits 3, a clean one finds none; the CI reports validate (JUnit
# against Jenkins' schema, benchmark.json and bmf.json by their formats' rules, the Markdown
# rendered to a table); bad histories are refused, each with its message.
# Usage: regression_cli_test.sh CONTEND
set -euo pipefail
contend=$1
tmp=$(mktemp -d /tmp/contend-regression-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# runs FOLDER COUNT STEP_AT [HOST]: COUNT runs, kfkb 3% slower from run STEP_AT on (0: never).
runs() {
  /usr/bin/python3 - "$@" <<'PY'
import json, os, random, sys
folder, count, step_at = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
host = sys.argv[4] if len(sys.argv) > 4 else "vm"
rng = random.Random(f"{count} {step_at} {host}")  # the same runs every time
for i in range(1, count + 1):
    run = f"{folder}/run{i:02d}"
    os.makedirs(run)
    json.dump({"schema": "contend.env/1", "experiment": "regression", "git_commit": f"c{i:02d}",
               "host": host, "cpu_model": "CPU X", "cpus": 2, "files_fingerprint": "f",
               "started": f"20261205-{i:06d}"}, open(f"{run}/env.json", "w"))
    cells = []
    for schedule, level in (("1f1b", 90.0), ("kfkb:k=2", 105.0)):
        if schedule != "1f1b" and step_at and i >= step_at:
            level *= 0.97
        samples = [level * (1 + rng.gauss(0, 0.003)) for _ in range(5)]
        median = sorted(samples)[2]
        cells.append({"scenario": "steady", "schedule": schedule, "repetitions": 5,
                      "throughput": {"median": median, "mean": sum(samples) / 5, "stdev": 0, "ci95": 0,
                                     "samples": samples},
                      "speedup": {"median": median / 90.0, "ci95": 0}})
    json.dump({"schema": "contend.summary/1", "experiment": "regression", "mode": "real", "baseline": "1f1b",
               "unit": "samples/s", "compared": "speedup", "cells": cells}, open(f"{run}/summary.json", "w"))
PY
}

runs "$tmp/step" 30 21
runs "$tmp/clean" 30 0

# compare: a 3% loss fails, naming the cell; a rerun passes.
rc=0
"$contend" compare "$tmp/step/run25" "$tmp/step/run05" --by throughput --reports "$tmp/cmp" >"$tmp/out.txt" || rc=$?
[ $rc -eq 3 ] || fail "a 3% loss exited $rc: $(cat "$tmp/out.txt")"
grep -q "kfkb:k=2 .*slower: slower by [23]\.[0-9]%" "$tmp/out.txt" || fail "the loss is not named: $(cat "$tmp/out.txt")"
"$contend" compare "$tmp/clean/run25" "$tmp/clean/run05" --by throughput >"$tmp/out.txt" ||
  fail "a rerun was called a regression: $(cat "$tmp/out.txt")"
rc=0
"$contend" compare "$tmp/step/run25" "$tmp/step/run05" "$tmp/step/run06" "$tmp/step/run07" --by throughput \
  >"$tmp/out.txt" || rc=$?
[ $rc -eq 3 ] && grep -q "against 3 runs" "$tmp/out.txt" || fail "against 3 runs, a 3% loss exited $rc: $(cat "$tmp/out.txt")"
"$contend" compare "$tmp/clean/run25" "$tmp/clean/run05" "$tmp/clean/run06" --by throughput >"$tmp/out.txt" ||
  fail "a rerun against 2 runs was called a regression: $(cat "$tmp/out.txt")"
echo "ok: compare: a 3% loss exits 3, a rerun 0, against one run or several"

# history: the step found at run 21 (commit c21), the clean series without a change point.
rc=0
"$contend" history "$tmp/step" --reports "$tmp/rep" >"$tmp/out.txt" || rc=$?
[ $rc -eq 3 ] || fail "a history ending in a loss exited $rc: $(cat "$tmp/out.txt")"
grep -q "at run 21 (commit c21" "$tmp/out.txt" || fail "the change point is not at run 21: $(cat "$tmp/out.txt")"
grep -q "^steady *1f1b .*no change point" "$tmp/out.txt" || fail "1f1b did not change: $(cat "$tmp/out.txt")"
"$contend" history "$tmp/clean" >"$tmp/out.txt" || fail "a clean history exited non-zero: $(cat "$tmp/out.txt")"
[ "$(grep -c "no change point" "$tmp/out.txt")" -eq 2 ] || fail "a clean history has change points: $(cat "$tmp/out.txt")"
echo "ok: history: the 3% step found at run 21 (commit c21), none in a clean history"

# The reports, read by their formats' rules.
for dir in "$tmp/cmp" "$tmp/rep"; do
  for f in junit.xml summary.md benchmark.json bmf.json; do [ -s "$dir/$f" ] || fail "no $dir/$f"; done
  xsd=${CONTEND_JUNIT_XSD:-/usr/local/share/contend-test/jenkins-junit.xsd}
  if [ -f "$xsd" ] && command -v xmllint >/dev/null; then
    xmllint --noout --schema "$xsd" "$dir/junit.xml" 2>"$tmp/xmllint.txt" || fail "junit.xml invalid: $(cat "$tmp/xmllint.txt")"
  else
    echo "SKIP (JUnit schema check): no $xsd or no xmllint (scripts/install-deps.sh fetches the schema with npm)"
  fi
  /usr/bin/python3 - "$dir" <<'PY' || fail "the reports in $dir do not read back"
import json, sys
import xml.etree.ElementTree as ET
d = sys.argv[1]
suite = ET.parse(f"{d}/junit.xml").getroot().find("testsuite")
cases = suite.findall("testcase")
assert int(suite.get("tests")) == len(cases) == 2, suite.attrib
failed = [c for c in cases if c.find("failure") is not None]
assert int(suite.get("failures")) == len(failed) == 1, suite.attrib
assert failed[0].get("name") == "kfkb:k=2" and "%" in failed[0].find("failure").get("message"), failed[0].attrib
# github-action-benchmark, customBiggerIsBetter: a list of {name, unit, value[, range, extra]}.
bench = json.load(open(f"{d}/benchmark.json"))
assert isinstance(bench, list) and len(bench) == 2
for b in bench:
    assert isinstance(b["name"], str) and isinstance(b["unit"], str) and isinstance(b["value"], (int, float))
    assert set(b) <= {"name", "unit", "value", "range", "extra"}, b
# Bencher Metric Format: benchmark -> measure -> {value, lower_value, upper_value}.
bmf = json.load(open(f"{d}/bmf.json"))
for name, measures in bmf.items():
    for m in measures.values():
        assert m["lower_value"] <= m["value"] <= m["upper_value"], m
import markdown
html = markdown.markdown(open(f"{d}/summary.md").read(), extensions=["tables"])
assert html.count("<tr>") == 3 and "<strong>" in html, html
PY
done
echo "ok: junit.xml valid, benchmark.json and bmf.json by their formats, summary.md renders a table"

# Bad histories: one run, a run cut short, two machines (then one picked), a list naming nothing.
refused() {  # refused WHAT MESSAGE ARGS...
  local what=$1 message=$2
  shift 2
  rc=0
  "$contend" history "$@" >/dev/null 2>"$tmp/err.txt" || rc=$?
  [ $rc -eq 1 ] || fail "$what: exit $rc"
  grep -qF -- "$message" "$tmp/err.txt" || fail "$what: unclear error: $(cat "$tmp/err.txt")"
}
mkdir "$tmp/one" && cp -r "$tmp/clean/run01" "$tmp/one/"
refused "one run" "a history needs at least two runs" "$tmp/one"
cp -r "$tmp/clean" "$tmp/cut" && rm "$tmp/cut/run07/summary.json"
refused "a run cut short" "run07 has no summary.json" "$tmp/cut"
head -c 300 "$tmp/clean/run09/summary.json" >"$tmp/cut-summary" && cp "$tmp/cut-summary" "$tmp/clean/run09/summary.json"
refused "a truncated summary" "run09/summary.json" "$tmp/clean"
runs "$tmp/other" 3 0 other-host
refused "two machines" "more than one of machines" "$tmp/step" "$tmp/other"
"$contend" history "$tmp/step" "$tmp/other" --machine "other-host / CPU X / 2 CPUs" >/dev/null ||
  fail "--machine did not pick the other machine's runs"
echo "missing-run" >"$tmp/list.txt"
refused "a list naming nothing" "missing-run: no such run (listed in $tmp/list.txt)" "$tmp/list.txt"
echo "ok: bad histories refused, each with its message"
