#!/usr/bin/env bash
# contend run --simulate and contend report, without root: bad experiment files fail precisely and
# create nothing; a simulated matrix gives a summary in the documented shape; results are never
# overwritten; a simulated run says how far to trust it (the fidelity suite's nearest cell); the
# report draws every figure the data allows, says which it could not, and its index references
# every figure; a recorded real run (tests/data/recorded-run) draws them all but its traffic (it
# predates link_bytes; tests/integration/own_job_test.sh draws one).
# Usage: run_cli_test.sh CONTEND SOURCE_DIR
set -euo pipefail
contend=$1
src=$2
tmp=$(mktemp -d /tmp/contend-run-cli-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

expect_error() {  # expect_error FILE_CONTENT TEXT...
  echo "$1" >"$tmp/bad.json"
  shift
  if "$contend" run "$tmp/bad.json" --simulate --out "$tmp/bad-out" >/dev/null 2>"$tmp/err.txt"; then
    fail "accepted a bad experiment: $(cat "$tmp/bad.json")"
  fi
  for t in "$@"; do grep -qF -- "$t" "$tmp/err.txt" || fail "error lacks '$t': $(cat "$tmp/err.txt")"; done
  [ ! -e "$tmp/bad-out" ] || fail "a failed run created $tmp/bad-out"
}
cp "$src"/emulator/scenarios/steady.json "$tmp/steady.json"
expect_error '{"schema": "contend.experiment/1", "name": "x"' "bad.json" "parse"
expect_error '{"schema": "contend.experiment/2", "name": "x"}' "/schema" "contend.experiment/1"
expect_error '{"schema": "contend.experiment/1", "name": "x", "scenarios": ["steady.json"], "schedules": ["1f1b"]}' \
  "workload"
expect_error '{"schema": "contend.experiment/1", "name": "x", "scenarios": ["steady.json"], "workload": {"stages": 4},
  "schedules": ["1f1b", "kfkb:k=two"]}' "/schedules/1"
expect_error '{"schema": "contend.experiment/1", "name": "x", "scenarios": ["steady.json"],
  "workload": {"activation": "big"}, "schedules": ["1f1b"]}' "/workload/activation" "big"
# cuda stages cannot be timed without their GPU; cpu stages are profiled here and simulated.
expect_error '{"schema": "contend.experiment/1", "name": "x", "scenarios": ["steady.json"],
  "workload": {"backend": "cuda"}, "schedules": ["1f1b"]}' "cannot time cuda stages"
echo '{"schema": "contend.experiment/1", "name": "cpu", "scenarios": ["steady.json"], "repetitions": 1,
  "workload": {"backend": "cpu", "hidden": 64, "layers": 8, "iterations": 2, "warmup": 0}, "schedules": ["1f1b"]}' \
  >"$tmp/cpu.json"
"$contend" run "$tmp/cpu.json" --simulate --no-report --out "$tmp/cpu-out" >/dev/null 2>"$tmp/err.txt" ||
  fail "simulating a cpu workload: $(cat "$tmp/err.txt")"
grep -q "simulating the cpu model with stage times profiled here: fwd [0-9.]*[mun]*s, bwd [0-9.]*[mun]*s, 16KiB a tensor" "$tmp/err.txt" ||
  fail "no profiled stage times: $(cat "$tmp/err.txt")"
# A bare 1 is refused (1% or 100%?), as are NaN and words.
for tolerance in lots nan 1; do
  if "$contend" run "$src/experiments/quickstart.json" --simulate --tolerance $tolerance 2>"$tmp/err.txt"; then
    fail "accepted --tolerance $tolerance"
  fi
  grep -q "tolerance" "$tmp/err.txt" || fail "unclear --tolerance error: $(cat "$tmp/err.txt")"
done
grep -q '"1" would be 100%: write "1%"' "$tmp/err.txt" || fail "--tolerance 1 not explained: $(cat "$tmp/err.txt")"
"$contend" run --help | grep -q -- "--simulate" || fail "run --help"
"$contend" report --help | grep -q -- "--out" || fail "report --help"

# --simulate says how far to trust its table: per cell, the fidelity suite's nearest measured cell
# (for one of the suite's own cells, that cell) and its simulated / real under the calibration used.
"$contend" run "$src/experiments/suites/fidelity/fidelity-two.json" --simulate --no-report --out "$tmp/fid" >"$tmp/fid.txt" 2>&1 ||
  fail "simulating the fidelity suite's two-stage experiment: $(cat "$tmp/fid.txt")"
grep -q "how far to trust it: simulated / real of the nearest cell measured in the fidelity suite (ideal; " \
  "$tmp/fid.txt" || fail "no fidelity note: $(cat "$tmp/fid.txt")"
grep -Eq "two-5Gbit +kfkb:k=4 +[01]\.[0-9]{3} +nearest: fidelity-two.json two-5Gbit / kfkb:k=4 \(2 stages" \
  "$tmp/fid.txt" || fail "the note's line for a suite cell: $(cat "$tmp/fid.txt")"
CONTEND_FIDELITY=$tmp/none.json "$contend" run "$src/experiments/suites/fidelity/fidelity-two.json" --simulate --no-report \
  --out "$tmp/fid-none" >"$tmp/fid.txt" 2>&1 || fail "simulating without fidelity measurements"
grep -q "how far to trust it: unknown (no fidelity measurements: .*none.json" "$tmp/fid.txt" ||
  fail "no measurements, not said: $(cat "$tmp/fid.txt")"

# The tiny experiment of tests/integration/runner_test.sh (which runs it for real), simulated.
"$contend" run "$src/tests/data/tiny/experiment.json" --simulate --no-report --out "$tmp/tiny" >/dev/null 2>&1 ||
  fail "simulated tiny experiment"
python3 - "$tmp/tiny/summary.json" <<'PY' || fail "tiny summary"
import json, sys
s = json.load(open(sys.argv[1]))
cells = {c["schedule"]: c for c in s["cells"]}
assert set(cells) == {"1f1b", "kfkb:k=2"} and all(c["repetitions"] == 2 for c in cells.values()), cells
# 8 x 512 KiB each way at 0.956 x 300 Mbit/s bound an iteration to 0.117 s: at most 273 samples/s.
assert all(20 < c["throughput"]["median"] < 273 for c in cells.values()), cells
PY

# The quickstart, simulated: the summary's documented shape, then a report.
"$contend" run "$src/experiments/quickstart.json" --simulate --out "$tmp/qs" >"$tmp/out.txt" 2>"$tmp/err.txt" ||
  fail "simulated quickstart: $(cat "$tmp/err.txt")"
grep -q "speedup vs 1f1b" "$tmp/out.txt" || fail "no table: $(cat "$tmp/out.txt")"
grep -q "\[24/24\]" "$tmp/err.txt" || fail "no progress lines: $(cat "$tmp/err.txt")"
python3 - "$tmp/qs" <<'PY' || fail "summary shape"
import json, sys, csv
d = sys.argv[1]
s = json.load(open(f"{d}/summary.json"))
assert s["schema"] == "contend.summary/1" and s["mode"] == "simulated" and s["baseline"] == "1f1b"
assert len(s["cells"]) == 8
for c in s["cells"]:
    assert set(c) >= {"scenario", "schedule", "throughput", "speedup"}, c
    assert set(c["throughput"]) >= {"median", "mean", "stdev", "ci95"} and set(c["speedup"]) >= {"median", "ci95"}
    assert c["throughput"]["median"] > 0
rows = list(csv.DictReader(open(f"{d}/summary.csv")))
assert len(rows) == 8 and float(rows[1]["speedup_median"]) > 1.0, rows[1]
# kFkB beats 1F1B when transfers sit on 1F1B's critical path (1 MiB at 1 Gbit/s, 10/20 ms stages).
cells = {(c["scenario"], c["schedule"]): c for c in s["cells"]}
assert cells[("steady", "kfkb:k=2")]["speedup"]["median"] > 1.1
PY
grep -q "report: $tmp/qs/report/index.html" "$tmp/out.txt" || fail "no report path: $(cat "$tmp/out.txt")"
if "$contend" run "$src/experiments/quickstart.json" --simulate --out "$tmp/qs" >/dev/null 2>"$tmp/err.txt"; then
  fail "overwrote a results directory"
fi

check_report() {  # check_report DIR FIGURE...
  local dir=$1; shift
  "$contend" report "$dir" --out "$tmp/fig" >"$tmp/rep.txt" 2>"$tmp/rep.err" || fail "report $dir: $(cat "$tmp/rep.err")"
  for f in "$@"; do
    [ -s "$tmp/fig/$f.png" ] && [ -s "$tmp/fig/$f.svg" ] || fail "report $dir: no $f ($(ls "$tmp/fig"))"
  done
  for svg in "$tmp"/fig/*.svg; do
    grep -q "$(basename "$svg")" "$tmp/fig/index.html" || fail "index.html does not show $(basename "$svg")"
  done
}
check_report "$tmp/qs" throughput adaptive-periodic adaptive-steady memory schedules timeline-periodic.adaptive.r1
grep -q "not drawn: bandwidth" "$tmp/rep.err" || fail "the missing bandwidth sweep went unmentioned: $(cat "$tmp/rep.err")"
grep -q "bandwidth-sweep" "$tmp/fig/index.html" || fail "index.html does not say why the bandwidth figure is missing"
rm -rf "$tmp/fig"
"$contend" run "$src/experiments/examples/bandwidth-sweep.json" --simulate --no-report --out "$tmp/bw" >/dev/null 2>&1
check_report "$tmp/bw" throughput bandwidth memory
rm -rf "$tmp/fig"
check_report "$src/tests/data/recorded-run" throughput bandwidth memory schedules adaptive-bw-200Mbit timeline-bw-200Mbit.adaptive.r1
rm -rf "$tmp/fig"
# A closed-loop job's traffic follows its iterations: on a fabric the simulator replays them (the
# job costs the spread pipeline something, the packed one nothing, and the job its own iterations,
# recorded as a real cell's tenants are); on a chain, whose links take flows as streams, it
# cannot: refused before anything is made.
"$contend" run "$src/experiments/examples/fabric-jobs.json" --simulate --no-report --out "$tmp/jobs" >"$tmp/jobs.out" 2>&1 ||
  fail "a fabric's closed-loop job was not simulated: $(tail -5 "$tmp/jobs.out")"
python3 - "$tmp/jobs/summary.json" <<'PY' || fail "the simulated closed-loop job did not cost the spread pipeline alone"
import json, sys
cells = {(c["scenario"], c["schedule"]): c["throughput"]["median"] for c in json.load(open(sys.argv[1]))["cells"]}
assert cells[("pack-dp", "1f1b")] == cells[("pack-idle", "1f1b")], cells
assert cells[("spread-dp", "1f1b")] < 0.95 * cells[("spread-idle", "1f1b")], cells
job = {c["scenario"]: c["tenants"][0]["iteration_s"]["median"] for c in json.load(open(sys.argv[1]))["cells"]
       if c["schedule"] == "1f1b" and c.get("tenants")}
assert set(job) == {"pack-dp", "spread-dp"} and 0.2 < job["pack-dp"] < job["spread-dp"], job
PY
cat >"$tmp/chain-job.json" <<'JSON'
{"schema": "contend.scenario/1", "name": "chain-job", "duration": "30s", "nodes": ["n0", "n1"],
 "links": [{"name": "n0-n1", "from": "n0", "to": "n1", "rate": "100Mbit"}],
 "timeline": [{"at": "0s", "flow": {"from": "n0", "to": "n1", "iterate": {"bytes": "1MiB", "compute": "100ms"}}}]}
JSON
cat >"$tmp/chain-job-e.json" <<JSON
{"schema": "contend.experiment/1", "name": "chain-job", "scenarios": ["$tmp/chain-job.json"],
 "workload": {"stages": 2}, "schedules": ["1f1b"]}
JSON
if "$contend" run "$tmp/chain-job-e.json" --simulate --no-report --out "$tmp/chain" 2>"$tmp/chain.err"; then
  fail "a chain's closed-loop job was simulated"
fi
grep -q 'runs a closed-loop job (flow n0-n1' "$tmp/chain.err" || fail "the refusal did not say why: $(cat "$tmp/chain.err")"
[ ! -e "$tmp/chain" ] || fail "a refused run left $tmp/chain"
# A fabric across cluster hosts needs the inventory's racks to stand for its leaves: refused
# before anything is made (or Ansible runs), naming what does not fit.
if command -v ansible-inventory >/dev/null; then
  if "$contend" run "$src/experiments/examples/fabric-placement.json" --hosts "$src/ansible/inventory/example.yml" \
    --out "$tmp/fab-hosts" 2>"$tmp/fab-hosts.err"; then
    fail "a fabric experiment ran across cluster hosts without racks"
  fi
  grep -q 'reads the racks from the groups under `nodes`' "$tmp/fab-hosts.err" || fail "the refusal did not say why: $(cat "$tmp/fab-hosts.err")"
  if "$contend" run "$src/experiments/examples/fabric-placement.json" --hosts "$src/ansible/inventory/racks.yml" \
    --out "$tmp/fab-hosts" 2>"$tmp/fab-racks.err"; then
    fail "a fabric experiment ran on racks that do not stand for its leaves"
  fi
  grep -q "leaf leaf0 has 6 hosts, and rack rack_a ($src/ansible/inventory/racks.yml)" "$tmp/fab-racks.err" ||
    fail "the refusal did not say why: $(cat "$tmp/fab-racks.err")"
  [ ! -e "$tmp/fab-hosts" ] || fail "a refused run left $tmp/fab-hosts"
else
  echo "SKIP (fabric on cluster hosts): needs ansible-inventory (scripts/install-deps.sh installs ansible-core)"
fi
# A straggling host on a fabric: the stall on its NIC reaches both of its rank's neighbours, so
# 1F1B runs slower than on the same fabric without it (simulated; docs/scenario-format.md, Stalls).
cat >"$tmp/strag-e.json" <<JSON
{"schema": "contend.experiment/1", "name": "strag",
 "scenarios": ["$src/emulator/scenarios/fabric/pipeline-spread-quiet.json",
               "$src/emulator/scenarios/fabric/pipeline-spread-straggler.json"],
 "workload": {"stages": 4, "microbatches": 16, "iterations": 8, "warmup": 1, "activation": "1MiB"},
 "schedules": ["1f1b"], "repetitions": 1}
JSON
"$contend" run "$tmp/strag-e.json" --simulate --no-report --out "$tmp/strag" >"$tmp/strag.out" 2>&1 ||
  fail "a stall on a fabric was not simulated: $(tail -5 "$tmp/strag.out")"
python3 - "$tmp/strag/summary.json" <<'PY' || fail "the straggling host did not slow the pipeline"
import json, sys
cells = {c["scenario"]: c["throughput"]["median"] for c in json.load(open(sys.argv[1]))["cells"]}
assert cells["spread-straggler"] < 0.95 * cells["spread-quiet"], cells
PY
# kFkB with slack (`kfkb:k=2,extra=2/1/0/0`) has a k but is not on the fixed-k curve.
"$contend" run "$src/experiments/examples/memory-limited.json" --simulate --no-report --out "$tmp/ml" >/dev/null 2>&1
check_report "$tmp/ml" throughput memory adaptive-uneven
# A baseline scenario: every cell's slowdown against the same schedule in it, in the table, the
# summary and a figure.
/usr/bin/python3 - "$src/experiments/quickstart.json" "$tmp/slow.json" <<'PY'
import json, os, sys
e = json.load(open(sys.argv[1]))
e["scenarios"] = [os.path.join(os.path.dirname(sys.argv[1]), s) for s in e["scenarios"]]
e["baseline_scenario"] = "steady"
json.dump(e, open(sys.argv[2], "w"))
PY
"$contend" run "$tmp/slow.json" --simulate --no-report --out "$tmp/slow" >"$tmp/slow.txt" 2>&1 ||
  fail "a baseline scenario: $(tail -5 "$tmp/slow.txt")"
grep -q "slowdown vs steady" "$tmp/slow.txt" || fail "no slowdown column: $(cat "$tmp/slow.txt")"
/usr/bin/python3 - "$tmp/slow/summary.json" <<'PY' || fail "slowdowns in summary.json"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["baseline_scenario"] == "steady", s.get("baseline_scenario")
by = {(c["scenario"], c["schedule"]): c for c in s["cells"]}
for (scenario, schedule), c in by.items():
    want = by[("steady", schedule)]["throughput"]["median"] / c["throughput"]["median"]
    assert abs(c["slowdown"]["median"] - want) < 1e-9 * want, (scenario, schedule, c["slowdown"], want)
    assert scenario != "steady" or c["slowdown"]["median"] == 1.0
assert any(c["slowdown"]["median"] > 1.05 for c in s["cells"]), "preemption slowed nothing down"
PY
rm -rf "$tmp/fig"
check_report "$tmp/slow" throughput slowdown
# A real run's tenants (summary.json's "tenants", as a cell beside another tenant's flows records
# them) are drawn beside the schedules.
cp -r "$src/tests/data/recorded-run" "$tmp/tenants"
/usr/bin/python3 - "$tmp/tenants/summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
for c in s["cells"]:
    c["tenants"] = [{"tenant": "dp", "flows": 4, "goodput_bps": {"median": 7.6e8, "ci95": 1e7, "samples": [7.5e8, 7.6e8, 7.7e8]}}]
json.dump(s, open(sys.argv[1], "w"))
PY
rm -rf "$tmp/fig"
check_report "$tmp/tenants" throughput tenants
echo "cli: run and report ok"
