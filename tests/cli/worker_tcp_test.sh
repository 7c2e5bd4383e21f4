#!/usr/bin/env bash
# `contend worker` over TCP on loopback (no root): a 4-stage pipeline trains exactly what one
# process trains (same loss every iteration, within 1e-5) for every schedule; a 2-stage emulated
# run reports what the schedule predicts; killing one worker ends the others with an error naming
# it within the timeout, and no worker is left running.
# Usage: worker_tcp_test.sh PATH/TO/contend
set -euo pipefail
contend=$1
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
base=$((20000 + RANDOM % 10000))  # below the ephemeral ports (32768 and up)

# launch NAME WORLD ARGS...: one worker per rank on loopback; waits; returns non-zero if any failed.
launch() {
  local name=$1 world=$2; shift 2
  local peers="" r rc=0
  for r in $(seq 0 $((world - 1))); do peers+="${peers:+,}127.0.0.1:$((base + r))"; done
  base=$((base + world))
  local mine=()
  for r in $(seq 0 $((world - 1))); do
    CONTEND_RANK=$r CONTEND_WORLD_SIZE=$world CONTEND_PEERS=$peers \
      "$contend" worker --metrics "$tmp/$name.$r.jsonl" --connect-timeout 10s --timeout 10s "$@" 2>"$tmp/$name.$r.err" &
    mine+=($!); pids+=($!)
  done
  for p in "${mine[@]}"; do wait "$p" || rc=1; done
  return $rc
}

model=(--hidden 32 --layers 8 --microbatch-size 2 --seq-len 8 --microbatches 8 --iterations 5 --optimizer adam --lr 0.003)
launch ref 1 "${model[@]}" || fail "single-process run: $(cat "$tmp"/ref.*.err)"
# The zoo too: interleaved and zero-bubble schedules run 2 chunks per rank (8 stages of 8 layers),
# looped ones sending from rank 3 to rank 0, V ones keeping the last stage on rank 0.
for schedule in 1f1b kfkb:k=2 kfkb:k=4 gpipe interleaved:v=2 zb:v=2 zbv dualpipev; do
  launch "p4-$schedule" 4 "${model[@]}" --schedule "$schedule" --checksum || fail "$schedule: $(cat "$tmp"/p4-$schedule.*.err)"
  python3 - "$tmp/ref.0.jsonl" "$tmp" "p4-$schedule" <<'PY' || fail "$schedule trains a different model"
import json, sys
ref = [json.loads(l)["loss"] for l in open(sys.argv[1])]
# The rank of the last stage is the one that reports losses.
ranks = [[json.loads(l)["loss"] for l in open(f"{sys.argv[2]}/{sys.argv[3]}.{r}.jsonl")] for r in range(4)]
got = [losses for losses in ranks if losses and losses[0] is not None]
assert len(got) == 1, ranks
got = got[0]
assert len(ref) == len(got) == 5, (ref, got)
for a, b in zip(ref, got):
    assert abs(a - b) <= 1e-5 * abs(a), (a, b)
print(f"{sys.argv[3][3:]}: 4 ranks over TCP match one process: loss {got[0]:.6f} -> {got[-1]:.6f}")
PY
done

# Emulated compute: peak activation bytes per rank as the schedule predicts (kfkb:k=2, p=2, m=8).
launch emu 2 --backend emulated --fwd 1ms --activation 64KiB --schedule kfkb:k=2 --microbatches 8 --iterations 3 \
  --trace "$tmp/trace.json" || fail "emulated run: $(cat "$tmp"/emu.*.err)"
python3 - "$tmp" <<'PY' || fail "emulated metrics"
import json, sys
for rank, inflight in ((0, 4), (1, 2)):
    lines = [json.loads(l) for l in open(f"{sys.argv[1]}/emu.{rank}.jsonl")]
    assert len(lines) == 3 and all(l["schema"] == "contend.iteration/1" for l in lines)
    assert all(l["peak_activation_bytes"] == inflight * 65536 for l in lines), lines[0]
    assert all(l["k"] == 2 and l["iteration_s"] > 0.024 for l in lines), lines[0]
    assert lines[0]["bytes_sent"] == 8 * 65536
# The Chrome trace (the last rank to finish wrote the file): one event per action per iteration.
trace = json.load(open(f"{sys.argv[1]}/trace.json"))
events = [e for e in trace["traceEvents"] if e["ph"] == "X"]
assert len(events) == 3 * 32, len(events)  # each rank: 8 F, 8 B, 8 SEND and 8 RECV per iteration
assert {e["tid"] for e in events} == {0, 1, 2}
PY

# A killed worker: the others end with an error naming it, within the timeout.
peers=""; for r in 0 1 2 3; do peers+="${peers:+,}127.0.0.1:$((base + r))"; done
kill_pids=()
for r in 0 1 2 3; do
  "$contend" worker --rank $r --world-size 4 --peers "$peers" --backend emulated --fwd 5ms --iterations 1000 \
    --timeout 3s --metrics "$tmp/kill.$r.jsonl" 2>"$tmp/kill.$r.err" &
  kill_pids+=($!); pids+=($!)
done
# Until the pipeline is running (rank 3 has finished an iteration), at most 20 s.
for i in $(seq 200); do [ -s "$tmp/kill.3.jsonl" ] && break; sleep 0.1; done
[ -s "$tmp/kill.3.jsonl" ] || fail "the pipeline did not start: $(cat "$tmp"/kill.*.err)"
kill -9 "${kill_pids[2]}"
start=$(date +%s)
for r in 0 1 3; do
  if wait "${kill_pids[$r]}"; then fail "rank $r finished although rank 2 was killed"; fi
done
took=$(( $(date +%s) - start ))
[ "$took" -le 8 ] || fail "the others took ${took}s to stop"
# Rank 1 notices on a receive ("closed the connection") or on a send ("the connection broke"),
# whichever comes first; either way the message names rank 2 and rank 1's action.
grep -Eq "contend worker 1: rank 1, action [0-9]+ \(1[A-Z_]+[0-9]+\).*rank 2 \(127.0.0.1:$((base + 2))\) (closed the connection|exited or crashed)" \
  "$tmp/kill.1.err" || fail "rank 1 said: $(cat "$tmp/kill.1.err")"
grep -q "rank 2" "$tmp/kill.3.err" || fail "rank 3 said: $(cat "$tmp/kill.3.err")"
# Rank 0 names the root cause: rank 1 failed, because rank 2 went away (not "rank 1 finished").
grep -Eq "contend worker 0: rank 0, action .*rank 1 \(127.0.0.1:$((base + 1))\) failed: rank 1, action .*rank 2" \
  "$tmp/kill.0.err" || fail "rank 0 said: $(cat "$tmp/kill.0.err")"
for p in "${kill_pids[@]}"; do kill -0 "$p" 2>/dev/null && fail "worker $p still running"; done
echo "rank 1: $(cat "$tmp/kill.1.err")"

# --transport nccl where it cannot run says why on every rank and exits: not built, or (here, no
# GPU) no device; the [gpu] tests run it where a GPU is.
nccl_pids=()
for r in 0 1; do
  "$contend" worker --rank $r --world-size 2 --peers "127.0.0.1:$((base + 10)),127.0.0.1:$((base + 11))" \
    --backend emulated --fwd 1ms --iterations 2 --transport nccl 2>"$tmp/nccl.$r.err" &
  nccl_pids+=($!); pids+=($!)
done
for r in 0 1; do
  if wait "${nccl_pids[$r]}"; then
    nvidia-smi -L >/dev/null 2>&1 || fail "rank $r ran --transport nccl without a GPU"
  elif "$contend" --version | grep -q "nccl=built"; then
    grep -q "contend worker $r: rank $r, nccl: the nccl transport needs a CUDA device" "$tmp/nccl.$r.err" ||
      fail "nccl rank $r said: $(cat "$tmp/nccl.$r.err")"
  else
    grep -q "transport \"nccl\" is not built here" "$tmp/nccl.$r.err" || fail "nccl rank $r said: $(cat "$tmp/nccl.$r.err")"
  fi
done
echo "nccl: $(cat "$tmp/nccl.0.err")"
echo "worker tcp: all checks passed"
