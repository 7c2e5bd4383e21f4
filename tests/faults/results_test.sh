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
# Hardening v3: an edited cells.jsonl is refused, naming the line, for each thing no run records
# (before, duplicated, unknown, negative, zero and 1e308 cells were all taken in).
for bad in duplicate unknown negative zero huge; do
  cp -r "$tmp/sim" "$tmp/edited-$bad"
  head -1 "$tmp/sim/cells.jsonl" >"$tmp/edited-$bad/cells.jsonl"
  python3 - "$tmp/edited-$bad/cells.jsonl" "$bad" <<'PY'
import json, sys
path, bad = sys.argv[1], sys.argv[2]
first = json.loads(open(path).readline())
line = dict(first)
if bad == "unknown":
    line["id"] = "nowhere.1f1b.r1"
else:
    line["throughput"] = {"duplicate": first["throughput"], "negative": -5, "zero": 0, "huge": 1e308}[bad]
    if bad != "duplicate":
        line["id"] = first["id"].replace(".r1", ".r2")
open(path, "a").write(json.dumps(line) + "\n")
PY
  case $bad in
    duplicate) why="is recorded twice" ;;
    unknown) why="is not one of this experiment's cells" ;;
    huge) why="cells.jsonl:2" ;;
    *) why="has a throughput of" ;;
  esac
  refused "resume with a $bad cell in cells.jsonl" "cells.jsonl:2: cell .*$why|$why" \
    "$contend" run "$tmp/e.json" --simulate --no-report --resume "$tmp/edited-$bad"
done
echo "ok: resume refuses a duplicated, unknown, negative, zero or 1e308 cell, naming the line"
# Hardening v3: --compare against a reference with no cells, or with speedups of 0, refused before
# anything runs (before: "no regression", exit 0).
python3 - "$tmp/sim/summary.json" "$tmp/empty.json" "$tmp/zeros.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
json.dump(dict(s, cells=[]), open(sys.argv[2], "w"))
for c in s["cells"]:
    c["speedup"]["median"] = 0
json.dump(s, open(sys.argv[3], "w"))
PY
refused "compare with a reference of no cells" "has no cells: there is nothing to compare with" \
  "$contend" run "$tmp/e.json" --simulate --no-report --compare "$tmp/empty.json" --out "$tmp/cmp-empty"
refused "compare with a reference whose speedups are 0" "has a speedup of 0: a reference must be positive" \
  "$contend" run "$tmp/e.json" --simulate --no-report --compare "$tmp/zeros.json" --out "$tmp/cmp-zeros"
[ ! -e "$tmp/cmp-empty" ] && [ ! -e "$tmp/cmp-zeros" ] || fail "a refused comparison made a results folder"
echo "ok: --compare refuses a reference with no cells or non-positive speedups, before anything runs"
# Hardening v3: a crafted summary's fields are text in the report, never markup or TeX.
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  cp -r "$tmp/sim" "$tmp/crafted"
  python3 - "$tmp/crafted/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["cells"][0]["repetitions"] = "<img src=x onerror=alert(1)>"
s["cells"][0]["schedule"] = "cost $x^2$ <b>"
s["unit"] = "$samples$/s"
json.dump(s, open(sys.argv[1], "w"))
PY
  "$contend" report "$tmp/crafted" >"$tmp/crafted.out" 2>&1 || fail "the report of a crafted summary failed: $(tail -3 "$tmp/crafted.out")"
  grep -q "<img src=x" "$tmp/crafted/report/index.html" && fail "the crafted summary's markup reached index.html"
  grep -q "&lt;img src=x onerror=alert(1)&gt;" "$tmp/crafted/report/index.html" || fail "the crafted field is not in index.html as text"
  [ -f "$tmp/crafted/report/throughput.png" ] || fail "a \$ in a name stopped the throughput figure: $(cat "$tmp/crafted.out")"
  echo "ok: a crafted summary's fields are escaped in index.html and drawn as text, \$ included"
fi
echo "results: all checks passed"
