#!/usr/bin/env bash
# Co-location at scale, simulated (no root): 16 data-parallel jobs on a 1024-host leaf-spine (32
# leaves of 32 hosts at 100 Gbit/s under 8 spines), each a closed-loop ring all-reduce over 64
# hosts placed at random (a 1 GiB gradient: 2 GiB a flow, 2 streams, after 200 ms of compute),
# replayed by the flow-level model (`contend emu predict`, whose jobs line is predict_run's) with
# the uplinks giving 1:1, 2:1, 3:1 and 4:1 oversubscription. Each job's penalty: its median
# iteration beside the 15 others over its median iteration alone on the same hosts. Prints, per
# oversubscription, the penalty (median and range over the jobs), the fewest iterations a job
# ended, the replay's own time, and that time per 100 iterations of the slowest job; writes
# OUT/tenants-scale.csv and, with matplotlib, OUT/tenants-scale.png.
# With "pipeline" as a fourth argument, then a pipeline among the jobs instead: 16 jobs of 60 hosts
# at 2:1 leave 64 hosts free, on which an 8-stage pipeline is spread (20 ms forward, 40 ms backward,
# 256 MiB activations, 16 micro-batches, 8 iterations), 1F1B and kFkB (k=2) simulated beside the
# jobs (`contend run --simulate`): prints its table, its wall time and peak memory.
# Usage: bench/tenants_scale.sh CONTEND [OUT] [DURATION] [pipeline]
set -euo pipefail
contend=$1
out=${2:-.}
duration=${3:-150s}
mkdir -p "$out"
tmp=$(mktemp -d /tmp/contend-tenants-scale-XXXXXX)
trap 'rm -rf "$tmp"' EXIT

# scenario FILE OVER [JOB HOSTS_JSON | pipeline]: all 16 jobs of 64 hosts placed at random, one job
# on listed hosts, or 16 jobs of 60 leaving 64 hosts for a pipeline spread across the leaves.
scenario() {
  /usr/bin/python3 - "$@" "$duration" <<'PY'
import json, sys
path, over, rest, duration = sys.argv[1], int(sys.argv[2]), sys.argv[3:-1], sys.argv[-1]
job = {"pattern": "ring", "streams": 2, "iterate": {"bytes": "2GiB", "compute": "200ms"}}
doc = {"schema": "contend.scenario/1", "name": f"scale-{over}", "duration": duration, "seed": 1,
       "fabric": {"leaf-spine": {"leaves": 32, "hosts_per_leaf": 32, "spines": 8, "host_rate": "100Gbit",
                                 "uplink_rate": f"{400 / over:g}Gbit"}}}
if rest == ["pipeline"]:
    doc["placement"] = "spread"
    timeline = [{"at": "0s", "traffic": dict(job, name=f"j{j}", hosts=60, placement="random")} for j in range(16)]
elif rest:
    timeline = [{"at": "0s", "traffic": dict(job, name=rest[0], hosts=json.loads(rest[1]))}]
else:
    timeline = [{"at": "0s", "traffic": dict(job, name=f"j{j}", hosts=64, placement="random")} for j in range(16)]
doc["timeline"] = timeline
json.dump(doc, open(path, "w"))
PY
}
if [ "${4:-}" = pipeline ]; then
  scenario "$out/jobs-and-pipeline.json" 2 pipeline
  cat >"$out/pipeline-among-jobs.json" <<JSON
{"schema": "contend.experiment/1", "name": "pipeline-among-jobs", "topology": "netns",
 "scenarios": ["jobs-and-pipeline.json"],
 "workload": {"stages": 8, "microbatches": 16, "iterations": 8, "warmup": 1, "backend": "emulated",
              "fwd": "20ms", "bwd": "40ms", "activation": "256MiB"},
 "schedules": ["1f1b", "kfkb:k=2"], "repetitions": 1, "baseline": "1f1b"}
JSON
  /usr/bin/time -f "wall %e s, peak memory %M KiB" "$contend" run "$out/pipeline-among-jobs.json" --simulate \
    --out "$out/pipeline-among-jobs" --no-report
  exit
fi

echo "oversubscription,job,iterations,iteration_s,alone_s,penalty,replay_s" >"$out/tenants-scale.csv"
for over in 1 2 3 4; do
  scenario "$tmp/all.json" "$over"
  "$contend" emu predict "$tmp/all.json" --json "$tmp/all-p.json" >/dev/null
  # Each job's ring, in order, from its flows (taken as streams at time 0), then the job alone there.
  /usr/bin/python3 - "$tmp/all-p.json" >"$tmp/rings" <<'PY'
import json, sys
nxt = {}
for f in json.load(open(sys.argv[1]))["flows"]:
    nxt.setdefault(f["flow"].split(":")[0], {})[f["from"]] = f["to"]
for job, ring in nxt.items():
    order = [next(iter(ring))]
    while ring[order[-1]] != order[0]:
        order.append(ring[order[-1]])
    print(job, json.dumps(order))
PY
  while read -r job hosts; do
    scenario "$tmp/one.json" "$over" "$job" "$hosts"
    "$contend" emu predict "$tmp/one.json" --json "$tmp/one-p.json" >/dev/null
    /usr/bin/python3 - "$tmp/all-p.json" "$tmp/one-p.json" "$over" "$job" >>"$out/tenants-scale.csv" <<'PY'
import json, sys
together, alone, over, name = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
j = next(x for x in together["jobs"] if x["job"] == name)
a = alone["jobs"][0]["iteration_s"]
print(f"{over},{name},{j['iterations']},{j['iteration_s']:.6f},{a:.6f},{j['iteration_s'] / a:.4f},{together['took_s']:.3f}")
PY
  done <"$tmp/rings"
done
/usr/bin/python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(f"{sys.argv[1]}/tenants-scale.csv")))
print("| oversubscription | penalty, median | range over the 16 jobs | fewest iterations | replay (s) "
      "| replay per 100 iterations of the slowest job (s) |")
print("|---|---|---|---|---|---|")
points = []
for over in sorted({r["oversubscription"] for r in rows}, key=int):
    rs = [r for r in rows if r["oversubscription"] == over]
    p = [float(r["penalty"]) for r in rs]
    points.append((int(over), statistics.median(p), min(p), max(p)))
    fewest, took = min(int(r["iterations"]) for r in rs), float(rs[0]["replay_s"])
    per100 = f"{100 * took / fewest:.2f}" if fewest > 0 else "n/a"
    print(f"| {over}:1 | {statistics.median(p):.3f} | {min(p):.3f}-{max(p):.3f} | "
          f"{fewest} | {took:.2f} | {per100} |")
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    sys.exit(0)
fig, ax = plt.subplots(figsize=(5, 3.4))
xs = [p[0] for p in points]
ax.errorbar(xs, [p[1] for p in points], yerr=[[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]],
            marker="o", capsize=4)
ax.set_xticks(xs)
ax.set_xticklabels([f"{x}:1" for x in xs])
ax.set_xlabel("the leaf-spine's oversubscription")
ax.set_ylabel("iteration beside 15 jobs / alone")
ax.set_title("16 data-parallel jobs on 1024 hosts, simulated\n(median and range over the jobs)", fontsize=9)
ax.grid(alpha=0.3)
fig.tight_layout()
fig.savefig(f"{sys.argv[1]}/tenants-scale.png", dpi=120)
PY
