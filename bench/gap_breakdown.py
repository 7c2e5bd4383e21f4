#!/usr/bin/env python3
"""Where adaptive's gap to the oracle goes, one decision at a time (docs/adaptive.md), from a
simulated results folder run with `contend run --simulate --shadows`: each measured iteration of an
`adaptive` cell carries what the observer (the truth as it stands) and the oracle (the truth to
come), deciding beside it on the same reports, would have run, timed on the same network. Per
iteration, adaptive's time A, the observer's O and the oracle's R split the loss A - R into
  the future:  O - R (what a perfect observer without foresight loses), and
  measuring:   A - O, zero where adaptive chose as the observer did, otherwise by what it read:
    lag       its links' readings (rates within 15%, stalls within 1 ms or 15%) matched the
              truth of the decision before but not the truth now: a change read an iteration late;
    estimate  they matched neither: a wrong estimate (a rate misread, a stall's length);
    choice    they matched the truth now: a different choice on a right estimate (hysteresis,
              a drop to be ready for, a prediction).
Switching costs nothing in the simulator, so it has no column. Sums are over every repetition's
measured iterations, in points of adaptive's time (100 x loss / sum of A); a negative figure is
time adaptive won (a lucky choice the reference did not make).

Usage: bench/gap_breakdown.py RESULTS...   (prints a Markdown table)
"""
import glob
import json
import os
import sys

CLASSES = ["lag", "estimate", "choice", "future"]
RATE_CLOSE = 0.15
STALL_CLOSE_S = 1e-3


def close(a, b):
    """Whether two decisions' readings of the links agree (rates and stalls)."""
    ra, rb = a.get("link_bps", []), b.get("link_bps", [])
    if len(ra) != len(rb) or any(abs(x - y) > RATE_CLOSE * max(x, y) for x, y in zip(ra, rb)):
        return False
    sa, sb = a.get("stall_s", []), b.get("stall_s", [])
    sa, sb = sa or [0.0] * len(ra), sb or [0.0] * len(ra)
    return all(abs(x - y) <= max(STALL_CLOSE_S, RATE_CLOSE * max(x, y)) for x, y in zip(sa, sb))


def split(rows, warmup):
    """The loss of one cell's iterations by class (seconds), and adaptive's and the oracle's total time."""
    out = dict.fromkeys(CLASSES, 0.0)
    spent = oracle = 0.0
    before = None  # the observer's decision before: the truth of the iteration before
    for row in rows:
        shadows = row.get("shadows")
        if shadows is None:
            sys.exit(f"iteration {row['iteration']} has no shadows: run with `contend run --simulate --shadows`")
        seen, truth = row["decision"], shadows["observer"]
        if row["iteration"] >= warmup:
            a, o, r = row["iteration_s"], truth["iteration_s"], shadows["oracle"]["iteration_s"]
            spent += a
            oracle += r
            out["future"] += o - r
            if seen["schedule"] != truth["schedule"]:
                if close(seen, truth):
                    out["choice"] += a - o
                elif before is not None and close(seen, before):
                    out["lag"] += a - o
                else:
                    out["estimate"] += a - o
        before = truth
    return out, spent, oracle


def cells(results):
    """Per scenario, the rank-0 rows of each repetition of its adaptive cells."""
    by = {}
    for path in sorted(glob.glob(os.path.join(results, "runs", "*.adaptive*.jsonl"))):
        rows = [json.loads(line) for line in open(path) if line.strip()]
        rows = [r for r in rows if r.get("rank", 0) == 0 and "decision" in r]
        if rows:
            by.setdefault(os.path.basename(path).split(".")[0], []).append(rows)
    return by


def table(results, name, warmup):
    """The Markdown rows of one results folder."""
    lines = []
    for scenario, repetitions in cells(results).items():
        total = dict.fromkeys(CLASSES, 0.0)
        spent = oracle = 0.0
        for rows in repetitions:
            part, a, r = split(rows, warmup)
            spent, oracle = spent + a, oracle + r
            for c in CLASSES:
                total[c] += part[c]
        points = " | ".join(f"{100 * total[c] / spent:.1f}" for c in CLASSES)
        lines.append(f"| {name} | {scenario} | {oracle / spent:.3f} | {points} |")
    return lines


HEADER = ["| experiment | scenario | adaptive / oracle beside it | lag | estimate | choice | the future |",
          "|---|---|---|---|---|---|---|"]


def experiment_of(results):
    """The experiment's name and its warm-up iterations (the format's default 2)."""
    env = json.load(open(os.path.join(results, "env.json")))
    experiment = json.load(open(env["experiment_file"]))
    return env["experiment"], experiment.get("workload", {}).get("warmup", 2)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n".join(HEADER))
    for results in sys.argv[1:]:
        print("\n".join(table(results, *experiment_of(results))))


if __name__ == "__main__":
    main()
