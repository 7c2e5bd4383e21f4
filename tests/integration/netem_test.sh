#!/usr/bin/env bash
# A scenario with delay or loss needs netem: where the kernel lacks it (as here), up fails before
# creating anything and names the missing qdisc; where it has it, the run comes up.
source "$(dirname "$0")/lib.sh"
need_root
cat >"$tmp/s.json" <<JSON
{"schema": "contend.scenario/1", "name": "$run", "duration": "5s", "nodes": ["a", "b"],
 "links": [{"name": "a-b", "from": "a", "to": "b", "rate": "100Mbit", "delay": "5ms", "loss": "0.1%"}]}
JSON
if "$contend" emu up "$tmp/s.json" >/dev/null 2>"$tmp/err"; then
  echo "this kernel has netem: the run came up"
  "$contend" emu down --run "$run" >/dev/null
else
  grep -q "sch_netem" "$tmp/err" || fail "the error does not name sch_netem: $(cat "$tmp/err")"
  echo "as expected here: $(cat "$tmp/err")"
fi
no_leftovers
