#!/usr/bin/env python3
"""The adaptive scheduler's scorecard from a `contend run` summary.json: per scenario, the
throughput of 1F1B, the best fixed k in hindsight, adaptive and the oracle (medians over the
repetitions), and the ratios the goals are stated in (issue 6): adaptive / best fixed >= 0.97,
adaptive / 1F1B >= 1.04 where the scenario preempts, >= 0.98 where it does not.

Usage: bench/adaptive_table.py RESULTS/summary.json  (prints a Markdown table)
"""
import json
import sys


def main():
    s = json.load(open(sys.argv[1]))
    info = s.get("scenarios", {})
    cells = {}
    for c in s["cells"]:
        cells.setdefault(c["scenario"], {})[c["schedule"]] = c["throughput"]["median"]
    print(f"{s['experiment']} ({s['mode']}), samples/s, medians of {s['cells'][0]['repetitions']}:\n")
    print("| scenario | 1f1b | best fixed k | adaptive | oracle | adaptive / best fixed | adaptive / 1f1b |")
    print("|---|---|---|---|---|---|---|")
    ok = True
    for scenario, by in cells.items():
        fixed = {k: v for k, v in by.items() if k == "1f1b" or k.startswith("kfkb") or k == "gpipe"}
        best = max(fixed, key=fixed.get)
        base = by["1f1b"]
        ada = by.get("adaptive")
        ora = by.get("oracle")
        r_best = ada / fixed[best]
        r_base = ada / base
        preempted = not info.get(scenario, {}).get("steady", False)
        goal = r_best >= 0.97 and (r_base >= 1.04 if preempted else r_base >= 0.98)
        ok = ok and goal
        print(f"| {scenario} | {base:.1f} | {fixed[best]:.1f} ({best}) | {ada:.1f} | "
              f"{ora:.1f} | {r_best:.3f} | {r_base:.3f}{'' if goal else ' (goal missed)'} |"
              if ora is not None else
              f"| {scenario} | {base:.1f} | {fixed[best]:.1f} ({best}) | {ada:.1f} | - | {r_best:.3f} | {r_base:.3f} |")
    print("\nevery goal met" if ok else "\nsome goal missed (marked)")


if __name__ == "__main__":
    main()
