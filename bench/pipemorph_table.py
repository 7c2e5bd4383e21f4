#!/usr/bin/env python3
"""contend's PipeMorph delay sweep beside the artifact's own logs (bench/data/pipemorph-14B.csv):
per stalled link (the first and the last of the chain) and delay, each system's iteration time in
contend (the median over the repetitions) and in the artifact, and the two comparisons the goal is
stated in (issue 26, within 15%): how each system's iteration time grows with the delay (t_d / t_0,
contend over the artifact's) and each system's ratio to 1F1B at that delay (contend over the
artifact's). adaptive and adaptra, which the artifact has not, are given over PipeMorph.

Usage: bench/pipemorph_table.py RESULTS/summary.json  (a run of experiments/reproductions/pipemorph-delay.json;
prints Markdown)
"""
import csv
import json
import os
import sys

ARTIFACT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "pipemorph-14B.csv")
SYSTEMS = ("1F1B", "ZB", "ZB-CPU", "PipeMorph")
OURS = ("adaptra", "adaptive")


def artifact():
    rows = {}
    with open(ARTIFACT) as f:
        for row in csv.DictReader(line for line in f if not line.startswith("#")):
            rows[(row["link"], int(row["delay_ms"]))] = {s: float(row[s]) for s in SYSTEMS}
    return rows


def contend(summary):
    """(link: first|last, delay ms) -> {system: iteration ms}; the quiet scenario is both links' 0."""
    per_iteration = summary["workload"]["samples_per_iteration"]
    info = summary["scenarios"]
    stalled = sorted({i["stalled_links"][0] for i in info.values() if len(i.get("stalled_links", [])) == 1})
    where = {stalled[0]: "first", stalled[-1]: "last"} if stalled else {}
    out = {}
    for c in summary["cells"]:
        i = info[c["scenario"]]
        median = c["throughput"]["median"]
        if median <= 0:
            continue
        ms = per_iteration / median * 1e3
        if i.get("steady"):
            keys = [("first", 0), ("last", 0)]
        elif len(i.get("stalled_links", [])) == 1 and i["stalled_links"][0] in where:
            keys = [(where[i["stalled_links"][0]], round(i["stall_s"] * 1e3))]
        else:
            keys = []
        for key in keys:
            out.setdefault(key, {})[c["schedule"]] = ms
    return out


def main():
    s = json.load(open(sys.argv[1]))
    theirs, ours = artifact(), contend(s)
    print(f"{s['experiment']} ({s['mode']}) against the artifact's 14B logs: iteration time (ms), contend / "
          "artifact; growth = (t_d / t_0) contend over artifact; vs 1F1B = (t / t_1F1B) contend over artifact\n")
    print("| link | delay | " + " | ".join(SYSTEMS) + " | growth " + ", ".join(SYSTEMS) +
          " | vs 1F1B " + ", ".join(SYSTEMS[1:]) + " | " + ", ".join(OURS) + " / PipeMorph |")
    print("|---|---|" + "---|" * (len(SYSTEMS) + 3))
    worst = 0.0
    for key in sorted(k for k in theirs if k in ours):
        link, delay = key
        a, c = theirs[key], ours[key]
        if not all(x in c for x in SYSTEMS):
            continue
        times = " | ".join(f"{c[x]:.0f} / {a[x]:.0f}" for x in SYSTEMS)
        base_a, base_c = theirs[(link, 0)], ours.get((link, 0), {})
        growth = [(c[x] / base_c[x]) / (a[x] / base_a[x]) for x in SYSTEMS if x in base_c]
        vs = [(c[x] / c["1F1B"]) / (a[x] / a["1F1B"]) for x in SYSTEMS[1:]]
        mine = [f"{c['PipeMorph'] / c[x]:.3f}" for x in OURS if x in c]
        worst = max([worst] + [abs(g - 1) for g in growth + vs])
        print(f"| {link} | {delay} ms | {times} | " + ", ".join(f"{g:.2f}" for g in growth) + " | " +
              ", ".join(f"{v:.2f}" for v in vs) + " | " + ", ".join(mine) + " |")
    print(f"\nthe largest difference from the artifact's shape: {worst:.0%}")


if __name__ == "__main__":
    main()
