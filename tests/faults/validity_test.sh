#!/usr/bin/env bash
# A cell is published only when the network was the scenario's (issue 27, findings 1 and 2; issue
# 44, finding 1: a runner stopped while an event was due), seen
# from `contend run` itself: the shaping of a link deleted mid-cell (`tc qdisc del ... root`) fails
# the run, naming the link and node, with no number recorded for that cell; a worker stopped for
# 3 s mid-cell leaves a cell that counts it, and its record and the terminal say which iteration
# and how much slower than the median. Root; a private /run/netns, as kill_test.sh.
# Usage: validity_test.sh PATH/TO/contend
source "$(dirname "$0")/private_netns.sh"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"
need_root
src=$(cd "$(dirname "$0")/../.." && pwd)  # the shipped scenarios (lib.sh's experiment)

# failed_unrecorded NAME PATTERN WHAT: the run in the background ($runner, results in $tmp/NAME,
# output in $tmp/NAME.out) exits non-zero, its error matches PATTERN (grep -E), and no cell of it
# was recorded.
failed_unrecorded() {
  local rc=0
  wait "$runner" || rc=$?
  [ "$rc" -ne 0 ] || fail "$3: the run exited 0: $(tail -5 "$tmp/$1.out")"
  grep -Eq "$2" "$tmp/$1.out" || fail "$3: the error does not match /$2/: $(tail -5 "$tmp/$1.out")"
  [ ! -s "$tmp/$1/cells.jsonl" ] || fail "$3: a number was recorded: $(cat "$tmp/$1/cells.jsonl")"
  echo "ok: $3: the run failed ($(grep -Em1 "$2" "$tmp/$1.out" | head -c 160)) and recorded nothing"
}

# 4 stages over a 4-node chain, about 0.4 s an iteration: a cell lasts about 8 s.
experiment "$tmp/e.json" '"workload": {"iterations": 20, "fwd": "20ms", "bwd": "40ms"}'
iteration_logged() { [ -n "$(cat "$1"/runs/*.jsonl 2>/dev/null | head -c 1)" ]; }
# The PID of rank R's `contend worker` writing under folder D.
worker_pid() { pids_running "^[^ ]*contend worker --rank $1 .*--metrics $2/"; }

# start_cell NAME: the experiment run into $tmp/NAME in the background ($runner) until it logs an
# iteration; sets $node and $dev, n1's namespace and its end of n1-n2.
start_cell() {
  "$contend" run "$tmp/e.json" --out "$tmp/$1" --no-report >"$tmp/$1.out" 2>&1 &
  runner=$!
  pids+=("$runner")
  poll 60 iteration_logged "$tmp/$1" || fail "no iteration logged within 60 s: $(tail -5 "$tmp/$1.out")"
  node=$(ls /run/netns | grep -E '^contend-.*\.n1$')
  dev=$(ip netns exec "$node" ip -o link show | awk -F': ' '{print $2}' | sed 's/@.*//' | grep -E '^c[0-9]+-n2$')
  [ -n "$dev" ] || fail "no interface of n1 towards n2 in $node"
}

# Finding 1: the shaping of link n1-n2 deleted on node n1 while the cell runs.
start_cell deleted
ip netns exec "$node" tc qdisc del dev "$dev" root || fail "could not delete the shaping to test"
failed_unrecorded deleted "link n1-n2: its shaping on node n1 .* is gone" "shaping deleted mid-cell"

# Hardening v3, finding 2: the shaping changed beside its classes' rates. A u32 filter added at
# the root (here into the link's inner class, whose packets HTB sends unshaped), and the interface
# taken down for half a second: both used to pass as the scenario's network.
start_cell filtered
ip netns exec "$node" tc filter add dev "$dev" parent 1: prio 1 protocol ip u32 match u32 0 0 flowid 1:1 ||
  fail "could not add a filter to test"
failed_unrecorded filtered "link n1-n2: the shaping of class .* on node n1 changed" "a filter added mid-cell"
start_cell downed
ip netns exec "$node" ip link set dev "$dev" down || fail "could not take the interface down to test"
sleep 0.5
ip netns exec "$node" ip link set dev "$dev" up 2>/dev/null || true  # the failed cell's teardown may be done
failed_unrecorded downed "link n1-n2: the shaping of class .* on node n1 changed" "the interface down for 0.5 s mid-cell"

# Finding 2: rank 1 stopped for 3 s (SIGSTOP, then SIGCONT) in the middle of the cell.
"$contend" run "$tmp/e.json" --out "$tmp/stopped" --no-report >"$tmp/stopped.out" 2>&1 &
runner=$!
pids+=("$runner")
poll 60 iteration_logged "$tmp/stopped" || fail "no iteration logged within 60 s: $(tail -5 "$tmp/stopped.out")"
sleep 1
rank1=$(worker_pid 1 "$tmp/stopped")
[ -n "$rank1" ] || fail "rank 1's worker not found"
kill -STOP "$rank1"
sleep 3
kill -CONT "$rank1"
wait "$runner" || fail "the run with a stopped worker failed: $(tail -5 "$tmp/stopped.out")"
python3 - "$tmp/stopped/cells.jsonl" <<'PY' || fail "the cell's record does not show the stop"
import json, sys
cell = [json.loads(l) for l in open(sys.argv[1])][0]
print(f"slowest iteration {cell['slowest_iteration']}: {cell['slowest_iteration_s']:.2f} s, "
      f"median {cell['median_iteration_s']:.2f} s")
assert cell["slowest_iteration_s"] >= 2.5 and cell["slowest_iteration_s"] > 3 * cell["median_iteration_s"], cell
PY
grep -q "the median .*was a worker stopped" "$tmp/stopped.out" ||
  fail "the terminal did not say an iteration was many times the median: $(tail -5 "$tmp/stopped.out")"
echo "ok: a worker stopped for 3 s: the cell's record shows its slowest iteration, and the terminal says so"
# Hardening v3, finding 1: the runner stopped (SIGSTOP) across a drop its scenario schedules at
# 3 s while its workers finish (about 2.5 s): the drop is never applied, so the cell ran on a
# network the scenario does not describe and must not be published (before, most such runs exited
# 0 with the undisturbed rate).
python3 - "$tmp/drop.json" <<'PY'
import json, sys
nodes = ["n0", "n1", "n2", "n3"]
json.dump({"schema": "contend.scenario/1", "name": "drop", "duration": "60s", "nodes": nodes,
           "links": [{"name": f"{a}-{b}", "from": a, "to": b, "rate": "1Gbit"} for a, b in zip(nodes, nodes[1:])],
           "timeline": [{"at": "3s", "link": "n1-n2", "rate": "10Mbit"}]}, open(sys.argv[1], "w"))
PY
experiment "$tmp/paused.json" '"scenarios": ["'"$tmp"'/drop.json"], "workload": {"iterations": 10, "microbatches": 4, "fwd": "10ms", "bwd": "20ms"}'
"$contend" run "$tmp/paused.json" --out "$tmp/paused" --no-report >"$tmp/paused.out" 2>&1 &
runner=$!
pids+=("$runner")
poll 60 iteration_logged "$tmp/paused" || fail "no iteration logged within 60 s: $(tail -5 "$tmp/paused.out")"
kill -STOP "$runner"
sleep 6  # the workers end meanwhile, and the drop at 3 s is due
kill -CONT "$runner"
failed_unrecorded paused "was due .* and was never applied|applied .* late" "a runner stopped across a scheduled drop"
echo "validity: all checks passed"
