#!/usr/bin/env bash
# Shaping accuracy from 10 Mbit to 5 Gbit: iperf3 TCP goodput (cubic, 4 s, first second omitted)
# through one shaped veth, against 0.956 x rate. Root. Prints a Markdown table.
# Run: bash bench/shaping_accuracy.sh build/default/bin/contend
set -euo pipefail
contend=${1:-build/default/bin/contend}
tmp=$(mktemp -d)
run=acc$$
export CONTEND_STATE_DIR=$tmp
trap '"$contend" emu down --run $run >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
echo "| rate | iperf3 goodput | goodput / (0.956 x rate) |"
echo "|---|---|---|"
for rate in 10Mbit 100Mbit 500Mbit 1Gbit 2Gbit 5Gbit; do
  cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "10s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "$rate"}]}
JSON
  "$contend" emu up "$tmp/s.json" >/dev/null
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.18.0.2 >/dev/null 2>&1 &
  server=$!
  sleep 0.3
  bps=$(ip netns exec "contend-$run.a" iperf3 -c 198.18.0.2 -B 198.18.0.1 -t 4 -O 1 -C cubic -J |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
  wait $server || true
  "$contend" emu down --run $run >/dev/null
  python3 -c "
import sys
r = {'10Mbit': 10e6, '100Mbit': 100e6, '500Mbit': 500e6, '1Gbit': 1e9, '2Gbit': 2e9, '5Gbit': 5e9}['$rate']
print(f'| $rate | {$bps / 1e6:.1f} Mbit/s | {$bps / (0.956 * r):.3f} |')"
done
