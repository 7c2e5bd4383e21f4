#!/usr/bin/env bash
# `contend emu predict` at scale (no root): a leaf-spine of 1024 hosts (32 leaves of 32, 8 spines;
# 100 Gbit/s hosts, 400 Gbit/s uplinks) with 16 flows from every host to seeded random others,
# 16,384 TCP streams routed and shared max-min. Prints the prediction's own time (parse excluded)
# and the whole command's wall time, ROUNDS times, and their medians.
# Usage: bench/fabric_predict.sh CONTEND [ROUNDS]
set -euo pipefail
contend=$1
rounds=${2:-5}
tmp=$(mktemp -d /tmp/contend-fabric-predict-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
python3 - "$tmp/ls1024.json" <<'PY'
import json, random, sys
rng = random.Random(1)
hosts, timeline = 1024, []
for h in range(hosts):
    for k in range(16):
        d = rng.randrange(hosts - 1)
        timeline.append({"at": "0s", "flow": {"name": f"f{h}_{k}", "from": f"h{h}", "to": f"h{d if d < h else d + 1}"}})
json.dump({"schema": "contend.scenario/1", "name": "ls1024", "duration": "10s",
           "fabric": {"leaf-spine": {"leaves": 32, "hosts_per_leaf": 32, "spines": 8,
                                     "host_rate": "100Gbit", "uplink_rate": "400Gbit"}},
           "timeline": timeline}, open(sys.argv[1], "w"))
PY
for i in $(seq "$rounds"); do
  start=$(date +%s.%N)
  "$contend" emu predict "$tmp/ls1024.json" --json "$tmp/p$i.json"
  end=$(date +%s.%N)
  python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["took_s"], float(sys.argv[3]) - float(sys.argv[2]))' \
    "$tmp/p$i.json" "$start" "$end"
done | python3 -c '
import statistics, sys
rows = [tuple(map(float, l.split())) for l in sys.stdin]
print("| 1024 hosts, 16,384 streams | prediction (s) | command, parse included (s) |")
print("|---|---|---|")
print(f"| median of {len(rows)} | {statistics.median(r[0] for r in rows):.3f} | {statistics.median(r[1] for r in rows):.3f} |")
print(f"| range | {min(r[0] for r in rows):.3f}-{max(r[0] for r in rows):.3f} | {min(r[1] for r in rows):.3f}-{max(r[1] for r in rows):.3f} |")'
