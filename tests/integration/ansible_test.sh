#!/usr/bin/env bash
# ansible/ for real, on this host: three network namespaces on one bridge stand in for cluster
# hosts (connection local, each "host" running its commands in its namespace). `contend run
# --hosts` drives experiment.yml per cell: clocks checked, each host's eth0 shaped per peer
# (cluster mode) and its links' timeline played with a background flow n0 -> n1, one worker per host, results collected into the
# runner's layout, which `contend report` reads; teardown leaves no qdisc, process or pid file;
# teardown.yml is safe to rerun; site.yml (deps and build from a clone) changes nothing the second
# time.
source "$(dirname "$0")/lib.sh"
need_root
command -v ansible-playbook >/dev/null || skip "needs ansible-playbook (scripts/install-deps.sh installs ansible-core)"
src=$(cd "$(dirname "$0")/../.." && pwd)
star_hosts 3
mkdir -p "$tmp/work"
cat >"$tmp/inventory.yml" <<YAML
all:
  children:
    control:
      hosts:
        localhost:
    nodes:
      hosts:
$(for i in 0 1 2; do printf '        n%d:\n          contend_netns: hs%s-%d\n          contend_address: 198.18.200.%d\n          contend_work_dir: %s/work/n%d\n' "$i" "$run" "$i" "$((i + 1))" "$tmp" "$i"; done)
  vars:
    ansible_connection: local
    ansible_python_interpreter: /usr/bin/python3
    contend_iface: eth0
    contend_bin: $contend
YAML
cat >"$tmp/three.json" <<JSON
{"schema": "contend.scenario/1", "name": "three", "duration": "60s", "nodes": ["n0", "n1", "n2"],
 "links": [{"name": "a", "from": "n0", "to": "n1", "rate": "200Mbit"},
           {"name": "b", "from": "n1", "to": "n2", "rate": "200Mbit"}],
 "timeline": [{"at": "1s", "link": "b", "rate": "100Mbit"},
              {"at": "0s", "flow": {"name": "bulk", "from": "n0", "to": "n1", "rate": "50Mbit"}}]}
JSON
cat >"$tmp/exp.json" <<JSON
{"schema": "contend.experiment/1", "name": "hosts", "scenarios": ["three.json"],
 "workload": {"stages": 3, "microbatches": 8, "iterations": 3, "warmup": 1, "fwd": "2ms", "bwd": "4ms",
              "activation": "1MiB"},
 "schedules": ["1f1b", "kfkb:k=2"], "repetitions": 1, "baseline": "1f1b"}
JSON
export ANSIBLE_CONFIG="$src/ansible/ansible.cfg"
"$contend" run "$tmp/exp.json" --hosts "$tmp/inventory.yml" --out "$tmp/res" --no-report >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "run --hosts: $(cat "$tmp/err.txt"; tail -40 "$tmp"/res/runs/*.ansible 2>/dev/null)"
cat "$tmp/out.txt"
python3 - "$tmp/res" <<'PY' || fail "hosts-mode results"
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/summary.json"))
assert len(s["cells"]) == 2 and all(c["repetitions"] == 1 for c in s["cells"]), s["cells"]
lines = [json.loads(l) for l in open(f"{d}/runs/three.1f1b.r1.jsonl")]
assert sorted({l["rank"] for l in lines}) == [0, 1, 2] and len(lines) == 12, len(lines)
# 8 x 1 MiB each way through links of at most 200 Mbit/s: at least 0.35 s an iteration (unshaped,
# the veths carry that in a few ms and compute takes 0.06 s): the hosts' shaping was in force.
assert all(l["iteration_s"] > 0.35 for l in lines), [round(l["iteration_s"], 3) for l in lines]
events = [json.loads(l) for l in open(f"{d}/events/three.1f1b.r1.jsonl")]
peers = [e for e in events if e.get("kind") == "sample" and e["class"].startswith("peer")]
assert peers and max(e["bytes"] for e in peers) > 8 << 20, "no traffic through the per-peer classes"
assert any(e.get("kind") == "rate" and e["link"] == "b" for e in events), "the timeline was not played"
# The background flow: sourced by n0 on its timeline, sunk by n1, both logged in the cell's events.
starts = {e["status"] for e in events if e.get("kind") == "flow_start"}
assert starts == {"applied", "elsewhere"}, starts
# What it carries depends on how soon n1's sink is up in a cell of a few seconds (155 KiB seen on a
# busy machine, megabytes on an idle one): that it reached the sink is what is asserted; its rate
# is flows_test.sh's.
received = max(e["bytes_received"] for e in events if e.get("kind") == "flow_sample")
assert received > 0, f"the flow's sink on n1 received {received} bytes"
PY
"$contend" report "$tmp/res" >/dev/null 2>&1 || fail "the report cannot read the collected results"
[ -s "$tmp/res/report/throughput.png" ] || fail "no throughput figure from hosts-mode results"
for i in 0 1 2; do
  ! tc -n "hs$run-$i" qdisc show dev eth0 | grep -q htb || fail "n$i: shaping left on eth0"
  ! ls "$tmp/work/n$i"/*.pid >/dev/null 2>&1 || fail "n$i: pid files left"
done
! pgrep -f "contend.* (worker|emu host).*$tmp" >/dev/null || fail "processes left: $(pgrep -af "contend.*$tmp")"

# teardown.yml: nothing to do now, and it says so.
ansible-playbook -i "$tmp/inventory.yml" "$src/ansible/teardown.yml" >"$tmp/teardown.txt" 2>&1 ||
  fail "teardown.yml: $(tail -20 "$tmp/teardown.txt")"
grep -Eq "changed=0 +unreachable=0 +failed=0" "$tmp/teardown.txt" || fail "teardown.yml changed something: $(tail "$tmp/teardown.txt")"

# site.yml on one host: deps, then a clone and build of the contend binary; the second run
# changes nothing.
cat >"$tmp/site-inventory.yml" <<YAML
all:
  children:
    nodes:
      hosts:
        builder:
          ansible_connection: local
          ansible_python_interpreter: /usr/bin/python3
          contend_dir: $tmp/src
          contend_work_dir: $tmp/work/builder
          contend_repo: $src
          contend_cmake_args: -DCONTEND_WITH_CUDA=OFF -DCONTEND_BUILD_TESTS=OFF -DCONTEND_BUILD_BENCH=OFF
YAML
for pass in 1 2; do
  ansible-playbook -i "$tmp/site-inventory.yml" "$src/ansible/site.yml" >"$tmp/site$pass.txt" 2>&1 ||
    fail "site.yml pass $pass: $(tail -30 "$tmp/site$pass.txt")"
done
"$tmp/src/build/default/bin/contend" --version >/dev/null || fail "site.yml built no working binary"
grep -Eq "builder +: ok=[0-9]+ +changed=0 +unreachable=0 +failed=0" "$tmp/site2.txt" ||
  fail "site.yml is not idempotent: $(grep -B2 changed: "$tmp/site2.txt" | head -20; tail -3 "$tmp/site2.txt")"
echo "ansible: ok"
