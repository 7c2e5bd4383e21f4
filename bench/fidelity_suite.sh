#!/usr/bin/env bash
# The fidelity suite (docs/fidelity.md): every experiments/suites/fidelity/fidelity-*.json run for
# real (root: namespaces), then simulated three ways: the ideal pipeline, with a calibration
# measured here over loopback (--calibration host) and with the real run's own calibration.json.
# Keeps every results folder in OUT/NAME/{real,ideal,host,own}, writes OUT/measured.json
# (contend.fidelity/1: what `contend run --simulate` quotes; copy it to experiments/suites/fidelity/ to
# publish it) and prints the table of simulated / real per cell.
# Run: bash bench/fidelity_suite.sh build/default/bin/contend [OUT] [EXPERIMENT ...]
#      (all eight experiments: about 40 minutes here). With REUSE_REAL=1, an experiment whose real
#      results are already in OUT is only summarized, calibrated (--resume) and simulated again,
#      by this build (after a change to the simulator or the calibration). The real runs keep
#      the CPUs awake (--keep-awake), as `--calibration host` does while it probes: on a virtual
#      machine both then measure the machine, not its hypervisor's other load.
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
out=$(realpath -m "${2:-/tmp/fidelity-suite}")
here=$(dirname "$(realpath "$0")")
shift $(( $# < 2 ? $# : 2 ))
experiments=("$@")
[ ${#experiments[@]} -gt 0 ] || experiments=("$here"/../experiments/suites/fidelity/fidelity-*.json)
mkdir -p "$out"
for exp in "${experiments[@]}"; do
  name=$(basename "$exp" .json)
  dir=$out/$name
  if [ "${REUSE_REAL:-0}" = 1 ] && [ -f "$dir/real/calibration.json" ]; then
    rm -rf "$dir/ideal" "$dir/host" "$dir/own"
    # --resume with every cell done: the summary and calibration.json again, by this build
    "$contend" run "$exp" --resume "$dir/real" --no-report >"$dir/resume.log" 2>&1 || { cat "$dir/resume.log" >&2; exit 1; }
  else
    rm -rf "$dir"
    mkdir -p "$dir"
    echo "$name: real" >&2
    "$contend" run "$exp" --out "$dir/real" --keep-awake --no-report >"$dir/real.log" 2>&1 || { cat "$dir/real.log" >&2; exit 1; }
  fi
  echo "$name: simulated (ideal, host, own)" >&2
  "$contend" run "$exp" --simulate --out "$dir/ideal" --no-report >"$dir/ideal.log" 2>&1
  "$contend" run "$exp" --simulate --calibration host --out "$dir/host" --no-report >"$dir/host.log" 2>&1
  "$contend" run "$exp" --simulate --calibration "$dir/real/calibration.json" --out "$dir/own" --no-report \
    >"$dir/own.log" 2>&1
done
"${CONTEND_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}" "$here/fidelity_suite.py" "$out" "${experiments[@]}"
