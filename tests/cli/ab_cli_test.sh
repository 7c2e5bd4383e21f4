#!/usr/bin/env bash
# contend ab and contend run --repetitions, without root (both sides simulated): an A/A comparison
# of the shipped regression experiment finds no change (exit 0) at ab's 1% tolerance, the head
# first in half the rounds;
# the head with every stage's compute 5% slower is flagged cell by cell from 5 rounds, each a pair
# (paired t, Holm over the cells; exit 3); each round leaves one repetition a side, in folders
# contend compare reads; bad input (a program that is no contend, or one without run --repetitions,
# two experiments, too few rounds for real runs) is refused before anything runs and creates
# nothing; a round that fails names its side and shows its log; a stopped ab stops its round;
# --resume keeps the rounds that finished and runs a cut one again, and refuses rounds of other
# files; a resumed run keeps its --repetitions.
# Usage: ab_cli_test.sh CONTEND SOURCE_DIR
set -euo pipefail
contend=$1
src=$2
tmp=$(mktemp -d /tmp/contend-ab-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
exp=$src/experiments/ci/regression.json

# A/A: the same build and experiment on both sides.
"$contend" ab "$exp" --simulate --rounds 6 --out "$tmp/aa/" >"$tmp/out.txt" 2>&1 || fail "A/A exited $?: $(cat "$tmp/out.txt")"
[ "$(grep -c " 6+6  *no change: " "$tmp/out.txt")" -eq 6 ] || fail "A/A: not 6 cells of 6+6 without change: $(cat "$tmp/out.txt")"
grep -q "^regression against the base's 6 rounds (throughput, tolerance 1.0%):$" "$tmp/out.txt" ||
  fail "A/A: not judged by throughput at ab's default tolerance, 1%: $(cat "$tmp/out.txt")"
[ "$(grep -c "^round [1-6]/6:  head" "$tmp/out.txt")" -eq 3 ] || fail "the head did not run first in 3 of 6 rounds: $(cat "$tmp/out.txt")"
grep -q "^round 6/6:  \(head\|base\) [0-9.]* s  \(head\|base\) [0-9.]* s$" "$tmp/out.txt" ||
  fail "no progress line for round 6: $(cat "$tmp/out.txt")"
for side in base head; do
  for r in 01 02 03 04 05 06; do
    [ -s "$tmp/aa/$side/round-$r/summary.json" ] || fail "no $side/round-$r/summary.json"
  done
done
/usr/bin/python3 - "$tmp/aa/head/round-03/summary.json" <<'PY' || fail "a round is not one repetition of every cell"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
assert len(cells) == 6 and all(c["repetitions"] == 1 for c in cells), cells
PY
echo "ok: A/A finds no change at 1%; 6 rounds of one repetition a side, the head first in 3, with progress"

# The head's compute 5% slower (a copy of the experiment under the same name): flagged.
/usr/bin/python3 "$src/bench/lossy_experiment.py" "$exp" "$tmp/slow.json" 1.05
rc=0
"$contend" ab "$tmp/slow.json" --base-experiment "$exp" --simulate --rounds 5 --out "$tmp/slow" --reports "$tmp/rep" \
  >"$tmp/out.txt" 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "a 5% slower head exited $rc: $(cat "$tmp/out.txt")"
grep -q "^steady *1f1b .* 5+5  *slower: slower by [3-6]\.[0-9]%" "$tmp/out.txt" ||
  fail "the loss is not named from 5+5 repetitions: $(cat "$tmp/out.txt")"
[ -s "$tmp/rep/junit.xml" ] || fail "--reports wrote no junit.xml"
grep -q "p: paired t, two-sided, Holm-adjusted over the cells tested" "$tmp/out.txt" &&
  grep -q "paired t (Holm over the cells) at 5%" "$tmp/rep/summary.md" ||
  fail "the rounds were not judged as pairs, the cells as a family: $(cat "$tmp/out.txt" "$tmp/rep/summary.md")"
# Simulated, one round decides: each side's one repetition is exact.
rc=0
"$contend" ab "$tmp/slow.json" --base-experiment "$exp" --simulate --rounds 1 --out "$tmp/slow1" >"$tmp/out.txt" 2>&1 ||
  rc=$?
[ $rc -eq 3 ] && grep -q "^steady *1f1b .* 1+1  *slower: slower by [3-6]\.[0-9]%" "$tmp/out.txt" ||
  fail "one simulated round did not judge exactly (exit $rc): $(cat "$tmp/out.txt")"
rc=0
"$contend" compare "$tmp/slow/head/round-01" "$tmp/slow/base/round-01" "$tmp/slow/base/round-02" --by throughput \
  >"$tmp/out.txt" 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "contend compare did not read the rounds' folders: exit $rc: $(cat "$tmp/out.txt")"
echo "ok: a 5% slower head exits 3, the cells named; the rounds' folders are runs compare reads"

# Bad input: refused, nothing made.
refused() {  # refused WHAT MESSAGE ARGS...
  local what=$1 message=$2
  shift 2
  rc=0
  "$contend" ab "$@" --simulate --out "$tmp/bad" >/dev/null 2>"$tmp/err.txt" || rc=$?
  [ $rc -ne 0 ] || fail "$what: accepted"
  grep -qF -- "$message" "$tmp/err.txt" || fail "$what: unclear error: $(cat "$tmp/err.txt")"
  [ ! -e "$tmp/bad" ] || fail "$what: created $tmp/bad"
}
refused "a base that is not a program" "--base: " "$exp" --base /nonexistent/contend
printf '#!/bin/sh\necho "Usage: old run [OPTIONS] experiment"\n' >"$tmp/old" && chmod +x "$tmp/old"
refused "a contend without run --repetitions" "has no \`run --repetitions\`" "$exp" --base "$tmp/old"
sed 's/"name": "regression"/"name": "other"/' "$tmp/slow.json" >"$tmp/other.json"
refused "two experiments" 'the base'"'"'s experiment is "regression", the head'"'"'s "other"' "$tmp/other.json" \
  --base-experiment "$exp"
refused "no rounds" "--rounds" "$exp" --rounds 0
rc=0
"$contend" ab "$exp" --rounds 3 --out "$tmp/bad" >/dev/null 2>"$tmp/err.txt" || rc=$?
[ $rc -eq 1 ] && grep -q "3 pairs leave Student.s t 2 degrees of freedom" "$tmp/err.txt" && [ ! -e "$tmp/bad" ] ||
  fail "3 real rounds: exit $rc: $(cat "$tmp/err.txt")"
rc=0
"$contend" ab "$exp" --simulate --out "$tmp/aa" >/dev/null 2>"$tmp/err.txt" || rc=$?
[ $rc -eq 1 ] && grep -q "exists: results are never overwritten" "$tmp/err.txt" || fail "an existing --out: exit $rc"
echo "ok: bad input refused, nothing made"

# A round that fails: its side named, its log shown.
printf '#!/bin/sh\n[ "$2" = --help ] && { echo "  --repetitions"; exit 0; }\necho "this contend cannot run it" >&2\nexit 4\n' \
  >"$tmp/broken" && chmod +x "$tmp/broken"
rc=0
"$contend" ab "$exp" --base "$tmp/broken" --simulate --seed 7 --out "$tmp/broken-out" >"$tmp/out.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "a failing base exited $rc"
grep -q "round 1 of the base .* exited with 4" "$tmp/out.txt" && grep -q "this contend cannot run it" "$tmp/out.txt" ||
  fail "the failed round is not named with its log: $(cat "$tmp/out.txt")"
echo "ok: a failed round names its side and shows its log"

# Stopped (SIGTERM, as a CI job's timeout sends it): the round in flight ends, the rounds done stay.
"$contend" ab "$exp" --simulate --rounds 1000 --out "$tmp/stop" >"$tmp/out.txt" 2>&1 &
pid=$!
for _ in $(seq 100); do [ -s "$tmp/stop/head/round-02/summary.json" ] && break; sleep 0.1; done
kill -TERM $pid
rc=0
wait $pid || rc=$?
[ $rc -eq 143 ] || fail "a stopped ab exited $rc: $(cat "$tmp/out.txt")"
grep -q "stopped \(in\|before\) round [0-9]* (\(head\|base\)); the rounds done are kept in $tmp/stop" "$tmp/out.txt" ||
  fail "the stop is not said: $(cat "$tmp/out.txt")"
[ -s "$tmp/stop/head/round-01/summary.json" ] || fail "the first round was not kept"
! pgrep -f "contend run .*$tmp/stop" >/dev/null || fail "a round's run outlived its ab"
echo "ok: a stopped ab ends its round, keeps the rounds done and exits 143"

# --resume: the rounds done kept (not run again), the rest run, a larger --rounds adds rounds.
done_before=$(ls -d "$tmp"/stop/*/round-*/summary.json | wc -l)
stamp=$(stat -c %Y "$tmp/stop/head/round-01/summary.json")
last=$(( $(ls -d "$tmp"/stop/head/round-* | grep -c -v '\.log$') + 1 ))
"$contend" ab "$exp" --simulate --rounds "$last" --resume "$tmp/stop" >"$tmp/out.txt" 2>&1 ||
  fail "--resume exited $?: $(cat "$tmp/out.txt")"
grep -q "^round 1/$last:  \(head\|base\) done  \(head\|base\) done$" "$tmp/out.txt" ||
  fail "--resume ran round 1 again: $(cat "$tmp/out.txt")"
[ "$(stat -c %Y "$tmp/stop/head/round-01/summary.json")" = "$stamp" ] || fail "--resume rewrote round 1"
[ "$(grep -c " $last+$last  *no change: " "$tmp/out.txt")" -eq 6 ] ||
  fail "--resume did not judge $last rounds a side ($done_before summaries before): $(cat "$tmp/out.txt")"
# A round whose run was stopped mid-way keeps a summary of the cells it finished: it runs again.
/usr/bin/python3 - "$tmp/stop/head/round-02/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["cells"][-1]["repetitions"] = 0
s["cells"][-1]["throughput"]["samples"] = []
json.dump(s, open(sys.argv[1], "w"))
PY
"$contend" ab "$exp" --simulate --rounds "$last" --resume "$tmp/stop" >"$tmp/out.txt" 2>&1 ||
  fail "--resume of a cut round exited $?: $(cat "$tmp/out.txt")"
grep -q "^round 2/$last: .* head [0-9.]* s" "$tmp/out.txt" && grep -q "^round 1/$last: .* head done" "$tmp/out.txt" &&
  [ "$(grep -c " $last+$last  *no change: " "$tmp/out.txt")" -eq 6 ] ||
  fail "--resume kept a round that did not finish every cell: $(cat "$tmp/out.txt")"
# Resumed with other files than its rounds ran (a changed copy under the same name): refused.
/usr/bin/python3 "$src/bench/lossy_experiment.py" "$exp" "$tmp/other.json" 1.01
rc=0
"$contend" ab "$tmp/other.json" --base-experiment "$exp" --simulate --rounds "$last" --resume "$tmp/stop" \
  >"$tmp/out.txt" 2>&1 || rc=$?
[ $rc -eq 1 ] && grep -q "head/round-01 ran other files than $tmp/other.json and its scenarios hold now" "$tmp/out.txt" ||
  fail "--resume with changed files: exit $rc, $(cat "$tmp/out.txt")"
rc=0
"$contend" ab "$exp" --simulate --resume "$tmp/two-missing" >/dev/null 2>"$tmp/err.txt" || rc=$?
[ $rc -eq 1 ] && grep -q "not the folder of a contend ab" "$tmp/err.txt" || fail "--resume of no ab: exit $rc"
echo "ok: --resume keeps the rounds done, runs the rest (and a cut one again) and adds rounds; changed files refused"

# run --repetitions, kept by --resume (a folder cut after its first cell).
"$contend" run "$exp" --simulate --repetitions 2 --no-report --out "$tmp/two" >/dev/null 2>&1 || fail "--repetitions 2"
grep -q '"repetitions": 2' "$tmp/two/env.json" || fail "env.json does not record --repetitions"
grep -v '\.r2"' "$tmp/two/cells.jsonl" >"$tmp/cut.jsonl" && mv "$tmp/cut.jsonl" "$tmp/two/cells.jsonl"
[ "$(wc -l <"$tmp/two/cells.jsonl")" -eq 6 ] || fail "the cut left $(wc -l <"$tmp/two/cells.jsonl") cells, not 6"
"$contend" run "$exp" --simulate --resume "$tmp/two" --no-report >"$tmp/out.txt" 2>&1 || fail "resume: $(cat "$tmp/out.txt")"
/usr/bin/python3 - "$tmp/two/summary.json" <<'PY' || fail "the resumed run did not keep its 2 repetitions"
import json, sys
cells = json.load(open(sys.argv[1]))["cells"]
assert all(c["repetitions"] == 2 for c in cells), [c["repetitions"] for c in cells]
PY
sed -i 's/"repetitions": 2/"repetitions": 0/' "$tmp/two/env.json"
rc=0
"$contend" run "$exp" --simulate --resume "$tmp/two" --no-report >/dev/null 2>"$tmp/err.txt" || rc=$?
[ $rc -eq 1 ] && grep -q -- "--resume $tmp/two: .*repetitions" "$tmp/err.txt" ||
  fail "a resumed folder's damaged count: exit $rc, $(cat "$tmp/err.txt")"
echo "ok: run --repetitions, recorded and kept by --resume (a damaged count refused)"
