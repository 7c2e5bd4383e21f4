#!/usr/bin/env bash
# docs/regression.md's false alarms and misses of `contend ab`: trial after trial, an A/A comparison
# (the shipped regression experiment against itself: an unchanged tree) and an A/B one (the head's
# compute 3% slower, bench/lossy_experiment.py, against the unchanged base), alternated, each
# `contend ab` of 5 rounds; a trial is flagged when its ab exits 3. Each trial's exit code goes to
# OUT/verdicts.txt, its output beside its folder; a trial already there is kept, so a cut series
# continues where it stopped. Needs root (real runs). Prints the counts at the end.
# Usage: bench/regression_ab.sh CONTEND OUT LAST [FIRST] [TOLERANCE] [ROUNDS]
set -euo pipefail
contend=$1
out=$2
last=$3
first=${4:-1}
tolerance=${5:-2%}
rounds=${6:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
exp=$here/experiments/ci/regression.json
mkdir -p "$out"
/usr/bin/python3 "$here/bench/lossy_experiment.py" "$exp" "$out/regression-loss.json"
trial() {  # trial NAME HEAD_EXPERIMENT
  grep -q "^$1 " "$out/verdicts.txt" 2>/dev/null && return 0
  rm -rf "${out:?}/$1"
  local rc=0
  "$contend" ab "$2" --base-experiment "$exp" --rounds "$rounds" --tolerance "$tolerance" --keep-awake \
    --out "$out/$1" >"$out/$1.txt" 2>&1 || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "trial $1 failed (exit $rc): see $out/$1.txt" >&2; return 1; }
  echo "$1 $rc" >>"$out/verdicts.txt"
  echo "$(date +%T) $1 exit $rc"
}
for i in $(seq "$first" "$last"); do
  trial "aa-$i" "$exp"
  trial "ab-$i" "$out/regression-loss.json"
done
echo "A/A flagged (false alarms): $(grep -c '^aa-[0-9]* 3$' "$out/verdicts.txt" || true) of $(grep -c '^aa-' "$out/verdicts.txt")"
echo "A/B flagged (3% loss caught): $(grep -c '^ab-[0-9]* 3$' "$out/verdicts.txt" || true) of $(grep -c '^ab-' "$out/verdicts.txt")"
