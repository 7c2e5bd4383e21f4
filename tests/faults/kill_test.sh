#!/usr/bin/env bash
# SIGKILL of `contend run` mid-cell (issue 16, finding 2): within 5 s the cell's workers are gone
# by themselves (they die with their runner), and after the documented cleanup, `contend emu down
# --all`, within 5 s no contend namespace, no contend veth in the root namespace and no process
# inside one of the run's namespaces is left. Root; runs in a mount namespace of its own with a
# private /run/netns, so `down --all` sees only this test's run.
# Usage: kill_test.sh PATH/TO/contend
source "$(dirname "$0")/private_netns.sh"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"
need_root
src=$(cd "$(dirname "$0")/../.." && pwd)  # the shipped scenarios (lib.sh's experiment)

gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
# PIDs of the `contend worker` processes of this test's run (their metrics go under $tmp/res).
workers() { pids_running "worker .*--metrics $tmp/res/"; }
all_gone() { local p; for p in "$@"; do gone "$p" || return 1; done; }
# The inodes of the network namespaces every thread of every process is in, one per line.
netns_in_use() { readlink /proc/[0-9]*/task/*/ns/net 2>/dev/null | sed 's/[^0-9]//g' | sort -u; }
contend_veths() { ip -o link show type veth | awk -F': ' '{print $2}' | grep -E '^(c[0-9]+-|p-)' || true; }

# 4 stages over a 4-node chain, about 0.4 s an iteration: a cell lasts about 8 s.
experiment "$tmp/e.json" '"workload": {"iterations": 20, "fwd": "20ms", "bwd": "40ms"}'
"$contend" run "$tmp/e.json" --out "$tmp/res" --no-report >"$tmp/run.out" 2>&1 &
runner=$!
pids+=("$runner")
iteration_logged() { [ -n "$(cat "$tmp"/res/runs/*.jsonl 2>/dev/null | head -c 1)" ]; }
poll 60 iteration_logged ||
  fail "no iteration logged within 60 s: $(tail -5 "$tmp/run.out")"
mapfile -t cell_workers < <(workers)
[ "${#cell_workers[@]}" -eq 4 ] || fail "expected 4 workers of the cell running, found ${#cell_workers[@]}"
mapfile -t namespaces < <(ls /run/netns | grep '^contend-')
[ "${#namespaces[@]}" -eq 5 ] || fail "expected the cell's 5 namespaces, found: ${namespaces[*]}"
inodes=$(for ns in "${namespaces[@]}"; do stat -L -c %i "/run/netns/$ns"; done | sort -u)

kill -KILL "$runner"
wait "$runner" 2>/dev/null || true
poll 5 all_gone "${cell_workers[@]}" ||
  fail "workers still running 5 s after the runner's SIGKILL: $(for p in "${cell_workers[@]}"; do gone "$p" || echo "$p"; done)"
echo "ok: the cell's 4 workers ended within 5 s of the runner's SIGKILL"
[ -n "$(ls /run/netns | grep '^contend-')" ] || fail "nothing left after SIGKILL to clean up (the test is wrong)"

"$contend" emu down --all >"$tmp/down.out" 2>&1 || fail "contend emu down --all: $(cat "$tmp/down.out")"
no_contend_netns() { [ -z "$(ls /run/netns | grep '^contend-')" ]; }
no_veths() { [ -z "$(contend_veths)" ]; }
nothing_inside() { [ -z "$(comm -12 <(netns_in_use) <(echo "$inodes"))" ]; }
poll 5 no_contend_netns || fail "namespaces left after down --all: $(ls /run/netns)"
poll 5 no_veths || fail "contend veths left in the root namespace: $(contend_veths)"
poll 5 nothing_inside || fail "processes still inside the run's namespaces: $(comm -12 <(netns_in_use) <(echo "$inodes"))"
[ -z "$(workers)" ] || fail "contend worker processes of this test left: $(workers)"
[ -z "$(ls "$CONTEND_STATE_DIR" 2>/dev/null)" ] || fail "state files left: $(ls "$CONTEND_STATE_DIR")"
echo "ok: contend emu down --all left no namespace, veth or process ($(cat "$tmp/down.out"))"

# Hardening v3: a closed terminal (SIGHUP) or a reader gone from a pipe (SIGPIPE) ends a run as
# Ctrl-C does: the cell's namespaces and the state file removed, said (before, the default action
# killed the runner and left them for `emu down`).
for sig in HUP PIPE; do
  "$contend" run "$tmp/e.json" --out "$tmp/res-$sig" --no-report >"$tmp/run-$sig.out" 2>&1 &
  runner=$!
  pids+=("$runner")
  logged() { [ -n "$(cat "$tmp"/res-$sig/runs/*.jsonl 2>/dev/null | head -c 1)" ]; }
  poll 60 logged || fail "SIG$sig: no iteration logged within 60 s: $(tail -5 "$tmp/run-$sig.out")"
  kill -"$sig" "$runner"
  rc=0
  wait "$runner" || rc=$?
  [ "$rc" -ne 0 ] || fail "SIG$sig: the run exited 0"
  grep -q "stopped" "$tmp/run-$sig.out" || fail "SIG$sig: the run did not say it stopped: $(tail -3 "$tmp/run-$sig.out")"
  poll 5 no_contend_netns || fail "SIG$sig: namespaces left: $(ls /run/netns)"
  [ -z "$(ls "$CONTEND_STATE_DIR" 2>/dev/null)" ] || fail "SIG$sig: state files left: $(ls "$CONTEND_STATE_DIR")"
  echo "ok: SIG$sig ended the run as Ctrl-C does: nothing left, and it said it stopped (exit $rc)"
done
