#!/usr/bin/env bash
# Background flows in hosts mode (`contend emu host`, what ansible/ runs on every node): two
# namespaces on a bridge stand in for hosts, each running `contend emu host` for its own node. A
# TCP flow n0 -> n1 in the scenario's timeline is sourced by n0 (on n0's clock) and sunk by n1
# (listening from the start), through n0's per-peer class: its goodput is the link's shaped rate;
# a TCP and a UDP flow that start before n1 is up get through once it is;
# n1 logs the flow as elsewhere and counts the bytes it received; nothing is left behind.
source "$(dirname "$0")/lib.sh"
need_root
star_hosts 2
cat >"$tmp/two.json" <<JSON
{"schema": "contend.scenario/1", "name": "two", "duration": "6s", "nodes": ["n0", "n1"],
 "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "200Mbit", "direction": "forward"}],
 "timeline": [{"at": "0s", "flow": {"name": "early-udp", "from": "n0", "to": "n1", "protocol": "udp",
                                     "rate": "20Mbit", "duration": "3s"}},
              {"at": "0s", "flow": {"name": "early-tcp", "from": "n0", "to": "n1", "duration": "3s"}},
              {"at": "3500ms", "flow": {"name": "bulk", "from": "n0", "to": "n1", "duration": "2s"}}]}
JSON
host() {  # host I: node nI, on its namespace's eth0, peer the other
  local i=$1 j=$((1 - $1))
  "$contend" emu host "$tmp/two.json" --node "n$i" --iface eth0 --netns "hs$run-$i" \
    --address "198.18.200.$((i + 1))" --peer "n$j=198.18.200.$((j + 1))" --log "$tmp/n$i.jsonl" 2>"$tmp/n$i.err" &
  pids+=($!)
}
# The sink's host starts once the source's has started its early flows (the UDP one is logged
# when its socket is up; the TCP one retries its connection until n1 listens). They last 3 s, for
# n1 to start and listen on a slow machine; the bulk flow comes after them.
host 0
wait_for_line "$tmp/n0.jsonl" '"kind":"flow_start".*"flow":"early-udp"'
host 1
for p in "${pids[@]}"; do wait "$p" || fail "emu host: $(cat "$tmp"/n*.err)"; done
python3 - "$tmp" <<'PY' || fail "hosts-mode flows (logs: $(cat "$tmp"/n*.err))"
import json, sys
d = sys.argv[1]
n0 = [json.loads(l) for l in open(f"{d}/n0.jsonl")]
n1 = [json.loads(l) for l in open(f"{d}/n1.jsonl")]
starts0 = [e for e in n0 if e["kind"] == "flow_start"]
assert [e["status"] for e in starts0] == ["applied"] * 3, starts0
assert {e["status"] for e in n1 if e["kind"] in ("flow_start", "flow_stop")} == {"elsewhere"}, n1
last = lambda log, flow: [e for e in log if e["kind"] == "flow_sample" and e["flow"] == flow][-1]
# The early flows started before n1 listened: TCP retried its connection, UDP kept sending
# through the port-unreachable replies, and both got through once n1 was up.
for flow in ("early-tcp", "early-udp"):
    assert last(n1, flow)["bytes_received"] > 0, (flow, last(n1, flow), last(n0, flow))
last0, last1 = last(n0, "bulk"), last(n1, "bulk")
# 2 s through a 200 Mbit/s class: TCP goodput 0.956 x 200 Mbit/s = 47.8 MB (the sender's count
# includes what sat in buffers at the stop).
goodput = last1["bytes_received"] * 8 / 2.0
assert 0.8 * 191.2e6 < goodput < 1.1 * 191.2e6, f"received {last1['bytes_received']} B: {goodput / 1e6:.1f} Mbit/s"
assert last0["bytes_sent"] >= last1["bytes_received"], (last0, last1)
assert last1["bytes_sent"] == 0 and last0["bytes_received"] == 0, "each host sees only its own half"
peer = [e for e in n0 if e["kind"] == "sample" and e["link"] == "a"]
assert peer and peer[-1]["bytes"] >= last1["bytes_received"], "the flow did not pass n0's class for link a"
print(f"hosts-mode flow: {goodput / 1e6:.1f} Mbit/s through a 200 Mbit/s link")
PY
for i in 0 1; do
  ! tc -n "hs$run-$i" qdisc show dev eth0 | grep -q htb || fail "n$i: shaping left on eth0"
  [ -z "$(ip netns exec "hs$run-$i" ss -Htan state listening state established)" ] || fail "n$i: sockets left: $(ip netns exec "hs$run-$i" ss -tan)"
done
echo "host flows: ok"
