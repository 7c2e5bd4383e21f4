#!/usr/bin/env bash
# The TCP transport against iperf3's single stream on the same veth (root: namespaces), one
# direction, the sender pinned to CPU 0 and the receiver to CPU 1, the two alternated ROUNDS (5)
# times per cell; medians of the per-round ratios and their range. Prints Markdown tables:
#  1. Shaped links (1, 2, 5, 10 Gbit/s: HTB, neither side CPU-bound below the veth's limit): the
#     transport's goodput against iperf3's and against 0.956 x the shaped rate (TCP's payload share
#     of a 1514-byte frame, docs/emulator.md).
#  2. Unshaped: both CPU-bound, so the goodput says little; CPU time per byte (both processes, user +
#     system) beside it says what each costs.
# Run: bash bench/transport_bench.sh [build/default/bin]   (RATES="1Gbit 10Gbit" SIZES="4" to narrow)
set -euo pipefail
bin=$(realpath "${1:-build/default/bin}")
contend=$bin/contend
bench=$bin/contend_bench_transport
rounds=${ROUNDS:-5}
rates=${RATES:-1Gbit 2Gbit 5Gbit 10Gbit}
sizes=${SIZES:-1 4 64}
tmp=$(mktemp -d)
run=tb$$
export CONTEND_STATE_DIR=$tmp
trap '"$contend" emu down --run $run >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
ns0=contend-$run.n0
ns1=contend-$run.n1

up() {  # up RATE: a two-node link at RATE (both directions)
  "$contend" emu down --run $run >/dev/null 2>&1 || true
  echo "{\"schema\": \"contend.scenario/1\", \"name\": \"$run\", \"duration\": \"1h\", \"nodes\": [\"n0\", \"n1\"],
        \"links\": [{\"name\": \"l0\", \"from\": \"n0\", \"to\": \"n1\", \"rate\": \"$1\"}]}" >"$tmp/s.json"
  "$contend" emu up "$tmp/s.json" >/dev/null
}
count_for() {  # count_for BPS MIB: tensors for about 0.5 s at that rate, at least 4
  python3 -c "import math; print(max(4, math.ceil($1 / 8 * 0.5 / ($2 * 1048576))))"
}
contend_round() {  # contend_round MIB COUNT: "goodput_bps cpu_s_both bytes"
  ip netns exec $ns1 taskset -c 1 "$bench" --rank 1 --peers 198.18.0.1:29600,198.18.0.2:29600 \
    --size "$1MiB" --count "$2" >"$tmp/r1" &
  local p=$!
  ip netns exec $ns0 taskset -c 0 "$bench" --rank 0 --peers 198.18.0.1:29600,198.18.0.2:29600 \
    --size "$1MiB" --count "$2" >"$tmp/r0"
  wait $p
  python3 - "$tmp/r0" "$tmp/r1" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
print(a["goodput_bps"], a["cpu_s"] + b["cpu_s"], a["bytes"])
PY
}
iperf_round() {  # iperf_round: "goodput_bps cpu_s_both bytes" (3 s, the first omitted)
  ip netns exec $ns1 taskset -c 1 /usr/bin/time -f "%U %S" -o "$tmp/ts" iperf3 -s -1 -B 198.18.0.2 -p 5400 \
    >/dev/null 2>&1 &
  local p=$!
  sleep 0.3
  ip netns exec $ns0 taskset -c 0 /usr/bin/time -f "%U %S" -o "$tmp/tc" iperf3 -c 198.18.0.2 -B 198.18.0.1 \
    -p 5400 -t 3 -O 1 -C cubic -J >"$tmp/ij"
  wait $p || true
  python3 - "$tmp/ij" "$tmp/ts" "$tmp/tc" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))["end"]["sum_received"]
cpu = sum(float(x) for p in sys.argv[2:4] for x in open(p).read().split()[:2])
print(j["bits_per_second"], cpu, j["bytes"])
PY
}
cell() {  # cell MIB COUNT: ROUNDS alternated rounds of both, one "ours ref" line each
  : >"$tmp/cell"
  for _ in $(seq "$rounds"); do
    echo "$(contend_round "$1" "$2") $(iperf_round)" >>"$tmp/cell"
  done
}

echo "### Shaped links: the transport against iperf3 single stream and against 0.956 x the rate"
echo
echo "$rounds alternated rounds per cell; sender on CPU 0, receiver on CPU 1; load before: $(cut -d' ' -f1-3 /proc/loadavg)."
echo
echo "| link | tensor | contend (median) | iperf3 (median) | contend / iperf3 (median, range) | contend / (0.956 x rate) |"
echo "|---|---|---|---|---|---|"
for rate in $rates; do
  up "$rate"
  bps=$(python3 -c "import re; v, u = re.match(r'([0-9.]+)(\w+)', '$rate').groups(); print(float(v) * {'Mbit': 1e6, 'Gbit': 1e9}[u])")
  for size in $sizes; do
    cell "$size" "$(count_for "$bps" "$size")"
    python3 - "$rate" "$size" "$bps" "$tmp/cell" <<'PY'
import statistics, sys
rate, size, bps, path = sys.argv[1], sys.argv[2], float(sys.argv[3]), sys.argv[4]
rows = [list(map(float, l.split())) for l in open(path)]
r = sorted(a[0] / a[3] for a in rows)
ours, ref = statistics.median(a[0] for a in rows), statistics.median(a[3] for a in rows)
print(f"| {rate} | {size} MiB | {ours / 1e9:.3f} Gbit/s | {ref / 1e9:.3f} Gbit/s | **{statistics.median(r):.3f}** "
      f"({r[0]:.3f}-{r[-1]:.3f}) | {ours / (0.956 * bps):.3f} |")
PY
  done
done

echo
echo "### Unshaped veth: goodput and CPU time per byte (both sides CPU-bound)"
echo
echo "| tensor | contend | iperf3 | goodput ratio (median, range) | contend CPU ns/KiB | iperf3 CPU ns/KiB | CPU ratio (median, range) |"
echo "|---|---|---|---|---|---|---|"
up 100Gbit
for n in 0 1; do ip netns exec "contend-$run.n$n" tc qdisc del dev "c0-n$((1 - n))" root; done
for size in $sizes; do
  cell "$size" "$(count_for 30e9 "$size")"
  python3 - "$size" "$tmp/cell" <<'PY'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2])]
g = sorted(a[0] / a[3] for a in rows)
ns = lambda cpu, b: cpu / b * 1024 * 1e9
ours = [ns(a[1], a[2]) for a in rows]
ref = [ns(a[4], a[5]) for a in rows]
c = sorted(o / r for o, r in zip(ours, ref))
print(f"| {sys.argv[1]} MiB | {statistics.median(a[0] for a in rows) / 1e9:.2f} Gbit/s | "
      f"{statistics.median(a[3] for a in rows) / 1e9:.2f} Gbit/s | {statistics.median(g):.3f} ({g[0]:.3f}-{g[-1]:.3f}) | "
      f"{statistics.median(ours):.0f} | {statistics.median(ref):.0f} | **{statistics.median(c):.3f}** ({c[0]:.3f}-{c[-1]:.3f}) |")
PY
done
