#!/usr/bin/env bash
# Shaped TCP goodput, measured by iperf3 (an independent client), never exceeds the shaped rate
# and reaches most of it: at most 3% over 0.956 x rate (what a class lets through cannot grow with
# load), at least 80% of it (a busy 2-core machine costs iperf3 some, never that much at these
# rates). The precise figures, up to 5 Gbit/s, are measured by bench/shaping_accuracy.sh.
source "$(dirname "$0")/lib.sh"
need_root
for rate in 10Mbit 100Mbit 1Gbit; do
  two_nodes "$tmp/s.json" "$rate"
  "$contend" emu up "$tmp/s.json" >/dev/null
  bps=$(iperf3_goodput 3)
  "$contend" emu down --run "$run" >/dev/null
  python3 - "$rate" "$bps" <<'PY' || fail "goodput at $rate outside 0.80-1.03 x 0.956 x rate"
import sys
rate = {"10Mbit": 10e6, "100Mbit": 100e6, "1Gbit": 1e9}[sys.argv[1]]
got = float(sys.argv[2])
ratio = got / (0.956 * rate)
print(f"{sys.argv[1]}: iperf3 {got / 1e6:.1f} Mbit/s = {ratio:.3f} x 0.956 x rate")
sys.exit(0 if 0.80 <= ratio <= 1.03 else 1)
PY
  no_leftovers
done
