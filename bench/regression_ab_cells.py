#!/usr/bin/env python3
"""docs/regression.md's per-cell table of bench/regression_ab.sh's trials, from their rounds'
summary.json files: per cell, each trial's A/A pairs' log-ratio standard deviation (its median over
the trials) and the lossy head's loss (the geometric mean of its pairs; median and range).
Usage: bench/regression_ab_cells.py OUT (regression_ab.sh's folder)"""
import glob, json, math, os, statistics as st, sys

out = sys.argv[1]
names = {'1f1b': '1F1B', 'kfkb:k=2': 'kFkB (k=2)', 'adaptive': 'adaptive'}


def values(folder):  # (scenario, schedule) -> the rounds' throughputs, in round order
    r = {}
    for f in sorted(glob.glob(folder + '/round-*/summary.json')):
        for c in json.load(open(f))['cells']:
            r.setdefault((c['scenario'], c['schedule']), []).append(c['throughput']['samples'][0])
    return r


def logs(base, head):
    return [math.log(y / x) for x, y in zip(base, head)] if len(base) == len(head) > 1 else None


spread, loss = {}, {}
for d in sorted(glob.glob(out + '/aa-*/')):
    t = os.path.basename(d.rstrip('/'))[3:]
    base, clean, lossy = values(d + 'base'), values(d + 'head'), values(f'{out}/ab-{t}/head')
    for k in base:
        if (a := logs(base[k], clean.get(k, []))):
            spread.setdefault(k, []).append(st.stdev(a))
        if (b := logs(base[k], lossy.get(k, []))):
            loss.setdefault(k, []).append(1 - math.exp(st.mean(b)))
print("| cell | spread of an A/A pair's log ratio | loss at 3% slower compute (median, range over the trials) |")
print('|---|---|---|')
for k, s in spread.items():
    v = loss.get(k, [math.nan])
    print(f'| {k[0]} {names.get(k[1], k[1])} | {100 * st.median(s):.1f}% | '
          f'{100 * st.median(v):.1f}% ({100 * min(v):.1f} to {100 * max(v):.1f}) |')
