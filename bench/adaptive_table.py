#!/usr/bin/env python3
"""The adaptive scheduler's scorecard from a `contend run` summary.json: per scenario, the
baseline's throughput, the best fixed schedule in hindsight (every static schedule of the
experiment: kFkB's k, slack vectors, the zero-bubble family, `fixed:k=N`), each policy run
(Ada-Grouper's adaptive:knobs=k, adaptra, the joint adaptive, pipemorph, the observer, the oracle; medians over
the repetitions), and the ratios the goals are stated in (issues 14 and 26): adaptive and adaptra
(their default search: not knobs=k, Ada-Grouper's, nor chunks=V) >= 0.99 x the best fixed
schedule everywhere and >= 0.995 x it where the scenario is steady, and >= the pipemorph baseline
run under the same memory limit (or below it by less than the two cells' 95% intervals together:
the same schedule measured twice differs by that much). Under a limit (mem=, inflight=) the fixed schedules, which run
without one, are shown but not judged against.

Entries are matched by what they ran (summary.json's `schedules`: an entry's name such as
"PipeMorph-16" is only a name), and a policy's limit by its `mem=` and `inflight=` keys.

Usage: bench/adaptive_table.py RESULTS/summary.json  (prints a Markdown table)
"""
import json
import sys

POLICIES = ("adaptive", "adaptra", "observer", "oracle", "pipemorph")
JUDGED = ("adaptive", "adaptra")  # the policies the goals are about, in their default search


def family(spec):
    return spec.split(":")[0]


def keys(spec):
    return spec.split(":", 1)[1].split(",") if ":" in spec else []


def judged(spec):
    return family(spec) in JUDGED and not any(k == "knobs=k" or k.startswith("chunks=") for k in keys(spec))


def limit(spec):
    return tuple(sorted(k for k in keys(spec) if k.startswith(("mem=", "inflight="))))


def rows_of(summary):
    """Per scenario: {entry name: median throughput}, {entry name: its 95% interval}, and each
    name's spec."""
    specs = {name: e["schedule"] for name, e in summary.get("schedules", {}).items()}
    cells, ci = {}, {}
    for c in summary["cells"]:
        cells.setdefault(c["scenario"], {})[c["schedule"]] = c["throughput"]["median"]
        ci.setdefault(c["scenario"], {})[c["schedule"]] = c["throughput"].get("ci95", 0.0)
        specs.setdefault(c["schedule"], c["schedule"])
    return cells, ci, specs


def judge(name, by, ci, specs, best, steady):
    """The ratios of one judged policy entry, and whether its goals hold."""
    r_best = by[name] / best
    ok = r_best >= (0.995 if steady else 0.99) or limit(specs[name]) != ()
    rivals = [n for n in by if family(specs[n]) == "pipemorph" and limit(specs[n]) == limit(specs[name])]
    r_pm = by[name] / by[rivals[0]] if rivals else None
    if rivals:
        ok = ok and by[name] + ci[name] + ci[rivals[0]] >= by[rivals[0]]
    text = f"{r_best:.3f}" + (f", {r_pm:.3f}" if r_pm is not None else "")
    return text + ("" if ok else " (goal missed)"), ok


def main():
    s = json.load(open(sys.argv[1]))
    info = s.get("scenarios", {})
    cells, ci, specs = rows_of(s)
    names = list(next(iter(cells.values())).keys())
    policies = [n for n in names if family(specs[n]) in POLICIES]
    judged_names = [n for n in policies if judged(specs[n])]
    base_name = s.get("baseline", "1f1b")
    print(f"{s['experiment']} ({s['mode']}), samples/s, medians of {s['cells'][0]['repetitions']}; "
          "ratios: over the best fixed schedule, and over pipemorph under the same limit:\n")
    print(f"| scenario | {base_name} | best fixed | " + " | ".join(policies) + " | " +
          " | ".join(f"{n} / best fixed, / pipemorph" for n in judged_names) + " |")
    print("|---|---|---|" + "---|" * (len(policies) + len(judged_names)))
    ok = True
    for scenario, by in cells.items():
        fixed = {n: v for n, v in by.items() if family(specs[n]) not in POLICIES}
        best = max(fixed, key=fixed.get)
        steady = info.get(scenario, {}).get("steady", False)
        ratios = []
        for n in judged_names:
            text, good = judge(n, by, ci[scenario], specs, fixed[best], steady)
            ratios.append(text)
            ok = ok and good
        columns = " | ".join(f"{by[p]:.1f}" for p in policies)
        print(f"| {scenario} | {by[base_name]:.1f} | {fixed[best]:.1f} ({best}) | {columns} | " +
              " | ".join(ratios) + " |")
    print("\nevery goal met" if ok else "\nsome goal missed (marked)")


if __name__ == "__main__":
    main()
