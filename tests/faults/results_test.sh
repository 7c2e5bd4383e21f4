#!/usr/bin/env bash
# Results folders under contention and damage (issue 16, findings 3 and 9): runs started in the
# same second never share a folder; a resumed run refuses another experiment, another mode, edited
# experiment or scenario files and a damaged cells.jsonl, naming the line, without a raw parser exception, and completes a stopped
# run. (A stopped run's table shows unfinished cells as "not run": tests/unit/runner/results/summary_test.cpp.)
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)
experiment "$tmp/e.json" '"schedules": ["1f1b", "kfkb:k=2"], "repetitions": 2'
mkdir -p "$tmp/work"
# Finding 3: five times, two runs at once into the default folder (results/NAME-TIMESTAMP-sim).
for trial in 1 2 3 4 5; do
  (cd "$tmp/work" && "$contend" run "$tmp/e.json" --simulate --no-report >"$tmp/a.out" 2>&1) &
  a=$!
  (cd "$tmp/work" && "$contend" run "$tmp/e.json" --simulate --no-report >"$tmp/b.out" 2>&1) &
  b=$!
  wait $a || fail "trial $trial: run a failed: $(cat "$tmp/a.out")"
  wait $b || fail "trial $trial: run b failed: $(cat "$tmp/b.out")"
  da=$(sed -n 's/^results: //p' "$tmp/a.out")
  db=$(sed -n 's/^results: //p' "$tmp/b.out")
  [ -n "$da" ] && [ -n "$db" ] && [ "$da" != "$db" ] || fail "trial $trial: both runs wrote into '$da' and '$db'"
  for d in "$da" "$db"; do
    n=$(wc -l <"$tmp/work/$d/cells.jsonl")
    [ "$n" -eq 4 ] || fail "trial $trial: $d/cells.jsonl has $n lines, expected the run's 4 cells"
  done
done
echo "ok: 5 trials, every run its own folder ($(ls "$tmp/work/results" | wc -l) folders)"
# Finding 9: resume refuses what it cannot trust, saying why.
"$contend" run "$tmp/e.json" --simulate --no-report --out "$tmp/sim" >/dev/null 2>&1 || fail "simulated run"
experiment "$tmp/other.json" '"name": "other"'
refused "resume into another experiment's folder" "holds experiment \"fault\", not \"other\"" \
  "$contend" run "$tmp/other.json" --simulate --no-report --resume "$tmp/sim"
refused "resume a simulated folder for real" "a simulated run; this one is real" \
  "$contend" run "$tmp/e.json" --no-report --resume "$tmp/sim"
# The same experiment, edited since the run began: its cells and the new ones would not compare.
experiment "$tmp/edited.json" '"schedules": ["1f1b", "kfkb:k=2"], "repetitions": 2, "workload": {"fwd": "2ms"}'
refused "resume with an edited experiment file" "the experiment file or one of its scenario files changed since" \
  "$contend" run "$tmp/edited.json" --simulate --no-report --resume "$tmp/sim"
# Laid out anew, with a description: the same experiment, resumed.
python3 -c 'import json, sys; e = json.load(open(sys.argv[1])); e["description"] = "notes"
json.dump(e, open(sys.argv[2], "w"), indent=4)' "$tmp/e.json" "$tmp/described.json"
cp -r "$tmp/sim" "$tmp/described"
head -1 "$tmp/sim/cells.jsonl" >"$tmp/described/cells.jsonl"
"$contend" run "$tmp/described.json" --simulate --no-report --resume "$tmp/described" >"$tmp/described.out" 2>&1 ||
  fail "resume with the experiment laid out anew and described: $(tail -3 "$tmp/described.out")"
cp -r "$tmp/sim" "$tmp/damaged"
printf '{"schema": "contend.cell/1", "id": "steady.1f1b.r1", "throughput": \n' >>"$tmp/damaged/cells.jsonl"
refused "resume with a damaged cells.jsonl" "cells.jsonl:5" \
  "$contend" run "$tmp/e.json" --simulate --no-report --resume "$tmp/damaged"
grep -q "nlohmann\|parse_error\|terminate" "$tmp/refused.err" && fail "a raw exception: $(cat "$tmp/refused.err")"
refused "compare with a simulated reference for real" "simulated run; this one is real" \
  "$contend" run "$tmp/e.json" --no-report --compare "$tmp/sim/summary.json" --out "$tmp/real"
# A run stopped after some cells: --resume runs only the rest and completes the matrix.
cp -r "$tmp/sim" "$tmp/partial"
head -1 "$tmp/sim/cells.jsonl" >"$tmp/partial/cells.jsonl"
"$contend" run "$tmp/e.json" --simulate --no-report --resume "$tmp/partial" >"$tmp/resumed.out" 2>&1 ||
  fail "resume: $(cat "$tmp/resumed.out")"
[ "$(grep -c '^\[' "$tmp/resumed.out")" -eq 3 ] || fail "resume ran other than the 3 missing cells: $(cat "$tmp/resumed.out")"
[ "$(wc -l <"$tmp/partial/cells.jsonl")" -eq 4 ] || fail "resume did not complete the matrix"
# Issue 27, findings 8, 10 and 11: nothing written through a link, one run per folder, and a
# summary that cannot be written still leaves the table, the failed step and the resume hint.
cp -r "$tmp/partial" "$tmp/linked"
head -1 "$tmp/sim/cells.jsonl" >"$tmp/linked/cells.jsonl"
touch "$tmp/target.log"
ln -s "$tmp/target.log" "$tmp/linked/report.log"
refused "resume with report.log a symbolic link" "report.log is a symbolic link: results are never written through one" \
  "$contend" run "$tmp/e.json" --simulate --resume "$tmp/linked"
rm "$tmp/linked/report.log"
mkdir -p "$tmp/elsewhere"
ln -s "$tmp/elsewhere" "$tmp/linked/report"
refused "resume with report/ a symbolic link" "report is a symbolic link" \
  "$contend" run "$tmp/e.json" --simulate --resume "$tmp/linked"
[ -z "$(ls "$tmp/elsewhere")" ] && [ ! -s "$tmp/target.log" ] || fail "something was written through a link"
rm "$tmp/linked/report"
( exec 9<"$tmp/linked" && flock 9 && exec sleep 10 ) &  # one process holds the lock
holder=$!
pids+=("$holder")
poll 5 sh -c "! flock -n '$tmp/linked' true" || fail "the test's own lock was not taken"
refused "a second run of a folder in use" "is in use by another contend run" \
  "$contend" run "$tmp/e.json" --simulate --no-report --resume "$tmp/linked"
kill "$holder"
wait "$holder" 2>/dev/null || true
rm -f "$tmp/linked/summary.json" && mkdir "$tmp/linked/summary.json"  # the summary cannot be written (as on a full disk)
"$contend" run "$tmp/e.json" --simulate --no-report --resume "$tmp/linked" >"$tmp/unsaved.out" 2>"$tmp/unsaved.err" &&
  fail "a run whose summary could not be written exited 0"
grep -q "speedup" "$tmp/unsaved.out" || fail "no table when the summary could not be written: $(cat "$tmp/unsaved.out" "$tmp/unsaved.err")"
grep -q "the summary could not be written: .*summary.json" "$tmp/unsaved.err" &&
  grep -q "continue with --resume $tmp/linked" "$tmp/unsaved.err" ||
  fail "the failure and the resume hint did not reach the terminal: $(cat "$tmp/unsaved.err")"
[ "$(wc -l <"$tmp/linked/cells.jsonl")" -eq 4 ] || fail "the finished cells were not kept"
echo "ok: no write through a link, one run per folder, and an unsaved summary still reported with how to resume"
echo "results: all checks passed"
