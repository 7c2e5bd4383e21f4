#!/usr/bin/env bash
# A spine link taken down by the timeline mid-run: the player computes the fabric's routes again
# without it and replaces them everywhere (as a routing protocol would withdraw them), so the
# streams it carried move to the other spine and go on; iperf3 (an independent client) sees every
# stream carry data after the link went down. Up again, the routes come back.
source "$(dirname "$0")/lib.sh"
need_root

cat >"$tmp/f.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "12s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 2, "host_rate": "400Mbit",
                           "uplink_rate": "200Mbit"}},
 "timeline": [{"at": "4s", "link": "leaf0-spine0", "state": "down"},
              {"at": "10s", "link": "leaf0-spine0", "state": "up"}]}
JSON
# h2 (leaf1) is link 4's from-end once leaf0's 2 hosts and 2 uplinks come first.
h2=198.18.0.17

both_spines() { [ "$(ip -n "contend-$run.leaf0" route show $h2 | grep -c nexthop)" -eq 2 ]; }

# One play: 4 streams h0 -> h2 from about 0.5 s for 8 s; the link goes down at 4 s. Sets $took,
# the bytes leaf0 sent up spine0 before then (from the play's own port samples).
play_once() {
  rm -f "$tmp/events.jsonl"
  "$contend" emu play "$tmp/f.json" --run "$run" --log "$tmp/events.jsonl" --quiet >"$tmp/play.out" 2>&1 &
  local player=$!
  pids+=($player)
  wait_for_netns "contend-$run.h2"
  ip netns exec "contend-$run.h2" iperf3 -s -1 -p 5500 >/dev/null 2>&1 &
  local server=$!
  pids+=($server)
  wait_for_port "contend-$run.h2" 5500
  ip netns exec "contend-$run.h0" iperf3 -c $h2 -p 5500 -P 4 -t 8 -C cubic -J >"$tmp/down.json" ||
    fail "the streams did not survive spine0's uplink going down: $(grep error "$tmp/down.json")"
  # The link is back up at 10 s: leaf0's route to h2 has both spines again.
  poll 4 both_spines || fail "leaf0's route to h2 did not get both spines back once the link was up: $(
    ip -n "contend-$run.leaf0" route show $h2)"
  wait "$server" || true
  wait "$player" || fail "the play failed: $(cat "$tmp/play.out")"
  took=$(python3 - "$tmp/events.jsonl" <<'PY'
import json, sys
port, kib = None, 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["kind"] == "port_index":
        port = [(p["link"], p["node"]) for p in d["ports"]].index(("leaf0-spine0", "leaf0"))
    elif d["kind"] == "ports" and d["t_s"] < 4:
        kib += d["kib"][port]
print(kib * 1024)
PY
)
}

for attempt in 1 2; do
  play_once
  [ "$took" -gt 1000000 ] && break
  echo "no stream took spine0 ($took B before it went down): drawing again"
done
python3 - "$tmp/down.json" "$took" <<'PY' || fail "after spine0's uplink went down, a stream stopped"
import json, sys
d = json.load(open(sys.argv[1]))
late = [[s["bits_per_second"] for s in iv["streams"]] for iv in d["intervals"][-3:]]
print(f"spine0 carried {int(sys.argv[2]) / 1e6:.1f} MB before it went down; each stream in the last 3 s (Mbit/s):",
      " | ".join(" ".join(f"{b / 1e6:.1f}" for b in second) for second in late))
sys.exit(0 if min(min(second) for second in late) > 0 else 1)
PY
[ "$(grep -c '"kind":"link_state"' "$tmp/events.jsonl")" -eq 2 ] || fail "the events log lacks the link_state lines"
no_leftovers
