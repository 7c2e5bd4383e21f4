#!/usr/bin/env bash
# contend run end to end, for real in namespaces: a tiny experiment's results directory and
# summary, with what the hypervisor took of the CPU during each cell, also with --keep-awake;
# results are never overwritten; --compare passes against itself and fails, with a table, against
# a reference with an injected regression; Ctrl-C stops cleanly, keeps finished cells and --resume
# completes the run; nothing is left behind.
source "$(dirname "$0")/lib.sh"
need_root
before=$(runner_namespaces)
# The tiny experiment (2 stages through one 300 Mbit/s link); run_cli_test.sh simulates the same.
cp "$(dirname "$0")"/../data/tiny/*.json "$tmp/"
mv "$tmp/experiment.json" "$tmp/exp.json"
"$contend" run "$tmp/exp.json" --out "$tmp/res" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "run: $(cat "$tmp/err.txt")"
grep -q "kfkb:k=2" "$tmp/out.txt" || fail "no table on stdout: $(cat "$tmp/out.txt")"
grep -q "results: $tmp/res" "$tmp/out.txt" || fail "no results path: $(cat "$tmp/out.txt")"
grep -q "report: $tmp/res/report/index.html" "$tmp/out.txt" || fail "no report: $(cat "$tmp/out.txt" "$tmp/res/report.log")"
for f in env.json summary.json summary.csv runs/two.1f1b.r1.jsonl runs/two.kfkb-k-2.r2.jsonl events/two.1f1b.r1.jsonl; do
  [ -s "$tmp/res/$f" ] || fail "missing $f"
done
python3 - "$tmp/res" <<'PY' || fail "summary"
import json, sys
d = sys.argv[1]
s = json.load(open(f"{d}/summary.json"))
assert s["schema"] == "contend.summary/1" and s["mode"] == "real", s
cells = {c["schedule"]: c for c in s["cells"]}
assert set(cells) == {"1f1b", "kfkb:k=2"}, cells
for c in cells.values():
    t = c["throughput"]
    assert c["scenario"] == "two" and c["repetitions"] == 2, c
    assert len(t["samples"]) == 2 and min(t["samples"]) <= t["median"] <= max(t["samples"]), t
    # 2 stages, 8 micro-batches of 4 sequences through a 300 Mbit/s link (0.956 x 300 Mbit/s of
    # goodput each way): 8 x 512 KiB take at least 0.117 s, so at most 32 / 0.117 = 273 samples/s.
    assert 20 < t["median"] < 273, t
assert cells["1f1b"]["speedup"]["median"] == 1.0
env = json.load(open(f"{d}/env.json"))
assert env["schema"] == "contend.env/1" and env["argv"][1] == "run" and "kernel" in env, env
events = [json.loads(l) for l in open(f"{d}/events/two.1f1b.r1.jsonl")]
assert events[0]["kind"] == "start", events[0]
lines = [json.loads(l) for l in open(f"{d}/runs/two.kfkb-k-2.r1.jsonl")]
assert {l["rank"] for l in lines} == {0, 1} and len(lines) == 8, lines
cells = [json.loads(l) for l in open(f"{d}/cells.jsonl")]
assert len(cells) == 4 and all(0 <= c["steal"] < 1 for c in cells), cells
PY
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left after the run: $(runner_namespaces)"

# --keep-awake: the same cell with the CPUs kept from idling runs and records its steal; it is
# refused with --simulate (no cell runs here).
sed 's/"repetitions": 2/"repetitions": 1/; s/"schedules": \[[^]]*\]/"schedules": ["1f1b"]/' "$tmp/exp.json" >"$tmp/one.json"
"$contend" run "$tmp/one.json" --out "$tmp/awake" --no-report --keep-awake >/dev/null 2>"$tmp/awake.err" ||
  fail "--keep-awake: $(cat "$tmp/awake.err")"
python3 -c 'import json,sys; (c,) = [json.loads(l) for l in open(sys.argv[1])]; assert 0 <= c["steal"] < 1, c' \
  "$tmp/awake/cells.jsonl" || fail "--keep-awake: no steal recorded"
if "$contend" run "$tmp/one.json" --simulate --keep-awake 2>"$tmp/err.txt"; then fail "--keep-awake with --simulate ran"; fi
grep -q "excludes" "$tmp/err.txt" || fail "unclear --keep-awake --simulate: $(cat "$tmp/err.txt")"
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left after --keep-awake: $(runner_namespaces)"

# Never overwritten.
cp "$tmp/res/summary.json" "$tmp/summary.before"
if "$contend" run "$tmp/exp.json" --out "$tmp/res" 2>"$tmp/err.txt"; then fail "a second run overwrote $tmp/res"; fi
grep -q "never overwritten" "$tmp/err.txt" || fail "unclear error: $(cat "$tmp/err.txt")"
cmp -s "$tmp/summary.before" "$tmp/res/summary.json" || fail "the summary changed"

# --compare (simulated, so deterministic): against the same matrix passes; against a reference
# where kFkB was 30% faster it fails with a table.
"$contend" run "$tmp/exp.json" --simulate --out "$tmp/sim" >/dev/null 2>&1 || fail "simulate"
"$contend" run "$tmp/exp.json" --simulate --out "$tmp/sim1" --compare "$tmp/sim/summary.json" --tolerance 1% 2>/dev/null \
  >"$tmp/cmp.txt" || fail "compare against itself: $(cat "$tmp/cmp.txt")"
grep -q "no regression" "$tmp/cmp.txt" || fail "compare said: $(cat "$tmp/cmp.txt")"
python3 - "$tmp/sim/summary.json" "$tmp/ref.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["cells"]:
    if c["schedule"] == "kfkb:k=2":
        c["throughput"]["samples"] = [v * 1.3 for v in c["throughput"]["samples"]]
        c["throughput"]["median"] *= 1.3
        c["speedup"]["median"] *= 1.3
json.dump(s, open(sys.argv[2], "w"))
PY
rc=0
"$contend" run "$tmp/exp.json" --simulate --out "$tmp/sim2" --compare "$tmp/ref.json" --tolerance 5% >"$tmp/cmp.txt" 2>/dev/null || rc=$?
[ $rc -eq 3 ] || fail "an injected regression exited $rc, expected 3: $(cat "$tmp/cmp.txt")"
grep -q "1 regression(s)" "$tmp/cmp.txt" && grep -q "kfkb:k=2 .*slower: slower by 23.1%" "$tmp/cmp.txt" ||
  fail "no regression table: $(cat "$tmp/cmp.txt")"

# Ctrl-C after the first cell: clean stop, finished cells kept, --resume completes.
sed 's/"repetitions": 2/"repetitions": 3/; s/"iterations": 3/"iterations": 6/' "$tmp/exp.json" >"$tmp/long.json"
"$contend" run "$tmp/long.json" --out "$tmp/stop" --no-report >/dev/null 2>"$tmp/stop.err" &
runner=$!
pids+=("$runner")
poll 30 test -s "$tmp/stop/cells.jsonl" || fail "no cell finished in 30 s: $(cat "$tmp/stop.err")"
kill -INT "$runner"
rc=0
wait "$runner" || rc=$?
[ $rc -eq 130 ] || fail "Ctrl-C exited $rc, expected 130: $(cat "$tmp/stop.err")"
grep -q "resume" "$tmp/stop.err" || fail "no hint to resume: $(cat "$tmp/stop.err")"
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left after Ctrl-C: $(runner_namespaces)"
! pgrep -f "contend worker.*$tmp/stop" >/dev/null || fail "workers left after Ctrl-C"
kept=$(wc -l <"$tmp/stop/cells.jsonl")
"$contend" run "$tmp/long.json" --resume "$tmp/stop" --no-report >/dev/null 2>"$tmp/resume.err" || fail "resume: $(cat "$tmp/resume.err")"
ran=$(grep -c '^\[' "$tmp/resume.err" || true)
[ "$ran" -eq $((6 - kept)) ] || fail "resume ran $ran cells, expected $((6 - kept)) (kept $kept)"
python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); assert all(c["repetitions"] == 3 for c in s["cells"]), s' \
  "$tmp/stop/summary.json" || fail "resumed summary incomplete"
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left: $(runner_namespaces)"
echo "runner: ok (kept $kept cells at Ctrl-C)"
