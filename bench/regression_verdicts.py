"""docs/regression.md's numbers from bench/regression_runs.sh's folders: false alarms over the clean
runs and misses over the lossy ones, each run judged against the reference run by `contend compare`
(a run is flagged when it exits 3) and by the rule --compare used before (a cell flagged when its
median fell by more than the tolerance; throughput also beyond both runs' 95% intervals), then
the same verdict against the 3 clean runs before each run (pooled, as a CI job keeps its recent
history), then the change points `contend history` finds in a clean history and in one with the
loss from a known run on.
Usage: regression_verdicts.py CONTEND OUT [CLEAN_HISTORY_RUNS] [STEP_AT]"""
import json
import math
import os
import subprocess
import sys
import tempfile

contend, out = sys.argv[1], sys.argv[2]
clean_history = int(sys.argv[3]) if len(sys.argv) > 3 else 30
step_at = int(sys.argv[4]) if len(sys.argv) > 4 else 21


def runs(side):
    found = []
    i = 1
    while os.path.exists(f"{out}/{side}-{i}/summary.json"):
        found.append(f"{out}/{side}-{i}")
        i += 1
    return found


def cells(run):
    return {(c["scenario"], c["schedule"]): c for c in json.load(open(f"{run}/summary.json"))["cells"]}


def old_rule(now, ref, by, tolerance):
    """The rule --compare applied before: two medians and a band (throughput: also beyond the CIs)."""
    for key, r in cells(ref).items():
        c = cells(now).get(key)
        if c is None:
            return True
        if by == "speedup":
            if c["speedup"]["median"] < r["speedup"]["median"] * (1 - tolerance):
                return True
        else:
            was, tp = r["throughput"], c["throughput"]
            if tp["median"] < was["median"] * (1 - tolerance) and \
                    was["median"] - tp["median"] > math.hypot(was["ci95"], tp["ci95"]):
                return True
    return False


def new_rule(now, refs, by, tolerance):
    refs = refs if isinstance(refs, list) else [refs]
    rc = subprocess.run([contend, "compare", now, *refs, "--by", by, "--tolerance", f"{tolerance * 100:g}%"],
                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).returncode
    assert rc in (0, 3), f"contend compare {now} {refs} exited {rc}"
    return rc == 3


def recent(run):
    """The 3 clean runs before `run` (the reference where fewer ran): what a CI job keeps."""
    side, i = run.rsplit("-", 1)
    last = int(i) - 1 if side.endswith("clean") else int(i)  # a lossy run ran after clean run i
    pool = [f"{out}/clean-{k}" for k in range(max(1, last - 2), last + 1)]
    return ([f"{out}/reference"] + pool)[-3:]


def flagged(rule, side, by, tolerance):
    return sum(rule(r, f"{out}/reference", by, tolerance) for r in runs(side))


def flagged_recent(side, by, tolerance):
    return sum(new_rule(r, recent(r), by, tolerance) for r in runs(side))


def history(folders, name):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("\n".join(folders) + "\n")
    res = subprocess.run([contend, "history", f.name, "--reports", f"{out}/history-{name}"],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    os.unlink(f.name)
    h = json.load(open(f"{out}/history-{name}/history.json"))
    return res.returncode, [(c["scenario"], c["schedule"], [(p["run"] + 1, p["change"]) for p in c["change_points"]])
                            for c in h["cells"]]


clean, loss = runs("clean"), runs("loss")
print(f"{len(clean)} clean runs, {len(loss)} with every stage's compute 3% slower, against {out}/reference\n")
print("| rule | compared | tolerance | clean runs flagged (false alarms) | lossy runs flagged |")
print("|---|---|---|---|---|")
for by, tolerance in (("speedup", 0.03), ("throughput", 0.03), ("throughput", 0.02)):
    for label, rule in (("before: two medians", old_rule), ("verdict: Mann-Whitney", new_rule)):
        print(f"| {label}, against the reference | {by} | {tolerance:.0%} | {flagged(rule, 'clean', by, tolerance)} "
              f"of {len(clean)} | {flagged(rule, 'loss', by, tolerance)} of {len(loss)} |")
    print(f"| verdict: Mann-Whitney, against the 3 clean runs before | {by} | {tolerance:.0%} | "
          f"{flagged_recent('clean', by, tolerance)} of {len(clean)} | {flagged_recent('loss', by, tolerance)} of "
          f"{len(loss)} |")

# The loss each lossy run showed, per cell: the median over the runs of their medians' ratio.
ref = cells(f"{out}/reference")
print("\n| cell | throughput lost, median over the lossy runs |\n|---|---|")
for key in ref:
    ratios = sorted(cells(r)[key]["throughput"]["median"] / ref[key]["throughput"]["median"] for r in loss)
    if ratios:
        print(f"| {key[0]} / {key[1]} | {100 * (1 - ratios[len(ratios) // 2]):.1f}% |")

clean_series = ([f"{out}/reference"] + clean)[:clean_history]
step_series = clean[:step_at - 1] + loss
for name, folders in (("clean", clean_series), ("step", step_series)):
    rc, found = history(folders, name)
    print(f"\nhistory `{name}`: {len(folders)} runs" + (f", the loss from run {step_at}" if name == "step" else "") +
          f"; contend history exited {rc}")
    for scenario, schedule, points in found:
        text = ", ".join(f"run {run} ({100 * change:+.1f}%)" for run, change in points) or "none"
        print(f"- {scenario} / {schedule}: {text}")
