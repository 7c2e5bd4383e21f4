#!/usr/bin/env python3
"""The simulator's fidelity to the runtime: for every cell of a real `contend run`, its measured
median throughput against what simulated runs of the same experiment predicted (each a results
folder: e.g. `--simulate` alone, and `--simulate --calibration REAL/calibration.json`), as
measured / simulated, and how many cells each gets within 3% (issue 14's target).

Usage: bench/fidelity_table.py REAL_RESULTS SIM_RESULTS [SIM_RESULTS ...]  (prints a Markdown table)
"""
import json
import sys


def medians(folder):
    s = json.load(open(f"{folder}/summary.json"))
    return s, {(c["scenario"], c["schedule"]): c["throughput"]["median"] for c in s["cells"]}


def main():
    real_summary, real = medians(sys.argv[1])
    sims = [(folder, *medians(folder)) for folder in sys.argv[2:]]
    heads = [folder.rstrip("/").split("/")[-1] for folder, _, _ in sims]  # name folders for what they hold
    print(f"{real_summary['experiment']}: measured / simulated throughput per cell (medians of "
          f"{real_summary['cells'][0]['repetitions']})\n")
    print("| scenario | schedule | measured | " + " | ".join(heads) + " |")
    print("|---|---|---|" + "---|" * len(sims))
    within = [0] * len(sims)
    for (scenario, schedule), measured in real.items():
        ratios = []
        for i, (_, _, sim) in enumerate(sims):
            r = measured / sim[(scenario, schedule)]
            within[i] += abs(r - 1) <= 0.03
            ratios.append(f"{r:.3f}")
        print(f"| {scenario} | {schedule} | {measured:.1f} | " + " | ".join(ratios) + " |")
    print()
    for head, n in zip(heads, within):
        print(f"{head}: {n} of {len(real)} cells within 3%")


if __name__ == "__main__":
    main()
