"""A copy of an experiment with every stage's compute slower by FACTOR (fwd and bwd times x FACTOR),
under the same name and with its scenarios by absolute path, so that it runs from anywhere: the
change a slower kernel would make, for the regression benchmarks.
Usage: lossy_experiment.py EXPERIMENT COPY [FACTOR]   (default 1.03)"""
import json
import os
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
factor = float(sys.argv[3]) if len(sys.argv) > 3 else 1.03
e = json.load(open(src))
e["scenarios"] = [os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(src)), s)) for s in e["scenarios"]]


def slower(t):
    value, unit = re.fullmatch(r"([0-9.]+)([a-z]+)", t).groups()
    return f"{float(value) * factor:g}{unit}"


for key in ("fwd", "bwd"):
    e["workload"][key] = slower(e["workload"][key])
json.dump(e, open(dst, "w"), indent=1)
