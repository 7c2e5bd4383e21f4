#!/usr/bin/env python3
"""The fidelity suite's table and record, from bench/fidelity_suite.sh's results folders.

Usage: bench/fidelity_suite.py OUT EXPERIMENT.json [EXPERIMENT.json ...]
Reads OUT/NAME/{real,ideal,host,own}/summary.json for every experiment, writes OUT/measured.json
(contend.fidelity/1, docs/experiment-format.md), draws OUT/fidelity.png (with matplotlib, where
this interpreter has it: Debian's /usr/bin/python3) and prints a Markdown table of simulated /
real throughput per cell with how many cells each simulation gets within 3% and 5%.
"""
import datetime
import json
import os
import subprocess
import sys

from fidelity_table import medians

KINDS = ("ideal", "host", "own")


def commit():
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        return subprocess.run(["git", "-C", here, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown commit"


def name_of(experiment):
    return os.path.basename(experiment)[:-len(".json")]


def kept_awake(out, experiment):
    """Whether the experiment's real run was made with --keep-awake (its env.json's argv)."""
    with open(f"{out}/{name_of(experiment)}/real/env.json") as f:
        return "--keep-awake" in json.load(f).get("argv", [])


def cells_of(out, experiment):
    name = name_of(experiment)
    real_summary, real = medians(f"{out}/{name}/real")
    sims = {kind: medians(f"{out}/{name}/{kind}")[1] for kind in KINDS}
    reps = real_summary["cells"][0]["repetitions"]
    for (scenario, schedule), measured in real.items():
        cell = {"experiment": os.path.basename(experiment), "scenario": scenario, "schedule": schedule,
                "real": round(measured, 3)}
        for kind in KINDS:
            cell[kind] = round(sims[kind][(scenario, schedule)] / measured, 4)
        yield cell, reps


def draw(cells, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print(f"(no figure: this python3 has no matplotlib; /usr/bin/python3 has it on Debian)", file=sys.stderr)
        return
    fig, ax = plt.subplots(figsize=(11, 4.5))
    xs = range(len(cells))
    for kind, marker in zip(KINDS, "o^s"):
        ax.plot(xs, [c[kind] for c in cells], marker, label=kind, alpha=0.8)
    for y, style in ((1.0, "-"), (0.97, ":"), (1.03, ":"), (0.95, "--"), (1.05, "--")):
        ax.axhline(y, color="grey", linestyle=style, linewidth=0.8)
    ax.set_xticks(list(xs))
    ax.set_xticklabels([f"{c['scenario']} / {c['schedule']}" for c in cells], rotation=70, ha="right", fontsize=7)
    ax.set_ylabel("simulated / real throughput")
    ax.set_title("fidelity suite: the simulator against real runs (dotted 3%, dashed 5%)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    out, experiments = sys.argv[1], sys.argv[2:]
    cells, reps = [], set()
    for experiment in experiments:
        for cell, r in cells_of(out, experiment):
            cells.append(cell)
            reps.add(r)
    awake = sum(kept_awake(out, e) for e in experiments)
    how = ("with --keep-awake" if awake == len(experiments) else "without --keep-awake" if awake == 0 else
           f"with --keep-awake in {awake} of {len(experiments)} experiments")
    measured = (f"{datetime.date.today().isoformat()}, commit {commit()}, {os.uname().nodename}: real medians of "
                f"{'/'.join(map(str, sorted(reps)))} {how}, bench/fidelity_suite.sh")
    with open(f"{out}/measured.json", "w") as f:
        json.dump({"schema": "contend.fidelity/1", "measured": measured, "cells": cells}, f, indent=1)
        f.write("\n")
    draw(cells, f"{out}/fidelity.png")
    print(f"simulated / real throughput per cell ({measured})\n")
    print("| experiment | scenario | schedule | real (samples/s) | ideal | host | own |")
    print("|---|---|---|---|---|---|---|")
    for c in cells:
        print(f"| {c['experiment']} | {c['scenario']} | {c['schedule']} | {c['real']:.1f} | "
              + " | ".join(f"{c[k]:.3f}" for k in KINDS) + " |")
    print()
    for kind in KINDS:
        r = [c[kind] for c in cells]
        within3 = sum(abs(x - 1) <= 0.03 for x in r)
        within5 = sum(abs(x - 1) <= 0.05 for x in r)
        print(f"{kind}: {within3} of {len(r)} cells within 3%, {within5} within 5% (range {min(r):.3f}-{max(r):.3f})")


if __name__ == "__main__":
    main()
