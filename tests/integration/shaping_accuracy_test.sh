#!/usr/bin/env bash
# Shaped TCP goodput, measured by iperf3 (an independent client), is 0.956 x the rate within 5%.
source "$(dirname "$0")/lib.sh"
need_root
for rate in 10Mbit 100Mbit 1Gbit 2Gbit; do
  two_nodes "$tmp/s.json" "$rate"
  "$contend" emu up "$tmp/s.json" >/dev/null
  bps=$(iperf3_goodput 3)
  "$contend" emu down --run "$run" >/dev/null
  python3 - "$rate" "$bps" <<'PY' || fail "goodput at $rate off by more than 5%"
import sys
rate = {"10Mbit": 10e6, "100Mbit": 100e6, "1Gbit": 1e9, "2Gbit": 2e9}[sys.argv[1]]
got = float(sys.argv[2])
ratio = got / (0.956 * rate)
print(f"{sys.argv[1]}: iperf3 {got / 1e6:.1f} Mbit/s = {ratio:.3f} x 0.956 x rate")
sys.exit(0 if abs(ratio - 1) <= 0.05 else 1)
PY
  no_leftovers
done
