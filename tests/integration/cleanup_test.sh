#!/usr/bin/env bash
# Nothing of a run is left: after down, after SIGINT and SIGTERM to play, after a crash (SIGKILL)
# followed by down (by run name, or by scenario when the crash came before the state file); and a
# second up of a running run fails without touching it.
source "$(dirname "$0")/lib.sh"
need_root
two_nodes "$tmp/s.json" 100Mbit '[{"at": "1s", "link": "a-b", "rate": "50Mbit"}]' 30s
"$contend" emu up "$tmp/s.json" >/dev/null
if "$contend" emu up "$tmp/s.json" 2>"$tmp/err"; then fail "a second up succeeded"; fi
grep -q "is up already" "$tmp/err" || fail "second up said: $(cat "$tmp/err")"
[ "$(run_namespaces_now | wc -l)" -eq 3 ] || fail "the second up disturbed the first"
"$contend" emu status --run "$run" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "contend.emu-status/1"
assert [n["netns"] for n in d["nodes"]] == ["contend-'"$run"'.a", "contend-'"$run"'.b"], d["nodes"]
assert all(e["rate_bps"] == 1e8 for e in d["links"][0]["ends"]), d["links"]' || fail "status --json"
"$contend" emu down --run "$run" >/dev/null
no_leftovers

for sig in INT TERM; do
  rm -f "$tmp/e.jsonl"
  "$contend" emu play "$tmp/s.json" --log "$tmp/e.jsonl" --quiet &
  player=$!
  pids+=("$player")
  # Mid-play: the network is up, recorded and shaped, and the player's clock runs.
  wait_for_line "$tmp/e.jsonl" '"kind":"sample"'
  kill -"$sig" "$player"
  rc=0; wait "$player" || rc=$?
  [ "$rc" -eq $((128 + $(kill -l "$sig"))) ] || fail "play after SIG$sig exited $rc"
  no_leftovers
  grep -q '"stopped":true' "$tmp/e.jsonl" || fail "the log does not say the play stopped"
done

rm -f "$tmp/e.jsonl"
"$contend" emu play "$tmp/s.json" --log "$tmp/e.jsonl" --quiet &
player=$!
# Killed once the network is whole (its state is recorded before the namespaces are made, so a
# kill on the state file alone could land before the last one exists).
wait_for_line "$tmp/e.jsonl" '"kind":"start"'
test -e "$CONTEND_STATE_DIR/$run.json" || fail "play recorded no run state before it started"
kill -KILL "$player"; wait "$player" || true
[ -e "/run/netns/contend-$run.a" ] || fail "a killed play left nothing to clean up (test is wrong)"
"$contend" emu down --run "$run" | grep -q "removed 3 namespaces" || fail "down after a crash"
no_leftovers

# A run killed before it recorded its state: `down SCENARIO` removes what the scenario makes.
"$contend" emu up "$tmp/s.json" >/dev/null
rm "$CONTEND_STATE_DIR/$run.json"
"$contend" emu down "$tmp/s.json" | grep -q "removed 3 namespaces" || fail "down SCENARIO without a state file"
no_leftovers
