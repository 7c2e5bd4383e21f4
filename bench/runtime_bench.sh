#!/usr/bin/env bash
# Pipeline runtime benchmarks (root: namespaces), each a ratio against a reference measured in the
# same run. Prints Markdown tables.
#  1. Transport throughput: 2 workers, gpipe, zero compute, 1/4/64 MiB tensors over one unshaped
#     veth, against iperf3's single-stream goodput on the same veth: ROUNDS (5) rounds alternating
#     the two, the median of the per-round ratios and their range.
#  2. Runtime overhead per action: 4 workers on loopback, zero compute, 64-byte tensors.
#  3. Fidelity: experiments/fidelity.json (4 emulated stages through shaped links, 100 Mbit/s to
#     2 Gbit/s) for real, against `--simulate` without and with the real run's calibration.
# Run: bash bench/runtime_bench.sh build/default/bin/contend   (TRANSPORT_ONLY=1: the first table only)
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
rounds=${ROUNDS:-5}
tmp=$(mktemp -d)
run=rb$$
export CONTEND_STATE_DIR=$tmp
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null || true; done; "$contend" emu down --run $run >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT

scenario() {  # scenario RATE NODES
  local nodes="" links="" i
  for i in $(seq 0 $(($2 - 1))); do nodes+="${nodes:+, }\"n$i\""; done
  for i in $(seq 0 $(($2 - 2))); do links+="${links:+, }{\"name\": \"l$i\", \"from\": \"n$i\", \"to\": \"n$((i + 1))\", \"rate\": \"$1\"}"; done
  echo "{\"schema\": \"contend.scenario/1\", \"name\": \"$run\", \"duration\": \"1h\", \"nodes\": [$nodes], \"links\": [$links]}" >"$tmp/s.json"
}
addr=(198.18.0.1 198.18.0.2 198.18.0.6 198.18.0.10)
workers() {  # workers NAME WORLD ARGS...: in the namespaces
  local name=$1 world=$2; shift 2
  local peers="" r mine=()
  for r in $(seq 0 $((world - 1))); do peers+="${peers:+,}${addr[$r]}:29500"; done
  for r in $(seq 0 $((world - 1))); do
    ip netns exec "contend-$run.n$r" "$contend" worker --rank "$r" --world-size "$world" --peers "$peers" \
      --metrics "$tmp/$name.$r.jsonl" "$@" &
    mine+=($!)
  done
  for p in "${mine[@]}"; do wait "$p"; done
}
median_iteration() {  # median_iteration FILE [SKIP]: median iteration_s after skipping warm-up
  python3 -c "
import json, statistics, sys
v = [json.loads(l)['iteration_s'] for l in open('$1')][${2:-1}:]
print(statistics.median(v))"
}

echo "### Transport throughput (one unshaped veth, 2 workers, gpipe, zero compute)"
echo
echo "$rounds rounds, alternating the workers and iperf3 single stream (cubic, 3 s) on the same veth; the"
echo "workers' goodput is both directions' bytes over the median iteration time. Load before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| tensor | contend goodput (median) | iperf3 single stream (median) | ratio (median) | range |"
echo "|---|---|---|---|---|"
scenario 100Gbit 2
"$contend" emu up "$tmp/s.json" >/dev/null
# Unshaped: remove the shaping so the veth runs at CPU speed, as iperf3 sees it.
for n in 0 1; do ip netns exec "contend-$run.n$n" tc qdisc del dev "c0-n$((1 - n))" root; done
for size in 1 4 64; do
  m=$((1024 / size)); [ $m -gt 256 ] && m=256
  : >"$tmp/tp$size"
  for _ in $(seq "$rounds"); do
    workers "tp$size" 2 --backend emulated --fwd 0s --bwd 0s --activation "${size}MiB" --schedule gpipe \
      --microbatches $m --iterations 4
    it=$(median_iteration "$tmp/tp$size.0.jsonl")
    rm -f "$tmp"/tp$size.*.jsonl
    ip netns exec "contend-$run.n1" iperf3 -s -1 -B 198.18.0.2 -p 5400 >/dev/null 2>&1 & pids+=($!)
    sleep 0.3
    ib=$(ip netns exec "contend-$run.n0" iperf3 -c 198.18.0.2 -B 198.18.0.1 -p 5400 -t 3 -O 1 -C cubic -J |
         python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
    wait "${pids[-1]}" || true
    echo "$(python3 -c "print(2 * $m * $size * 1048576 * 8 / $it)") $ib" >>"$tmp/tp$size"
  done
  python3 - "$size" "$tmp/tp$size" <<'PY'
import statistics, sys
pairs = [tuple(map(float, l.split())) for l in open(sys.argv[2])]
r = sorted(a / b for a, b in pairs)
ours, ref = statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs)
print(f"| {sys.argv[1]} MiB | {ours / 1e9:.2f} Gbit/s | {ref / 1e9:.2f} Gbit/s | **{statistics.median(r):.2f}** | {r[0]:.2f}-{r[-1]:.2f} |")
PY
done
"$contend" emu down --run $run >/dev/null
[ "${TRANSPORT_ONLY:-0}" = 1 ] && exit 0

echo
echo "### Runtime overhead per action (loopback, 4 workers, zero compute, 64-byte tensors)"
echo
peers=""; for r in 0 1 2 3; do peers+="${peers:+,}127.0.0.1:$((29700 + r))"; done
mine=()
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
# experiments/fidelity.json for real (in namespaces, under this script's own state dir), then
# simulated: the ideal pipeline, and the runtime's costs as the real run recorded them.
here=$(dirname "$(realpath "$0")")
"$contend" run "$here/../experiments/fidelity.json" --out "$tmp/real" >/dev/null
"$contend" run "$here/../experiments/fidelity.json" --simulate --out "$tmp/ideal" >/dev/null 2>&1
"$contend" run "$here/../experiments/fidelity.json" --simulate --calibration "$tmp/real/calibration.json" \
  --out "$tmp/calibrated" >/dev/null 2>&1
python3 -c "import json; print('calibration:', json.load(open('$tmp/real/calibration.json'))['source'])"
echo
python3 "$here/fidelity_table.py" "$tmp/real" "$tmp/ideal" "$tmp/calibrated"
