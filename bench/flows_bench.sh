#!/usr/bin/env bash
# Flow generator benchmarks (root) on one unshaped veth between two namespaces. Every comparison
# alternates contend and its reference ROUNDS times in the same run (contend, reference, contend,
# ...) and reports the median of the per-round ratios and their range, so a slow spell of the
# machine hits both sides. Markdown tables.
#  1. UDP: `contend flows` with a target above its ceiling against `iperf3 -u -b 0`, both with
#     1472-byte datagrams; goodput at the receiver.
#  2. UDP pacing: received at the sink against the target, and the ceiling the source reports.
#  3. TCP: `contend flows` against iperf3, 1 and 4 streams, cubic.
#  4. DPDK (when built, and dpdk-testpmd is installed: `apt-get install -y dpdk-dev`): `contend
#     dpdk-source` against `dpdk-testpmd --forward-mode=txonly` on the same net_af_packet port
#     (same vdev arguments, same frames: broadcast MAC, the link's background addresses), 64 and
#     1500-byte frames; packets per second as the sending veth's kernel counter saw them.
# Run: bash bench/flows_bench.sh build/default/bin/contend   (ROUNDS=5 SECONDS_EACH=3 by default)
set -euo pipefail
contend=$(realpath "${1:-build/default/bin/contend}")
rounds=${ROUNDS:-5}
secs=${SECONDS_EACH:-3}
tmp=$(mktemp -d)
run=fb$$
export CONTEND_STATE_DIR=$tmp
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; "$contend" emu down --run $run >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "1h", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Gbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
# Unshaped: the veth at CPU speed, as iperf3 sees it.
for n in a b; do ip netns exec "contend-$run.$n" tc qdisc del dev "c0-$([ $n = a ] && echo b || echo a)" root; done
src=198.19.0.1 dst=198.19.0.2  # the link's background addresses
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"

flow() {  # flow PROTOCOL STREAMS RATE: prints the flow's summary line (JSON)
  cat >"$tmp/job.json" <<JSON
{"schema": "contend.flow-job/1", "duration": "${secs}s",
 "flows": [{"name": "f", "from": "a", "to": "b", "protocol": "$1", "streams": $2, "rate": "$3", "message_size": "${4:-128KiB}"}]}
JSON
  rm -f "$tmp/f.jsonl"
  "$contend" flows "$tmp/job.json" --run "$run" --report "$tmp/f.jsonl" --quiet
  python3 -c "import json; print(json.dumps([e for e in map(json.loads, open('$tmp/f.jsonl')) if e['kind'] == 'flow_summary'][0]))"
}
achieved() { python3 -c "import json,sys; print(json.loads(sys.stdin.read())['achieved_bps'])"; }
sent() { python3 -c "import json,sys; f = json.loads(sys.stdin.read()); print(f['achieved_bps'], 8 * f['bytes_sent'] / f['active_s'])"; }
iperf() {  # iperf ARGS...: goodput at the receiver and the sender's rate, bits/s
  ip netns exec "contend-$run.b" iperf3 -s -1 -B $dst -p 5601 >/dev/null 2>&1 & pids+=($!)
  sleep 0.3
  ip netns exec "contend-$run.a" iperf3 -c $dst -B $src -p 5601 -t "$secs" "$@" -J 2>/dev/null |
    python3 -c 'import json,sys; e = json.load(sys.stdin)["end"]; print(e["sum_received"]["bits_per_second"], e["sum_sent"]["bits_per_second"])'
  wait "${pids[-1]}" || true
}
ratios() {  # ratios LABEL UNIT SCALE FILE: a table row from "ours reference" lines
  python3 - "$@" <<'PY'
import statistics, sys
label, unit, scale, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
pairs = [tuple(map(float, l.split()[:2])) for l in open(path)]
ours = statistics.median(p[0] for p in pairs) / scale
ref = statistics.median(p[1] for p in pairs) / scale
r = sorted(p[0] / p[1] for p in pairs)
print(f"| {label} | {ours:.2f} {unit} | {ref:.2f} {unit} | **{statistics.median(r):.2f}** | {r[0]:.2f}-{r[-1]:.2f} |")
PY
}

echo
echo "### UDP, 1472-byte datagrams: contend flows (target 100 Gbit/s, above its ceiling) against iperf3 -u -b 0"
echo "($rounds rounds of ${secs} s each, alternating; medians; received: goodput at the receiver, sent: the"
echo "sender's own rate, whatever the receiver dropped)"
echo
echo "| UDP, 1 stream | contend | iperf3 | ratio (median) | range |"
echo "|---|---|---|---|---|"
: >"$tmp/udp"
for _ in $(seq "$rounds"); do
  read -r ours ours_sent < <(flow udp 1 100Gbit 1472B | sent)
  read -r ref ref_sent < <(iperf -u -b 0 -l 1472)
  echo "$ours $ref $ours_sent $ref_sent" >>"$tmp/udp"
done
ratios "received" Gbit/s 1e9 "$tmp/udp"
awk '{print $3, $4}' "$tmp/udp" >"$tmp/udp_sent"
ratios "sent" Gbit/s 1e9 "$tmp/udp_sent"

echo
echo "### UDP pacing, 1472-byte datagrams (received at the sink over the flow's ${secs} s)"
echo
echo "| target | received | error | ceiling reported | send path |"
echo "|---|---|---|---|---|"
for rate in 100Mbit 1Gbit 3Gbit 5Gbit 10Gbit 100Gbit; do
  flow udp 1 "$rate" 1472B | python3 -c "
import json, sys
f = json.loads(sys.stdin.read())
t, got, c = f['target_bps'], f['achieved_bps'], f['ceiling_bps']
print(f'| $rate | {got / 1e6:.1f} Mbit/s | {(got / t - 1) * 100:+.2f}% | ' + (f'{c / 1e9:.2f} Gbit/s' if c else '-') + f' | {f[\"send_path\"]} |')"
done

echo
echo "### TCP: contend flows against iperf3, cubic ($rounds rounds of ${secs} s, alternating)"
echo
echo "| streams | contend | iperf3 | ratio (median) | range |"
echo "|---|---|---|---|---|"
for streams in 1 4; do
  : >"$tmp/tcp$streams"
  for _ in $(seq "$rounds"); do
    ours=$(flow tcp "$streams" unlimited | achieved)
    read -r ref _ < <(iperf -P "$streams" -C cubic)
    echo "$ours $ref" >>"$tmp/tcp$streams"
  done
  ratios "$streams" Gbit/s 1e9 "$tmp/tcp$streams"
done

"$contend" --version | grep -q 'dpdk=built' || { echo; echo "(no DPDK in this build: DPDK table skipped)"; exit 0; }
command -v dpdk-testpmd >/dev/null || { echo; echo "(dpdk-testpmd missing: apt-get install -y dpdk-dev; DPDK table skipped)"; exit 0; }
tx_packets() { ip netns exec "contend-$run.a" cat /sys/class/net/c0-b/statistics/tx_packets; }
# Each side's rate as DPDK counts it (frames the port took), and the kernel's count of frames the
# veth sent over the DPDK count (1.00: what DPDK counts is what went out).
ours_pps() {  # ours_pps FRAME: the source's frames over its send time
  local before after
  before=$(tx_packets)
  "$contend" dpdk-source --run "$run" --from a --to b --duration "${secs}s" --frame-size "$1" >"$tmp/dpdk.json"
  after=$(tx_packets)
  python3 -c "import json; r = json.load(open('$tmp/dpdk.json')); print(r['pps'], ($after - $before) / r['packets'])"
}
testpmd_pps() {  # testpmd_pps FRAME: txonly on the same port, the median of its Tx-pps per second once it runs
  local before after
  before=$(tx_packets)
  ip netns exec "contend-$run.a" timeout -s INT $((secs + 3)) dpdk-testpmd -l 0,1 --no-huge --no-pci -m 1024 \
    --no-shconf --file-prefix=tp$$ --vdev=net_af_packet0,iface=c0-b,qdisc_bypass=0 --log-level=error -- \
    --forward-mode=txonly --txpkts="$1" --burst=32 --eth-peer=0,ff:ff:ff:ff:ff:ff --tx-ip=$src,$dst \
    --tx-udp=40000,9 --nb-cores=1 --auto-start --stats-period=1 >"$tmp/testpmd.out" 2>&1 || true
  after=$(tx_packets)
  python3 - "$tmp/testpmd.out" "$((after - before))" <<'PY'
import re, statistics, sys
out = open(sys.argv[1]).read()
pps = [int(v) for v in re.findall(r"Tx-pps:\s+(\d+)", out)]
pps = [v for v in pps if v > 0][1:]  # the first period with traffic holds the start
total = re.findall(r"TX-packets:\s+(\d+)\s+TX-dropped", out)
if not pps or not total:
    sys.exit("testpmd printed no rates:\n" + out[-2000:])
print(statistics.median(pps), int(sys.argv[2]) / int(total[-1]))
PY
}
echo
echo "### DPDK on net_af_packet (qdisc_bypass=0, unshaped veth): contend dpdk-source against dpdk-testpmd txonly"
echo "($rounds rounds of ${secs} s, alternating; packets per second)"
echo
echo "| frame | contend | testpmd txonly | ratio (median) | range | kernel / DPDK count, contend | kernel / DPDK count, testpmd |"
echo "|---|---|---|---|---|---|---|"
for size in 64 1500; do
  : >"$tmp/dpdk$size"
  for _ in $(seq "$rounds"); do
    read -r ours ours_check < <(ours_pps "$size")
    read -r ref ref_check < <(testpmd_pps "$size")
    echo "$ours $ref $ours_check $ref_check" >>"$tmp/dpdk$size"
  done
  row=$(ratios "$size B" Mpps 1e6 "$tmp/dpdk$size")
  checks=$(python3 -c "
import statistics
rows = [list(map(float, l.split())) for l in open('$tmp/dpdk$size')]
print(f'{statistics.median(r[2] for r in rows):.3f} | {statistics.median(r[3] for r in rows):.3f} |')")
  echo "$row $checks"
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
