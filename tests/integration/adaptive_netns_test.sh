#!/usr/bin/env bash
# Adaptive kFkB for real: four emulated stages in namespaces; every link steps down from 1 Gbit/s
# to 100 Mbit/s after 3 s. Measuring in band only, rank 0 decides iteration 0 on a probe of the
# links, and after the step runs a larger k or more slack (whichever is leaner at the same speed:
# the joint policy); every rank's log shows the same k in every iteration; and the run beats 1F1B
# on the same scenario.
source "$(dirname "$0")/lib.sh"
need_root
before=$(runner_namespaces)
cat >"$tmp/step.json" <<JSON
{"schema": "contend.scenario/1", "name": "step", "duration": "60s", "nodes": ["n0", "n1", "n2", "n3"],
 "links": [{"name": "l0", "from": "n0", "to": "n1", "rate": "1Gbit"},
           {"name": "l1", "from": "n1", "to": "n2", "rate": "1Gbit"},
           {"name": "l2", "from": "n2", "to": "n3", "rate": "1Gbit"}],
 "timeline": [{"at": "3s", "link": "*", "rate": "100Mbit"}]}
JSON
# 256 KiB activations: at 1 Gbit/s the links keep up with 10/20 ms stages and k=1 is as fast as any
# (the leanest wins); at 100 Mbit/s 1F1B stalls on every transfer and k=2 is 15% faster (contend sim).
cat >"$tmp/exp.json" <<JSON
{"schema": "contend.experiment/1", "name": "adaptive-step", "scenarios": ["step.json"],
 "workload": {"stages": 4, "microbatches": 16, "iterations": 12, "warmup": 1, "fwd": "10ms", "bwd": "20ms",
              "activation": "256KiB"},
 "schedules": ["1f1b", "adaptive"], "repetitions": 1, "baseline": "1f1b"}
JSON
"$contend" run "$tmp/exp.json" --out "$tmp/res" >"$tmp/out.txt" 2>"$tmp/err.txt" || fail "run: $(cat "$tmp/err.txt")"
cat "$tmp/out.txt"
python3 - "$tmp/res" <<'PY' || fail "adaptive through a step-down"
import json, sys
d = sys.argv[1]
lines = [json.loads(l) for l in open(f"{d}/runs/step.adaptive.r1.jsonl")]
by_iter = {}
for l in lines:
    by_iter.setdefault(l["iteration"], {})[l["rank"]] = l["k"]
assert len(by_iter) == 13 and all(len(r) == 4 for r in by_iter.values()), by_iter
for it, ranks in sorted(by_iter.items()):
    assert len(set(ranks.values())) == 1, f"iteration {it}: ranks ran different k: {ranks}"
ks = [by_iter[i][0] for i in sorted(by_iter)]
decisions = [l["decision"] for l in lines if l["rank"] == 0]
assert all("link_bps" in x and "predicted_s" in x and "schedule" in x for x in decisions), decisions[0]
schedules = [x["schedule"] for x in decisions]
print("k per iteration:", ks)
print("schedule per iteration:", schedules)
first = decisions[0]
print("iteration 0 decided on the probe:", first["schedule"], [round(b / 1e6) for b in first["link_bps"]])
assert first["evaluated"] and len(first["link_bps"]) == 3, f"iteration 0 was not decided on a probe: {first}"
# A short probe of a quiet link reads about the shaped rate or more (its first frames pass in the
# token bucket's burst); with the CPUs busy it reads what they let through (266 Mbit/s beside a
# CPU-bound process): more than the 100 Mbit/s after the step is what says it read the links as
# they were before it.
assert all(b > 150e6 for b in first["link_bps"]), f"the probe missed the 1 Gbit/s links: {first}"
# After the step the pipeline is not the leanest: every decision taken on readings of the 100 Mbit/s
# links has a larger k or extra warm-up (at 100 Mbit/s the leanest stalls on every transfer). Before
# it any schedule may run: a 256 KiB transfer passes in the 1 Gbit/s bucket's burst, so readings
# there measure the CPUs (0.4 to 80 Gbit/s here), every candidate is about as fast, and a low reading
# counts as a drop the policy keeps warm-up in hand for (docs/adaptive.md). The step's time is the
# events log's, on the host's monotonic clock, as the iterations' starts are.
events = [json.loads(l) for l in open(f"{d}/events/step.adaptive.r1.jsonl")]
start = next(e["steady_s"] for e in events if e["kind"] == "start")
step = start + min(e["applied_s"] for e in events if e["kind"] == "rate")
starts = [l["start_s"] for l in lines if l["rank"] == 0]
print("links measured for each decision, Mbit/s:", [[round(b / 1e6) for b in x["link_bps"]] for x in decisions])
after = [x for x, t in zip(decisions, starts) if t > step and x["link_bps"] and max(x["link_bps"]) < 400e6]
assert len(after) >= 5, f"fewer than 5 decisions on the stepped-down links: {starts}, step at {step}"
def lean(x):
    extra = x["schedule"].partition("extra=")[2]
    return x["k"] == 1 and all(int(v) == 0 for v in extra.split("/") if v)
assert not any(lean(x) for x in after), f"the leanest schedule ran after the step: {schedules}"
s = {c["schedule"]: c for c in json.load(open(f"{d}/summary.json"))["cells"]}
speedup = s["adaptive"]["speedup"]["median"]
print("adaptive over 1f1b:", round(speedup, 3))
assert speedup > 1.0, f"adaptive did not beat 1F1B: {speedup}"
PY
[ "$(runner_namespaces)" = "$before" ] || fail "namespaces left: $(runner_namespaces)"
