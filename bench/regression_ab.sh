#!/usr/bin/env bash
# docs/regression.md's false alarms and misses of `contend ab`, trial by trial. A trial runs three
# arms round by round, each round every cell once per arm in a shuffled order (as ab runs its two
# sides): the base (the shipped regression experiment), a clean head (the same: an unchanged tree)
# and a lossy head (every stage's compute 3% slower, bench/lossy_experiment.py). Then `contend ab
# --resume` judges the clean head against the base (A/A: a flag is a false alarm) and the lossy head
# against the same base (A/B: a flag is a loss caught), from the rounds on disk. Three arms share
# the base's rounds: 3 runs a round where two abs would take 4. Each verdict's exit code goes to
# OUT/verdicts.txt, its table beside its folder; a trial already judged is kept, so a cut series
# continues where it stopped. Needs root (real runs). Prints the counts at the end. TOLERANCE: ab's
# own (1%) unless given; a trial is judged again at another by `contend ab ... --resume OUT/aa-N`.
# Usage: bench/regression_ab.sh CONTEND OUT LAST [FIRST] [TOLERANCE] [ROUNDS]
set -euo pipefail
contend=$1
out=$2
last=$3
first=${4:-1}
tolerance=${5:-}
rounds=${6:-5}
here=$(cd "$(dirname "$0")/.." && pwd)
exp=$here/experiments/ci/regression.json
mkdir -p "$out"
/usr/bin/python3 "$here/bench/lossy_experiment.py" "$exp" "$out/regression-loss.json"
finished() {  # finished FOLDER: the run measured every cell (a stopped one's summary lacks some)
  /usr/bin/python3 -c 'import json, sys; c = json.load(open(sys.argv[1]))["cells"]
sys.exit(0 if c and all(x["repetitions"] > 0 for x in c) else 1)' "$1/summary.json" 2>/dev/null
}
arm() {  # arm EXPERIMENT FOLDER: one round of one arm (kept when it finished before)
  finished "$2" && return 0
  rm -rf "$2"
  "$contend" run "$1" --repetitions 1 --no-report --keep-awake --out "$2" >"$2.log" 2>&1 ||
    { echo "round $2 failed: see $2.log" >&2; return 1; }
}
judge() {  # judge NAME HEAD_EXPERIMENT
  local rc=0
  "$contend" ab "$2" --base-experiment "$exp" --rounds "$rounds" ${tolerance:+--tolerance "$tolerance"} \
    --resume "$out/$1" >"$out/$1.txt" 2>&1 || rc=$?
  [ $rc -eq 0 ] || [ $rc -eq 3 ] || { echo "judging $1 failed (exit $rc): see $out/$1.txt" >&2; return 1; }
  echo "$1 $rc" >>"$out/verdicts.txt"
}
for i in $(seq "$first" "$last"); do
  grep -q "^ab-$i " "$out/verdicts.txt" 2>/dev/null && continue
  mkdir -p "$out/aa-$i/base" "$out/aa-$i/head" "$out/ab-$i/head"
  for r in $(seq -f %02g 1 "$rounds"); do
    for a in $(printf 'base\nclean\nloss\n' | shuf); do
      case $a in
        base) arm "$exp" "$out/aa-$i/base/round-$r" ;;
        clean) arm "$exp" "$out/aa-$i/head/round-$r" ;;
        loss) arm "$out/regression-loss.json" "$out/ab-$i/head/round-$r" ;;
      esac
    done
  done
  rm -rf "$out/ab-$i/base" && cp -r "$out/aa-$i/base" "$out/ab-$i/base"
  grep -q "^aa-$i " "$out/verdicts.txt" 2>/dev/null || judge "aa-$i" "$exp"
  judge "ab-$i" "$out/regression-loss.json"
  echo "$(date +%T) trial $i: $(grep -E "^a[ab]-$i " "$out/verdicts.txt" | tr '\n' ' ')"
done
echo "A/A flagged (false alarms): $(grep -c '^aa-[0-9]* 3$' "$out/verdicts.txt" || true) of $(grep -c '^aa-' "$out/verdicts.txt")"
echo "A/B flagged (3% loss caught): $(grep -c '^ab-[0-9]* 3$' "$out/verdicts.txt" || true) of $(grep -c '^ab-' "$out/verdicts.txt")"
