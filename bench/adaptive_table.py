#!/usr/bin/env python3
"""The adaptive scheduler's scorecard from a `contend run` summary.json: per scenario, the
throughput of 1F1B, the best fixed schedule in hindsight (of every fixed k and fixed slack vector
in the experiment), each policy run (Ada-Grouper's adaptive:knobs=k, adaptra, the joint adaptive,
the oracle; medians over the repetitions), and the ratios issue 14's goals are stated in: the joint
adaptive >= 0.99 x the best fixed schedule everywhere, and >= 0.995 x 1F1B where the scenario is
steady.

Usage: bench/adaptive_table.py RESULTS/summary.json  (prints a Markdown table)
"""
import json
import sys

POLICIES = ("adaptive:knobs=k", "adaptra", "adaptive", "oracle")


def is_fixed(schedule):
    return schedule.split(":")[0] in ("1f1b", "kfkb", "slack", "gpipe")


def main():
    s = json.load(open(sys.argv[1]))
    info = s.get("scenarios", {})
    cells = {}
    for c in s["cells"]:
        cells.setdefault(c["scenario"], {})[c["schedule"]] = c["throughput"]["median"]
    policies = [p for p in POLICIES if any(p in by for by in cells.values())]
    print(f"{s['experiment']} ({s['mode']}), samples/s, medians of {s['cells'][0]['repetitions']}:\n")
    print("| scenario | 1f1b | best fixed | " + " | ".join(policies) +
          " | adaptive / best fixed | adaptive / 1f1b |")
    print("|---|---|---|" + "---|" * len(policies) + "---|---|")
    ok = True
    for scenario, by in cells.items():
        fixed = {k: v for k, v in by.items() if is_fixed(k)}
        best = max(fixed, key=fixed.get)
        base = by["1f1b"]
        ada = by["adaptive"]
        r_best = ada / fixed[best]
        r_base = ada / base
        steady = info.get(scenario, {}).get("steady", False)
        goal = r_best >= 0.99 and (r_base >= 0.995 if steady else True)
        ok = ok and goal
        columns = " | ".join(f"{by[p]:.1f}" if p in by else "-" for p in policies)
        print(f"| {scenario} | {base:.1f} | {fixed[best]:.1f} ({best}) | {columns} | {r_best:.3f} | "
              f"{r_base:.3f}{'' if goal else ' (goal missed)'} |")
    print("\nevery goal met" if ok else "\nsome goal missed (marked)")


if __name__ == "__main__":
    main()
