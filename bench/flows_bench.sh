#!/usr/bin/env bash
# Flow generator benchmarks (root), each against a reference in the same run. Markdown tables.
#  1. The socket generator's TCP goodput against iperf3 on the same unshaped veth, 1 and 4 streams.
#  2. UDP pacing error at 100 Mbit/s, 1 Gbit/s and 3 Gbit/s on the same veth.
#  3. DPDK packets per second on net_af_packet (1500 and 64-byte frames), unshaped.
# Run: bash bench/flows_bench.sh build/default/bin/contend
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
tmp=$(mktemp -d)
run=fb$$
export CONTEND_STATE_DIR=$tmp
trap '"$contend" emu down --run $run >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "1h", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Gbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
for n in a b; do ip netns exec "contend-$run.$n" tc qdisc del dev "c0-$([ $n = a ] && echo b || echo a)" root; done

job() {  # job NAME PROTOCOL STREAMS RATE
  cat >"$tmp/job.json" <<JSON
{"schema": "contend.flow-job/1", "duration": "4s",
 "flows": [{"name": "$1", "from": "a", "to": "b", "protocol": "$2", "streams": $3, "rate": "$4"}]}
JSON
  "$contend" flows "$tmp/job.json" --run "$run" --report "$tmp/$1.jsonl" --quiet
  python3 -c "import json; print([json.loads(l) for l in open('$tmp/$1.jsonl')][-1]['flows'][0]['achieved_bps'])"
}
iperf() {  # iperf STREAMS
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.19.0.2 -p 5601 >/dev/null 2>&1 &
  sleep 0.3
  ip netns exec "contend-$run.a" iperf3 -c 198.19.0.2 -B 198.19.0.1 -p 5601 -t 4 -P "$1" -C cubic -J |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])'
  wait
}

echo "### Socket generator TCP against iperf3 (same unshaped veth, cubic, 4 s)"
echo
echo "| streams | contend flows | iperf3 | ratio |"
echo "|---|---|---|---|"
for streams in 1 4; do
  ours=$(job "tcp$streams" tcp "$streams" unlimited)
  ref=$(iperf "$streams")
  python3 -c "print(f'| $streams | {$ours / 1e9:.2f} Gbit/s | {$ref / 1e9:.2f} Gbit/s | {$ours / $ref:.2f} |')"
done
echo
echo "### UDP pacing (received at the sink over the flow's 4 s)"
echo
echo "| target | received | error |"
echo "|---|---|---|"
for rate in 100Mbit 1Gbit 3Gbit; do
  got=$(job "udp$rate" udp 1 "$rate")
  python3 -c "
t = {'100Mbit': 100e6, '1Gbit': 1e9, '3Gbit': 3e9}['$rate']
print(f'| $rate | {$got / 1e6:.1f} Mbit/s | {($got / t - 1) * 100:+.1f}% |')"
done
if "$contend" --version | grep -q 'dpdk=built'; then
  echo
  echo "### DPDK on net_af_packet (unshaped veth, 3 s, line rate)"
  echo
  echo "| frame | packets/s | Gbit/s |"
  echo "|---|---|---|"
  for size in 1500 64; do
    "$contend" dpdk-source --run "$run" --from a --to b --duration 3s --frame-size $size |
      python3 -c "import json,sys; r = json.load(sys.stdin); print(f'| $size B | {r[\"pps\"] / 1e3:.0f} k | {r[\"bps\"] / 1e9:.2f} |')"
  done
fi
