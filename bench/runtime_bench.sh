#!/usr/bin/env bash
# Pipeline runtime benchmarks (root: namespaces). Prints Markdown tables (the transport alone
# against iperf3: bench/transport_bench.sh).
#  1. Runtime overhead per action: 4 workers on loopback, zero compute, 64-byte tensors.
#  2. Fidelity: experiments/suites/fidelity/fidelity-steady.json (4 emulated stages through shaped links, 100 Mbit/s to
#     2 Gbit/s) for real, against `--simulate` without and with the real run's calibration.
# Run: bash bench/runtime_bench.sh build/default/bin/contend
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
tmp=$(mktemp -d)
export CONTEND_STATE_DIR=$tmp
mine=()
trap 'for p in "${mine[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT

echo "### Runtime overhead per action (loopback, 4 workers, zero compute, 64-byte tensors)"
echo
peers=""; for r in 0 1 2 3; do peers+="${peers:+,}127.0.0.1:$((29700 + r))"; done
for r in 0 1 2 3; do
  "$contend" worker --rank $r --world-size 4 --peers "$peers" --backend emulated --fwd 0s --bwd 0s \
    --activation 64B --schedule 1f1b --microbatches 64 --iterations 30 --metrics "$tmp/ov.$r.jsonl" &
  mine+=($!)
done
for p in "${mine[@]}"; do wait "$p"; done
python3 - "$tmp" <<'PY'
import json, statistics, sys
# Rank 1 runs 64 F, 64 B, 64 RECV_F, 64 SEND_F, 64 RECV_B, 64 SEND_B = 384 actions per iteration.
it = statistics.median(json.loads(l)["iteration_s"] for l in list(open(f"{sys.argv[1]}/ov.1.jsonl"))[5:])
print("| iteration (median of 25) | actions of rank 1 | per action |")
print("|---|---|---|")
print(f"| {it * 1e3:.2f} ms | 384 | {it / 384 * 1e6:.1f} us |")
PY

echo
echo "### Fidelity: measured throughput against the simulator, without and with the run's calibration"
echo
# experiments/suites/fidelity/fidelity-steady.json for real (in namespaces, under this script's own state dir), then
# simulated: the ideal pipeline, and the runtime's costs as the real run recorded them.
here=$(dirname "$(realpath "$0")")
"$contend" run "$here/../experiments/suites/fidelity/fidelity-steady.json" --out "$tmp/real" >/dev/null
"$contend" run "$here/../experiments/suites/fidelity/fidelity-steady.json" --simulate --out "$tmp/ideal" >/dev/null 2>&1
"$contend" run "$here/../experiments/suites/fidelity/fidelity-steady.json" --simulate --calibration "$tmp/real/calibration.json" \
  --out "$tmp/calibrated" >/dev/null 2>&1
python3 -c "import json; print('calibration:', json.load(open('$tmp/real/calibration.json'))['source'])"
echo
python3 "$here/fidelity_table.py" "$tmp/real" "$tmp/ideal" "$tmp/calibrated"
