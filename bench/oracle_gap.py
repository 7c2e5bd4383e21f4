#!/usr/bin/env python3
"""Where adaptive's gap to the oracle goes (docs/adaptive.md): each experiment is run with its
baseline, `adaptive`, `observer` (adaptive's decisions on the truth as it stands: perfect
measurements, no foresight) and `oracle` (the truth over the coming iteration), simulated unless
--real is given (then with --keep-awake, as root), and per scenario the table splits adaptive / oracle into what measuring costs
(adaptive / observer) and what not knowing the future costs (observer / oracle). Simulated, the
cells run with --shadows and a second table (bench/gap_breakdown.py) splits the gap one decision
at a time: reaction lag, wrong estimates, other choices on right ones, and the future.

Usage: bench/oracle_gap.py CONTEND OUT [--real] EXPERIMENT.json...   (prints a Markdown table)
A copy of each experiment, its scenarios by absolute path, goes to OUT/NAME.json, its results to
OUT/NAME.simulated/ or OUT/NAME.real/ (a folder that holds a summary is read, not run again). The
policies run in their default search: options an experiment gives its own policy entries (mem=,
inflight=) are not carried over.
"""
import json
import os
import subprocess
import sys

import gap_breakdown

POLICIES = ["adaptive", "observer", "oracle"]


def copy_of(path, out):
    e = json.load(open(path))
    here = os.path.dirname(os.path.abspath(path))
    e["scenarios"] = [os.path.normpath(os.path.join(here, s)) for s in e["scenarios"]]
    baseline = e.get("baseline", "1f1b")
    e["schedules"] = [baseline] + [p for p in POLICIES if p != baseline]
    e["baseline"] = baseline
    dst = os.path.join(out, os.path.basename(path))
    json.dump(e, open(dst, "w"), indent=1)
    return dst, baseline


def run(contend, experiment, results, real):
    if os.path.exists(os.path.join(results, "summary.json")):
        return
    cmd = [contend, "run", experiment, "--out", results, "--no-report"] + (
        ["--keep-awake"] if real else ["--simulate", "--shadows"])
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{done.stdout[-2000:]}")


def main():
    args = sys.argv[1:]
    real = "--real" in args
    args = [a for a in args if a != "--real"]
    if len(args) < 3:
        sys.exit(__doc__)
    contend, out, experiments = args[0], args[1], args[2:]
    os.makedirs(out, exist_ok=True)
    print("| experiment | scenario | baseline | adaptive | observer | oracle | adaptive / oracle "
          "| measuring: adaptive / observer | the future: observer / oracle |")
    print("|---|---|---|---|---|---|---|---|---|")
    breakdown = []
    for path in experiments:
        experiment, baseline = copy_of(path, out)
        name = os.path.splitext(os.path.basename(path))[0]
        results = os.path.join(out, f"{name}.{'real' if real else 'simulated'}")
        run(contend, experiment, results, real)
        by = {}
        for c in json.load(open(os.path.join(results, "summary.json")))["cells"]:
            by.setdefault(c["scenario"], {})[c["schedule"]] = c["throughput"]["median"]
        for scenario, t in by.items():
            a, s, o = (t[p] for p in POLICIES)
            print(f"| {name} | {scenario} | {t[baseline]:.1f} | {a:.1f} | {s:.1f} | {o:.1f} | {a / o:.3f} "
                  f"| {a / s:.3f} | {s / o:.3f} |")
        if not real:
            breakdown += gap_breakdown.table(results, gap_breakdown.experiment_of(results))
    if breakdown:
        print("\nOne decision at a time, in points of adaptive's time (bench/gap_breakdown.py):\n")
        print("\n".join(gap_breakdown.HEADER + breakdown))


if __name__ == "__main__":
    main()
