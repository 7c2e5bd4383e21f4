#!/usr/bin/env python3
"""Where adaptive's gap to the oracle goes, one decision at a time (docs/adaptive.md), from a
simulated results folder run with `contend run --simulate --shadows`: each measured iteration of an
`adaptive` cell carries what the observer (the truth as it stands) and the oracle (the truth to
come), deciding beside it on the same reports, would have run, timed on the same network. Per
iteration, adaptive's time A, the observer's O and the oracle's R split the loss A - R into
  the future:  O - R (what a perfect observer without foresight loses), and
  measuring:   A - O, zero where adaptive chose as the observer did, otherwise by what it read:
    lag       its links' readings (rates within 15%, stalls within 1 ms or 15%) did not match
              the truth now, but each misread link was read at a rate it held during the
              iteration before (the events log's): a change read late;
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


def near(x, y):
    return abs(x - y) <= RATE_CLOSE * max(x, y)


def close(a, b):
    """Whether two decisions' readings of the links agree (rates and stalls)."""
    ra, rb = a.get("link_bps", []), b.get("link_bps", [])
    if len(ra) != len(rb) or not all(near(x, y) for x, y in zip(ra, rb)):
        return False
    sa, sb = a.get("stall_s", []), b.get("stall_s", [])
    sa, sb = sa or [0.0] * len(ra), sb or [0.0] * len(ra)
    return all(abs(x - y) <= max(STALL_CLOSE_S, RATE_CLOSE * max(x, y)) for x, y in zip(sa, sb))


def held(trace, start, end):
    """The rates a link's (time, rate) steps held over [start, end)."""
    out = [rate for (t, rate), nxt in zip(trace, trace[1:] + [(float("inf"), 0)]) if t < end and nxt[0] > start]
    return out or [trace[-1][1]]


def stale(seen, truth, chain, start, end):
    """Whether every link adaptive misread, it read at a rate the link held over [start, end), the
    iteration before: a change read late. Stalls misread are not lag."""
    ra, rb = seen.get("link_bps", []), truth.get("link_bps", [])
    if chain is None or len(ra) != len(rb) or len(ra) > len(chain):
        return False
    sa, sb = seen.get("stall_s") or [0.0] * len(ra), truth.get("stall_s") or [0.0] * len(ra)
    if not all(abs(x - y) <= max(STALL_CLOSE_S, RATE_CLOSE * max(x, y)) for x, y in zip(sa, sb)):
        return False
    return all(near(x, y) or any(near(x, r) for r in held(chain[i], start, end)) for i, (x, y) in enumerate(zip(ra, rb)))


def split(rows, warmup, chain):
    """The loss of one cell's iterations by class (seconds), and adaptive's and the oracle's total
    time. `chain`: each chain link's true (time, rate) steps, or None."""
    out = dict.fromkeys(CLASSES, 0.0)
    spent = oracle = 0.0
    before = None  # the iteration before's start
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
                elif before is not None and stale(seen, truth, chain, before, row["start_s"]):
                    out["lag"] += a - o
                else:
                    out["estimate"] += a - o
        before = row["start_s"]
    return out, spent, oracle


def chain_of(results, cell, experiment):
    """Each chain link's (time, rate) steps in the cell's events log, in pipeline order (the
    scenario's nodes), or None where the scenario is not a chain of named links."""
    name = cell.split(".")[0]
    here = os.path.dirname(experiment["path"])
    for path in experiment.get("scenarios", []):
        scenario = json.load(open(os.path.join(here, path)))
        if scenario.get("name") != name:
            continue
        nodes = scenario.get("nodes", [])
        ends = {frozenset((l.get("from"), l.get("to"))): l.get("name") for l in scenario.get("links", [])}
        names = [ends.get(frozenset(pair)) for pair in zip(nodes, nodes[1:])]
        steps = {}
        for line in open(os.path.join(results, "events", cell + ".jsonl")):
            e = json.loads(line)
            if e.get("kind") == "start":
                steps = {k: [(0.0, v)] for k, v in e.get("base_rates_bps", {}).items()}
            elif e.get("kind") == "rate" and e.get("link") in steps:
                steps[e["link"]].append((e.get("applied_s", e.get("scheduled_s", 0.0)), e["rate_bps"]))
        return [sorted(steps[n]) for n in names] if all(n in steps for n in names) else None
    return None


def cells(results):
    """Per scenario, each repetition's cell name and rank-0 rows of its adaptive cells."""
    by = {}
    for path in sorted(glob.glob(os.path.join(results, "runs", "*.adaptive*.jsonl"))):
        rows = [json.loads(line) for line in open(path) if line.strip()]
        rows = [r for r in rows if r.get("rank", 0) == 0 and "decision" in r]
        if rows:
            cell = os.path.basename(path)[: -len(".jsonl")]
            by.setdefault(cell.split(".")[0], []).append((cell, rows))
    return by


def table(results, experiment):
    """The Markdown rows of one results folder."""
    lines = []
    warmup = experiment.get("workload", {}).get("warmup", 2)
    for scenario, repetitions in cells(results).items():
        total = dict.fromkeys(CLASSES, 0.0)
        spent = oracle = 0.0
        for cell, rows in repetitions:
            part, a, r = split(rows, warmup, chain_of(results, cell, experiment))
            spent, oracle = spent + a, oracle + r
            for c in CLASSES:
                total[c] += part[c]
        points = " | ".join(f"{100 * total[c] / spent:.1f}" for c in CLASSES)
        lines.append(f"| {experiment['name']} | {scenario} | {oracle / spent:.3f} | {points} |")
    return lines


HEADER = ["| experiment | scenario | adaptive / oracle beside it | lag | estimate | choice | the future |",
          "|---|---|---|---|---|---|---|"]


def experiment_of(results):
    """The experiment the folder ran (its file as env.json names it), with its path."""
    env = json.load(open(os.path.join(results, "env.json")))
    experiment = json.load(open(env["experiment_file"]))
    experiment["path"] = env["experiment_file"]
    return experiment


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    print("\n".join(HEADER))
    for results in sys.argv[1:]:
        print("\n".join(table(results, experiment_of(results))))


if __name__ == "__main__":
    main()
