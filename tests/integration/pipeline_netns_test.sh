#!/usr/bin/env bash
# 2- and 4-stage pipelines between namespaces through shaped links: workers run inside the nodes
# (ip netns exec), the links' 200 Mbit/s bounds the iteration time, and peak activation memory
# per stage is the schedule's prediction.
source "$(dirname "$0")/lib.sh"
need_root
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "60s", "nodes": ["n0", "n1", "n2", "n3"],
 "links": [{"name": "l0", "from": "n0", "to": "n1", "rate": "200Mbit"},
           {"name": "l1", "from": "n1", "to": "n2", "rate": "200Mbit"},
           {"name": "l2", "from": "n2", "to": "n3", "rate": "200Mbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
# Host routes: n0 reaches n1's address on l1 through l0 (what NCCL, listening on one interface
# for both neighbours, needs), and nothing beyond its neighbour.
ip -n "contend-$run.n0" route get 198.18.0.5 | grep -q "via 198.18.0.2 dev c0-n1" ||
  fail "no route from n0 to n1's far address: $(ip -n "contend-$run.n0" route)"
ip netns exec "contend-$run.n1" python3 -c '
import socket; s = socket.create_server(("198.18.0.5", 29599)); s.settimeout(10); s.accept()' &
pids+=($!)
wait_for_port "contend-$run.n1" 29599
ip netns exec "contend-$run.n0" python3 -c 'import socket; socket.create_connection(("198.18.0.5", 29599), 5)' ||
  fail "n0 cannot connect to n1's far address"
! ip -n "contend-$run.n0" route get 198.18.0.6 >/dev/null 2>&1 || fail "n0 routes to n2, which is not its neighbour"
# Rank r listens on its address on the link from r-1 (rank 0 on its first link).
addr=(198.18.0.1 198.18.0.2 198.18.0.6 198.18.0.10)

pipeline() {  # pipeline NAME WORLD ARGS...
  local name=$1 world=$2; shift 2
  local peers="" r rc=0 mine=()
  for r in $(seq 0 $((world - 1))); do peers+="${peers:+,}${addr[$r]}:29500"; done
  for r in $(seq 0 $((world - 1))); do
    ip netns exec "contend-$run.n$r" "$contend" worker --rank "$r" --world-size "$world" --peers "$peers" \
      --metrics "$tmp/$name.$r.jsonl" --connect-timeout 10s --timeout 20s "$@" 2>"$tmp/$name.$r.err" &
    mine+=($!); pids+=($!)
  done
  for p in "${mine[@]}"; do wait "$p" || rc=1; done
  [ $rc -eq 0 ] || fail "$name: $(cat "$tmp"/$name.*.err)"
}

for schedule in 1f1b kfkb:k=2; do
  pipeline "p4-$schedule" 4 --backend emulated --fwd 2ms --activation 1MiB --microbatches 8 --iterations 2 \
    --schedule "$schedule"
  python3 - "$tmp" "p4-$schedule" <<'PY' || fail "$schedule through shaped links"
import json, sys
k = 1 if sys.argv[2].endswith("1f1b") else 2
for rank in range(4):
    lines = [json.loads(l) for l in open(f"{sys.argv[1]}/{sys.argv[2]}.{rank}.jsonl")]
    assert len(lines) == 2
    assert all(l["peak_activation_bytes"] == min(8, k * (4 - rank)) * (1 << 20) for l in lines), (rank, lines[0])
    # Every rank receives 8 MiB per iteration over a 200 Mbit/s link (0.956 x 200 Mbit/s of goodput):
    # at least 0.35 s.
    assert all(l["iteration_s"] > 0.35 for l in lines), (rank, [l["iteration_s"] for l in lines])
print(sys.argv[2], "iteration", ["%.2fs" % json.loads(l)["iteration_s"] for l in open(f"{sys.argv[1]}/{sys.argv[2]}.0.jsonl")])
PY
done
pipeline p2-cpu 2 --backend cpu --hidden 64 --layers 4 --microbatches 4 --iterations 3
[ "$(wc -l <"$tmp/p2-cpu.1.jsonl")" -eq 3 ] || fail "cpu run metrics"
"$contend" emu down --run "$run" >/dev/null
no_leftovers
