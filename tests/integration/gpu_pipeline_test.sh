#!/usr/bin/env bash
# Four cuda stages on one GPU, one worker per namespace, over the host-staged TCP transport and
# over NCCL (sockets on the node's link interfaces, a host id per namespace, as `contend run` sets
# them) through shaped links, 1F1B and kFkB: every iteration's loss equals the cpu pipeline's.
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
ifnames=(=c0-n1 =c0-n0,c1-n2 =c1-n1,c2-n3 =c2-n2)
nccl=""
"$contend" --version | grep -q "nccl=built" && nccl=cuda-nccl
for schedule in 1f1b kfkb:k=2; do
  for variant in cpu cuda $nccl; do
    mine=()
    for r in 0 1 2 3; do
      env=() args=(--backend "${variant%-nccl}")
      if [ "$variant" = cuda-nccl ]; then
        env=(NCCL_SOCKET_IFNAME="${ifnames[$r]}" NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_IB_DISABLE=1
             NCCL_HOSTID="contend-$run.n$r")
        args+=(--transport nccl)
      fi
      ip netns exec "contend-$run.n$r" env "${env[@]}" "$contend" worker --rank $r --world-size 4 --peers "$peers" \
        "${args[@]}" --schedule $schedule --microbatches 8 --iterations 3 --hidden 256 --layers 8 \
        --metrics "$tmp/$variant.$schedule.$r.jsonl" 2>"$tmp/$variant.$r.err" &
      mine+=($!); pids+=($!)
    done
    for p in "${mine[@]}"; do wait "$p" || fail "$variant $schedule: $(cat "$tmp"/$variant.*.err)"; done
  done
  python3 - "$tmp" "$schedule" $nccl <<'PY' || fail "$schedule: cuda and cpu losses differ"
import json, sys
t, s = sys.argv[1], sys.argv[2]
loss = lambda b: [json.loads(l)["loss"] for l in open(f"{t}/{b}.{s}.3.jsonl")]
c = loss("cpu")
for variant in ["cuda"] + sys.argv[3:]:
    g = loss(variant)
    assert len(c) == len(g) == 3 and all(abs(a - b) <= 1e-4 * abs(a) for a, b in zip(c, g)), (variant, c, g)
    print(s, variant, "losses", g)
PY
done
"$contend" emu down --run "$run" >/dev/null
no_leftovers
