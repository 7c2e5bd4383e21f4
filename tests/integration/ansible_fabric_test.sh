#!/usr/bin/env bash
# A fabric scenario on cluster hosts (ansible/, namespaces standing in for hosts as in
# ansible_test.sh): the inventory's racks (the groups under `nodes`) stand for the leaf-spine's
# leaves, rack by rack and host by host, so the scenario's placement rule picks real hosts; each
# host shapes its NIC alone (one class for the traffic to every other host, at its host link's
# rate) and plays its NIC's timeline; hosts without a rank run no worker. A scenario that changes
# a link between switches is refused before anything runs.
source "$(dirname "$0")/lib.sh"
need_root
command -v ansible-playbook >/dev/null || skip "needs ansible-playbook (scripts/install-deps.sh installs ansible-core)"
src=$(cd "$(dirname "$0")/../.." && pwd)
star_hosts 4
mkdir -p "$tmp/work"
# rack_b first: it stands for leaf0 (h0, h1), rack_a for leaf1 (h2, h3).
local_inventory "      children:
        rack_b:
          hosts:
$(local_host 2 12; local_host 3 12)
        rack_a:
          hosts:
$(local_host 0 12; local_host 1 12)"
# Spread: rank 0 on leaf0's first host (h0: n2), rank 1 on leaf1's (h2: n0); rank 0's NIC steps
# down at 1 s.
scenario() {
  cat >"$tmp/$1.json" <<JSON
{"schema": "contend.scenario/1", "name": "$1", "duration": "60s",
 "fabric": {"leaf-spine": {"leaves": 2, "hosts_per_leaf": 2, "spines": 1, "host_rate": "200Mbit",
                           "uplink_rate": "1Gbit"}},
 "placement": "spread",
 "timeline": [{"at": "1s", "link": "$2", "rate": "100Mbit"}]}
JSON
  cat >"$tmp/$1-exp.json" <<JSON
{"schema": "contend.experiment/1", "name": "$1", "scenarios": ["$1.json"],
 "workload": {"stages": 2, "microbatches": 8, "iterations": 3, "warmup": 1, "fwd": "2ms", "bwd": "4ms",
              "activation": "1MiB"},
 "schedules": ["1f1b"], "repetitions": 1}
JSON
}
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg"

# Refused before anything runs: the uplinks are the cluster's own.
scenario uplink leaf0-spine0
! "$contend" run "$tmp/uplink-exp.json" --hosts "$tmp/inventory.yml" --out "$tmp/refused" --no-report \
  >/dev/null 2>"$tmp/refused.txt" || fail "a rate change of a link between switches ran on cluster hosts"
grep -q "leaf0-spine0, a link between switches" "$tmp/refused.txt" || fail "refusal: $(cat "$tmp/refused.txt")"
[ ! -e "$tmp/refused/runs" ] && [ -z "$(ls "$tmp/work")" ] || fail "a refused run left files: $(ls -R "$tmp/refused" "$tmp/work")"

scenario nic h0-leaf0
"$contend" run "$tmp/nic-exp.json" --hosts "$tmp/inventory.yml" --out "$tmp/res" --no-report >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "run --hosts: $(cat "$tmp/err.txt"; tail -40 "$tmp"/res/runs/*.ansible 2>/dev/null)"
cat "$tmp/out.txt"
# The placed hosts ran the workers, the others none.
for i in 0 2; do [ -s "$tmp/work/n$i/nic.1f1b.r1.metrics.jsonl" ] || fail "n$i (a placed host) ran no worker"; done
for i in 1 3; do [ ! -e "$tmp/work/n$i/nic.1f1b.r1.worker.log" ] || fail "n$i (not placed) ran a worker"; done
# Rank 0 on h0 (n2), rank 1 on h2 (n0).
ranks_on() { python3 -c 'import json, sys; print(sorted({json.loads(l)["rank"] for l in open(sys.argv[1])}))' "$1"; }
[ "$(ranks_on "$tmp/work/n2/nic.1f1b.r1.metrics.jsonl")" = "[0]" ] && [ "$(ranks_on "$tmp/work/n0/nic.1f1b.r1.metrics.jsonl")" = "[1]" ] ||
  fail "ranks on n2 and n0: $(ranks_on "$tmp/work/n2/nic.1f1b.r1.metrics.jsonl") $(ranks_on "$tmp/work/n0/nic.1f1b.r1.metrics.jsonl")"
python3 - "$tmp/res" <<'PY' || fail "fabric on hosts: results"
import json, sys
d = sys.argv[1]
lines = [json.loads(l) for l in open(f"{d}/runs/nic.1f1b.r1.jsonl")]
assert sorted({l["rank"] for l in lines}) == [0, 1] and len(lines) == 8, lines
# 8 x 1 MiB each way through NICs of 200 Mbit/s or less: at least 0.3 s an iteration (unshaped, the
# veths carry it in a few ms): the NICs' shaping was in force.
assert all(l["iteration_s"] > 0.3 for l in lines), [round(l["iteration_s"], 3) for l in lines]
events = [json.loads(l) for l in open(f"{d}/events/nic.1f1b.r1.jsonl")]
# Each host's log in turn (port_index, then its ports lines): per NIC, what it sent in each sample.
index, sent, over = [], {}, {}
for e in events:
    if e.get("kind") == "port_index":
        index, last_t = [p["link"] for p in e["ports"]], e["t_s"]
    elif e.get("kind") == "ports":
        for link, kib in zip(index, e["kib"]):
            sent.setdefault(link, []).append((e["t_s"], e["t_s"] - last_t, kib * 1024))
        last_t = e["t_s"]
# Every host shaped its NIC (and passed the rest, "(other)", at the default rate).
assert set(sent) == {"h0-leaf0", "h1-leaf0", "h2-leaf1", "h3-leaf1", "(other)"}, set(sent)
total = {link: sum(b for _, _, b in v) for link, v in sent.items()}
# The ranks' hosts (h0 = n2, h2 = n0) carried the activations and gradients, the others none of them.
assert total["h0-leaf0"] > 8 << 20 and total["h2-leaf1"] > 8 << 20, total
assert total["h1-leaf0"] < 1 << 20 and total["h3-leaf1"] < 1 << 20, total
# Rank 0's NIC stepped down to 100 Mbit/s at 1 s: no sample after it sent faster than that and the
# token bucket's burst allow.
after = [b * 8 / dt for t, dt, b in sent["h0-leaf0"] if t > 1.2 and dt > 0.05]
assert after and max(after) < 130e6, [round(r / 1e6) for r in after]
rates = [e for e in events if e.get("kind") == "rate"]
assert rates and all(e["link"] == "h0-leaf0" for e in rates), rates
# The summary names where each rank ran: its scenario host and the inventory host standing for it.
nic = json.load(open(f"{d}/summary.json"))["scenarios"]["nic"]
assert nic["rank_hosts"] == ["h0", "h2"] and nic["rank_inventory_hosts"] == ["n2", "n0"], nic
PY
# A user's job on the same placement, one rank per placed host (spread: h0, h2, h1, h3, that is
# n2, n0, n3, n1): each rank's command rendered by its host.
cat >"$tmp/job.json" <<JSON
{"schema": "contend.experiment/1", "name": "fabric-job", "scenarios": ["nic.json"], "repetitions": 1,
 "workload": {"command": ["/bin/sh", "-c", "echo rank {rank} of {world_size} at {addr}, peers {peers}; for i in 1 2 3; do sleep 0.2; echo step 0.2; done"],
   "timeout": "60s", "warmup": 0,
   "output": {"parser": "regex", "pattern": "^step ([0-9.]+)", "captures": "seconds", "amount": 1}}}
JSON
"$contend" run "$tmp/job.json" --hosts "$tmp/inventory.yml" --out "$tmp/job" --no-report >"$tmp/job.txt" 2>&1 ||
  fail "a command experiment on the fabric: $(tail -20 "$tmp/job.txt"; tail -40 "$tmp"/job/runs/*.ansible)"
hosts_of_ranks=(3 1 4 2) # n2, n0, n3, n1: 198.18.200.(i+1)
for r in 0 1 2 3; do
  grep -q "rank $r of 4 at 198.18.200.${hosts_of_ranks[r]}, peers 198.18.200.3,198.18.200.1,198.18.200.4,198.18.200.2" \
    "$tmp/job/runs/nic.job.r1.rank$r.log" || fail "rank $r's command: $(head -1 "$tmp/job/runs/nic.job.r1.rank$r.log")"
done
python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["scenarios"]["nic"]["rank_inventory_hosts"])' \
  "$tmp/job/summary.json" | grep -qx "\['n2', 'n0', 'n3', 'n1'\]" || fail "the job's summary: $(cat "$tmp/job/summary.json")"

for i in 0 1 2 3; do
  ! tc -n "hs$run-$i" qdisc show dev eth0 | grep -q htb || fail "n$i: shaping left on eth0"
  ! ls "$tmp/work/n$i"/*.pid "$tmp/work/n$i"/*.token >/dev/null 2>&1 || fail "n$i: pid or token files left"
done
echo "ansible_fabric: ok"
