#!/usr/bin/env bash
# The emulator under hostile input and faults (issue 16, findings 1, 2, 4, 5, 7, 8 and 9): every
# scenario or flow-job bomb and absurd value is refused when the file is read, within 2 s and
# 200 MB, naming the file, the JSON pointer and the limit; then, as root, what runs leave behind
# is found and removed. Parse-time checks need no root; the rest skips (77) without it.
# Usage: emulator_test.sh PATH/TO/contend
# As root it runs in a mount namespace of its own with a private /run/netns: `contend emu down
# --all` removes every contend namespace it can see, and must see only this test's.
source "$(dirname "$0")/private_netns.sh"
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"
src=$(cd "$(dirname "$0")/../.." && pwd)  # scripts/netns-rsh

# scenario FILE LINK_EXTRA TIMELINE: a two-node scenario named $run, one 1 Gbit/s link with
# LINK_EXTRA (JSON members, may be empty) and TIMELINE, 1 h long.
scenario() {  # scenario FILE LINK_EXTRA TIMELINE (LINK_EXTRA's own rate replaces 1 Gbit/s)
  local rate=', "rate": "1Gbit"'
  case "$2" in *'"rate":'*) rate="" ;; esac
  cat >"$1" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "1h", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b"$rate$2}],
 "timeline": $3}
JSON
}
# parse_refused WHAT PATTERN LINK_EXTRA TIMELINE: reading such a scenario is refused.
parse_refused() {
  scenario "$tmp/s.json" "$3" "$4"
  refused "$1" "$2" "$contend" emu status "$tmp/s.json" --run fault
}
flow() { echo "[{\"at\": \"1s\", \"flow\": {\"from\": \"a\", \"to\": \"b\", $1}}]"; }

# Finding 1: a message that would be allocated whole, or one that sends nothing.
parse_refused "a 100GiB flow message" 's\.json: /timeline/0/flow/message_size: expected 1B to 64MiB' "" \
  "$(flow '"message_size": "100GiB"')"
parse_refused "an empty flow message" '/timeline/0/flow/message_size: expected 1B to 64MiB' "" \
  "$(flow '"message_size": "0B"')"
# The same in a flow job against a recorded run (a state file is all `contend flows` reads first).
scenario "$tmp/up.json" "" "[]"
mkdir -p "$CONTEND_STATE_DIR"
printf '{"schema": "contend.emu-state/1", "run": "%s", "scenario": "%s", "namespaces": []}\n' "$run" "$tmp/up.json" \
  >"$CONTEND_STATE_DIR/$run.json"
printf '{"schema": "contend.flow-job/1", "duration": "10s", "flows": [{"from": "a", "to": "b", "message_size": "100GiB"}]}' \
  >"$tmp/job.json"
refused "a 100GiB message in a flow job" 'job\.json: /flows/0/message_size: expected 1B to 64MiB' \
  "$contend" flows "$tmp/job.json" --run "$run"
rm "$CONTEND_STATE_DIR/$run.json"

# Finding 5: patterns and traces that grow to gigabytes are refused while the scenario is read.
parse_refused "a periodic pattern with a 2 us period over 1 h" '/timeline/0/periodic/period: expected at least 1ms' "" \
  '[{"at": "0s", "link": "a-b", "periodic": {"period": "2us", "on": "1us", "rate": "1Mbit"}}]'
parse_refused "a periodic pattern of 360000 episodes" '/timeline/0/periodic: expands to more than 250000 events' "" \
  '[{"at": "0s", "link": "a-b", "periodic": {"period": "10ms", "on": "5ms", "rate": "1Mbit"}}]'
parse_refused "a random pattern with a 1 ns mean gap" '/timeline/0/random/mean_gap: expected at least 1ms' "" \
  '[{"at": "0s", "link": "a-b", "random": {"mean_gap": "1ns", "duration": "1ms", "rate": "1Mbit"}}]'
parse_refused "a random pattern of 1.8 million episodes" '/timeline/0/random: expands to more than 250000 events' "" \
  '[{"at": "0s", "link": "a-b", "random": {"mean_gap": "1ms", "duration": "1ms", "rate": "1Mbit"}}]'
parse_refused "a loop every 1 us" '/timeline/0/loop/every: expected at least 1ms' "" \
  '[{"at": "0s", "loop": {"every": "1us", "timeline": [{"at": "0s", "link": "a-b", "rate": "1Mbit"}]}}]'
parse_refused "an empty loop every 1 ms for 1 h" '/timeline/0/loop: expands to more than 250000 events' "" \
  '[{"at": "0s", "loop": {"every": "1ms", "timeline": []}}]'
parse_refused "nested loops" 'expands to more than 250000 events' "" \
  '[{"at": "0s", "loop": {"every": "1s", "timeline": [{"at": "0s", "loop": {"every": "5ms", "until": "1h", "timeline": []}}]}}]'
parse_refused "a trace file /dev/zero" '/timeline/0/trace/file: /dev/zero: a device, not a file' "" \
  '[{"at": "0s", "link": "a-b", "trace": {"file": "/dev/zero"}}]'
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    f.write("time_s,rate\n")
    i = 0
    while f.tell() < 60 << 20:
        f.write("".join("%d.%06d,1Mbit\n" % divmod(j, 1000000) for j in range(i, i + 100000)))
        i += 100000' "$tmp/tiny.csv"
parse_refused "a 60 MiB trace of 1 us intervals" 'tiny\.csv:1000002:1: more than 1000000 points' "" \
  "[{\"at\": \"0s\", \"link\": \"a-b\", \"trace\": {\"file\": \"$tmp/tiny.csv\"}}]"
python3 -c '
import sys
with open(sys.argv[1], "w") as f:
    ms = 1
    while f.tell() < 60 << 20:
        f.write("".join("%d\n" % m * (1 + m % 2) for m in range(ms, ms + 100000)))
        ms += 100000' "$tmp/dense.mm"
scenario "$tmp/s.json" "" "[{\"at\": \"0s\", \"link\": \"a-b\", \"trace\": {\"file\": \"$tmp/dense.mm\", \"format\": \"mahimahi\", \"bin\": \"1ms\"}}]"
refused "a 60 MiB Mahimahi trace in 1 ms bins" 'dense\.mm:[0-9]+: at 1000000 ms the trace spans more than 1000000 bins' \
  "$contend" emu status "$tmp/s.json" --run fault
rm -f "$tmp/tiny.csv" "$tmp/dense.mm"
python3 -c '
import sys
e = ",".join("{\"at\": \"1s\", \"link\": \"a-b\", \"rate\": \"1Mbit\"}" for _ in range(120000))
open(sys.argv[1], "w").write("{\"schema\": \"contend.scenario/1\", \"name\": \"big\", \"duration\": \"1h\", \"nodes\": [\"a\", \"b\"], \"links\": [{\"name\": \"a-b\", \"from\": \"a\", \"to\": \"b\", \"rate\": \"1Gbit\"}], \"timeline\": [" + e + "]}")' "$tmp/big.json"
refused "a 5 MiB scenario file" 'big\.json: more than 4MiB, the most a scenario file may hold' \
  "$contend" emu status "$tmp/big.json" --run fault
printf '{"schema": "contend.flow-job/1", "duration": "1h", "flows": [{"from": "a", "to": "b", "on": "1ms", "off": "1ms"}]}' \
  >"$tmp/job.json"
mkdir -p "$CONTEND_STATE_DIR"
printf '{"schema": "contend.emu-state/1", "run": "%s", "scenario": "%s", "namespaces": []}\n' "$run" "$tmp/up.json" \
  >"$CONTEND_STATE_DIR/$run.json"
refused "a flow job switching every 1 ms for 1 h" 'job\.json: /flows/0: expands to more than 250000 events' \
  "$contend" flows "$tmp/job.json" --run "$run"
rm "$CONTEND_STATE_DIR/$run.json"

# Finding 7: rates no discipline can install (HTB stored 1e30Gbit as rate 0; 1bit failed in
# rtnl_class_add naming nothing) are refused with the range.
parse_refused "a link rate of 1e30Gbit" 's\.json: /links/0/rate: htb installs 16kbit to 4Tbit on this link.*got' \
  ', "rate": "1e30Gbit"' '[]'
parse_refused "a link rate of 1bit" '/links/0/rate: htb installs 16kbit to 4Tbit on this link.*got 1bit' \
  ', "rate": "1bit"' '[]'
parse_refused "a timeline rate of 1bit" '/timeline/0/rate: link "a-b": htb installs 16kbit' "" \
  '[{"at": "1s", "link": "a-b", "rate": "1bit"}]'
parse_refused "a split link whose small class would be under 8kbit" '/links/0/rate: htb installs 800kbit' \
  ', "rate": "100kbit", "preemption": "split", "workload_share": 0.99' '[]'
parse_refused "a tbf link at 20Gbit" '/links/0/rate: tbf installs 8kbit to 17Gbit' ', "rate": "20Gbit", "qdisc": "tbf"' '[]'
parse_refused "a flow paced at 1e30Gbit" '/timeline/0/flow/rate: .*from 8kbit to 4Tbit' "" "$(flow '"rate": "1e30Gbit"')"
scenario "$tmp/s.json" "" "[]"
refused "emu host --default-rate 1bit" 'default-rate: expected 8kbit to 4Tbit' \
  "$contend" emu host "$tmp/s.json" --node a --iface lo --default-rate 1bit

# Finding 8: a trace that is no trace (a scenario naming /etc/shadow) is refused saying where and
# what was expected, quoting none of it; an event log is never written over a file or a link.
printf 'root:$y$j9T$SECRETHASH:19000:0:99999:7:::\n' >"$tmp/shadow"
for format in csv mahimahi; do
  parse_refused "a $format trace that is a password file" "/timeline/0/trace/file: $tmp/shadow:1:[0-9]+: expected" "" \
    "[{\"at\": \"0s\", \"link\": \"a-b\", \"trace\": {\"file\": \"$tmp/shadow\", \"format\": \"$format\"}}]"
  ! grep -qE 'root|SECRET|19000' "$tmp/refused.err" || fail "the $format trace error quotes the file: $(cat "$tmp/refused.err")"
done
if [ -r /etc/shadow ]; then
  parse_refused "/etc/shadow as a trace" '/etc/shadow:1:[0-9]+: expected' "" \
    '[{"at": "0s", "link": "a-b", "trace": {"file": "/etc/shadow"}}]'
  ! grep -q "$(head -c 4 /etc/shadow)" "$tmp/refused.err" || fail "the error quotes /etc/shadow"
fi
scenario "$tmp/s.json" "" "[]"
echo kept >"$tmp/exists.jsonl"
refused "an event log that exists" "event log $tmp/exists.jsonl exists already \\(a file\\)" \
  "$contend" emu play "$tmp/s.json" --log "$tmp/exists.jsonl" --quiet
[ "$(cat "$tmp/exists.jsonl")" = kept ] || fail "the existing event log was written"
ln -s "$tmp/target.jsonl" "$tmp/link.jsonl"
refused "an event log that is a link" 'exists already \(a link\)' \
  "$contend" emu play "$tmp/s.json" --log "$tmp/link.jsonl" --quiet
[ ! -e "$tmp/target.jsonl" ] || fail "the event log was written through a link"
[ -z "$(run_namespaces_now)" ] || fail "a play refused for its log built its network"

# ---- As root: the runs themselves ----
[ "$(id -u)" -eq 0 ] || skip "the rest needs root (network namespaces); the parse-time checks passed"

# Finding 4: run $run with node bar-n0 and run $run-bar with node n0 (each with a node called sw)
# are up side by side; taking the first down leaves the second whole.
for r in "$run:bar-n0" "$run-bar:n0"; do
  cat >"$tmp/${r%%:*}.json" <<JSON
{"schema": "contend.scenario/1", "name": "${r%%:*}", "duration": "10s", "nodes": ["${r#*:}", "sw"],
 "links": [{"name": "l", "from": "${r#*:}", "to": "sw", "rate": "100Mbit"}]}
JSON
done
"$contend" emu up "$tmp/$run-bar.json" >"$tmp/out" 2>&1 || fail "up of a run with a node called sw: $(cat "$tmp/out")"
"$contend" emu up "$tmp/$run.json" >"$tmp/out" 2>&1 || fail "up of $run next to $run-bar: $(cat "$tmp/out")"
"$contend" emu down --run "$run" >/dev/null
for ns in "contend-$run-bar.n0" "contend-$run-bar.sw" "contend-$run-bar"; do
  [ -e "/run/netns/$ns" ] || fail "down of run $run removed $ns of run $run-bar"
done
no_leftovers
"$contend" emu down --run "$run-bar" >/dev/null
[ ! -e "/run/netns/contend-$run-bar" ] || fail "down of $run-bar left its switch"
echo "ok: runs $run and $run-bar (nodes bar-n0, n0 and sw) do not touch each other"

# gone PID: the process has ended (a zombie waiting for this shell to reap it counts).
gone() { [ ! -e "/proc/$1" ] || grep -q '^State:[[:space:]]*Z' "/proc/$1/status"; }
status_json() { "$contend" emu status --json >"$tmp/status.json" || fail "emu status failed"; }
# has_run RUN PYTHON_CONDITION: `emu status --json` lists RUN and the condition holds for its entry d.
has_run() {
  python3 - "$tmp/status.json" "$1" "$2" <<'PY' || fail "emu status: no entry for run $1 with $3: $(head -c 1500 "$tmp/status.json")"
import json, sys
runs = {d["run"]: d for d in json.load(open(sys.argv[1]))}
d = runs[sys.argv[2]]
assert eval("(" + sys.argv[3] + ")"), d
PY
}

# Finding 2: what a run killed before it recorded itself left (namespaces, a process inside one
# that ignores SIGTERM), a run whose scenario was deleted and one whose state file is damaged
# (finding 9) are all listed by `emu status`; `emu down --run` removes the damaged one; `emu down
# --all` removes the rest, processes included.
ip netns add "contend-$run.a"
ip netns add "contend-$run"
ip netns exec "contend-$run.a" bash -c 'trap "" TERM; exec sleep 300' &
orphan=$!
pids+=("$orphan")
scenario "$tmp/gone.json" "" "[]"
"$contend" emu up "$tmp/gone.json" --run "$run-gone" >/dev/null
rm "$tmp/gone.json"
"$contend" emu up "$tmp/up.json" --run "$run-dmg" >/dev/null
echo '{"schema": "contend.emu-state/1", "run": ' >"$CONTEND_STATE_DIR/$run-dmg.json"
poll 5 test -n "$("$contend" emu status --json | grep "\"pid\": $orphan")" || fail "emu status does not list PID $orphan"
status_json
has_run "$run" "'no state file' in d['problem'] and {p['pid'] for p in d['processes']} == {$orphan} and
  {n['netns'] for n in d['namespaces']} == {'contend-$run.a', 'contend-$run'}" "the orphan and its process"
has_run "$run-gone" "'cannot be read' in d['problem'] and len(d['namespaces']) == 3" "a deleted scenario"
has_run "$run-dmg" "'damaged' in d['problem'] and len(d['namespaces']) == 3" "a damaged state"
"$contend" emu status | grep -q "process $orphan in contend-$run.a" || fail "emu status (text) does not show the orphan"
"$contend" emu down --run "$run-dmg" >"$tmp/out" 2>&1 || fail "down of a run with a damaged state: $(cat "$tmp/out")"
grep -q "removed 3 namespaces" "$tmp/out" || fail "down of the damaged run said: $(cat "$tmp/out")"
[ ! -e "$CONTEND_STATE_DIR/$run-dmg.json" ] || fail "the damaged state file is still there"
# Another state folder's `down --all` leaves this folder's runs alone (another user's cleanup).
CONTEND_STATE_DIR="$tmp/other-state" "$contend" emu down --all >"$tmp/out" 2>&1 || fail "down --all elsewhere: $(cat "$tmp/out")"
[ -e "/run/netns/contend-$run-gone.a" ] || fail "another state folder's down --all removed this folder's run: $(cat "$tmp/out")"
grep -q "contend-$run-gone.a" "$tmp/out" || fail "another state folder's down --all did not name what it left: $(cat "$tmp/out")"
# This folder's `down --all` removes its runs and names the orphan, which only --orphans removes.
"$contend" emu down --all >"$tmp/out" 2>&1 || fail "down --all: $(cat "$tmp/out")"
[ ! -e "/run/netns/contend-$run-gone.a" ] || fail "down --all left a recorded run: $(ls /run/netns)"
grep -q "left 2 contend namespaces.*contend-$run.a" "$tmp/out" || fail "down --all did not name the orphans: $(cat "$tmp/out")"
gone "$orphan" && fail "down --all ended the orphan's process without --orphans"
"$contend" emu down --all --orphans >"$tmp/out" 2>&1 || fail "down --all --orphans: $(cat "$tmp/out")"
poll 5 gone "$orphan" || fail "down --all --orphans left process $orphan (it ignores SIGTERM) running"
[ -z "$(ls /run/netns)" ] || fail "down --all left namespaces: $(ls /run/netns)"
[ -z "$(ls "$CONTEND_STATE_DIR")" ] || fail "down --all left state files: $(ls "$CONTEND_STATE_DIR")"
"$contend" emu status | grep -q "no runs are up" || fail "emu status after down --all: $("$contend" emu status)"
echo "ok: orphans, a deleted scenario and a damaged state are listed; down --run and down --all remove them"

# Finding 2: a run killed while `up` builds its 250 nodes recorded its intent first, so `emu
# status` lists it and `emu down --run` removes every namespace it made.
python3 - "$tmp/big.json" "$run-big" <<'PY'
import json, sys
nodes = ["n%d" % i for i in range(250)]
links = [{"name": "l%d" % i, "from": nodes[i], "to": nodes[i + 1], "rate": "1Gbit"} for i in range(249)]
json.dump({"schema": "contend.scenario/1", "name": sys.argv[2], "duration": "10s", "nodes": nodes, "links": links},
          open(sys.argv[1], "w"))
PY
"$contend" emu up "$tmp/big.json" >/dev/null 2>&1 &
up=$!
# Killed once the state is there and the first namespaces are (or the up ended: the test fails).
until { [ -e "$CONTEND_STATE_DIR/$run-big.json" ] && [ -e "/run/netns/contend-$run-big.n5" ]; } || gone "$up"; do :; done
kill -KILL "$up" 2>/dev/null || true
wait "$up" 2>/dev/null || true
made=$(ls /run/netns | grep -c "^contend-$run-big" || true)
[ -e "$CONTEND_STATE_DIR/$run-big.json" ] || fail "up recorded no state before it was killed"
[ "$made" -lt 251 ] || fail "the state was written only once the network was built (251 namespaces; killed too late?)"
status_json
has_run "$run-big" "len(d['nodes']) == 250" "the killed up"
"$contend" emu down --run "$run-big" >/dev/null || fail "down of the killed up"
[ -z "$(ls /run/netns)" ] || fail "down of the killed up left: $(ls /run/netns | head)"
echo "ok: an up killed after $made of 251 namespaces is listed and removed"

# Issue 27, finding 7: a planted state file names a namespace contend never made and a path out of
# /run/netns; teardown leaves both alone (and the process inside the namespace running), says so.
ip netns add "probe-victim$$"
ip netns exec "probe-victim$$" sleep 300 &
victim=$!
pids+=("$victim")
touch "$tmp/victim-file"
printf '{"schema": "contend.emu-state/1", "run": "%s", "scenario": "%s", "namespaces": ["probe-victim%s", "../..%s"]}' \
  "$run-plant" "$tmp/up.json" "$$" "$tmp/victim-file" >"$CONTEND_STATE_DIR/$run-plant.json"
for down in "--run $run-plant" "--all"; do
  "$contend" emu down $down >"$tmp/out" 2>&1 || fail "down $down of the planted run: $(cat "$tmp/out")"
  [ -e "/run/netns/probe-victim$$" ] || fail "down $down removed a namespace contend never made"
  [ -e "$tmp/victim-file" ] || fail "down $down unlinked a file outside the state folder"
  kill -0 "$victim" 2>/dev/null || fail "down $down ended a process of a namespace contend never made"
  [ "$down" = --all ] || grep -q 'listed namespace "probe-victim'"$$"'", which run .* could not have made' "$tmp/out" ||
    fail "down $down did not say what it left alone: $(cat "$tmp/out")"
  printf '{"schema": "contend.emu-state/1", "run": "%s", "scenario": "%s", "namespaces": ["probe-victim%s"]}' \
    "$run-plant" "$tmp/up.json" "$$" >"$CONTEND_STATE_DIR/$run-plant.json"
done
rm -f "$CONTEND_STATE_DIR/$run-plant.json"
kill "$victim" 2>/dev/null || true
wait "$victim" 2>/dev/null || true
ip netns del "probe-victim$$"
echo "ok: a planted state file's foreign namespace, its process and a path out of /run/netns are left alone"

# Issue 27, findings 1, 2 and 12: a network that is no longer the scenario's ends the play, named.
cat >"$tmp/pv.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run-pv", "duration": "4s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "200Mbit"}],
 "timeline": [{"at": "3s", "link": "a-b", "rate": "50Mbit"}]}
JSON
# The HTB root deleted on one end mid-play.
"$contend" emu play "$tmp/pv.json" --log "$tmp/pv1.jsonl" >"$tmp/pv1.out" 2>&1 &
play=$!
# Its start line comes once the network is whole and shaped (the namespaces come first).
poll 10 grep -q '"kind":"start"' "$tmp/pv1.jsonl" || fail "the play did not bring its network up"
ip netns exec "contend-$run-pv.a" tc qdisc del dev c0-b root || fail "could not delete the shaping to test"
wait "$play" && fail "a play went on without its shaping"
grep -q "link a-b: its shaping on node a .* is gone" "$tmp/pv1.out" || fail "the play did not name the deleted shaping: $(cat "$tmp/pv1.out")"
tail -1 "$tmp/pv1.jsonl" | grep -q '"kind":"failed"' || fail "the events log does not end with the failure"
echo "ok: shaping deleted mid-play: the play failed naming the link and node"
# A player stopped past its next event.
"$contend" emu play "$tmp/pv.json" --log "$tmp/pv2.jsonl" >"$tmp/pv2.out" 2>&1 &
play=$!
started() { grep -q '"kind":"start"' "$tmp/pv2.jsonl" 2>/dev/null; }
poll 10 started || fail "the second play did not start"
sleep 1
kill -STOP "$play"
sleep 4
kill -CONT "$play"
wait "$play" && fail "a play stopped past its event went on"
grep -q "late, more than the 500ms a play allows" "$tmp/pv2.out" || fail "the late event was not named: $(cat "$tmp/pv2.out")"
echo "ok: a player stopped for 4 s past its event failed, naming the lateness"
# A second play on a kept network starts from the scenario's base rates, as its start line says.
cat >"$tmp/pk.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run-pk", "duration": "1s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "200Mbit"}],
 "timeline": [{"at": "500ms", "link": "a-b", "rate": "50Mbit"}]}
JSON
"$contend" emu play "$tmp/pk.json" --keep --log "$tmp/pk1.jsonl" >/dev/null 2>&1 || fail "the first kept play"
rate_now() { ip netns exec "contend-$run-pk.a" tc class show dev c0-b | grep -o 'root rate [0-9]*[KMG]bit' | cut -d' ' -f2-; }
[ "$(rate_now)" = "rate 50Mbit" ] || fail "the kept network is at $(rate_now) after the first play, not 50Mbit"
sed -i 's/"at": "500ms"/"at": "900ms"/' "$tmp/pk.json"
"$contend" emu play "$tmp/pk.json" --keep --log "$tmp/pk2.jsonl" >/dev/null 2>&1 &
play=$!
# The start line is written once the base rates are back, 900 ms before the event.
poll 10 grep -q '"kind":"start"' "$tmp/pk2.jsonl" || fail "the second play did not start"
[ "$(rate_now)" = "rate 200Mbit" ] || fail "the second play's start says 200Mbit, the link is at $(rate_now)"
wait "$play" || fail "the second kept play failed"
"$contend" emu down --run "$run-pk" >/dev/null
echo "ok: a play on a kept network starts from its base rates"

# Two runs up with the same addresses: scripts/netns-rsh, called from a node of one (as mpirun in
# rank 0's namespace calls it), enters that run's node of the address, never the other run's.
two_nodes "$tmp/rsh.json" 100Mbit
for r in rsha rshb; do "$contend" emu up "$tmp/rsh.json" --run "$run$r" >/dev/null || fail "up of $run$r"; done
for r in rsha rshb; do
  got=$(ip netns exec "contend-$run$r.a" "$src/scripts/netns-rsh" 198.18.0.2 'ip netns identify $$')
  [ "$got" = "contend-$run$r.b" ] || fail "netns-rsh from run $run$r's node a entered $got, not contend-$run$r.b"
done
for r in rsha rshb; do "$contend" emu down --run "$run$r" >/dev/null; done
echo "ok: netns-rsh stays in the run it is called from"

echo "emulator faults: all checks passed"
