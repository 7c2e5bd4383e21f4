#!/usr/bin/env bash
# What a fabric's port discipline costs: a 64-host leaf-spine (8 leaves, 4 spines, 192 ports)
# built, played idle and taken down under each qdisc, alternated, ROUNDS times each: `emu up`'s
# wall time, the player's CPU (user + sys) over a play of SECONDS, its events log, `emu down`'s
# wall time. Prints each round and the medians. As root, on a quiet machine.
#   sudo bench/fabric_ports.sh build/default/bin/contend [ROUNDS] [SECONDS] [QDISC...]
set -euo pipefail
contend=$(realpath "$1")
rounds=${2:-3}
seconds=${3:-20}
shift $(($# < 3 ? $# : 3))
qdiscs=(htb fair-queue)
[ $# -gt 0 ] && qdiscs=("$@")
tmp=$(mktemp -d)
run=fp$$
trap '"$contend" emu down --run "$run" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

scenario() { # QDISC
  cat >"$tmp/$1.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "${seconds}s",
 "fabric": {"leaf-spine": {"leaves": 8, "hosts_per_leaf": 8, "spines": 4, "host_rate": "1Gbit",
                           "uplink_rate": "1Gbit", "qdisc": "$1"}}}
JSON
}

now() { date +%s.%N; }
for q in "${qdiscs[@]}"; do scenario "$q"; done
for round in $(seq "$rounds"); do
  for q in "${qdiscs[@]}"; do
    t0=$(now)
    "$contend" emu up --run "$run" "$tmp/$q.json" >/dev/null
    t1=$(now)
    rm -f "$tmp/events.jsonl"
    cpu=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], check=True, stdout=subprocess.DEVNULL)
r = resource.getrusage(resource.RUSAGE_CHILDREN)
print(r.ru_utime, r.ru_stime)' "$contend" emu play --run "$run" --keep --quiet --log "$tmp/events.jsonl" "$tmp/$q.json")
    t2=$(now)
    "$contend" emu down --run "$run" >/dev/null
    t3=$(now)
    python3 - "$q" "$round" "$t0" "$t1" "$t2" "$t3" "$cpu" "$(stat -c %s "$tmp/events.jsonl")" "$seconds" <<'PY' |
import sys
q, rnd, t0, t1, t2, t3, cpu, size, secs = sys.argv[1:]
user, system = (float(x) for x in cpu.split())
print(q, rnd, f"{float(t1) - float(t0):.3f}", f"{(user + system) / float(secs):.3f}",
      f"{int(size) / float(secs) * 60 / 1e6:.3f}", f"{float(t3) - float(t2):.3f}")
PY
      tee -a "$tmp/rows"
  done
done
python3 - "$tmp/rows" <<'PY'
import statistics, sys
rows = [line.split() for line in open(sys.argv[1])]
print("qdisc        up_s   player_cpu  log_MB_per_min  down_s   (medians of", len(rows) // len({r[0] for r in rows}), "rounds)")
for q in dict.fromkeys(r[0] for r in rows):
    mine = [r for r in rows if r[0] == q]
    med = [statistics.median(float(r[i]) for r in mine) for i in (2, 3, 4, 5)]
    print(f"{q:12} {med[0]:6.3f} {med[1]:10.3f} {med[2]:15.3f} {med[3]:7.3f}")
PY
