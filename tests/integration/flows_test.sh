#!/usr/bin/env bash
# The socket flow generator: a paced UDP flow reaches its target within 5% on an unshaped path, and
# in GSO buffers through a shaped link within 1% below its rate, filling it above (ceiling reported); a
# TCP background flow from the generator takes its configured share of a 1 Gbit/s link from a
# foreground iperf3 flow (the independent measurement) within 10% under each HTB arrangement; the
# player starts and stops flows from a scenario's timeline; nothing is left running.
source "$(dirname "$0")/lib.sh"
need_root

# (a) UDP at 300 Mbit/s from a to c and TCP paced at 200 Mbit/s back: no direct link, so through
# the switch, unshaped.
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "10s", "nodes": ["a", "b", "c"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"}, {"name": "b-c", "from": "b", "to": "c", "rate": "1Gbit"}]}
JSON
cat >"$tmp/udp.json" <<'JSON'
{"schema": "contend.flow-job/1", "duration": "3s",
 "flows": [{"name": "u", "from": "a", "to": "c", "protocol": "udp", "rate": "300Mbit"},
           {"name": "t", "from": "c", "to": "a", "protocol": "tcp", "streams": 2, "rate": "200Mbit"}]}
JSON
"$contend" emu up "$tmp/s.json" >/dev/null
"$contend" flows "$tmp/udp.json" --run "$run" --report "$tmp/udp.jsonl" --quiet
python3 - "$tmp/udp.jsonl" <<'PY' || fail "UDP pacing"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert all(l["schema"] == "contend.events/1" for l in lines)
assert lines[0]["kind"] == "start" and lines[-1]["kind"] == "end", (lines[0], lines[-1])
samples = [l for l in lines if l["kind"] == "flow_sample"]
assert sum(1 for l in samples if l["flow"] == "u") >= 25, "no samples every 100 ms"
# Each sample's rate is its bytes over the time since the previous one.
u = [l for l in samples if l["flow"] == "u"]
for a, b in zip(u, u[1:]):
    expected = 8 * (b["bytes_received"] - a["bytes_received"]) / (b["t_s"] - a["t_s"])
    assert abs(b["rate_bps"] - expected) <= 1e-6 * max(expected, 1), (a, b)
flows = {l["flow"]: l for l in lines if l["kind"] == "flow_summary"}
u, t = flows["u"], flows["t"]
print(f"UDP target 300 Mbit/s, received {u['achieved_bps'] / 1e6:.1f} Mbit/s via {u['via']}; "
      f"TCP paced (SO_MAX_PACING_RATE) at 200 Mbit/s over 2 streams: {t['achieved_bps'] / 1e6:.1f} Mbit/s")
assert u["via"] == "switch" and abs(u["achieved_bps"] / 300e6 - 1) <= 0.05, u
assert abs(t["achieved_bps"] / 200e6 - 1) <= 0.10, t
mid = [l["rate_bps"] for l in samples if l["flow"] == "u" and 1.0 <= l["t_s"] <= 2.5]
assert mid and all(abs(r / 300e6 - 1) <= 0.25 for r in mid), mid
PY

# (a2) UDP in GSO buffers through the shaped 1 Gbit/s link a-b: below the link's rate the target
# holds within 1%; above it the flow fills the link and the source reports the rate it was held to
# as its ceiling.
cat >"$tmp/udp2.json" <<'JSON'
{"schema": "contend.flow-job/1", "duration": "3s",
 "flows": [{"name": "u800", "from": "a", "to": "b", "protocol": "udp", "rate": "800Mbit", "message_size": "1472B",
            "duration": "1.5s"},
           {"name": "u2g", "from": "a", "to": "b", "protocol": "udp", "rate": "2Gbit", "message_size": "1472B",
            "start": "1.5s"}]}
JSON
"$contend" flows "$tmp/udp2.json" --run "$run" --report "$tmp/udp2.jsonl" --quiet
python3 - "$tmp/udp2.jsonl" <<'PY' || fail "UDP through a shaped link"
import json, sys
flows = {l["flow"]: l for l in map(json.loads, open(sys.argv[1])) if l["kind"] == "flow_summary"}
a, b = flows["u800"], flows["u2g"]
print(f"UDP through 1 Gbit/s HTB ({a['send_path']}): 800 Mbit/s target, received "
      f"{a['achieved_bps'] / 1e6:.1f} Mbit/s; 2 Gbit/s target, received {b['achieved_bps'] / 1e6:.1f} Mbit/s, "
      f"ceiling reported {b['ceiling_bps'] / 1e6:.1f} Mbit/s")
assert a["via"] == "a-b" and abs(a["achieved_bps"] / 800e6 - 1) <= 0.01 and a["ceiling_bps"] == 0, a
assert 0.9e9 <= b["achieved_bps"] <= 1.0e9 and 0.9e9 <= b["ceiling_bps"] <= 1.0e9, b
PY
"$contend" emu down --run "$run" >/dev/null

# (b) TCP background (the generator) against a foreground iperf3 flow, per HTB arrangement.
cat >"$tmp/bg.json" <<'JSON'
{"schema": "contend.flow-job/1", "duration": "5s",
 "flows": [{"name": "bg", "from": "a", "to": "b", "protocol": "tcp", "streams": 1, "congestion": "cubic"}]}
JSON
for policy in background-first fair split; do
  policy_link "$tmp/s.json" "$policy"
  "$contend" emu up "$tmp/s.json" >/dev/null
  ip netns exec "contend-$run.b" iperf3 -s -1 -B 198.18.0.2 -p 5501 >/dev/null 2>&1 & pids+=($!)
  wait_for_port "contend-$run.b" 5501
  rm -f "$tmp/bg.jsonl"
  "$contend" flows "$tmp/bg.json" --run "$run" --report "$tmp/bg.jsonl" --quiet &
  flows=$!; pids+=($flows)
  wait_for_line "$tmp/bg.jsonl" '"kind":"flow_start"'
  fg_start=$(date +%s.%N)
  ip netns exec "contend-$run.a" iperf3 -c 198.18.0.2 -B 198.18.0.1 -p 5501 -t 3 -O 1 -C cubic -J >"$tmp/fg.json"
  wait $flows
  "$contend" emu down --run "$run" >/dev/null
  python3 - "$policy" "$tmp/fg.json" "$tmp/bg.jsonl" "$fg_start" <<'PY' || fail "$policy"
import json, sys
policy = sys.argv[1]
fg = json.load(open(sys.argv[2]))["end"]["sum_received"]["bits_per_second"]
lines = [json.loads(l) for l in open(sys.argv[3])]
samples = [l for l in lines if l["kind"] == "flow_sample"]
# The background's rate over seconds iperf3 measured: it started at fg_start (on the job's clock,
# whose 0 is the start line's wall time), omitted its first second and measured the next 3.
fg_start = float(sys.argv[4]) - lines[0]["wall_time_unix_s"]
window = [s for s in samples if fg_start + 1.2 <= s["t_s"] <= fg_start + 3.8]
assert len(window) >= 10, (fg_start, [s["t_s"] for s in samples])
bg = 8 * (window[-1]["bytes_received"] - window[0]["bytes_received"]) / (window[-1]["t_s"] - window[0]["t_s"])
share = bg / (fg + bg)
print(f"{policy}: foreground iperf3 {fg / 1e6:.0f} Mbit/s, background generator {bg / 1e6:.0f} Mbit/s, background share {share:.3f}")
expected = {"background-first": 1.0, "fair": 0.5, "split": 0.3}[policy]
assert abs(share - expected) <= 0.10, (share, expected)
PY
  no_leftovers
done

# (c) The player runs a scenario's flows: on 1 s of every 2 s, through the background class.
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "4s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "500Mbit"}],
 "timeline": [{"at": "0.5s", "periodic": {"period": "2s", "on": "1s", "flow": {"name": "p", "from": "a", "to": "b", "rate": "100Mbit"}}}]}
JSON
"$contend" emu play "$tmp/s.json" --log "$tmp/events.jsonl" --quiet
python3 - "$tmp/events.jsonl" <<'PY' || fail "player flows"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
starts = [l for l in lines if l["kind"] == "flow_start"]
stops = [l for l in lines if l["kind"] == "flow_stop"]
assert len(starts) == 2 and len(stops) == 2 and all(l["status"] == "applied" for l in starts + stops), starts + stops
got = max(l["bytes_received"] for l in lines if l["kind"] == "flow_sample")
bg = [l for l in lines if l["kind"] == "sample" and l["node"] == "a" and l["class"] == "background"]
grew = bg[-1]["bytes"] - bg[0]["bytes"]
print(f"player flow: {got / 1e6:.1f} MB received; background class carried {grew / 1e6:.1f} MB")
# Two 1 s episodes at 100 Mbit/s: about 25 MB, all of it in the background class.
assert 20e6 < got < 30e6 and grew >= 0.95 * got, (got, grew)
PY
no_leftovers
# This test's own processes only (each names its folder): another run's may be running beside it.
pgrep -f "contend (flows|emu).*$tmp" >/dev/null && fail "contend processes left running: $(pgrep -af "contend.*$tmp")" || true
