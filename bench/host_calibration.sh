#!/usr/bin/env bash
# How much `--calibration host` varies from run to run: runs it ROUNDS times (default 5) on each
# experiment and prints what each measured (latency per transfer, line rate) and the simulated
# throughput of every cell, with the median and the range. No root.
# Run: bash bench/host_calibration.sh build/default/bin/contend [ROUNDS] EXPERIMENT.json ...
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
rounds=${2:-5}
shift $(( $# < 2 ? $# : 2 ))
[ $# -gt 0 ] || set -- experiments/suites/fidelity/fidelity-two.json experiments/suites/fidelity/fidelity-steady.json
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for exp in "$@"; do
  name=$(basename "$exp" .json)
  for i in $(seq "$rounds"); do
    start=$(date +%s.%N)
    "$contend" run "$exp" --simulate --calibration host --out "$tmp/$name.$i" --no-report >"$tmp/$name.$i.log" 2>&1 ||
      { cat "$tmp/$name.$i.log" >&2; exit 1; }
    echo "$(date +%s.%N) - $start" | bc >"$tmp/$name.$i.seconds"
  done
done
"${CONTEND_PYTHON:-$( [ -x /usr/bin/python3 ] && echo /usr/bin/python3 || echo python3)}" - "$tmp" "$rounds" "$@" <<'PY'
import json, os, statistics, sys
tmp, rounds, experiments = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def spread(xs, fmt):
    return f"median {fmt(statistics.median(xs))}, {fmt(min(xs))}-{fmt(max(xs))}"
for exp in experiments:
    name = os.path.basename(exp)[:-len(".json")]
    lat, line, secs, cells = [], [], [], {}
    for i in range(1, rounds + 1):
        c = json.load(open(f"{tmp}/{name}.{i}/calibration.json"))
        lat.append(c["latency_s"] * 1e6)
        line.append(c.get("line_bps", 0) / 1e9)
        secs.append(float(open(f"{tmp}/{name}.{i}.seconds").read()))
        for cell in json.load(open(f"{tmp}/{name}.{i}/summary.json"))["cells"]:
            cells.setdefault((cell["scenario"], cell["schedule"]), []).append(cell["throughput"]["median"])
    print(f"{name}, {rounds} runs of --calibration host ({spread(secs, lambda x: f'{x:.1f} s')} each):")
    print(f"  latency per transfer: {spread(lat, lambda x: f'{x:.0f} us')}")
    print(f"  line rate (0: faster than the fit reaches): {spread(line, lambda x: f'{x:.1f} Gbit/s')}")
    for (scenario, schedule), xs in cells.items():
        print(f"  {scenario} / {schedule}: simulated {spread(xs, lambda x: f'{x:.1f}')} samples/s "
              f"(range {100 * (max(xs) - min(xs)) / statistics.median(xs):.1f}% of the median)")
PY
