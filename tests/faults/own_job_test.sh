#!/usr/bin/env bash
# A user's own job (issue 25) that goes wrong: a bad template, an unknown placeholder, a missing
# workdir, a parser that matches no line, a rank that exits non-zero (the first to fail named), a
# job whose data takes the unshaped control bridge or a Unix socket around the links, a rank that hangs past the cell's timeout, a runner stopped with Ctrl-C or killed. Each is a clear
# error naming the rank and the cause, and within 5 s of it every process of the job is gone, and
# every namespace and hosts file too (after a SIGKILL of the runner, once `emu down` ran: nothing
# is left to remove them). The parse-time refusals need no root; the rest skips (77) without it.
# Runs in a mount namespace of its own with a private /run/netns.
# Usage: own_job_test.sh PATH/TO/contend
source "$(dirname "$0")/private_netns.sh"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"

# A marker no other process has: every process of the jobs below runs `sleep $marker...`.
marker=$((4000 + $$ % 1000))
# job FILE COMMAND_JSON [WORKLOAD_EXTRA]: a two-rank command experiment over a 200 Mbit/s link.
job() {
  two_nodes "$tmp/two.json" 200Mbit
  cat >"$1" <<JSON
{"schema": "contend.experiment/1", "name": "ownjob", "scenarios": ["two.json"], "repetitions": 1,
 "workload": {"command": $2${3:+, $3}}}
JSON
}

job "$tmp/e.json" '["sh", "-c", "echo {rank"]'
refused "an unclosed placeholder" "e\.json: /workload/command/2: \"echo \{rank\": a '\{' without its '\}'" \
  "$contend" run "$tmp/e.json" --no-report --out "$tmp/r0"
job "$tmp/e.json" '["sh", "-c", "echo {rnak}"]'
refused "an unknown placeholder" 'e\.json: /workload/command/2: .*unknown placeholder \{rnak\}; known placeholders: \{rank\}' \
  "$contend" run "$tmp/e.json" --no-report --out "$tmp/r0"
job "$tmp/e.json" '["true"]' '"output": {"parser": "regex", "pattern": "no group"}'
refused "a regex without a group" 'e\.json: /workload/output/pattern: ' "$contend" run "$tmp/e.json" --no-report --out "$tmp/r0"

need_root
job "$tmp/e.json" '["true"]' '"workdir": "no-such-folder"'
refused "a workdir that is not there" 'e\.json: /workload/workdir: .*/no-such-folder is not a folder here' \
  "$contend" run "$tmp/e.json" --no-report --out "$tmp/r0"
[ ! -e "$tmp/r0" ] || fail "a workdir that is not there: a results folder was made"
job_processes() { pids_running "sleep $marker"; }
# /etc/netns is the host's, not private: hosts files there before this test (another run's, or
# one whose runner was killed with its private /run/netns) are not this test's to count.
hosts_before=$(ls -d /etc/netns/contend-* 2>/dev/null || true)
hosts_files() { comm -13 <(echo "$hosts_before") <(ls -d /etc/netns/contend-* 2>/dev/null || true) | grep . || true; }
nothing_left() { [ -z "$(job_processes)" ] && [ -z "$(runner_namespaces)" ] && [ -z "$(hosts_files)" ]; }
left() { echo "processes: $(job_processes | tr '\n' ' ') namespaces: $(runner_namespaces | tr '\n' ' ') hosts: $(hosts_files)"; }

# fails_clearly WHAT PATTERN: running $tmp/e.json fails, its error matches PATTERN, and within 5 s
# of the run's end nothing of it is left.
fails_clearly() {
  rm -rf "$tmp/res"
  if "$contend" run "$tmp/e.json" --no-report --out "$tmp/res" >"$tmp/run.out" 2>&1; then
    fail "$1: the run succeeded: $(tail -5 "$tmp/run.out")"
  fi
  grep -qE -- "$2" "$tmp/run.out" || fail "$1: unclear error (wanted /$2/): $(tail -8 "$tmp/run.out")"
  poll 5 nothing_left || fail "$1: left 5 s after the run: $(left); the run ended: $(tail -4 "$tmp/run.out")"
  echo "ok: $1: $(grep -m1 -E -- "$2" "$tmp/run.out" | head -c 200)"
}

# Each rank starts a child that would outlive it and prints a line no parser reads as a step.
busy="sleep $marker & echo 'step 1 done'; sleep 0.5"
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy\"]" '"output": {"parser": "jsonl"}, "timeout": "20s"'
fails_clearly "a parser that matches no line" \
  'rank 0: the "jsonl" parser matched no line of .*ownjob.*rank0\.log|rank 0: the "jsonl" parser matched no line'

# Rank 1 fails while rank 0 waits for its child, as a collective waits for a dead peer.
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; [ {rank} = 1 ] && exit 3; wait\"]" '"timeout": "60s"'
fails_clearly "rank 1 exiting with 3" 'rank 1 exited with 3 \(the first to fail\); the log .*\.rank1\.log ends'

# Rank 0 prints, on stderr, the line a guard writes when its command fails, with a time long past;
# then rank 1 fails. The forgery is the job's output, not its guard's: rank 1 is named.
forged="echo 'contend job-rank: the command exited with 9 (code 9, at 1.000000 on the system clock)' >&2"
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; [ {rank} = 0 ] && $forged; [ {rank} = 1 ] && exit 3; wait\"]" '"timeout": "60s"'
fails_clearly "rank 0 forging its guard's failure line" 'rank 1 exited with 3 \(the first to fail\)'

# Rank 1 fails first, and its guard is slow to end (a child that ignores SIGTERM: 1.5 s to its
# SIGKILL); rank 0 fails 0.3 s after it (a file says when), as a peer of a dead rank does, and its
# guard ends first. The culprit is named by when each failed, not by whose guard ended first.
rm -f "$tmp/failed"
first="if [ {rank} = 1 ]; then (trap '' TERM; sleep $marker) & touch $tmp/failed; exit 5;"
first+=" else until [ -e $tmp/failed ]; do sleep 0.05; done; sleep 0.3; exit 1; fi"
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; $first\"]" '"timeout": "60s"'
fails_clearly "rank 1 failing first, its guard ending last" \
  'rank 1 exited with 5 \(the first to fail\); the log .*\.rank1\.log ends'

# Rank 1 signals its whole process group, as a launcher's `trap 'kill 0' EXIT` does: it ends its
# own tree and nothing else. Before each rank led a group of its own, the signal reached the runner
# and this script (which then died with 143).
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; [ {rank} = 1 ] && kill -TERM 0; wait\"]" '"timeout": "60s"'
fails_clearly "rank 1 signalling its process group (kill 0)" \
  'rank 1 (exited with 143|was killed by signal 15) \(the first to fail\)'

# Every rank starts a process that re-forks under a new PID every few ms, each copy in a session of
# its own (so a signal to the rank's process group misses it) starting the next, adding a line to
# a file and exiting; rank 1 fails. One look at the tree or at the namespace, then one signal,
# misses the copy forked in between; the guard and the teardown look again until none is left. A
# copy lives a few ms, too short for a look at /proc to find: the file stops growing when the last
# one is gone.
printf '#!/bin/sh\n[ -e %s/stop-hopping ] && exit\necho >>%s/hops\nsleep 0.002\nsetsid "$0" "$@" &\n' \
  "$tmp" "$tmp" >"$tmp/hop.sh"
chmod +x "$tmp/hop.sh"
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; $tmp/hop.sh & sleep 1; [ {rank} = 1 ] && exit 4; wait\"]" '"timeout": "60s"'
# Whatever outlived its cell ends itself: at the stop file, or when cleanup removes hop.sh with
# the test's folder (the next copy cannot start).
trap 'touch "$tmp/stop-hopping"; cleanup' EXIT
fails_clearly "a process that re-forks under new PIDs" 'rank 1 exited with 4 \(the first to fail\)'
hops=$(wc -l <"$tmp/hops")
sleep 1
[ "$(wc -l <"$tmp/hops")" = "$hops" ] || fail "a process that re-forks under new PIDs outlived its cell ($hops copies)"
echo "ok: no copy of it outlived the cell ($hops copies)"

# Rank 1 sends 4 MB to rank 0's address on the run's control bridge, which no link shapes (as a
# job that took a peer address from `hostname -I` would), and both print good steps: the cell is
# refused, not published at the speed of an unshaped path.
cat >"$tmp/bridge.sh" <<'SH'
if [ "$1" = 1 ]; then
  /usr/bin/python3 -c "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
for _ in range(70): s.sendto(b'x' * 60000, ('198.18.255.1', 9))"
fi
for i in 1 2 3 4; do echo '{"schema": "contend.step/1", "samples": 32, "seconds": 0.1}'; sleep 0.1; done
SH
job "$tmp/e.json" "[\"sh\", \"$tmp/bridge.sh\", \"{rank}\"]" '"timeout": "30s"'
fails_clearly "a job whose data went over the control bridge" \
  "the job's ranks sent [0-9.]+ ?[KMG]i?B over the run's control bridge .* which no link shapes"

# The ranks exchange 1 MiB a step over a Unix socket in a shared folder, as NCCL's SHM and P2P
# and Open MPI's shared memory reach a peer on the same machine: nothing
# crosses the link, and the cell is refused, not published at the speed of memory.
cat >"$tmp/unix.py" <<'PY'
import json, os, socket, sys, time
rank, path = int(sys.argv[1]), sys.argv[2]
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
if rank == 0:
    s.bind(path); s.listen(1); peer, _ = s.accept()
else:
    while True:  # until rank 0 listens (its socket file appears at bind, before listen)
        try: s.connect(path); break
        except OSError: s.close(); s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM); time.sleep(0.05)
    peer = s
t = time.monotonic()
for step in range(6):
    if rank == 1: peer.sendall(b"x" * (1 << 20))
    else:
        got = 0
        while got < 1 << 20: got += len(peer.recv((1 << 20) - got))
        time.sleep(0.1)  # its compute
        now = time.monotonic()
        print(json.dumps({"schema": "contend.step/1", "samples": 32, "seconds": now - t}), flush=True)
        t = now
PY
job "$tmp/e.json" "[\"/usr/bin/python3\", \"$tmp/unix.py\", \"{rank}\", \"$tmp/unix.sock\"]" '"timeout": "30s", "steps": 5'
fails_clearly "a job whose data went around the links through a Unix socket" \
  "the job's ranks sent [0-9.]+ ?[KMG]?i?B over the scenario's links for at least 6 steps, less than 64KiB a step"

job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; wait\"]" '"timeout": "3s"'
fails_clearly "a job that hangs past its timeout" \
  'the cell took longer than 3 s \(ranks 0, 1 still running\)'

# Ctrl-C and SIGKILL of the runner mid-cell: the job's processes go with it (a timeout far past the
# signal, so the signal ends the cell, not the timeout, however slow the machine).
job "$tmp/e.json" "[\"sh\", \"-c\", \"$busy; wait\"]" '"timeout": "120s"'
for signal in INT KILL; do
  rm -rf "$tmp/res"
  "$contend" run "$tmp/e.json" --no-report --out "$tmp/res" >"$tmp/run.out" 2>&1 &
  runner=$!
  pids+=("$runner")
  started() { [ "$(job_processes | wc -l)" -ge 2 ]; }
  poll 30 started || fail "the job did not start within 30 s: $(tail -5 "$tmp/run.out")"
  kill -"$signal" "$runner" || fail "the runner ended before SIG$signal: $(tail -5 "$tmp/run.out")"
  wait "$runner" 2>/dev/null || true
  if [ "$signal" = KILL ]; then
    gone() { [ -z "$(job_processes)" ]; }
    poll 5 gone || fail "SIGKILL: the job's processes outlived the runner by 5 s: $(job_processes)"
    "$contend" emu down --all >/dev/null 2>&1 || fail "contend emu down --all failed"
  fi
  poll 5 nothing_left || fail "SIG$signal: left 5 s after the runner ended: $(left)"
  echo "ok: SIG$signal of the runner mid-cell: the job's processes and namespaces are gone"
done
