#!/usr/bin/env bash
# The runs behind docs/regression.md's false alarms, misses and change points: the shipped
# regression experiment (experiments/ci/regression.json) on an unchanged tree ("clean") and with
# every stage's compute 3% slower ("loss": fwd and bwd times x 1.03 in a copy of the experiment
# under the same name, the change a slower kernel would make), alternated run by run so the
# machine's drift falls on both alike, after one clean reference run. Evaluate the folders with
# bench/regression_verdicts.py. Needs root (real runs). A folder that holds a summary is kept, so
# a cut series continues where it stopped.
# Usage: bench/regression_runs.sh CONTEND OUT LAST [FIRST] [SIDES]
#   runs number FIRST (default 1) to LAST of each side in SIDES (default "clean loss"), alternated
set -euo pipefail
contend=$1
out=$2
last=$3
first=${4:-1}
sides=${5:-clean loss}
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
# The lossy copy: the same experiment, scenarios by absolute path, compute 3% slower.
/usr/bin/python3 "$here/bench/lossy_experiment.py" "$here/experiments/ci/regression.json" "$out/regression-loss.json"
run() {  # run EXPERIMENT FOLDER
  [ -f "$2/summary.json" ] && return 0
  rm -rf "$2"
  "$contend" run "$1" --out "$2" > "$2.log" 2>&1 || { echo "run $2 failed: see $2.log" >&2; return 1; }
  echo "$(date +%T) $2"
}
run "$here/experiments/ci/regression.json" "$out/reference"
for i in $(seq "$first" "$last"); do
  for side in $sides; do
    if [ "$side" = clean ]; then
      run "$here/experiments/ci/regression.json" "$out/clean-$i"
    else
      run "$out/regression-loss.json" "$out/loss-$i"
    fi
  done
done
