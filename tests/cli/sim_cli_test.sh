#!/usr/bin/env bash
# `contend sim` and `contend --version` as scripts outside the project call them
# (docs/architecture.md#interfaces-kept-stable). Usage: sim_cli_test.sh PATH/TO/contend
set -euo pipefail
contend=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$contend" --version | grep -Eq '^contend [0-9]+\.[0-9]+\.[0-9]+' || fail "--version prints no version"
"$contend" --version | grep -q 'cuda=' || fail "--version does not list the optional parts"
# The commit it names is the source's (a build after a commit configures again), where that is a
# git checkout.
src=$(cd "$(dirname "$0")/../.." && pwd)
if head=$(git -C "$src" rev-parse HEAD 2>/dev/null); then
  built=$("$contend" --version | sed -n 's/.*(commit \([0-9a-f]*\)).*/\1/p')
  [ -n "$built" ] && [ "${head#"$built"}" != "$head" ] ||
    fail "--version names another commit than the source's $head (build again?): $("$contend" --version | head -1)"
fi
"$contend" --help | grep -q 'sim' || fail "--help does not list sim"
"$contend" sim --help | grep -q 'kfkb:k=N' || fail "sim --help does not list the schedules"

# JSON on stdout stays machine-readable; the table goes to stderr.
"$contend" sim --stages 4 --microbatches 16 --schedule 1f1b --schedule kfkb:k=2 --schedule gpipe \
  --fwd 10ms --bwd 20ms --activation 16MiB --bandwidth 1Gbit --latency 50us --json - 2>"$tmp/table" >"$tmp/out.json"
grep -q 'kfkb:k=2' "$tmp/table" || fail "no table on stderr"
python3 - "$tmp/out.json" <<'PY' || fail "sim JSON lacks the documented fields"
import json, sys
doc = json.load(open(sys.argv[1]))
assert doc["schema"] == "contend.sim/1", doc["schema"]
names = [r["schedule"] for r in doc["results"]]
assert names == ["1f1b", "kfkb:k=2", "gpipe"], names
for r in doc["results"]:
    for key in ("makespan_s", "throughput_mb_per_s", "bubble_fraction", "peak_inflight", "peak_memory_bytes"):
        assert key in r, key
    assert len(r["peak_inflight"]) == 4 and len(r["peak_memory_bytes"]) == 4
    assert r["makespan_s"] > 0 and 0 <= r["bubble_fraction"] < 1
assert doc["results"][0]["peak_inflight"] == [4, 3, 2, 1]
assert doc["results"][1]["throughput_mb_per_s"] > doc["results"][0]["throughput_mb_per_s"]
PY

# Files: one schedule keeps the name, several get the schedule inserted.
"$contend" sim -p 2 -m 4 -s 1f1b --fwd 1ms --csv "$tmp/one.csv" --chrome-trace "$tmp/one.json" >/dev/null
[ -s "$tmp/one.csv" ] && [ -s "$tmp/one.json" ] || fail "--csv/--chrome-trace wrote nothing"
"$contend" sim -p 2 -m 4 -s 1f1b -s kfkb:k=2 --fwd 1ms --csv "$tmp/many.csv" >/dev/null
[ -s "$tmp/many.1f1b.csv" ] && [ -s "$tmp/many.kfkb-k-2.csv" ] || fail "per-schedule CSV names: $(ls "$tmp")"

# A bandwidth trace file.
printf 'time_s,rate\n0,1Gbit\n0.5,100Mbit\n' >"$tmp/trace.csv"
"$contend" sim -p 4 -m 8 --fwd 10ms --activation 4MiB --bandwidth-trace "$tmp/trace.csv" >/dev/null \
  || fail "--bandwidth-trace failed"

# Bad input: non-zero exit, a message that quotes the input, and no file left behind.
expect_error() {  # expect_error PATTERN ARGS...
  local pattern=$1; shift
  if "$contend" "$@" >"$tmp/stdout" 2>"$tmp/stderr"; then fail "accepted: $*"; fi
  grep -q -- "$pattern" "$tmp/stderr" || fail "for '$*' expected '$pattern' in: $(cat "$tmp/stderr")"
}
expect_error 'expected a duration like "250ms", got "10"' sim -p 4 -m 8 --fwd 10
expect_error 'expected a rate like "500Mbit", got "fast"' sim -p 4 -m 8 --fwd 1ms --bandwidth fast
expect_error 'unknown schedule' sim -p 4 -m 8 --fwd 1ms -s zigzag --json "$tmp/never.json"
expect_error 'multiple of the number of ranks' sim -p 4 -m 6 --fwd 1ms -s interleaved:v=2
expect_error 'excludes' sim -p 4 -m 8 --fwd 1ms --bandwidth 1Gbit --bandwidth-trace "$tmp/trace.csv"
printf '0,1Gbit\n1,slow\n' >"$tmp/bad.csv"
expect_error 'bad.csv:2:3: expected a rate in the second column' sim -p 4 -m 8 --fwd 1ms --bandwidth-trace "$tmp/bad.csv"
[ ! -e "$tmp/never.json" ] || fail "a failed run wrote its JSON"
echo "cli: all checks passed"
