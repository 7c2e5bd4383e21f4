#!/usr/bin/env bash
# cuda stages as `contend worker` processes on one GPU, on 127.0.0.1 (no root, no namespaces),
# trained against one cpu process of the same model: every iteration's loss within 1e-4.
#   tcp:  4 stages over the host-staged TCP transport, 1F1B, kFkB (k=2) and adaptive kFkB; prints
#         each one's throughput (median of the iterations after the first) and the k adaptive ran.
#   nccl: 2 stages over the nccl transport. Two ranks of one communicator on one GPU of one host
#         are refused (first checked: both ranks fail saying so); with NCCL_HOSTIDs of their own
#         NCCL treats them as hosts apart and connects them through its sockets on lo. Checked
#         for correctness, not speed.
# Exits 77 (skipped, with the reason) without a CUDA device or the part it needs. Prints
# `figure NAME VALUE` lines for bench/gpu_device_check.sh.
# CONTEND_LOOPBACK_BACKEND=cpu runs the tcp mode's plumbing (ports, metrics, comparisons) with cpu
# stages, for checking this script on a machine without a GPU; it never stands in for the check.
# Usage: worker_loopback_test.sh tcp|nccl PATH/TO/contend
set -euo pipefail
mode=$1
contend=$2
backend=${CONTEND_LOOPBACK_BACKEND:-cuda}
tmp=$(mktemp -d /tmp/contend-loopback-XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "SKIP: $*"; exit 77; }

version=$("$contend" --version)
if [ "$backend" = cuda ]; then
  grep -q "cuda=built" <<<"$version" || skip "CUDA was not built"
  if grep -q "no GPU" <<<"$version"; then
    skip "no CUDA device: $(grep -o 'no GPU.*' <<<"$version")"
  fi
  [ "$mode" != nccl ] || grep -q "nccl=built" <<<"$version" || skip "the nccl transport was not built (no NCCL found)"
else
  [ "$mode" = tcp ] || fail "CONTEND_LOOPBACK_BACKEND=$backend: only the tcp mode has a dry run"
  echo "DRY RUN: $backend stages instead of cuda ones (this checks the script, not the GPU)"
fi

iterations=6
model=(--hidden 512 --layers 8 --microbatch-size 4 --seq-len 64 --microbatches 8 --iterations $iterations
       --optimizer sgd --lr 0.05)
base=$((20000 + RANDOM % 10000))  # below the ephemeral ports (32768 and up)

# launch NAME WORLD [ENV-FOR-RANK-FUNCTION] -- ARGS...: one worker per rank on loopback; waits;
# non-zero if any failed.
launch() {
  local name=$1 world=$2 envf=$3; shift 4
  local peers="" r rc=0 mine=()
  for r in $(seq 0 $((world - 1))); do peers+="${peers:+,}127.0.0.1:$((base + r))"; done
  base=$((base + world))
  for r in $(seq 0 $((world - 1))); do
    local env=()
    [ -z "$envf" ] || mapfile -t env < <("$envf" "$r")
    env "${env[@]}" "$contend" worker --rank "$r" --world-size "$world" --peers "$peers" --connect-timeout 60s \
      --timeout 60s --metrics "$tmp/$name.$r.jsonl" "${model[@]}" "$@" 2>"$tmp/$name.$r.err" &
    mine+=($!); pids+=($!)
  done
  for p in "${mine[@]}"; do wait "$p" || rc=1; done
  return $rc
}
errors() { tail -n 5 "$tmp"/"$1".*.err; }

# compare NAME WORLD: NAME's losses (its last rank's) against the cpu reference's; prints figures.
compare() {
  python3 - "$tmp" "$1" "$2" "$iterations" <<'PY'
import json, statistics, sys
tmp, name, world, iterations = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
lines = lambda n, r: [json.loads(l) for l in open(f"{tmp}/{n}.{r}.jsonl")]
ref = [l["loss"] for l in lines("ref", 0)]
got = lines(name, world - 1)
loss = [l["loss"] for l in got]
assert len(ref) == len(loss) == iterations, f"{name}: {len(loss)} iterations, reference {len(ref)}"
worst = max(abs(a - b) / abs(a) for a, b in zip(ref, loss))
print(f"{name}: loss {loss[0]:.6f} -> {loss[-1]:.6f}, worst relative difference to one cpu process {worst:.2e}")
assert worst <= 1e-4, f"{name}: losses differ from the cpu reference: {loss} vs {ref}"
rate = statistics.median(l["samples_per_s"] for l in got[1:])
key = name.replace(":", "").replace("=", "")
print(f"figure loopback.{key}.samples_per_s {rate:.1f}")
print(f"figure loopback.{key}.loss_rel {worst:.3g}")
ks = sorted({l["k"] for l in got})
print(f"figure loopback.{key}.k {ks[-1]}")
print(f"{name}: {rate:.1f} samples/s (median of iterations 2-{iterations}), k {ks}")
PY
}

launch ref 1 "" -- --backend cpu || fail "the cpu reference: $(errors ref)"

if [ "$mode" = tcp ]; then
  for schedule in 1f1b kfkb:k=2 adaptive; do
    launch "$schedule" 4 "" -- --backend "$backend" --schedule "$schedule" || fail "$schedule: $(errors "$schedule")"
    compare "$schedule" 4 || fail "$schedule trains a different model"
  done
  exit 0
fi

nccl_env() {  # sockets on lo; no peer-to-peer, shared memory or InfiniBand paths between "hosts"
  echo NCCL_SOCKET_IFNAME=lo; echo NCCL_P2P_DISABLE=1; echo NCCL_SHM_DISABLE=1; echo NCCL_IB_DISABLE=1
  echo NCCL_DEBUG=WARN
}
same_host() { nccl_env; echo NCCL_HOSTID=contend-check; }
own_host() { nccl_env; echo "NCCL_HOSTID=contend-check-rank$1"; }

if launch same 2 same_host -- --backend cuda --transport nccl; then
  fail "two ranks on one GPU with one NCCL_HOSTID were not refused"
fi
grep -q "NCCL refuses two ranks" "$tmp"/same.0.err || fail "the refusal does not say why: $(errors same)"
echo "nccl: one GPU, one host id: refused as expected ($(grep -o 'ranks 0 and 1 are both on GPU [0-9]*' "$tmp"/same.0.err))"

launch nccl 2 own_host -- --backend cuda --transport nccl || fail "nccl with a host id per rank: $(errors nccl)"
compare nccl 2 || fail "nccl trains a different model"
