#!/usr/bin/env bash
# Four cuda stages on one GPU, one worker per namespace, over the host-staged TCP transport
# through shaped links, 1F1B and kFkB: every iteration's loss equals the cpu pipeline's.
source "$(dirname "$0")/lib.sh"
need_root
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || skip "needs a CUDA device"
"$contend" --version | grep -q "cuda=built" || skip "CUDA was not built"
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "60s", "nodes": ["n0", "n1", "n2", "n3"],
 "links": [{"name": "l0", "from": "n0", "to": "n1", "rate": "1Gbit"},
           {"name": "l1", "from": "n1", "to": "n2", "rate": "1Gbit"},
           {"name": "l2", "from": "n2", "to": "n3", "rate": "1Gbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
addr=(198.18.0.1 198.18.0.2 198.18.0.6 198.18.0.10)
peers="${addr[0]}:29500,${addr[1]}:29500,${addr[2]}:29500,${addr[3]}:29500"
for schedule in 1f1b kfkb:k=2; do
  for backend in cpu cuda; do
    mine=()
    for r in 0 1 2 3; do
      ip netns exec "contend-$run-n$r" "$contend" worker --rank $r --world-size 4 --peers "$peers" \
        --backend $backend --schedule $schedule --microbatches 8 --iterations 3 --hidden 256 --layers 8 \
        --metrics "$tmp/$backend.$schedule.$r.jsonl" 2>"$tmp/$backend.$r.err" &
      mine+=($!); pids+=($!)
    done
    for p in "${mine[@]}"; do wait "$p" || fail "$backend $schedule: $(cat "$tmp"/$backend.*.err)"; done
  done
  python3 - "$tmp" "$schedule" <<'PY' || fail "$schedule: cuda and cpu losses differ"
import json, sys
t, s = sys.argv[1], sys.argv[2]
loss = lambda b: [json.loads(l)["loss"] for l in open(f"{t}/{b}.{s}.3.jsonl")]
c, g = loss("cpu"), loss("cuda")
assert len(c) == len(g) == 3 and all(abs(a - b) <= 1e-4 * abs(a) for a, b in zip(c, g)), (c, g)
print(s, "losses", g)
PY
done
"$contend" emu down --run "$run" >/dev/null
no_leftovers
