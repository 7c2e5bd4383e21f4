#!/usr/bin/env bash
# `contend emu` input errors, no root needed: clear messages, non-zero exit, nothing created.
# Usage: emu_cli_test.sh PATH/TO/contend SOURCE_DIR
set -euo pipefail
contend=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export CONTEND_STATE_DIR="$tmp/state"
fail() { echo "FAIL: $*" >&2; exit 1; }
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  if "$contend" "$@" >"$tmp/out" 2>"$tmp/err"; then fail "accepted: $*"; fi
  grep -qF -- "$pattern" "$tmp/err" || fail "for '$*' expected '$pattern' in: $(cat "$tmp/err")"
}
"$contend" emu --help | grep -q 'status' || fail "emu --help lists no subcommands"
expect_error 'File does not exist' emu up "$tmp/none.json"
printf '{"schema": "contend.scenario/1", "name": "x", "duration": "1s", "nodes": ["a", "b"],
 "links": [{"name": "l", "from": "a", "to": "b", "rate": "fast"}]}' >"$tmp/bad.json"
expect_error "$tmp/bad.json: /links/0/rate: expected a rate like \"500Mbit\", got \"fast\"" emu up "$tmp/bad.json"
expect_error 'name the run' emu down
expect_error 'run name "has space"' emu down --run "has space"
expect_error 'is not up' emu status --run nosuchrun
# No recorded run here (namespaces of other runs on this host are listed as orphans).
"$contend" emu status >"$tmp/out" || fail "status with no runs"
"$contend" emu status --json | python3 -c '
import json, sys
runs = json.load(sys.stdin)
assert all("no state file" in r.get("problem", "") for r in runs), runs' || fail "status lists a recorded run"
[ -n "$(ls /run/netns 2>/dev/null | grep "^contend-")" ] || grep -q 'no runs are up' "$tmp/out" ||
  fail "status with no runs: $(cat "$tmp/out")"
# Every scenario in the library parses (status of a run that is not up reads and plans it).
for s in "$src"/emulator/scenarios/*.json; do
  "$contend" emu status "$s" --run libcheck --json >/dev/null || fail "library scenario $s"
done
[ ! -e /run/netns/contend-x.a ] || fail "a failed up created a namespace"
# predict: a fabric's flows without root, as JSON; a fabric too big for namespaces is refused to up.
printf '{"schema": "contend.scenario/1", "name": "big", "duration": "10s",
 "fabric": {"leaf-spine": {"leaves": 16, "hosts_per_leaf": 32, "spines": 4, "host_rate": "1Gbit"}},
 "timeline": [{"at": "1s", "flow": {"from": "h0", "to": "h511", "streams": 4}}]}' >"$tmp/big.json"
"$contend" emu predict "$tmp/big.json" --at 2s --json - | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["schema"] == "contend.fabric-prediction/1", d["schema"]
f, = d["flows"]
assert abs(f["rate_bps"] - 0.956e9) < 1e3, f  # the hosts NICs hold it
assert f["ports"][0] == "h0-leaf0@h0" and "h511-leaf15@leaf15" in f["ports"], f["ports"]' ||
  fail "emu predict --json"
"$contend" emu predict "$tmp/big.json" --at 0s | grep -q '^0 flows' || fail "emu predict before the flow starts"
expect_error 'expected a duration' emu predict "$tmp/big.json" --at soon
expect_error '512 hosts and 20 switches; one machine holds at most 250 hosts' emu up "$tmp/big.json" --run bigrun
[ ! -e /run/netns/contend-bigrun.h0 ] || fail "a refused up created a namespace"
echo "emu cli: all checks passed"
