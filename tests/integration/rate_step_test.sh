#!/usr/bin/env bash
# A rate step applied by the player is logged at or after its time and well inside the player's
# own validity bound (an event 500 ms late fails the cell: docs/scenario-format.md), and is in
# force within 200 ms, as the workload class's own counters (sampled every 100 ms into the log)
# show. Load (iperf3 fills both cores here) can delay the step by milliseconds, so the precise
# lateness (p50/p99 over 1000 changes) is measured by bench/emu_bench.cpp, not asserted here.
source "$(dirname "$0")/lib.sh"
need_root
two_nodes "$tmp/s.json" 1Gbit '[{"at": "2s", "link": "a-b", "rate": "100Mbit"}]' 4s
"$contend" emu up "$tmp/s.json" >/dev/null
ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.18.0.2 -p 5202 >/dev/null 2>&1 &
pids+=($!)
wait_for_port "contend-$run.b" 5202
ip netns exec "contend-$run.a" iperf3 -c 198.18.0.2 -B 198.18.0.1 -p 5202 -t 5 -C cubic >/dev/null 2>&1 &
pids+=($!)
wait_for_connection "contend-$run.b" 5202
"$contend" emu play "$tmp/s.json" --log "$tmp/events.jsonl" --quiet
python3 - "$tmp/events.jsonl" <<'PY' || fail "rate step"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(l["schema"] == "contend.events/1" for l in lines)
step = [l for l in lines if l["kind"] == "rate"]
assert len(step) == 1, step
late = step[0]["applied_s"] - step[0]["scheduled_s"]
print(f"step logged {late * 1e3:.2f} ms after its time (call {step[0]['call_s'] * 1e6:.0f} us)")
assert 0 <= late < 0.05, late
t_step = step[0]["applied_s"]
s = [l for l in lines if l["kind"] == "sample" and l["node"] == "a" and l["class"] == "workload"]
rates = [((b["t_s"] + a["t_s"]) / 2, a["t_s"], 8 * (b["bytes"] - a["bytes"]) / (b["t_s"] - a["t_s"])) for a, b in zip(s, s[1:])]
before = [r for mid, t0, r in rates if 1.0 < mid < t_step - 0.1]
after = [(t0, r) for mid, t0, r in rates if t0 >= t_step + 0.2 - 0.1 and mid < 3.9]
print("before: %.0f Mbit/s, after: %s" % (max(before) / 1e6, ["%.0f" % (r / 1e6) for t0, r in after[:5]]))
assert max(before) > 500e6, "iperf3 did not fill the link before the step"
assert after and all(r < 100e6 * 1.15 for t0, r in after), "the step was not in force 200 ms after it"
PY
"$contend" emu down --run "$run" >/dev/null
no_leftovers
