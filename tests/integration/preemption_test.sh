#!/usr/bin/env bash
# Who yields on a shared 1 Gbit/s link: a workload iperf3 flow (workload address) and a background
# iperf3 flow (background address, so the u32 filter puts it in 1:20) run together; iperf3
# measures both. background-first leaves the workload almost nothing, fair splits evenly, split
# 0.7 gives the workload 70%.
source "$(dirname "$0")/lib.sh"
need_root
for policy in background-first fair split; do
  policy_link "$tmp/s.json" "$policy"
  "$contend" emu up "$tmp/s.json" >/dev/null
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.18.0.2 -p 5301 >/dev/null 2>&1 & pids+=($!)
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.19.0.2 -p 5302 >/dev/null 2>&1 & pids+=($!)
  wait_for_port "contend-$run.b" 5301
  wait_for_port "contend-$run.b" 5302
  ip netns exec "contend-$run.a" iperf3 -c 198.18.0.2 -B 198.18.0.1 -p 5301 -t 4 -O 1 -C cubic -J >"$tmp/fg.json" &
  fg=$!
  ip netns exec "contend-$run.a" iperf3 -c 198.19.0.2 -B 198.19.0.1 -p 5302 -t 4 -O 1 -C cubic -J >"$tmp/bg.json" &
  bg=$!
  wait $fg; wait $bg
  "$contend" emu down --run "$run" >/dev/null
  python3 - "$policy" "$tmp/fg.json" "$tmp/bg.json" <<'PY' || fail "$policy"
import json, sys
policy = sys.argv[1]
fg, bg = (json.load(open(p))["end"]["sum_received"]["bits_per_second"] for p in sys.argv[2:4])
share = fg / (fg + bg)
print(f"{policy}: workload {fg / 1e6:.0f} Mbit/s, background {bg / 1e6:.0f} Mbit/s, workload share {share:.3f}")
assert (fg + bg) > 0.85 * 0.956e9, "the two flows do not fill the link"
expected = {"background-first": (0.0, 0.05), "fair": (0.40, 0.60), "split": (0.63, 0.77)}[policy]
assert expected[0] <= share <= expected[1], (share, expected)
PY
  no_leftovers
done
