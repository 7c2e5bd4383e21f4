#!/usr/bin/env bash
# A leaf-spine fabric in namespaces, checked with iperf3 (independent of contend's flows): TCP
# flows converging on an oversubscribed uplink fill it, each with its max-min share where the
# ports queue per flow (fair-queue; one drop-tail queue, htb, the default, for contrast); flows between two
# leaves fill both spines (ECMP spreads them; one spine alone would give half); a timeline's
# traffic pattern runs from the hosts its rule placed, its queues at the uplinks it shares and not at
# its hosts' NICs, also as a closed-loop job; down leaves nothing. Rerouting around a
# link taken down is fabric_reroute_test.sh.
source "$(dirname "$0")/lib.sh"
need_root

# leaf_spine SPINES HOST_RATE [QDISC]: 2 leaves of 4 hosts at HOST_RATE, SPINES spines at
# 200 Mbit/s per uplink, every port shaped by QDISC (default: the fabric's own, htb).
leaf_spine() {
  local qdisc=${3:+, \"qdisc\": \"$3\"}
  cat >"$tmp/f.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "60s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": $1, "host_rate": "$2", "uplink_rate": "200Mbit"$qdisc}}}
JSON
  "$contend" emu up "$tmp/f.json" >/dev/null
}
# addresses_of HOST...: their NICs' addresses, as `contend emu status` shows them, on one line.
addresses_of() { "$contend" emu status --run "$run" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
ends = {e["node"]: e["address"].split("/")[0] for l in d["links"] for e in l["ends"]}
print(" ".join(ends[h] for h in sys.argv[1:]))' "$@"; }

# received: every TCP connection's counters in h4..h7 as their kernels count them (ss), each
# namespace's lines after the time they were read.
received() {
  local i
  for i in 4 5 6 7; do
    echo "t $(date +%s.%N)"
    ip netns exec "contend-$run.h$i" ss -tinH state established
  done
}

# flows STREAMS SECONDS: h0..h3 each send STREAMS TCP streams (iperf3, cubic) to h4..h7; prints
# every stream's rate in bit/s, one per line, over a window of SECONDS common to all streams (from
# 2 s after they start, ending 1 s before the first ends): the data segments that reached its
# receiver (the kernel's count, ss's data_segs_in) times their size: what crossed the port,
# retransmissions included (a few, against the goodput that 0.956 x the rate stands for).
# Not iperf3's totals: each stream's window is its own (clients start apart) and starts with what
# its queue at the bottleneck held (up to 1.45 MB at 200 Mbit/s, 6% of an eighth of the uplink's
# 8 s), so one stream in eight read 5-6% over its share; and not bytes received in order, which
# miss what waits behind a loss (3.6% of a stream's window, seen).
flows() {
  local i servers=() clients=() to
  read -ra to <<<"$(addresses_of h4 h5 h6 h7)"
  for i in 0 1 2 3; do
    ip netns exec "contend-$run.h$((i + 4))" iperf3 -s -1 -p $((5300 + i)) >/dev/null 2>&1 &
    servers+=($!)
    pids+=($!)
  done
  for i in 0 1 2 3; do wait_for_port "contend-$run.h$((i + 4))" $((5300 + i)); done
  for i in 0 1 2 3; do
    ip netns exec "contend-$run.h$i" iperf3 -c "${to[i]}" -p $((5300 + i)) -P "$1" -t $(($2 + 3)) -C cubic \
      -J >"$tmp/c$i.json" &
    clients+=($!)
  done
  sleep 2
  received >"$tmp/rx0"
  sleep "$2"
  received >"$tmp/rx1"
  for p in "${clients[@]}"; do wait "$p" || fail "an iperf3 client failed: $(cat "$tmp"/c*.json | grep error)"; done
  for p in "${servers[@]}"; do wait "$p" || true; done
  python3 - "$tmp/rx0" "$tmp/rx1" $((4 * $1)) <<'PY' || fail "not every stream carried data over the window"
import re, sys
def counts(path):  # (local, peer) -> (time read, data segments received, their size)
    out, t, key = {}, 0.0, None
    for line in open(path):
        f = line.split()
        if f and f[0] == "t":
            t = float(f[1])
        elif len(f) == 4:  # Recv-Q Send-Q local peer
            key = (f[2], f[3])
        elif (segs := re.search(r"\bdata_segs_in:(\d+)", line)) and (size := re.search(r"\brcvmss:(\d+)", line)):
            out[key] = (t, int(segs.group(1)), int(size.group(1)))
    return out
before, after = counts(sys.argv[1]), counts(sys.argv[2])
rates = [(after[k][1] - segs) * after[k][2] * 8 / (after[k][0] - t) for k, (t, segs, _) in before.items() if k in after]
streams = [r for r in rates if r > 1e6]  # not iperf3's control connections
print("\n".join(str(r) for r in streams))
if len(streams) != int(sys.argv[3]):
    sys.exit(f"{len(streams)} connections carried over 1 Mbit/s, {sys.argv[3]} streams expected: {sorted(rates)}")
PY
}

# 1. Four flows into one 200 Mbit/s uplink (4:1) fill it, each with its max-min share: 0.956 x
# 200 Mbit/s / 4 within 5% (fair-queue, a queue per flow); then eight, two from each host. Then
# four under one drop-tail queue (htb), printed, not checked: TCP flows share it unevenly
# (docs/scenario-format.md).
shares() { # QDISC: prints each flow's share and the sum; fails unless the sum fills the uplink and,
  # with CHECK_EACH=1, each flow gets its share.
  python3 - "$tmp/shares" "$1" "${CHECK_EACH:-0}" <<'PY'
import sys
got = [float(x) for x in open(sys.argv[1])]
want = 0.956 * 200e6
jain = sum(got) ** 2 / (len(got) * sum(g * g for g in got))
each = [g / (want / len(got)) for g in got]
print(f"{sys.argv[2]}: shares (Mbit/s):", " ".join(f"{g / 1e6:.1f}" for g in got),
      f"sum {sum(got) / want:.3f} x 0.956 x 200 Mbit/s, each {min(each):.3f}-{max(each):.3f} x its max-min"
      f" share, Jain's index {jain:.3f}")
ok = abs(sum(got) / want - 1) <= 0.05 and (sys.argv[3] == "0" or all(abs(e - 1) <= 0.05 for e in each))
sys.exit(0 if ok else 1)
PY
}
leaf_spine 1 200Mbit fair-queue
for streams in 1 2; do # 4 flows, then 8
  flows "$streams" 8 >"$tmp/shares"
  CHECK_EACH=1 shares fair-queue ||
    fail "$((4 * streams)) flows did not each get their max-min share of the oversubscribed uplink"
done
"$contend" emu down --run "$run" >/dev/null
leaf_spine 1 200Mbit
flows 1 8 >"$tmp/shares"
shares htb || fail "four flows did not fill the oversubscribed uplink under one queue"
"$contend" emu down --run "$run" >/dev/null
no_leftovers

# 2. Eight flows between the leaves over 2 spines fill both: 2 x 0.956 x 200 Mbit/s within 10%.
# ECMP hashes each flow onto a spine: all 8 on one happens once in 128 runs, which the counters
# show (a spine that carried nothing); then the flows are drawn again, once. Hosts send at up to
# 400 Mbit/s, so a host whose two flows took different spines never holds either back.
leaf_spine 2 400Mbit
uplink_bytes() {
  ip netns exec "contend-$run.leaf0" tc -s class show dev "$1" | awk '/class htb 1:1 /{getline; print $2}'
}
for attempt in 1 2; do
  before0=$(uplink_bytes c4-spine0)
  before1=$(uplink_bytes c5-spine1)
  flows 2 6 >"$tmp/ecmp"
  carried0=$(($(uplink_bytes c4-spine0) - before0))
  carried1=$(($(uplink_bytes c5-spine1) - before1))
  [ "$carried0" -gt 10000000 ] && [ "$carried1" -gt 10000000 ] && break
  echo "ECMP put every flow on one spine (spine0 $carried0 B, spine1 $carried1 B): drawing again"
done
python3 - "$tmp/ecmp" "$carried0" "$carried1" <<'PY' || fail "8 flows over 2 spines did not fill both"
import sys
total = sum(float(x) for x in open(sys.argv[1]))
want = 2 * 0.956 * 200e6
print(f"8 flows over 2 spines: {total / 1e6:.1f} Mbit/s = {total / want:.3f} x 2 x 0.956 x 200 Mbit/s;"
      f" bytes up spine0 {sys.argv[2]}, spine1 {sys.argv[3]}")
sys.exit(0 if abs(total / want - 1) <= 0.10 else 1)
PY

"$contend" emu down --run "$run" >/dev/null
no_leftovers

# 3. Another tenant's traffic placed by rule: a ring over 4 hosts spread across the leaves
# (h0 -> h4 -> h1 -> h5 -> h0), played by contend's own flows: two of its flows leave each leaf by
# its one 200 Mbit/s uplink, so each gets 0.956 x 100 Mbit/s (within 10%: fair-queue ports) and
# the flows come from the hosts the rule chose.
cat >"$tmp/ring.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "8s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 4, "spines": 1, "host_rate": "400Mbit",
                           "uplink_rate": "200Mbit", "qdisc": "fair-queue"}},
 "timeline": [{"at": "0s", "traffic": {"name": "dp", "pattern": "ring", "hosts": 4, "placement": "spread"}}]}
JSON
"$contend" emu play "$tmp/ring.json" --log "$tmp/ring.jsonl" --quiet
python3 - "$tmp/ring.jsonl" <<'PY' || fail "a ring spread across the leaves"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
got = {l["flow"]: l["achieved_bps"] for l in lines if l["kind"] == "flow_summary"}
assert sorted(got) == ["dp:h0-h4", "dp:h1-h5", "dp:h4-h1", "dp:h5-h0"], got
for name, bps in sorted(got.items()):
    print(f"ring flow {name}: {bps / 1e6:.1f} Mbit/s = {bps / (0.956 * 100e6):.3f} x 0.956 x 100 Mbit/s")
assert all(abs(bps / (0.956 * 100e6) - 1) <= 0.10 for bps in got.values())
# Where the queues built: at the leaves' ports onto the uplinks the two flows share (a median of
# more than 64 KiB held at the samples after the first second), not at the hosts' NICs, each
# sending its one flow at a quarter of its rate (a median below 64 KiB: a packet queued reads 1).
index = next(l for l in lines if l["kind"] == "port_index")["ports"]
ports = [l for l in lines if l["kind"] == "ports" and l["t_s"] > 1]
def median_queue(link, node):
    i = next(i for i, p in enumerate(index) if p["link"] == link and p["node"] == node)
    q = sorted(l["queue_kib"][i] for l in ports)
    return q[len(q) // 2]
uplinks = [median_queue(f"leaf{i}-spine0", f"leaf{i}") for i in (0, 1)]
nics = [median_queue(f"h{h}-leaf{h // 4}", f"h{h}") for h in (0, 1, 4, 5)]
print(f"median KiB queued: uplinks {uplinks}, the ring's hosts' NICs {nics}")
assert all(q > 64 for q in uplinks) and all(q < 64 for q in nics), (uplinks, nics)
PY
no_leftovers

# 4. The same ring as a closed-loop job: each iteration computes 100 ms, then each flow sends
# 2 MiB and waits for the others. An iteration takes its compute and its flows' transfer at their
# fair share (2 MiB at 0.956 x 100 Mbit/s: 175 ms), less what the uplink's token bucket (192 KiB,
# full again after the compute) lets through at once: never below the compute and the transfer of
# all but the bucket at the wire's 100 Mbit/s (252 ms), at most 15% above the share's 275 ms. No
# flow runs more than the iteration in progress ahead of the job.
sed 's/"placement": "spread"}}/"placement": "spread", "iterate": {"bytes": "2MiB", "compute": "100ms"}}}/' \
  "$tmp/ring.json" >"$tmp/job.json"
"$contend" emu play "$tmp/job.json" --log "$tmp/job.jsonl" --quiet
python3 - "$tmp/job.jsonl" <<'PY' || fail "a closed-loop ring spread across the leaves"
import json, sys
flows = [json.loads(l) for l in open(sys.argv[1])]
flows = [l for l in flows if l["kind"] == "flow_summary"]
assert len(flows) == 4, flows
n, t = flows[0]["iterations"], flows[0]["iteration_s"]
share = 0.1 + 2 * 2**20 * 8 / (0.956 * 100e6)
floor = 0.1 + (2 * 2**20 - 192 * 2**10) * 8 / 100e6
print(f"closed-loop ring: {n} iterations in 8 s, {t * 1e3:.0f} ms each (median) = {t / share:.3f} x its share's")
assert all(f["iterations"] == n and f["error"] == "" for f in flows), flows
assert n >= 5 and floor <= t <= 1.15 * share, (n, t)
for f in flows:
    assert n * 2 * 2**20 <= f["bytes_received"] and f["bytes_sent"] <= (n + 1) * 2 * 2**20, f
PY
no_leftovers
