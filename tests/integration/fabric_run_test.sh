#!/usr/bin/env bash
# A pipeline experiment on a fabric: `contend run` places its two ranks by the scenario's rule
# (spread: one per leaf), they reach each other through the switches, and every byte of theirs
# crosses shaped ports: the fabric's hosts have no port on the control bridge, and the cell's own
# port samples count the activations on leaf0's uplink. A spine taken down mid-run: the ranks go on
# over the other. Nothing is left behind.
source "$(dirname "$0")/lib.sh"
need_root

cat >"$tmp/f.json" <<JSON
{"schema": "contend.scenario/1", "name": "spread", "duration": "60s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "200Mbit"}},
 "placement": "spread"}
JSON
# No unshaped way between a fabric's hosts: no cbr0 in a host's namespace.
"$contend" emu up "$tmp/f.json" --run "$run" >/dev/null
ip -n "contend-$run.h0" link show cbr0 >/dev/null 2>&1 && fail "a fabric host has a port on the control bridge"
"$contend" emu down --run "$run" >/dev/null

cat >"$tmp/e.json" <<JSON
{"schema": "contend.experiment/1", "name": "fabric-run", "topology": "netns", "scenarios": ["f.json"],
 "workload": {"stages": 2, "microbatches": 8, "iterations": 3, "warmup": 1, "backend": "emulated",
              "fwd": "5ms", "bwd": "10ms", "activation": "1MiB"},
 "schedules": ["1f1b"], "repetitions": 1}
JSON
before=$(ls /run/netns 2>/dev/null | grep -c "^contend-" || true)
"$contend" run "$tmp/e.json" --out "$tmp/res" >"$tmp/run.out" 2>&1 || fail "the run failed: $(tail -20 "$tmp/run.out")"
grep -q "spread .*1f1b" "$tmp/run.out" || fail "no cell in the table: $(cat "$tmp/run.out")"
after=$(ls /run/netns 2>/dev/null | grep -c "^contend-" || true)
[ "$after" -eq "$before" ] || fail "the run left namespaces: $(ls /run/netns | grep '^contend-')"

# Rank 0 on h0 (leaf0), rank 1 on h2 (leaf1): 3 iterations x 8 micro-batches of 1 MiB activations
# cross leaf0's uplink, and as many gradients leaf1's.
python3 - "$tmp/res/events/spread.1f1b.r1.jsonl" <<'PY' || fail "the job's bytes did not cross the fabric's ports"
import json, sys
index, kib = None, {}
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["kind"] == "port_index":
        index = [(p["link"], p["node"]) for p in d["ports"]]
    elif d["kind"] == "ports":
        for i, k in enumerate(d["kib"]):
            kib[index[i]] = kib.get(index[i], 0) + k
want = 3 * 8 * 1024
for port in [("leaf0-spine0", "leaf0"), ("leaf1-spine0", "leaf1"), ("h0-leaf0", "h0"), ("h2-leaf1", "leaf1")]:
    got = kib.get(port, 0)
    print(f"{port[0]}@{port[1]}: {got} KiB (at least {want} expected)")
    assert got >= want, port
PY
# The summary says where the ranks ran and which ports they crossed; the report draws the ports.
python3 - "$tmp/res/summary.json" <<'PY' || fail "the summary does not place the ranks: $(head -c 2000 "$tmp/res/summary.json")"
import json, sys
info = json.load(open(sys.argv[1]))["scenarios"]["spread"]
assert info["rank_hosts"] == ["h0", "h2"], info
assert "leaf0-spine0@leaf0" in info["rank_ports"] and "h1-leaf0@h1" not in info["rank_ports"], info
PY
[ -e "$tmp/res/report/ports.svg" ] || fail "no port figure: $(cat "$tmp/res/report.log")"

# A spine taken down mid-run: the ranks' connection goes on over the other spine, the cell is
# measured, and after the event no byte of theirs crosses the spine that is down.
cat >"$tmp/down.json" <<JSON
{"schema": "contend.scenario/1", "name": "spine-down", "duration": "60s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 2, "host_rate": "200Mbit"}},
 "placement": "spread",
 "timeline": [{"at": "1s", "link": "leaf0-spine0", "state": "down"}, {"at": "1s", "link": "leaf1-spine0", "state": "down"}]}
JSON
sed -e 's/"f.json"/"down.json"/' -e 's/"iterations": 3/"iterations": 10/' "$tmp/e.json" >"$tmp/e-down.json"
"$contend" run "$tmp/e-down.json" --out "$tmp/res-down" >"$tmp/run-down.out" 2>&1 ||
  fail "the run with a spine down failed: $(tail -20 "$tmp/run-down.out")"
python3 - "$tmp/res-down/events/spine-down.1f1b.r1.jsonl" <<'PY' || fail "the ranks' bytes did not move to the spine that is up"
import json, sys
index, before, after, applied = None, {}, {}, 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    if d["kind"] == "link_state":
        applied += d.get("applied_s") is not None
    elif d["kind"] == "port_index":
        index = [(p["link"], p["node"]) for p in d["ports"]]
    elif d["kind"] == "ports":
        into = after if d["t_s"] > 1.5 else before
        for i, k in enumerate(d["kib"]):
            into[index[i]] = into.get(index[i], 0) + k
assert applied == 2, applied
spine0, spine1 = ("leaf0-spine0", "leaf0"), ("leaf0-spine1", "leaf0")
print(f"after 1.5 s: {after.get(spine0, 0)} KiB over spine 0 (down), {after.get(spine1, 0)} over spine 1")
assert after.get(spine0, 0) == 0 and after.get(spine1, 0) >= 4 * 8 * 1024, (before, after)
PY
after=$(ls /run/netns 2>/dev/null | grep -c "^contend-" || true)
[ "$after" -eq "$before" ] || fail "the run with a spine down left namespaces: $(ls /run/netns | grep '^contend-')"
echo "PASS: a pipeline on a fabric, placed by rule, its bytes on shaped ports, around a spine taken down"
