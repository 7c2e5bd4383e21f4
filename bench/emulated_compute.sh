#!/usr/bin/env bash
# How long the emulated backend's declared compute takes: one stage on loopback (no transfers),
# 24 micro-batches of 8 ms forward and 16 ms backward, so an iteration is 576 ms of declared
# compute; 1F1B runs two ops per micro-batch, zero bubble three (its backward split in I and W).
# Prints, per binary and schedule, the median iteration over ROUNDS rounds (the binaries and
# schedules alternated within each round) and its ratio to 576 ms. No root needed.
# Run: bash bench/emulated_compute.sh ROUNDS CONTEND [CONTEND ...]
set -euo pipefail
rounds=${1:?rounds}
shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((n = 1; n <= rounds; n++)); do
  b=0
  for contend in "$@"; do
    b=$((b + 1))
    for s in 1f1b zb; do
      "$contend" worker --rank 0 --world-size 1 --peers 127.0.0.1:29811 --backend emulated --fwd 8ms \
        --bwd 16ms --activation 64KiB --schedule "$s" --microbatches 24 --iterations 8 \
        --metrics "$tmp/$b.$s.$n.jsonl" > /dev/null
    done
  done
done
/usr/bin/python3 - "$tmp" "$@" <<'PY'
import glob, json, statistics, sys
tmp, binaries = sys.argv[1], sys.argv[2:]
print("| binary | schedule | iteration (median) | / declared 576 ms | rounds |")
print("|---|---|---|---|---|")
for b, path in enumerate(binaries, 1):
    for s in ("1f1b", "zb"):
        its = []
        for f in sorted(glob.glob(f"{tmp}/{b}.{s}.*.jsonl")):
            its += [json.loads(l)["iteration_s"] for l in list(open(f))[2:]]  # past the first two
        m = statistics.median(its)
        print(f"| {path} | {s} | {m * 1e3:.2f} ms | {m / 0.576:.4f} | {len(its) // 6} |")
PY
